//! How a stored robots.txt body is written and read back: as text when it
//! is UTF-8, as an array of byte values otherwise, and either way the same
//! bytes again (`policy::body_json`).

use mannerly_fetch::policy::GoodCopy;
use mannerly_fetch::UnixMillis;
use proptest::prelude::*;

fn copy(body: &[u8]) -> GoodCopy {
    GoodCopy {
        body: body.to_vec(),
        fetched_at: UnixMillis(1_795_000_000_000),
        status: 200,
        etag: Some("\"v1\"".into()),
        last_modified: None,
        no_store: false,
    }
}

fn body_json(c: &GoodCopy) -> serde_json::Value {
    let v: serde_json::Value = serde_json::to_value(c).expect("to value");
    v["body"].clone()
}

#[test]
fn a_utf8_body_is_stored_as_its_text() {
    let text = "User-agent: *\nDisallow: /private/\n# caf\u{e9}\n";
    let c = copy(text.as_bytes());
    assert_eq!(body_json(&c), serde_json::Value::String(text.into()));
    let json = serde_json::to_string(&c).expect("json");
    let back: GoodCopy = serde_json::from_str(&json).expect("read back");
    assert_eq!(back, c);
}

#[test]
fn a_body_that_is_not_utf8_is_stored_as_bytes_and_read_back_whole() {
    // Latin-1: "Disallow: /caf\xe9".
    let mut body = b"Disallow: /caf".to_vec();
    body.push(0xe9);
    let c = copy(&body);
    assert!(body_json(&c).is_array());
    let back: GoodCopy =
        serde_json::from_str(&serde_json::to_string(&c).expect("json")).expect("read back");
    assert_eq!(back.body, body);
}

#[test]
fn a_body_stored_as_an_array_by_an_earlier_version_reads_back() {
    let json = r#"{"body":[68,105,115,97,108,108,111,119,58,32,47],"fetched_at":5,
                   "status":200,"etag":null,"last_modified":null,"no_store":false}"#;
    let c: GoodCopy = serde_json::from_str(json).expect("read");
    assert_eq!(c.body, b"Disallow: /");
}

#[test]
fn a_body_of_neither_kind_is_an_error_that_says_what_was_expected() {
    for body in ["5", "[300]", "{}"] {
        let json = format!(
            r#"{{"body":{body},"fetched_at":5,"status":200,"etag":null,"last_modified":null,"no_store":false}}"#
        );
        let e = serde_json::from_str::<GoodCopy>(&json).expect_err(body);
        let msg = e.to_string();
        assert!(
            msg.contains("a robots.txt body") || msg.contains("u8"),
            "{body}: {msg}"
        );
    }
}

#[test]
fn text_is_about_a_quarter_of_the_array() {
    let text = "User-agent: *\nDisallow: /search\nDisallow: /private/\nAllow: /private/open\n\
                Sitemap: https://example.com/sitemap.xml\n";
    let as_text = body_json(&copy(text.as_bytes())).to_string();
    let as_array = serde_json::to_string(&text.as_bytes().to_vec()).expect("json");
    assert!(
        as_text.len() * 3 < as_array.len(),
        "{} vs {}",
        as_text.len(),
        as_array.len()
    );
}

proptest! {
    #[test]
    fn any_body_reads_back_byte_for_byte(body in proptest::collection::vec(any::<u8>(), 0..600)) {
        let c = copy(&body);
        let json = serde_json::to_string(&c).expect("json");
        let back: GoodCopy = serde_json::from_str(&json).expect("read back");
        prop_assert_eq!(back, c);
    }

    #[test]
    fn any_text_body_reads_back_and_is_stored_as_text(text in "\\PC*") {
        let c = copy(text.as_bytes());
        prop_assert_eq!(body_json(&c), serde_json::Value::String(text.clone()));
        let back: GoodCopy = serde_json::from_str(&serde_json::to_string(&c).expect("json")).expect("read back");
        prop_assert_eq!(back.body, text.into_bytes());
    }
}
