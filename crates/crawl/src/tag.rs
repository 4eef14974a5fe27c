//! What a crawler keeps beside each URL in the frontier, packed in the
//! frontier's `u32` tag: the URL's depth (links from a seed), the redirect
//! hops that led to it, and the retries it has had.

/// A URL's crawl metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tag {
    /// Links followed from a seed (seeds are 0); at most 65,535.
    pub depth: u16,
    /// Redirects followed to reach this URL; at most 255.
    pub hops: u8,
    /// Attempts that failed and were retried; at most 255.
    pub retries: u8,
}

impl Tag {
    /// Packs into the frontier's tag.
    pub fn pack(self) -> u32 {
        u32::from(self.depth) | (u32::from(self.hops) << 16) | (u32::from(self.retries) << 24)
    }

    /// Unpacks a frontier tag.
    pub fn unpack(v: u32) -> Tag {
        Tag {
            depth: (v & 0xFFFF) as u16,
            hops: ((v >> 16) & 0xFF) as u8,
            retries: (v >> 24) as u8,
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
                retries: 255,
            },
            Tag {
                depth: 3,
                hops: 0,
                retries: 2,
            },
        ] {
            assert_eq!(Tag::unpack(t.pack()), t);
        }
    }
}
