"""A Scrapy crawl of `mannerly demo`'s simulated web, run by
test_scrapy_crawl.py and tools/scrapy-bench/run.sh.

`mannerly demo -- python demo_spider.py MODE` runs it with MANNERLY_DEMO_PROXY,
MANNERLY_DEMO_SEEDS, MANNERLY_DEMO_DELAY and MANNERLY_DEMO_CONCURRENCY set,
and audits the crawl from the simulated web's own request log. MODE:

- `mannerly`: mannerly's parser, its robots.txt, politeness and nofollow
  middlewares, and its link extractor;
- `polite`: Scrapy set up as a careful user would (one request per domain,
  the same delay without randomisation, the same global concurrency);
- `defaults`: Scrapy's defaults apart from ROBOTSTXT_OBEY, which its project
  template turns on.
"""

import os
import sys
from urllib.parse import urlparse

from scrapy.crawler import CrawlerProcess
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule

seeds = [line.strip() for line in open(os.environ["MANNERLY_DEMO_SEEDS"]) if line.strip()]
# Scrapy's HttpProxyMiddleware reads the proxy from the environment.
os.environ["http_proxy"] = os.environ["https_proxy"] = os.environ["MANNERLY_DEMO_PROXY"]


mode = sys.argv[1] if len(sys.argv) > 1 else "mannerly"
if mode == "mannerly":
    # Links as mannerly's crawler follows them: none from a nofollow page,
    # no rel=nofollow link.
    from mannerly.scrapy import LinkExtractor


class DemoSpider(CrawlSpider):
    name = "demo"
    start_urls = seeds
    allowed_domains = sorted({urlparse(u).hostname for u in seeds})
    rules = (Rule(LinkExtractor(), follow=True),)


settings = {
    "ROBOTSTXT_OBEY": True,
    "LOG_LEVEL": os.environ.get("SCRAPY_LOG_LEVEL", "WARNING"),
    "TELNETCONSOLE_ENABLED": False,
    "USER_AGENT": "DemoBot/1.0 (+https://example.invalid/bot)",
}
if mode == "mannerly":
    settings.update(
        {
            "ROBOTSTXT_PARSER": "mannerly.scrapy.RobotParser",
            "DOWNLOADER_MIDDLEWARES": {
                "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
                "mannerly.scrapy.RobotsTxtMiddleware": 100,
                "mannerly.scrapy.PolitenessMiddleware": 950,
            },
            "SPIDER_MIDDLEWARES": {"mannerly.scrapy.NofollowMiddleware": 550},
            "CONCURRENT_REQUESTS": int(os.environ.get("MANNERLY_DEMO_CONCURRENCY", "64")),
            "MANNERLY_MIN_DELAY": float(os.environ["MANNERLY_DEMO_DELAY"]),
            # A test cannot wait the minutes a real crawl would for a host
            # whose robots.txt is down: give up on it at once.
            "MANNERLY_ROBOTSTXT_WAIT": float(os.environ.get("MANNERLY_ROBOTSTXT_WAIT", "5")),
        }
    )
elif mode == "polite":
    settings.update(
        {
            "CONCURRENT_REQUESTS": int(os.environ.get("MANNERLY_DEMO_CONCURRENCY", "64")),
            "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
            "DOWNLOAD_DELAY": float(os.environ["MANNERLY_DEMO_DELAY"]),
            "RANDOMIZE_DOWNLOAD_DELAY": False,
        }
    )
elif mode != "defaults":
    sys.exit(f"demo_spider.py: unknown mode {mode!r} (mannerly, polite or defaults)")

process = CrawlerProcess(settings)
process.crawl(DemoSpider)
process.start()
