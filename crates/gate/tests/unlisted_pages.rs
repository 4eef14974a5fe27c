//! At the door, a crawler no catalogue lists, whose User-Agent names its
//! page, is judged by the ranges that page links once they are loaded in
//! the background: until then without them (never held), then inside
//! verified, outside not.

use std::time::Duration;

use mannerly_botauth::identity_check::CheckOptions;
use mannerly_gate::ranges::Ranges;
use mannerly_testweb::{HostSpec, Reply, TestWeb, WebConfig};

const UA: &str = "Mozilla/5.0 (compatible; NewBot/1.0; +http://op.test/bot)";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unlisted_crawler_is_judged_by_the_ranges_its_page_links() {
    let now = mannerly_botauth::UnixMillis::now().to_rfc3339_millis();
    let jafar =
        format!(r#"{{"creationTime":"{now}","prefixes":[{{"ipv4Prefix":"203.0.113.0/24"}}]}}"#);
    let spec = HostSpec::default()
        .route(
            "/bot",
            vec![Reply::text("<p>NewBot</p>")
                .header("Content-Type", "text/html")
                .header("Link", "</ranges.json>; rel=\"client-ranges\"")],
        )
        .route(
            "/ranges.json",
            vec![Reply::text(jafar).header("Content-Type", "application/jafar+json")],
        );
    let mut config = WebConfig::default();
    config.hosts.insert("op.test".into(), spec);
    let web = TestWeb::start(config).await.expect("testweb");
    let cache = tempfile::tempdir().expect("tmp");
    let ranges = Ranges::following_pages(
        Default::default(),
        Some(CheckOptions {
            allow_http: true,
            proxy: Some(format!("http://127.0.0.1:{}", web.port())),
            cache: Some(cache.path().to_owned()),
            ..CheckOptions::default()
        }),
    );
    let inside = "203.0.113.9".parse().expect("ip");
    let outside = "198.51.100.9".parse().expect("ip");
    assert_eq!(
        ranges.contains("NewBot", None, UA, inside),
        None,
        "not loaded yet"
    );
    let mut loaded = None;
    for _ in 0..500 {
        loaded = ranges.contains("NewBot", None, UA, inside);
        if loaded.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(loaded, Some(true));
    assert_eq!(ranges.contains("NewBot", None, UA, outside), Some(false));
    // One fetch of the page and one of the file, whatever the requests.
    assert_eq!(web.requests().len(), 2, "{:?}", web.requests());
    // A User-Agent naming no page is judged without ranges.
    assert_eq!(ranges.contains("NewBot", None, "NewBot/1.0", inside), None);
}
