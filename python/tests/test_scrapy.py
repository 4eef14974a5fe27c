"""The Scrapy parser: Scrapy's interface, Google's verdicts."""

import os

import pytest

from mannerly.scrapy import RobotParser, product_token

BODY = b"User-agent: *\nDisallow: /private/\n\nUser-agent: MyBot\nDisallow: /mine/\nCrawl-delay: 3\n"


def test_product_tokens_from_user_agent_headers():
    assert product_token("MyBot/1.0 (+https://example.com/bot)") == "MyBot"
    assert product_token(b"Scrapy/2.19 (+https://scrapy.org)") == "Scrapy"
    assert product_token("  Googlebot-Image/1.0") == "Googlebot-Image"
    # Read as the crawler, the audit and the gate read it: the crawler's
    # word, not a browser-styled header's first one.
    assert product_token("Mozilla/5.0 (compatible; MyBot/1.0; +https://x.example/bot)") == "MyBot"
    assert product_token("(+https://x.example)") == "*"


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


def test_a_request_is_counted_from_its_response(monkeypatch):
    """The latest moment it can have reached the server: Scrapy's own
    start (a connect for a host's first request, the reactor's queue with
    many hosts in flight) comes earlier by a varying time."""
    import types

    from scrapy.http import Request, Response
    from scrapy.utils.test import get_crawler

    from mannerly.scrapy import PolitenessMiddleware

    mw = PolitenessMiddleware(get_crawler(settings_dict={"MANNERLY_MIN_DELAY": 1.0}))
    mw._downloader = lambda: types.SimpleNamespace(slots={})
    times = iter([1_000.0, 1_010.0])
    monkeypatch.setattr("mannerly.scrapy.time.time", lambda: next(times))

    def answered(latency):
        request = Request("http://a.test/", meta={"download_slot": "a.test", "download_latency": latency})
        mw._response_downloaded(Response(request.url, status=200, request=request), request)

    answered(0.2)  # robots.txt, say, at 1,000.0: counted from then
    assert mw.politeness.next_allowed("a.test") == pytest.approx(1_001.0)
    answered(0.2)  # at 1,010.0, sent 0.2 s before: counted from 1,010.0 too
    assert mw.politeness.next_allowed("a.test") == pytest.approx(1_011.0)


def test_scrapys_unicode_case_is_judged_as_requested():
    """Scrapy's own test: a rule written with non-ASCII characters refuses
    the URL a person or a spider writes the same way."""
    parser = RobotParser("User-agent: *\nDisallow: /wiki/Käyttäjä:\n".encode("utf-8"))
    assert not parser.allowed("https://site.local/wiki/Käyttäjä:", "*")
    assert parser.allowed("https://site.local/wiki/Other", "*")


def test_a_misspelt_setting_is_refused_at_start():
    """A MANNERLY_* setting no middleware reads would leave a delay at its
    default without a word: the crawl does not start."""
    from scrapy.utils.test import get_crawler

    from mannerly.scrapy import SETTINGS, PolitenessMiddleware, RobotsTxtMiddleware

    for mw in (PolitenessMiddleware, RobotsTxtMiddleware):
        crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True, "MANNERLY_MINDELAY": 5.0})
        with pytest.raises(ValueError, match="unknown setting MANNERLY_MINDELAY.*did you mean MANNERLY_MIN_DELAY"):
            mw(crawler)
    # Every setting the middlewares read is one they accept.
    fine = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True, "MANNERLY_MIN_DELAY": 2.0})
    assert PolitenessMiddleware(fine).politeness is not None
    import inspect
    import re

    import mannerly.scrapy

    read = set(re.findall(r'\.get\w*\("(MANNERLY_[A-Z_]+)"', inspect.getsource(mannerly.scrapy)))
    assert read == set(SETTINGS)
