//! `mannerly audit --rules`: rules written from what an audit found, as
//! each server reads them, checked by the real server's own configuration
//! check (`nginx -t`, `apache2 -t`, `caddy validate`, `haproxy -c`), and
//! real requests sent through nginx: a claimed Googlebot from Google's
//! ranges passes, the same User-Agent from elsewhere is refused, a crawler
//! that broke robots.txt is refused, a browser passes. Each server's part
//! says SKIPPED when the server is not installed (`.ci/run` installs all).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_mannerly");
const GOOGLEBOT: &str = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const BADBOT: &str = "BadBot/1.0 (+https://bad.example/)";
const BROWSER: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";

/// A log with a verified Googlebot (from its ranges), a spoofed one, and
/// BadBot reading a disallowed path; the audit writes `server`'s rules.
fn rules_for(dir: &Path, server: &str) -> PathBuf {
    let log = dir.join("access.log");
    let line = |ip: &str, t: u32, path: &str, ua: &str| {
        format!("{ip} - - [01/Mar/2026:10:00:{t:02} +0000] \"GET {path} HTTP/1.1\" 200 5 \"-\" \"{ua}\"\n")
    };
    let text = [
        line("127.0.0.5", 0, "/robots.txt", GOOGLEBOT),
        line("127.0.0.5", 1, "/", GOOGLEBOT),
        line("203.0.113.9", 2, "/", GOOGLEBOT),
        line("198.51.100.7", 3, "/robots.txt", BADBOT),
        line("198.51.100.7", 4, "/private/a", BADBOT),
    ]
    .concat();
    std::fs::write(&log, text).expect("log");
    std::fs::write(
        dir.join("robots.txt"),
        "User-agent: *\nDisallow: /private\n",
    )
    .expect("robots");
    std::fs::write(
        dir.join("google.json"),
        r#"{"prefixes": [{"ipv4Prefix": "127.0.0.0/8"}, {"ipv4Prefix": "66.249.64.0/19"}]}"#,
    )
    .expect("ranges");
    let out = dir.join(format!("rules.{server}"));
    let o = Command::new(BIN)
        .arg("audit")
        .arg(&log)
        .arg("--robots")
        .arg(dir.join("robots.txt"))
        .arg("--ip-ranges")
        .arg(format!("Googlebot={}", dir.join("google.json").display()))
        .args([
            "--offline",
            "--from-start",
            "--rules",
            server,
            "--rules-out",
        ])
        .arg(&out)
        .arg("--html")
        .arg(dir.join(format!("report-{server}.html")))
        .output()
        .expect("audit runs");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.status.code(), Some(1), "BadBot broke a rule: {said}");
    let rules = std::fs::read_to_string(&out).expect("rules written");
    let html = std::fs::read_to_string(dir.join(format!("report-{server}.html"))).expect("html");
    assert!(
        html.contains(&format!("Server rules ({server})")),
        "the HTML shows the rules"
    );
    assert!(
        rules.contains("spoofer: 1 requests as Googlebot"),
        "{rules}"
    );
    assert!(
        rules.contains("broke robots.txt: 2 requests, 1 disallowed"),
        "{rules}"
    );
    assert!(rules.contains("first 2026-03-01T10:00:03.000Z"), "{rules}");
    out
}

fn have(cmd: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {cmd}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
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

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a port")
}

fn nginx_conf(dir: &Path, rules: &Path, port: u16) -> PathBuf {
    let conf = dir.join("nginx.conf");
    let d = dir.display();
    std::fs::write(
        &conf,
        format!(
            "daemon off;\nmaster_process off;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\nevents {{}}\nhttp {{\n\
             client_body_temp_path {d}/b; proxy_temp_path {d}/p; fastcgi_temp_path {d}/f; uwsgi_temp_path {d}/u; scgi_temp_path {d}/s;\n\
             access_log off;\ninclude {};\nserver {{\n listen 127.0.0.1:{port};\n set_real_ip_from 127.0.0.1;\n real_ip_header X-Forwarded-For;\n\
             if ($mannerly_deny) {{ return 403; }}\n location / {{ return 200 \"ok\\n\"; }}\n}}\n}}\n",
            rules.display()
        ),
    )
    .expect("nginx.conf");
    conf
}

