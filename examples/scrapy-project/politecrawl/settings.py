"""Scrapy settings with mannerly's robots.txt handling and host pacing.

Everything else is Scrapy's default; see the package README for how each
mannerly setting combines with Scrapy's own.
"""

BOT_NAME = "politecrawl"
SPIDER_MODULES = ["politecrawl.spiders"]

# Say who you are: robots.txt groups are matched against the product token
# (PoliteCrawl), and site owners read the URL.
USER_AGENT = "PoliteCrawl/1.0 (+https://example.com/about-our-crawler)"

# robots.txt exactly as Google reads it, failing closed on 5xx, 429 and
# network errors (12 hours of complete disallow, then the last good copy).
ROBOTSTXT_OBEY = True
ROBOTSTXT_PARSER = "mannerly.scrapy.RobotParser"
DOWNLOADER_MIDDLEWARES = {
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
    "mannerly.scrapy.RobotsTxtMiddleware": 100,
    "mannerly.scrapy.PolitenessMiddleware": 950,
}
# No request from a page whose meta robots or X-Robots-Tag says nofollow.
SPIDER_MIDDLEWARES = {"mannerly.scrapy.NofollowMiddleware": 550}

# One request in flight per host, at least 1 s between starts, raised by
# Crawl-delay (the largest of it, Request-rate and this floor), by
# Retry-After and by backoff after 429/5xx/timeouts.
MANNERLY_MIN_DELAY = 1.0
MANNERLY_CRAWL_DELAY_PROFILE = "conservative"
# Many hosts at once: the global bound stays Scrapy's.
CONCURRENT_REQUESTS = 32
# The controller's backoff replaces AutoThrottle.
AUTOTHROTTLE_ENABLED = False
