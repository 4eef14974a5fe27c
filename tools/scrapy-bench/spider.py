"""Scrapy crawling `mannerly demo`'s simulated web, for tools/scrapy-bench/run.sh.

`mannerly demo --external` runs this with MANNERLY_DEMO_PROXY, MANNERLY_DEMO_SEEDS,
MANNERLY_DEMO_DELAY and MANNERLY_DEMO_CONCURRENCY set. Mode `polite` sets Scrapy up
as a careful user would (robots.txt obeyed, one request per domain, the same delay
without randomisation, the same global concurrency); mode `defaults` keeps Scrapy's
defaults apart from ROBOTSTXT_OBEY, which Scrapy's project template turns on.
"""

import os
import sys
from urllib.parse import urlparse

from scrapy.crawler import CrawlerProcess
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule

seeds = [line.strip() for line in open(os.environ["MANNERLY_DEMO_SEEDS"]) if line.strip()]
proxy = os.environ["MANNERLY_DEMO_PROXY"]
# Scrapy's HttpProxyMiddleware reads the proxy from the environment.
os.environ["http_proxy"] = proxy
os.environ["https_proxy"] = proxy


class DemoSpider(CrawlSpider):
    name = "demo"
    start_urls = seeds
    allowed_domains = sorted({urlparse(u).hostname for u in seeds})
    rules = (Rule(LinkExtractor(), follow=True),)


mode = sys.argv[1] if len(sys.argv) > 1 else "polite"
settings = {
    "ROBOTSTXT_OBEY": True,
    "LOG_LEVEL": "WARNING",
    "TELNETCONSOLE_ENABLED": False,
    "USER_AGENT": "scrapy-bench (+https://example.invalid/bench)",
}
if mode == "polite":
    settings.update(
        {
            "CONCURRENT_REQUESTS": int(os.environ.get("MANNERLY_DEMO_CONCURRENCY", "64")),
            "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
            "DOWNLOAD_DELAY": float(os.environ.get("MANNERLY_DEMO_DELAY", "1")),
            "RANDOMIZE_DOWNLOAD_DELAY": False,
        }
    )
elif mode != "defaults":
    sys.exit(f"spider.py: unknown mode {mode!r} (polite or defaults)")

process = CrawlerProcess(settings)
process.crawl(DemoSpider)
process.start()
