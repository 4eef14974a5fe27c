// The package answers as the Rust library does, through a JavaScript API:
// parse once and ask many, the robots.txt fetch state machine, per-host
// pacing, and a TypeError or RangeError for bad input, never a crash.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRequire } from 'node:module';

import * as esm from 'mannerly';
import { Robots, RobotsState, Politeness, asRequested, lint, productToken } from 'mannerly';
import { tokenOf } from 'mannerly/crawlee';

const require = createRequire(import.meta.url);

const BODY = [
  'User-agent: *',
  'Disallow: /private/',
  'Allow: /private/ok',
  'Crawl-delay: 2',
  'Request-rate: 1/10s',
  'Content-Usage: train-ai=n, ai-use=n',
  'Content-Usage: /news/ search=y',
  '',
  'User-agent: GPTBot',
  'Disallow: /',
  '',
  'Sitemap: https://example.com/sitemap.xml',
  '',
].join('\n');

test('verdicts with their reasons, from a string or a Buffer', () => {
  for (const body of [BODY, Buffer.from(BODY), new Uint8Array(Buffer.from(BODY))]) {
    const r = Robots.parse(body);
    assert.equal(r.isAllowed('MyBot', 'https://example.com/private/x'), false);
    assert.equal(r.isAllowed('MyBot', '/private/ok'), true);
    const v = r.explain('MyBot', '/private/x');
    assert.deepEqual(
      { allowed: v.allowed, line: v.line, rule: v.rule, groups: v.groups, agentMatch: v.agentMatch },
      { allowed: false, line: 2, rule: 'Disallow: /private/', groups: [1], agentMatch: 'global' },
    );
    assert.equal(r.isAllowed('GPTBot', '/anything'), false);
    const view = r.forAgent('GPTBot');
    assert.equal(view.agent, 'GPTBot');
    assert.deepEqual(view.isAllowedMany(['/', '/x']), [false, false]);
    assert.equal(view.explain('/x').line, 10);
    assert.equal(r.mode, 'google');
    assert.equal(r.truncated, false);
  }
});

test('Crawl-delay and Request-rate by engine profile, sitemaps, Content-Usage', () => {
  const r = Robots.parse(BODY);
  assert.equal(r.crawlDelay('MyBot'), 2);
  assert.deepEqual(r.requestRate('MyBot'), { requests: 1, seconds: 10 });
  assert.equal(r.crawlDelay('GPTBot'), null);
  assert.deepEqual(r.pacing('MyBot', 'conservative'), { delaySecs: 10, windowSecs: 0, profile: 'conservative' });
  assert.deepEqual(r.pacing('MyBot', 'ignore'), { delaySecs: 0, windowSecs: 0, profile: 'ignore' }, 'Google reads neither');
  assert.equal(r.pacing('MyBot', 'window').windowSecs, 2);
  assert.deepEqual(r.sitemaps(), ['https://example.com/sitemap.xml']);
  assert.deepEqual(r.contentUsage('MyBot', '/about'), { trainAi: 'n', aiUse: 'n', search: 'unknown', lines: [6] });
  assert.deepEqual(r.contentUsage('MyBot', '/news/a', ['train-ai=y']), { trainAi: 'y', aiUse: 'unknown', search: 'y', lines: [7] });
  assert.equal(r.contentUsage('MyBot', '/private/x'), null);
});

test('a URL is judged as a crawler requests it, or as given on request', () => {
  const r = Robots.parse('User-agent: *\nDisallow: /caf%C3%A9\n');
  assert.equal(asRequested('https://example.com/café'), 'https://example.com/caf%C3%A9');
  assert.equal(r.isAllowed('bot', 'https://example.com/café'), false);
  assert.equal(r.explain('bot', 'https://example.com/café').requested, 'https://example.com/caf%C3%A9');
  assert.equal(r.isAllowedAsGiven('bot', 'https://example.com/café'), true, 'the reference does not encode');
});

test('strict RFC 9309 mode, the size limit, and the linter', () => {
  const body = 'User-agent: *\nDisalow: /typo\n';
  assert.equal(Robots.parse(body).isAllowed('bot', '/typo'), false, 'Google accepts the typo');
  assert.equal(Robots.parse(body, { rfc: true }).isAllowed('bot', '/typo'), true);
  assert.equal(Robots.parse(body, { rfc: true }).mode, 'rfc9309');
  const big = 'User-agent: *\n' + 'Disallow: /x\n'.repeat(60000) + 'Disallow: /late\n';
  assert.equal(Robots.parse(big).truncated, true);
  assert.equal(Robots.parse(big).isAllowed('bot', '/late'), true);
  assert.equal(Robots.parse(big, { maxBytes: 1 << 21 }).isAllowed('bot', '/late'), false);
  const found = lint('User-agent: *\nDisalow: /x\nCrawl-delay: soon\n');
  assert.ok(found.length >= 2, JSON.stringify(found));
  assert.ok(found.every((f) => f.line >= 1 && typeof f.code === 'string' && typeof f.message === 'string'));
});

