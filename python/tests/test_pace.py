"""robots.txt over time (RobotsState) and per-host pacing (Politeness),
driven with explicit times: days pass in microseconds, nothing sleeps."""

import math

import pytest

import mannerly

T0 = 1_795_000_000.0  # seconds since 1970
HOUR = 3600.0
DAY = 24 * HOUR


def test_a_fresh_origin_must_be_fetched_first():
    s = mannerly.RobotsState("https://example.com")
    assert s.robots_url == "https://example.com/robots.txt"
    assert s.decision(T0) is None


def test_rules_apply_for_at_most_24_hours():
    s = mannerly.RobotsState("https://example.com")
    d = s.apply_response(200, b"User-agent: *\nDisallow: /private/\n", now=T0)
    assert d.access == "rules"
    assert not d.is_allowed("MyBot", "https://example.com/private/x")
    assert d.is_allowed("MyBot", "https://example.com/public")
    assert d.robots.crawl_delay("MyBot") is None
    assert s.decision(T0 + 23 * HOUR).access == "rules"
    assert s.decision(T0 + DAY + 1) is None  # refetch due
    # max-age may shorten it, never lengthen it.
    d = s.apply_response(200, b"", headers={"Cache-Control": "max-age=600"}, now=T0)
    assert d.expires_at == pytest.approx(T0 + 600)


def test_4xx_allows_everything_but_429_and_5xx_disallow():
    s = mannerly.RobotsState("https://example.com")
    assert s.apply_response(404, now=T0).is_allowed("MyBot", "/anything")
    for status in (429, 500, 503):
        s = mannerly.RobotsState("https://example.com")
        d = s.apply_response(status, b"User-agent: *\nAllow: /\n", now=T0)
        assert d.access == "disallow-all", status
        assert not d.is_allowed("MyBot", "/anything")
        assert s.failing_since == T0
        assert s.retry_at > T0


def test_network_errors_and_redirect_loops():
    s = mannerly.RobotsState("https://example.com")
    assert s.apply_network_error("timeout", "no answer in 30 s", now=T0).access == "disallow-all"
    assert "timed out" in s.history()[-1][1]
    s = mannerly.RobotsState("https://example.com")
    assert s.apply_too_many_redirects(is_loop=True, now=T0).access == "allow-all"


def test_googles_three_phases_of_an_unreachable_robots_txt():
    s = mannerly.RobotsState("https://example.com")
    s.apply_response(200, b"User-agent: *\nDisallow: /old/\n", now=T0 - 2 * DAY)
    # It fails from T0 on, every retry.
    d = s.apply_response(503, now=T0)
    assert d.access == "disallow-all" and "phase 1" in d.reason
    # After 12 hours: the last good copy.
    d = s.apply_response(503, now=T0 + 13 * HOUR)
    assert d.access == "rules" and not d.is_allowed("MyBot", "/old/x")
    # After 30 days, with the site answering other requests: allow-all.
    s.note_host_answered(now=T0 + 31 * DAY)
    d = s.apply_response(503, now=T0 + 31 * DAY)
    assert d.access == "allow-all", d.reason
    # RFC 9309 as written keeps the cached copy, never allow-all.
    r = mannerly.RobotsState("https://example.com", "rfc9309")
    r.apply_response(200, b"User-agent: *\nDisallow: /old/\n", now=T0 - 2 * DAY)
    r.apply_response(503, now=T0)
    r.note_host_answered(now=T0 + 31 * DAY)
    assert r.apply_response(503, now=T0 + 31 * DAY).access == "rules"


def test_while_backing_off_the_decision_holds_without_a_fetch():
    s = mannerly.RobotsState("https://example.com", backoff_base=10.0)
    d = s.apply_response(503, now=T0)
    assert s.retry_at <= T0 + 10.0
    assert s.decision(s.retry_at - 0.5).access == "disallow-all"
    assert s.decision(s.retry_at + 0.5) is None  # time to try again


def test_a_body_over_500_kib_is_cut_as_the_parser_cuts_it():
    body = b"User-agent: *\nDisallow: /a\n" + b"#" * (600 * 1024) + b"\nDisallow: /b\n"
    d = mannerly.RobotsState("https://example.com").apply_response(200, body, now=T0)
    assert d.robots.truncated
    assert not d.is_allowed("MyBot", "/a") and d.is_allowed("MyBot", "/b")


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="origin"):
        mannerly.RobotsState("ftp://example.com")
    with pytest.raises(ValueError, match="profile"):
        mannerly.RobotsState("https://example.com", "bing")
    s = mannerly.RobotsState("https://example.com")
    with pytest.raises(ValueError, match="status=42"):
        s.apply_response(42)
    with pytest.raises(ValueError, match='kind="smoke"'):
        s.apply_network_error("smoke")
    with pytest.raises(ValueError, match="now=-1"):
        s.decision(-1.0)
    with pytest.raises(TypeError, match="headers"):
        s.apply_response(200, b"", headers=[("a", 1)])
    with pytest.raises(TypeError):
        s.apply_response("200")
    with pytest.raises(ValueError, match="min_delay"):
        mannerly.Politeness(-1.0)
    with pytest.raises(ValueError, match="Crawl-delay profile"):
        mannerly.Politeness(1.0, "yandex")
    with pytest.raises(ValueError, match="max_in_flight"):
        mannerly.Politeness(max_in_flight=0)


def test_pacing_is_start_to_start_with_one_request_in_flight():
    p = mannerly.Politeness(1.0)
    assert p.wait("a.example", T0) == 0.0
    p.start("a.example", T0)
    assert p.wait("a.example", T0 + 0.5) > 0  # in flight
    p.finish("a.example", 200, 0.2, None, T0 + 0.2)
    assert p.wait("a.example", T0 + 0.5) == pytest.approx(0.5)
    assert p.wait("a.example", T0 + 1.0) == 0.0
    assert p.wait("b.example", T0 + 0.5) == 0.0  # keys are independent


def test_crawl_delay_by_profile():
    robots = mannerly.Robots(b"User-agent: *\nCrawl-delay: 5\n")
    for profile, delay in (("conservative", 5.0), ("literal", 5.0), ("ignore", 1.0)):
        p = mannerly.Politeness(1.0, profile)
        p.set_robots("a.example", robots, "MyBot")
        assert p.delay("a.example") == delay, profile
    p = mannerly.Politeness(1.0, "conservative", max_crawl_delay=2.0)
    p.set_robots("a.example", robots, "MyBot")
    assert math.isinf(p.wait("a.example", T0))
    assert "more than the 2 s maximum" in p.skipped("a.example")


def test_retry_after_and_backoff():
    p = mannerly.Politeness(1.0)
    p.start("a.example", T0)
    p.finish("a.example", 429, 0.1, "30", T0 + 0.1)
    assert p.wait("a.example", T0 + 1.0) == pytest.approx(29.1)
    assert "retry after" in p.why_not_now("a.example", T0 + 1.0)
    assert p.delay("a.example") == 2.0  # doubled
    # An HTTP date works too, and the cap holds (1 h by default).
    p.start("b.example", T0)
    p.finish("b.example", 503, 0.0, "Fri, 01 Jan 2100 00:00:00 GMT", T0)
    assert p.wait("b.example", T0) == pytest.approx(3600.0)
    # Success brings the delay slowly back down to the base.
    p.start("a.example", T0 + 40)
    p.finish("a.example", 200, 0.1, None, T0 + 40.1)
    assert 1.0 < p.delay("a.example") < 2.0
