"""Scrapy integration: Google's robots.txt verdicts, robots.txt that fails
closed, and per-host politeness.

Pieces, each usable alone:

- ``ROBOTSTXT_PARSER = "mannerly.scrapy.RobotParser"`` makes Scrapy decide
  robots.txt exactly as Google's reference library does, instead of Protego
  (which, on the project's real-world corpus, allows thousands of
  (agent, URL) pairs the reference disallows).
- ``RobotsTxtMiddleware`` replaces Scrapy's. Scrapy hands a parser only the
  body and allows everything when robots.txt fails; this one reads the
  status: 4xx allows everything, 5xx, 429 and network errors disallow
  everything (Google's 12-hour and 30-day phases, RFC 9309 §2.3.1.4), and
  the rules are refetched after 24 hours at most. Requests to a host whose
  robots.txt is unreachable are parked and retried when robots.txt is due
  again, for at most ``MANNERLY_ROBOTSTXT_WAIT`` seconds.
- ``PolitenessMiddleware`` paces each download slot with mannerly's
  controller: one request in flight per host, a minimum delay start to
  start, Crawl-delay by engine profile, Retry-After on 429 and 503, and
  multiplicative backoff on 429/5xx/timeouts.
- ``NofollowMiddleware`` (a spider middleware) and ``LinkExtractor``
  follow robots directives: no links from a page that says ``nofollow``,
  and (the extractor) no ``rel="nofollow"`` link.

Enable them in ``settings.py``::

    ROBOTSTXT_OBEY = True
    ROBOTSTXT_PARSER = "mannerly.scrapy.RobotParser"
    DOWNLOADER_MIDDLEWARES = {
        "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
        "mannerly.scrapy.RobotsTxtMiddleware": 100,
        "mannerly.scrapy.PolitenessMiddleware": 950,
    }
    SPIDER_MIDDLEWARES = {"mannerly.scrapy.NofollowMiddleware": 550}

See the package README for every setting and how they combine with
Scrapy's own.
"""

from __future__ import annotations

import difflib
import logging
import math
import re
import time
from typing import Any, Dict, List, Optional, Tuple, Union

from ._mannerly import Politeness, Robots, RobotsDecision, RobotsState
from ._mannerly import product_token as _product_token

logger = logging.getLogger(__name__)

try:  # Scrapy is optional: the parser works without it.
    from scrapy.robotstxt import RobotParser as _ScrapyRobotParser
except ImportError:  # pragma: no cover - exercised when Scrapy is absent
    _ScrapyRobotParser = object  # type: ignore[assignment,misc]

def product_token(user_agent: Union[str, bytes]) -> str:
    """The product token robots.txt groups are matched against.

    Scrapy passes a whole User-Agent header; the token is read as
    mannerly's crawler, audit and gate read it: ``MyBot`` in both
    ``MyBot/1.0 (+https://...)`` and ``Mozilla/5.0 (compatible; MyBot/1.0;
    +https://...)``. An agent naming no token falls back to ``*`` rules.
    """
    if isinstance(user_agent, bytes):
        user_agent = user_agent.decode("utf-8", "replace")
    return _product_token(user_agent) or "*"


class RobotParser(_ScrapyRobotParser):  # type: ignore[misc,valid-type]
    """Scrapy's ``RobotParser`` interface over ``mannerly.Robots``."""

    def __init__(self, robotstxt_body: bytes, spider: Any = None) -> None:
        self.spider = spider
        self.robots = Robots(robotstxt_body if isinstance(robotstxt_body, bytes) else bytes(robotstxt_body))

    @classmethod
    def from_crawler(cls, crawler: Any, robotstxt_body: bytes) -> "RobotParser":
        spider = getattr(crawler, "spider", None) if crawler else None
        return cls(robotstxt_body, spider)

    def allowed(self, url: Union[str, bytes], user_agent: Union[str, bytes]) -> bool:
        if isinstance(url, bytes):
            url = url.decode("utf-8", "replace")
        return self.robots.is_allowed(product_token(user_agent), url)

    def crawl_delay(self, user_agent: Union[str, bytes]) -> Optional[float]:
        return self.robots.crawl_delay(product_token(user_agent))


