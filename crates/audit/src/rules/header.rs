//! The header every rules file opens with: what it refuses and why, which
//! client address it judges and how to make that the client's own behind
//! a proxy, and what the audit found but chose not to refuse.

use std::fmt::Write;

use super::{Deny, Rules, Server};

/// Passed-over clients named for each reason, at most (the rest are
/// counted).
const NAMES_A_REASON: usize = 6;

pub(super) fn header(rules: &Rules, server: Server) -> String {
    let mut out = String::new();
    let counts = rules
        .counts()
        .map(|(sort, n)| format!("{n} by {sort}"))
        .join(", ");
    let _ = writeln!(
        out,
        "# Written by `mannerly audit --rules {}`: {} rule(s) ({counts}).",
        server.as_str(),
        rules.rules.len()
    );
    out.push_str("# No rule refuses /robots.txt: a crawler refused it would read the 4xx as\n# leave to crawl everything (RFC 9309 §2.3.1.3).\n");
    out.push_str("# A token is matched as a token, in either case: `BadBot` in `BadBot/1.0` or\n# `(compatible; BadBot)`, never inside `NotBadBot` or `BadBotany`.\n#\n");
    for line in address_note(server).lines() {
        let _ = writeln!(out, "# {line}");
    }
    out.push_str("#\n# Rules:\n");
    for (i, r) in rules.rules.iter().enumerate() {
        let _ = writeln!(out, "#   {}. {}: {}", i + 1, what(&r.deny), r.why);
    }
    if rules.rules.is_empty() {
        out.push_str("#   none: the audit proved nothing a rule should refuse.\n");
    }
    if !rules.passed_over.is_empty() {
        let _ = writeln!(
            out,
            "#\n# Not refused ({} client(s)), and why:",
            rules.passed_over.len()
        );
        for (reason, who) in by_reason(&rules.passed_over) {
            let names = who.iter().take(NAMES_A_REASON).cloned().collect::<Vec<_>>();
            let more = who.len().saturating_sub(NAMES_A_REASON);
            let _ = writeln!(out, "#   {} client(s): {reason}", who.len());
            let _ = write!(out, "#     {}", names.join("; "));
            if more > 0 {
                let _ = write!(out, "; and {more} more (the report lists them)");
            }
            out.push('\n');
        }
    }
    for w in &rules.warnings {
        let _ = writeln!(out, "# WARNING: {w}");
    }
    out
}

/// The passed-over clients by reason, in the order reasons first come.
pub fn by_reason(passed: &[super::PassedOver]) -> Vec<(&'static str, Vec<String>)> {
    let mut out: Vec<(&'static str, Vec<String>)> = Vec::new();
    for p in passed {
        match out.iter_mut().find(|(r, _)| *r == p.reason) {
            Some((_, who)) => who.push(p.who.clone()),
            None => out.push((p.reason, vec![p.who.clone()])),
        }
    }
    out
}

/// What a rule refuses, in words.
pub(super) fn what(d: &Deny) -> String {
    match d {
        Deny::Token { token, .. } => format!("refuse User-Agents naming {token}"),
        Deny::Spoofer { token, inside, .. } => format!(
            "refuse User-Agents naming {token} from outside its {} published range(s)",
            inside.len()
        ),
        Deny::Address(ip) => format!("refuse the address {ip}"),
    }
}

/// Which client address the file judges, and how to make it the
/// client's own behind a proxy.
fn address_note(server: Server) -> &'static str {
    match server {
        Server::Nginx => "Client address: $remote_addr (the `geo` blocks). Behind a proxy, load balancer\nor CDN that is the proxy's: make it the client's with the realip module, in\nthe http or server block:\n    set_real_ip_from <the proxy's address or range>;\n    real_ip_header X-Forwarded-For;   # or proxy_protocol\n    real_ip_recursive on;\nInclude this file in the http block; in each server block add\n    if ($mannerly_deny) { return 403; }",
        Server::Apache => "Client address: what `-R` tests, the peer unless mod_remoteip replaced it.\nBehind a proxy, load balancer or CDN:\n    LoadModule remoteip_module modules/mod_remoteip.so\n    RemoteIPHeader X-Forwarded-For\n    RemoteIPTrustedProxy <the proxy's address or range>   # RemoteIPInternalProxy for private ones\nNeeds mod_setenvif and mod_authz_core; Include this file inside a <VirtualHost>.",
        Server::Caddy => "Client address: `remote_ip`, the direct peer. Behind a proxy, load balancer\nor CDN: on Caddy 2.7 or later write `client_ip` for `remote_ip` below and\nlist the proxy in the global options:\n    { servers { trusted_proxies static <the proxy's address or range> } }\nCaddy 2.6 has only `remote_ip forwarded`, which believes the first\nX-Forwarded-For address as sent: use it only when the proxy in front\nreplaces that header. `import` this file inside a site block.",
        Server::Haproxy => "Client address: `src`, the peer. Behind a proxy, load balancer or CDN, put\nfirst in the frontend (only the proxy may set it):\n    http-request set-src hdr_ip(X-Forwarded-For,-1) if { src <the proxy's range> }\nor take the PROXY protocol with `accept-proxy` on the bind line.\nPaste these lines into a `frontend` section in `mode http`.",
        Server::Cloudflare => "Client address: ip.src, the visitor's address as Cloudflare sees it.\nEach expression below is one WAF custom rule (Security > WAF > Custom rules,\naction Block), at most 4,096 characters. The `matches` operator needs a\nBusiness or Enterprise plan; on other plans refuse by token with\n`mannerly gate` instead.",
    }
}
