"""Robots directives in Scrapy: a page that says nofollow yields no links
through mannerly's LinkExtractor and no requests through its
NofollowMiddleware; rel=nofollow links are not extracted."""

import os

import pytest

if not os.environ.get("CI"):
    pytest.importorskip("scrapy")

from scrapy.http import HtmlResponse, Request  # noqa: E402

from mannerly.scrapy import LinkExtractor, NofollowMiddleware, page_says_nofollow  # noqa: E402

UA = {"User-Agent": "DemoBot/1.0 (+https://example.invalid/bot)"}


def page(body: str, headers=None) -> HtmlResponse:
    request = Request("https://site.test/p", headers=UA)
    return HtmlResponse(
        "https://site.test/p", body=body.encode(), headers=headers or {}, request=request, encoding="utf-8"
    )


def test_directives_are_read_from_meta_and_header_for_this_crawler():
    assert page_says_nofollow(page('<meta name="robots" content="noindex, nofollow">'))
    assert page_says_nofollow(page('<meta name="ROBOTS" content="none">'))
    assert page_says_nofollow(page('<meta name="DemoBot" content="nofollow">'))
    assert not page_says_nofollow(page('<meta name="OtherBot" content="nofollow">'))
    assert not page_says_nofollow(page('<meta name="robots" content="noindex">'))
    assert page_says_nofollow(page("", {"X-Robots-Tag": "nofollow"}))
    assert page_says_nofollow(page("", {"X-Robots-Tag": "demobot: noindex, nofollow"}))
    assert not page_says_nofollow(page("", {"X-Robots-Tag": "otherbot: nofollow"}))
    # A valued directive is not a crawler's name.
    assert not page_says_nofollow(page("", {"X-Robots-Tag": "unavailable_after: 2030-01-01"}))


def test_the_link_extractor_skips_nofollow_pages_and_rel_nofollow_links():
    body = '<a href="/a">a</a> <a rel="sponsored nofollow" href="/ad">ad</a>'
    links = [link.url for link in LinkExtractor().extract_links(page(body))]
    assert links == ["https://site.test/a"]
    followed = LinkExtractor(follow_rel_nofollow=True).extract_links(page(body))
    assert len(followed) == 2
    stop = '<meta name="robots" content="nofollow">' + body
    assert LinkExtractor().extract_links(page(stop)) == []


class Stats:
    def __init__(self):
        self.values = {}

    def inc_value(self, key):
        self.values[key] = self.values.get(key, 0) + 1


class Crawler:
    def __init__(self):
        self.stats = Stats()


def test_the_middleware_drops_requests_from_a_nofollow_page_and_keeps_items():
    crawler = Crawler()
    mw = NofollowMiddleware.from_crawler(crawler)
    out = [Request("https://site.test/never"), {"item": 1}]
    kept = list(mw.process_spider_output(page('<meta name="robots" content="nofollow">'), iter(out)))
    assert kept == [{"item": 1}]
    assert crawler.stats.values == {"mannerly/nofollow/dropped": 1}
    kept = list(mw.process_spider_output(page("<p>fine</p>"), iter(out)))
    assert len(kept) == 2
