//! `mannerly audit --follow`: a live log read as it is written, across a
//! rotation by rename and one by copy-truncate; each finding printed
//! within 2 s of its line, and counted in its metrics; Ctrl-C prints the
//! report and exits 1 (a bot broke a rule).

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_mannerly");

/// A combined line stamped now.
fn line(path: &str) -> String {
    line_from("192.0.2.7", path, "ExampleBot/1.0")
}

/// A combined line stamped now, from an address with a User-Agent.
fn line_from(ip: &str, path: &str, ua: &str) -> String {
    let out = Command::new("date")
        .args(["-u", "+%d/%b/%Y:%H:%M:%S"])
        .output()
        .expect("date");
    let now = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    format!("{ip} - - [{now} +0000] \"GET {path} HTTP/1.1\" 200 5 \"-\" \"{ua}\"\n")
}

fn append(log: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .expect("log");
    f.write_all(text.as_bytes()).expect("append");
}

/// Waits for the next finding; its path and how long it took.
fn next(rx: &mpsc::Receiver<String>, since: Instant) -> (String, Duration) {
    let finding = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("a finding within 10 s");
    let v: serde_json::Value = serde_json::from_str(&finding).expect("one JSON object a line");
    (
        v["path"].as_str().unwrap_or_default().to_owned(),
        since.elapsed(),
    )
}

#[test]
fn a_live_log_is_judged_line_by_line_across_rotations() {
    let dir = tempfile::tempdir().expect("tmp");
    let log = dir.path().join("access.log");
    let robots = dir.path().join("robots.txt");
    std::fs::write(&robots, "User-agent: *\nDisallow: /private\n").expect("robots");
    let ranges = dir.path().join("google.json");
    std::fs::write(&ranges, r#"{"prefixes":[{"ipv4Prefix":"66.249.64.0/19"}]}"#).expect("ranges");
    append(&log, &line("/robots.txt"));
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("port");
    let mut child = common::Proc(
        Command::new(BIN)
            .arg("audit")
            .arg(&log)
            .arg("--robots")
            .arg(&robots)
            .args(["--follow", "--json-lines", "--offline", "--from-start"])
            .arg("--ip-ranges")
            .arg(format!("Google={}", ranges.display()))
            .args(["--metrics", &format!("127.0.0.1:{port}")])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("runs"),
    );
    let stdout = child.0.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut rest = Vec::new();
        for l in BufReader::new(stdout).lines().map_while(Result::ok) {
            if l.starts_with('{') {
                let _ = tx.send(l);
            } else {
                rest.push(l);
            }
        }
        rest.join("\n")
    });
    std::thread::sleep(Duration::from_millis(700));
    // Appended.
    let t = Instant::now();
    append(&log, &line("/private/appended"));
    let (path, took) = next(&rx, t);
    assert_eq!(path, "/private/appended");
    assert!(took < Duration::from_secs(2), "{took:?}");
    // Rotated by rename: the old file kept, a new one made.
    std::fs::rename(&log, dir.path().join("access.log.1")).expect("rename");
    let t = Instant::now();
    append(&log, &line("/private/renamed"));
    let (path, took) = next(&rx, t);
    assert_eq!(path, "/private/renamed");
    assert!(took < Duration::from_secs(2), "{took:?}");
    // Copied and truncated, then written again.
    std::thread::sleep(Duration::from_millis(400));
    std::fs::write(&log, "").expect("truncate");
    let t = Instant::now();
    append(&log, &line("/private/truncated"));
    let (path, took) = next(&rx, t);
    assert_eq!(path, "/private/truncated");
    assert!(took < Duration::from_secs(2), "{took:?}");
    // Many lines in one second: a spoofer told live, then each finding in
    // the order of its line.
    let googlebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
    let mut burst = line_from("203.0.113.66", "/spoofed", googlebot);
    for i in 1..=7 {
        burst += &line(&format!("/private/{i}"));
    }
    append(&log, &burst);
    let t = Instant::now();
    let mut order = Vec::new();
    for _ in 0..9 {
        order.push(next(&rx, t).0);
    }
    // The spoofer is told, then that it read no robots.txt first.
    let want: Vec<String> = ["/spoofed", "/spoofed"]
        .map(str::to_owned)
        .into_iter()
        .chain((1..=7).map(|i| format!("/private/{i}")))
        .collect();
    assert_eq!(order, want);
    // The metrics count what was read and found.
    let metrics = common::scrape(port, "text/plain").expect("metrics listen");
    for sample in [
        "mannerly_audit_lines_total 12",
        "mannerly_audit_lines_unread_total 0",
        "mannerly_audit_findings_total{rule=\"disallowed\",kind=\"crawler\"} 10",
        "mannerly_audit_findings_total{rule=\"spoofed\",kind=\"crawler\"} 1",
    ] {
        assert!(
            metrics.lines().any(|l| l == sample),
            "{sample} in\n{metrics}"
        );
    }
    // Ctrl-C: the report so far, and the usual status.
    let pid = child.0.id().to_string();
    Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .expect("kill");
    let status = child.0.wait().expect("ends");
    let report = reader.join().expect("reader");
    assert_eq!(status.code(), Some(1), "{report}");
    assert!(
        report.contains("ExampleBot from 192.0.2.7: 11 requests"),
        "{report}"
    );
    assert!(report.contains("10 to disallowed paths"), "{report}");
    assert!(
        report.contains("Googlebot from 203.0.113.66 (spoofed, Google)"),
        "{report}"
    );
}
