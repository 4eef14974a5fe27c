//! The one rule that turns what was checked of a request into its
//! [`Identity`], shared by the audit and by `mannerly gate`, so a log read
//! tomorrow and a request judged at the door cannot disagree.

use serde::Serialize;

/// What could be checked of one request that names a bot; `None` where a
/// check could not be made (no signature, no published ranges, no DNS
/// answer yet).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Checked {
    /// What its Web Bot Auth signature says: verified, spoofed (invalid)
    /// or unverified (no key could be had).
    pub signature: Option<Identity>,
    /// Whether the address is in the ranges its operator publishes.
    pub in_ranges: Option<bool>,
    /// Whether forward-confirmed reverse DNS confirmed (`true`) or
    /// refuted (`false`) the address.
    pub rdns: Option<bool>,
}

impl Checked {
    /// The identity: a signature decides when it verifies or fails; an
    /// unverifiable one says nothing, and the address is checked instead.
    /// Either address check confirming is enough; else either refuting is
    /// a spoof; else nothing could be said.
    pub fn identity(self) -> Identity {
        match self.signature {
            Some(Identity::Verified) => return Identity::Verified,
            Some(Identity::Spoofed) => return Identity::Spoofed,
            _ => {}
        }
        if self.in_ranges == Some(true) || self.rdns == Some(true) {
            Identity::Verified
        } else if self.in_ranges == Some(false) || self.rdns == Some(false) {
            Identity::Spoofed
        } else {
            Identity::Unverified
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_decides_unless_it_cannot_be_checked() {
        let c = |signature, in_ranges, rdns| {
            Checked {
                signature,
                in_ranges,
                rdns,
            }
            .identity()
        };
        use Identity::*;
        assert_eq!(c(Some(Verified), Some(false), None), Verified);
        assert_eq!(c(Some(Spoofed), Some(true), Some(true)), Spoofed);
        assert_eq!(c(Some(Unverified), Some(true), None), Verified);
        assert_eq!(c(Some(Unverified), Some(false), None), Spoofed);
        assert_eq!(c(None, None, Some(true)), Verified);
        assert_eq!(c(None, Some(false), Some(true)), Verified);
        assert_eq!(c(None, None, Some(false)), Spoofed);
        assert_eq!(c(None, None, None), Unverified);
    }
}

/// Whether a bot's requests could be tied to its operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Identity {
    /// Checked, and the operator's published way confirms it.
    Verified,
    /// Its claimed operator publishes a way to check, and the request
    /// fails it.
    Spoofed,
    /// No way to check (or the check could not be made).
    Unverified,
}

impl Identity {
    /// The word used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Identity::Verified => "verified",
            Identity::Spoofed => "spoofed",
            Identity::Unverified => "unverified",
        }
    }
}
