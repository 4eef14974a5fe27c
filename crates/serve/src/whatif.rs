//! `POST /api/whatif`: a log excerpt judged against the robots.txt in
//! force and against a draft, with `mannerly audit`'s own code: which
//! bots that really came, and how many of their requests, the draft would
//! newly refuse or allow. Each bot is judged under its own group in each
//! file. A plain function, as the rest of [`api`](crate::api).

use mannerly_audit::{Auditor, Catalogue, Options, ProposedReport, RobotsBook, Unchecked};
use serde::{Deserialize, Serialize};

use crate::api::BadRequest;

/// The largest log excerpt read, in bytes (10 MiB).
pub const MAX_LOG_BYTES: usize = 10 << 20;

/// `POST /api/whatif`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WhatIfRequest {
    /// The robots.txt in force.
    pub robots: String,
    /// The draft.
    pub after: String,
    /// Access-log lines, in any format `mannerly audit` reads.
    pub log: String,
}

/// Its answer.
#[derive(Debug, Clone, Serialize)]
pub struct WhatIfResponse {
    /// The log's format, as found.
    pub format: String,
    /// Lines read.
    pub lines: u64,
    /// Lines that are not requests in that format.
    pub unread: u64,
    /// Requests by bots.
    pub bot_requests: u64,
    /// What the draft would change.
    #[serde(flatten)]
    pub proposed: ProposedReport,
}

/// Judges the excerpt under both files.
pub fn whatif(req: &WhatIfRequest) -> Result<WhatIfResponse, BadRequest> {
    if req.log.len() > MAX_LOG_BYTES {
        return Err(BadRequest(format!(
            "`log` is {} bytes; at most {MAX_LOG_BYTES} are read",
            req.log.len()
        )));
    }
    let lines: Vec<&str> = req.log.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return Err(BadRequest(
            "`log` is empty: paste some access-log lines".into(),
        ));
    }
    let head: Vec<&str> = lines.iter().take(200).copied().collect();
    let mut parser = mannerly_logs::detect(&head).map_err(|e| BadRequest(format!("`log`: {e}")))?;
    let (mut now, mut draft) = (RobotsBook::new(), RobotsBook::new());
    now.add(None, None, "in force".into(), req.robots.as_bytes());
    draft.add(None, None, "draft".into(), req.after.as_bytes());
    let options = Options {
        from_start: true,
        ..Options::default()
    };
    let mut auditor = Auditor::new(&now, Catalogue::builtin(), options, 1).with_proposed(&draft);
    let mut unread = 0;
    for line in &lines {
        match parser.parse(line) {
            Ok(Some(entry)) => auditor.feed(0, &entry, &Unchecked),
            Ok(None) => {}
            Err(_) => unread += 1,
        }
    }
    let report = auditor.finish();
    Ok(WhatIfResponse {
        format: parser.format().to_string(),
        lines: lines.len() as u64,
        unread,
        bot_requests: report.bots.iter().map(|b| b.counts.requests).sum(),
        proposed: report.proposed.unwrap_or(ProposedReport {
            newly_disallowed: 0,
            newly_allowed: 0,
            bots: Vec::new(),
        }),
    })
}
