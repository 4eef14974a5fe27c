"""mannerly: robots.txt exactly as Google's reference library reads it.

>>> import mannerly
>>> robots = mannerly.Robots(b"User-agent: *\\nDisallow: /private/\\n")
>>> robots.is_allowed("MyBot", "https://example.com/private/x")
False
>>> robots.explain("MyBot", "/private/x").rule
'Disallow: /private/'
"""

from ._mannerly import AgentRules, Robots, SitemapEntries, Verdict, __version__, lint, parse_sitemap

__all__ = ["AgentRules", "Robots", "SitemapEntries", "Verdict", "lint", "parse_sitemap", "__version__"]
