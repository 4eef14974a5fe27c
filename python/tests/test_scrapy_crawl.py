"""A real Scrapy crawl of the simulated web, judged from the server's log.

`mannerly demo -- CMD` starts testweb (a few hundred hosts on 127.0.0.1
behind one proxy: robots.txt answering 503 and 429, Crawl-delay, a 429
storm with Retry-After, redirects, slow hosts), runs CMD against it and
counts politeness violations from the server's own request log. Scrapy
runs twice: with mannerly's parser and middlewares, and with Scrapy's
defaults (robots.txt obeyed, as its project template sets).
"""

import json
import os
import pathlib
import subprocess
import sys
import tempfile

import pytest

HERE = pathlib.Path(__file__).resolve().parent
SPIDER = HERE / "demo_spider.py"


def _binary() -> str:
    env = os.environ.get("MANNERLY_BIN")
    if env:
        return env
    root = HERE.parent.parent
    for profile in ("debug", "release"):
        candidate = root / "target" / profile / "mannerly"
        if candidate.exists():
            return str(candidate)
    message = "no mannerly binary: build it with `cargo build -p mannerly-cli` or set MANNERLY_BIN"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def _crawl(mode: str, hosts: int, delay: float) -> dict:
    if not os.environ.get("CI"):
        pytest.importorskip("scrapy")
    cmd = [_binary(), "demo", "--json", "--hosts", str(hosts), "--min-delay", str(delay)]
    with tempfile.TemporaryDirectory(prefix="mannerly-scrapy-") as out:
        cmd += ["--out", os.path.join(out, "demo"), "--", sys.executable, str(SPIDER), mode]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    lines = done.stdout.strip().splitlines()
    assert lines, f"the demo printed nothing (exit {done.returncode}):\n{done.stderr}"
    audit = json.loads(lines[-1])
    assert audit["external"]["exit"] == 0, f"Scrapy failed:\n{done.stderr}"
    return audit


@pytest.fixture(scope="module")
def with_mannerly() -> dict:
    # Large enough for the reactor's own delays to show: early requests at
    # this size went unseen at 6 hosts and 0.3 s.
    return _crawl("mannerly", 100, 1.0)


@pytest.fixture(scope="module")
def with_defaults() -> dict:
    return _crawl("defaults", 6, 0.3)


def test_scrapy_with_mannerly_breaks_no_rule(with_mannerly):
    a = with_mannerly
    assert a["pages"] >= 600, a  # it did crawl the generated hosts
    assert a["disallowed"] == 0, a["examples"]
    # down.test's robots.txt answers 503 and busy.test's 429: only
    # robots.txt was ever asked of them.
    assert a["pages_while_robots_unavailable"] == 0, a["examples"]
    assert a["robots_not_first"] == 0, a["examples"]
    # Crawl-delay (slowpoke.test: 2 s) and the minimum delay, start to start.
    assert a["too_soon"] == 0, a["examples"]
    assert a["retry_after_ignored"] == 0, a["examples"]
    assert a["hosts_concurrent"] == 0, a["examples"]
    # mannerly's link extractor: no link of a nofollow page, no
    # rel=nofollow link.
    assert a["nofollow_followed"] == 0, a["examples"]
    assert a["violations"] == 0, a


def test_scrapy_defaults_break_what_mannerly_keeps(with_mannerly, with_defaults):
    d, m = with_defaults, with_mannerly
    # A 503 robots.txt is parsed as an empty file: allow everything.
    assert d["pages_while_robots_unavailable"] > m["pages_while_robots_unavailable"] == 0, d
    # Retries of a 429 go out at once, whatever Retry-After says.
    assert d["retry_after_ignored"] > m["retry_after_ignored"] == 0, d
    # No delay by default, and Crawl-delay is never read.
    assert d["too_soon"] > m["too_soon"] == 0, d
