//! End-to-end tests of the `mannerly` binary.

use std::io::Write;
use std::process::{Command, Output, Stdio};

mod common;
use common::mannerly;

const ROBOTS: &str = "User-agent: *\nDisallow: /private/\nAllow: /private/press/\n\nUser-agent: Googlebot\nDisallow: /search\n";

fn robots_file(body: &str) -> tempfile_lite::TempFile {
    tempfile_lite::TempFile::new(body.as_bytes())
}

/// A tiny temp-file helper so the tests need no extra crates.
mod tempfile_lite {
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicUsize, Ordering};

    pub struct TempFile(pub PathBuf);
    static N: AtomicUsize = AtomicUsize::new(0);

    impl TempFile {
        pub fn new(body: &[u8]) -> Self {
            let n = N.fetch_add(1, Ordering::SeqCst);
            let path = std::env::temp_dir()
                .join(format!("mannerly-cli-test-{}-{n}.txt", std::process::id()));
            std::fs::write(&path, body).expect("write temp file");
            TempFile(path)
        }
        pub fn path(&self) -> &str {
            self.0.to_str().expect("utf-8 temp path")
        }
    }
    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `--help` opens with what the command does today, and names every
/// subcommand.
#[test]
fn help_says_what_mannerly_does() {
    let o = mannerly(&["--help"], b"");
    let text = stdout(&o);
    let first = text.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("Polite, accountable web crawling: crawl"),
        "{first}"
    );
    for sub in [
        "crawl", "recrawl", "check", "lint", "audit", "serve", "verify", "demo",
    ] {
        assert!(
            text.contains(&format!("\n  {sub} ")),
            "{sub} missing:\n{text}"
        );
    }
}

#[test]
fn check_urls_from_arguments() {
    let f = robots_file(ROBOTS);
    let o = mannerly(
        &[
            "check",
            f.path(),
            "--agent",
            "OtherBot",
            "https://e.com/private/a",
            "https://e.com/private/press/b",
            "/c",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        "disallowed\thttps://e.com/private/a\tline 2: Disallow: /private/\n\
         allowed\thttps://e.com/private/press/b\tline 3: Allow: /private/press/\n\
         allowed\t/c\tno rule matched\n"
    );
}

#[test]
fn all_allowed_exits_zero_and_named_group_replaces_star() {
    let f = robots_file(ROBOTS);
    let o = mannerly(
        &["check", f.path(), "--agent", "googlebot", "/private/a"],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).starts_with("allowed\t/private/a\t"));
}

#[test]
fn urls_from_stdin_as_json() {
    let f = robots_file(ROBOTS);
    let o = mannerly(
        &["check", f.path(), "--agent", "Googlebot", "--json"],
        b"/search?q=1\r\n\n/ok\n",
    );
    assert_eq!(o.status.code(), Some(1));
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["url"], "/search?q=1");
    assert_eq!(lines[0]["allowed"], false);
    assert_eq!(lines[0]["rule"]["line"], 6);
    assert_eq!(lines[0]["rule"]["kind"], "disallow");
    assert_eq!(lines[0]["agent_match"], "specific");
    assert_eq!(lines[1]["rule"], serde_json::Value::Null);
}

#[test]
fn robots_from_stdin() {
    let o = mannerly(
        &["check", "-", "--agent", "x", "/private/z"],
        ROBOTS.as_bytes(),
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).starts_with("disallowed"));
    // A blank agent names no group: refused, not answered from `*`.
    let o = mannerly(&["check", "-", "--agent", " ", "/a"], ROBOTS.as_bytes());
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("name a crawler's product token"));
}

#[test]
fn rfc_mode_normalises_urls() {
    let f = robots_file("User-agent: *\nDisallow: /~joe/\n");
    let google = mannerly(&["check", f.path(), "--agent", "x", "/%7Ejoe/a"], b"");
    let rfc = mannerly(
        &["check", f.path(), "--agent", "x", "--rfc", "/%7Ejoe/a"],
        b"",
    );
    assert_eq!(google.status.code(), Some(0));
    assert_eq!(rfc.status.code(), Some(1));
}

