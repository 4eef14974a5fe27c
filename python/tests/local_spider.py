"""A Scrapy crawl from one start URL with mannerly's middlewares, for
test_scrapy_middleware.py. Settings come as JSON in MANNERLY_TEST_SETTINGS."""

import json
import os
import sys

from scrapy.crawler import CrawlerProcess
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


class LocalSpider(CrawlSpider):
    name = "local"
    start_urls = [sys.argv[1]]
    rules = (Rule(LinkExtractor(), follow=True),)


settings = {
    "ROBOTSTXT_OBEY": True,
    "ROBOTSTXT_PARSER": "mannerly.scrapy.RobotParser",
    "LOG_LEVEL": "INFO",
    "TELNETCONSOLE_ENABLED": False,
    "USER_AGENT": "LocalBot/1.0",
    "DOWNLOADER_MIDDLEWARES": {
        "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
        "mannerly.scrapy.RobotsTxtMiddleware": 100,
        "mannerly.scrapy.PolitenessMiddleware": 950,
    },
}
settings.update(json.loads(os.environ.get("MANNERLY_TEST_SETTINGS", "{}")))
process = CrawlerProcess(settings)
process.crawl(LocalSpider)
process.start()