test('the robots.txt fetch state machine: statuses, phases, redirects', () => {
  const t = Date.UTC(2026, 0, 1);
  const s = new RobotsState('https://example.com');
  assert.equal(s.robotsUrl, 'https://example.com/robots.txt');
  assert.equal(s.decision(t), null, 'nothing fetched yet');
  let d = s.applyResponse({ status: 200, body: 'User-agent: *\nDisallow: /x\n', headers: { 'Cache-Control': 'max-age=600' } }, t);
  assert.equal(d.access, 'rules');
  assert.equal(d.isAllowed('bot', '/x'), false);
  assert.equal(d.robots.isAllowed('bot', '/y'), true);
  assert.equal(s.decision(t + 1000).access, 'rules');
  // 503: everything disallowed while it lasts, with a retry time.
  const down = new RobotsState('https://down.example');
  d = down.applyResponse({ status: 503 }, t);
  assert.equal(d.access, 'disallow-all');
  assert.equal(d.isAllowed('bot', '/'), false);
  assert.match(d.reason, /503/);
  assert.ok(down.retryAt > t);
  // 429 with Retry-After; 404: allow everything.
  const busy = new RobotsState('https://busy.example');
  assert.equal(busy.applyResponse({ status: 429, headers: { 'retry-after': '120' } }, t).access, 'disallow-all');
  assert.equal(busy.retryAt, t + 120000);
  assert.equal(new RobotsState('https://gone.example').applyResponse({ status: 404 }, t).access, 'allow-all');
  // Network failures and redirect loops.
  assert.equal(new RobotsState('https://x.example').applyNetworkError('dns', 'no such host', t).access, 'disallow-all');
  const loop = new RobotsState('https://loop.example').applyTooManyRedirects([{ url: 'https://loop.example/robots.txt', status: 301 }], true, t);
  assert.equal(loop.access, 'allow-all');
  assert.ok(down.history().length === 1 && down.history()[0].at === t);
});

test('per-host pacing: delays start to start, Crawl-delay, Retry-After, backoff', () => {
  const t = Date.UTC(2026, 0, 1);
  const p = new Politeness({ minDelaySecs: 1 });
  assert.equal(p.waitMs('a.example', t), 0);
  p.start('a.example', t);
  assert.equal(p.inFlight('a.example'), 1);
  assert.ok(p.waitMs('a.example', t + 10) > 0, 'one request in flight');
  p.finish('a.example', { status: 200, latencyMs: 50 }, t + 50);
  assert.equal(p.waitMs('a.example', t + 500), 500, 'start to start');
  p.setRobots('a.example', Robots.parse('User-agent: *\nCrawl-delay: 3\n'), 'bot');
  assert.equal(p.delaySecs('a.example'), 3);
  p.start('a.example', t + 3000);
  p.finish('a.example', { status: 429, retryAfter: '20' }, t + 3100);
  assert.equal(p.waitMs('a.example', t + 3100), 20000);
  assert.match(p.whyNotNow('a.example', t + 3100), /retry after/);
  const q = new Politeness({ minDelaySecs: 1 });
  q.start('b', t);
  q.finish('b', { status: 503 }, t + 10);
  assert.ok(q.delaySecs('b') > 1, 'backoff');
  const skip = new Politeness();
  skip.setRobots('c', Robots.parse('User-agent: *\nCrawl-delay: 600\n'), 'bot');
  assert.equal(skip.waitMs('c', t), Infinity);
  assert.match(skip.skipped('c'), /600 s/);
});

