//! The report made from a finished audit: bots ordered worst first, their
//! hosts, timelines on one axis, and the suspects.

use crate::coverage::Holes;
use crate::engine::Auditor;
use crate::report::{BotReport, HostReport, Identity, Report, RobotsSource, Timeline};
use crate::stamp::rfc3339;

impl Auditor<'_> {
    /// Judges what is still waiting and gives the report's bot and
    /// suspect parts (the caller adds what it knows of the files).
    pub fn finish(mut self) -> Report {
        self.drain(true);
        report(self)
    }
}

fn report(mut a: Auditor<'_>) -> Report {
    let mut bots: Vec<BotReport> = a.groups.iter().map(|g| bot(&a, g)).collect();
    attach_evidence(&mut a, &mut bots);
    let proposed = a.proposed.take().map(|w| {
        let (tokens, kinds) = (&a.tokens, &a.token_kinds);
        w.report(&|t| {
            let name = tokens
                .get(t as usize)
                .map_or_else(String::new, |x| x.0.clone());
            (name, kinds.get(t as usize).copied().unwrap_or_default())
        })
    });
    bots.sort_by(|x, y| {
        let key = |b: &BotReport| {
            (
                std::cmp::Reverse(b.counts.violations()),
                !b.spoofed(),
                std::cmp::Reverse(b.counts.requests),
            )
        };
        // Then by name, address and identity: a report does not depend
        // on the order its lines came in (split logs, several files).
        key(x)
            .cmp(&key(y))
            .then_with(|| x.token.cmp(&y.token))
            .then_with(|| x.address.cmp(&y.address))
            .then_with(|| x.identity.as_str().cmp(y.identity.as_str()))
    });
    share_axis(&mut bots);
    let mut suspects: Vec<_> = (a.client_keys.iter().zip(a.clients.settled()))
        .filter_map(|((ip, ua), c)| c.judge(*ip, a.user_agents.get(*ua as usize).map_or("", |u| u)))
        .collect();
    suspects.sort_by(|x, y| y.pages.cmp(&x.pages).then_with(|| x.client.cmp(&y.client)));
    Report {
        lines: 0,
        unparsed: 0,
        files: Vec::new(),
        robots: a
            .book
            .versions()
            .map(|(h, v)| RobotsSource {
                host: h.unwrap_or("*").to_owned(),
                since: v.since.map(rfc3339),
                source: v.source.clone(),
            })
            .collect(),
        span: a.span.map(|(x, y)| (rfc3339(x), rfc3339(y))),
        coverage: a.holes.as_ref().map(Holes::coverage),
        bots,
        suspects,
        browser_requests: a.browser_requests,
        signed_in_requests: a.signed_in_requests,
        signed_in: signed_in(&a),
        late: a.late,
        identity_notes: Vec::new(),
        identity_online: false,
        proposed,
        rules: None,
    }
}

/// Signed-in requests by User-Agent, the most first, then by name.
fn signed_in(a: &Auditor<'_>) -> Vec<crate::report::SignedIn> {
    let mut agents: Vec<crate::report::SignedIn> = a
        .signed_in_agents
        .iter()
        .map(|(ua, n)| crate::report::SignedIn {
            user_agent: a.user_agents.get(*ua as usize).map_or("", |u| u).to_owned(),
            requests: *n,
        })
        .collect();
    agents.sort_by(|x, y| (y.requests, &x.user_agent).cmp(&(x.requests, &y.user_agent)));
    agents.truncate(crate::report::MAX_SIGNED_IN_AGENTS);
    agents
}

