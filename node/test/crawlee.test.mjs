// Crawlee crawling `mannerly demo`'s simulated web (generated hosts and
// scripted ones: robots.txt answering 503 and 429, Crawl-delay, a 429 storm
// with Retry-After, a redirect loop, nofollow pages), judged by the demo's
// audit of the server's own log: made polite with mannerly/crawlee, it
// breaks no rule; with Crawlee's own robots.txt support it breaks several.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const SPIDER = join(HERE, 'demo_spider.mjs');

function binary(t) {
  const candidates = [process.env.MANNERLY_BIN, join(HERE, '..', '..', 'target', 'debug', 'mannerly'), join(HERE, '..', '..', 'target', 'release', 'mannerly')];
  const found = candidates.find((c) => c && existsSync(c));
  if (found) return found;
  const message = 'no mannerly binary: build it with `cargo build -p mannerly-cli` or set MANNERLY_BIN';
  if (process.env.CI) assert.fail(message);
  t.skip(message);
  return null;
}

/** Runs the demo with the spider in `mode`; its audit. What both write
 * (the demo's crawl, Crawlee's storage) is in one directory, removed after. */
function crawl(bin, mode, hosts, delay) {
  const out = mkdtempSync(join(tmpdir(), `mannerly-crawlee-${mode}-`));
  const args = ['demo', '--json', '--hosts', String(hosts), '--min-delay', String(delay), '--out', join(out, 'demo'), '--', process.execPath, SPIDER, mode];
  const env = { ...process.env, CRAWLEE_STORAGE_DIR: join(out, 'crawlee') };
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-5000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), 600_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      rmSync(out, { recursive: true, force: true });
      const last = stdout.trim().split('\n').at(-1) ?? '';
      if (!last.startsWith('{')) return reject(new Error(`the demo printed no report (exit ${code}):\n${stderr}`));
      const audit = JSON.parse(last);
      if (audit.external.exit !== 0) return reject(new Error(`the spider failed:\n${stderr}`));
      return resolve(audit);
    });
  });
}

// Both crawls at once: they mostly wait, and each has its own simulated web.
let crawls = null;
function both(bin) {
  crawls ??= Promise.all([crawl(bin, 'mannerly', 100, 1), crawl(bin, 'crawlee', 6, 0.3)]);
  return crawls;
}

test('Crawlee made polite breaks no rule at 100 hosts and a 1 s delay', async (t) => {
  const bin = binary(t);
  if (!bin) return;
  const [a] = await both(bin);
  assert.ok(a.pages >= 600, `it crawled the generated hosts: ${a.pages} pages`);
  for (const rule of ['disallowed', 'pages_while_robots_unavailable', 'robots_not_first', 'too_soon', 'retry_after_ignored', 'hosts_concurrent', 'nofollow_followed']) {
    assert.equal(a[rule], 0, `${rule}: ${JSON.stringify(a.examples)}`);
  }
  assert.equal(a.violations, 0, JSON.stringify(a));
});

test("Crawlee's own robots.txt support breaks rules mannerly keeps", async (t) => {
  const bin = binary(t);
  if (!bin) return;
  const [, a] = await both(bin);
  // Behind a proxy Crawlee fetches robots.txt without it, reads none, and
  // crawls as if all were allowed.
  assert.ok(a.robots_not_first > 0, JSON.stringify(a));
  assert.ok(a.disallowed > 0, JSON.stringify(a));
  assert.ok(a.violations > 0, JSON.stringify(a));
});
