"""Scrapy integration.

``ROBOTSTXT_PARSER = "mannerly.scrapy.RobotParser"`` makes Scrapy decide
robots.txt exactly as Google's reference library does, instead of Protego
(which, on the project's real-world corpus, allows thousands of
(agent, URL) pairs the reference disallows).

Scrapy hands a robots.txt parser only the body: never the status, and on a
download error it allows everything. The parser alone therefore cannot
fail closed on 5xx, 429 or network errors; a replacement for Scrapy's
RobotsTxtMiddleware that does is the next part of this module (issue #16).
"""

from __future__ import annotations

import re
from typing import Any, Optional, Union

from ._mannerly import Robots

try:  # Scrapy is optional: the parser works without it.
    from scrapy.robotstxt import RobotParser as _ScrapyRobotParser
except ImportError:  # pragma: no cover - exercised when Scrapy is absent
    _ScrapyRobotParser = object  # type: ignore[assignment,misc]

_TOKEN = re.compile(r"[A-Za-z_-]+")


def product_token(user_agent: Union[str, bytes]) -> str:
    """The product token robots.txt groups are matched against.

    Scrapy passes a whole User-Agent header (``MyBot/1.0 (+https://...)``);
    Google's parser compares the leading run of letters, ``-`` and ``_``
    (``MyBot``). An agent with no such run falls back to ``*`` rules only.
    """
    if isinstance(user_agent, bytes):
        user_agent = user_agent.decode("utf-8", "replace")
    m = _TOKEN.match(user_agent.strip())
    return m.group(0) if m else "*"


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
