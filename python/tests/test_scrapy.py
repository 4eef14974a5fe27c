"""The Scrapy parser: Scrapy's interface, Google's verdicts."""

import os

import pytest

from mannerly.scrapy import RobotParser, product_token

BODY = b"User-agent: *\nDisallow: /private/\n\nUser-agent: MyBot\nDisallow: /mine/\nCrawl-delay: 3\n"


def test_product_tokens_from_user_agent_headers():
    assert product_token("MyBot/1.0 (+https://example.com/bot)") == "MyBot"
    assert product_token(b"Scrapy/2.19 (+https://scrapy.org)") == "Scrapy"
    assert product_token("  Googlebot-Image/1.0") == "Googlebot-Image"
    assert product_token("123") == "*"


def test_the_parser_answers_as_google_would():
    p = RobotParser.from_crawler(None, BODY)
    assert not p.allowed("https://example.com/private/x", "OtherBot/2.0")
    assert p.allowed("https://example.com/private/x", b"MyBot/1.0")
    assert not p.allowed(b"https://example.com/mine/x", "MyBot/1.0 (+https://example.com)")
    assert p.crawl_delay("MyBot/1.0") == 3.0
    assert p.crawl_delay("OtherBot") is None


def test_scrapy_loads_it_as_its_robots_parser():
    if os.environ.get("CI"):
        import scrapy.robotstxt as scrapy_robotstxt  # CI installs Scrapy: it must run
    else:
        scrapy_robotstxt = pytest.importorskip("scrapy.robotstxt")
    from scrapy.utils.misc import load_object

    cls = load_object("mannerly.scrapy.RobotParser")
    assert issubclass(cls, scrapy_robotstxt.RobotParser)
    ours = cls.from_crawler(None, BODY)
    assert not ours.allowed("https://example.com/private/x", "OtherBot")
