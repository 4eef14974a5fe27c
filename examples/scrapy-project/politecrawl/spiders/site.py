"""Crawls one site from a start URL, following its links."""

from urllib.parse import urlparse

from scrapy.spiders import CrawlSpider, Rule

from mannerly.scrapy import LinkExtractor


class SiteSpider(CrawlSpider):
    name = "site"
    # mannerly's extractor: no rel=nofollow link, nothing from a nofollow page.
    rules = (Rule(LinkExtractor(), callback="parse_page", follow=True),)

    def __init__(self, start: str = "https://example.com/", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [start]
        self.allowed_domains = [urlparse(start).hostname]

    def parse_start_url(self, response):
        return self.parse_page(response)

    def parse_page(self, response):
        yield {"url": response.url, "status": response.status, "title": response.css("title::text").get()}
