//! Property tests of the sans-IO policy: random fetch outcomes at random
//! times, driven the way the cache drives it (use the decision while it
//! holds, re-evaluate while a retry is not due, else fetch), with the
//! invariants checked at every step.

use std::time::Duration;

use mannerly_fetch::UnixMillis;

use mannerly_fetch::policy::{
    parse_retry_after, FetchOutcome, HttpResponse, NetworkError, PolicyConfig,
};
use mannerly_fetch::time::test_epoch;
use mannerly_fetch::{Access, Origin, OriginState, Profile};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Kind {
    Ok(Option<u64>),
    NotModified,
    ClientError(u16),
    Unreachable {
        status: Option<u16>,
        retry_after: Option<u64>,
    },
    /// The crawler stalled mid-request: nothing learnt of the site.
    Stalled,
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        3 => proptest::option::of(0u64..200_000).prop_map(Kind::Ok),
        1 => Just(Kind::NotModified),
        1 => prop::sample::select(vec![400u16, 403, 404, 410]).prop_map(Kind::ClientError),
        4 => (proptest::option::of(prop::sample::select(vec![429u16, 500, 502, 503, 504])),
              proptest::option::of(0u64..200_000))
            .prop_map(|(status, retry_after)| Kind::Unreachable { status, retry_after }),
        1 => Just(Kind::Stalled),
    ]
}

fn outcome(k: &Kind) -> FetchOutcome {
    let response =
        |status: u16, headers: Vec<(String, String)>, body: &str| FetchOutcome::Response {
            response: HttpResponse {
                status,
                headers,
                body: body.as_bytes().to_vec(),
                body_cut: false,
                url: "https://a.example/robots.txt".into(),
            },
            redirects: vec![],
        };
    match k {
        Kind::Ok(max_age) => response(
            200,
            max_age
                .map(|m| vec![("cache-control".to_owned(), format!("max-age={m}"))])
                .unwrap_or_default(),
            "User-agent: *\nDisallow: /p\n",
        ),
        Kind::NotModified => response(304, vec![], ""),
        Kind::ClientError(s) => response(*s, vec![], ""),
        Kind::Unreachable {
            status: Some(s),
            retry_after,
        } => response(
            *s,
            retry_after
                .map(|r| vec![("retry-after".to_owned(), r.to_string())])
                .unwrap_or_default(),
            "",
        ),
        Kind::Unreachable { status: None, .. } => FetchOutcome::Network {
            error: NetworkError::Timeout,
            detail: String::new(),
            redirects: vec![],
        },
        Kind::Stalled => FetchOutcome::Network {
            error: NetworkError::Stalled,
            detail: String::new(),
            redirects: vec![],
        },
    }
}

fn check_run(profile: Profile, outcomes: Vec<Kind>, steps: Vec<u64>) -> Result<(), TestCaseError> {
    let config = PolicyConfig {
        profile,
        ..PolicyConfig::default()
    };
    let mut state = OriginState::new(Origin::of("https://a.example/").expect("origin"));
    let mut now: UnixMillis = test_epoch();
    let mut next = outcomes.iter().cycle();
    let mut not_before: Option<UnixMillis> = None;
    let mut fetches = 0;
    for step in steps {
        now += Duration::from_secs(step);
        if state.decision(now).is_some() {
            continue;
        }
        if let Some(d) = state.reevaluate(now, &config) {
            prop_assert!(
                d.expires_at > now,
                "re-evaluated decision must hold for a while"
            );
            if let (Profile::Google, Some(run)) = (profile, &state.failure) {
                if now.duration_since(run.since) < config.disallow_phase {
                    prop_assert!(matches!(
                        state.last_decision().map(|d| &d.access),
                        Some(Access::DisallowAll)
                    ));
                }
            }
            continue;
        }
        // A fetch happens now: never before Retry-After or the backoff.
        if let Some(nb) = not_before {
            prop_assert!(
                now >= nb,
                "fetched at {now:?}, before the retry time {nb:?}"
            );
        }
        fetches += 1;
        let k = next.next().expect("cycle").clone();
        let had_good = state.good.is_some();
        let run_before = state.failure.clone();
        let d = state.apply(&outcome(&k), now, &config).clone();
        prop_assert!(
            d.expires_at > now,
            "{k:?}: the decision must hold for a while"
        );
        match &k {
            Kind::Ok(_) => {
                prop_assert!(matches!(d.access, Access::Rules(_)));
                prop_assert!(d.expires_at <= now + config.max_ttl);
                prop_assert!(d.expires_at >= now + config.min_ttl);
                prop_assert!(state.failure.is_none());
            }
            Kind::NotModified if had_good => prop_assert!(matches!(d.access, Access::Rules(_))),
            Kind::ClientError(_) => prop_assert!(matches!(d.access, Access::AllowAll)),
            Kind::Unreachable {
                retry_after,
                status,
            } => {
                let run = state.failure.clone().expect("a failure run");
                let age = now.duration_since(run.since);
                match profile {
                    Profile::Google if age < config.disallow_phase => {
                        prop_assert!(matches!(d.access, Access::DisallowAll))
                    }
                    Profile::Rfc9309 if age < config.unreachable_horizon => {
                        prop_assert!(matches!(d.access, Access::DisallowAll))
                    }
                    _ => {}
                }
                if let (Some(r), Some(_)) = (retry_after, status) {
                    let want = now
                        + Duration::from_secs(*r)
                            .min(config.retry_after_cap)
                            .max(Duration::from_secs(1));
                    prop_assert_eq!(
                        state.retry_at,
                        Some(want),
                        "Retry-After sets the next attempt"
                    );
                }
                let since = format!("since {}", run.since);
                prop_assert!(
                    d.reason.contains(&since),
                    "reason {:?} lacks {:?}",
                    d.reason,
                    since
                );
            }
            Kind::NotModified => {}
            Kind::Stalled => {
                // Nothing counted against the site: the run, if any, is as
                // it was; none starts; asked again within a second.
                prop_assert_eq!(&state.failure, &run_before);
                prop_assert!(d.expires_at <= now + Duration::from_secs(1));
                prop_assert_eq!(state.retry_at, Some(now + Duration::from_secs(1)));
                if run_before.is_none() {
                    prop_assert!(matches!(d.access, Access::DisallowAll));
                }
            }
        }
        not_before = state.retry_at;
    }
    let _ = fetches;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, .. ProptestConfig::default() })]

    #[test]
    fn google_profile_invariants(outcomes in prop::collection::vec(kind(), 1..12),
                                 steps in prop::collection::vec(prop_oneof![0u64..120, 0u64..7200, 0u64..200_000, 0u64..4_000_000], 1..80)) {
        check_run(Profile::Google, outcomes, steps)?;
    }

    #[test]
    fn rfc_profile_invariants(outcomes in prop::collection::vec(kind(), 1..12),
                              steps in prop::collection::vec(prop_oneof![0u64..120, 0u64..7200, 0u64..200_000, 0u64..4_000_000], 1..80)) {
        check_run(Profile::Rfc9309, outcomes, steps)?;
    }

    #[test]
    fn retry_after_delta_seconds(secs in 0u64..10_000_000) {
        let now = test_epoch();
        prop_assert_eq!(parse_retry_after(&secs.to_string(), now), Some(now + Duration::from_secs(secs)));
        prop_assert_eq!(parse_retry_after(&format!("  {secs} "), now), Some(now + Duration::from_secs(secs)));
    }

    #[test]
    fn retry_after_http_date_round_trips(offset in 0u64..100_000_000) {
        let t = test_epoch() + Duration::from_secs(offset);
        prop_assert_eq!(parse_retry_after(&mannerly_fetch::time::fmt_http_date(t), test_epoch()), Some(t));
    }

    #[test]
    fn retry_after_garbage_is_ignored(s in "[a-zA-Z ,:-]{0,30}|-[0-9]{1,5}|[0-9]+\\.[0-9]+") {
        // Either a real date in one of the three forms, or nothing.
        let parsed = parse_retry_after(&s, test_epoch());
        prop_assert!(parsed.is_none() || httpdate::parse_http_date(s.trim()).is_ok());
    }
}

