//! What a crawler keeps beside each URL in the frontier, packed in the
//! frontier's `u32` tag: the URL's depth (links from a seed), the redirect
//! hops that led to it, the retries it has had, and whether it is a page
//! or a sitemap.

/// A URL's crawl metadata. Bits: depth 0..16, hops 16..20, retries
/// 20..24, sitemap 24.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tag {
    /// Links followed from a seed (seeds are 0); at most 65,535.
    pub depth: u16,
    /// Redirects followed to reach this URL; at most 15.
    pub hops: u8,
    /// Attempts that failed and were retried; at most 15.
    pub retries: u8,
    /// The URL is a sitemap (its entries are queued, it is not parsed for
    /// links).
    pub sitemap: bool,
}

impl Tag {
    /// Packs into the frontier's tag (hops and retries saturate at 15).
    pub fn pack(self) -> u32 {
        u32::from(self.depth)
            | (u32::from(self.hops.min(15)) << 16)
            | (u32::from(self.retries.min(15)) << 20)
            | (u32::from(self.sitemap) << 24)
    }

    /// Unpacks a frontier tag.
    pub fn unpack(v: u32) -> Tag {
        Tag {
            depth: (v & 0xFFFF) as u16,
            hops: ((v >> 16) & 0xF) as u8,
            retries: ((v >> 20) & 0xF) as u8,
            sitemap: (v >> 24) & 1 == 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        for t in [
            Tag::default(),
            Tag {
                depth: 65_535,
                hops: 5,
                retries: 15,
                sitemap: true,
            },
            Tag {
                depth: 3,
                hops: 0,
                retries: 2,
                sitemap: false,
            },
        ] {
            assert_eq!(Tag::unpack(t.pack()), t);
        }
    }
}
