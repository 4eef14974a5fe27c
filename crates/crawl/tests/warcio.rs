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

/// Reads the evidence back with warcio's record iterator: every line of a
/// `metadata` record beside the `request` record its `WARC-Concurrent-To`
/// names (one such field per line, in order). Prints the lines, and the
/// lines whose request record is in the files.
const EVIDENCE: &str = r#"
import sys
from warcio.archiveiterator import ArchiveIterator
requests, named, lines = set(), [], 0
for path in sys.argv[1:]:
    with open(path, 'rb') as f:
        for rec in ArchiveIterator(f):
            h = rec.rec_headers
            if rec.rec_type == 'request':
                requests.add(h.get_header('WARC-Record-ID'))
            elif rec.rec_type == 'metadata':
                body = rec.content_stream().read().decode()
                ids = [v for k, v in h.headers if k == 'WARC-Concurrent-To']
                assert body.endswith('\n') and len(body.splitlines()) == len(ids), (body, ids)
                lines += len(ids)
                named += ids
print(lines, sum(1 for i in named if i in requests))
"#;

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
    // The evidence waits for its batch's record until then.
    w.sync().expect("sync");
    let files = w.files();
    assert!(files.len() >= 2, "rotation at 1,500 bytes: {files:?}");
    let (mut passed, mut failed) = (0, 0);
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
    let evidence = Command::new(&python)
        .args(["-c", EVIDENCE])
        .args(&files)
        .output()
        .expect("run warcio");
    let counts = String::from_utf8_lossy(&evidence.stdout).trim().to_owned();
    let written = cases.len().div_ceil(2);
    println!(
        "warcio check: {passed} passed, {failed} failed; evidence records, and those beside their request: {counts}"
    );
    if !evidence.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&evidence.stderr));
    }
    if failed > 0 || passed == 0 || counts != format!("{written} {written}") {
        std::process::exit(1);
    }
}
