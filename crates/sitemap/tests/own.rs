//! The sitemap parser's own tests: they stand without ../shared.

use std::io::Write;

use mannerly_sitemap::{Entry, Kind, LocationRule, Options, SitemapParser, Stop};

fn parse(bytes: &[u8]) -> (Vec<Entry>, mannerly_sitemap::Summary) {
    let mut p = SitemapParser::from_bytes(bytes, Options::default(), None);
    let e: Vec<Entry> = p.by_ref().collect();
    (e, p.summary().clone())
}

fn gz(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(data).expect("write");
    enc.finish().expect("finish")
}

fn urlset(n: usize) -> Vec<u8> {
    let mut s = String::from(
        r#"<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">"#,
    );
    for i in 0..n {
        s.push_str(&format!("<url><loc>https://example.com/p{i}</loc></url>\n"));
    }
    s.push_str("</urlset>");
    s.into_bytes()
}

#[test]
fn fifty_thousand_and_one_entries_stop_at_the_limit() {
    let (e, s) = parse(&urlset(50_001));
    assert_eq!(e.len(), 50_000);
    assert_eq!(s.stop, Some(Stop::MaxEntries(50_000)));
    assert_eq!(e.last().map(Entry::loc), Some("https://example.com/p49999"));
}

#[test]
fn a_small_gzip_that_expands_past_the_limit_is_cut() {
    // 1 KB compressed, far more decoded: a valid urlset padded with spaces.
    let mut doc = urlset(3);
    doc.truncate(doc.len() - "</urlset>".len());
    doc.extend(std::iter::repeat_n(b' ', 60 << 20));
    doc.extend_from_slice(b"<url><loc>https://example.com/late</loc></url></urlset>");
    let z = gz(&doc);
    assert!(z.len() < 70 * 1024, "{} bytes compressed", z.len());
    let (e, s) = parse(&z);
    assert_eq!(e.len(), 3);
    assert_eq!(s.stop, Some(Stop::MaxBytes(52_428_800)));
    assert_eq!(s.bytes, 52_428_800);
    assert_eq!(s.gzip_layers, 1);
}

#[test]
fn double_gzip_is_peeled() {
    let (e, s) = parse(&gz(&gz(&urlset(2))));
    assert_eq!(e.len(), 2);
    assert_eq!(s.gzip_layers, 2);
}

#[test]
fn doctype_and_entities_are_refused() {
    let laughs = br#"<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><urlset><url><loc>&lol2;</loc></url></urlset>"#;
    let (e, s) = parse(laughs);
    assert!(e.is_empty());
    assert!(
        matches!(&s.stop, Some(Stop::Error(m)) if m.contains("DOCTYPE")),
        "{s:?}"
    );
    let xxe = br#"<?xml version="1.0"?><!DOCTYPE u [<!ENTITY x SYSTEM "file:///etc/passwd">]><urlset><url><loc>&x;</loc></url></urlset>"#;
    let (e, s) = parse(xxe);
    assert!(e.is_empty());
    assert!(s.stop.is_some());
    // An undefined entity without a DTD makes its value invalid.
    let (e, s) = parse(b"<urlset><url><loc>https://e.com/&x;</loc></url><url><loc>https://e.com/ok</loc></url></urlset>");
    assert_eq!(e.len(), 1);
    assert_eq!(s.dropped_total(), 1);
}

#[test]
fn truncated_files_keep_what_was_read() {
    let mut doc = urlset(5);
    let cut = doc.len() - 40;
    doc.truncate(cut);
    let (e, s) = parse(&doc);
    assert!(s.truncated, "{s:?}");
    assert_eq!(e.len(), 4);
    // Cut inside <loc>: that URL may be incomplete, so it is dropped.
    let (e, s) = parse(b"<urlset><url><loc>https://e.com/a</loc></url><url><loc>https://e.com/pag");
    assert_eq!(e.len(), 1);
    assert!(s.truncated);
    assert_eq!(
        s.dropped["cut off inside <loc> (the URL may be incomplete)"],
        1
    );
    // Cut after </loc>: the entry is whole enough to keep.
    let (e, _) = parse(b"<sitemapindex><sitemap><loc>https://e.com/s1.xml</loc><last");
    assert_eq!(e.len(), 1);
}

#[test]
fn nesting_is_bounded() {
    let deep = format!("<urlset>{}", "<x>".repeat(100));
    let (_, s) = parse(deep.as_bytes());
    assert!(
        matches!(&s.stop, Some(Stop::Error(m)) if m.contains("nested deeper")),
        "{s:?}"
    );
}

#[test]
fn leniency_real_files_need() {
    let doc = "\u{feff}  \n<foo:urlset xmlns:foo=\"urn:x\"><foo:url><foo:loc><![CDATA[ https://e.com/a?b=1&c=2 ]]></foo:loc></foo:url><url><loc>\u{a0}https://e.com/b&amp;c\u{2003}</loc></url><url><loc>https://e.com/raw&unescaped=1</loc></url></foo:urlset>";
    let (e, s) = parse(doc.as_bytes());
    let locs: Vec<&str> = e.iter().map(Entry::loc).collect();
    assert_eq!(
        locs,
        [
            "https://e.com/a?b=1&c=2",
            "https://e.com/b&c",
            "https://e.com/raw&unescaped=1"
        ]
    );
    assert_eq!(s.kind, Some(Kind::UrlSet));
}

