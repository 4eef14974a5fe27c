"""Sitemaps through Python: entries as the Rust parser reads them, limits
and the location rule included, and bad input reported, never raised."""

import gzip
import json
import os
import pathlib

import pytest

import mannerly

URLSET = b"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>https://example.com/a</loc><lastmod>2026-11-01</lastmod><changefreq>daily</changefreq><priority>0.8</priority></url>
  <url><loc>https://example.com/b</loc></url>
  <url><loc>https://elsewhere.example/c</loc></url>
</urlset>"""


def test_pages_with_their_fields_and_the_location_rule():
    it = mannerly.parse_sitemap(URLSET, "https://example.com/sitemap.xml")
    assert it.summary is None
    entries = list(it)
    assert [e["loc"] for e in entries] == ["https://example.com/a", "https://example.com/b"]
    a = entries[0]
    assert (a["kind"], a["lastmod"], a["changefreq"], a["priority"]) == ("url", "2026-11-01", "daily", pytest.approx(0.8))
    s = it.summary
    assert s["kind"] == "url-set" and s["entries"] == 2
    assert sum(s["dropped"].values()) == 1, s


def test_indexes_gzip_and_text():
    index = b"""<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
      <sitemap><loc>https://example.com/s1.xml.gz</loc></sitemap></sitemapindex>"""
    [child] = list(mannerly.parse_sitemap(index, "https://example.com/index.xml"))
    assert child == {"kind": "sitemap", "loc": "https://example.com/s1.xml.gz", "lastmod": None}
    packed = list(mannerly.parse_sitemap(gzip.compress(URLSET), "https://example.com/s.xml.gz"))
    assert len(packed) == 2
    text = list(mannerly.parse_sitemap(b"https://example.com/x\nhttps://example.com/y\n", "https://example.com/s.txt"))
    assert [e["loc"] for e in text] == ["https://example.com/x", "https://example.com/y"]


def test_bad_input_is_reported_not_raised():
    it = mannerly.parse_sitemap(b"<urlset><url><loc>https://example.com/a</loc>", "https://example.com/s.xml")
    list(it)
    assert it.summary is not None
    list(mannerly.parse_sitemap(bytes(range(256)) * 100, "https://example.com/s.xml"))
    with pytest.raises(ValueError, match="base_url"):
        mannerly.parse_sitemap(URLSET, "not a url")
    with pytest.raises(TypeError):
        mannerly.parse_sitemap("text, not bytes", "https://example.com/s.xml")


SHARED = pathlib.Path(os.environ.get("MANNERLY_SHARED", pathlib.Path(__file__).resolve().parents[3] / "shared"))

# The sources' tests add a URL normaliser that guesses a scheme for a
# scheme-less line; mannerly drops that line as "not an absolute URL" (the
# Rust suite asserts exactly that).
NORMALISED = {
    "crawler-commons/inline/text-needs-normalizer.txt": 1,
    "crawler-commons/inline/urlset-needs-normalizer.xml": 4,
}


def test_a_sample_of_the_shared_fixtures():
    root = SHARED / "sitemaps" / "fixtures"
    if not (root / "fixtures.json").exists():
        if os.environ.get("CI"):
            pytest.fail(f"{root} is missing: CI must run the shared fixtures")
        pytest.skip("SKIPPED: ../shared/sitemaps not found")
    checked = 0
    for fx in json.loads((root / "fixtures.json").read_text())["fixtures"]:
        expected, setup = fx.get("expected"), fx.get("setup")
        if not isinstance(expected, dict) or not isinstance(setup, dict) or "urls" not in expected:
            continue
        where = (setup.get("sitemap_url") or "").split()
        if not where or not where[0].startswith("http"):
            continue
        entries = mannerly.parse_sitemap((root / fx["file"]).read_bytes(), where[0])
        got = [e["loc"] for e in entries]
        if fx["file"] in NORMALISED:
            assert len(got) == NORMALISED[fx["file"]], (fx["file"], got)
            assert entries.summary["dropped"].get("not an absolute URL") == 1, entries.summary
        else:
            assert got == expected["urls"] and len(got) == expected["url_count"], (fx["file"], got)
        checked += 1
    assert checked >= 8, checked
