//! A real browser for tests: Debian's chromium driven through chromedriver
//! (WebDriver, with `fantoccini`). `.ci/run` installs both; in CI their
//! absence fails the test, elsewhere the test says SKIPPED.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::ClientBuilder;

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A chromium session; chromedriver stops when it is dropped.
pub struct Browser {
    /// The WebDriver client.
    pub client: fantoccini::Client,
    _driver: Driver,
    _profile: tempfile::TempDir,
}

/// Where tests keep screenshots: `$MANNERLY_ARTIFACTS`, or
/// `target/ci-artifacts`.
pub fn artifacts() -> PathBuf {
    std::env::var_os("MANNERLY_ARTIFACTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/ci-artifacts"))
}

/// A script function, `brokenWords(root)`: the words (runs of non-space)
/// of the text under `root`, outside `pre`, that the browser laid out on
/// more than one line, i.e. broke inside. Prepend it to a script that
/// calls it.
pub const BROKEN_WORDS_JS: &str = r"function brokenWords(root) {
  const out = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (node.parentElement.closest('pre')) continue;
    const re = /\S+/g; let m;
    while ((m = re.exec(node.data)) !== null) {
      const r = document.createRange();
      r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
      const rects = Array.from(r.getClientRects()).filter(x => x.width > 0);
      if (new Set(rects.map(x => Math.round(x.top))).size > 1) out.push(m[0]);
    }
  }
  return out;
}
";

impl Browser {
    /// Starts headless chromium with `args` added to its command line and
    /// `options` merged into its `goog:chromeOptions` (a phone's viewport
    /// with `mobileEmulation`, say). `None` (after saying SKIPPED, naming
    /// `what`) when chromium or chromedriver is missing outside CI.
    ///
    /// # Panics
    ///
    /// In CI when either is missing, or when no session starts.
    pub async fn start(what: &str, args: &[&str], options: serde_json::Value) -> Option<Browser> {
        if !Path::new(CHROMIUM).exists() || !Path::new(CHROMEDRIVER).exists() {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must run {what}: {CHROMIUM} and {CHROMEDRIVER} are missing (apt-get install chromium chromium-driver)"
            );
            eprintln!("SKIPPED: {what} needs {CHROMIUM} and {CHROMEDRIVER}");
            return None;
        }
        // fantoccini speaks plain HTTP to chromedriver here, but its
        // client wants a process-wide TLS provider chosen.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        let driver = Driver(
            Command::new(CHROMEDRIVER)
                .arg(format!("--port={port}"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("chromedriver starts"),
        );
        let profile = tempfile::tempdir().expect("profile dir");
        let mut all_args = vec![
            "--headless".to_owned(),
            "--no-sandbox".into(),
            "--disable-gpu".into(),
            "--disable-quic".into(),
            "--no-first-run".into(),
            "--disable-background-networking".into(),
            "--disable-component-update".into(),
            "--disable-sync".into(),
            format!("--user-data-dir={}", profile.path().display()),
        ];
        all_args.extend(args.iter().map(|a| (*a).to_owned()));
        let mut chrome = serde_json::json!({ "binary": CHROMIUM, "args": all_args });
        if let (Some(c), Some(extra)) = (chrome.as_object_mut(), options.as_object()) {
            c.extend(extra.clone());
        }
        let mut caps = serde_json::Map::new();
        caps.insert("goog:chromeOptions".into(), chrome);
        // chromedriver takes a moment to listen.
        for _ in 0..100 {
            let connected = ClientBuilder::rustls()
                .expect("tls")
                .capabilities(caps.clone())
                .connect(&format!("http://127.0.0.1:{port}"))
                .await;
            if let Ok(client) = connected {
                return Some(Browser {
                    client,
                    _driver: driver,
                    _profile: profile,
                });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("no WebDriver session with chromium");
    }

    /// Saves a screenshot as `name` in [`artifacts`].
    pub async fn screenshot(&self, name: &str) {
        if let Ok(png) = self.client.screenshot().await {
            let dir = artifacts();
            let _ = std::fs::create_dir_all(&dir);
            let path = dir.join(name);
            std::fs::write(&path, png).expect("write the screenshot");
            eprintln!("screenshot: {}", path.display());
        }
    }
}
