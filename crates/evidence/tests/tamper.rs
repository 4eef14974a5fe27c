//! A bundle verifies as exported, and any single edit, drop, insertion
//! or swap of its records, or checkpoints signed by another key, is
//! refused.

use std::sync::Arc;

use base64::Engine;
use ed25519_dalek::{Signer as _, SigningKey};
use mannerly_evidence::{
    export, verify, Bundle, Delay, DelaySource, EvidenceError, EvidenceLog, Kind, PublicKey,
    Record, Refusal, SignatureProblem, Signer, Window,
};
use mannerly_time::UnixMillis;
use proptest::prelude::*;

struct Key(SigningKey);

impl Signer for Key {
    fn public_key(&self) -> PublicKey {
        PublicKey {
            kty: "OKP".into(),
            crv: "Ed25519".into(),
            x: base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(self.0.verifying_key().as_bytes()),
        }
    }
    fn sign(&self, message: &[u8]) -> [u8; 64] {
        self.0.sign(message).to_bytes()
    }
}

const T0: u64 = 1_795_168_800_000;

fn record(host: &str, path: &str, at: u64, keyid: Option<&str>) -> Record {
    Record {
        time: UnixMillis(at).to_rfc3339_millis(),
        url: format!("https://{host}{path}"),
        host: host.into(),
        kind: Kind::Page,
        user_agent: "ExampleBot/1.0".into(),
        keyid: keyid.map(str::to_owned),
        delay: Delay {
            required_s: 1.5,
            source: DelaySource::CrawlDelay,
            since_previous_s: Some(1.502),
        },
        ..Record::blank()
    }
}

/// A crawl of three hosts with `n` requests to `a.test`, checkpointed
/// every `every` records; its bundle for `a.test`, and the key.
fn signed_bundle(n: usize, every: usize) -> (Bundle, PublicKey, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let key = Arc::new(Key(SigningKey::from_bytes(&[7; 32])));
    let public = key.public_key();
    let keyid = public.thumbprint();
    let mut log = EvidenceLog::open(dir.path(), Some(key), None).expect("opens");
    let mut at = T0;
    for i in 0..n {
        for host in ["a.test", "b.test", "c.test"] {
            at += 100;
            log.append(record(host, &format!("/p{i}"), at, Some(&keyid)))
                .expect("append");
        }
        if (i + 1) % every == 0 {
            log.checkpoint(UnixMillis(at), true).expect("checkpoint");
        }
    }
    log.checkpoint(UnixMillis(at + 1), true)
        .expect("checkpoint");
    let bundle = export(&[dir.path().to_path_buf()], "a.test", Window::default()).expect("export");
    (bundle, public, dir)
}

#[test]
fn an_exported_bundle_verifies_and_shows_only_its_host() {
    let (bundle, key, _dir) = signed_bundle(12, 5);
    let v = verify(&bundle, Some(&key)).expect("intact");
    assert_eq!((v.records, v.chains, v.signed), (12, 1, true));
    let text = serde_json::to_string(&bundle).expect("json");
    assert!(
        !text.contains("b.test") && !text.contains("c.test"),
        "other hosts are only hashes"
    );
    assert!(bundle.checkpoints.len() >= 2);
}

#[test]
fn a_window_of_records_still_reaches_its_checkpoint() {
    let (_, key, dir) = signed_bundle(12, 5);
    let window = Window {
        since: Some(T0 + 300 * 3),
        until: Some(T0 + 300 * 6),
    };
    let bundle = export(&[dir.path().to_path_buf()], "a.test", window).expect("export");
    assert_eq!(bundle.records.len(), 3);
    assert!(
        !bundle.tails.values().all(Vec::is_empty),
        "the records after the window are digests"
    );
    verify(&bundle, Some(&key)).expect("intact");
    for cut in [0, 2] {
        let mut b = bundle.clone();
        b.records.remove(cut);
        let why = verify(&b, Some(&key)).expect_err("a record of the window left out");
        assert!(
            matches!(
                why,
                Refusal::LeftOut { .. } | Refusal::NotFirstAfter { .. } | Refusal::Unreached { .. }
            ),
            "{why}"
        );
    }
}

#[test]
fn a_chain_past_its_last_checkpoint_is_refused_until_one_is_written() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut log = EvidenceLog::open(dir.path(), None, None).expect("opens");
    log.append(record("a.test", "/", T0, None)).expect("append");
    log.checkpoint(UnixMillis(T0), true).expect("checkpoint");
    log.append(record("a.test", "/x", T0 + 10, None))
        .expect("append");
    let b = export(&[dir.path().to_path_buf()], "a.test", Window::default()).expect("export");
    let why = verify(&b, None).expect_err("uncovered");
    assert!(
        matches!(why, Refusal::Uncovered { from: 1, to: 1, .. }),
        "{why}"
    );
    drop(log);
    // Opened again (a resumed crawl), the log goes on with the same chain.
    let mut log = EvidenceLog::open(dir.path(), None, None).expect("reopens");
    log.checkpoint(UnixMillis(T0 + 20), true)
        .expect("checkpoint");
    let b = export(&[dir.path().to_path_buf()], "a.test", Window::default()).expect("export");
    assert!(!verify(&b, None).expect("covered").signed);
}

#[test]
fn a_line_cut_by_a_kill_is_dropped_and_the_chain_goes_on() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut log = EvidenceLog::open(dir.path(), None, None).expect("opens");
    log.append(record("a.test", "/", T0, None)).expect("append");
    drop(log);
    let path = dir.path().join("records.jsonl");
    let mut bytes = std::fs::read(&path).expect("read");
    bytes.extend_from_slice(br#"{"chain":"cut"#);
    std::fs::write(&path, bytes).expect("write");
    assert_eq!(reopen_append_and_verify(dir.path(), "/2", T0 + 5), 2);
}

