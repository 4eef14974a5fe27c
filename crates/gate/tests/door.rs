//! The gate's door in-process, over a simulated web serving key
//! directories over https: a directory is fetched once for every request
//! waiting on it; one that hangs holds only the requests that name it,
//! and its failure is remembered; one that answers 10 MB is cut off;
//! reverse DNS (a DNS server on 127.0.0.1) answers the requests after the
//! first, which is never held for it; and a million distinct clients, or
//! a flood of addresses to look up, leave the gate's memory bounded.

use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper::HeaderMap;
use mannerly_audit::Catalogue;
use mannerly_botauth::client::{DirectoryClient, DirectoryConfig};
use mannerly_botauth::directory::{signed_directory, DIRECTORY_PATH};
use mannerly_botauth::fcrdns::IpRanges;
use mannerly_botauth::{sign_request, AgentForm, KeyPair, Message, SignConfig, UnixMillis};
use mannerly_gate::decide::MAX_BUCKETS;
use mannerly_gate::keys::Keys;
use mannerly_gate::ranges::Ranges;
use mannerly_gate::rdns::{ReverseDns, MAX_CACHED};
use mannerly_gate::{Asked, Class, Door, Gate, Policy, Settings, Verdict, Visitor};
use mannerly_testweb::{Body, HostSpec, Reply, TestWeb};

fn door(web: &TestWeb) -> Arc<Door> {
    door_with(web, None)
}

fn door_with(web: &TestWeb, rdns: Option<ReverseDns>) -> Arc<Door> {
    let config = DirectoryConfig {
        allow_private: true,
        timeout: Duration::from_secs(2),
        ..DirectoryConfig::default()
    };
    let ca = reqwest::Certificate::from_der(&web.ca_der()).expect("ca");
    let c = DirectoryClient::client_builder(&config)
        .dns_resolver(web.resolver())
        .add_root_certificate(ca)
        .build()
        .expect("client");
    let policy = Policy::parse(
        "[[rule]]\nwho = \"spoofer\"\ndo = \"deny\"\n",
        std::path::Path::new("p.toml"),
    )
    .expect("policy");
    Arc::new(Door {
        catalogue: Catalogue::builtin(),
        gate: Mutex::new(Gate::new(policy)),
        keys: Keys::new(None, Some(DirectoryClient::with_client(c, config))),
        ranges: Ranges::new(Default::default()),
        rdns,
        settings: Settings {
            trusted: IpRanges::from_cidrs(&["127.0.0.0/8"]).expect("cidr"),
            allow_http: false,
            nginx: false,
        },
        tally: Default::default(),
    })
}

/// The forward-auth headers of a GET of https://site.example/page by
/// `ua`, signed by `pair` naming the directory `agent` when given.
fn request(ua: &str, signed: Option<(&KeyPair, &str)>) -> HeaderMap {
    request_from(ua, signed, "192.0.2.7")
}

fn request_from(ua: &str, signed: Option<(&KeyPair, &str)>, client: &str) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert("user-agent", ua.parse().expect("ua"));
    h.insert("x-forwarded-proto", "https".parse().expect("v"));
    h.insert("x-forwarded-host", "site.example".parse().expect("v"));
    h.insert("x-forwarded-uri", "/page".parse().expect("v"));
    h.insert("x-forwarded-for", client.parse().expect("v"));
    if let Some((pair, agent)) = signed {
        let msg = Message::new("GET", "https://site.example/page");
        let config = SignConfig::new(UnixMillis::now(), AgentForm::dictionary(agent));
        for (k, v) in sign_request(pair, &msg, &config).expect("sign") {
            h.insert(
                hyper::header::HeaderName::from_bytes(k.as_bytes()).expect("name"),
                v.parse().expect("value"),
            );
        }
    }
    h
}

async fn decide(door: &Door, h: &HeaderMap) -> (Class, Verdict) {
    let d = door
        .decide("GET", "/", h, IpAddr::from([127, 0, 0, 1]))
        .await;
    (d.identity.class, d.verdict)
}

