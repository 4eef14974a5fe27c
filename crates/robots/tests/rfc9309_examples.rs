//! Every example of RFC 9309 §2.2.2 (Figure 4) and §2.2.3 (Figures 5 and
//! 6), in the strict mode: a rule written as the RFC's "path" column must
//! match the URL of its "path to match" column.

use mannerly_robots::{Mode, ParseOptions, Robots};

fn strict(body: &str) -> Robots {
    Robots::parse_with(
        body.as_bytes(),
        ParseOptions {
            mode: Mode::Rfc9309,
            ..ParseOptions::default()
        },
    )
}

/// `Disallow: {rule}` for everyone: is `url` disallowed?
fn blocks(rule: &str, url: &str) -> bool {
    !strict(&format!("User-agent: *\nDisallow: {rule}\n")).is_allowed("ExampleBot", url)
}

#[test]
fn figure_4_percent_encoded_uri_components() {
    let cases = [
        ("/foo/bar?baz=quz", "https://example.com/foo/bar?baz=quz"),
        (
            "/foo/bar?baz=https://foo.bar",
            "https://example.com/foo/bar?baz=https%3A%2F%2Ffoo.bar",
        ),
        ("/foo/bar/\u{30C4}", "https://example.com/foo/bar/%E3%83%84"),
        (
            "/foo/bar/%E3%83%84",
            "https://example.com/foo/bar/%E3%83%84",
        ),
        ("/foo/bar/%62%61%7A", "https://example.com/foo/bar/baz"),
    ];
    for (rule, url) in cases {
        assert!(blocks(rule, url), "Disallow: {rule} must match {url}");
    }
    // The other way round, each URL in its unencoded spelling.
    assert!(blocks(
        "/foo/bar?baz=https%3A%2F%2Ffoo.bar",
        "https://example.com/foo/bar?baz=https://foo.bar"
    ));
    assert!(blocks(
        "/foo/bar/%E3%83%84",
        "https://example.com/foo/bar/\u{30C4}"
    ));
}

#[test]
fn figure_5_special_characters() {
    // `#` starts a comment, on a rule's line or its own.
    let r = strict(
        "User-agent: *\nDisallow: /\n# comment on its own line\nallow: /this # comment in line\n",
    );
    assert!(r.is_allowed("ExampleBot", "https://example.com/this/page"));
    assert!(!r.is_allowed("ExampleBot", "https://example.com/that"));
    // `$` ends the pattern.
    let r = strict("User-agent: *\nDisallow: /\nallow: /this/path/exactly$\n");
    assert!(r.is_allowed("ExampleBot", "https://example.com/this/path/exactly"));
    assert!(!r.is_allowed("ExampleBot", "https://example.com/this/path/exactly/not"));
    // `*` stands for any run of characters, none included.
    let r = strict("User-agent: *\nDisallow: /\nallow: /this/*/exactly\n");
    assert!(r.is_allowed("ExampleBot", "https://example.com/this/a/b/exactly"));
    assert!(r.is_allowed("ExampleBot", "https://example.com/this//exactly"));
    assert!(!r.is_allowed("ExampleBot", "https://example.com/this/exactly"));
}

#[test]
fn figure_6_percent_encoded_special_characters_are_literal() {
    assert!(blocks(
        "/path/file-with-a-%2A.html",
        "https://www.example.com/path/file-with-a-*.html"
    ));
    assert!(blocks(
        "/path/foo-%24",
        "https://www.example.com/path/foo-$"
    ));
    // As literals, never a wildcard or an anchor.
    assert!(!blocks(
        "/path/file-with-a-%2A.html",
        "https://www.example.com/path/file-with-a-xyz.html"
    ));
    assert!(blocks(
        "/path/foo-%24",
        "https://www.example.com/path/foo-$and-more"
    ));
    // A `$` inside a pattern is literal too; only the last one anchors.
    assert!(blocks("/a$b", "https://www.example.com/a$b"));
    assert!(blocks("/a$b$", "https://www.example.com/a$b"));
    assert!(!blocks("/a$b$", "https://www.example.com/a$bc"));
    // A URL that writes the character escaped means the same.
    assert!(blocks(
        "/path/file-with-a-%2A.html",
        "https://www.example.com/path/file-with-a-%2a.html"
    ));
}