#[test]
fn input_errors_exit_two_with_a_clear_message() {
    let o = mannerly(
        &["check", "/definitely/not/here.txt", "--agent", "x", "/"],
        b"",
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("/definitely/not/here.txt"), "{err}");
    let o = mannerly(&["check", "-", "--agent", "x"], b"");
    assert_eq!(o.status.code(), Some(2));
    let o = mannerly(&["check", "x.txt"], b"");
    assert_eq!(o.status.code(), Some(2), "missing --agent is a usage error");
    let f = robots_file(ROBOTS);
    let o = mannerly(&["check", f.path(), "--agent", "x"], b"/ok\n\xff\xfe\n");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("line 2"));
    let o = mannerly(
        &["check", f.path(), "--agent", "x", "--max-bytes", "10", "/"],
        b"",
    );
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn invalid_agent_gets_a_hint() {
    let f = robots_file(ROBOTS);
    for (agent, hint) in [
        ("Googlebot/2.1", Some("ask for Googlebot")),
        (
            "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
            Some("ask for Googlebot"),
        ),
        // A crawler's own name with digits: no other name is offered.
        ("MJ12bot", None),
    ] {
        let o = mannerly(&["check", f.path(), "--agent", agent, "/search"], b"");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("is not a product token"), "{agent}: {err}");
        assert_eq!(
            hint.is_some_and(|h| err.contains(h)),
            hint.is_some(),
            "{agent}: {err}"
        );
        assert_eq!(err.contains("ask for"), hint.is_some(), "{agent}: {err}");
    }
}

#[test]
fn lint_reports_and_exit_codes() {
    let bad = robots_file("User-agent: *\nDisalow: /tmp\nDisallow: tmp\n");
    let o = mannerly(&["lint", bad.path()], b"");
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.contains(&format!("{}:2:1: warning[typo-accepted]:", bad.path())),
        "{out}"
    );
    assert!(
        out.contains(&format!("{}:3:11: error[path-not-absolute]:", bad.path())),
        "{out}"
    );
    assert!(out.contains("suggestion: Disallow: /tmp"));

    let warn_only = robots_file("User-agent: *\nDisalow: /tmp\n");
    assert_eq!(
        mannerly(&["lint", warn_only.path()], b"").status.code(),
        Some(0)
    );

    let o = mannerly(&["lint", "--json", "-"], b"Disallow: /x\n");
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value =
        serde_json::from_str(stdout(&o).lines().next().expect("a line")).expect("json");
    assert_eq!(v["code"], "rule-outside-group");
    assert_eq!(v["severity"], "error");
    assert_eq!(v["line"], 1);
    assert_eq!(v["file"], "<stdin>");

    // A UTF-16 file (as Windows' Notepad once saved it): one error, said
    // once, and `check` counts what `lint` shows.
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(
            "User-agent: *\r\nDisallow: /private\r\n"
                .encode_utf16()
                .flat_map(u16::to_le_bytes),
        )
        .collect();
    let o = mannerly(&["lint", "-"], &utf16);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(out.contains("<stdin>:1:1: error[utf16]"), "{out}");
    assert!(!out.contains("nul-byte"), "{out}");
    let o = mannerly(&["check", "-", "--agent", "Foo", "/private"], &utf16);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("has 1 error(s)"), "{err}");
}

#[test]
fn example_in_the_repo_is_clean_and_checks() {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/robots.txt");
    assert_eq!(mannerly(&["lint", example], b"").status.code(), Some(0));
    let o = mannerly(
        &[
            "check",
            example,
            "--agent",
            "Googlebot",
            "/shop/",
            "/search",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o)
        .contains("allowed\t/shop/\tline 12: Allow: /shop/index.html (which also allows /shop/)"));
}

/// Runs mannerly with stdin fed endlessly (as `yes |` would) until it
/// exits; the feeder stops when mannerly closes the pipe.
fn mannerly_endless_stdin(args: &[&str], line: &'static [u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mannerly"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mannerly");
    let mut stdin = child.stdin.take().expect("stdin");
    let feeder = std::thread::spawn(move || {
        let block = line.repeat(4096);
        // Stops with a broken pipe once mannerly has read what it uses.
        while stdin.write_all(&block).is_ok() {}
    });
    let out = child.wait_with_output().expect("wait");
    feeder.join().expect("feeder");
    out
}

#[test]
fn endless_input_is_read_only_as_far_as_it_is_used() {
    // Before: the whole input was read before the cut, so `/dev/zero` or
    // `yes |` grew without bound until memory ran out.
    let o = mannerly(&["lint", "/dev/zero"], b"");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("/dev/zero: longer than 512000 bytes; only those are read"),
        "{err}"
    );
    let o = mannerly_endless_stdin(&["check", "-", "--agent", "a", "/x"], b"Disallow: /x\n");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("<stdin>: longer than 512000 bytes"), "{err}");
    assert!(stdout(&o).contains("/x"), "{}", stdout(&o));
    // The same for a request to verify.
    let o = mannerly(&["verify", "/dev/zero"], b"");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("longer than 1048576 bytes"), "{err}");
}

