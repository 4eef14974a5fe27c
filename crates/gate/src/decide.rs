//! The decision for one request, as plain code over plain data: the
//! identity is given (the I/O layer gathered its checks), the time is
//! passed in. robots.txt first (a crawler asking for a path the policy's
//! robots.txt disallows to it is refused; other kinds only when the policy
//! includes them), then the rules in order, the first matching deciding;
//! none matching allows. `/robots.txt` itself is always allowed.

use mannerly_audit::GateAction;
use mannerly_time::UnixMillis;

use crate::bucket::Buckets;
use crate::class::{Class, Visitor};
use crate::policy::{Action, Policy};
use std::net::IpAddr;

/// Slowed clients' buckets held at most (each about 100 bytes).
pub const MAX_BUCKETS: usize = 200_000;

/// What the gate answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Let it through.
    Allow,
    /// Refuse it.
    Deny,
    /// Over its rate: come back in `retry_after` seconds.
    Slow {
        /// Seconds until its bucket has room.
        retry_after: u64,
    },
}

impl Verdict {
    /// The `X-Mannerly-Action` value, as the audit reads it back.
    pub fn action(self) -> GateAction {
        match self {
            Verdict::Allow => GateAction::Allow,
            Verdict::Deny => GateAction::Deny,
            Verdict::Slow { .. } => GateAction::Slow,
        }
    }

    /// The `X-Mannerly-Action` value.
    pub fn as_str(self) -> &'static str {
        self.action().as_str()
    }
}

/// Why: the rule's line, or the robots.txt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// The policy's robots.txt disallows the path to this token.
    Robots,
    /// The rule on this line (0: the built-in policy).
    Rule(usize),
    /// No rule matched.
    NoRule,
    /// robots.txt itself, which is never refused nor slowed: a crawler
    /// refused it would take a 4xx as leave to crawl everything (RFC 9309
    /// §2.3.1.3), and one slowed could not learn the rules.
    RobotsTxt,
}

/// One decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Who the request is.
    pub identity: Visitor,
    /// What to do.
    pub verdict: Verdict,
    /// Why.
    pub basis: Basis,
}

/// The request as the decision needs it.
#[derive(Debug, Clone, Copy)]
pub struct Asked<'a> {
    /// The path and query asked for (`/a?b`).
    pub target: &'a str,
    /// The client's address, when known.
    pub client: Option<IpAddr>,
    /// The User-Agent sent (empty when none).
    pub user_agent: &'a str,
}

/// The policy and the buckets it fills.
#[derive(Debug)]
pub struct Gate {
    policy: Policy,
    buckets: Buckets,
}

impl Gate {
    /// A gate keeping `policy`.
    pub fn new(policy: Policy) -> Gate {
        Gate {
            policy,
            buckets: Buckets::new(MAX_BUCKETS),
        }
    }

    /// The policy kept.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The decision for a request by `identity` at `now`.
    pub fn decide(&mut self, identity: Visitor, asked: Asked<'_>, now: UnixMillis) -> Decision {
        let (verdict, basis) = self.verdict(&identity, asked, now);
        Decision {
            identity,
            verdict,
            basis,
        }
    }

    fn verdict(
        &mut self,
        identity: &Visitor,
        asked: Asked<'_>,
        now: UnixMillis,
    ) -> (Verdict, Basis) {
        if asked.target.split('?').next() == Some("/robots.txt") {
            return (Verdict::Allow, Basis::RobotsTxt);
        }
        if let (Some((_, robots)), Some(token), Some(kind)) =
            (&self.policy.robots, &identity.token, identity.kind)
        {
            if self.policy.robots_governs(kind) && !robots.is_allowed(token, asked.target) {
                return (Verdict::Deny, Basis::Robots);
            }
        }
        let Some((index, rule)) = self
            .policy
            .rules
            .iter()
            .enumerate()
            .find(|(_, r)| r.who.matches(identity, asked.user_agent))
        else {
            return (Verdict::Allow, Basis::NoRule);
        };
        let basis = Basis::Rule(rule.line);
        let verdict = match rule.action {
            Action::Allow => Verdict::Allow,
            Action::Deny => Verdict::Deny,
            Action::Slow { rate, burst } => {
                let who = identity
                    .token
                    .as_deref()
                    .unwrap_or(identity.class.as_str())
                    .to_ascii_lowercase();
                let per_address = (identity.class != Class::Verified)
                    .then_some(asked.client)
                    .flatten();
                match self
                    .buckets
                    .take((index, who, per_address), rate, burst, now)
                {
                    Ok(()) => Verdict::Allow,
                    Err(retry_after) => Verdict::Slow { retry_after },
                }
            }
        };
        (verdict, basis)
    }

