"""Crawls one site from a start URL, following its links."""

from urllib.parse import urlparse

from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


class SiteSpider(CrawlSpider):
    name = "site"
    # Links marked rel=nofollow are not followed.
    rules = (
        Rule(
            LinkExtractor(),
            callback="parse_page",
            follow=True,
            process_links=lambda links: [link for link in links if not link.nofollow],
        ),
    )

    def __init__(self, start: str = "https://example.com/", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [start]
        self.allowed_domains = [urlparse(start).hostname]

    def parse_start_url(self, response):
        return self.parse_page(response)

    def parse_page(self, response):
        yield {"url": response.url, "status": response.status, "title": response.css("title::text").get()}
