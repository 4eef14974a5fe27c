"""Scrapy's own robots.txt tests, run on mannerly's parser.

Copied into the tests of Scrapy's source distribution by ``run.sh`` and run
there, beside the two modules it reuses (``test_robotstxt_interface.py``
and ``test_downloadermiddleware_robotstxt.py``), as Scrapy runs them for
its own parsers. Only order-based precedence is skipped, as Scrapy skips it
for Protego: Google's rule (the longest match wins) is length-based.
"""

import pytest

from mannerly.scrapy import RobotParser
from tests import test_downloadermiddleware_robotstxt as middleware_tests
from tests import test_robotstxt_interface as interface_tests


class TestMannerlyRobotParser(interface_tests.BaseRobotParserTest):
    def setup_method(self):
        super()._setUp(RobotParser)

    def test_order_based_precedence(self) -> None:
        pytest.skip("mannerly follows Google: the longest match wins, not the first")


class TestRobotsTxtMiddlewareWithMannerly(middleware_tests.TestRobotsTxtMiddleware):
    def setup_method(self):
        super().setup_method()
        self.crawler.settings.set("ROBOTSTXT_PARSER", "mannerly.scrapy.RobotParser")
