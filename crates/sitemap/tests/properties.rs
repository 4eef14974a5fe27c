//! Property tests of the sitemap parser.

use mannerly_sitemap::{Entry, Options, SitemapParser};
use proptest::prelude::*;

fn doc(paths: &[String], gzip: bool) -> Vec<u8> {
    let mut s = String::from(
        "<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">",
    );
    for p in paths {
        s.push_str(&format!(
            "<url><loc>https://e.com/{}</loc><priority>0.5</priority></url>",
            p.replace('&', "&amp;")
        ));
    }
    s.push_str("</urlset>");
    if gzip {
        use std::io::Write;
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(s.as_bytes()).expect("gz");
        enc.finish().expect("gz")
    } else {
        s.into_bytes()
    }
}

fn locs(bytes: &[u8]) -> (Vec<String>, mannerly_sitemap::Summary) {
    let mut p = SitemapParser::from_bytes(bytes, Options::default(), None);
    let v: Vec<String> = p.by_ref().map(|e: Entry| e.loc().to_owned()).collect();
    (v, p.finish())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, .. ProptestConfig::default() })]

    #[test]
    fn every_entry_comes_back(paths in prop::collection::vec("[a-z0-9/&?=_.-]{0,20}", 0..40), gzip in any::<bool>()) {
        let (got, s) = locs(&doc(&paths, gzip));
        // Each comes back as the URL parser reads it (dot segments
        // resolved), which is what is emitted.
        let want: Vec<String> = paths
            .iter()
            .filter_map(|p| url::Url::parse(&format!("https://e.com/{p}")).ok())
            .map(String::from)
            .collect();
        prop_assert_eq!(got, want);
        prop_assert!(!s.truncated && s.stop.is_none());
    }

    #[test]
    fn a_cut_anywhere_keeps_a_prefix(paths in prop::collection::vec("[a-z0-9]{1,12}", 1..20), cut in 0.0f64..1.0) {
        let full = doc(&paths, false);
        let at = ((full.len() as f64) * cut) as usize;
        let (got, s) = locs(&full[..at]);
        let want: Vec<String> = paths.iter().map(|p| format!("https://e.com/{p}")).collect();
        prop_assert!(got.len() <= want.len());
        prop_assert_eq!(&got[..], &want[..got.len()], "entries are a prefix, never garbled");
        if at < full.len() && at > 60 {
            prop_assert!(s.truncated || s.stop.is_some(), "a cut file is flagged: {}", s.describe());
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2000)) {
        let mut p = SitemapParser::from_bytes(&bytes, Options::default(), None);
        let n = p.by_ref().count();
        prop_assert_eq!(p.finish().entries, n);
    }

    #[test]
    fn xml_like_noise_never_panics(s in "(<[a-z:]{1,8}( [a-z]{1,4}=\"[^\"]{0,6}\")?/?>|</[a-z:]{1,8}>|[a-z/:.&;#0-9 ]{0,8}|<!\\[CDATA\\[[a-z]{0,5}\\]\\]>){0,60}") {
        let wrapped = format!("<urlset>{s}");
        let mut p = SitemapParser::from_bytes(wrapped.as_bytes(), Options::default(), None);
        let n = p.by_ref().count();
        prop_assert_eq!(p.finish().entries, n);
    }
}
