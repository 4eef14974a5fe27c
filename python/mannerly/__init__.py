"""mannerly: robots.txt exactly as Google's reference library reads it.

>>> import mannerly
>>> robots = mannerly.Robots(b"User-agent: *\\nDisallow: /private/\\n")
>>> robots.is_allowed("MyBot", "https://example.com/private/x")
False
>>> robots.explain("MyBot", "/private/x").rule
'Disallow: /private/'
"""

from ._mannerly import AgentRules, Robots, Verdict, __version__, lint

__all__ = ["AgentRules", "Robots", "Verdict", "lint", "__version__"]
