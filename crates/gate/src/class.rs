//! Who a request is, in the four classes a policy names, decided by the
//! audit's own rule ([`mannerly_audit::Checked`]) so the gate and the
//! audit cannot disagree.

use mannerly_audit::{Agent, BotKind, Checked, Identity as Checks};

/// The class of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// A valid Web Bot Auth signature, or an address its operator's
    /// published ranges or reverse DNS confirm.
    Verified,
    /// Claims a crawler whose operator publishes a check, and fails it (or
    /// carries a signature that does not verify).
    Spoofer,
    /// Any other automated agent.
    Bot,
    /// A browser, by what its User-Agent says.
    Browser,
}

impl Class {
    /// Every class, in the order reports list them.
    pub const ALL: [Class; 4] = [Class::Verified, Class::Spoofer, Class::Bot, Class::Browser];

    /// The word a policy and the headers use.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Verified => "verified",
            Class::Spoofer => "spoofer",
            Class::Bot => "bot",
            Class::Browser => "browser",
        }
    }
}

/// A request's class and its product token (none for a browser).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Visitor {
    /// Its class.
    pub class: Class,
    /// The product token of its User-Agent (`Googlebot`), for bots.
    pub token: Option<String>,
    /// What sort of client its User-Agent names, for bots: whether
    /// robots.txt governs it, as the audit judges.
    pub kind: Option<BotKind>,
}

impl Visitor {
    /// The identity of a request whose User-Agent was classified as
    /// `agent`, after the checks in `checked`.
    pub fn of(agent: Agent, checked: Checked) -> Visitor {
        let (token, kind) = match agent {
            Agent::Browser => (None, None),
            Agent::Bot { token, kind, .. } => (Some(token), Some(kind)),
        };
        let class = match checked.identity() {
            Checks::Verified => Class::Verified,
            Checks::Spoofed => Class::Spoofer,
            _ if kind.is_none() => Class::Browser,
            _ => Class::Bot,
        };
        Visitor { class, token, kind }
    }

    /// The `X-Mannerly-Identity` value: the class, and `;token=NAME` for a
    /// bot (the token cut to letters, digits, `.`, `_` and `-`, so a log
    /// line cannot be broken by it).
    pub fn header(&self) -> String {
        match &self.token {
            None => self.class.as_str().to_owned(),
            Some(t) => {
                let clean: String = t
                    .chars()
                    .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
                    .take(64)
                    .collect();
                format!(
                    "{};token={}",
                    self.class.as_str(),
                    if clean.is_empty() { "-" } else { &clean }
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_names_class_and_a_clean_token() {
        let bot = |t: &str| Agent::Bot {
            token: t.into(),
            known: None,
            kind: mannerly_audit::BotKind::Crawler,
        };
        let id = Visitor::of(
            bot("Googlebot"),
            Checked {
                in_ranges: Some(false),
                ..Checked::default()
            },
        );
        assert_eq!(id.header(), "spoofer;token=Googlebot");
        let id = Visitor::of(bot("Evil\"Bot\n x"), Checked::default());
        assert_eq!(id.header(), "bot;token=EvilBotx");
        assert_eq!(
            Visitor::of(Agent::Browser, Checked::default()).header(),
            "browser"
        );
        let signed = Checked {
            signature: Some(Checks::Verified),
            ..Checked::default()
        };
        assert_eq!(Visitor::of(Agent::Browser, signed).class, Class::Verified);
    }
}