# ---------------------------------------------------------------------------
# The middlewares need Scrapy itself; the parser above does not.

try:
    from scrapy import Request, signals
    from scrapy.exceptions import DontCloseSpider, IgnoreRequest, NotConfigured
    from scrapy.utils.httpobj import urlparse_cached

    try:
        from scrapy.http.request import NO_CALLBACK
    except ImportError:  # pragma: no cover - Scrapy before 2.8
        NO_CALLBACK = None
except ImportError:  # pragma: no cover - Scrapy absent: only RobotParser is usable
    Request = None  # type: ignore[assignment,misc]
    IgnoreRequest = Exception  # type: ignore[assignment,misc]


class RobotsTxtParked(IgnoreRequest):  # type: ignore[misc,valid-type]
    """Raised for a request whose host's robots.txt is unreachable: the
    request is dropped now and a copy is scheduled again when robots.txt is
    due to be retried (a spider's errback sees this exception first)."""


class RobotsTxtUnavailable(IgnoreRequest):  # type: ignore[misc,valid-type]
    """Raised when a request has waited ``MANNERLY_ROBOTSTXT_WAIT`` seconds
    for its host's robots.txt and it is still unreachable."""


def _call_later(delay: float, func: Any, *args: Any) -> Any:
    try:
        from scrapy.utils.asyncio import call_later  # Scrapy 2.14+
    except ImportError:  # pragma: no cover
        from twisted.internet import reactor

        return reactor.callLater(delay, func, *args)
    return call_later(delay, func, *args)


async def _wait(deferred: Any) -> Any:
    from scrapy.utils.defer import maybe_deferred_to_future

    return await maybe_deferred_to_future(deferred)


def _network_kind(exc: BaseException) -> str:
    """Which kind of network failure a download exception is."""
    try:
        from twisted.internet import error as e
        from twisted.web._newclient import ResponseFailed, ResponseNeverReceived
    except ImportError:  # pragma: no cover
        return "other"
    if isinstance(exc, (e.DNSLookupError,)):
        return "dns"
    if isinstance(exc, (e.TimeoutError, e.TCPTimedOutError, TimeoutError)):
        return "timeout"
    if isinstance(exc, (e.ConnectionRefusedError, e.ConnectError, e.NoRouteError)):
        return "connect"
    if isinstance(exc, (e.ConnectionLost, e.ConnectionDone, ResponseNeverReceived)):
        return "reset"
    if isinstance(exc, ResponseFailed):
        return "truncated-body"
    if "SSL" in type(exc).__name__ or "TLS" in type(exc).__name__:
        return "tls"
    return "other"


def _headers(response: Any) -> List[Tuple[str, str]]:
    out = []
    for name, values in response.headers.items():
        key = name.decode("latin-1") if isinstance(name, bytes) else str(name)
        for v in values:
            out.append((key, v.decode("latin-1") if isinstance(v, bytes) else str(v)))
    return out


def _warn_if_scrapys_own(user_agent: str) -> None:
    """Warns when the crawl goes out under Scrapy's default ``USER_AGENT``:
    it names Scrapy, not the crawler, so site owners cannot tell who crawled
    them or reach its operator, and the robots.txt group it obeys is
    ``Scrapy``'s, shared by every such crawl."""
    if user_agent.startswith("Scrapy/") and "scrapy.org" in user_agent:
        logger.warning(
            "USER_AGENT is Scrapy's default (%r): it names Scrapy, not your crawler, so site "
            "owners cannot tell who crawled them or reach you. Set USER_AGENT to one like "
            "'ExampleBot/1.0 (+https://example.com/bot)', naming a page about the crawler.",
            user_agent,
        )


#: Every ``MANNERLY_*`` setting the middlewares read.
SETTINGS = (
    "MANNERLY_CRAWL_DELAY_PROFILE",
    "MANNERLY_MAX_CRAWL_DELAY",
    "MANNERLY_MAX_DELAY",
    "MANNERLY_MAX_IN_FLIGHT",
    "MANNERLY_MIN_DELAY",
    "MANNERLY_POLITENESS_ENABLED",
    "MANNERLY_RETRY_AFTER_CAP",
    "MANNERLY_ROBOTSTXT_BACKOFF",
    "MANNERLY_ROBOTSTXT_PROFILE",
    "MANNERLY_ROBOTSTXT_RFC",
    "MANNERLY_ROBOTSTXT_WAIT",
)


