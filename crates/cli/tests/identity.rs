//! Web Bot Auth to the 2026 texts through the binary: `verify --at` and
//! `--max-validity`, `card new` and `card check` (files, and cards served
//! over https with each fault), `directory check` against directories with
//! each fault, `verify --card`, and a crawl that takes its identity from
//! its card.

mod common;

use std::path::{Path, PathBuf};

use common::mannerly;
use mannerly_botauth::directory::{signed_directory, DIRECTORY_PATH};
use mannerly_botauth::proof::content_digest;
use mannerly_botauth::{KeyPair, UnixMillis};
use mannerly_testweb::{HostSpec, Reply, TestWeb};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mannerly-identity-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("dir");
    d
}

fn text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn now_secs() -> u64 {
    UnixMillis::now().as_secs()
}

/// A key pair written as `mannerly keys generate` writes it.
fn keys(dir: &Path) -> (PathBuf, PathBuf) {
    let o = mannerly(
        &["keys", "generate", "--out", dir.to_str().expect("dir")],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    (dir.join("private.pem"), dir.join("public.jwk.json"))
}

#[test]
fn verify_replays_a_logged_request_at_its_time() {
    let d = tmp("at");
    let (key, jwk) = keys(&d);
    let dir = "https://crawler.example/.well-known/http-message-signatures-directory";
    let o = mannerly(
        &[
            "sign",
            "--key",
            key.to_str().expect("k"),
            "--signature-agent",
            dir,
            "--validity",
            "60",
            "https://example.com/a",
        ],
        b"",
    );
    let headers = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        headers.contains(&format!("Signature-Agent: sig1=\"{dir}\"")),
        "{headers}"
    );
    assert!(
        headers.contains("\"signature-agent\";key=\"sig1\""),
        "{headers}"
    );
    let request = format!("GET /a HTTP/1.1\nHost: example.com\n{headers}\n");
    let jwk = jwk.to_str().expect("j");
    let created = now_secs();
    let at = |t: String, extra: &[&str]| {
        let mut args = vec!["verify", "-", "--key", jwk, "--at", &t];
        args.extend_from_slice(extra);
        mannerly(&args, request.as_bytes())
    };
    // Within its minute; then after it; then before it was made.
    let o = at((created + 30).to_string(), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = at((created + 600).to_string(), &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).starts_with("invalid: expired at"), "{}", text(&o));
    let o = at((created - 600).to_string(), &[]);
    assert!(text(&o).contains("in the future"), "{}", text(&o));
    // RFC 3339 works as well as unix seconds.
    let o = at("2020-01-01T00:00:00Z".into(), &[]);
    assert!(text(&o).contains("in the future"), "{}", text(&o));
    // A cap shorter than the signature's 60 s.
    let o = at((created + 30).to_string(), &["--max-validity", "30"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).contains("expires 60 s after created, more than 30"),
        "{}",
        text(&o)
    );
    // Bad input: exit 2 with the flag named.
    let o = at("yesterday".into(), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("--at \"yesterday\""), "{}", text(&o));
    let o = at((created + 30).to_string(), &["--max-validity", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    // Over plain http: refused unless allowed (§6.1).
    let o = mannerly(
        &["verify", "-", "--key", jwk, "--scheme", "http"],
        request.as_bytes(),
    );
    assert!(text(&o).contains("plain http"), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn cards_are_written_and_checked_as_files() {
    let d = tmp("cards");
    let (key, _) = keys(&d);
    let card = d.join("card.json");
    let id = "https://crawler.example/bot";
    let o = mannerly(
        &[
            "card",
            "new",
            "--client-id",
            id,
            "--name",
            "Example Bot",
            "--contact",
            "mailto:bots@crawler.example",
            "--jwks-uri",
            "https://crawler.example/.well-known/http-message-signatures-directory",
            "--product-token",
            "ExampleBot",
            "--user-agent",
            "ExampleBot/1.0 (+https://crawler.example/bot)",
            "--robots-compliant",
            "--trigger",
            "crawler",
            "--purpose",
            "search",
            "--ips-uri",
            "https://crawler.example/ips.json",
            "--out",
            card.to_str().expect("c"),
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let written: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&card).expect("card")).expect("json");
    assert_eq!(
        written["web_bot_auth"]["rfc9309-product-token"],
        "ExampleBot"
    );
    assert_eq!(written["web_bot_auth"]["rfc9309-compliance"], true);
    let c = card.to_str().expect("c");
    let o = mannerly(&["card", "check", c, "--url", id], b"");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = mannerly(
        &["card", "check", c, "--url", "https://crawler.example/other"],
        b"",
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).contains("is not the URL the card came from"),
        "{}",
        text(&o)
    );
    // Inline keys from a private key; both jwks and jwks_uri refused by `new`.
    let o = mannerly(
        &[
            "card",
            "new",
            "--client-id",
            id,
            "--key",
            key.to_str().expect("k"),
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(!text(&o).contains("\"d\""), "no private part: {}", text(&o));
    // `new` refuses a card `check` would, saying every problem at once.
    let o = mannerly(
        &[
            "card",
            "new",
            "--client-id",
            id,
            "--contact",
            "bot@crawler.example",
            "--product-token",
            "Crawler Bot",
            "--ips-uri",
            "http://crawler.example/ips.json",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    for says in [
        "write \"mailto:bot@crawler.example\"",
        "not a product token",
        "ips_uri",
    ] {
        assert!(text(&o).contains(says), "{says}: {}", text(&o));
    }
    // Faults in hand-written cards, each with its reason.
    let faults = [
        (
            r#"{"client_id":"https://crawler.example/bot","jwks_uri":"https://a.example/k","jwks":{"keys":[]}}"#,
            "both jwks and jwks_uri",
        ),
        (
            r#"{"client_id":"https://crawler.example/bot","jwks_uri":"http://a.example/k"}"#,
            "jwks_uri \"http://a.example/k\" is not https",
        ),
        (
            r#"{"client_id":"https://crawler.example/bot","web_bot_auth":{"ips_uri":"ftp://a.example/ips"}}"#,
            "ips_uri",
        ),
        (
            r#"{"client_id":"https://crawler.example/bot","web_bot_auth":{"trigger":"sometimes"}}"#,
            "trigger",
        ),
        (r#"{}"#, "no parameter at all"),
        (
            r#"{"x":1,"name":"Bot"}"#,
            "no parameter the draft defines (\"name\", \"x\" unknown, so ignored)",
        ),
        (r#"[1,2]"#, "not a JSON object"),
        (r#"{"client_id":7}"#, "wrong type"),
        (r#"{"client_name":"No Id"}"#, "no client_id"),
    ];
    for (body, why) in faults {
        let f = d.join("fault.json");
        std::fs::write(&f, body).expect("write");
        let o = mannerly(&["card", "check", f.to_str().expect("f"), "--url", id], b"");
        assert_eq!(o.status.code(), Some(1), "{body}: {}", text(&o));
        assert!(text(&o).contains(why), "{body}: {}", text(&o));
    }
    // Unknown members are ignored.
    let f = d.join("extra.json");
    std::fs::write(&f, r#"{"client_id":"https://crawler.example/bot","software_id":"x","web_bot_auth":{"future-thing":1}}"#).expect("write");
    let o = mannerly(&["card", "check", f.to_str().expect("f"), "--url", id], b"");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = mannerly(
        &["card", "check", d.join("missing.json").to_str().expect("m")],
        b"",
    );
    assert_eq!(o.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_registry_drafts_example_cards_are_valid() {
    // The two examples of draft-meunier-webbotauth-registry (§3, §4.1).
    let d = tmp("examples");
    let examples = [
        r#"{"client_id":"https://example.com/bot","client_name":"Example Bot","client_uri":"https://example.com/bot/about.html","logo_uri":"https://example.com/logo.png","contacts":["mailto:bot-support@example.com"],"jwks_uri":"https://example.com/.well-known/http-message-signatures-directory","web_bot_auth":{"expected-user-agent":"Mozilla/5.0 ExampleBot","rfc9309-product-token":"ExampleBot","rfc9309-compliance":false,"trigger":"fetcher","purpose":"search","targeted-content":"Cat pictures","rate-control":"429","rate-expectation":"avg=10rps;max=100rps","known-urls":["/","/robots.txt","*.png"],"ips_uri":"https://example.com/ips.json"}}"#,
        r#"{"client_id":"https://example.com/bot","client_name":"Example Bot","jwks_uri":"https://example.com/.well-known/http-message-signatures-directory","web_bot_auth":{"trigger":"fetcher","purpose":"search"}}"#,
    ];
    for body in examples {
        let f = d.join("card.json");
        std::fs::write(&f, body).expect("write");
        let o = mannerly(
            &[
                "card",
                "check",
                f.to_str().expect("f"),
                "--url",
                "https://example.com/bot",
                "--json",
            ],
            b"",
        );
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        assert_eq!(v["valid"], true);
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// testweb over https, and the flags that reach it: its CA and its
/// names pinned to loopback.
struct Https {
    web: TestWeb,
    _rt: tokio::runtime::Runtime,
    ca: PathBuf,
    dir: PathBuf,
}

impl Https {
    fn new(name: &str) -> Https {
        let rt = tokio::runtime::Runtime::new().expect("runtime");
        let web = rt.block_on(TestWeb::with_hosts([])).expect("web");
        let dir = tmp(name);
        let ca = dir.join("ca.der");
        std::fs::write(&ca, web.ca_der()).expect("ca");
        Https {
            web,
            _rt: rt,
            ca,
            dir,
        }
    }

    fn url(&self, host: &str, path: &str) -> String {
        self.web.https_url(host, path).expect("tls")
    }

    /// Runs mannerly with `--ca` and `--resolve` for `host` added.
    fn run(&self, args: &[&str], host: &str) -> std::process::Output {
        let mut a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        a.extend(["--ca".into(), self.ca.to_str().expect("ca").into()]);
        a.extend(["--resolve".into(), format!("{host}:127.0.0.1")]);
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        mannerly(&refs, b"")
    }
}

fn with_headers(mut r: Reply, headers: &[(String, String)]) -> Reply {
    for (k, v) in headers {
        r = r.header(k.clone(), v.clone());
    }
    r
}

#[test]
fn directory_check_names_each_fault() {
    let h = Https::new("dircheck");
    let pair = KeyPair::generate();
    let now = UnixMillis::now();
    // A good directory: signed, its media type, cache headers.
    let origin = h.url("good.test", "");
    let (resp, body) =
        signed_directory(std::slice::from_ref(&pair), &origin, now, 86_400).expect("dir");
    let good = with_headers(Reply::text(body.clone()), &resp.headers);
    let unsigned_headers: Vec<(String, String)> = resp
        .headers
        .iter()
        .filter(|(k, _)| !k.starts_with("Signature"))
        .cloned()
        .collect();
    let mut wrong_kid = pair.public_jwk();
    wrong_kid.kid = Some("key-2026".into());
    let mut no_alg = pair.public_jwk();
    no_alg.alg = None;
    let doc = |k: &mannerly_botauth::Jwk| serde_json::json!({ "keys": [k] }).to_string();
    let cases: Vec<(&str, Reply, &str)> = vec![
        ("good.test", good.clone(), ""),
        (
            "moved.test",
            Reply::redirect(301, "https://elsewhere.test/keys"),
            "redirect",
        ),
        ("down.test", Reply::status(500), "HTTP 500"),
        (
            "type.test",
            with_headers(Reply::text(body.clone()), &resp.headers[1..]),
            "media-type",
        ),
        (
            "kid.test",
            with_headers(Reply::text(doc(&wrong_kid)), &unsigned_headers[..1]),
            "kid \"key-2026\" is not the key's RFC 7638 thumbprint",
        ),
        (
            "alg.test",
            with_headers(Reply::text(doc(&no_alg)), &unsigned_headers),
            "no alg",
        ),
        (
            "unsigned.test",
            with_headers(Reply::text(body.clone()), &unsigned_headers),
            "SHOULD signature: unsigned",
        ),
        (
            "tampered.test",
            with_headers(
                Reply::text(body.replace("\"keys\"", "\"keys\" ")),
                &resp.headers,
            ),
            "Content-Digest does not match",
        ),
        (
            "nocache.test",
            with_headers(Reply::text(body.clone()), &resp.headers[..1]),
            "SHOULD cache",
        ),
        (
            "private.test",
            with_headers(Reply::text(doc(&pair.private_jwk())), &unsigned_headers),
            "publishes its private part",
        ),
        (
            "json.test",
            with_headers(Reply::text("<html>"), &unsigned_headers),
            "not a JWK Set",
        ),
    ];
    for (host, reply, _) in &cases {
        h.web.set_host(
            host,
            HostSpec::default().route(DIRECTORY_PATH, vec![reply.clone()]),
        );
    }
    // The good one is signed for good.test's authority only.
    for (host, _, why) in &cases {
        let o = h.run(&["directory", "check", &h.url(host, DIRECTORY_PATH)], host);
        let out = text(&o);
        if why.is_empty() {
            assert_eq!(o.status.code(), Some(0), "{host}: {out}");
            assert!(out.starts_with("ok:"), "{out}");
        } else {
            assert_eq!(o.status.code(), Some(1), "{host}: {out}");
            assert!(out.contains(why), "{host}: wanted {why:?} in {out}");
        }
    }
    // Served under another authority, the proof fails.
    let o = h.run(
        &[
            "directory",
            "check",
            &h.url("good.test", DIRECTORY_PATH)
                .replace("good.test", "copy.test"),
        ],
        "copy.test",
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    // At another path: the path is named, kid is then the operator's.
    h.web.set_host(
        "path.test",
        HostSpec::default().route("/keys.json", vec![good]),
    );
    let o = h.run(
        &[
            "directory",
            "check",
            &h.url("path.test", "/keys.json"),
            "--json",
        ],
        "path.test",
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let topics: Vec<&str> = v["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .filter_map(|p| p["topic"].as_str())
        .collect();
    assert!(topics.contains(&"path"), "{v}");
    // Not https, unreachable: errors.
    assert_eq!(
        mannerly(&["directory", "check", "http://good.test/"], b"")
            .status
            .code(),
        Some(2)
    );
    let o = mannerly(&["directory", "check", "https://nowhere.invalid/x"], b"");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&h.dir);
}

#[test]
fn card_check_fetches_as_a_client_must() {
    let h = Https::new("cardfetch");
    let pair = KeyPair::generate();
    let id = h.url("bot.test", "/card");
    let card = serde_json::json!({
        "client_id": id,
        "client_name": "Bot",
        "jwks": { "keys": [pair.public_jwk()] },
        "web_bot_auth": { "rfc9309-product-token": "Bot", "trigger": "crawler" }
    })
    .to_string();
    let signed = mannerly_botauth::proof::sign_body(
        std::slice::from_ref(&pair),
        &id,
        vec![("Content-Type".into(), "application/json".into())],
        card.as_bytes(),
        (UnixMillis::now(), 3600),
        "web-bot-auth-card",
    )
    .expect("sign");
    let stranger = KeyPair::generate();
    let by_stranger = mannerly_botauth::proof::sign_body(
        std::slice::from_ref(&stranger),
        &id,
        Vec::new(),
        card.as_bytes(),
        (UnixMillis::now(), 3600),
        "web-bot-auth-card",
    )
    .expect("sign");
    let mut bad_digest = signed.headers.clone();
    for (k, v) in bad_digest.iter_mut() {
        if k == "Content-Digest" {
            *v = content_digest(b"another body");
        }
    }
    let cases: Vec<(Reply, i32, &str)> = vec![
        (
            with_headers(Reply::text(card.clone()), &signed.headers),
            0,
            "signature verified",
        ),
        (Reply::text(card.clone()), 0, "RECOMMENDED to be signed"),
        (
            Reply::redirect(302, "https://bot.test/elsewhere"),
            1,
            "redirects",
        ),
        (Reply::status(404), 1, "HTTP 404"),
        (
            with_headers(Reply::text(card.clone()), &bad_digest),
            1,
            "Content-Digest does not match",
        ),
        (
            with_headers(Reply::text(card.clone()), &by_stranger.headers),
            1,
            "by no key the card",
        ),
        (
            Reply::text(card.replace("/card", "/other")),
            1,
            "is not the URL the card came from",
        ),
    ];
    for (reply, code, why) in cases {
        h.web
            .set_host("bot.test", HostSpec::default().route("/card", vec![reply]));
        let o = h.run(&["card", "check", &id], "bot.test");
        let out = text(&o);
        assert_eq!(o.status.code(), Some(code), "{why}: {out}");
        assert!(out.contains(why), "wanted {why:?}: {out}");
    }
    let _ = std::fs::remove_dir_all(&h.dir);
}

#[test]
fn verify_cross_checks_the_card() {
    let d = tmp("cross");
    let (key, jwk) = keys(&d);
    let card = d.join("card.json");
    let o = mannerly(
        &[
            "card",
            "new",
            "--client-id",
            "https://crawler.example/bot",
            "--product-token",
            "ExampleBot",
            "--user-agent",
            "ExampleBot/1.0*",
            "--jwks-uri",
            "https://crawler.example/jwks.json",
            "--out",
            card.to_str().expect("c"),
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let robots = d.join("robots.txt");
    std::fs::write(
        &robots,
        "User-agent: ExampleBot\nDisallow: /private\n\nUser-agent: *\nDisallow: /\n",
    )
    .expect("robots");
    let signed = |path: &str, ua: &str| {
        let o = mannerly(
            &[
                "sign",
                "--key",
                key.to_str().expect("k"),
                "--signature-agent",
                "https://crawler.example/jwks.json",
                &format!("https://example.com{path}"),
            ],
            b"",
        );
        format!(
            "GET {path} HTTP/1.1\nHost: example.com\nUser-Agent: {ua}\n{}\n",
            String::from_utf8_lossy(&o.stdout)
        )
    };
    let check = |req: String| {
        mannerly(
            &[
                "verify",
                "-",
                "--key",
                jwk.to_str().expect("j"),
                "--card",
                card.to_str().expect("c"),
                "--robots",
                robots.to_str().expect("r"),
            ],
            req.as_bytes(),
        )
    };
    let o = check(signed(
        "/public",
        "ExampleBot/1.0 (+https://crawler.example/bot)",
    ));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("robots.txt allows"), "{}", text(&o));
    let o = check(signed(
        "/private/x",
        "ExampleBot/1.0 (+https://crawler.example/bot)",
    ));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o)
            .contains("robots.txt disallows https://example.com/private/x to ExampleBot (line 2)"),
        "{}",
        text(&o)
    );
    let o = check(signed("/public", "Mozilla/5.0 (Windows NT 10.0)"));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).contains("is not one the card expects"),
        "{}",
        text(&o)
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_crawl_takes_its_identity_from_its_card() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let web = rt.block_on(TestWeb::with_hosts([])).expect("web");
    web.set_host(
        "site.test",
        HostSpec::default().route("/", vec![Reply::text("<html>hello</html>")]),
    );
    let d = tmp("crawlcard");
    let (key, public) = keys(&d);
    let jwks = "https://crawler.example/.well-known/http-message-signatures-directory";
    let card = d.join("card.json");
    let ua = "CardBot/2.0 (+https://crawler.example/bot)";
    let o = mannerly(
        &[
            "card",
            "new",
            "--client-id",
            "https://crawler.example/bot",
            "--product-token",
            "CardBot",
            "--user-agent",
            ua,
            "--jwks-uri",
            jwks,
            "--out",
            card.to_str().expect("c"),
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = d.join("crawl");
    let o = mannerly(
        &[
            "crawl",
            "http://site.test/",
            "--out",
            out.to_str().expect("o"),
            "--proxy",
            &format!("http://127.0.0.1:{}", web.port()),
            "--card",
            card.to_str().expect("c"),
            "--sign-key",
            key.to_str().expect("k"),
            "--min-delay",
            "0",
            "--max-pages",
            "1",
            // On a pool of threads (a crawl runs on one by default): the
            // same requests, signed, and the same evidence.
            "--threads",
            "2",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let page = web
        .requests()
        .into_iter()
        .find(|r| r.host == "site.test" && r.path == "/")
        .expect("the page was fetched");
    assert_eq!(page.user_agent.as_deref(), Some(ua));
    let sig = |name: &str| {
        page.signature_headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    assert_eq!(sig("signature-agent"), format!("sig1=\"{jwks}\""));
    // It verifies with the key from the card's jwks_uri, and is
    // attributed to that URL (over http only because testweb is http).
    let pem = std::fs::read_to_string(&key).expect("pem");
    let pair = KeyPair::from_pkcs8_pem(&pem).expect("key");
    let msg = mannerly_botauth::Message::new("GET", "http://site.test/")
        .header("Host", "site.test")
        .header("Signature-Agent", &sig("signature-agent"))
        .header("Signature-Input", &sig("signature-input"))
        .header("Signature", &sig("signature"));
    let keys = mannerly_botauth::StaticKeys::from_directory(jwks, vec![pair.public_jwk()]);
    let config = mannerly_botauth::VerifyConfig {
        allow_http: true,
        ..mannerly_botauth::VerifyConfig::at(UnixMillis::now())
    };
    match mannerly_botauth::verify_request(&msg, &keys, &config) {
        mannerly_botauth::Outcome::Verified { agent, .. } => {
            assert_eq!(agent.as_deref(), Some(jwks))
        }
        other => panic!("{other:?}"),
    }
    // robots.txt is signed as the page is, and verifies alike.
    let robots = web
        .requests()
        .into_iter()
        .find(|r| r.host == "site.test" && r.path == "/robots.txt")
        .expect("robots.txt was fetched");
    let rsig = |name: &str| {
        robots
            .signature_headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let msg = mannerly_botauth::Message::new("GET", "http://site.test/robots.txt")
        .header("Host", "site.test")
        .header("Signature-Agent", &rsig("signature-agent"))
        .header("Signature-Input", &rsig("signature-input"))
        .header("Signature", &rsig("signature"));
    assert!(
        matches!(
            mannerly_botauth::verify_request(&msg, &keys, &config),
            mannerly_botauth::Outcome::Verified { .. }
        ),
        "robots.txt was signed: {:?}",
        robots.signature_headers
    );
    // The WARC request records hold the signature each request went with.
    let mut warc = String::new();
    for e in std::fs::read_dir(out.join("warc")).expect("warc dir") {
        let mut gz = flate2::read::MultiGzDecoder::new(
            std::fs::File::open(e.expect("entry").path()).expect("open"),
        );
        std::io::Read::read_to_string(&mut gz, &mut warc).expect("gunzip");
    }
    for sig in [rsig("signature"), sig("signature")] {
        assert!(
            warc.contains(&format!("signature: {sig}\r\n")),
            "the WARC holds {sig}"
        );
    }
    signed_evidence_verifies_with_the_crawlers_key_only(&d, &out, &public);
    // A User-Agent the card does not expect is refused before crawling.
    let o = mannerly(
        &[
            "crawl",
            "http://site.test/",
            "--out",
            d.join("c2").to_str().expect("o"),
            "--card",
            card.to_str().expect("c"),
            "--user-agent",
            "Other/1.0 (+https://x.example)",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("is not one the card expects"),
        "{}",
        text(&o)
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// The crawl's evidence, signed with its key: exported, it verifies with
/// that key (0), not with another (1), not once edited (1); an unreadable
/// bundle is an error (2).
fn signed_evidence_verifies_with_the_crawlers_key_only(d: &Path, crawl: &Path, public: &Path) {
    let bundle = d.join("site.test.json");
    let b = bundle.to_str().expect("b");
    let o = mannerly(
        &[
            "evidence",
            "export",
            crawl.to_str().expect("c"),
            "--host",
            "site.test",
            "--out",
            b,
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains(", signed:"), "{}", text(&o));
    let key = public.to_str().expect("k");
    let o = mannerly(&["evidence", "verify", b, "--key", key], b"");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("intact: 2 records of site.test"),
        "{}",
        text(&o)
    );
    let (_, other) = keys(&d.join("other"));
    let o = mannerly(
        &["evidence", "verify", b, "--key", other.to_str().expect("o")],
        b"",
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("refused:"), "{}", text(&o));
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&bundle).expect("read")).expect("json");
    v["records"][1]["delay"]["since_previous_s"] = serde_json::json!(30.0);
    let edited = d.join("edited.json");
    std::fs::write(&edited, v.to_string()).expect("write");
    let o = mannerly(
        &[
            "evidence",
            "verify",
            edited.to_str().expect("e"),
            "--key",
            key,
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let o = mannerly(
        &[
            "evidence",
            "verify",
            d.join("none.json").to_str().expect("n"),
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    // Export's usage errors say what to give instead.
    let c = crawl.to_str().expect("c");
    let missing = d.join("no-crawl-here");
    let since_until = [
        "--since",
        "2030-01-01T00:00:00Z",
        "--until",
        "2020-01-01T00:00:00Z",
    ];
    for (dir, host, more, says) in [
        (
            c,
            "site.test:8080",
            &[][..],
            "give the host alone, site.test",
        ),
        (
            c,
            "https://site.test/a",
            &[],
            "is a URL: give its host, site.test",
        ),
        (c, "site.test", &since_until[..], "--since is after --until"),
        (
            missing.to_str().expect("m"),
            "site.test",
            &[],
            "no such directory",
        ),
    ] {
        let args = [
            &["evidence", "export", dir, "--host", host, "--out", b][..],
            more,
        ]
        .concat();
        let o = mannerly(&args, b"");
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(says), "{says}: {}", text(&o));
    }
}

/// A bundle whose checkpoints are not signed: its chains are whole, but
/// nothing ties it to a crawler, so it does not verify (1) unless the
/// reader says it accepts that (`--allow-unsigned`, 0).
#[test]
fn an_unsigned_bundle_is_intact_but_does_not_verify_unless_allowed() {
    use mannerly_evidence::{EvidenceLog, Kind, Record, Window};
    let dir = tempfile::tempdir().expect("tmp");
    let mut log = EvidenceLog::open(dir.path(), None, None).expect("opens");
    for (i, path) in ["/robots.txt", "/a"].iter().enumerate() {
        log.append(Record {
            time: UnixMillis(1_772_359_200_000 + i as u64 * 1000).to_rfc3339_millis(),
            url: format!("https://a.test{path}"),
            host: "a.test".into(),
            kind: if i == 0 { Kind::Robots } else { Kind::Page },
            user_agent: "ExampleBot/1.0".into(),
            ..Record::blank()
        })
        .expect("append");
    }
    log.checkpoint(UnixMillis(1_772_359_203_000), true)
        .expect("checkpoint");
    let bundle =
        mannerly_evidence::export(&[dir.path().to_path_buf()], "a.test", Window::default())
            .expect("export");
    let file = dir.path().join("a.test.json");
    std::fs::write(&file, serde_json::to_vec(&bundle).expect("json")).expect("write");
    let f = file.to_str().expect("utf-8");
    let o = mannerly(&["evidence", "verify", f], b"");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("intact, unsigned: nothing ties it to a crawler (2 records of a.test"),
        "{}",
        text(&o)
    );
    let o = mannerly(&["evidence", "verify", f, "--allow-unsigned"], b"");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn directory_and_card_checks_say_what_to_give() {
    let dir = tempfile::tempdir().expect("tmp");
    let not_a_cert = dir.path().join("notes.txt");
    std::fs::write(&not_a_cert, "not a certificate\n").expect("write");
    let url = "https://crawler.example/.well-known/http-message-signatures-directory";
    let ca = not_a_cert.to_str().expect("utf-8");
    for (args, says) in [
        (
            vec!["directory", "check", "crawler.example"],
            "the usual place is https://crawler.example/.well-known/http-message-signatures-directory",
        ),
        (
            vec!["directory", "check", url, "--ca", ca],
            "is not a PEM or DER certificate",
        ),
        (
            vec!["card", "check", "https://crawler.example/card", "--ca", ca],
            "is not a PEM or DER certificate",
        ),
    ] {
        let o = mannerly(&args, b"");
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(says), "{says}: {}", text(&o));
    }
}
