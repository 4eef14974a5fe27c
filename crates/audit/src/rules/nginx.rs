//! nginx: `map` and `geo` blocks for the http block, setting
//! `$mannerly_deny` to 1 for a request a rule refuses.

use std::fmt::Write;

use super::{addresses, by_agent, DenyRule};

pub(super) fn write(out: &mut String, rules: &[DenyRule]) {
    out.push_str("\nmap $uri $mannerly_robots_txt {\n    default 0;\n    /robots.txt 1;\n}\n");
    let mut flags = Vec::new();
    for (n, r, pattern, inside) in by_agent(rules) {
        let _ = writeln!(out, "\n# {n}. {}", super::header::what(&r.deny));
        let _ = writeln!(
            out,
            "map $http_user_agent $mannerly_ua_{n} {{\n    default 0;\n    \"~*{pattern}\" 1;\n}}"
        );
        match inside {
            None => flags.push(format!("$mannerly_ua_{n}")),
            Some(inside) => {
                let _ = writeln!(out, "geo $mannerly_in_{n} {{\n    default 0;");
                for net in inside {
                    let _ = writeln!(out, "    {net} 1;");
                }
                out.push_str("}\n");
                let _ = writeln!(
                    out,
                    "map \"$mannerly_ua_{n}$mannerly_in_{n}\" $mannerly_spoof_{n} {{\n    default 0;\n    \"10\" 1;\n}}"
                );
                flags.push(format!("$mannerly_spoof_{n}"));
            }
        }
    }
    let addrs = addresses(rules);
    if !addrs.is_empty() {
        out.push_str("\n# Refused addresses.\ngeo $mannerly_address {\n    default 0;\n");
        for a in &addrs {
            let _ = writeln!(out, "    {a} 1;");
        }
        out.push_str("}\n");
        flags.push("$mannerly_address".to_owned());
    }
    let joined = if flags.is_empty() {
        "0".to_owned()
    } else {
        flags.concat()
    };
    let _ = writeln!(
        out,
        "\n# 1 when a rule refuses the request, never for /robots.txt.\nmap \"$mannerly_robots_txt:{joined}\" $mannerly_deny {{\n    default 1;\n    \"~^1:\" 0;\n    \"~^0:0*$\" 0;\n}}"
    );
}