def _check_settings(settings: Any) -> None:
    """Refuses a ``MANNERLY_*`` setting no middleware reads: a misspelt
    one (``MANNERLY_MINDELAY``) would leave its value at the default, a
    crawl delay among them, without a word."""
    for key in settings:
        if isinstance(key, str) and key.startswith("MANNERLY_") and key not in SETTINGS:
            close = difflib.get_close_matches(key, SETTINGS, n=1)
            hint = f"; did you mean {close[0]}?" if close else f" (it reads {', '.join(SETTINGS)})"
            raise ValueError(f"unknown setting {key}: mannerly reads no such setting{hint}")


class RobotsTxtMiddleware:
    """robots.txt as RFC 9309 and Google handle it, for Scrapy.

    A replacement for ``scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware``
    (disable that one). It is active when ``ROBOTSTXT_OBEY`` is true, and
    reads the agent as Scrapy does (``ROBOTSTXT_USER_AGENT``, else the
    request's User-Agent, else ``USER_AGENT``), matched by its product token.

    Per origin, the fetch outcome decides (``mannerly.RobotsState``): 2xx
    gives the rules, any other 4xx allows everything, 5xx/429/network errors
    disallow everything while robots.txt is retried with backoff. The file
    is fetched once per origin at a time (single flight), with at most 5
    redirects, no retries by Scrapy's RetryMiddleware (the backoff here
    replaces them), and refetched when its decision expires (24 h at most).

    Settings:

    - ``MANNERLY_ROBOTSTXT_PROFILE``: ``"google"`` (default) or ``"rfc9309"``.
    - ``MANNERLY_ROBOTSTXT_RFC``: parse files in strict RFC 9309 mode (False).
    - ``MANNERLY_ROBOTSTXT_WAIT``: seconds a request may wait for an
      unreachable robots.txt before it is dropped (600).
    - ``MANNERLY_ROBOTSTXT_BACKOFF``: first retry delay after a failure,
      doubling per attempt up to an hour (60).
    """

    DOWNLOAD_PRIORITY = 1000

    def __init__(self, crawler: Any) -> None:
        settings = crawler.settings
        _check_settings(settings)
        if not settings.getbool("ROBOTSTXT_OBEY"):
            raise NotConfigured
        self.crawler = crawler
        self._stats = crawler.stats
        self._default_useragent = settings.get("USER_AGENT") or "Scrapy"
        self._robotstxt_useragent = settings.get("ROBOTSTXT_USER_AGENT")
        _warn_if_scrapys_own(self._default_useragent)
        self._profile = settings.get("MANNERLY_ROBOTSTXT_PROFILE", "google")
        self._rfc = settings.getbool("MANNERLY_ROBOTSTXT_RFC", False)
        self._wait_limit = settings.getfloat("MANNERLY_ROBOTSTXT_WAIT", 600.0)
        self._backoff = settings.getfloat("MANNERLY_ROBOTSTXT_BACKOFF", 60.0)
        # Fail at start-up, not on the first request, on a bad setting.
        RobotsState("http://example.com", self._profile, rfc=self._rfc, backoff_base=self._backoff)
        self._states: Dict[str, RobotsState] = {}
        self._fetching: Dict[str, List[Any]] = {}
        self._parked: Dict[int, Any] = {}
        crawler.signals.connect(self._spider_idle, signal=signals.spider_idle)
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Any) -> "RobotsTxtMiddleware":
        return cls(crawler)

    def state(self, origin: str) -> RobotsState:
        """The robots.txt state of ``origin`` (``scheme://host[:port]``)."""
        st = self._states.get(origin)
        if st is None:
            st = RobotsState(origin, self._profile, rfc=self._rfc, backoff_base=self._backoff)
            self._states[origin] = st
        return st

    def _agent(self, request: Any) -> str:
        ua = self._robotstxt_useragent or request.headers.get(b"User-Agent") or self._default_useragent
        return product_token(ua)

    async def process_request(self, request: Any, spider: Any = None) -> None:
        if request.meta.get("dont_obey_robotstxt"):
            return None
        url = urlparse_cached(request)
        if url.scheme not in ("http", "https") or not url.netloc:
            return None
        try:
            state = self.state(f"{url.scheme}://{url.netloc}")
        except ValueError:
            return None  # not an origin robots.txt can be fetched from
        decision = await self._decision(state, request)
        if decision.access == "disallow-all":
            self._park(request, state, decision)
        if not decision.is_allowed(self._agent(request), request.url):
            logger.debug("Forbidden by robots.txt: %(request)s", {"request": request})
            self._stats.inc_value("robotstxt/forbidden")
            raise IgnoreRequest("Forbidden by robots.txt")
        return None

    def process_response(self, request: Any, response: Any, spider: Any = None) -> Any:
        # The 30-day rule allows crawling again only if the site answers.
        if response.status < 500 and response.status != 429 and not request.meta.get("dont_obey_robotstxt"):
            url = urlparse_cached(request)
            st = self._states.get(f"{url.scheme}://{url.netloc}")
            if st is not None:
                st.note_host_answered()
        return response

    async def _decision(self, state: RobotsState, request: Any) -> RobotsDecision:
        while True:
            d = state.decision()
            if d is not None:
                return d
            waiters = self._fetching.get(state.origin)
            if waiters is None:
                self._fetching[state.origin] = waiters = []
                try:
                    return await self._fetch(state, request)
                finally:
                    del self._fetching[state.origin]
                    for w in waiters:
                        w.callback(None)
            from twisted.internet.defer import Deferred

            d_wait: Any = Deferred()
            waiters.append(d_wait)
            await _wait(d_wait)

    async def _fetch(self, state: RobotsState, request: Any) -> RobotsDecision:
        robots_request = Request(
            state.robots_url,
            priority=self.DOWNLOAD_PRIORITY,
            meta={"dont_obey_robotstxt": True, "dont_retry": True, "redirect_ttl": 5},
            dont_filter=True,
            callback=NO_CALLBACK,
        )
        engine = self.crawler.engine
        self._stats.inc_value("robotstxt/request_count")
        try:
            if hasattr(engine, "download_async"):
                response = await engine.download_async(robots_request)
            else:  # pragma: no cover - Scrapy before 2.14
                response = await _wait(engine.download(robots_request))
        except IgnoreRequest as exc:
            if "redirect" in str(exc):
                decision = state.apply_too_many_redirects()
            else:
                decision = state.apply_network_error("other", f"{type(exc).__name__}: {exc}")
        except Exception as exc:  # the download failed below HTTP
            self._stats.inc_value(f"robotstxt/exception_count/{type(exc)}")
            decision = state.apply_network_error(_network_kind(exc), f"{type(exc).__name__}: {exc}")
        else:
            self._stats.inc_value("robotstxt/response_count")
            self._stats.inc_value(f"robotstxt/response_status_count/{response.status}")
            redirects = list(
                zip(response.meta.get("redirect_urls", []), response.meta.get("redirect_reasons", []))
            )
            decision = state.apply_response(
                response.status,
                response.body,
                headers=_headers(response),
                url=response.url,
                redirects=[(u, r if isinstance(r, int) else 301) for u, r in redirects],
            )
            if response.status < 500 and response.status != 429:
                state.note_host_answered()
        if decision.access == "disallow-all":
            logger.info("robots.txt of %s: %s", state.origin, decision.reason)
        else:
            robots = decision.robots if decision.robots is not None else Robots(b"")
            parser = RobotParser.__new__(RobotParser)
            parser.spider = getattr(self.crawler, "spider", None)
            parser.robots = robots
            self.crawler.signals.send_catch_log(signal=signals.robots_parsed, robotparser=parser, request=request)
        return decision

    def _park(self, request: Any, state: RobotsState, decision: RobotsDecision) -> None:
        now = time.time()
        since = request.meta.get("mannerly_robots_waiting_since", now)
        retry_at = state.retry_at if state.retry_at is not None else decision.expires_at
        if retry_at - since > self._wait_limit:
            self._stats.inc_value("mannerly/robotstxt/gave_up")
            logger.warning(
                "Dropped %(request)s: robots.txt of %(origin)s is unreachable (%(reason)s) "
                "and the next try is past MANNERLY_ROBOTSTXT_WAIT (%(limit)s s)",
                {"request": request, "origin": state.origin, "reason": decision.reason, "limit": self._wait_limit},
            )
            raise RobotsTxtUnavailable(f"robots.txt unreachable: {decision.reason}")
        again = request.replace(dont_filter=True)
        again.meta["mannerly_robots_waiting_since"] = since
        handle = _call_later(max(0.0, retry_at - now), self._unpark, again)
        self._parked[id(again)] = handle
        self._stats.inc_value("mannerly/robotstxt/parked")
        raise RobotsTxtParked(f"robots.txt unreachable, retrying in {retry_at - now:.0f} s: {decision.reason}")

    def _unpark(self, request: Any) -> None:
        self._parked.pop(id(request), None)
        self.crawler.engine.crawl(request)

    def _spider_idle(self, spider: Any = None) -> None:
        if self._parked:
            raise DontCloseSpider

    def _spider_closed(self, spider: Any = None) -> None:
        for handle in self._parked.values():
            handle.cancel()
        self._parked.clear()


