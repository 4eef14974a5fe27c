//! JAFAR (draft-illyes-webbotauth-jafar): the JSON file in which a
//! crawler's operator publishes the IP ranges it crawls from, linked from
//! the crawler's page with `rel="client-ranges"`. Written for an
//! operator's kit ([`Jafar::to_json`]) and checked as a consumer must read
//! it ([`check`]): the media type's major version, `creationTime` within
//! 24 h, each prefix object with exactly one of `ipv4Prefix` and
//! `ipv6Prefix` (others are ignored, and said), valid networks, none in
//! private or otherwise non-public space. Sans-IO: text and instants in.

use std::net::IpAddr;

use ipnet::IpNet;
use mannerly_time::UnixMillis;

/// The media type a JAFAR file is served as.
pub const MEDIA_TYPE: &str = "application/jafar+json";
/// The version this module writes and reads (a major version above it is
/// not parsed).
pub const VERSION: (u32, u32) = (1, 0);
/// A file whose `creationTime` is older than this is stale: publishers
/// renew it at least daily.
pub const MAX_AGE_MS: u64 = 24 * 3600 * 1000;
/// A `creationTime` this far ahead of the reader's clock is tolerated.
const SKEW_MS: u64 = 5 * 60 * 1000;

/// `Content-Type` value to serve a JAFAR file with.
pub fn content_type() -> String {
    format!("{MEDIA_TYPE}; version={}.{}", VERSION.0, VERSION.1)
}

/// One published prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prefix {
    /// The network.
    pub net: IpNet,
    /// The services it serves (empty: all of the publisher's).
    pub services: Vec<String>,
}

/// A JAFAR file's contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Jafar {
    /// `creationTime`.
    pub creation_time: UnixMillis,
    /// `notes`.
    pub notes: Option<String>,
    /// The usable prefixes, in file order.
    pub prefixes: Vec<Prefix>,
}

impl Jafar {
    /// The file, as JSON (one prefix a line, for a reader's diff).
    pub fn to_json(&self) -> String {
        let mut out = format!(
            "{{\n  \"creationTime\": {},\n",
            serde_json::Value::from(creation_time(self.creation_time))
        );
        if let Some(n) = &self.notes {
            out.push_str(&format!(
                "  \"notes\": {},\n",
                serde_json::Value::from(n.as_str())
            ));
        }
        out.push_str("  \"prefixes\": [");
        for (i, p) in self.prefixes.iter().enumerate() {
            let field = match p.net {
                IpNet::V4(_) => "ipv4Prefix",
                IpNet::V6(_) => "ipv6Prefix",
            };
            let mut obj = serde_json::json!({ field: p.net.to_string() });
            if !p.services.is_empty() {
                obj["services"] = serde_json::json!(p.services);
            }
            out.push_str(if i == 0 { "\n    " } else { ",\n    " });
            out.push_str(&obj.to_string());
        }
        out.push_str(if self.prefixes.is_empty() {
            "]\n}\n"
        } else {
            "\n  ]\n}\n"
        });
        out
    }
}

/// `creationTime` as JAFAR writes it: ISO 8601, UTC, to the second.
fn creation_time(t: UnixMillis) -> String {
    let s = t.to_rfc3339_millis();
    // `2026-11-29T10:00:00.123Z` -> `2026-11-29T10:00:00Z`
    match s.split_once('.') {
        Some((head, _)) => format!("{head}Z"),
        None => s,
    }
}

/// What a check of a served JAFAR file found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Checked {
    /// The file, when it could be read (prefixes ignored are left out).
    pub jafar: Option<Jafar>,
    /// Every problem, each saying where.
    pub problems: Vec<String>,
}

/// Reads a JAFAR file served with `content_type` (its `Content-Type`
/// header, if any), at `now`.
pub fn check(body: &str, content_type: Option<&str>, now: UnixMillis) -> Checked {
    let mut problems = Vec::new();
    if let Err(p) = media_type(content_type) {
        let fatal = p.contains("major version");
        problems.push(p);
        if fatal {
            return Checked {
                jafar: None,
                problems,
            };
        }
    }
    let v: serde_json::Value = match serde_json::from_str(body) {
        Ok(v) => v,
        Err(e) => {
            problems.push(format!("not JSON: {e}"));
            return Checked {
                jafar: None,
                problems,
            };
        }
    };
    let Some(obj) = v.as_object() else {
        problems.push("the file is not a JSON object".into());
        return Checked {
            jafar: None,
            problems,
        };
    };
    let creation = read_creation_time(obj.get("creationTime"), now, &mut problems);
    let prefixes = match obj.get("prefixes").and_then(|p| p.as_array()) {
        Some(list) => list
            .iter()
            .enumerate()
            .filter_map(|(i, p)| read_prefix(i, p, &mut problems))
            .collect(),
        None => {
            problems.push("no \"prefixes\" array (required)".into());
            Vec::new()
        }
    };
    let jafar = creation.map(|creation_time| Jafar {
        creation_time,
        notes: obj.get("notes").and_then(|n| n.as_str()).map(str::to_owned),
        prefixes,
    });
    Checked { jafar, problems }
}

