'use strict';
// Loads the compiled addon built for this machine (`npm run build` writes
// mannerly.<platform>-<arch>[-<libc>].node beside this file).
const { existsSync } = require('node:fs');
const { join } = require('node:path');

function candidates() {
  const base = `${process.platform}-${process.arch}`;
  if (process.platform !== 'linux') return [base, `${base}-msvc`];
  let glibc = false;
  try {
    glibc = Boolean(process.report.getReport().header.glibcVersionRuntime);
  } catch {
    glibc = true;
  }
  return glibc ? [`${base}-gnu`, `${base}-musl`] : [`${base}-musl`, `${base}-gnu`];
}

const tried = candidates().map((c) => join(__dirname, `mannerly.${c}.node`));
const found = tried.find((p) => existsSync(p));
if (!found) {
  throw new Error(
    `mannerly: no compiled addon for ${process.platform}-${process.arch}; looked for ${tried.join(', ')}. ` +
      'Build it from the repository with `npm ci && npm run build` in node/ (needs Rust).',
  );
}
module.exports = require(found);