/// A GET through the server: its status.
fn status(port: u16, ua: &str, client: &str) -> u16 {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connects");
    s.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    write!(s, "GET / HTTP/1.1\r\nHost: a.test\r\nUser-Agent: {ua}\r\nX-Forwarded-For: {client}\r\nConnection: close\r\n\r\n").expect("sends");
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    answer
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status in {answer:?}"))
}

#[test]
fn nginx_refuses_the_spoofer_and_the_rule_breaker_and_lets_the_rest_pass() {
    if !have("nginx") {
        eprintln!("SKIPPED: nginx is not installed");
        return;
    }
    let dir = tempfile::tempdir().expect("tmp");
    let rules = rules_for(dir.path(), "nginx");
    let port = free_port();
    let conf = nginx_conf(dir.path(), &rules, port);
    check(
        "nginx -t",
        Command::new("nginx").arg("-t").arg("-c").arg(&conf),
    );
    let mut server = Command::new("nginx")
        .arg("-c")
        .arg(&conf)
        .stderr(Stdio::null())
        .spawn()
        .expect("nginx starts");
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err()
        && start.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    let answers = [
        status(port, GOOGLEBOT, "66.249.66.1"),
        status(port, GOOGLEBOT, "203.0.113.50"),
        status(port, BADBOT, "192.0.2.1"),
        status(port, BROWSER, "192.0.2.2"),
    ];
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(
        answers,
        [200, 403, 403, 200],
        "Googlebot in range, spoofer, BadBot, browser"
    );
}

#[test]
fn apache_caddy_and_haproxy_accept_their_rules() {
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    let port = free_port();
    if have("apache2") {
        let rules = rules_for(d, "apache");
        let conf = d.join("httpd.conf");
        let m = "/usr/lib/apache2/modules";
        std::fs::write(
            &conf,
            format!(
                "ServerRoot {}\nServerName localhost\nPidFile {}/httpd.pid\nErrorLog {}/httpd-error.log\nListen 127.0.0.1:{port}\n\
                 LoadModule mpm_event_module {m}/mod_mpm_event.so\nLoadModule authz_core_module {m}/mod_authz_core.so\n\
                 LoadModule setenvif_module {m}/mod_setenvif.so\n<VirtualHost *:{port}>\nInclude {}\n</VirtualHost>\n",
                d.display(),
                d.display(),
                d.display(),
                rules.display()
            ),
        )
        .expect("httpd.conf");
        check(
            "apache2 -t",
            Command::new("apache2").arg("-t").arg("-f").arg(&conf),
        );
    } else {
        eprintln!("SKIPPED: apache2 is not installed");
    }
    if have("caddy") {
        let rules = rules_for(d, "caddy");
        let conf = d.join("Caddyfile");
        std::fs::write(
            &conf,
            format!(
                ":{port} {{\n\timport {}\n\trespond \"ok\"\n}}\n",
                rules.display()
            ),
        )
        .expect("Caddyfile");
        check(
            "caddy validate",
            Command::new("caddy")
                .args(["validate", "--adapter", "caddyfile", "--config"])
                .arg(&conf),
        );
    } else {
        eprintln!("SKIPPED: caddy is not installed");
    }
    if have("haproxy") {
        let rules = rules_for(d, "haproxy");
        let lines = std::fs::read_to_string(&rules).expect("rules");
        let conf = d.join("haproxy.cfg");
        std::fs::write(
            &conf,
            format!(
                "defaults\n  mode http\n  timeout connect 1s\n  timeout client 1s\n  timeout server 1s\nfrontend www\n  bind 127.0.0.1:{port}\n{lines}\n  default_backend be\nbackend be\n  server s 127.0.0.1:1\n"
            ),
        )
        .expect("haproxy.cfg");
        check(
            "haproxy -c",
            Command::new("haproxy").arg("-c").arg("-f").arg(&conf),
        );
    } else {
        eprintln!("SKIPPED: haproxy is not installed");
    }
    let cloudflare = std::fs::read_to_string(rules_for(d, "cloudflare")).expect("rules");
    let expr = cloudflare.lines().last().expect("an expression");
    assert!(
        expr.contains(r#"(lower(http.user_agent) contains "googlebot" and not ip.src in {127.0.0.0/8 66.249.64.0/19})"#)
            && expr.contains(r#"(lower(http.user_agent) contains "badbot")"#),
        "{expr}"
    );
}
