//! Cloudflare: WAF custom-rule expressions, each at most
//! [`MAX_EXPRESSION`] characters. The rules' parts are shared out over
//! as many expressions as they need; a spoofer's ranges too long to
//! write inline go into an IP list the expression names, with what to
//! put in it and how to create it.

use std::fmt::Write;

use super::{addresses, Deny, DenyRule};

/// The most characters Cloudflare takes in one rule's expression.
pub const MAX_EXPRESSION: usize = 4096;

const NOT_ROBOTS: &str = "(http.request.uri.path ne \"/robots.txt\") and (";

/// One part of an expression, and the IP list it needs (name, entries).
struct Part {
    text: String,
    list: Option<(String, Vec<String>)>,
}

pub(super) fn write(out: &mut String, rules: &[DenyRule]) {
    let budget = MAX_EXPRESSION - NOT_ROBOTS.len() - 1;
    let mut parts: Vec<Part> = Vec::new();
    for r in rules {
        let (token, pattern, inside) = match &r.deny {
            Deny::Token { token, pattern } => (token, pattern, None),
            Deny::Spoofer {
                token,
                pattern,
                inside,
            } => (token, pattern, Some(inside)),
            Deny::Address(_) => continue,
        };
        let ua = format!("http.user_agent matches \"(?i){pattern}\"");
        let Some(inside) = inside else {
            parts.push(Part {
                text: format!("({ua})"),
                list: None,
            });
            continue;
        };
        let nets: Vec<String> = inside.iter().map(ToString::to_string).collect();
        let text = format!("({ua} and not ip.src in {{{}}})", nets.join(" "));
        if text.len() <= budget {
            parts.push(Part { text, list: None });
        } else {
            let name = list_name(token);
            let entries = inside.iter().map(list_entry).collect();
            parts.push(Part {
                text: format!("({ua} and not ip.src in ${name})"),
                list: Some((name, entries)),
            });
        }
    }
    parts.extend(address_parts(&addresses(rules), budget));
    for p in &parts {
        if let Some((name, entries)) = &p.list {
            list_note(out, name, entries);
        }
    }
    let expressions = pack(parts.into_iter().map(|p| p.text), budget);
    if expressions.is_empty() {
        out.push_str("\n# No rule to create.\n");
    }
    for (i, e) in expressions.iter().enumerate() {
        let _ = writeln!(
            out,
            "\n# Custom rule {} of {} (action: Block):\n{NOT_ROBOTS}{e})",
            i + 1,
            expressions.len()
        );
    }
}

/// Refused addresses, as `ip.src in {…}` parts that each fit.
fn address_parts(addrs: &[std::net::IpAddr], budget: usize) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut now: Vec<String> = Vec::new();
    let text = |v: &[String]| format!("(ip.src in {{{}}})", v.join(" "));
    for a in addrs {
        now.push(a.to_string());
        if text(&now).len() > budget {
            let last = now.pop().unwrap_or_default();
            parts.push(Part {
                text: text(&now),
                list: None,
            });
            now = vec![last];
        }
    }
    if !now.is_empty() {
        parts.push(Part {
            text: text(&now),
            list: None,
        });
    }
    parts
}

/// Parts joined by `or` into as few expressions as fit the budget.
fn pack(parts: impl Iterator<Item = String>, budget: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in parts {
        match out.last_mut() {
            Some(e) if e.len() + 4 + p.len() <= budget => {
                e.push_str(" or ");
                e.push_str(&p);
            }
            _ => out.push(p),
        }
    }
    out
}

/// A list's name: `mannerly_` and the token, in the letters Cloudflare
/// allows (lower-case letters, digits, `_`).
fn list_name(token: &str) -> String {
    let t: String = token
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    format!("mannerly_{t}")
}

/// A list entry: Cloudflare takes IPv6 prefixes of /64 or shorter, so a
/// longer one widens to its /64 (letting more through, never less).
fn list_entry(net: &ipnet::IpNet) -> String {
    match net {
        ipnet::IpNet::V6(v6) if v6.prefix_len() > 64 => ipnet::Ipv6Net::new(v6.addr(), 64)
            .map(|n| n.trunc().to_string())
            .unwrap_or_else(|_| v6.to_string()),
        n => n.to_string(),
    }
}

fn list_note(out: &mut String, name: &str, entries: &[String]) {
    let _ = writeln!(
        out,
        "\n# IP list `{name}` ({} entries), to create before the rules (Manage Account >\n# Configurations > Lists > Create new list, type IP; or with the API:\n#   POST /accounts/{{account_id}}/rules/lists {{\"name\": \"{name}\", \"kind\": \"ip\"}}\n#   POST /accounts/{{account_id}}/rules/lists/{{list_id}}/items [{{\"ip\": \"…\"}}, …]).\n# Its entries:",
        entries.len()
    );
    for chunk in entries.chunks(8) {
        let _ = writeln!(out, "#   {}", chunk.join(" "));
    }
}
