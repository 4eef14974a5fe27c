//! A record serialised by its own types is already canonical: the same
//! bytes as RFC 8785's canonicalisation of it as JSON, whatever it holds.

use mannerly_evidence::{jcs, Decision, Delay, DelaySource, Kind, Record, RobotsState, RobotsUsed};
use proptest::prelude::*;

fn text() -> impl Strategy<Value = String> {
    // Control characters, quotes, backslashes, non-ASCII, astral.
    "[a-z\\x00-\\x1f\"\\\\/é€𝄞 ]{0,12}"
}

fn seconds() -> impl Strategy<Value = f64> {
    (0u64..10_000_000_000).prop_map(|ms| ms as f64 / 1000.0)
}

prop_compose! {
    fn record()(
        url in text(), ua in text(), keyid in proptest::option::of(text()),
        robots in proptest::option::of((text(), proptest::option::of(text()), any::<Option<u16>>(), 0u8..3)),
        decision in proptest::option::of((any::<bool>(), any::<Option<u32>>(), proptest::option::of(text()))),
        required in seconds(), since in proptest::option::of(seconds()), source in 0u8..5,
        usage in proptest::option::of(text()), seq in any::<u64>(),
    ) -> Record {
        Record {
            url,
            user_agent: ua,
            keyid,
            seq,
            time: "2026-11-27T12:00:00.001Z".into(),
            host: "a.test".into(),
            kind: Kind::Page,
            robots: robots.map(|(u, sha, status, st)| RobotsUsed {
                url: u,
                sha256: sha,
                fetched: None,
                status,
                state: [RobotsState::Parsed, RobotsState::AllowAll, RobotsState::DisallowAll][st as usize],
                why: None,
            }),
            decision: decision.map(|(allowed, line, rule)| Decision { allowed, line, rule }),
            delay: Delay {
                required_s: required,
                since_previous_s: since,
                source: [
                    DelaySource::Default,
                    DelaySource::CrawlDelay,
                    DelaySource::RetryAfter,
                    DelaySource::Backoff,
                    DelaySource::Adaptive,
                ][source as usize],
            },
            content_usage: usage,
            ..Record::blank()
        }
    }
}

proptest! {
    #[test]
    fn a_records_own_bytes_are_its_canonical_bytes(r in record()) {
        let value = serde_json::to_value(&r).expect("json");
        prop_assert_eq!(
            String::from_utf8(r.canonical_bytes().expect("serialises")).expect("utf-8"),
            String::from_utf8(jcs::canonical(&value)).expect("utf-8")
        );
        let back: Record = serde_json::from_slice(&r.canonical_bytes().expect("serialises")).expect("reads back");
        prop_assert_eq!(back, r);
    }
}
