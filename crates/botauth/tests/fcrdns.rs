//! FCrDNS against a DNS server this test runs on 127.0.0.1.

use std::collections::HashMap;
use std::net::IpAddr;

use mannerly_botauth::fcrdns::{verify_ip, HickoryDns, IpRejection, IpVerdict};
use mannerly_testsupport::dns_server;

fn ip(s: &str) -> IpAddr {
    s.parse().expect("ip")
}

#[tokio::test]
async fn fcrdns_verifies_real_crawlers_and_catches_spoofs() {
    let real = ip("66.249.66.1");
    let spoofer = ip("203.0.113.7");
    let suffix1 = ip("203.0.113.8");
    let suffix2 = ip("203.0.113.9");
    let v6 = ip("2001:4860:4801:10::1");
    let no_ptr = ip("198.51.100.1");
    let ptr = HashMap::from([
        (real, vec!["crawl-66-249-66-1.googlebot.com."]),
        // The spoofer controls its own PTR and claims a Google name ...
        (spoofer, vec!["crawl-66-249-66-1.googlebot.com."]),
        (suffix1, vec!["crawl.evilgooglebot.com."]),
        (suffix2, vec!["googlebot.com.evil.net."]),
        (v6, vec!["crawl-v6.googlebot.com."]),
    ]);
    let fwd = HashMap::from([
        // ... but the name resolves forward to Google's address only.
        ("crawl-66-249-66-1.googlebot.com", vec![real]),
        ("crawl.evilgooglebot.com", vec![suffix1]),
        ("googlebot.com.evil.net", vec![suffix2]),
        ("crawl-v6.googlebot.com", vec![v6]),
    ]);
    let server = dns_server(ptr, fwd).await;
    let dns = HickoryDns::with_server(server);
    let domains = vec!["googlebot.com".to_owned(), "google.com".to_owned()];

    assert_eq!(
        verify_ip(real, &domains, &dns).await,
        IpVerdict::Verified {
            name: "crawl-66-249-66-1.googlebot.com".into()
        }
    );
    assert_eq!(
        verify_ip(v6, &domains, &dns).await,
        IpVerdict::Verified {
            name: "crawl-v6.googlebot.com".into()
        }
    );
    let reason = |v: IpVerdict| match v {
        IpVerdict::NotVerified { reason } => reason.to_string(),
        other => panic!("{other:?}"),
    };
    assert!(reason(verify_ip(spoofer, &domains, &dns).await).contains("a spoofed PTR record"));
    assert!(reason(verify_ip(suffix1, &domains, &dns).await)
        .contains("not under googlebot.com or google.com"));
    assert!(reason(verify_ip(suffix2, &domains, &dns).await).contains("not under"));
    let r = reason(verify_ip(no_ptr, &domains, &dns).await);
    assert!(r.contains("reverse lookup") || r.contains("no PTR"), "{r}");
    // The typed reasons: a spoofed PTR is an answer, not a DNS failure.
    match verify_ip(spoofer, &domains, &dns).await {
        IpVerdict::NotVerified {
            reason: reason @ IpRejection::Unconfirmed { .. },
        } => assert!(!reason.is_transient(), "{reason}"),
        other => panic!("{other:?}"),
    }
}
