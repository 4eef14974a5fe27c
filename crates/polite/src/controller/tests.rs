//! The controller's tests: pacing, backoff, Retry-After, pauses and
//! their recovery, each on a fake clock.

use super::*;

#[test]
fn pace_says_which_rule_held_each_request() {
    let mut p = Politeness::new(Config {
        min_delay: 1_000,
        jitter: 0.0,
        latency_factor: 0.0,
        profile: CrawlDelayProfile::Literal,
        ..Config::default()
    });
    let ok = Outcome::Status {
        status: 200,
        latency: 10,
        retry_after: None,
    };
    let mut now = UnixMillis(1_000_000);
    p.start("a", now);
    assert_eq!(p.pace("a").source, DelaySource::Default);
    assert_eq!(p.pace("a").previous_start, None);
    p.finish("a", now.add_millis(10), &ok);
    p.set_robots(
        "a",
        RobotsPacing {
            crawl_delay: Some(3.0),
            request_rate: None,
        },
    );
    now = p.get("a").expect("state").next_allowed;
    p.start("a", now);
    let pace = p.pace("a");
    assert_eq!(
        (pace.required_ms, pace.source),
        (3_000, DelaySource::CrawlDelay)
    );
    assert_eq!(pace.previous_start, Some(UnixMillis(1_000_000)));
    let busy = Outcome::Status {
        status: 503,
        latency: 10,
        retry_after: Some("20".into()),
    };
    p.finish("a", now.add_millis(10), &busy);
    let after_retry = p.get("a").expect("state").next_allowed;
    p.start("a", after_retry);
    let pace = p.pace("a");
    assert_eq!(pace.source, DelaySource::RetryAfter);
    assert_eq!(pace.required_ms, after_retry.millis_since(now));
    p.finish("a", after_retry.add_millis(10), &busy);
    let next = p.get("a").expect("state").next_allowed;
    p.start("a", next.max(after_retry.add_millis(30_000)));
    assert_eq!(p.pace("a").source, DelaySource::RetryAfter);
}

#[test]
fn no_profile_and_no_recovery_goes_below_the_minimum_delay() {
    for profile in [
        CrawlDelayProfile::Ignore,
        CrawlDelayProfile::Window,
        CrawlDelayProfile::Literal,
        CrawlDelayProfile::Conservative,
    ] {
        let mut p = Politeness::new(Config {
            min_delay: 1_000,
            profile,
            ..Config::default()
        });
        p.set_robots(
            "a",
            RobotsPacing {
                crawl_delay: Some(0.0),
                request_rate: None,
            },
        );
        let mut now = UnixMillis(0);
        let statuses = [503, 503].into_iter().chain(std::iter::repeat_n(200, 200));
        for status in statuses {
            p.start("a", now);
            now = now.add_millis(50);
            p.finish(
                "a",
                now,
                &Outcome::Status {
                    status,
                    latency: 50,
                    retry_after: None,
                },
            );
            let h = p.get("a").expect("state");
            assert!(h.delay >= 1_000, "{profile:?}: delay {} ms", h.delay);
            now = h.next_allowed.max(now);
        }
    }
}

#[test]
fn start_to_start_delay_and_one_in_flight() {
    let mut p = Politeness::new(Config::default());
    assert!(p.check("a", UnixMillis(0)).is_ok());
    p.start("a", UnixMillis(0));
    assert!(
        matches!(p.check("a", UnixMillis(5_000)), Err(Wait::Until { .. })),
        "in flight"
    );
    p.finish(
        "a",
        UnixMillis(300),
        &Outcome::Status {
            status: 200,
            latency: 300,
            retry_after: None,
        },
    );
    assert_eq!(
        p.check("a", UnixMillis(999)),
        Err(Wait::Until {
            at: UnixMillis(1_000),
            reason: HostHold::Delay { delay: 1_000 }
        })
    );
    assert!(p.check("a", UnixMillis(1_000)).is_ok());
}

#[test]
fn profiles() {
    let pacing = RobotsPacing {
        crawl_delay: Some(10.0),
        request_rate: Some((1, 20)),
    };
    for (profile, base, window) in [
        (CrawlDelayProfile::Ignore, 1_000, 0),
        (CrawlDelayProfile::Window, 1_000, 10_000),
        (CrawlDelayProfile::Literal, 20_000, 0),
        (CrawlDelayProfile::Conservative, 20_000, 0),
    ] {
        let mut p = Politeness::new(Config {
            profile,
            ..Config::default()
        });
        p.set_robots("a", pacing);
        let h = p.get("a").expect("host");
        assert_eq!((h.base_delay, h.window), (base, window), "{profile:?}");
    }
    let mut p = Politeness::new(Config::default());
    p.set_robots(
        "slow",
        RobotsPacing {
            crawl_delay: Some(3600.0),
            request_rate: None,
        },
    );
    assert!(
        matches!(p.check("slow", UnixMillis(0)), Err(Wait::Skipped { reason }) if reason.contains("3600 s") && reason.contains("skipped"))
    );
    let mut p = Politeness::new(Config {
        over_max: OverMax::Cap,
        ..Config::default()
    });
    p.set_robots(
        "slow",
        RobotsPacing {
            crawl_delay: Some(3600.0),
            request_rate: None,
        },
    );
    assert_eq!(p.get("slow").map(|h| h.base_delay), Some(30_000));
}

