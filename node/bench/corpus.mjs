// Checks per second through Node on the shared corpus: mannerly against
// robots-parser (the npm library most Node crawlers use for robots.txt) in
// the same run, with how often each agrees with Google's reference (the
// corpus's expected verdicts).
//
//   node bench/corpus.mjs [../shared]    (after `npm ci && npm run build`)
//
// Parsing is timed apart from checking. Each parser answers every
// (agent, URL) pair of every file, URLs as `http://example.com<path>`.
// mannerly is timed three ways: one call per check judging the URL as a
// crawler requests it (`isAllowed`), one call per check as given (the
// reference's contract, `isAllowedAsGiven`), and a batch per agent
// (`forAgent(agent).isAllowedManyAsGiven(urls)`).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

import { Robots } from 'mannerly';

const require = createRequire(import.meta.url);
const robotsParser = require('robots-parser');

const shared = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'shared');
const root = join(shared, 'corpus');
const cases = readFileSync(join(root, 'expected.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => {
    const c = JSON.parse(line);
    return { id: c.id, body: readFileSync(join(root, 'files', `${c.id}.txt`)), urls: c.urls.map((u) => `http://example.com${u}`), expect: c.expect };
  });

function run(name, parse, check) {
  let t = process.hrtime.bigint();
  const parsed = cases.map((c) => parse(c.body));
  const parseS = Number(process.hrtime.bigint() - t) / 1e9;
  let checks = 0;
  let agree = 0;
  let firstDiff = null;
  t = process.hrtime.bigint();
  const answers = [];
  cases.forEach((c, i) => {
    for (const agent of Object.keys(c.expect)) {
      answers.push(check(parsed[i], agent, c.urls));
    }
  });
  const checkS = Number(process.hrtime.bigint() - t) / 1e9;
  let k = 0;
  for (const c of cases) {
    for (const [agent, e] of Object.entries(c.expect)) {
      const got = answers[k++];
      for (let j = 0; j < c.urls.length; j++) {
        checks++;
        if (Boolean(got[j]) === (e.allowed[j] === '1')) agree++;
        else if (!firstDiff) firstDiff = `${c.id} agent ${agent} ${c.urls[j]} (reference: ${e.allowed[j] === '1' ? 'allowed' : 'disallowed'})`;
      }
    }
  }
  return { name, checks, parseS, checkS, agree, firstDiff };
}

const results = [
  // The reference applies no size limit (ours is 500 KiB by default).
  run('mannerly isAllowed', (b) => Robots.parse(b, { maxBytes: 2 ** 40 }), (r, a, urls) => urls.map((u) => r.isAllowed(a, u))),
  run('mannerly isAllowedAsGiven', (b) => Robots.parse(b, { maxBytes: 2 ** 40 }), (r, a, urls) => urls.map((u) => r.isAllowedAsGiven(a, u))),
  run('mannerly batch', (b) => Robots.parse(b, { maxBytes: 2 ** 40 }), (r, a, urls) => r.forAgent(a).isAllowedManyAsGiven(urls)),
  run('robots-parser', (b) => robotsParser('http://example.com/robots.txt', b.toString('utf8')), (r, a, urls) => urls.map((u) => r.isAllowed(u, a))),
];
console.log(`${cases.length} files; checks are (agent, URL) pairs against Google's reference verdicts (node ${process.version})`);
const theirs = results.at(-1).checks / results.at(-1).checkS;
for (const r of results) {
  const rate = r.checks / r.checkS;
  console.log(
    `${r.name.padEnd(26)} parse ${r.parseS.toFixed(2).padStart(6)} s  check ${r.checkS.toFixed(2).padStart(6)} s  ${Math.round(rate).toLocaleString('en').padStart(11)} checks/s` +
      `  (${(rate / theirs).toFixed(1).padStart(5)}x robots-parser)  agrees ${((100 * r.agree) / r.checks).toFixed(3).padStart(7)} % (${(r.checks - r.agree).toLocaleString('en')} differ)`,
  );
  if (r.firstDiff) console.log(`${''.padEnd(26)} first difference: ${r.firstDiff}`);
}
