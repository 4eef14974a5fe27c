//! `mannerly audit --rules` proven against the real world on real
//! servers. Rules are written from a scripted log (spoofers of Googlebot
//! and Bingbot, a crawler that broke robots.txt, the real Googlebot
//! under a Crawl-delay Google documents it ignores, anonymous clients,
//! curl and a feed reader hammering a disallowed path) together with
//! every real log in `../shared/logs`, with Google's and Bing's real
//! published ranges. Loaded into real nginx, Apache, Caddy and HAProxy,
//! behind a proxy as each file's header says to set it up, and sent:
//! every real browser User-Agent in `../shared/bots` (none refused), the
//! real crawlers from their published ranges (none refused), each
//! spoofer (refused, but never on /robots.txt) and the rule-breaker
//! (refused on a page, not on /robots.txt). The Cloudflare expressions
//! are checked by an evaluator of their fields on the same requests,
//! and `mannerly gate` at nginx's door decides them alike.
//!
//! Without `../shared` (outside CI) a few built-in browsers and Google
//! ranges stand in; a missing server says SKIPPED (in CI it fails).

#[path = "rules/cloudflare_eval.rs"]
mod cloudflare_eval;
mod common;
#[path = "rules/world.rs"]
mod world;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{free_port, need, wait_ready, Proc};
use world::{Ask, World};

const BIN: &str = env!("CARGO_BIN_EXE_mannerly");

/// Runs the audit over the world's logs and writes `server`'s rules:
/// their path, and what the audit said on stderr.
fn rules_for(w: &World, server: &str) -> (PathBuf, String) {
    let out = w.dir.join(format!("rules.{server}"));
    let o = Command::new(BIN)
        .arg("audit")
        .args(&w.logs)
        .arg("--robots")
        .arg(w.dir.join("robots.txt"))
        .args(&w.range_args)
        .args(&w.rule_args)
        .args(["--offline", "--rules", server, "--rules-out"])
        .arg(&out)
        .arg("--cache")
        .arg(w.dir.join("cache"))
        .arg("--html")
        .arg(w.dir.join("report.html"))
        .output()
        .expect("audit runs");
    let said = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "BadBot broke a rule: {said}");
    assert!(
        !said.contains("warning:"),
        "the guard kept a rule out: {said}"
    );
    let text = std::fs::read_to_string(&out).expect("rules written");
    let html = std::fs::read_to_string(w.dir.join("report.html")).expect("html");
    assert!(
        html.contains(&format!("Server rules ({server})")),
        "the HTML report shows the rules"
    );
    assert!(
        text.contains("refuse User-Agents naming BadBot:"),
        "{said}\n{text}"
    );
    assert!(
        text.contains("refuse User-Agents naming Googlebot from outside"),
        "{text}"
    );
    assert!(
        text.contains("refuse User-Agents naming bingbot from outside")
            || text.contains("refuse User-Agents naming Bingbot from outside"),
        "{text}"
    );
    assert_eq!(
        text.contains(" 0 by address)"),
        w.rule_args.is_empty(),
        "anonymous clients are refused by address only when asked: {text}"
    );
    (out, said)
}

/// Starts a server, its output dropped, and waits until it answers a GET
/// of `path` as `ready` says only it would: a listening port is not a
/// server ready to serve.
fn serve(cmd: &mut Command, port: u16, what: &str, path: &str, ready: fn(&str) -> bool) -> Proc {
    let p = Proc(
        cmd.stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{what} starts: {e}")),
    );
    wait_ready(port, path, what, ready);
    p
}

/// An HTTP answer, whatever its status: the rules may refuse the check.
/// nginx in the foreground on `conf`, once it answers on `port`.
fn serve_nginx(conf: &Path, port: u16) -> Proc {
    serve(
        Command::new("nginx").arg("-c").arg(conf),
        port,
        "nginx",
        "/",
        answers_http,
    )
}

fn answers_http(a: &str) -> bool {
    a.starts_with("HTTP/1.")
}

