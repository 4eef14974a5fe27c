// The shared suites through the package: every case of Google's upstream
// tests, its user-agent and path extraction cases, and a sample of the
// real-world corpus. They run in CI (missing: a failure); elsewhere they
// say they were skipped.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { Robots, isValidUserAgent, pathParamsQuery } from 'mannerly';

const HERE = dirname(fileURLToPath(import.meta.url));
const SHARED = process.env.MANNERLY_SHARED ?? join(HERE, '..', '..', '..', 'shared');

function shared(path, t) {
  const full = join(SHARED, path);
  if (existsSync(full)) return full;
  if (process.env.CI) assert.fail(`${full} is missing: CI must run the shared suites`);
  t.skip(`SKIPPED: ${full} not found`);
  return null;
}

const body = (c) => (c.robots_base64 !== undefined ? Buffer.from(c.robots_base64, 'base64') : c.robots);

test("Google's upstream cases: all 145 answers", (t) => {
  const path = shared('conformance/google_robots_test.json', t);
  if (!path) return;
  const { cases } = JSON.parse(readFileSync(path, 'utf8'));
  assert.equal(cases.length, 145);
  const wrong = [];
  for (const c of cases) {
    const r = Robots.parse(body(c));
    const got = [r.isAllowedAsGiven(c.user_agent, c.url)];
    // (An empty agent is a caller's mistake everywhere else.)
    if (c.user_agent.trim()) got.push(r.forAgent(c.user_agent).isAllowedManyAsGiven([c.url])[0]);
    if (got.some((g) => g !== c.allowed)) wrong.push(`${c.id}: want ${c.allowed}, got ${got}`);
  }
  assert.deepEqual(wrong, []);
});

test("Google's user-agent and path extraction cases", (t) => {
  const path = shared('conformance/other_behaviours.json', t);
  if (!path) return;
  const { cases } = JSON.parse(readFileSync(path, 'utf8'));
  let checked = 0;
  for (const c of cases) {
    if (c.kind === 'valid_user_agent' && !c.user_agent_is_null_view) {
      assert.equal(isValidUserAgent(c.user_agent), c.valid, c.id);
      checked++;
    } else if (c.kind === 'get_path_params_query') {
      assert.equal(pathParamsQuery(c.url), c.expected_path, c.id);
      checked++;
    }
  }
  assert.ok(checked >= 29, `${checked} cases checked`);
});

test('a sample of the real-world corpus agrees with the reference', (t) => {
  const path = shared('corpus/expected.jsonl', t);
  if (!path) return;
  const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean);
  let checks = 0;
  for (let i = 0; i < lines.length; i += 25) {
    const c = JSON.parse(lines[i]);
    // The reference applies no size limit: compare like with like.
    const r = Robots.parse(readFileSync(join(SHARED, 'corpus', 'files', `${c.id}.txt`)), { maxBytes: 2 ** 40 });
    const urls = c.urls.map((u) => `http://example.com${u}`);
    for (const [agent, e] of Object.entries(c.expect)) {
      const got = r.forAgent(agent).isAllowedManyAsGiven(urls).map((a) => (a ? '1' : '0')).join('');
      assert.equal(got, e.allowed, `${c.id} ${agent}`);
      checks += urls.length;
    }
  }
  assert.ok(checks > 40000, `${checks} checks`);
});