/// The `Content-Type` against JAFAR's media type and its version.
fn media_type(content_type: Option<&str>) -> Result<(), String> {
    let Some(ct) = content_type else {
        return Err(format!(
            "served with no Content-Type: serve it as {}",
            self::content_type()
        ));
    };
    let mut parts = ct.split(';');
    let essence = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    if essence != MEDIA_TYPE {
        return Err(format!("served as {ct:?}, not {}", self::content_type()));
    }
    let version = parts.find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("version")
            .then(|| v.trim().trim_matches('"').to_owned())
    });
    let Some(version) = version else {
        return Ok(());
    };
    let major = version
        .split('.')
        .next()
        .and_then(|m| m.parse::<u32>().ok());
    match major {
        Some(m) if m > VERSION.0 => Err(format!(
            "major version {m} (version={version}) is newer than {}: not read",
            VERSION.0
        )),
        Some(_) => Ok(()),
        None => Err(format!("version={version:?} is not major.minor")),
    }
}

fn read_creation_time(
    v: Option<&serde_json::Value>,
    now: UnixMillis,
    problems: &mut Vec<String>,
) -> Option<UnixMillis> {
    let Some(text) = v.and_then(|t| t.as_str()) else {
        problems.push("no \"creationTime\" (required)".into());
        return None;
    };
    let Some(t) = UnixMillis::parse_rfc3339_millis(text) else {
        problems.push(format!(
            "creationTime {text:?} is not an ISO 8601 time in UTC (\"Z\")"
        ));
        return None;
    };
    if t.0 > now.0 + SKEW_MS {
        problems.push(format!("creationTime {text} is in the future"));
    } else if now.0.saturating_sub(t.0) > MAX_AGE_MS {
        let hours = now.0.saturating_sub(t.0) / 3_600_000;
        problems.push(format!(
            "creationTime {text} is {hours} h old: a publisher renews the file at least every 24 h"
        ));
    }
    Some(t)
}

/// One prefix object; `None` when it is to be ignored (said in `problems`).
fn read_prefix(i: usize, p: &serde_json::Value, problems: &mut Vec<String>) -> Option<Prefix> {
    let (v4, v6) = (p.get("ipv4Prefix"), p.get("ipv6Prefix"));
    let (field, text, want_v4) = match (v4.and_then(|x| x.as_str()), v6.and_then(|x| x.as_str())) {
        (Some(t), None) if v6.is_none() => ("ipv4Prefix", t, true),
        (None, Some(t)) if v4.is_none() => ("ipv6Prefix", t, false),
        _ => {
            problems.push(format!(
                "prefixes[{i}] has both or neither of ipv4Prefix and ipv6Prefix (or not as text): ignored"
            ));
            return None;
        }
    };
    let bad = |why: &str| format!("prefixes[{i}] {field} {text:?} {why}: ignored");
    let Ok(net) = text.parse::<IpNet>() else {
        problems.push(bad("is not CIDR"));
        return None;
    };
    if matches!(net, IpNet::V4(_)) != want_v4 {
        problems.push(bad("is of the other address family"));
        return None;
    }
    if net.trunc() != net {
        problems.push(format!(
            "prefixes[{i}] {field} {text:?} has host bits set (the network is {})",
            net.trunc()
        ));
    }
    if let Some(what) = non_public(&net) {
        problems.push(bad(&format!("overlaps {what}")));
        return None;
    }
    let services = match p.get("services") {
        None => Vec::new(),
        Some(s) => match s.as_array() {
            Some(list) if list.iter().all(|x| x.is_string()) => list
                .iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect(),
            _ => {
                problems.push(format!("prefixes[{i}] services is not an array of strings"));
                Vec::new()
            }
        },
    };
    Some(Prefix {
        net: net.trunc(),
        services,
    })
}

/// Space no crawler crawls the public web from, as `(network, what)`.
const NON_PUBLIC: [(&str, &str); 12] = [
    ("0.0.0.0/8", "\"this network\" (0.0.0.0/8)"),
    ("10.0.0.0/8", "private space (10.0.0.0/8)"),
    (
        "100.64.0.0/10",
        "shared carrier-grade NAT space (100.64.0.0/10)",
    ),
    ("127.0.0.0/8", "loopback (127.0.0.0/8)"),
    ("169.254.0.0/16", "link-local space (169.254.0.0/16)"),
    ("172.16.0.0/12", "private space (172.16.0.0/12)"),
    ("192.168.0.0/16", "private space (192.168.0.0/16)"),
    ("224.0.0.0/3", "multicast and reserved space (224.0.0.0/3)"),
    ("::/127", "the unspecified and loopback addresses"),
    ("fc00::/7", "unique local space (fc00::/7)"),
    ("fe80::/10", "link-local space (fe80::/10)"),
    ("ff00::/8", "multicast (ff00::/8)"),
];

