//! FCrDNS against a DNS server this test runs on 127.0.0.1.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;

use hickory_proto::op::{Message, MessageType, ResponseCode};
use hickory_proto::rr::rdata::{A, AAAA, PTR};
use hickory_proto::rr::{Name, RData, Record, RecordType};
use mannerly_botauth::fcrdns::{verify_ip, HickoryDns, IpRejection, IpVerdict};

/// Answers PTR, A and AAAA from tables; NXDOMAIN otherwise.
async fn dns_server(
    ptr: HashMap<IpAddr, Vec<&'static str>>,
    fwd: HashMap<&'static str, Vec<IpAddr>>,
) -> SocketAddr {
    let sock = tokio::net::UdpSocket::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = sock.local_addr().expect("addr");
    let ptr: HashMap<String, Vec<&str>> = ptr
        .into_iter()
        .map(|(ip, names)| (Name::from(ip).to_ascii().to_ascii_lowercase(), names))
        .collect();
    tokio::spawn(async move {
        let mut buf = vec![0u8; 1500];
        loop {
            let Ok((n, peer)) = sock.recv_from(&mut buf).await else {
                continue;
            };
            let Ok(q) = Message::from_vec(&buf[..n]) else {
                continue;
            };
            let mut resp = Message::new();
            resp.set_id(q.id())
                .set_message_type(MessageType::Response)
                .set_recursion_available(true)
                .set_authoritative(true);
            let mut found = false;
            for query in q.queries() {
                resp.add_query(query.clone());
                let name = query.name().to_ascii().to_ascii_lowercase();
                match query.query_type() {
                    RecordType::PTR => {
                        for target in ptr.get(&name).into_iter().flatten() {
                            let rd = RData::PTR(PTR(Name::from_str(target).expect("name")));
                            resp.add_answer(Record::from_rdata(query.name().clone(), 60, rd));
                            found = true;
                        }
                    }
                    RecordType::A | RecordType::AAAA => {
                        for ip in fwd.get(name.trim_end_matches('.')).into_iter().flatten() {
                            let rd = match (ip, query.query_type()) {
                                (IpAddr::V4(v4), RecordType::A) => RData::A(A(*v4)),
                                (IpAddr::V6(v6), RecordType::AAAA) => RData::AAAA(AAAA(*v6)),
                                _ => continue,
                            };
                            resp.add_answer(Record::from_rdata(query.name().clone(), 60, rd));
                            found = true;
                        }
                        if fwd.contains_key(name.trim_end_matches('.')) {
                            found = true;
                        }
                    }
                    _ => {}
                }
            }
            if !found {
                resp.set_response_code(ResponseCode::NXDomain);
            }
            if let Ok(bytes) = resp.to_vec() {
                let _ = sock.send_to(&bytes, peer).await;
            }
        }
    });
    addr
}

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
