//! A web that changes: validators and 304s (or ignored), a change a test
//! makes, and sitemaps whose lastmod follows the pages.

use mannerly_testweb::{HostSpec, SitemapLastmod, TestWeb, Validators, WebConfig};

async fn web(spec: HostSpec) -> TestWeb {
    let mut config = WebConfig::default();
    config.hosts.insert("a.test".into(), spec);
    TestWeb::start(config).await.expect("testweb")
}

fn client(web: &TestWeb) -> reqwest::Client {
    reqwest::Client::builder()
        .dns_resolver(web.resolver())
        .build()
        .expect("client")
}

#[tokio::test]
async fn validators_changes_and_schedules() {
    let w = web(HostSpec {
        validators: Validators::Both,
        sitemap: SitemapLastmod::Honest,
        ..HostSpec::default().pages(3, 1)
    })
    .await;
    let c = client(&w);
    let url = w.url("a.test", "/p1.html");
    let first = c.get(&url).send().await.expect("get");
    let etag = first.headers()["etag"].to_str().expect("etag").to_owned();
    let modified = first.headers()["last-modified"]
        .to_str()
        .expect("lm")
        .to_owned();
    let again = |h: &'static str, v: String| c.get(&url).header(h, v).send();
    assert_eq!(
        again("If-None-Match", etag.clone())
            .await
            .expect("get")
            .status(),
        304
    );
    assert_eq!(
        again("If-Modified-Since", modified.clone())
            .await
            .expect("get")
            .status(),
        304
    );
    let sitemap = c
        .get(w.url("a.test", "/sitemap.xml"))
        .send()
        .await
        .expect("get")
        .text()
        .await
        .expect("body");
    w.change("a.test", "/p1.html");
    let changed = again("If-None-Match", etag).await.expect("get");
    assert_eq!(changed.status(), 200);
    assert!(changed
        .text()
        .await
        .expect("body")
        .contains("<!-- version 1 -->"));
    assert_eq!(
        again("If-Modified-Since", modified)
            .await
            .expect("get")
            .status(),
        200
    );
    // The honest sitemap's lastmod for the page moved with it.
    let after = c
        .get(w.url("a.test", "/sitemap.xml"))
        .send()
        .await
        .expect("get")
        .text()
        .await
        .expect("body");
    assert_ne!(sitemap, after);
    assert_eq!(sitemap.lines().count(), after.lines().count());
}

#[tokio::test]
async fn ignored_validators_get_the_whole_page() {
    // (The schedule's arithmetic is tested in `revisit.rs`: here no clock
    // is waited on.)
    let w = web(HostSpec {
        validators: Validators::Ignored,
        ..HostSpec::default().pages(2, 1)
    })
    .await;
    let c = client(&w);
    let r = c
        .get(w.url("a.test", "/p0.html"))
        .header("If-None-Match", "*")
        .send()
        .await
        .expect("get");
    assert_eq!(r.status(), 200, "validators ignored");
    assert!(r.headers().contains_key("etag"), "but still sent");
    let body = r.text().await.expect("body");
    assert!(body.contains("<!-- version 0 -->"), "{body}");
}
