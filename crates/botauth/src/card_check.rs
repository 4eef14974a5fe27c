//! A signed request held against its crawler's Signature Agent Card: does
//! it send a User-Agent the card expects, and, given the site's
//! robots.txt, is its URL allowed to the card's product token?

use crate::base::Message;
use crate::card::Card;

/// One check of a request against a card, and whether it held.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CardCheck {
    /// The request's User-Agent is (or is not) one the card expects.
    UserAgent {
        /// The User-Agent sent.
        user_agent: String,
        /// Whether the card expects it.
        expected: bool,
    },
    /// The card names no product token to judge robots.txt by.
    NoProductToken,
    /// robots.txt allows (or disallows) the URL to the card's token.
    Robots {
        /// The URL asked for.
        url: String,
        /// The card's product token.
        token: String,
        /// Whether it is allowed.
        allowed: bool,
        /// The deciding rule's line, `None` when no rule matched.
        line: Option<u32>,
    },
    /// The User-Agent does not carry the card's product token, so no
    /// robots.txt group can be matched to it.
    TokenNotInUserAgent {
        /// The card's product token.
        token: String,
    },
}

impl CardCheck {
    /// Whether the check held.
    pub fn holds(&self) -> bool {
        match self {
            CardCheck::UserAgent { expected, .. } => *expected,
            CardCheck::Robots { allowed, .. } => *allowed,
            CardCheck::NoProductToken | CardCheck::TokenNotInUserAgent { .. } => false,
        }
    }
}

impl std::fmt::Display for CardCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CardCheck::UserAgent {
                user_agent,
                expected,
            } => write!(
                f,
                "User-Agent {user_agent:?} is {}one the card expects",
                if *expected { "" } else { "not " }
            ),
            CardCheck::NoProductToken => {
                f.write_str("the card names no rfc9309-product-token to judge robots.txt by")
            }
            CardCheck::Robots {
                url,
                token,
                allowed,
                line,
            } => write!(
                f,
                "robots.txt {} {url} to {token} ({})",
                if *allowed { "allows" } else { "disallows" },
                line.map_or("no rule".to_owned(), |l| format!("line {l}"))
            ),
            CardCheck::TokenNotInUserAgent { token } => write!(
                f,
                "the User-Agent does not carry the product token {token}: robots.txt groups cannot be matched to it"
            ),
        }
    }
}

/// Holds `msg` against `card`, and against `robots` (the site's
/// robots.txt body) when given.
pub fn cross_check(card: &Card, robots: Option<&[u8]>, msg: &Message) -> Vec<CardCheck> {
    let user_agent = msg.field("user-agent").unwrap_or_default();
    let mut out = vec![CardCheck::UserAgent {
        expected: card.matches_user_agent(&user_agent),
        user_agent: user_agent.clone(),
    }];
    let Some(body) = robots else {
        return out;
    };
    let Some(token) = card.product_token() else {
        out.push(CardCheck::NoProductToken);
        return out;
    };
    let verdict = mannerly_robots::Robots::parse(body).explain(token, &msg.target_uri);
    out.push(CardCheck::Robots {
        url: msg.target_uri.clone(),
        token: token.to_owned(),
        allowed: verdict.allowed,
        line: verdict.rule.as_ref().map(|r| r.line),
    });
    if !user_agent
        .to_ascii_lowercase()
        .contains(&token.to_ascii_lowercase())
    {
        out.push(CardCheck::TokenNotInUserAgent {
            token: token.to_owned(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_held_against_the_card_and_robots_txt() {
        let card = Card {
            web_bot_auth: Some(crate::card::WebBotAuth {
                expected_user_agent: vec!["ExampleBot/1.0*".into()],
                product_token: Some("ExampleBot".into()),
                ..crate::card::WebBotAuth::default()
            }),
            ..Card::default()
        };
        let msg = Message::new("GET", "https://a.test/private/x")
            .header("User-Agent", "Mozilla/5.0 (compatible; Other/1.0)");
        let checks = cross_check(
            &card,
            Some(b"User-agent: ExampleBot\nDisallow: /private\n"),
            &msg,
        );
        assert!(
            matches!(
                checks[0],
                CardCheck::UserAgent {
                    expected: false,
                    ..
                }
            ),
            "{checks:?}"
        );
        assert!(
            matches!(&checks[1], CardCheck::Robots { allowed: false, line: Some(2), token, .. } if token == "ExampleBot"),
            "{checks:?}"
        );
        assert!(
            matches!(checks[2], CardCheck::TokenNotInUserAgent { .. }),
            "{checks:?}"
        );
        assert!(checks.iter().all(|c| !c.holds()));
        assert_eq!(
            checks[1].to_string(),
            "robots.txt disallows https://a.test/private/x to ExampleBot (line 2)"
        );
    }
}