#[test]
fn every_date_form_and_bad_ones_are_unknown() {
    let forms = [
        "1997",
        "1997-07",
        "1997-07-16",
        "1997-07-16T19:20+01:00",
        "1997-07-16T19:20:30+01:00",
        "1997-07-16T19:20:30.45+01:00",
        "1997-07-16T19:20:30Z",
        "not a date",
    ];
    let mut doc = String::from("<urlset>");
    for f in forms {
        doc.push_str(&format!(
            "<url><loc>https://e.com/{}</loc><lastmod>{f}</lastmod></url>",
            f.len()
        ));
    }
    doc.push_str("</urlset>");
    let (e, _) = parse(doc.as_bytes());
    let unix: Vec<Option<i64>> = e.iter().map(|x| x.lastmod().and_then(|l| l.unix)).collect();
    assert_eq!(unix[0], Some(852_076_800));
    assert_eq!(unix[1], Some(867_715_200));
    assert_eq!(unix[2], Some(869_011_200));
    assert_eq!(unix[3], Some(869_077_200));
    assert_eq!(unix[4], Some(869_077_230));
    assert_eq!(unix[5], Some(869_077_230));
    assert_eq!(unix[6], Some(869_080_830));
    assert_eq!(unix[7], None, "an invalid date is unknown");
    assert_eq!(e.len(), 8, "and the entry is kept");
}

#[test]
fn text_rss_atom_and_index() {
    let (e, s) = parse(b"https://e.com/1\n\n  https://e.com/2  \r\nnot a url\n");
    assert_eq!(e.len(), 2);
    assert_eq!(s.kind, Some(Kind::Text));
    assert_eq!(s.dropped_total(), 1);
    let rss = b"<rss version=\"2.0\"><channel><item><link>https://e.com/r</link><pubDate>Sat, 01 Jan 2005 00:00:00 GMT</pubDate></item></channel></rss>";
    let (e, s) = parse(rss);
    assert_eq!((e.len(), s.kind), (1, Some(Kind::Rss)));
    assert_eq!(e[0].lastmod().and_then(|l| l.unix), Some(1_104_537_600));
    let atom = b"<feed xmlns=\"http://www.w3.org/2005/Atom\"><entry><link href=\"https://e.com/a\"/><updated>2005-01-01T00:00:00Z</updated></entry></feed>";
    let (e, s) = parse(atom);
    assert_eq!((e.len(), s.kind), (1, Some(Kind::Atom)));
    let index = b"<sitemapindex><sitemap><loc>https://e.com/s.xml</loc></sitemap></sitemapindex>";
    let (e, _) = parse(index);
    assert!(matches!(&e[0], Entry::Sitemap(s) if s.loc == "https://e.com/s.xml"));
}

#[test]
fn loc_length_and_location_rule() {
    let long = format!("https://e.com/{}", "a".repeat(2100));
    let doc = format!("<urlset><url><loc>{long}</loc></url><url><loc>https://e.com/dir/x</loc></url><url><loc>https://e.com/other</loc></url></urlset>");
    let rule = LocationRule::new(&url::Url::parse("https://e.com/dir/sitemap.xml").expect("url"));
    let mut p = SitemapParser::from_bytes(doc.as_bytes(), Options::default(), Some(rule));
    let e: Vec<Entry> = p.by_ref().collect();
    assert_eq!(e.len(), 1);
    let s = p.summary();
    assert_eq!(s.dropped["loc of 2,048 characters or more"], 1);
    assert_eq!(
        s.dropped["outside the sitemap's location (not cross-submitted)"],
        1
    );
}

#[test]
fn a_robots_txt_is_named_as_one_not_read_as_urls() {
    let robots = b"User-agent: *\nDisallow: /private\nLLM-Policy: /llms.txt\nSitemap: https://e.com/sitemap.xml\n";
    let (e, s) = parse(robots);
    assert!(e.is_empty());
    assert_eq!(s.dropped[mannerly_sitemap::ROBOTS_LINE], 4, "{s:?}");
    assert!(
        matches!(&s.stop, Some(Stop::Error(m)) if m.contains("a robots.txt")),
        "{s:?}"
    );
    // A text sitemap's URLs are still read beside such a line, and a URL
    // of another scheme is still only that.
    let (e, s) = parse(b"https://e.com/a\nSitemap: https://e.com/s.xml\nmailto:x@e.com\n");
    assert_eq!(e.len(), 1);
    assert_eq!(s.dropped[mannerly_sitemap::ROBOTS_LINE], 1, "{s:?}");
    assert_eq!(s.dropped["not an http(s) URL"], 1, "{s:?}");
    assert_eq!(s.stop, None);
}

#[test]
fn garbage_is_a_clear_error() {
    let (e, s) = parse(b"<html><body>not a sitemap</body></html>");
    assert!(e.is_empty());
    assert!(
        matches!(&s.stop, Some(Stop::Error(m)) if m.contains("root element is <html>")),
        "{s:?}"
    );
    let (e, _) = parse(&[0u8, 1, 2, 3, 0xff, 0xfe]);
    assert!(e.is_empty());
}
