// The TypeScript declarations describe the package: a program using the
// API (and the Crawlee integration) type-checks, and a wrong call does not.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { test } from 'node:test';

const require = createRequire(import.meta.url);

function tsc(t) {
  try {
    return require.resolve('typescript/bin/tsc');
  } catch {
    if (process.env.CI) assert.fail('typescript is not installed: CI must check the declarations');
    t.skip('SKIPPED: typescript not installed (npm ci in node/)');
    return null;
  }
}

const GOOD = `
import { Robots, RobotsState, Politeness, asRequested } from 'mannerly';
import { polite, politeCrawler, Mannerly } from 'mannerly/crawlee';
const r: Robots = Robots.parse(Buffer.from('User-agent: *\\nDisallow: /x\\n'), { rfc: false });
const allowed: boolean = r.isAllowed('bot', 'https://example.com/x');
const line: number | undefined | null = r.explain('bot', '/x').line;
const rate = r.requestRate('bot');
const seconds: number | undefined = rate?.seconds;
const s = new RobotsState('https://example.com', { profile: 'google' });
const d = s.applyResponse({ status: 503 });
const access: string = d.access;
const p = new Politeness({ minDelaySecs: 1, profile: 'window' });
const wait: number = p.waitMs('example.com');
p.finish('example.com', { status: 429, retryAfter: '10' });
const m = new Mannerly({ userAgent: 'ExampleBot/1.0' });
const known: boolean = m.knownAllowed('https://example.com/');
const opts = polite({ userAgent: 'ExampleBot/1.0', minDelaySecs: 2, requestHandler: async () => {} });
class FakeCrawler { constructor(public options: unknown) {} }
const c = politeCrawler(FakeCrawler, { userAgent: 'ExampleBot/1.0', requestHandler: async () => {} });
const shared: Mannerly = c.mannerly;
export { allowed, line, seconds, access, wait, known, opts, shared, asRequested };
`;

const BAD = `
import { Robots } from 'mannerly';
Robots.parse(42);
`;

function check(t, source) {
  const bin = tsc(t);
  if (!bin) return null;
  // Inside the package's directory, so 'mannerly' resolves as a user's
  // project resolves it: through node_modules (the packed tarball) or the
  // package's own name.
  const dir = mkdtempSync(join(dirname(require.resolve('mannerly/package.json')), '.typecheck-'));
  writeFileSync(join(dir, 'use.mts'), source);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', types: ['node'], skipLibCheck: false },
      files: ['use.mts'],
    }),
  );
  const done = spawnSync(process.execPath, [bin, '-p', dir], { encoding: 'utf8' });
  rmSync(dir, { recursive: true, force: true });
  return done;
}

test('a program using the API type-checks', (t) => {
  const done = check(t, GOOD);
  if (!done) return;
  assert.equal(done.status, 0, done.stdout + done.stderr);
});

test('a wrong call does not', (t) => {
  const done = check(t, BAD);
  if (!done) return;
  assert.notEqual(done.status, 0);
  assert.match(done.stdout, /Argument of type 'number' is not assignable/);
});
