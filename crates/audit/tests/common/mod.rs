//! What the scripted-log tests share: a Googlebot User-Agent, and an
//! identity check by Google's address block.

#![allow(dead_code)]

use mannerly_audit::{Identify, Identity, Known};
use mannerly_logs::Entry;

pub const GOOGLEBOT: &str =
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";

/// Google's crawlers are verified from 66.249.0.0/16 and spoofed from
/// anywhere else; nothing else can be checked.
pub struct GoogleRanges;

impl Identify for GoogleRanges {
    fn identify(&self, bot: Option<&Known>, entry: &Entry<'_>) -> Identity {
        let google = bot.is_some_and(|k| k.operator.as_deref() == Some("Google"));
        match entry.client {
            Some(ip) if google && ip.to_string().starts_with("66.249.") => Identity::Verified,
            Some(_) if google => Identity::Spoofed,
            _ => Identity::Unverified,
        }
    }
}