#[test]
fn a_long_retry_after_is_honoured_across_the_phase_boundary() {
    // 11 h into a failure run, the server asks for 3 h: the switch to the
    // good copy at 12 h happens without fetching before the 3 h are up.
    let config = PolicyConfig::default();
    let mut state = OriginState::new(Origin::of("https://a.example/").expect("origin"));
    let t0 = test_epoch();
    state.apply(&outcome(&Kind::Ok(None)), t0, &config);
    let fail_at = t0 + Duration::from_secs(24 * 3600);
    state.apply(
        &outcome(&Kind::Unreachable {
            status: Some(503),
            retry_after: Some(60),
        }),
        fail_at,
        &config,
    );
    let t11 = fail_at + Duration::from_secs(11 * 3600);
    let d = state
        .apply(
            &outcome(&Kind::Unreachable {
                status: Some(503),
                retry_after: Some(3 * 3600),
            }),
            t11,
            &config,
        )
        .clone();
    assert!(matches!(d.access, Access::DisallowAll));
    assert_eq!(
        d.expires_at,
        fail_at + Duration::from_secs(12 * 3600),
        "expires at the phase boundary"
    );
    let t12 = d.expires_at;
    assert!(state.decision(t12).is_none());
    let d2 = state
        .reevaluate(t12, &config)
        .expect("no fetch due yet")
        .clone();
    assert!(matches!(d2.access, Access::Rules(_)), "{}", d2.reason);
    assert!(d2.reason.contains("phase 2 of 3"), "{}", d2.reason);
    assert_eq!(d2.expires_at, t11 + Duration::from_secs(3 * 3600));
    assert!(
        state
            .reevaluate(t11 + Duration::from_secs(3 * 3600), &config)
            .is_none(),
        "now a fetch is due"
    );
}

#[test]
fn a_decision_names_the_bytes_it_rests_on() {
    use sha2::Digest;
    let config = PolicyConfig::default();
    let mut state = OriginState::new(Origin::of("https://a.example/").expect("origin"));
    let t = test_epoch();
    let body = "User-agent: *\nDisallow: /p\n";
    let d = state.apply(&outcome(&Kind::Ok(None)), t, &config).clone();
    let want: [u8; 32] = sha2::Sha256::digest(body.as_bytes()).into();
    assert_eq!(
        (d.basis.sha256, d.basis.fetched, d.basis.status),
        (Some(want), Some(t), Some(200))
    );
    // Kept through a restore, as the rules are.
    let back = OriginState::restore(state.to_stored(), &config);
    assert_eq!(
        back.last_decision().map(|d| d.basis.sha256),
        Some(Some(want))
    );
    let later = t + Duration::from_secs(90_000);
    let d = state.apply(&outcome(&Kind::ClientError(404)), later, &config);
    assert_eq!(
        (d.basis.sha256, d.basis.fetched, d.basis.status),
        (None, Some(later), Some(404))
    );
}