class PolitenessMiddleware:
    """Per-host pacing for Scrapy from mannerly's controller (``mannerly.Politeness``).

    It paces Scrapy's own download slots (one per host by default), so it
    composes with the scheduler and the rest of the downloader: for each
    slot it sets the concurrency to ``MANNERLY_MAX_IN_FLIGHT`` (1), turns
    off delay randomisation (which would go below the floor half the
    time), and keeps the slot's delay at what the controller says: the
    minimum delay, raised by Crawl-delay as the profile reads it, by
    Request-rate, and by backoff after 429/5xx/timeouts; Retry-After on
    429 and 503 holds the slot until the time the server gave (capped).

    Settings:

    - ``MANNERLY_MIN_DELAY``: seconds between request starts to a host
      (default: ``DOWNLOAD_DELAY`` when set above 0, else 1.0).
    - ``MANNERLY_CRAWL_DELAY_PROFILE``: ``"conservative"`` (default: the
      largest of the minimum, Crawl-delay and Request-rate), ``"literal"``,
      ``"window"`` (Bing) or ``"ignore"`` (Google).
    - ``MANNERLY_MAX_CRAWL_DELAY``: a larger Crawl-delay skips the host (30).
    - ``MANNERLY_RETRY_AFTER_CAP``: longest Retry-After honoured (3600).
    - ``MANNERLY_MAX_DELAY``: the most backoff can raise the delay to (300).
    - ``MANNERLY_MAX_IN_FLIGHT``: requests in flight per host (1).

    Crawl-delay reaches it through Scrapy's ``robots_parsed`` signal, from
    either robots.txt middleware when ``ROBOTSTXT_PARSER`` is
    ``mannerly.scrapy.RobotParser``.
    """

    def __init__(self, crawler: Any) -> None:
        s = crawler.settings
        _check_settings(s)
        if not s.getbool("MANNERLY_POLITENESS_ENABLED", True):
            raise NotConfigured
        self.crawler = crawler
        self._stats = crawler.stats
        download_delay = s.getfloat("DOWNLOAD_DELAY")
        self._max_in_flight = s.getint("MANNERLY_MAX_IN_FLIGHT", 1)
        self.politeness = Politeness(
            s.getfloat("MANNERLY_MIN_DELAY", download_delay if download_delay > 0 else 1.0),
            s.get("MANNERLY_CRAWL_DELAY_PROFILE", "conservative"),
            max_in_flight=self._max_in_flight,
            max_crawl_delay=s.getfloat("MANNERLY_MAX_CRAWL_DELAY", 30.0),
            retry_after_cap=s.getfloat("MANNERLY_RETRY_AFTER_CAP", 3600.0),
            max_delay=s.getfloat("MANNERLY_MAX_DELAY", 300.0),
        )
        self._default_useragent = s.get("USER_AGENT") or "Scrapy"
        self._robotstxt_useragent = s.get("ROBOTSTXT_USER_AGENT")
        crawler.signals.connect(self._response_downloaded, signal=signals.response_downloaded)
        crawler.signals.connect(self._robots_parsed, signal=signals.robots_parsed)

    @classmethod
    def from_crawler(cls, crawler: Any) -> "PolitenessMiddleware":
        return cls(crawler)

    def _downloader(self) -> Any:
        return self.crawler.engine.downloader

    def _key(self, request: Any) -> str:
        d = self._downloader()
        key = request.meta.get("download_slot")
        if key is not None:
            return str(key)
        get = getattr(d, "get_slot_key", None) or getattr(d, "_get_slot_key")
        try:
            return str(get(request))
        except TypeError:  # pragma: no cover - older Scrapy wants the spider too
            return str(get(request, self.crawler.spider))

    def _slot(self, request: Any) -> Tuple[str, Any]:
        d = self._downloader()
        try:
            key, slot = d._get_slot(request)
        except TypeError:  # pragma: no cover - older Scrapy wants the spider too
            key, slot = d._get_slot(request, self.crawler.spider)
        return key, slot

    def _pace(self, key: str, slot: Any) -> None:
        """Makes the Scrapy slot wait as the controller says."""
        slot.concurrency = min(slot.concurrency, self._max_in_flight)
        if hasattr(slot, "jitter"):
            slot.jitter = 0.0
        else:  # pragma: no cover - Scrapy before 2.14
            slot.randomize_delay = False
        # Scrapy skips its wait entirely for a zero delay; keep a hair above.
        slot.delay = max(self.politeness.delay(key), 0.001)
        nxt = self.politeness.next_allowed(key)
        if nxt is not None:
            from time import monotonic

            slot.lastseen = max(slot.lastseen, monotonic() + (nxt - time.time()) - slot.delay)

    def process_request(self, request: Any, spider: Any = None) -> None:
        key, slot = self._slot(request)
        if math.isinf(self.politeness.wait(key)):
            reason = self.politeness.skipped(key) or "skipped"
            self._stats.inc_value("mannerly/politeness/skipped")
            raise IgnoreRequest(f"{key}: {reason}")
        self._pace(key, slot)
        return None

    def process_exception(self, request: Any, exception: BaseException, spider: Any = None) -> None:
        if isinstance(exception, IgnoreRequest):
            return None
        key = request.meta.get("download_slot")
        if key is None:
            return None
        now = time.time()
        self.politeness.start(key, now)
        self.politeness.finish(key, None, 0.0, None, now)
        slot = self._downloader().slots.get(key)
        if slot is not None:
            self._pace(key, slot)
        return None

    def _response_downloaded(self, response: Any, request: Any, spider: Any = None) -> None:
        # Sent before the slot takes its next request, so a Retry-After or
        # a backoff holds the very next one.
        key = request.meta.get("download_slot")
        if key is None:
            return
        now = time.time()
        latency = float(request.meta.get("download_latency") or 0.0)
        retry_after = response.headers.get(b"Retry-After")
        if isinstance(retry_after, bytes):
            retry_after = retry_after.decode("latin-1")
        # A request counts as started when its response came: the latest
        # moment it can have reached the server. Scrapy's own start (when
        # it handed the request to the download handler) is earlier by a
        # varying time: a connect for a host's first request, and with
        # many hosts in flight the reactor's queue, so that counting from
        # it left the gap the server saw short of the delay by up to
        # 100 ms (46 requests of 1,870 at 300 hosts and 1 s).
        self.politeness.start(key, now)
        self.politeness.finish(key, response.status, latency, retry_after, now)
        slot = self._downloader().slots.get(key)
        if slot is not None:
            self._pace(key, slot)

    def _robots_parsed(self, robotparser: Any, request: Any) -> None:
        robots = getattr(robotparser, "robots", None)
        if not isinstance(robots, Robots):
            return  # another parser: no Crawl-delay to read the way a profile does
        ua = self._robotstxt_useragent or request.headers.get(b"User-Agent") or self._default_useragent
        key, slot = self._slot(request)
        self.politeness.set_robots(key, robots, product_token(ua))
        self._pace(key, slot)


