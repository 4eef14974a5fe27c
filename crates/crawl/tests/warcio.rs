//! The WARC files this crate writes read back with warcio, the Python WARC
//! library web archivists use: `warcio check` verifies every block and
//! payload digest, and `warcio index` must list every record. The Python
//! interpreter of a venv with warcio comes from `MANNERLY_PYTHON` (`.ci/run`
//! makes one); without it the test prints SKIPPED, and in CI (`CI` set)
//! it fails.

use std::io::Write;
use std::process::Command;

use mannerly_crawl::warc::{Exchange, WarcWriter};
use mannerly_time::UnixMillis;

/// warcio's command line, run through the interpreter.
const WARCIO: &str = "import sys; from warcio.cli import main; sys.exit(main(sys.argv[1:]))";

fn main() {
    let Some(python) = std::env::var_os("MANNERLY_PYTHON") else {
        if std::env::var_os("CI").is_some() {
            eprintln!("warcio check: MANNERLY_PYTHON is not set; CI must read the WARC files back with warcio");
            std::process::exit(101);
        }
        println!("warcio check: SKIPPED (set MANNERLY_PYTHON to a python with warcio)");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = WarcWriter::open(dir.path(), "check", 1_500, "mannerly-test").expect("open");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(b"<html><a href=/x>compressed</a></html>")
        .expect("gzip");
    let gz = gz.finish().expect("gzip");
    let head_gz = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n",
        gz.len()
    );
    let big = vec![b'x'; 3_000];
    let cases: Vec<(String, Vec<u8>, Vec<u8>, bool)> = vec![
        (
            "https://a.example/robots.txt".into(),
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 26\r\n\r\n".to_vec(),
            b"User-agent: *\nDisallow: /\n".to_vec(),
            false,
        ),
        ("https://a.example/gz".into(), head_gz.into_bytes(), gz, false),
        (
            "https://a.example/empty".into(),
            b"HTTP/1.1 304 Not Modified\r\n\r\n".to_vec(),
            Vec::new(),
            false,
        ),
        (
            "https://a.example/cut".into(),
            b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 9000\r\n\r\n".to_vec(),
            big,
            true,
        ),
    ];
    for (i, (url, head, body, truncated)) in cases.iter().enumerate() {
        let request = format!(
            "GET {} HTTP/1.1\r\nHost: a.example\r\nUser-Agent: mannerly-test\r\n\r\n",
            url
        );
        w.exchange(&Exchange {
            url,
            date: UnixMillis::from_secs(1_795_168_800 + i as u64),
            ip: Some("127.0.0.1".parse().expect("ip")),
            request_head: request.as_bytes(),
            response_head: head,
            body,
            truncated: *truncated,
            // An evidence record, as a `metadata` record beside the request.
            evidence: (i % 2 == 0).then_some(br#"{"v":1,"url":"https://a.example/"}"#.as_slice()),
        })
        .expect("write");
    }
    let files = w.files();
    assert!(files.len() >= 2, "rotation at 1,500 bytes: {files:?}");
    let (mut passed, mut failed) = (0, 0);
    let mut metadata = 0;
    for f in &files {
        let check = Command::new(&python)
            .args(["-c", WARCIO, "check", "-v"])
            .arg(f)
            .output()
            .expect("run warcio");
        let index = Command::new(&python)
            .args(["-c", WARCIO, "index", "-f", "warc-type,warc-target-uri"])
            .arg(f)
            .output()
            .expect("run warcio");
        let listed = String::from_utf8_lossy(&index.stdout);
        metadata += listed.lines().filter(|l| l.contains("metadata")).count();
        let ok = check.status.success()
            && index.status.success()
            && listed
                .lines()
                .next()
                .is_some_and(|l| l.contains("warcinfo"));
        if ok {
            passed += 1;
        } else {
            failed += 1;
            eprintln!(
                "{}: check {:?}\n{}{}\nindex:\n{listed}",
                f.display(),
                check.status,
                String::from_utf8_lossy(&check.stdout),
                String::from_utf8_lossy(&check.stderr)
            );
        }
    }
    println!(
        "warcio check: {passed} passed, {failed} failed; {metadata} evidence metadata records"
    );
    if failed > 0 || passed == 0 || metadata != cases.len().div_ceil(2) {
        std::process::exit(1);
    }
}
