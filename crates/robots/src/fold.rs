//! Names compared as robots.txt compares them, case-blind for ASCII,
//! eight bytes at a time: a crawler asking about each URL in turn has its
//! name compared with the file's at every call, and every line's key is
//! told apart from the directives' names.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// `w` with its ASCII capitals made small, eight bytes at once (a byte
/// with its high bit set is left as it is).
pub(crate) fn lower(w: u64) -> u64 {
    let seven_bits = w & !HIGH;
    let from_a = seven_bits + ONES * u64::from(0x80 - b'A');
    let past_z = seven_bits + ONES * u64::from(0x80 - b'Z' - 1);
    let capitals = from_a & !past_z & !w & HIGH;
    w | (capitals >> 2)
}

/// The first (up to eight) bytes of `b` as one little-endian number,
/// zeros past its end, read in at most two loads (also a view's rule and
/// path heads).
pub(crate) fn word(b: &[u8]) -> u64 {
    let n = b.len();
    let at = |i: usize, len: usize| -> u64 {
        let Some(s) = b.get(i..i + len) else {
            return 0;
        };
        match len {
            8 => <[u8; 8]>::try_from(s).map_or(0, u64::from_le_bytes),
            4 => <[u8; 4]>::try_from(s).map_or(0, |a| u64::from(u32::from_le_bytes(a))),
            2 => <[u8; 2]>::try_from(s).map_or(0, |a| u64::from(u16::from_le_bytes(a))),
            _ => s.first().map_or(0, |&x| u64::from(x)),
        }
    };
    match n {
        8.. => at(0, 8),
        4..=7 => at(0, 4) | at(n - 4, 4) << (8 * (n - 4)),
        2..=3 => at(0, 2) | at(n - 2, 2) << (8 * (n - 2)),
        1 => at(0, 1),
        _ => 0,
    }
}

/// Whether `a` and `b` are equal but for ASCII case (as
/// [`str::eq_ignore_ascii_case`]).
pub(crate) fn eq_ignore_case(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let (mut x, mut y) = (a.chunks_exact(8), b.chunks_exact(8));
    let whole = x
        .by_ref()
        .zip(y.by_ref())
        .all(|(p, q)| lower(word(p)) == lower(word(q)));
    whole && lower(word(x.remainder())) == lower(word(y.remainder()))
}

/// A summary of a name that names equal but for ASCII case share.
pub(crate) fn fold_key(name: &str) -> u64 {
    let bytes = name.as_bytes();
    bytes.chunks(8).fold(bytes.len() as u64, |h, chunk| {
        (h ^ lower(word(chunk)))
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(29)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Names from a few letters in both cases, the bytes beside the
    /// capitals and small letters, and a non-ASCII letter.
    fn name() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop::sample::select(vec![
                'a', 'B', 'z', 'Z', '@', '[', '`', '{', '-', '_', 'é', 'É',
            ]),
            0..20,
        )
        .prop_map(|c| c.into_iter().collect())
    }

    proptest! {
        #[test]
        fn compares_as_std_does(a in name(), b in name()) {
            prop_assert_eq!(eq_ignore_case(&a, &b), a.eq_ignore_ascii_case(&b));
            let flipped: String = a.chars().map(|c| if c.is_ascii_uppercase() {
                c.to_ascii_lowercase() } else { c.to_ascii_uppercase() }).collect();
            prop_assert!(eq_ignore_case(&a, &flipped));
            prop_assert_eq!(fold_key(&a), fold_key(&flipped));
        }

        #[test]
        fn words_read_every_byte(bytes in proptest::collection::vec(any::<u8>(), 0..=8)) {
            let mut padded = [0u8; 8];
            padded[..bytes.len()].copy_from_slice(&bytes);
            prop_assert_eq!(word(&bytes), u64::from_le_bytes(padded));
            let lowered = padded.map(|b| b.to_ascii_lowercase());
            prop_assert_eq!(lower(word(&bytes)), u64::from_le_bytes(lowered));
        }
    }
}
