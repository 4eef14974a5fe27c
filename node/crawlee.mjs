// ESM entry of the Crawlee integration: the same objects as the CommonJS one.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const m = require('./crawlee.js');

export const { polite, politeCrawler, Mannerly, SkippedError, pageIsNofollow, tokenOf } = m;
export default m;
