//! Feeds arbitrary bytes to the sitemap parser (with and without a
//! location rule, small limits so runs stay fast) and checks its summary
//! agrees with what it emitted.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mannerly_sitemap::{LocationRule, Options, SitemapParser};

fuzz_target!(|data: &[u8]| {
    let options = Options {
        max_entries: 1_000,
        max_bytes: 1 << 20,
        ..Options::default()
    };
    let base = url::Url::parse("https://example.com/dir/sitemap.xml").expect("static URL");
    for rule in [None, Some(LocationRule::new(&base))] {
        let mut p = SitemapParser::from_bytes(data, options.clone(), rule);
        let n = p.by_ref().count();
        let s = p.finish();
        assert_eq!(s.entries, n, "summary counts what was emitted");
        assert!(n <= 1_000);
        assert!(s.bytes <= 1 << 20);
        let _ = s.describe();
    }
});
