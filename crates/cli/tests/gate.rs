//! `mannerly gate` at the door of real nginx (`auth_request`, with the
//! README's snippet) and real Caddy (`forward_auth`), in front of testweb:
//! a browser passes; a Googlebot from outside Google's ranges is refused;
//! a request signed by mannerly's key passes as verified, and the same
//! headers (covering `@path`) on another path are refused; a token over
//! its rate gets 429 with Retry-After; a crawler asking for a path
//! robots.txt disallows it is refused, a health check is not; and
//! mannerly's crawler behind nginx, slowed by the gate, waits every
//! Retry-After and asks for nothing disallowed.
//! In CI both servers must be installed; elsewhere a missing one says
//! SKIPPED.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{ask, free_port, mannerly, need, promtool_accepts, scrape, wait_ready, Proc};
use mannerly_testweb::{HostSpec, TestWeb};

const BIN: &str = env!("CARGO_BIN_EXE_mannerly");
const GOOGLEBOT: &str = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const BROWSER: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
const ROBOTS: &str = "User-agent: *\nDisallow: /private/\n";
const AGENT: &str = "https://crawler.example/.well-known/http-message-signatures-directory";
/// The access log's layout: what the crawler check below and `mannerly
/// audit --log-format` read, the gate's answers included.
const LOG_FORMAT: &str = r#"$msec $status "$request" "$http_user_agent" "$gate_identity" "$gate_action" "$sent_http_retry_after" $remote_addr $http_host"#;
const POLICY: &str = r#"robots = "robots.txt"
[[rule]]
who = "spoofer"
do = "deny"
[[rule]]
who = "token:mannerly"
do = "slow"
rate = 2.0
burst = 1
[[rule]]
who = "token:GreedyBot"
do = "slow"
rate = 0.2
"#;

/// A GET of `path` on a.test through the server: its status and headers.
fn get(port: u16, path: &str, headers: &[(String, String)]) -> (u16, String) {
    let answer = ask(port, path, headers).expect("connects");
    let head = answer
        .split("\r\n\r\n")
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status in {answer:?}"));
    (status, head)
}

fn ua(agent: &str) -> Vec<(String, String)> {
    vec![("User-Agent".into(), agent.into())]
}

