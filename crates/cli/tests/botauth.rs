//! `mannerly keys`, `sign`, `verify`.

use std::io::Write;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_mannerly");

fn run(args: &[&str], stdin: &str) -> std::process::Output {
    let mut c = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    c.stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write");
    c.wait_with_output().expect("wait")
}

#[test]
fn generate_sign_verify_and_tamper() {
    let dir = std::env::temp_dir().join(format!("mannerly-keys-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().expect("dir");
    let o = run(&["keys", "generate", "--out", d], "");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("private.pem"))
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    assert_eq!(
        run(&["keys", "generate", "--out", d], "").status.code(),
        Some(2),
        "no overwrite"
    );
    let key = dir.join("private.pem");
    let jwk = dir.join("public.jwk.json");
    other_tools_read_the_key(&key);
    let o = run(
        &[
            "sign",
            "--key",
            key.to_str().expect("k"),
            "--agent-origin",
            "https://crawler.example",
            "--component",
            "@path",
            "https://example.com/a",
        ],
        "",
    );
    let headers = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        headers.contains("Signature-Agent: sig1=\"https://crawler.example\""),
        "{headers}"
    );
    let request = format!("GET /a HTTP/1.1\nHost: example.com\n{headers}\n");
    let o = run(
        &["verify", "-", "--key", jwk.to_str().expect("j"), "--json"],
        &request,
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["outcome"], "verified");
    let tampered = request.replace("GET /a", "GET /b");
    let o = run(
        &["verify", "-", "--key", jwk.to_str().expect("j")],
        &tampered,
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("invalid: the signature does not match"));
    let o = run(
        &["verify", "-", "--key", jwk.to_str().expect("j")],
        "GET /a HTTP/1.1\nHost: example.com\n\n",
    );
    assert_eq!(
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).starts_with("unsigned")
        ),
        (Some(1), true)
    );
    let o = run(&["verify", "-"], "not a request");
    assert_eq!(o.status.code(), Some(2));
    let o = run(
        &[
            "keys",
            "directory",
            "--key",
            key.to_str().expect("k"),
            "--origin",
            "https://crawler.example",
        ],
        "",
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with(
            "HTTP/1.1 200 OK\nContent-Type: application/http-message-signatures-directory+json\n"
        ),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The private key file is one OpenSSL 3 and Python's `cryptography` read
/// (PKCS#8 v1; the v2 form was refused by both). OpenSSL is required in
/// CI (`.ci/run` installs it); `cryptography` runs where `MANNERLY_PYTHON`
/// names the CI venv.
fn other_tools_read_the_key(key: &std::path::Path) {
    match Command::new("openssl")
        .args(["pkey", "-noout", "-in"])
        .arg(key)
        .output()
    {
        Ok(o) => assert!(
            o.status.success(),
            "openssl pkey: {}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(_) if std::env::var_os("CI").is_none() => {
            eprintln!("SKIPPED: openssl is not installed")
        }
        Err(e) => panic!("CI must check the key with openssl: {e}"),
    }
    if let Some(python) = std::env::var_os("MANNERLY_PYTHON") {
        let o = Command::new(python)
            .args([
                "-c",
                "import sys; from cryptography.hazmat.primitives.serialization import load_pem_private_key as l; l(open(sys.argv[1], 'rb').read(), None)",
            ])
            .arg(key)
            .output()
            .expect("python");
        assert!(
            o.status.success(),
            "cryptography: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

#[test]
fn verify_ip_json_inside_a_published_range_is_json() {
    // Before: an IP inside --ranges printed text even with --json.
    let path = std::env::temp_dir().join(format!("mannerly-ranges-{}.json", std::process::id()));
    std::fs::write(&path, r#"{"prefixes": [{"ipv4Prefix": "192.0.2.0/24"}]}"#).expect("write");
    let ranges = path.to_str().expect("path");
    let o = run(
        &[
            "verify-ip",
            "192.0.2.7",
            "--domain",
            "googlebot.com",
            "--ranges",
            ranges,
            "--json",
        ],
        "",
    );
    let _ = std::fs::remove_file(&path);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    assert_eq!(v["result"], "verified");
    assert_eq!(v["range"], ranges);
}

/// `--ranges` reads the files `--ip-ranges` reads elsewhere: ipverse's
/// crawlers.json by `--token`, and says what is missing without it.
#[test]
fn verify_ip_reads_ranges_by_service_for_a_token() {
    let path = std::env::temp_dir().join(format!("mannerly-services-{}.json", std::process::id()));
    std::fs::write(
        &path,
        r#"{"services":{"Bingbot":{"user_agent_patterns":["*bingbot*"],"ipv4":["192.0.2.0/24"],"ipv6":[]}}}"#,
    )
    .expect("write");
    let ranges = path.to_str().expect("path");
    let verify = |extra: &[&str]| {
        let mut args = vec!["verify-ip", "192.0.2.7", "--domain", "search.msn.com"];
        args.extend_from_slice(&["--ranges", ranges]);
        args.extend_from_slice(extra);
        run(&args, "")
    };
    let o = verify(&["--token", "bingbot"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stdout)
        .starts_with("verified: 192.0.2.7 is in a published range"));
    let o = verify(&[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("give --token NAME"),
        "{o:?}"
    );
    let o = verify(&["--token", "CCBot"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no service there names `CCBot`"),
        "{o:?}"
    );
    let _ = std::fs::remove_file(&path);
}

#[test]
fn keys_and_sign_refuse_what_verifiers_could_not_use() {
    let dir = std::env::temp_dir().join(format!("mannerly-keys-bad-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().expect("dir");
    assert_eq!(
        run(&["keys", "generate", "--out", d], "").status.code(),
        Some(0)
    );
    let key = dir.join("private.pem");
    let key = key.to_str().expect("key");
    let jwks = "https://crawler.example/.well-known/http-message-signatures-directory";
    // Each is a usage error naming the flag and what would do.
    let directory = |more: &str| format!("keys directory --key {key} {more}");
    let sign = |more: &str| format!("sign --key {key} {more}");
    for (args, says) in [
        (
            directory("--origin crawler.example"),
            "like https://example.com/",
        ),
        (
            directory("--origin https://crawler.example/keys?x"),
            "give https://crawler.example",
        ),
        (
            directory("--origin https://c.example --validity 99999999999999999"),
            "not in 1..=86400",
        ),
        (
            directory(&format!("--key {key} --origin https://c.example")),
            "are the same key",
        ),
        (
            sign("--signature-agent crawler.example https://e.org/"),
            "give the https URL of the key directory",
        ),
        (
            sign("--signature-agent http://crawler.example/k https://e.org/"),
            "served over https",
        ),
        (
            sign(&format!("--signature-agent {jwks} e.org/page")),
            "is not an absolute URL",
        ),
        (
            sign(&format!(
                "--signature-agent {jwks} --method G\u{1} https://e.org/"
            )),
            "not an HTTP method",
        ),
        (
            sign(&format!(
                "--signature-agent {jwks} --validity 0 https://e.org/"
            )),
            "not in 1..=86400",
        ),
    ] {
        let args: Vec<&str> = args.split(' ').collect();
        let o = run(&args, "");
        let said = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {said}");
        assert!(said.contains(says), "{args:?}: {said}");
        assert!(!said.contains("structured field"), "{args:?}: {said}");
    }
    let o = run(
        &[
            "sign",
            "--key",
            key,
            "--signature-agent",
            jwks,
            "--method",
            "POST",
            "https://e.org/a?b",
        ],
        "",
    );
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