#[test]
fn held_records_reach_disk_together_and_only_when_flushed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("records.jsonl");
    let lines = || {
        std::fs::read_to_string(&path)
            .expect("read")
            .lines()
            .count()
    };
    let mut log = EvidenceLog::open(dir.path(), None, None).expect("opens");
    let first = log.hold(record("a.test", "/1", T0, None)).expect("holds");
    log.hold(record("b.test", "/1", T0 + 1, None))
        .expect("holds");
    assert_eq!(lines(), 0, "held, not yet written");
    log.flush().expect("flush");
    assert_eq!(lines(), 2, "written together");
    let on_disk = std::fs::read(&path).expect("read");
    assert!(
        on_disk.starts_with(&first),
        "the line returned is the line written"
    );
    // A checkpoint flushes what is held: it covers only records on disk.
    log.hold(record("a.test", "/2", T0 + 2, None))
        .expect("holds");
    log.checkpoint(UnixMillis(T0 + 3), true)
        .expect("checkpoint");
    assert_eq!(lines(), 3);
    // Held when the log is dropped (its request never left): not written,
    // and the chain goes on from the last record on disk.
    log.hold(record("a.test", "/never-sent", T0 + 4, None))
        .expect("holds");
    drop(log);
    assert_eq!(lines(), 3);
    assert_eq!(reopen_append_and_verify(dir.path(), "/3", T0 + 5), 3);
}

/// Opens the unsigned log in `dir` again, appends a request to `a.test`
/// `path` at `at`, checkpoints, and verifies `a.test`'s bundle: its
/// record count.
fn reopen_append_and_verify(dir: &std::path::Path, path: &str, at: u64) -> usize {
    let mut log = EvidenceLog::open(dir, None, None).expect("reopens");
    log.append(record("a.test", path, at, None))
        .expect("append");
    log.checkpoint(UnixMillis(at + 1), true)
        .expect("checkpoint");
    let b = export(&[dir.to_path_buf()], "a.test", Window::default()).expect("export");
    verify(&b, None).expect("intact").records
}

#[test]
fn a_log_begun_with_one_key_refuses_another() {
    let dir = tempfile::tempdir().expect("temp dir");
    let k1 = Arc::new(Key(SigningKey::from_bytes(&[1; 32])));
    let k1_thumbprint = k1.public_key().thumbprint();
    drop(EvidenceLog::open(dir.path(), Some(k1), None).expect("opens"));
    let k2 = Arc::new(Key(SigningKey::from_bytes(&[2; 32])));
    let err = EvidenceLog::open(dir.path(), Some(k2), None).expect_err("another key");
    assert!(
        matches!(&err, EvidenceError::KeyChanged { had: Some(k), .. } if *k == k1_thumbprint),
        "{err}"
    );
}

/// One tampering of a bundle's records.
#[derive(Debug, Clone)]
enum Tamper {
    Edit(usize, u8),
    Drop(usize),
    Insert(usize, usize),
    Swap(usize, usize),
}

fn apply(b: &mut Bundle, t: &Tamper) -> bool {
    let n = b.records.len();
    match *t {
        Tamper::Edit(i, field) => {
            let r = &mut b.records[i % n];
            match field % 4 {
                0 => r["url"] = format!("{}x", r["url"].as_str().unwrap_or("")).into(),
                1 => r["delay"]["since_previous_s"] = serde_json::json!(9.0),
                2 => r["robots"] = serde_json::json!({"url": "https://a.test/robots.txt"}),
                _ => r["user_agent"] = "Other/1.0".into(),
            }
        }
        Tamper::Drop(i) => {
            b.records.remove(i % n);
        }
        Tamper::Insert(from, to) => {
            let copy = b.records[from % n].clone();
            b.records.insert(to % (n + 1), copy);
        }
        Tamper::Swap(i, j) => {
            if i % n == j % n {
                return false;
            }
            b.records.swap(i % n, j % n);
        }
    }
    true
}

fn tamper() -> impl Strategy<Value = Tamper> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, f)| Tamper::Edit(i, f)),
        any::<usize>().prop_map(Tamper::Drop),
        (any::<usize>(), any::<usize>()).prop_map(|(i, j)| Tamper::Insert(i, j)),
        (any::<usize>(), any::<usize>()).prop_map(|(i, j)| Tamper::Swap(i, j)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn any_single_tampering_is_refused(n in 1usize..9, every in 1usize..5, t in tamper()) {
        let (mut bundle, key, _dir) = signed_bundle(n, every);
        prop_assume!(apply(&mut bundle, &t));
        prop_assert!(verify(&bundle, Some(&key)).is_err(), "{t:?} passed with the key");
        prop_assert!(verify(&bundle, None).is_err(), "{t:?} passed without a key");
    }

    #[test]
    fn checkpoints_signed_by_another_key_are_refused(n in 1usize..6, seed in 8u8..200) {
        let (mut bundle, key, _dir) = signed_bundle(n, 2);
        let thief = Key(SigningKey::from_bytes(&[seed; 32]));
        for c in &mut bundle.checkpoints {
            c.sign(&thief);
        }
        for w in &mut bundle.writers {
            w.key = Some(thief.public_key());
        }
        let with_key = verify(&bundle, Some(&key)).expect_err("another key");
        prop_assert!(
            matches!(&with_key, Refusal::Signature { problem: SignatureProblem::OtherKey { .. }, .. }),
            "{}",
            with_key
        );
        // Without the key asked for, the records' own keyid gives it away.
        let alone = verify(&bundle, None).expect_err("another key");
        prop_assert!(matches!(&alone, Refusal::OtherKey { .. }), "{}", alone);
    }
}
