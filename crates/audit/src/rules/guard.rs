//! The guard: no rule may refuse a verified crawler's own requests. A
//! spoofer rule lets through every address the audit verified its
//! crawler at; a token or address rule that would refuse another
//! verified crawler's request is not written, and a warning names it.

use std::net::IpAddr;

use super::{Deny, Rules};
use crate::report::{BotReport, Identity, Report};

/// Narrows and drops rules so that none refuses a request the report
/// verified (as its User-Agents and addresses were logged).
pub(super) fn keep_verified_out(report: &Report, rules: &mut Rules) {
    let verified: Vec<&BotReport> = report
        .bots
        .iter()
        .filter(|b| b.identity == Identity::Verified)
        .collect();
    for r in &mut rules.rules {
        if let Deny::Spoofer { token, inside, .. } = &mut r.deny {
            let mut added = 0;
            for (_, ip) in
                requests(&verified).filter(|(ua, _)| mannerly_robots::names_token(ua, token))
            {
                if let Some(ip) = ip.filter(|ip| !inside.iter().any(|n| n.contains(ip))) {
                    inside.push(ipnet::IpNet::from(ip));
                    added += 1;
                }
            }
            if added > 0 {
                r.why.push_str(&format!(
                    "; also lets through {added} address(es) outside the ranges where the audit verified {token} otherwise"
                ));
            }
        }
    }
    let mut warnings = Vec::new();
    rules.rules.retain(|r| {
        // A crawler refused by token for its own deeds is the rule's aim;
        // any other verified crawler it would refuse is not.
        let others = verified.iter().filter(|b| match &r.deny {
            Deny::Token { token, .. } => !b.token.eq_ignore_ascii_case(token),
            _ => true,
        });
        let hit = others.into_iter().find_map(|b| {
            requests(&[b])
                .find(|(ua, ip)| r.deny.refuses(ua, *ip, "/"))
                .map(|(ua, ip)| (b, ua.to_owned(), ip))
        });
        match hit {
            None => true,
            Some((b, ua, ip)) => {
                warnings.push(format!(
                    "not written: the {} rule for {} would refuse {}'s verified requests (from {}, User-Agent \"{ua}\")",
                    r.deny.sort(),
                    name(&r.deny),
                    b.token,
                    ip.map_or("-".to_owned(), |ip| ip.to_string()),
                ));
                false
            }
        }
    });
    rules.warnings.extend(warnings);
}

/// What a rule is for, in a warning.
fn name(d: &Deny) -> String {
    match d {
        Deny::Token { token, .. } | Deny::Spoofer { token, .. } => token.clone(),
        Deny::Address(ip) => ip.to_string(),
    }
}

/// Every (User-Agent, address) a verified bot was logged with, as far as
/// its report keeps them.
fn requests<'b>(bots: &'b [&'b BotReport]) -> impl Iterator<Item = (&'b str, Option<IpAddr>)> + 'b {
    bots.iter().flat_map(|b| {
        let ips: Vec<Option<IpAddr>> = if b.verified_addresses.is_empty() {
            vec![None]
        } else {
            b.verified_addresses.iter().copied().map(Some).collect()
        };
        b.user_agents
            .iter()
            .flat_map(move |ua| ips.clone().into_iter().map(move |ip| (ua.as_str(), ip)))
    })
}
