from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, TypedDict, Union

__version__: str

class Finding(TypedDict):
    line: int
    column: int
    severity: str
    code: str
    message: str
    suggestion: Optional[str]

class Usage(TypedDict):
    train_ai: str
    ai_use: str
    search: str
    lines: List[int]

class Verdict:
    """Why a URL is allowed or not."""

    allowed: bool
    line: Optional[int]
    rule: Optional[str]
    groups: List[int]
    agent_match: str
    requested: Optional[str]
    """The URL as a crawler requests it (percent-encoded as a browser
    does), when it differs from the URL given: what was judged."""
    def __bool__(self) -> bool: ...

class AgentRules:
    """One crawler's view of a file (from ``Robots.for_agent``)."""

    @property
    def agent(self) -> str: ...
    def is_allowed(self, url: str) -> bool: ...
    def allowed_many(self, urls: Sequence[str]) -> List[bool]: ...
    def explain(self, url: str) -> Verdict: ...

class Robots:
    """A parsed robots.txt file; never raises on content."""

    def __init__(self, body: bytes, rfc: bool = False, max_bytes: Optional[int] = None) -> None: ...
    @property
    def mode(self) -> str: ...
    @property
    def truncated(self) -> bool: ...
    def is_allowed(self, agent: str, url: str) -> bool: ...
    def explain(self, agent: str, url: str) -> Verdict: ...
    def for_agent(self, agent: str) -> AgentRules: ...
    def crawl_delay(self, agent: str) -> Optional[float]: ...
    def request_rate(self, agent: str) -> Optional[Tuple[int, float]]: ...
    def sitemaps(self) -> List[str]: ...
    def content_usage(
        self, agent: str, url: str, header: Optional[Sequence[str]] = None
    ) -> Optional[Usage]: ...
    def lint(self) -> List[Finding]: ...

def lint(body: bytes, rfc: bool = False) -> List[Finding]: ...
def product_token(user_agent: str) -> Optional[str]: ...
def as_requested(url: str) -> str:
    """The URL as a crawler requests it (percent-encoded as a browser
    does): the form every method judges."""

class SitemapEntry(TypedDict, total=False):
    kind: str
    loc: str
    lastmod: Optional[str]
    changefreq: Optional[str]
    priority: Optional[float]

class SitemapSummary(TypedDict):
    kind: Optional[str]
    entries: int
    dropped: Dict[str, int]
    stopped: Optional[str]
    truncated: bool
    error: Optional[str]
    description: str

class SitemapEntries:
    """The entries of one sitemap, read as they are iterated."""

    def __iter__(self) -> "SitemapEntries": ...
    def __next__(self) -> SitemapEntry: ...
    @property
    def summary(self) -> Optional[SitemapSummary]: ...

def parse_sitemap(data: bytes, base_url: str) -> SitemapEntries: ...

Headers = Union[Mapping[str, str], Iterable[Tuple[str, str]]]

def generate_key() -> str: ...
def public_jwk(key: str) -> str: ...
def sign_request(
    method: str,
    url: str,
    headers: Headers,
    key: str,
    agent: str,
    components: Optional[List[str]] = None,
    now: Optional[float] = None,
) -> List[Tuple[str, str]]: ...
def verify_request(
    method: str,
    url: str,
    headers: Headers,
    keys: Union[str, Mapping[str, Any], List[Mapping[str, Any]]],
    now: Optional[float] = None,
    *,
    web_bot_auth: bool = True,
    max_validity: int = 86400,
    allow_test_keys: bool = False,
    keys_from: Optional[str] = None,
    allow_http: bool = False,
) -> Dict[str, Any]: ...

class RobotsDecision:
    """What an origin's robots.txt allows now, and until when."""

    @property
    def access(self) -> str:
        """'rules', 'allow-all' (4xx, too many redirects) or 'disallow-all'
        (5xx, 429, network failure)."""
    @property
    def robots(self) -> Optional[Robots]: ...
    expires_at: float
    reason: str
    def is_allowed(self, agent: str, url: str) -> bool: ...

class RobotsState:
    """robots.txt over time for one origin (RFC 9309 and Google's handling)."""

    def __init__(
        self,
        origin: str,
        profile: str = "google",
        *,
        rfc: bool = False,
        max_ttl: float = 86400.0,
        min_ttl: float = 60.0,
        backoff_base: float = 60.0,
        backoff_max: float = 3600.0,
        retry_after_cap: float = 86400.0,
    ) -> None: ...
    @property
    def origin(self) -> str: ...
    @property
    def robots_url(self) -> str: ...
    @property
    def retry_at(self) -> Optional[float]: ...
    @property
    def failing_since(self) -> Optional[float]: ...
    def decision(self, now: Optional[float] = None) -> Optional[RobotsDecision]: ...
    def apply_response(
        self,
        status: int,
        body: bytes = b"",
        headers: Optional[Headers] = None,
        url: Optional[str] = None,
        redirects: Sequence[Tuple[str, int]] = (),
        now: Optional[float] = None,
    ) -> RobotsDecision: ...
    def apply_network_error(self, kind: str = "other", detail: str = "", now: Optional[float] = None) -> RobotsDecision: ...
    def apply_too_many_redirects(
        self, redirects: Sequence[Tuple[str, int]] = (), is_loop: bool = False, now: Optional[float] = None
    ) -> RobotsDecision: ...
    def note_host_answered(self, now: Optional[float] = None) -> None: ...
    def history(self) -> List[Tuple[float, str, str]]: ...

class Politeness:
    """Per-key request pacing: delays start to start, Crawl-delay by
    profile, Retry-After, backoff."""

    def __init__(
        self,
        min_delay: float = 1.0,
        profile: str = "conservative",
        *,
        max_in_flight: int = 1,
        max_crawl_delay: float = 30.0,
        over_max: str = "skip",
        retry_after_cap: float = 3600.0,
        backoff_factor: float = 2.0,
        max_delay: float = 300.0,
        pause_after: int = 10,
        pause_for: float = 600.0,
    ) -> None: ...
    def set_robots(self, key: str, robots: Optional[Robots], agent: str) -> None: ...
    def wait(self, key: str, now: Optional[float] = None) -> float: ...
    def why_not_now(self, key: str, now: Optional[float] = None) -> Optional[str]: ...
    def start(self, key: str, now: Optional[float] = None) -> None: ...
    def finish(
        self,
        key: str,
        status: Optional[int] = None,
        latency: float = 0.0,
        retry_after: Optional[str] = None,
        now: Optional[float] = None,
    ) -> None: ...
    def delay(self, key: str) -> float: ...
    def next_allowed(self, key: str) -> Optional[float]: ...
    def skipped(self, key: str) -> Optional[str]: ...
