//! HAProxy: `acl` and `http-request deny` lines for a frontend in
//! `mode http`. A line holds at most 64 words, so long range lists are
//! several `acl` lines of one name (which HAProxy ORs).

use std::fmt::Write;

use super::{addresses, by_agent, DenyRule};

/// Ranges on one `acl` line: with `acl NAME src`, well under 64 words.
const RANGES_A_LINE: usize = 50;

pub(super) fn write(out: &mut String, rules: &[DenyRule]) {
    out.push_str("\nacl mannerly_robots_txt path /robots.txt\n");
    for (n, r, pattern, inside) in by_agent(rules) {
        let _ = writeln!(out, "\n# {n}. {}", super::header::what(&r.deny));
        let _ = writeln!(
            out,
            "acl mannerly_ua_{n} hdr_reg(User-Agent) -i '{pattern}'"
        );
        match inside {
            None => {
                let _ = writeln!(
                    out,
                    "http-request deny deny_status 403 if mannerly_ua_{n} !mannerly_robots_txt"
                );
            }
            Some(inside) => {
                for chunk in inside.chunks(RANGES_A_LINE) {
                    let nets: Vec<String> = chunk.iter().map(ToString::to_string).collect();
                    let _ = writeln!(out, "acl mannerly_in_{n} src {}", nets.join(" "));
                }
                let _ = writeln!(
                    out,
                    "http-request deny deny_status 403 if mannerly_ua_{n} !mannerly_in_{n} !mannerly_robots_txt"
                );
            }
        }
    }
    let addrs = addresses(rules);
    if !addrs.is_empty() {
        out.push_str("\n# Refused addresses.\n");
        for chunk in addrs.chunks(RANGES_A_LINE) {
            let a: Vec<String> = chunk.iter().map(ToString::to_string).collect();
            let _ = writeln!(out, "acl mannerly_address src {}", a.join(" "));
        }
        out.push_str(
            "http-request deny deny_status 403 if mannerly_address !mannerly_robots_txt\n",
        );
    }
}