/// A GET through the server from `client` (as X-Forwarded-For, which each
/// server is set up to believe from 127.0.0.1): the status. A connection
/// that ends without any answer (seen once on a loaded CI machine, never
/// when idle) is tried again, twice at most: it carries no decision.
fn status(port: u16, a: &Ask) -> u16 {
    for _ in 0..2 {
        if let Some(code) = try_status(port, a) {
            return code;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    try_status(port, a)
        .unwrap_or_else(|| panic!("no status for {} from {}, three times", a.path, a.client))
}

fn try_status(port: u16, a: &Ask) -> Option<u16> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connects");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    // One write: a request in pieces waits on Nagle and delayed ACKs.
    let request = format!(
        "GET {} HTTP/1.1\r\nHost: a.test\r\nUser-Agent: {}\r\nX-Forwarded-For: {}\r\nConnection: close\r\n\r\n",
        a.path, a.user_agent, a.client
    );
    s.write_all(request.as_bytes()).expect("sends");
    // The status line is all that is needed: read no further.
    let mut answer = String::new();
    let mut buf = [0u8; 512];
    while !answer.contains("\r\n") {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => answer.push_str(&String::from_utf8_lossy(&buf[..n])),
        }
    }
    answer
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
}

/// Sends every request of the world through the server on `port`, and
/// checks each was refused (403) exactly when it should be.
fn sends_the_world(w: &World, port: u16, server: &str) {
    let mut wrong = Vec::new();
    for a in &w.asks {
        let refused = status(port, a) == 403;
        if refused != a.refuse {
            wrong.push(format!(
                "{} {} from {} ({}): {}",
                a.path,
                a.user_agent,
                a.client,
                a.what,
                if refused { "refused" } else { "let through" }
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{server}: {} of {} requests decided wrongly:\n{}",
        wrong.len(),
        w.asks.len(),
        wrong
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    eprintln!("{server}: {}", w.tally());
}

fn check(what: &str, cmd: &mut Command) {
    let o = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        o.status.success(),
        "{what} refused the rules:\n{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn nginx_with_the_rules_refuses_only_the_spoofers_and_the_rule_breaker() {
    if !need("nginx") {
        return;
    }
    // As written by default, then with anonymous clients refused by address.
    for anonymous in [false, true] {
        let w = World::new(anonymous);
        let (rules, said) = rules_for(&w, "nginx");
        assert!(
            said.contains("not refused:") && said.contains("(2 by token, 2 by spoofer, "),
            "the summary says what was written and passed over: {said}"
        );
        let port = free_port();
        let d = w.dir.display();
        let conf = w.dir.join("nginx.conf");
        std::fs::write(
            &conf,
            format!(
                "daemon off;\nmaster_process off;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\nevents {{}}\nhttp {{\n\
                 client_body_temp_path {d}/b; proxy_temp_path {d}/p; fastcgi_temp_path {d}/f; uwsgi_temp_path {d}/u; scgi_temp_path {d}/s;\n\
                 access_log off;\nset_real_ip_from 127.0.0.1;\nreal_ip_header X-Forwarded-For;\ninclude {};\n\
                 server {{\n listen 127.0.0.1:{port};\n if ($mannerly_deny) {{ return 403; }}\n location / {{ return 200 \"ok\\n\"; }}\n}}\n}}\n",
                rules.display()
            ),
        )
        .expect("nginx.conf");
        check(
            "nginx -t",
            Command::new("nginx").arg("-t").arg("-c").arg(&conf),
        );
        let _nginx = serve_nginx(&conf, port);
        sends_the_world(&w, port, "nginx");
    }
}

#[test]
fn apache_with_the_rules_refuses_only_the_spoofers_and_the_rule_breaker() {
    if !need("apache2") {
        return;
    }
    // As written by default, then with anonymous clients refused by address.
    for anonymous in [false, true] {
        let w = World::new(anonymous);
        let (rules, _) = rules_for(&w, "apache");
        let port = free_port();
        let d = w.dir.display();
        let m = "/usr/lib/apache2/modules";
        let conf = w.dir.join("httpd.conf");
        std::fs::write(
            &conf,
            format!(
                "ServerRoot {d}\nServerName localhost\nPidFile {d}/httpd.pid\nErrorLog {d}/httpd-error.log\nDefaultRuntimeDir {d}\nListen 127.0.0.1:{port}\n\
                 LoadModule mpm_event_module {m}/mod_mpm_event.so\nLoadModule authz_core_module {m}/mod_authz_core.so\n\
                 LoadModule setenvif_module {m}/mod_setenvif.so\nLoadModule remoteip_module {m}/mod_remoteip.so\n\
                 RemoteIPHeader X-Forwarded-For\nRemoteIPInternalProxy 127.0.0.1\n\
                 <VirtualHost *:{port}>\nInclude {}\n</VirtualHost>\n",
                rules.display()
            ),
        )
        .expect("httpd.conf");
        check(
            "apache2 -t",
            Command::new("apache2").arg("-t").arg("-f").arg(&conf),
        );
        let _apache = serve(
            Command::new("apache2").arg("-X").arg("-f").arg(&conf),
            port,
            "apache",
            "/",
            answers_http,
        );
        sends_the_world(&w, port, "apache");
    }
}

#[test]
fn caddy_with_the_rules_refuses_only_the_spoofers_and_the_rule_breaker() {
    if !need("caddy") {
        return;
    }
    // As written by default, then with anonymous clients refused by address.
    for anonymous in [false, true] {
        let w = World::new(anonymous);
        let (rules, _) = rules_for(&w, "caddy");
        // As the header says for a Caddy behind a proxy: `client_ip` from 2.7,
        // `remote_ip forwarded` on 2.6 (this proxy, the test, sets the header).
        let text = std::fs::read_to_string(&rules).expect("rules");
        let version = Command::new("caddy")
            .arg("version")
            .output()
            .expect("caddy version");
        let v = String::from_utf8_lossy(&version.stdout);
        let old = v.starts_with("v2.6") || v.starts_with("2.6") || v.starts_with("v2.5");
        let (matcher, global) = if old {
            ("remote_ip forwarded ", String::new())
        } else {
            (
                "client_ip ",
                "servers {\n\t\ttrusted_proxies static 127.0.0.1/32\n\t}\n".to_owned(),
            )
        };
        assert!(text.contains("remote_ip "), "{text}");
        std::fs::write(&rules, text.replace("remote_ip ", matcher)).expect("rules");
        let port = free_port();
        let conf = w.dir.join("Caddyfile");
        std::fs::write(
            &conf,
            format!(
                "{{\n\tadmin off\n\tauto_https off\n\t{global}}}\n:{port} {{\n\timport {}\n\trespond \"ok\" 200\n}}\n",
                rules.display()
            ),
        )
        .expect("Caddyfile");
        let env = |c: &mut Command| {
            c.env("XDG_DATA_HOME", w.dir.join("xdg-data"))
                .env("XDG_CONFIG_HOME", w.dir.join("xdg-config"));
        };
        let mut validate = Command::new("caddy");
        validate
            .args(["validate", "--adapter", "caddyfile", "--config"])
            .arg(&conf);
        env(&mut validate);
        check("caddy validate", &mut validate);
        let mut run = Command::new("caddy");
        run.args(["run", "--adapter", "caddyfile", "--config"])
            .arg(&conf);
        env(&mut run);
        let _caddy = serve(&mut run, port, "caddy", "/", answers_http);
        sends_the_world(&w, port, "caddy");
    }
}

#[test]
fn haproxy_with_the_rules_refuses_only_the_spoofers_and_the_rule_breaker() {
    if !need("haproxy") {
        return;
    }
    // As written by default, then with anonymous clients refused by address.
    for anonymous in [false, true] {
        let w = World::new(anonymous);
        let (rules, _) = rules_for(&w, "haproxy");
        let lines = std::fs::read_to_string(&rules).expect("rules");
        for l in lines.lines().filter(|l| !l.trim_start().starts_with('#')) {
            assert!(l.split_whitespace().count() <= 64, "over 64 words: {l}");
        }
        let port = free_port();
        let conf = w.dir.join("haproxy.cfg");
        std::fs::write(
            &conf,
            format!(
                "defaults\n  mode http\n  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\n\
                 frontend www\n  bind 127.0.0.1:{port}\n  http-request set-src hdr_ip(X-Forwarded-For,-1) if {{ src 127.0.0.1 }}\n\
                 {lines}\n  http-request return status 200 content-type text/plain string ok\n"
            ),
        )
        .expect("haproxy.cfg");
        check(
            "haproxy -c",
            Command::new("haproxy").arg("-c").arg("-f").arg(&conf),
        );
        let _haproxy = serve(
            Command::new("haproxy").arg("-db").arg("-f").arg(&conf),
            port,
            "haproxy",
            "/",
            answers_http,
        );
        sends_the_world(&w, port, "haproxy");
    }
}

#[test]
fn cloudflare_expressions_fit_and_decide_alike() {
    // As written by default, then with anonymous clients refused by address.
    for anonymous in [false, true] {
        let w = World::new(anonymous);
        let (rules, _) = rules_for(&w, "cloudflare");
        let text = std::fs::read_to_string(&rules).expect("rules");
        let rules = cloudflare_eval::Rules::read(&text);
        assert!(!rules.expressions.is_empty(), "{text}");
        for e in &rules.expressions {
            assert!(
                e.len() <= mannerly_audit::rules::MAX_EXPRESSION,
                "{} characters",
                e.len()
            );
        }
        let mut wrong = Vec::new();
        for a in &w.asks {
            if rules.blocks(a) != a.refuse {
                wrong.push(format!(
                    "{} {} from {} ({})",
                    a.path, a.user_agent, a.client, a.what
                ));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}

#[test]
fn the_gate_at_nginx_refuses_only_the_spoofers_and_the_rule_breaker() {
    if !need("nginx") {
        return;
    }
    let w = World::new(false);
    std::fs::write(
        w.dir.join("policy.toml"),
        "[[rule]]\nwho = \"spoofer\"\ndo = \"deny\"\n[[rule]]\nwho = \"token:BadBot\"\ndo = \"deny\"\n",
    )
    .expect("policy");
    let gate_port = free_port();
    let _gate = serve(
        Command::new(BIN)
            .args([
                "gate",
                "--listen",
                &format!("127.0.0.1:{gate_port}"),
                "--policy",
            ])
            .arg(w.dir.join("policy.toml"))
            .args(["--offline", "--nginx"])
            .args(&w.range_args)
            .arg("--cache")
            .arg(w.dir.join("cache")),
        gate_port,
        "the gate",
        "/healthz",
        |a| a.ends_with("\r\n\r\nok\n"),
    );
    let port = free_port();
    let conf = gate_nginx(&w.dir, gate_port, port);
    let _nginx = serve_nginx(&conf, port);
    sends_the_world(&w, port, "nginx with the gate");
}

/// nginx as the README sets it before the gate, believing X-Forwarded-For
/// from 127.0.0.1 (the test) and passing the client's address on.
fn gate_nginx(dir: &Path, gate: u16, port: u16) -> PathBuf {
    let d = dir.display();
    std::fs::create_dir_all(dir.join("www")).expect("www");
    std::fs::write(dir.join("www/index.html"), "ok\n").expect("index");
    let conf = dir.join("gate-nginx.conf");
    std::fs::write(
        &conf,
        format!(
            "daemon off;\nmaster_process off;\npid {d}/gate-nginx.pid;\nerror_log {d}/gate-nginx-error.log;\nevents {{}}\nhttp {{\n\
             client_body_temp_path {d}/b; proxy_temp_path {d}/p; fastcgi_temp_path {d}/f; uwsgi_temp_path {d}/u; scgi_temp_path {d}/s;\n\
             access_log off;\nset_real_ip_from 127.0.0.1;\nreal_ip_header X-Forwarded-For;\n\
             server {{\n listen 127.0.0.1:{port};\n\
             location / {{\n  auth_request /_mannerly_gate;\n  root {d}/www;\n }}\n\
             location = /_mannerly_gate {{\n  internal;\n  proxy_pass http://127.0.0.1:{gate};\n  proxy_pass_request_body off;\n\
             proxy_set_header Content-Length \"\";\n  proxy_set_header X-Forwarded-Method $request_method;\n\
             proxy_set_header X-Forwarded-Proto $scheme;\n  proxy_set_header X-Forwarded-Host $http_host;\n\
             proxy_set_header X-Forwarded-Uri $request_uri;\n  proxy_set_header X-Forwarded-For $remote_addr;\n }}\n\
             }}\n}}\n"
        ),
    )
    .expect("nginx.conf");
    conf
}