async fn web(pair: &KeyPair) -> TestWeb {
    let good = {
        let (_, body) = signed_directory(
            std::slice::from_ref(pair),
            "https://good.test",
            UnixMillis::now(),
            300,
        )
        .expect("directory");
        Reply::text(body)
    };
    TestWeb::with_hosts([
        (
            "good.test",
            HostSpec::default().route(DIRECTORY_PATH, vec![good]),
        ),
        (
            "hang.test",
            HostSpec::default().route(DIRECTORY_PATH, vec![Reply::hang()]),
        ),
        (
            "big.test",
            HostSpec::default().route(
                DIRECTORY_PATH,
                vec![Reply::body(Body::Huge {
                    bytes: 10 << 20,
                    line: "{\"keys\": [] }\n".into(),
                })],
            ),
        ),
    ])
    .await
    .expect("web")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_directory_holds_only_its_own_requests_once() {
    let pair = KeyPair::generate();
    let web = web(&pair).await;
    let door = door(&web);
    let hang = web.https_url("hang.test", DIRECTORY_PATH).expect("tls");
    let good = web.https_url("good.test", DIRECTORY_PATH).expect("tls");

    let waiting = {
        let (door, h) = (door.clone(), request("HangBot/1.0", Some((&pair, &hang))));
        tokio::spawn(async move { decide(&door, &h).await })
    };
    let also_waiting = {
        let (door, h) = (door.clone(), request("HangBot/1.0", Some((&pair, &hang))));
        tokio::spawn(async move { decide(&door, &h).await })
    };
    // Meanwhile everyone else is answered: browsers, unsigned bots and a
    // crawler whose directory answers.
    for _ in 0..50 {
        let h = request(
            "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
            None,
        );
        assert_eq!(decide(&door, &h).await, (Class::Browser, Verdict::Allow));
        assert_eq!(
            decide(&door, &request("curl/8.5.0", None)).await,
            (Class::Bot, Verdict::Allow)
        );
    }
    let signed = request("GoodBot/1.0", Some((&pair, &good)));
    assert_eq!(
        decide(&door, &signed).await,
        (Class::Verified, Verdict::Allow)
    );
    assert!(
        !waiting.is_finished(),
        "the hanging directory is still being waited for"
    );
    assert_eq!(
        web.count("hang.test", DIRECTORY_PATH),
        1,
        "one fetch for both requests"
    );

    // Cut off by the client's timeout: unverified, so a bot, not a spoofer.
    assert_eq!(waiting.await.expect("join"), (Class::Bot, Verdict::Allow));
    assert_eq!(
        also_waiting.await.expect("join"),
        (Class::Bot, Verdict::Allow)
    );
    // The failure is remembered: the next request does not wait again.
    let again = tokio::time::timeout(
        Duration::from_millis(1500),
        decide(&door, &request("HangBot/1.0", Some((&pair, &hang)))),
    )
    .await
    .expect("answered without another fetch");
    assert_eq!(again, (Class::Bot, Verdict::Allow));
    assert_eq!(web.count("hang.test", DIRECTORY_PATH), 1);
    assert_eq!(web.count("good.test", DIRECTORY_PATH), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ten_megabyte_directory_is_cut_off() {
    let pair = KeyPair::generate();
    let web = web(&pair).await;
    let door = door(&web);
    let big = web.https_url("big.test", DIRECTORY_PATH).expect("tls");
    let h = request("BigBot/1.0", Some((&pair, &big)));
    assert_eq!(
        decide(&door, &h).await,
        (Class::Bot, Verdict::Allow),
        "unverified, not a spoofer"
    );
    // A key the directory does not serve, and a bad signature, still differ:
    let other = KeyPair::generate();
    let good = web.https_url("good.test", DIRECTORY_PATH).expect("tls");
    let h = request("GoodBot/1.0", Some((&other, &good)));
    assert_eq!(
        decide(&door, &h).await.0,
        Class::Bot,
        "an unknown key is unverified"
    );
    let mut h = request("GoodBot/1.0", Some((&pair, &good)));
    h.insert("x-forwarded-uri", "/elsewhere".parse().expect("v"));
    h.insert("x-forwarded-host", "other.example".parse().expect("v"));
    assert_eq!(
        decide(&door, &h).await,
        (Class::Spoofer, Verdict::Deny),
        "signed for another authority"
    );
}

#[test]
fn a_million_distinct_clients_keep_the_buckets_bounded() {
    let policy = Policy::parse(
        "[[rule]]\nwho = \"bot\"\ndo = \"slow\"\nrate = 1.0\n",
        std::path::Path::new("p.toml"),
    )
    .expect("policy");
    let mut gate = Gate::new(policy);
    let now = UnixMillis(1_000_000);
    for i in 0..1_000_000u32 {
        let identity = Visitor {
            class: Class::Bot,
            token: Some(format!("Bot{}", i % 1000)),
            kind: Some(mannerly_audit::BotKind::Crawler),
        };
        let asked = Asked {
            target: "/",
            client: Some(IpAddr::from(i.to_be_bytes())),
            user_agent: "",
        };
        assert_eq!(gate.decide(identity, asked, now).verdict, Verdict::Allow);
        assert!(gate.buckets() <= MAX_BUCKETS);
    }
}

const GOOGLEBOT: &str = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";

/// Decides until the class is `want` (the background lookup has
/// answered), for at most 10 s.
async fn until_class(door: &Door, h: &HeaderMap, want: Class) -> (Class, Verdict) {
    let start = std::time::Instant::now();
    loop {
        let got = decide(door, h).await;
        if got.0 == want || start.elapsed() > Duration::from_secs(10) {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reverse_dns_answers_the_requests_after_the_first_and_stays_bounded() {
    use std::collections::HashMap;
    let good: IpAddr = "66.249.66.1".parse().expect("ip");
    let bad: IpAddr = "203.0.113.9".parse().expect("ip");
    let dns = mannerly_testsupport::dns_server(
        HashMap::from([
            (good, vec!["crawl-66-249-66-1.googlebot.com."]),
            (bad, vec!["crawl.evil.example."]),
        ]),
        HashMap::from([
            ("crawl-66-249-66-1.googlebot.com", vec![good]),
            ("crawl.evil.example", vec![bad]),
        ]),
    )
    .await;
    let web = TestWeb::with_hosts([]).await.expect("web");
    let rdns = ReverseDns::start(mannerly_botauth::fcrdns::HickoryDns::with_server(dns));
    let door = door_with(&web, Some(rdns));
    let real = request_from(GOOGLEBOT, None, "66.249.66.1");
    let fake = request_from(GOOGLEBOT, None, "203.0.113.9");
    // The first request of each is judged at once, without DNS.
    assert_eq!(decide(&door, &real).await, (Class::Bot, Verdict::Allow));
    assert_eq!(decide(&door, &fake).await, (Class::Bot, Verdict::Allow));
    // The answers come in the background, for the requests after.
    assert_eq!(
        until_class(&door, &real, Class::Verified).await,
        (Class::Verified, Verdict::Allow)
    );
    assert_eq!(
        until_class(&door, &fake, Class::Spoofer).await,
        (Class::Spoofer, Verdict::Deny)
    );
    // A flood of addresses: each is judged at once, and the cache stays bounded.
    let rdns = door.rdns.as_ref().expect("rdns");
    let domains = vec!["googlebot.com".to_owned()];
    for i in 0..(MAX_CACHED as u32 + 50_000) {
        let ip = IpAddr::from((0x0a00_0000 + i).to_be_bytes());
        assert_eq!(rdns.known(0, ip, &domains), None);
    }
    assert!(rdns.cached() <= MAX_CACHED, "{} cached", rdns.cached());
}
