//! A robots.txt kept while it is good ([`GoodCopy`]), and how a store
//! writes its body ([`body_json`]). Part of [`policy`](crate::policy),
//! which re-exports both.

use mannerly_time::UnixMillis;

/// A fetched robots.txt that can stand in while the origin is unreachable.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GoodCopy {
    /// The robots.txt body, as fetched (at most the size limit). Stored as
    /// text when it is UTF-8, as robots.txt nearly always is (see
    /// [`body_json`]).
    #[serde(with = "body_json")]
    pub body: Vec<u8>,
    /// When it was fetched.
    pub fetched_at: UnixMillis,
    /// The status it came with (200, or 304 on a refresh).
    pub status: u16,
    /// Its ETag, for conditional refreshes.
    pub etag: Option<String>,
    /// Its Last-Modified, for conditional refreshes.
    pub last_modified: Option<String>,
    /// Served with `Cache-Control: no-store`: never persisted.
    pub no_store: bool,
}

/// How a [`GoodCopy`]'s body is written in a store's JSON: a string when
/// it is UTF-8, else an array of byte values, and either is read back.
///
/// Serde writes a `Vec<u8>` as an array of numbers, some 3.7 bytes of JSON
/// per byte of a robots.txt (`Disallow` is `[68,105,115,97,108,108,111,119]`):
/// every origin's state in a fleet's Redis, and every save of it, was
/// nearly four times the file. Text is the file's own size, plus escapes.
/// A state stored as an array (by an earlier version, or for a body that
/// is not UTF-8) reads back the same, byte for byte.
pub mod body_json {
    use serde::de::{Deserializer, SeqAccess, Visitor};
    use serde::Serializer;

    /// Writes `body` as a string when it is UTF-8, else as an array of
    /// byte values.
    pub fn serialize<S: Serializer>(body: &[u8], s: S) -> Result<S::Ok, S::Error> {
        match std::str::from_utf8(body) {
            Ok(text) => s.serialize_str(text),
            Err(_) => s.collect_seq(body),
        }
    }

    /// Reads a body written either way.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        d.deserialize_any(Body)
    }

    struct Body;

    impl<'de> Visitor<'de> for Body {
        type Value = Vec<u8>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a robots.txt body: a string, or an array of byte values")
        }

        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Vec<u8>, E> {
            Ok(v.as_bytes().to_vec())
        }

        fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Vec<u8>, E> {
            Ok(v.into_bytes())
        }

        fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
            Ok(v.to_vec())
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
            // The size hint comes from the input: bounded to the body limit.
            let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(512 * 1024));
            while let Some(b) = seq.next_element::<u8>()? {
                out.push(b);
            }
            Ok(out)
        }
    }
}
