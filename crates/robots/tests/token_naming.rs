//! `names_token` and `token_pattern` are one test in two forms: server
//! rules carry the pattern, the gate calls the function, and a browser
//! refused by one would be refused by the other. Checked here on random
//! User-Agents built from the characters that matter.

use mannerly_robots::{names_token, product_token, token_pattern};
use proptest::prelude::*;

fn agrees(ua: &str, token: &str) {
    let Some(p) = token_pattern(token) else {
        return;
    };
    let re = regex::Regex::new(&format!("(?i){p}")).expect("the pattern compiles");
    assert_eq!(
        re.is_match(ua),
        names_token(ua, token),
        "{ua:?} and {token:?} ({p})"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn the_pattern_and_the_function_agree(
        ua in "[bBaAdD (;,/)._1vV-]{0,24}",
        token in "[bBaAdD._-]{1,4}( [bBaAdD]{1,3})?",
    ) {
        agrees(&ua, &token);
    }

    #[test]
    fn a_token_inside_a_longer_word_is_never_named(
        left in "[a-zA-Z0-9]{1,5}",
        right in "[a-zA-Z0-9]{1,5}",
    ) {
        for ua in [format!("{left}BadBot/1.0"), format!("BadBot{right}/1.0"), format!("Mozilla/5.0 (compatible; {left}BadBot{right})")] {
            prop_assert!(!names_token(&ua, "BadBot"), "{}", ua);
            agrees(&ua, "BadBot");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    /// Whatever the header (a browser-style platform comment or not,
    /// separators anywhere, characters outside ASCII), the token read
    /// from it is a run of token characters the header holds, at most 64.
    #[test]
    fn a_product_token_is_a_clients_word_of_the_header(
        ua in "(Mozilla/5\\.0 )?[(]?[a-zA-Z0-9 ;,()/+:.é_-]{0,40}[)]?( [A-Za-z]{1,8}/1\\.0)?",
    ) {
        if let Some(t) = product_token(&ua) {
            prop_assert!(!t.is_empty() && t.len() <= 64, "{:?}", t);
            prop_assert!(ua.contains(&t), "{:?} from {:?}", t, ua);
            prop_assert!(t.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')));
        }
    }
}

#[test]
fn real_forms_of_a_token_are_named() {
    for ua in [
        "BadBot/1.0",
        "badbot",
        "Mozilla/5.0 (compatible; BadBot/2.1; +http://bad.example/)",
        "Mozilla/5.0 (Linux) BadBot",
        "Something (BadBot)",
        "x,BadBot,y",
        "BadBot-2.0",
        "Mozilla/5.0 (compatible; badbot-v3; +http://bad.example/)",
        "BadBot-1.5.3/beta",
    ] {
        assert!(names_token(ua, "BadBot"), "{ua}");
        agrees(ua, "BadBot");
    }
}

#[test]
fn a_version_joined_by_a_dash_is_the_same_client_and_nothing_else_is() {
    for ua in [
        "BadBot-2x",
        "BadBot-",
        "BadBot-v",
        "BadBot-1.0-beta",
        "BadBot-Image/1.0",
    ] {
        assert!(!names_token(ua, "BadBot"), "{ua}");
        agrees(ua, "BadBot");
    }
    for (ua, token) in [
        ("Mozilla/4.0 (compatible; grub-client-1.5.3; Crawl your own stuff with http://grub.org)", "grub-client"),
        ("Experibot-v2 http://goo.gl/ZAr8wX", "Experibot"),
        ("Mnogosearch-3.1.21", "Mnogosearch"),
        ("mattermost-5.19.0", "mattermost"),
        ("TeamSpeak3-ImageFetcher-1.0", "TeamSpeak3-ImageFetcher"),
        ("Googlebot-Image/1.0", "Googlebot-Image"),
        ("Nutch-1.0-beta", "Nutch-1.0-beta"),
    ] {
        assert_eq!(product_token(ua).as_deref(), Some(token), "{ua}");
        assert!(names_token(ua, token), "{ua}");
        agrees(ua, token);
    }
}
