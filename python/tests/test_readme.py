"""The README's "Use" example runs as written and says what its comments
say: a newcomer's first lines must not raise."""

import pathlib
import re

import pytest

import mannerly

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def use_example():
    text = README.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    if not blocks:
        pytest.fail("python/README.md has no python example")
    return blocks[0]


def test_the_use_example_runs_and_its_comments_hold():
    # What the example leaves to the reader: a robots.txt body, a sitemap,
    # the request to sign, and a clock.
    given = {
        "body": b"User-agent: *\nDisallow: /x\n",
        "data": b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        b"<url><loc>https://example.com/a</loc><lastmod>2026-01-02</lastmod></url></urlset>",
        "url": "https://example.com/a",
        "headers": [("Host", "example.com")],
        "json": __import__("json"),
        "t": 1_800_000_000.0,
    }
    scope = dict(given, mannerly=mannerly)
    # Statements, continuation lines joined, each with its comment.
    statements = []
    for line in use_example().splitlines():
        code, _, said = line.partition("#")
        if line.startswith(" ") and statements and not statements[-1][0].startswith("for "):
            statements[-1][0] += " " + code.strip()
        elif line.startswith(" "):
            statements[-1][0] += "\n" + code.rstrip()
        elif code.strip():
            statements.append([code.strip(), said.strip()])
    for code, said in statements:
        if said in ("False", "True", "[True, False]", "'Disallow: /private/'"):
            got = eval(code, scope)
            assert repr(got) == said, f"README: {code} gives {got!r}, not {said}"
        elif said.startswith("'503 since"):
            got = eval(code, scope)
            assert got.startswith("503 since") and "phase 1 of 3" in got, f"README: {code} gives {got!r}"
        else:
            exec(code.replace('entry["loc"], entry["lastmod"]', 'seen = (entry["loc"], entry["lastmod"])'), scope)
    assert scope["seen"] == ("https://example.com/a", "2026-01-02")
    assert scope["extra"] and scope["pace"].wait("example.com") == 0.0
