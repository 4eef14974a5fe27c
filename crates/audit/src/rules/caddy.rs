//! Caddy 2: one named matcher and `respond 403` per rule, for a site
//! block.

use std::fmt::Write;

use super::{addresses, by_agent, DenyRule};

/// Ranges on one matcher line, at most.
const RANGES_A_LINE: usize = 16;

pub(super) fn write(out: &mut String, rules: &[DenyRule]) {
    for (n, r, pattern, inside) in by_agent(rules) {
        let _ = writeln!(out, "\n# {n}. {}", super::header::what(&r.deny));
        let _ = writeln!(
            out,
            "@mannerly_{n} {{\n    header_regexp User-Agent \"(?i){pattern}\"\n    not path /robots.txt"
        );
        for chunk in inside
            .map(|v| v.chunks(RANGES_A_LINE))
            .into_iter()
            .flatten()
        {
            let nets: Vec<String> = chunk.iter().map(ToString::to_string).collect();
            let _ = writeln!(out, "    not remote_ip {}", nets.join(" "));
        }
        out.push_str("}\n");
        let _ = writeln!(out, "respond @mannerly_{n} 403");
    }
    let addrs = addresses(rules);
    if !addrs.is_empty() {
        out.push_str("\n# Refused addresses.\n@mannerly_address {\n    not path /robots.txt\n");
        // One line: Caddy 2.6's `remote_ip forwarded` (which the header
        // names) must come first among all of a matcher's addresses.
        let a: Vec<String> = addrs.iter().map(ToString::to_string).collect();
        let _ = writeln!(out, "    remote_ip {}", a.join(" "));
        out.push_str("}\nrespond @mannerly_address 403\n");
    }
}
