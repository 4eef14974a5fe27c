//! Rules a server enforces, written from what an audit found: refuse (a)
//! spoofers, requests that claim a verifiable crawler's token from an
//! address outside its operator's ranges, and (b) crawlers that broke
//! robots.txt, by product token. Identity decides: the same User-Agent
//! passes from the operator's ranges and is refused from elsewhere. Every
//! rule carries its evidence as a comment (counts, first and last time).
//!
//! Plain text out, for nginx (an `http`-block file setting
//! `$mannerly_deny`), Apache (a file to `Include` in a `<VirtualHost>`),
//! Caddy (a file to `import` in a site block), HAProxy (lines for a
//! `frontend` in `mode http`) and Cloudflare (a WAF custom-rule
//! expression).

use std::fmt::Write;
use std::str::FromStr;

use crate::kinds::BotKind;
use crate::report::{BotReport, Identity, Report};

/// The servers rules are written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Server {
    /// nginx.
    Nginx,
    /// Apache httpd 2.4.
    Apache,
    /// Caddy 2.
    Caddy,
    /// HAProxy.
    Haproxy,
    /// A Cloudflare WAF custom rule.
    Cloudflare,
}

/// A server name `--rules` does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no rules for `{0}` (nginx, apache, caddy, haproxy, cloudflare)")]
pub struct UnknownServer(pub String);

impl FromStr for Server {
    type Err = UnknownServer;

    fn from_str(s: &str) -> Result<Server, UnknownServer> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "nginx" => Server::Nginx,
            "apache" | "httpd" => Server::Apache,
            "caddy" => Server::Caddy,
            "haproxy" => Server::Haproxy,
            "cloudflare" => Server::Cloudflare,
            _ => return Err(UnknownServer(s.to_owned())),
        })
    }
}

/// One rule: refuse a token, or refuse it from outside its ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DenyRule {
    /// The product token the User-Agent carries.
    pub token: String,
    /// `None`: refuse it everywhere (it broke robots.txt); `Some`: refuse
    /// it from outside these CIDR ranges (spoofers).
    pub outside: Option<Vec<String>>,
    /// Why, for the comment.
    pub evidence: String,
}

/// The rules an audit's report calls for. `ranges` gives the CIDR ranges
/// the audit checked a token against (`None` when it checked none, so no
/// range rule can be written for its spoofers).
pub fn rules_of(report: &Report, ranges: &dyn Fn(&str) -> Option<Vec<String>>) -> Vec<DenyRule> {
    let mut rules: Vec<DenyRule> = Vec::new();
    for b in &report.bots {
        let spoofed = b.identity == Identity::Spoofed;
        if spoofed {
            let Some(cidrs) = ranges(&b.token).filter(|c| !c.is_empty()) else {
                continue;
            };
            if rules
                .iter()
                .any(|r| r.token.eq_ignore_ascii_case(&b.token) && r.outside.is_some())
            {
                continue;
            }
            let evidence = format!(
                "spoofer: {} requests as {} from outside its operator's ranges{}",
                b.counts.requests,
                b.token,
                seen(b)
            );
            rules.push(DenyRule {
                token: b.token.clone(),
                outside: Some(cidrs),
                evidence,
            });
        } else if b.kind == BotKind::Crawler && b.counts.violations() > 0 {
            if rules
                .iter()
                .any(|r| r.token.eq_ignore_ascii_case(&b.token) && r.outside.is_none())
            {
                continue;
            }
            let c = &b.counts;
            let evidence = format!(
                "broke robots.txt: {} requests, {} disallowed, {} too soon, {} in a Retry-After window, {} before robots.txt, {} while it was unavailable{}",
                c.requests, c.disallowed, c.too_soon, c.ignored_retry_after, c.before_robots, c.while_robots_unavailable, seen(b)
            );
            rules.push(DenyRule {
                token: b.token.clone(),
                outside: None,
                evidence,
            });
        }
    }
    rules
}

fn seen(b: &BotReport) -> String {
    b.seen
        .as_ref()
        .map(|(a, z)| format!(", first {a}, last {z}"))
        .unwrap_or_default()
}

/// The rules as `server` reads them.
pub fn render(rules: &[DenyRule], server: Server) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Written by `mannerly audit --rules`: {} rule(s). Each says why.",
        rules.len()
    );
    match server {
        Server::Nginx => nginx(&mut out, rules),
        Server::Apache => apache(&mut out, rules),
        Server::Caddy => caddy(&mut out, rules),
        Server::Haproxy => haproxy(&mut out, rules),
        Server::Cloudflare => cloudflare(&mut out, rules),
    }
    out
}

/// A token as a case-insensitive regular expression's literal.
fn regex_literal(token: &str) -> String {
    let mut out = String::new();
    for c in token.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' && !out.is_empty() {
            out.push(c);
        } else if c.is_ascii() && !c.is_ascii_control() {
            out.push('\\');
            out.push(c);
        }
    }
    out
}

/// A safe name for a token in variables and ACLs.
fn ident(i: usize, token: &str) -> String {
    let t: String = token
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("{i}_{t}")
}