#[test]
fn a_path_as_typed_is_judged_as_a_crawler_requests_it() {
    let robots = robots_file("User-agent: *\nDisallow: /wiki/Käyttäjä:\n");
    let path = robots.0.to_str().expect("utf-8 path");
    let o = mannerly(&["check", path, "--agent", "foo", "/wiki/Käyttäjä:"], b"");
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.starts_with("disallowed\t/wiki/Käyttäjä:\tline 2"),
        "{out}"
    );
    assert!(
        out.contains("requested as /wiki/K%C3%A4ytt%C3%A4j%C3%A4:"),
        "{out}"
    );
    let o = mannerly(
        &["check", path, "--agent", "foo", "--json", "/wiki/Käyttäjä:"],
        b"",
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["allowed"], false);
    assert_eq!(v["requested"], "/wiki/K%C3%A4ytt%C3%A4j%C3%A4:");
}

#[test]
fn check_shows_the_aipref_preferences_of_vocabulary_08() {
    let robots = b"User-agent: *\nDisallow: /private/\nContent-Usage: train-ai=n, ai-use=n\nContent-Usage: /news/ search=y\n";
    let o = mannerly(
        &[
            "check",
            "--agent",
            "ExampleBot",
            "-",
            "https://example.com/news/today",
            "https://example.com/about",
        ],
        robots,
    );
    let out = String::from_utf8_lossy(&o.stdout);
    // The rule with the longest matching path decides (attach-05).
    assert!(
        out.contains("content-usage train-ai=unknown, ai-use=unknown, search=y (line 4)"),
        "{out}"
    );
    assert!(
        out.contains("content-usage train-ai=n, ai-use=n, search=unknown (line 3)"),
        "{out}"
    );
    let o = mannerly(
        &[
            "check",
            "--agent",
            "ExampleBot",
            "-",
            "https://example.com/about",
            "--json",
        ],
        robots,
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["content_usage"]["ai_use"], "disallowed", "{v}");
}

/// `mannerly serve` checks what-if identities as `mannerly audit` does, by
/// the same flags: Google's ranges given, offline, the Googlebot inside
/// them is verified and the one outside spoofed; `--no-identity` checks
/// none.
#[test]
fn serve_checks_what_if_identities_by_the_audits_flags() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ranges = dir.path().join("google.json");
    std::fs::write(
        &ranges,
        r#"{"prefixes": [{"ipv4Prefix": "66.249.64.0/27"}]}"#,
    )
    .expect("ranges");
    let googlebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
    let log: String = ["66.249.64.1", "203.0.113.9"]
        .iter()
        .map(|ip| format!("{ip} - - [01/Mar/2026:10:00:00 +0000] \"GET /a HTTP/1.1\" 200 5 \"-\" \"{googlebot}\"\n"))
        .collect();
    let body =
        serde_json::json!({"robots": "", "after": "User-agent: *\nDisallow: /a\n", "log": log})
            .to_string();
    let given = format!("Google={}", ranges.display());
    let cache = dir.path().join("cache");
    let checked = serve_and_post(
        &[
            "--offline",
            "--ip-ranges",
            &given,
            "--cache",
            cache.to_str().expect("utf-8"),
        ],
        "/api/whatif",
        &body,
    );
    let v: serde_json::Value = serde_json::from_str(&checked).expect("JSON");
    assert_eq!(v["identity_checked"], true, "{v}");
    let identities: Vec<&str> = v["bots"]
        .as_array()
        .expect("bots")
        .iter()
        .filter_map(|b| b["identity"].as_str())
        .collect();
    assert!(
        identities.contains(&"verified") && identities.contains(&"spoofed"),
        "{v}"
    );
    let plain = serve_and_post(&["--no-identity"], "/api/whatif", &body);
    let v: serde_json::Value = serde_json::from_str(&plain).expect("JSON");
    assert_eq!(v["identity_checked"], false, "{v}");
    assert_eq!(v["bots"][0]["identity"], "unverified", "{v}");
}

/// Starts `mannerly serve` on a free port with `flags`, posts `body` to
/// `path`, stops it, and returns the answer's body.
fn serve_and_post(flags: &[&str], path: &str, body: &str) -> String {
    use std::io::{BufRead, BufReader, Read};
    let mut child = Command::new(env!("CARGO_BIN_EXE_mannerly"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(flags)
        .stderr(Stdio::piped())
        .spawn()
        .expect("mannerly serve starts");
    let mut said = String::new();
    BufReader::new(child.stderr.take().expect("stderr"))
        .read_line(&mut said)
        .expect("its first line");
    let addr = said
        .split("http://")
        .nth(1)
        .and_then(|s| s.split('/').next())
        .unwrap_or_else(|| panic!("no address in {said:?}"))
        .to_owned();
    let mut stream = std::net::TcpStream::connect(&addr).expect("connect");
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("send");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("answer");
    let _ = child.kill();
    let _ = child.wait();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default()
}