try:  # Scrapy is optional: the parser works without it.
    from scrapy.http import Request as _Request
    from scrapy.linkextractors import LinkExtractor as _ScrapyLinkExtractor
except ImportError:  # pragma: no cover - exercised when Scrapy is absent
    _Request = None  # type: ignore[assignment,misc]
    _ScrapyLinkExtractor = object  # type: ignore[assignment,misc]

# X-Robots-Tag directives that carry a value after a colon; anything else
# before a colon names a crawler.
_VALUED = ("unavailable_after", "max-snippet", "max-image-preview", "max-video-preview")


def _says_nofollow(directives: str) -> bool:
    return any(d.strip().lower() in ("nofollow", "none") for d in directives.split(","))


def _agent_of(response: Any) -> str:
    request = getattr(response, "request", None)
    ua = request.headers.get(b"User-Agent") if request is not None else None
    return product_token(ua) if ua else "*"


def page_says_nofollow(response: Any, agent: Optional[str] = None) -> bool:
    """Whether a page asks crawlers not to follow its links: ``nofollow``
    or ``none`` in an ``X-Robots-Tag`` header (its global form, or the form
    for this crawler's product token, ``MyBot: nofollow``), or in a
    ``<meta name="robots">`` or ``<meta name="MyBot">`` tag. ``agent``:
    the product token (default: from the request's User-Agent).
    """
    agent = (agent or _agent_of(response)).lower()
    for raw in response.headers.getlist(b"X-Robots-Tag"):
        value = raw.decode("latin-1") if isinstance(raw, bytes) else str(raw)
        who, colon, rest = value.partition(":")
        if not colon or who.strip().lower() in _VALUED:
            if _says_nofollow(value):
                return True
        elif who.strip().lower() == agent and _says_nofollow(rest):
            return True
    xpath = getattr(response, "xpath", None)
    if xpath is None:  # not a text response
        return False
    for meta in xpath("//meta[@name][@content]"):
        name = meta.attrib.get("name", "").strip().lower()
        if name in ("robots", agent) and _says_nofollow(meta.attrib.get("content", "")):
            return True
    return False