    /// Slowed clients' buckets held.
    pub fn buckets(&self) -> usize {
        self.buckets.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn id(class: Class, token: &str) -> Visitor {
        Visitor {
            class,
            token: (!token.is_empty()).then(|| token.to_owned()),
            kind: (class != Class::Browser).then_some(mannerly_audit::BotKind::Crawler),
        }
    }

    fn asked(target: &str, client: &str) -> Asked<'static> {
        Asked {
            target: Box::leak(target.to_owned().into_boxed_str()),
            client: client.parse().ok(),
            user_agent: "",
        }
    }

    #[test]
    fn first_matching_rule_decides_and_slow_is_per_address_unless_verified() {
        let policy = Policy::parse(
            "[[rule]]\nwho = \"spoofer\"\ndo = \"deny\"\n[[rule]]\nwho = \"token:GreedyBot\"\ndo = \"slow\"\nrate = 1.0\n",
            Path::new("p.toml"),
        )
        .expect("policy");
        let mut g = Gate::new(policy);
        let t = UnixMillis(10_000);
        let d = g.decide(id(Class::Spoofer, "GreedyBot"), asked("/", "192.0.2.1"), t);
        assert_eq!((d.verdict, d.basis), (Verdict::Deny, Basis::Rule(2)));
        let greedy = |g: &mut Gate, ip| {
            g.decide(id(Class::Bot, "greedybot"), asked("/", ip), t)
                .verdict
        };
        assert_eq!(greedy(&mut g, "192.0.2.1"), Verdict::Allow);
        assert_eq!(
            greedy(&mut g, "192.0.2.1"),
            Verdict::Slow { retry_after: 1 }
        );
        assert_eq!(
            greedy(&mut g, "192.0.2.2"),
            Verdict::Allow,
            "another address, its own bucket"
        );
        let v = |g: &mut Gate| {
            g.decide(id(Class::Verified, "GreedyBot"), asked("/", "192.0.2.3"), t)
                .verdict
        };
        assert_eq!(v(&mut g), Verdict::Allow);
        assert_eq!(
            v(&mut g),
            Verdict::Slow { retry_after: 1 },
            "verified: one bucket per token"
        );
        let d = g.decide(id(Class::Browser, ""), asked("/", "192.0.2.1"), t);
        assert_eq!((d.verdict, d.basis), (Verdict::Allow, Basis::NoRule));
    }

    #[test]
    fn the_policy_robots_txt_refuses_bots_not_browsers() {
        // Parsing reads no file: the robots.txt it names is handed in.
        let mut policy = Policy::parse(
            "robots = \"robots.txt\"\n[[rule]]\nwho = \"spoofer\"\ndo = \"deny\"\n",
            Path::new("p.toml"),
        )
        .expect("policy");
        policy.set_robots(b"User-agent: *\nDisallow: /private\n");
        let mut g = Gate::new(policy);
        let t = UnixMillis(0);
        let d = g.decide(
            id(Class::Verified, "Googlebot"),
            asked("/private/x", "192.0.2.1"),
            t,
        );
        assert_eq!((d.verdict, d.basis), (Verdict::Deny, Basis::Robots));
        let d = g.decide(id(Class::Bot, "curl"), asked("/public", "192.0.2.1"), t);
        assert_eq!(d.verdict, Verdict::Allow);
        let d = g.decide(id(Class::Browser, ""), asked("/private/x", "192.0.2.1"), t);
        assert_eq!(d.verdict, Verdict::Allow);
        let d = g.decide(
            id(Class::Spoofer, "Googlebot"),
            asked("/robots.txt", "192.0.2.1"),
            t,
        );
        assert_eq!((d.verdict, d.basis), (Verdict::Allow, Basis::RobotsTxt));
    }

