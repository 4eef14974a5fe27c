// A Crawlee crawl of `mannerly demo`'s simulated web, run by
// test/crawlee.test.mjs:
//
//   mannerly demo -- node test/demo_spider.mjs MODE
//
// runs it with MANNERLY_DEMO_PROXY, MANNERLY_DEMO_SEEDS, MANNERLY_DEMO_DELAY
// and MANNERLY_DEMO_CONCURRENCY set, and audits the crawl from the
// simulated web's own request log. MODE:
//
// - `mannerly`: a CheerioCrawler made polite with mannerly/crawlee;
// - `crawlee`: Crawlee's own robots.txt support (respectRobotsTxtFile) and
//   per-domain delay (sameDomainDelaySecs), as a careful user sets them.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

process.env.CRAWLEE_STORAGE_DIR ??= mkdtempSync(join(tmpdir(), 'mannerly-crawlee-'));
process.env.CRAWLEE_PERSIST_STORAGE ??= 'false';
process.env.CRAWLEE_LOG_LEVEL ??= 'ERROR';

const { CheerioCrawler, ProxyConfiguration } = await import('@crawlee/cheerio');
const { politeCrawler } = await import('mannerly/crawlee');

const mode = process.argv[2] ?? 'mannerly';
const seeds = readFileSync(process.env.MANNERLY_DEMO_SEEDS, 'utf8').split('\n').filter(Boolean);
const delay = Number(process.env.MANNERLY_DEMO_DELAY ?? '1');
const concurrency = Number(process.env.MANNERLY_DEMO_CONCURRENCY ?? '64');
const proxyConfiguration = new ProxyConfiguration({ proxyUrls: [process.env.MANNERLY_DEMO_PROXY] });
const userAgent = 'DemoBot/1.0 (+https://example.invalid/bot)';

const common = {
  proxyConfiguration,
  maxConcurrency: concurrency,
  maxRequestRetries: 3,
  async requestHandler({ enqueueLinks }) {
    await enqueueLinks({ strategy: 'same-hostname' });
  },
};

let crawler;
if (mode === 'mannerly') {
  crawler = politeCrawler(CheerioCrawler, {
    ...common,
    userAgent,
    minDelaySecs: delay,
    // A test cannot wait the minutes a real crawl would for a host whose
    // robots.txt is down: give its pages up after a few seconds.
    robotsTxtWaitSecs: Number(process.env.MANNERLY_ROBOTSTXT_WAIT ?? '5'),
  });
} else if (mode === 'crawlee') {
  crawler = new CheerioCrawler({
    ...common,
    respectRobotsTxtFile: { userAgent: 'DemoBot' },
    sameDomainDelaySecs: delay,
    preNavigationHooks: [
      (_ctx, gotOptions) => {
        gotOptions.headers = { ...(gotOptions.headers || {}), 'user-agent': userAgent };
      },
    ],
  });
} else {
  console.error(`demo_spider.mjs: unknown mode ${mode} (mannerly or crawlee)`);
  process.exit(2);
}

await crawler.run(seeds);