#[test]
fn window_profile_aligns_to_windows() {
    let mut p = Politeness::new(Config {
        profile: CrawlDelayProfile::Window,
        ..Config::default()
    });
    p.set_robots(
        "b",
        RobotsPacing {
            crawl_delay: Some(5.0),
            request_rate: None,
        },
    );
    p.start("b", UnixMillis(7_000));
    p.finish(
        "b",
        UnixMillis(7_100),
        &Outcome::Status {
            status: 200,
            latency: 100,
            retry_after: None,
        },
    );
    assert_eq!(
        p.get("b").map(|h| h.next_allowed),
        Some(UnixMillis(10_000)),
        "the next 5 s window"
    );
}

#[test]
fn retry_after_backoff_recovery_and_pause() {
    let mut p = Politeness::new(Config {
        pause_after: 3,
        ..Config::default()
    });
    p.start("c", UnixMillis(0));
    p.finish(
        "c",
        UnixMillis(100),
        &Outcome::Status {
            status: 429,
            latency: 100,
            retry_after: Some("120".into()),
        },
    );
    assert!(matches!(
        p.check("c", UnixMillis(100_000)),
        Err(Wait::Until {
            at: UnixMillis(120_100),
            ..
        })
    ));
    assert_eq!(p.get("c").map(|h| h.delay), Some(2_000), "backoff doubles");
    p.start("c", UnixMillis(120_100));
    p.finish("c", UnixMillis(120_200), &Outcome::Failed { latency: 100 });
    p.start("c", UnixMillis(125_000));
    p.finish(
        "c",
        UnixMillis(125_100),
        &Outcome::Status {
            status: 503,
            latency: 100,
            retry_after: None,
        },
    );
    let w = p.why_not_now("c", UnixMillis(125_200)).expect("paused");
    assert!(
        matches!(&w, Hold::Paused { reason, .. } if reason.contains("3 consecutive failures: paused for 600 s")),
        "{w}"
    );
    p.restore(
        "c",
        HostState {
            paused_until: None,
            ..p.get("c").cloned().expect("state")
        },
    );
    let before = p.get("c").map(|h| h.delay).expect("delay");
    p.start("c", UnixMillis(2_000_000));
    p.finish(
        "c",
        UnixMillis(2_000_100),
        &Outcome::Status {
            status: 200,
            latency: 100,
            retry_after: None,
        },
    );
    let after = p.get("c").map(|h| h.delay).expect("delay");
    assert!(
        after < before && after > 1_000,
        "recovers slowly: {before} -> {after}"
    );
    // Retry-After is capped.
    let mut p = Politeness::new(Config::default());
    p.start("d", UnixMillis(0));
    p.finish(
        "d",
        UnixMillis(0),
        &Outcome::Status {
            status: 503,
            latency: 0,
            retry_after: Some("999999".into()),
        },
    );
    assert_eq!(
        p.get("d").and_then(|h| h.retry_after_until),
        Some(UnixMillis(3_600_000))
    );
}

#[test]
fn pacing_from_robots_txt_by_profile() {
    let robots = mannerly_robots::Robots::parse(
        "User-agent: bingbot\nDisallow: /private\n\nUser-agent: slowbot\nCrawl-delay: 2.5\nRequest-rate: 1/10\nDisallow: /tmp\n\nUser-agent: *\nCrawl-delay: 7\n".as_bytes(),
    );
    let p = |agent, profile| RobotsPacing::from_robots(&robots, agent, profile);
    // Bing's own group has no Crawl-delay: the window profile takes `*`'s.
    assert_eq!(
        p("bingbot", CrawlDelayProfile::Window).crawl_delay,
        Some(7.0)
    );
    assert_eq!(p("bingbot", CrawlDelayProfile::Literal).crawl_delay, None);
    let slow = p("slowbot", CrawlDelayProfile::Conservative);
    assert_eq!(
        (slow.crawl_delay, slow.request_rate),
        (Some(2.5), Some((1, 10)))
    );
    assert_eq!(
        p("otherbot", CrawlDelayProfile::Literal).crawl_delay,
        Some(7.0)
    );
}

#[test]
fn the_delay_counts_from_when_the_request_really_went_out() {
    let mut p = Politeness::new(Config::default());
    p.start("late", UnixMillis(0));
    // Released at 0, sent at 400 (the caller was busy), done at 500.
    p.finish(
        "late",
        UnixMillis(500),
        &Outcome::Status {
            status: 200,
            latency: 100,
            retry_after: None,
        },
    );
    assert_eq!(
        p.get("late").map(|h| h.next_allowed),
        Some(UnixMillis(1_400))
    );
}

#[test]
fn retry_after_dates_are_read_against_now() {
    let now = UnixMillis::from_secs(1_800_000_000);
    let date = mannerly_time::fmt_http_date(now.add_millis(90_000));
    let mut p = Politeness::new(Config::default());
    p.start("e", now);
    p.finish(
        "e",
        now,
        &Outcome::Status {
            status: 429,
            latency: 0,
            retry_after: Some(date),
        },
    );
    assert_eq!(
        p.get("e").and_then(|h| h.retry_after_until),
        Some(now.add_millis(90_000))
    );
}
