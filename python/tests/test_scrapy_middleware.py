"""mannerly's Scrapy middlewares against a small server on 127.0.0.1 whose
answers change over time, with Scrapy run in a child process (its reactor
cannot start twice in one)."""

import json
import os
import pathlib
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

HERE = pathlib.Path(__file__).resolve().parent


def _scrapy():
    if not os.environ.get("CI"):
        pytest.importorskip("scrapy")


class Site:
    """Serves `routes`: path -> list of (status, headers, body), one per
    request, the last repeated; logs (time, path) of every request."""

    def __init__(self, routes):
        self.routes = routes
        self.log = []
        self.lock = threading.Lock()
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                with site.lock:
                    site.log.append((time.monotonic(), self.path))
                    replies = site.routes.get(self.path, [(404, {}, b"not here")])
                    n = sum(1 for _, p in site.log if p == self.path)
                    status, headers, body = replies[min(n, len(replies)) - 1]
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def paths(self):
        return [p for _, p in self.log]

    def times(self, path):
        return [t for t, p in self.log if p == path]


def crawl(site, **settings):
    env = dict(os.environ, MANNERLY_TEST_SETTINGS=json.dumps(settings))
    done = subprocess.run(
        [sys.executable, str(HERE / "local_spider.py"), site.url + "/"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stderr


HTML = {"Content-Type": "text/html"}
PAGE = (200, HTML, b'<a href="/a">a</a> <a href="/no">no</a>')


def test_a_host_whose_robots_txt_is_down_waits_and_resumes():
    _scrapy()
    site = Site(
        {
            "/robots.txt": [(503, {}, b"down"), (200, {}, b"User-agent: *\nDisallow: /no\n")],
            "/": [PAGE],
            "/a": [(200, HTML, b"a")],
            "/no": [(200, HTML, b"no")],
        }
    )
    log = crawl(site, MANNERLY_ROBOTSTXT_BACKOFF=0.5, MANNERLY_MIN_DELAY=0.1)
    # Nothing but robots.txt until it answered; then the rules held.
    assert site.paths()[:2] == ["/robots.txt", "/robots.txt"], site.paths()
    assert sorted(site.paths()[2:]) == ["/", "/a"], site.paths()
    first, second = site.times("/robots.txt")
    assert second - first >= 0.3  # the backoff, not an immediate retry
    assert "phase 1 of 3" in log


def test_a_robots_txt_that_stays_down_costs_only_robots_txt_requests():
    _scrapy()
    site = Site({"/robots.txt": [(500, {}, b"")], "/": [PAGE]})
    log = crawl(site, MANNERLY_ROBOTSTXT_BACKOFF=0.2, MANNERLY_ROBOTSTXT_WAIT=1.0, MANNERLY_MIN_DELAY=0.05)
    assert set(site.paths()) == {"/robots.txt"}, site.paths()
    assert 2 <= len(site.paths()) <= 6  # retried with backoff, then given up
    assert "MANNERLY_ROBOTSTXT_WAIT" in log


def test_retry_after_holds_the_host_and_crawl_delay_paces_it():
    _scrapy()
    site = Site(
        {
            "/robots.txt": [(200, {}, b"User-agent: *\nCrawl-delay: 0.5\n")],
            "/": [(429, {"Retry-After": "2"}, b""), PAGE],
            "/a": [(200, HTML, b"a")],
            "/no": [(200, HTML, b"no")],
        }
    )
    crawl(site, MANNERLY_MIN_DELAY=0.1)
    roots = site.times("/")
    assert len(roots) == 2 and roots[1] - roots[0] >= 1.95, roots
    starts = [t for t, _ in site.log]
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    assert min(gaps) >= 0.45, gaps  # Crawl-delay 0.5, start to start
    assert site.paths().count("/no") == 1


def test_robots_txt_is_fetched_once_per_origin_and_redirects_are_followed():
    _scrapy()
    site = Site(
        {
            "/robots.txt": [(301, {"Location": "/real.txt"}, b"")],
            "/real.txt": [(200, {}, b"User-agent: *\nDisallow: /no\n")],
            "/": [PAGE],
            "/a": [(200, HTML, b'<a href="/">home</a>')],
            "/no": [(200, HTML, b"no")],
        }
    )
    crawl(site, MANNERLY_MIN_DELAY=0.05)
    assert site.paths().count("/robots.txt") == 1
    assert "/no" not in site.paths()


def test_the_example_project_crawls_with_its_settings():
    _scrapy()
    site = Site({"/robots.txt": [(200, {}, b"User-agent: *\nDisallow: /no\n")], "/": [PAGE], "/a": [(200, HTML, b"a")]})
    project = HERE.parent.parent / "examples" / "scrapy-project"
    if not project.exists():
        pytest.skip("the example project is not beside the tests")
    done = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "site", "-a", f"start={site.url}/", "-s", "MANNERLY_MIN_DELAY=0.05",
         "-O", "-:jsonlines"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    items = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert sorted(i["url"] for i in items) == [site.url + "/", site.url + "/a"], done.stdout
    assert sorted(site.paths()) == ["/", "/a", "/robots.txt"]


def test_scrapys_default_user_agent_is_called_out(caplog):
    _scrapy()
    from scrapy.utils.test import get_crawler

    from mannerly.scrapy import RobotsTxtMiddleware

    caplog.set_level("WARNING", logger="mannerly.scrapy")
    RobotsTxtMiddleware(get_crawler(settings_dict={"ROBOTSTXT_OBEY": True}))
    assert "USER_AGENT is Scrapy's default" in caplog.text
    caplog.clear()
    named = {"ROBOTSTXT_OBEY": True, "USER_AGENT": "OwnBot/1.0 (+https://own.example/bot)"}
    RobotsTxtMiddleware(get_crawler(settings_dict=named))
    assert "Scrapy's default" not in caplog.text
