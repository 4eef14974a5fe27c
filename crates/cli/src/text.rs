//! Text for people: what came from a file or a server is printed with its
//! control characters escaped, so a robots.txt, a sitemap or a request can
//! neither start a fake line of output nor send escape sequences to the
//! terminal.

use std::borrow::Cow;

/// `s` with every control character (C0, DEL, C1; tab and newline
/// included) written as a Rust-style escape, e.g. `\u{1b}` or `\n`.
pub fn clean(s: &str) -> Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(
        s.chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::clean;

    #[test]
    fn controls_are_escaped_and_the_rest_kept() {
        assert_eq!(clean("plain é ✓"), "plain é ✓");
        assert_eq!(clean("a\nb\tc"), "a\\nb\\tc");
        assert_eq!(clean("\u{1b}[31mred"), "\\u{1b}[31mred");
        assert_eq!(clean("x\u{7f}\u{9b}y"), "x\\u{7f}\\u{9b}y");
    }
}