/// The key pair, the policy, its robots.txt and Google's ranges (which
/// 127.0.0.1 is outside of).
fn files(dir: &Path) -> (PathBuf, PathBuf) {
    let o = mannerly(
        &["keys", "generate", "--out", dir.to_str().expect("dir")],
        b"",
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::write(dir.join("policy.toml"), POLICY).expect("policy");
    std::fs::write(dir.join("robots.txt"), ROBOTS).expect("robots");
    std::fs::write(
        dir.join("google.json"),
        r#"{"prefixes": [{"ipv4Prefix": "66.249.64.0/19"}]}"#,
    )
    .expect("ranges");
    let o = Command::new(BIN)
        .args(["gate", "--check"])
        .arg(dir.join("policy.toml"))
        .output()
        .expect("gate --check");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    (dir.join("private.pem"), dir.join("public.jwk.json"))
}

fn gate(dir: &Path, nginx: bool, metrics: Option<u16>) -> (Proc, u16) {
    let port = free_port();
    let mut cmd = Command::new(BIN);
    cmd.args(["gate", "--listen", &format!("127.0.0.1:{port}"), "--policy"])
        .arg(dir.join("policy.toml"))
        .args(["--offline", "--allow-http", "--keys"])
        .arg(dir.join("public.jwk.json"))
        .arg("--ip-ranges")
        .arg(format!("Googlebot={}", dir.join("google.json").display()))
        .arg("--cache")
        .arg(dir.join("cache"))
        .stderr(std::fs::File::create(dir.join("gate.log")).expect("gate.log"));
    if nginx {
        cmd.arg("--nginx");
    }
    if let Some(m) = metrics {
        cmd.args(["--metrics", &format!("127.0.0.1:{m}")]);
    }
    let p = Proc(cmd.spawn().expect("gate starts"));
    wait_ready(port, "/healthz", "the gate", |a| {
        a.ends_with("\r\n\r\nok\n")
    });
    (p, port)
}

/// nginx as the README configures it, proxying to testweb, with a path
/// of its own to say it is ready.
fn nginx(dir: &Path, gate: u16, web: u16) -> (Proc, u16) {
    let port = free_port();
    let d = dir.display();
    let conf = dir.join("nginx.conf");
    std::fs::write(
        &conf,
        format!(
            "daemon off;\nmaster_process off;\npid {d}/nginx.pid;\nerror_log {d}/nginx-error.log;\nevents {{}}\nhttp {{\n\
             client_body_temp_path {d}/b; proxy_temp_path {d}/p; fastcgi_temp_path {d}/f; uwsgi_temp_path {d}/u; scgi_temp_path {d}/s;\n\
             log_format gate '{LOG_FORMAT}';\n\
             access_log {d}/nginx-access.log gate;\n\
             server {{\n listen 127.0.0.1:{port};\n\
             location / {{\n  auth_request /_mannerly_gate;\n  auth_request_set $gate_identity $upstream_http_x_mannerly_identity;\n\
             auth_request_set $gate_action $upstream_http_x_mannerly_action;\n  auth_request_set $gate_retry $upstream_http_retry_after;\n\
             error_page 403 = @mannerly_refused;\n  proxy_pass http://127.0.0.1:{web};\n  proxy_set_header Host $http_host;\n }}\n\
             location = /_ready {{\n  return 204;\n }}\n\
             location = /_mannerly_gate {{\n  internal;\n  proxy_pass http://127.0.0.1:{gate};\n  proxy_pass_request_body off;\n\
             proxy_set_header Content-Length \"\";\n  proxy_set_header X-Forwarded-Method $request_method;\n\
             proxy_set_header X-Forwarded-Proto $scheme;\n  proxy_set_header X-Forwarded-Host $http_host;\n\
             proxy_set_header X-Forwarded-Uri $request_uri;\n  proxy_set_header X-Forwarded-For $remote_addr;\n }}\n\
             location @mannerly_refused {{\n  if ($gate_action = slow) {{\n   add_header Retry-After $gate_retry always;\n   return 429;\n  }}\n  return 403;\n }}\n\
             }}\n}}\n"
        ),
    )
    .expect("nginx.conf");
    let p = Proc(
        Command::new("nginx")
            .arg("-c")
            .arg(&conf)
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx starts"),
    );
    wait_ready(port, "/_ready", "nginx", |a| {
        a.starts_with("HTTP/1.1 204") && a.contains("Server: nginx")
    });
    (p, port)
}

/// Caddy as the README configures it, proxying to testweb, with a path
/// of its own to say it is ready.
fn caddy(dir: &Path, gate: u16, web: u16) -> (Proc, u16) {
    let port = free_port();
    let conf = dir.join("Caddyfile");
    std::fs::write(
        &conf,
        format!(
            "{{\n\tadmin off\n\tauto_https off\n}}\nhttp://:{port} {{\n\tbind 127.0.0.1\n\t@gated not path /_ready\n\trespond /_ready 204\n\tforward_auth @gated 127.0.0.1:{gate} {{\n\t\turi /\n\t\tcopy_headers X-Mannerly-Identity X-Mannerly-Action\n\t}}\n\treverse_proxy 127.0.0.1:{web}\n}}\n"
        ),
    )
    .expect("Caddyfile");
    let p = Proc(
        Command::new("caddy")
            .args(["run", "--adapter", "caddyfile", "--config"])
            .arg(&conf)
            .env("HOME", dir)
            .env("XDG_DATA_HOME", dir.join("data"))
            .env("XDG_CONFIG_HOME", dir.join("config"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("caddy starts"),
    );
    wait_ready(port, "/_ready", "caddy", |a| {
        a.starts_with("HTTP/1.1 204") && a.contains("Server: Caddy")
    });
    (p, port)
}

/// The headers `mannerly sign` gives for `url`, covering `@path`.
fn signed(key: &Path, url: &str) -> Vec<(String, String)> {
    let o = mannerly(
        &[
            "sign",
            "--key",
            key.to_str().expect("key"),
            "--signature-agent",
            AGENT,
            "--component",
            "@path",
            url,
        ],
        b"",
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Signed with the crawler's key under a name of its own, so the
    // crawl's requests in the log are the crawler's alone.
    let mut headers = ua("DoorCheck/1.0");
    headers.extend(
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter_map(|l| l.split_once(": "))
            .map(|(n, v)| (n.to_owned(), v.to_owned())),
    );
    headers
}

/// Runs `checks`; when they fail, prints the gate's and nginx's logs
/// first, so a failure says what the servers saw.
fn with_logs(dir: &Path, checks: impl FnOnce() + std::panic::UnwindSafe) {
    if let Err(e) = std::panic::catch_unwind(checks) {
        for log in ["gate.log", "nginx-error.log"] {
            if let Ok(text) = std::fs::read_to_string(dir.join(log)) {
                eprintln!("{log}:\n{text}");
            }
        }
        std::panic::resume_unwind(e);
    }
}

/// What every server must do at the door.
fn door_checks(server: &str, port: u16, key: &Path) {
    let (s, h) = get(port, "/", &ua(BROWSER));
    assert_eq!(s, 200, "{server}: a browser passes: {h}");
    let (s, h) = get(port, "/", &ua(GOOGLEBOT));
    assert_eq!(
        s, 403,
        "{server}: Googlebot from 127.0.0.1 is a spoofer: {h}"
    );
    let headers = signed(key, "http://a.test/p1.html");
    let (s, h) = get(port, "/p1.html", &headers);
    assert_eq!(s, 200, "{server}: mannerly's signed request passes: {h}");
    let (s, h) = get(port, "/p2.html", &headers);
    assert_eq!(
        s, 403,
        "{server}: a signature covering @path fails on another path: {h}"
    );
    let (s, h) = get(port, "/private/x", &ua("BadBot/1.0"));
    assert_eq!(
        s, 403,
        "{server}: robots.txt disallows /private/ to every crawler: {h}"
    );
    let (s, h) = get(port, "/private/x", &ua(BROWSER));
    assert_eq!(s, 404, "{server}: a browser is not held to robots.txt: {h}");
    let (s, h) = get(port, "/private/x", &ua("kube-probe/1.28"));
    assert_eq!(
        s, 404,
        "{server}: a health check is not held to robots.txt: {h}"
    );
    let greedy = ua("GreedyBot/1.0");
    let (s, h) = get(port, "/", &greedy);
    assert_eq!(s, 200, "{server}: GreedyBot's first request passes: {h}");
    let (s, h) = get(port, "/", &greedy);
    assert_eq!(s, 429, "{server}: GreedyBot over 0.2/s is slowed: {h}");
    assert!(
        h.contains("retry-after: 5"),
        "{server}: Retry-After says when: {h}"
    );
}

fn testweb() -> (tokio::runtime::Runtime, TestWeb) {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let web = rt
        .block_on(TestWeb::with_hosts([(
            "a.test",
            HostSpec::default().robots(ROBOTS).pages(6, 3),
        )]))
        .expect("testweb");
    (rt, web)
}

#[test]
fn caddy_forward_auth_decides_by_identity() {
    if !need("caddy") {
        return;
    }
    let dir = tempfile::tempdir().expect("tmp");
    let (key, _) = files(dir.path());
    let (_rt, web) = testweb();
    let metrics = free_port();
    let (_gate, gate_port) = gate(dir.path(), false, Some(metrics));
    let (_caddy, port) = caddy(dir.path(), gate_port, web.port());
    with_logs(dir.path(), || door_checks("caddy", port, &key));
    // The gate's metrics count each decision by class and action.
    let text = scrape(metrics, "text/plain").expect("the gate serves its metrics");
    for (sample, n) in [
        ("{class=\"browser\",action=\"allow\"}", 2),
        ("{class=\"spoofer\",action=\"deny\"}", 2),
        ("{class=\"verified\",action=\"allow\"}", 1),
        ("{class=\"bot\",action=\"deny\"}", 1),
        ("{class=\"bot\",action=\"slow\"}", 1),
    ] {
        let line = format!("mannerly_gate_decisions_total{sample} {n}");
        assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
    }
    if need("promtool") {
        promtool_accepts(&text);
    }
}

#[test]
fn nginx_auth_request_decides_by_identity_and_the_crawler_behind_it_keeps_every_retry_after() {
    if !need("nginx") {
        return;
    }
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    let (key, _) = files(d);
    let (_rt, web) = testweb();
    let (_gate, gate_port) = gate(d, true, None);
    let (_nginx, port) = nginx(d, gate_port, web.port());
    with_logs(d, || door_checks("nginx", port, &key));
    let out = d.join("crawl");
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("time")
        .as_secs_f64();
    let o = mannerly(
        &[
            "crawl",
            "http://a.test/",
            "--out",
            out.to_str().expect("out"),
            "--proxy",
            &format!("http://127.0.0.1:{port}"),
            "--sign-key",
            key.to_str().expect("key"),
            "--signature-agent",
            AGENT,
            "--min-delay",
            "0.2",
        ],
        b"",
    );
    let said = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{said}");
    let log = std::fs::read_to_string(d.join("nginx-access.log")).expect("nginx log");
    crawler_kept_the_rules(&log, started);
    audit_reads_the_gate(d);
}

/// `mannerly audit` reads the same log: the gate's answers per bot, and
/// the crawler (its Retry-After windows logged) broke no rule.
fn audit_reads_the_gate(d: &Path) {
    let o = Command::new(BIN)
        .arg("audit")
        .arg(d.join("nginx-access.log"))
        .args(["--log-format", LOG_FORMAT, "--robots"])
        .arg(d.join("robots.txt"))
        .args(["--offline", "--from-start", "--json"])
        .output()
        .expect("audit runs");
    let report: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    let bot = |token: &str| {
        report["bots"]
            .as_array()
            .and_then(|b| b.iter().find(|b| b["token"] == token))
            .unwrap_or_else(|| panic!("{token} in {report}"))
            .clone()
    };
    let crawler = bot("mannerly");
    assert!(crawler["gate"]["slowed"].as_u64() >= Some(1), "{crawler}");
    assert!(crawler["gate"]["allowed"].as_u64() >= Some(8), "{crawler}");
    assert_eq!(crawler["gate"]["denied"], 0, "{crawler}");
    for rule in [
        "disallowed",
        "too_soon",
        "ignored_retry_after",
        "before_robots",
        "while_robots_unavailable",
    ] {
        assert_eq!(
            crawler[rule], 0,
            "the crawler broke no rule ({rule}): {crawler}"
        );
    }
    let badbot = bot("BadBot");
    assert_eq!(badbot["gate"]["denied"], 1, "{badbot}");
    assert_eq!(
        badbot["disallowed"], 1,
        "refused at the door, and still a try: {badbot}"
    );
    let greedy = bot("GreedyBot");
    assert_eq!(
        (
            greedy["gate"]["allowed"].as_u64(),
            greedy["gate"]["slowed"].as_u64()
        ),
        (Some(1), Some(1)),
        "{greedy}"
    );
}

/// From nginx's log: every crawler request verified, none disallowed, at
/// least one slowed, and after each slow-down nothing sooner than its
/// Retry-After; every page reached.
fn crawler_kept_the_rules(log: &str, started: f64) {
    let mut lines: Vec<(f64, u16, &str, &str, u64)> = log
        .lines()
        .filter(|l| l.contains("\"mannerly/"))
        .filter_map(|l| {
            let f: Vec<&str> = l.split('"').collect();
            let (t, status) = f[0].trim().split_once(' ')?;
            Some((
                t.parse().ok()?,
                status.trim().parse().ok()?,
                f[1].split(' ').nth(1)?.trim_start_matches("http://a.test"),
                f[5],
                f[9].parse().unwrap_or(0),
            ))
        })
        .filter(|l| l.0 >= started)
        .collect();
    lines.sort_by(|a, b| a.0.total_cmp(&b.0));
    let pages: Vec<_> = lines.iter().filter(|l| l.2 != "/robots.txt").collect();
    assert!(
        pages.iter().all(|l| l.3 == "verified;token=mannerly"),
        "every request verified by its signature: {log}"
    );
    assert!(lines.iter().all(|l| !l.2.starts_with("/private/")), "{log}");
    let slowed: Vec<_> = lines.iter().filter(|l| l.1 == 429).collect();
    assert!(
        !slowed.is_empty(),
        "the crawler was slowed at least once: {log}"
    );
    for (i, l) in lines.iter().enumerate() {
        if l.1 != 429 {
            continue;
        }
        if let Some(next) = lines.get(i + 1) {
            assert!(
                next.0 + 0.05 >= l.0 + l.4 as f64,
                "sooner than Retry-After {} after {}: {:?}\n{log}",
                l.4,
                l.0,
                next
            );
        }
    }
    let fetched: std::collections::HashSet<&str> =
        pages.iter().filter(|l| l.1 == 200).map(|l| l.2).collect();
    assert!(
        fetched.len() >= 7,
        "the home page and six pages: {fetched:?}\n{log}"
    );
}