    #[test]
    fn robots_txt_holds_crawlers_and_only_the_kinds_the_policy_includes() {
        let gate = |text: &str| {
            let mut policy = Policy::parse(text, Path::new("p.toml")).expect("policy");
            policy.set_robots(b"User-agent: *\nDisallow: /\n");
            Gate::new(policy)
        };
        let who = |ua: &str| {
            let agent = mannerly_audit::Catalogue::builtin().classify(ua);
            Visitor::of(agent, mannerly_audit::Checked::default())
        };
        let crawler = "Mozilla/5.0 (compatible; BadBot/1.0; +https://bad.example/)";
        let probes = [
            "kube-probe/1.28",
            "ELB-HealthChecker/2.0",
            "GoogleHC/1.0",
            "Mozilla/5.0+(compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)",
        ];
        let others = [
            "Feedly/1.0 (+http://www.feedly.com/fetcher.html; 3 subscribers)",
            "curl/8.5.0",
            "-",
        ];
        let t = UnixMillis(0);
        let mut g = gate("robots = \"robots.txt\"\n");
        let verdict = |g: &mut Gate, ua: &str| g.decide(who(ua), asked("/healthz", "10.0.0.1"), t);
        assert_eq!(verdict(&mut g, crawler).basis, Basis::Robots);
        for ua in probes.iter().chain(&others) {
            assert_eq!(verdict(&mut g, ua).verdict, Verdict::Allow, "{ua}");
        }
        let mut g = gate("robots = \"robots.txt\"\nrobots_include = [\"monitor\"]\n");
        for ua in probes {
            assert_eq!(verdict(&mut g, ua).basis, Basis::Robots, "{ua}");
        }
        for ua in others {
            assert_eq!(verdict(&mut g, ua).verdict, Verdict::Allow, "{ua}");
        }
        let e = Policy::parse(
            "robots = \"robots.txt\"\nrobots_include = [\"monitors\"]\n",
            Path::new("p.toml"),
        )
        .expect_err("not a kind");
        let e = e.to_string();
        assert!(e.starts_with("p.toml:2: unknown variant `monitors`"), "{e}");
    }

    #[test]
    fn a_token_rule_matches_the_token_as_server_rules_do() {
        let policy = Policy::parse(
            "[[rule]]\nwho = \"token:BadBot\"\ndo = \"deny\"\n",
            Path::new("p.toml"),
        )
        .expect("policy");
        let mut g = Gate::new(policy);
        let t = UnixMillis(0);
        let mut with = |ua: &'static str, token: &str, path: &str| {
            let mut a = asked(path, "192.0.2.1");
            a.user_agent = ua;
            g.decide(id(Class::Bot, token), a, t).verdict
        };
        // Named as a token anywhere in the User-Agent, in either case.
        assert_eq!(
            with("Mozilla/5.0 (compatible; badbot/2.0)", "Mozilla", "/"),
            Verdict::Deny
        );
        // Never inside a longer word.
        assert_eq!(with("NotBadBot/1.0", "NotBadBot", "/"), Verdict::Allow);
        assert_eq!(with("BadBotany/1.0", "BadBotany", "/"), Verdict::Allow);
        // Never robots.txt.
        assert_eq!(with("BadBot/1.0", "BadBot", "/robots.txt"), Verdict::Allow);
        let generic = Policy::parse(
            "[[rule]]\nwho = \"token:Mozilla\"\ndo = \"deny\"\n",
            Path::new("p.toml"),
        )
        .expect_err("a rule for a word every browser carries");
        assert!(generic.to_string().contains("p.toml:2"), "{generic}");
    }
}
