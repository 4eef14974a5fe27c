//! Feeds arbitrary bytes to everything that reads a crawler's evidence: a
//! bundle (verified, and checked by the audit against an empty log), and
//! any JSON value through the canonical serialisation, which must give
//! the same bytes again when its own output is read back.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mannerly_audit::{group_bundles, Auditor, Catalogue, Options, RobotsBook};
use mannerly_evidence::{jcs, verify, Bundle};

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) {
        let once = jcs::canonical(&value);
        if let Ok(again) = serde_json::from_slice::<serde_json::Value>(&once) {
            assert_eq!(jcs::canonical(&again), once, "canonical bytes are a fixed point");
        }
    }
    let Ok(bundle) = serde_json::from_slice::<Bundle>(data) else {
        return;
    };
    let _ = verify(&bundle, None);
    let mut book = RobotsBook::new();
    book.add(None, None, "r".into(), b"User-agent: *\nDisallow: /p\n");
    let auditor = Auditor::new(&book, Catalogue::builtin(), Options::default(), 1)
        .with_evidence(group_bundles(vec![bundle]), std::time::Duration::from_secs(2));
    let _ = auditor.finish();
});
