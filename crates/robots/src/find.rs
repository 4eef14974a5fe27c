//! Finding a byte, or the first of a few, in the short slices a
//! robots.txt is made of (a line, a key, a value) and in the URLs checked
//! against it. `memchr` pays a setup (choosing its vector code, aligning)
//! that costs more than reading twenty bytes, and this is called for every
//! line and every URL; here the first bytes are compared sixteen at a time
//! (eight for a slice shorter than that), and only a longer tail goes to
//! `memchr`.

use wide::u8x16;

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Bytes compared here before the rest goes to `memchr`.
const SHORT: usize = 128;

/// The high bit of each byte of `w` that equals `b`. Bytes above a match
/// may be marked too (a borrow runs on), never a byte below the first one:
/// the lowest mark is exact.
fn marks(w: u64, b: u8) -> u64 {
    let x = w ^ (ONES * u64::from(b));
    x.wrapping_sub(ONES) & !x & HIGH
}

/// The first of `needles` in `hay`, reading up to [`SHORT`] bytes by
/// vectors (or words) and handing what is past them to `tail`.
fn first_of<const N: usize>(
    hay: &[u8],
    needles: [u8; N],
    tail: impl Fn(&[u8]) -> Option<usize>,
) -> Option<usize> {
    let (head, rest) = hay.split_at(hay.len().min(SHORT));
    let found = if head.len() >= 16 {
        in_vectors(head, needles)
    } else {
        in_words(head, needles)
    };
    if found.is_some() || rest.is_empty() {
        return found;
    }
    tail(rest).map(|i| SHORT + i)
}

/// The first of `needles` in `head` (at least sixteen bytes), sixteen
/// bytes at a time: the last, partial run is read as the last sixteen
/// bytes, those already read shifted out.
fn in_vectors<const N: usize>(head: &[u8], needles: [u8; N]) -> Option<usize> {
    let splats = needles.map(u8x16::splat);
    let hits = |bytes: &[u8]| -> u32 {
        let v = u8x16::from(<[u8; 16]>::try_from(bytes).unwrap_or_default());
        let equal = splats.iter().fold(u8x16::splat(0), |m, &n| m | v.cmp_eq(n));
        equal.move_mask() as u32
    };
    let mut chunks = head.chunks_exact(16);
    let mut at = 0;
    for chunk in chunks.by_ref() {
        let m = hits(chunk);
        if m != 0 {
            return Some(at + m.trailing_zeros() as usize);
        }
        at += 16;
    }
    let left = chunks.remainder().len();
    if left == 0 {
        return None;
    }
    let last = head.len().checked_sub(16).and_then(|i| head.get(i..))?;
    let m = hits(last) >> (16 - left);
    (m != 0).then(|| at + m.trailing_zeros() as usize)
}

/// The first of `needles` in `head` (shorter than a vector), eight bytes
/// at a time.
fn in_words<const N: usize>(head: &[u8], needles: [u8; N]) -> Option<usize> {
    let in_word = |bytes: &[u8]| -> u64 {
        let mut w = [0; 8];
        w.copy_from_slice(bytes);
        let w = u64::from_le_bytes(w);
        needles.iter().fold(0, |m, &b| m | marks(w, b))
    };
    let mut words = head.chunks_exact(8);
    let mut at = 0;
    for chunk in words.by_ref() {
        let m = in_word(chunk);
        if m != 0 {
            return Some(at + (m.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    let left = words.remainder().len();
    if left > 0 {
        // The last eight bytes, less the ones already read (no match there,
        // so no borrow from them either: the lowest mark left is exact).
        let found = match head.last_chunk::<8>() {
            Some(last) => Some(in_word(last) >> (8 * (8 - left)))
                .filter(|&m| m != 0)
                .map(|m| (m.trailing_zeros() / 8) as usize),
            None => head.iter().position(|b| needles.contains(b)),
        };
        if let Some(i) = found {
            return Some(at + i);
        }
    }
    None
}

/// `memchr::memchr`, cheaper on short slices.
pub(crate) fn byte(hay: &[u8], b: u8) -> Option<usize> {
    first_of(hay, [b], |r| memchr::memchr(b, r))
}

/// `memchr::memchr2`, cheaper on short slices.
pub(crate) fn byte2(hay: &[u8], a: u8, b: u8) -> Option<usize> {
    first_of(hay, [a, b], |r| memchr::memchr2(a, b, r))
}

/// Where a URL's authority ends: its first `/`, `?`, `;` or `#`.
pub(crate) fn authority_end(hay: &[u8]) -> Option<usize> {
    first_of(hay, [b'/', b'?', b';', b'#'], |rest| {
        let delimiter = memchr::memchr3(b'/', b'?', b';', rest);
        let before = rest.get(..delimiter.unwrap_or(rest.len()))?;
        memchr::memchr(b'#', before).or(delimiter)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_and_only_in_range() {
        assert_eq!(byte(b"", b'#'), None);
        assert_eq!(byte(b"/a#b#", b'#'), Some(2));
        assert_eq!(byte2(b"abcdefgh\r\n", b'\n', b'\r'), Some(8));
        // A borrow past a match marks the byte above it, never below.
        assert_eq!(byte(b"\x01\x00\x01\x01\x01\x01\x01\x01", 0), Some(1));
        let mut long = vec![b'a'; 200];
        long[150] = b':';
        assert_eq!(byte(&long, b':'), Some(150));
        assert_eq!(byte(&long[..150], b':'), None);
        // Each vector's first and last byte, and the overlapping last run.
        for at in [0, 15, 16, 31, 32, 40, 47] {
            let mut hay = vec![b'a'; 48];
            hay[at] = b'#';
            assert_eq!(byte(&hay, b'#'), Some(at));
            assert_eq!(byte2(&hay[..at], b'#', b'?'), None);
        }
    }

    proptest::proptest! {
        /// Whatever the bytes and wherever the word boundaries and the
        /// hand-over to `memchr` fall, the answer is `memchr`'s.
        #[test]
        fn agrees_with_memchr(
            hay in proptest::collection::vec(
                proptest::sample::select(vec![0u8, 1, b'#', b'/', b'?', b'\n', b'\r', 0x80, 0xFF, b'a']),
                0..300,
            ),
            a in proptest::sample::select(vec![0u8, 1, b'#', b'/', 0x80, 0xFF]),
            b in proptest::sample::select(vec![b'?', b'\n', 0x7F, b'a']),
        ) {
            proptest::prop_assert_eq!(byte(&hay, a), memchr::memchr(a, &hay));
            proptest::prop_assert_eq!(byte2(&hay, a, b), memchr::memchr2(a, b, &hay));
            proptest::prop_assert_eq!(
                authority_end(&hay),
                hay.iter().position(|c| b"/?;#".contains(c))
            );
        }
    }
}