class LinkExtractor(_ScrapyLinkExtractor):  # type: ignore[misc,valid-type]
    """Scrapy's ``LinkExtractor`` that obeys robots directives, as
    mannerly's crawler does: no links at all from a page that says
    ``nofollow`` (meta robots, ``X-Robots-Tag``; see
    ``page_says_nofollow``), and no ``rel="nofollow"`` link unless
    ``follow_rel_nofollow=True``. Every other argument is Scrapy's.
    ``agent``: the product token the directives are read for (default:
    the request's User-Agent's).
    """

    def __init__(self, *args: Any, agent: Optional[str] = None, follow_rel_nofollow: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.agent = agent
        self.follow_rel_nofollow = follow_rel_nofollow

    def extract_links(self, response: Any) -> List[Any]:
        if page_says_nofollow(response, self.agent):
            return []
        links = super().extract_links(response)
        if self.follow_rel_nofollow:
            return links
        return [link for link in links if not link.nofollow]


class NofollowMiddleware:
    """Spider middleware: drops every request a spider yields from a page
    that says ``nofollow`` (meta robots or ``X-Robots-Tag``, for the
    crawler's product token or all crawlers), counted in the stats as
    ``mannerly/nofollow/dropped``. Items pass. For ``rel="nofollow"``
    links, use ``mannerly.scrapy.LinkExtractor`` (the link, not the page,
    carries that).

    Enable it in ``settings.py``::

        SPIDER_MIDDLEWARES = {"mannerly.scrapy.NofollowMiddleware": 550}
    """

    def __init__(self, crawler: Any) -> None:
        self._stats = crawler.stats

    @classmethod
    def from_crawler(cls, crawler: Any) -> "NofollowMiddleware":
        return cls(crawler)

    def _keep(self, response: Any, result: Any) -> Any:
        if not page_says_nofollow(response):
            return None
        return lambda r: not (_Request is not None and isinstance(r, _Request))

    def process_spider_output(self, response: Any, result: Any, spider: Any = None) -> Any:
        keep = self._keep(response, result)
        for r in result:
            if keep is None or keep(r):
                yield r
            else:
                self._stats.inc_value("mannerly/nofollow/dropped")

    async def process_spider_output_async(self, response: Any, result: Any, spider: Any = None) -> Any:
        keep = self._keep(response, result)
        async for r in result:
            if keep is None or keep(r):
                yield r
            else:
                self._stats.inc_value("mannerly/nofollow/dropped")
