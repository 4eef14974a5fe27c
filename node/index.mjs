// ESM entry: the same objects as the CommonJS one.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const m = require('./index.js');

export const { Robots, AgentRules, RobotsDecision, RobotsState, Politeness, asRequested, productToken, lint, isValidUserAgent, pathParamsQuery } = m;
export default m;
