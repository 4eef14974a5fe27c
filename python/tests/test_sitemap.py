"""Sitemaps through Python: entries as the Rust parser reads them, limits
and the location rule included, and bad input reported, never raised."""

import gzip

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
