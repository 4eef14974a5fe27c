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
    search: str
    lines: List[int]

class Verdict:
    """Why a URL is allowed or not."""

    allowed: bool
    line: Optional[int]
    rule: Optional[str]
    groups: List[int]
    agent_match: str
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
) -> Dict[str, Any]: ...
