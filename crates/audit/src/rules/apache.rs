//! Apache httpd 2.4: `SetEnvIf` lines that set `mannerly_deny`, and the
//! `Require` block that refuses it.

use std::fmt::Write;

use super::{addresses, Deny, DenyRule};

/// Ranges tested in one `SetEnvIfExpr` line, at most (a line must stay
/// well under Apache's 8 KiB).
const RANGES_A_LINE: usize = 40;

pub(super) fn write(out: &mut String, rules: &[DenyRule]) {
    for (i, r) in rules.iter().enumerate() {
        let n = i + 1;
        let _ = writeln!(out, "\n# {n}. {}", super::header::what(&r.deny));
        match &r.deny {
            Deny::Token { pattern, .. } => {
                let _ = writeln!(out, "SetEnvIfNoCase User-Agent \"{pattern}\" mannerly_deny");
            }
            Deny::Spoofer {
                pattern, inside, ..
            } => {
                let _ = writeln!(
                    out,
                    "SetEnvIfNoCase User-Agent \"{pattern}\" mannerly_claims_{n}"
                );
                for chunk in inside.chunks(RANGES_A_LINE) {
                    let tests: Vec<String> = chunk.iter().map(|c| format!("-R '{c}'")).collect();
                    let _ = writeln!(
                        out,
                        "SetEnvIfExpr \"{}\" mannerly_inside_{n}",
                        tests.join(" || ")
                    );
                }
                let _ = writeln!(
                    out,
                    "SetEnvIfExpr \"-n reqenv('mannerly_claims_{n}') && -z reqenv('mannerly_inside_{n}')\" mannerly_deny"
                );
            }
            Deny::Address(_) => {}
        }
    }
    let addrs = addresses(rules);
    if !addrs.is_empty() {
        out.push_str("\n# Refused addresses.\n");
        for chunk in addrs.chunks(RANGES_A_LINE) {
            let tests: Vec<String> = chunk.iter().map(|a| format!("-R '{a}'")).collect();
            let _ = writeln!(out, "SetEnvIfExpr \"{}\" mannerly_deny", tests.join(" || "));
        }
    }
    out.push_str(
        "\n# Never /robots.txt.\nSetEnvIf Request_URI \"^/robots[.]txt$\" !mannerly_deny\n",
    );
    out.push_str("\n<Location \"/\">\n    <RequireAll>\n        Require all granted\n        Require not env mannerly_deny\n    </RequireAll>\n</Location>\n");
}