test('bad input throws TypeError or RangeError, naming what was wrong', () => {
  const r = Robots.parse('User-agent: *\n');
  const cases = [
    [() => Robots.parse(42), TypeError, /Robots\.parse: body must be a Buffer, Uint8Array or string, got number 42/],
    [() => Robots.parse(), TypeError, /body is required/],
    [() => Robots.parse('x', { maxBytes: -1 }), RangeError, /maxBytes/],
    [() => r.isAllowed(null, '/'), TypeError, /Robots\.isAllowed: agent must be a string, got null/],
    [() => r.isAllowed('', '/'), TypeError, /agent is empty/],
    [() => r.forAgent('bot').isAllowedMany(['/', 7]), TypeError, /array of strings/],
    [() => r.pacing('bot', 'fast'), TypeError, /not a Crawl-delay profile/],
    [() => r.contentUsage('bot', '/', 5), TypeError, /header must be a string or an array of strings/],
    [() => new RobotsState('ftp://example.com'), TypeError, /not an http\(s\) origin/],
    [() => new RobotsState('https://example.com', { profile: 'bing' }), TypeError, /not a profile/],
    [() => new RobotsState('https://example.com').applyResponse({ status: 42 }), RangeError, /status 42/],
    [() => new RobotsState('https://example.com').applyResponse(), TypeError, /response is required/],
    [() => new RobotsState('https://example.com').applyNetworkError('gremlins'), TypeError, /not a network failure/],
    [() => new RobotsState('https://example.com').decision(-5), RangeError, /now -5 is not a time/],
    [() => new Politeness({ minDelaySecs: -1 }), RangeError, /minDelaySecs -1/],
    [() => new Politeness({ maxInFlight: 0 }), RangeError, /maxInFlight 0/],
    [() => new Politeness({ overMax: 'explode' }), TypeError, /overMax/],
    [() => new Politeness().finish('a', { status: 1000 }), RangeError, /status 1000/],
    [() => new Politeness().setRobots('a', 'not robots', 'bot'), TypeError, /robots must be a Robots/],
    [() => new Politeness().waitMs(3), TypeError, /key must be a string/],
  ];
  for (const [f, kind, message] of cases) {
    assert.throws(f, (e) => e instanceof kind && message.test(e.message), String(message));
  }
});

test('content never throws: garbage bodies parse', () => {
  for (const body of [Buffer.from([0xff, 0xfe, 0, 1, 2]), '\u0000'.repeat(1000), 'User-agent: *\nDisallow: /\uFFFF\n', '']) {
    const r = Robots.parse(body);
    assert.equal(typeof r.isAllowed('bot', '/'), 'boolean');
  }
});

test('CommonJS and ESM give the same objects', () => {
  const cjs = require('mannerly');
  assert.equal(cjs.Robots, esm.Robots);
  assert.equal(cjs.Politeness, esm.Politeness);
  assert.equal(typeof require('mannerly/crawlee').polite, 'function');
});

test('the product token is read as the crawler, the audit and the gate read it', () => {
  const ua = 'Mozilla/5.0 (compatible; MyBot/1.0; +https://x.example/bot)';
  assert.equal(productToken(ua), 'MyBot');
  assert.equal(tokenOf(ua), 'MyBot');
  assert.equal(productToken('OpBot/1.0 (+http://op.example/bot)'), 'OpBot');
  assert.equal(productToken('(+https://x.example)'), null);
  assert.equal(tokenOf('(+https://x.example)'), '');
  assert.throws(() => productToken(7), TypeError);
});

test('an option key the engine does not take is refused, not left at its default', () => {
  const { Mannerly } = require('mannerly/crawlee');
  const cases = [
    [() => new Politeness({ minDelay: 5 }), /new Politeness: options has no option 'minDelay' \(it takes minDelaySecs,/],
    [() => new RobotsState('https://a.example', { profil: 'rfc9309' }), /options has no option 'profil'/],
    [() => Robots.parse('User-agent: *', { mode: 'rfc' }), /Robots.parse: options has no option 'mode'/],
    [() => new RobotsState('https://a.example').applyResponse({ status: 200, text: 'x' }), /response has no option 'text'/],
    [() => new Politeness().finish('a.example', { code: 429 }), /how has no option 'code'/],
    [() => new Mannerly({ userAgent: 'ExampleBot/1.0 (+https://example.com/bot)', minDelay: 5 }), /new Mannerly: options has no option 'minDelay'/],
  ];
  for (const [f, message] of cases) {
    assert.throws(f, (e) => e instanceof TypeError && message.test(e.message), String(message));
  }
  // A key given as undefined is as if not given.
  assert.equal(new Politeness({ minDelaySecs: 2, profile: undefined }).delaySecs('a.example'), 2);
});

test('the option keys checked are the ones the engine declares', async () => {
  const { readFileSync } = await import('node:fs');
  const { OPTION_KEYS } = require('../options.js');
  const dts = readFileSync(new URL('../native.d.ts', import.meta.url), 'utf8');
  const declared = (name) => {
    const body = new RegExp(`export interface ${name} \\{([^}]*)\\}`).exec(dts)[1];
    return [...body.matchAll(/^\s+([A-Za-z]+)\??:/gm)].map((m) => m[1]).sort();
  };
  const of = {
    'Robots._parse:options': 'ParseOptions',
    'RobotsState:options': 'RobotsStateOptions',
    'RobotsState#applyResponse:response': 'RobotsResponse',
    'Politeness:options': 'PolitenessOptions',
    'Politeness#finish:how': 'Finished',
  };
  assert.deepEqual(Object.keys(OPTION_KEYS).sort(), Object.keys(of).sort());
  for (const [key, iface] of Object.entries(of)) {
    assert.deepEqual([...OPTION_KEYS[key]].sort(), declared(iface), key);
  }
});