fn nginx(out: &mut String, rules: &[DenyRule]) {
    out.push_str("# Include it in the http block; in each server block add\n#   if ($mannerly_deny) { return 403; }\n# (with realip set up, $remote_addr is the client's own address).\n");
    let mut flags = Vec::new();
    for (i, r) in rules.iter().enumerate() {
        let id = ident(i, &r.token);
        let _ = writeln!(out, "\n# {}", r.evidence);
        let _ = writeln!(
            out,
            "map $http_user_agent $mannerly_ua_{id} {{\n    default 0;\n    \"~*{}\" 1;\n}}",
            regex_literal(&r.token)
        );
        match &r.outside {
            None => flags.push(format!("$mannerly_ua_{id}")),
            Some(cidrs) => {
                let _ = writeln!(out, "geo $mannerly_from_{id} {{\n    default 0;");
                for c in cidrs {
                    let _ = writeln!(out, "    {c} 1;");
                }
                out.push_str("}\n");
                let _ = writeln!(out, "map \"$mannerly_ua_{id}$mannerly_from_{id}\" $mannerly_spoof_{id} {{\n    default 0;\n    \"10\" 1;\n}}");
                flags.push(format!("$mannerly_spoof_{id}"));
            }
        }
    }
    let joined = if flags.is_empty() {
        "0".to_owned()
    } else {
        flags.concat()
    };
    let _ = writeln!(
        out,
        "\nmap \"{joined}\" $mannerly_deny {{\n    default 1;\n    \"~^0*$\" 0;\n}}"
    );
}

fn apache(out: &mut String, rules: &[DenyRule]) {
    out.push_str("# Include it inside a <VirtualHost> (mod_setenvif and mod_authz_core; with\n# mod_remoteip set up, the address judged is the client's own).\n");
    for (i, r) in rules.iter().enumerate() {
        let id = ident(i, &r.token);
        let _ = writeln!(out, "\n# {}", r.evidence);
        let ua = regex_literal(&r.token);
        match &r.outside {
            None => {
                let _ = writeln!(out, "SetEnvIfNoCase User-Agent \"{ua}\" mannerly_deny");
            }
            Some(cidrs) => {
                let _ = writeln!(
                    out,
                    "SetEnvIfNoCase User-Agent \"{ua}\" mannerly_claims_{id}"
                );
                let inside: Vec<String> = cidrs.iter().map(|c| format!("-R '{c}'")).collect();
                let _ = writeln!(
                    out,
                    "SetEnvIfExpr \"-n reqenv('mannerly_claims_{id}') && !({})\" mannerly_deny",
                    inside.join(" || ")
                );
            }
        }
    }
    out.push_str("\n<Location \"/\">\n    <RequireAll>\n        Require all granted\n        Require not env mannerly_deny\n    </RequireAll>\n</Location>\n");
}

fn caddy(out: &mut String, rules: &[DenyRule]) {
    out.push_str("# `import` it inside a site block.\n");
    for (i, r) in rules.iter().enumerate() {
        let id = ident(i, &r.token);
        let _ = writeln!(out, "\n# {}", r.evidence);
        let _ = writeln!(
            out,
            "@mannerly_{id} {{\n    header_regexp User-Agent \"(?i){}\"",
            regex_literal(&r.token)
        );
        if let Some(cidrs) = &r.outside {
            let _ = writeln!(out, "    not remote_ip {}", cidrs.join(" "));
        }
        out.push_str("}\n");
        let _ = writeln!(out, "respond @mannerly_{id} 403");
    }
}

fn haproxy(out: &mut String, rules: &[DenyRule]) {
    out.push_str("# Lines for a `frontend` section in `mode http`.\n");
    for (i, r) in rules.iter().enumerate() {
        let id = ident(i, &r.token);
        let _ = writeln!(out, "\n# {}", r.evidence);
        let _ = writeln!(
            out,
            "acl mannerly_ua_{id} hdr_reg(User-Agent) -i {}",
            regex_literal(&r.token)
        );
        match &r.outside {
            None => {
                let _ = writeln!(out, "http-request deny deny_status 403 if mannerly_ua_{id}");
            }
            Some(cidrs) => {
                let _ = writeln!(out, "acl mannerly_from_{id} src {}", cidrs.join(" "));
                let _ = writeln!(
                    out,
                    "http-request deny deny_status 403 if mannerly_ua_{id} !mannerly_from_{id}"
                );
            }
        }
    }
}

fn cloudflare(out: &mut String, rules: &[DenyRule]) {
    out.push_str("# A WAF custom rule's expression (action: Block). The evidence, rule by rule:\n");
    for r in rules {
        let _ = writeln!(out, "#   {}: {}", r.token, r.evidence);
    }
    let parts: Vec<String> = rules
        .iter()
        .map(|r| {
            let token = r
                .token
                .to_ascii_lowercase()
                .replace('\\', "\\\\")
                .replace('"', "\\\"");
            let ua = format!("lower(http.user_agent) contains \"{token}\"");
            match &r.outside {
                None => format!("({ua})"),
                Some(cidrs) => format!("({ua} and not ip.src in {{{}}})", cidrs.join(" ")),
            }
        })
        .collect();
    let expr = if parts.is_empty() {
        "(false)".to_owned()
    } else {
        parts.join(" or ")
    };
    let _ = writeln!(out, "{expr}");
}