/// What non-public space `net` overlaps, if any.
pub fn non_public(net: &IpNet) -> Option<&'static str> {
    NON_PUBLIC.iter().find_map(|(n, what)| {
        let n: IpNet = n.parse().ok()?;
        (n.contains(net) || net.contains(&n)).then_some(*what)
    })
}

impl Jafar {
    /// The most specific prefix holding `ip` (JAFAR's rule for overlaps).
    pub fn prefix_of(&self, ip: IpAddr) -> Option<&Prefix> {
        self.prefixes
            .iter()
            .filter(|p| p.net.contains(&ip))
            .max_by_key(|p| p.net.prefix_len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: UnixMillis = UnixMillis(1_795_000_000_000);

    fn file(creation: UnixMillis, prefixes: &str) -> String {
        format!(
            "{{\"creationTime\":\"{}\",\"prefixes\":[{prefixes}]}}",
            creation_time(creation)
        )
    }

    #[test]
    fn a_written_file_reads_back_without_a_problem() {
        let j = Jafar {
            creation_time: UnixMillis(NOW.0 / 1000 * 1000),
            notes: Some("ExampleBot's ranges".into()),
            prefixes: vec![
                Prefix {
                    net: "66.249.64.0/20".parse().expect("net"),
                    services: vec!["ExampleBot".into()],
                },
                Prefix {
                    net: "2001:4860:4000::/36".parse().expect("net"),
                    services: Vec::new(),
                },
            ],
        };
        let c = check(&j.to_json(), Some(&content_type()), NOW);
        assert_eq!(c.problems, Vec::<String>::new());
        assert_eq!(c.jafar, Some(j));
    }

    #[test]
    fn each_problem_is_said_where_it_is() {
        let stale = UnixMillis(NOW.0 - 30 * 3_600_000);
        let body = file(
            stale,
            r#"{"ipv4Prefix":"66.249.64.0/20","ipv6Prefix":"2001:db8::/32"},{},
               {"ipv4Prefix":"10.1.0.0/16"},{"ipv4Prefix":"66.249.64.1/20"},
               {"ipv6Prefix":"66.249.0.0/16"},{"ipv4Prefix":"8.8.8.0/24","services":"x"}"#,
        );
        let c = check(&body, Some("application/json"), NOW);
        let said = c.problems.join("\n");
        for expected in [
            "not application/jafar+json; version=1.0",
            "is 30 h old",
            "prefixes[0] has both or neither",
            "prefixes[1] has both or neither",
            "prefixes[2] ipv4Prefix \"10.1.0.0/16\" overlaps private space",
            "prefixes[3] ipv4Prefix \"66.249.64.1/20\" has host bits set",
            "prefixes[4] ipv6Prefix \"66.249.0.0/16\" is of the other address family",
            "prefixes[5] services is not an array of strings",
        ] {
            assert!(said.contains(expected), "{expected}\n{said}");
        }
        let read = c.jafar.expect("read, with problems");
        assert_eq!(read.prefixes.len(), 2, "the two usable ones");
    }

    #[test]
    fn a_newer_major_version_is_not_read_and_a_minor_one_is() {
        let body = file(NOW, r#"{"ipv4Prefix":"8.8.8.0/24"}"#);
        let c = check(&body, Some("application/jafar+json; version=2.0"), NOW);
        assert!(c.jafar.is_none() && c.problems[0].contains("major version 2"));
        let c = check(&body, Some("application/jafar+json; version=1.11"), NOW);
        assert!(c.problems.is_empty(), "{:?}", c.problems);
    }

    #[test]
    fn the_most_specific_prefix_speaks_for_an_address() {
        let body = file(
            NOW,
            r#"{"ipv4Prefix":"198.51.100.0/22","services":["A"]},{"ipv4Prefix":"198.51.100.0/24","services":["B"]}"#,
        );
        let j = check(&body, Some(MEDIA_TYPE), NOW).jafar.expect("read");
        let ip: IpAddr = "198.51.100.7".parse().expect("ip");
        assert_eq!(
            j.prefix_of(ip).map(|p| p.services.clone()),
            Some(vec!["B".to_owned()])
        );
        let ip: IpAddr = "198.51.101.7".parse().expect("ip");
        assert_eq!(
            j.prefix_of(ip).map(|p| p.services.clone()),
            Some(vec!["A".to_owned()])
        );
    }

    proptest::proptest! {
        /// Any text: a verdict, never a panic.
        #[test]
        fn any_text_is_checked_without_a_panic(body in ".{0,300}", ct in proptest::option::of(".{0,40}")) {
            let _ = check(&body, ct.as_deref(), NOW);
        }
    }
}