fn bot(a: &Auditor<'_>, g: &crate::engine::Group) -> BotReport {
    let (token, known) = &a.tokens[g.token as usize];
    let known = known.and_then(|k| a.catalogue.get(k));
    let mut hosts: Vec<HostReport> = g
        .hosts
        .iter()
        .map(|(h, pace)| HostReport {
            host: a.hosts[*h as usize].clone(),
            counts: pace.counts.clone(),
            crawl_delay: (pace.delay_ms > 0).then(|| pace.delay_ms as f64 / 1000.0),
            peak_per_minute: pace.peak_per_minute,
            median_gap: pace.median_gap(),
        })
        .collect();
    hosts.sort_by(|x, y| {
        (y.counts.violations(), y.counts.requests, &x.host).cmp(&(
            x.counts.violations(),
            x.counts.requests,
            &y.host,
        ))
    });
    let mut examples = g.examples.clone();
    examples.sort_by(|x, y| (&x.time, x.rule, &x.path).cmp(&(&y.time, y.rule, &y.path)));
    let kind = a.token_kinds[g.token as usize];
    let mut counts = Auditor::totals(g);
    let mut timeline = g.timeline.clone();
    if !a.judges(kind) {
        // robots.txt does not govern it (a person asked, or it is anyone's
        // tool): what it did is told, but it breaks no rule.
        counts = counts.without_violations();
        for h in &mut hosts {
            h.counts = h.counts.without_violations();
        }
        examples.clear();
        timeline.violations.iter_mut().for_each(|v| *v = 0);
    }
    let mut report = BotReport {
        token: token.clone(),
        kind,
        kind_source: known.and_then(|k| k.kind_source.clone()),
        address: g.address.map(|ip| ip.to_string()),
        identity: g.identity,
        operator: known.and_then(|k| k.operator.clone()),
        category: known.and_then(|k| k.category),
        seen: g.seen.map(|(a, b)| (rfc3339(a), rfc3339(b))),
        counts,
        statuses: g.statuses.clone(),
        clients: g.clients.len() as u64,
        user_agents: g
            .agents
            .iter()
            .filter_map(|ua| a.user_agents.get(*ua as usize))
            .map(|ua| ua.to_string())
            .collect(),
        verified_addresses: match g.identity {
            Identity::Verified => {
                let mut v: Vec<std::net::IpAddr> = g.clients.iter().copied().collect();
                v.sort_unstable();
                v
            }
            _ => Vec::new(),
        },
        peak_per_minute: hosts.iter().map(|h| h.peak_per_minute).max().unwrap_or(0),
        examples,
        hosts,
        timeline,
        evidence: None,
        gate: g.gate,
        ignores: known.map(|k| k.ignores.clone()).unwrap_or_default(),
        verifiable: known.is_some_and(crate::agents::Known::verifiable),
        practices: Vec::new(),
    };
    let facts = crate::practices::Facts {
        judged: a.judges(kind),
        robots_given: !a.book.is_empty(),
        signed: g.signed,
        signatures_logged: a.signatures_logged,
    };
    report.practices = crate::practices::grade(&report, facts);
    report
}

/// Each crawler's evidence, checked against its logged requests, on the
/// report of its token with the most requests (a report of its own when
/// the log holds none of its requests).
fn attach_evidence(a: &mut Auditor<'_>, bots: &mut Vec<BotReport>) {
    let tolerance = a.tolerance;
    for e in std::mem::take(&mut a.evidence) {
        let token = e.token.clone();
        let found = crate::evidence::compare(e, a.book, tolerance);
        let target = bots
            .iter_mut()
            .filter(|b| b.token.eq_ignore_ascii_case(&token))
            .max_by_key(|b| b.counts.requests);
        match target {
            Some(b) => b.evidence = Some(found),
            None => bots.push(BotReport {
                kind: crate::kinds::BotKind::Crawler,
                kind_source: None,
                address: None,
                token,
                identity: Identity::Unverified,
                operator: None,
                category: None,
                seen: None,
                counts: Default::default(),
                statuses: Default::default(),
                clients: 0,
                user_agents: Vec::new(),
                verified_addresses: Vec::new(),
                peak_per_minute: 0,
                examples: Vec::new(),
                hosts: Vec::new(),
                timeline: Timeline::default(),
                evidence: Some(found),
                gate: None,
                ignores: Default::default(),
                verifiable: false,
                practices: Vec::new(),
            }),
        }
    }
}

/// Puts every bot's timeline on one axis (the widest bucket, from the
/// earliest start), so charts can be compared.
fn share_axis(bots: &mut [BotReport]) {
    let lines: Vec<&Timeline> = bots
        .iter()
        .map(|b| &b.timeline)
        .filter(|t| t.width > 0)
        .collect();
    let (Some(start), Some(end)) = (
        lines.iter().map(|t| t.start).min(),
        lines.iter().map(|t| t.end()).max(),
    ) else {
        return;
    };
    let mut width = lines.iter().map(|t| t.width).max().unwrap_or(60_000);
    while (end - start) / width >= crate::timeline::MAX_BUCKETS as i64 {
        width *= 2;
    }
    let len = ((end - start) / width + 1) as usize;
    for b in bots.iter_mut() {
        b.timeline = b.timeline.rebucket(start, width, len);
    }
}
