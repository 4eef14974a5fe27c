//! A host's politeness state as the store keeps it: a layout mark, then
//! the fields in postcard (varints: about 40 bytes where JSON took about
//! 260, and a host's state is written with every release). Stores written
//! before hold JSON, which is still read.

use std::borrow::Cow;

use crate::controller::HostState;

/// The mark of [`HostState`]'s layout as of this version. Adding, removing
/// or reordering its fields changes the layout: give it a new mark and
/// keep reading this one (`the_layout_is_pinned` fails until then).
const V1: u8 = 0xB1;

/// Room for a state without long pause or skip reasons.
pub(super) const INLINE: usize = 128;

/// `state` in the store's form, in `buf` when it fits. `None` only if
/// postcard cannot write it at all (not expected: it fails for want of
/// room); the store then keeps the host's previous state.
pub(super) fn encode<'b>(state: &HostState, buf: &'b mut [u8; INLINE]) -> Option<Cow<'b, [u8]>> {
    buf[0] = V1;
    match postcard::to_slice(state, &mut buf[1..]).map(|used| used.len()) {
        Ok(n) => Some(Cow::Borrowed(&buf[..=n])),
        Err(_) => postcard::to_extend(state, vec![V1]).ok().map(Cow::Owned),
    }
}

/// A key's state as `store` holds it, or the store named as corrupt.
pub(super) fn decode_stored(
    store: &crate::store::Store,
    key: &str,
    bytes: &[u8],
) -> Result<HostState, crate::frontier::FrontierError> {
    decode(bytes).map_err(|e| crate::frontier::FrontierError::Corrupt {
        store: store.path().display().to_string(),
        what: format!("the politeness state of {key}: {e}"),
    })
}

/// A state read back, or what is wrong with the bytes.
pub(super) fn decode(bytes: &[u8]) -> Result<HostState, String> {
    match bytes.split_first() {
        Some((&V1, rest)) => match postcard::take_from_bytes::<HostState>(rest) {
            Ok((state, [])) => Ok(state),
            Ok((_, extra)) => Err(format!("{} bytes past its end", extra.len())),
            Err(e) => Err(e.to_string()),
        },
        Some((b'{', _)) => serde_json::from_slice(bytes).map_err(|e| e.to_string()),
        Some((b, _)) => Err(format!("an unknown layout (first byte {b:#04x})")),
        None => Err("no bytes".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::UnixMillis;
    use proptest::prelude::*;

    fn sample() -> HostState {
        HostState {
            in_flight: 1,
            next_allowed: UnixMillis(1_764_000_000_500),
            base_delay: 1_000,
            delay: 2_000,
            retry_after_until: Some(UnixMillis(1_764_000_003_000)),
            failures: 2,
            paused_until: None,
            pause_reason: Some("503 three times".into()),
            skip: None,
            ewma_latency: Some(12.5),
            window: 0,
            started: 7,
            last_start: Some(UnixMillis(1_764_000_000_000)),
            previous_start: None,
        }
    }

    #[test]
    fn the_layout_is_pinned() {
        let mut buf = [0; INLINE];
        let bytes = encode(&sample(), &mut buf).expect("encoded").into_owned();
        assert_eq!(
            bytes,
            [
                // mark, in_flight, next_allowed (LEB128), base_delay, delay
                [0xb1, 1, 0xf4, 0xd3, 0xdf, 0xb4, 0xab, 0x33, 0xe8, 0x07, 0xd0, 0x0f].as_slice(),
                // retry_after_until: Some, then its instant; failures
                &[1, 0xb8, 0xe7, 0xdf, 0xb4, 0xab, 0x33, 2],
                // paused_until: None; pause_reason: Some, 15 bytes
                &[0, 1, 15],
                b"503 three times",
                // skip: None; ewma_latency: Some(12.5), an f64 LE
                &[0, 1, 0, 0, 0, 0, 0, 0, 0x29, 0x40],
                // window, started, last_start: Some(..), previous_start: None
                &[0, 7, 1, 0x80, 0xd0, 0xdf, 0xb4, 0xab, 0x33, 0],
            ]
            .concat(),
            "HostState's stored layout changed: give it a new mark (see V1)"
        );
        assert_eq!(bytes.len(), 58);
    }

    #[test]
    fn json_from_older_stores_is_read() {
        let json = serde_json::to_vec(&sample()).expect("json");
        assert!(json.len() > 200, "{}", json.len());
        assert_eq!(decode(&json), Ok(sample()));
    }

    #[test]
    fn a_long_reason_goes_past_the_inline_room() {
        let state = HostState {
            skip: Some("x".repeat(300)),
            ..sample()
        };
        let mut buf = [0; INLINE];
        let bytes = encode(&state, &mut buf).expect("encoded");
        assert!(matches!(bytes, Cow::Owned(_)));
        assert_eq!(decode(&bytes), Ok(state));
    }

    #[test]
    fn damaged_bytes_are_named() {
        let mut buf = [0; INLINE];
        let bytes = encode(&sample(), &mut buf).expect("encoded").into_owned();
        let cut = decode(&bytes[..bytes.len() - 3]).expect_err("cut");
        assert!(!cut.is_empty());
        let long = decode(&[bytes.as_slice(), &[0, 0]].concat()).expect_err("long");
        assert_eq!(long, "2 bytes past its end");
        assert_eq!(
            decode(&[7, 1, 2]),
            Err("an unknown layout (first byte 0x07)".into())
        );
        assert_eq!(decode(&[]), Err("no bytes".into()));
    }

    fn instant() -> impl Strategy<Value = UnixMillis> {
        any::<u64>().prop_map(UnixMillis)
    }

    fn state() -> impl Strategy<Value = HostState> {
        (
            (any::<u32>(), instant(), any::<u64>(), any::<u64>()),
            (proptest::option::of(instant()), any::<u32>()),
            (
                proptest::option::of(instant()),
                proptest::option::of(".{0,200}"),
            ),
            (
                proptest::option::of(".{0,40}"),
                proptest::option::of(-1e12f64..1e12),
            ),
            (any::<u64>(), any::<u64>()),
            (
                proptest::option::of(instant()),
                proptest::option::of(instant()),
            ),
        )
            .prop_map(
                |((i, n, b, d), (r, f), (p, pr), (s, e), (w, st), (l, pv))| HostState {
                    in_flight: i,
                    next_allowed: n,
                    base_delay: b,
                    delay: d,
                    retry_after_until: r,
                    failures: f,
                    paused_until: p,
                    pause_reason: pr,
                    skip: s,
                    ewma_latency: e,
                    window: w,
                    started: st,
                    last_start: l,
                    previous_start: pv,
                },
            )
    }

    proptest! {
        #[test]
        fn every_state_reads_back_as_written(s in state()) {
            let mut buf = [0; INLINE];
            prop_assert_eq!(decode(&encode(&s, &mut buf).expect("encoded")), Ok(s));
        }

        #[test]
        fn any_bytes_decode_or_say_why(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
            if let Err(e) = decode(&bytes) {
                prop_assert!(!e.is_empty());
            }
        }
    }
}
