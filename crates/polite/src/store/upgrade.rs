//! Stores of formats 1 to 5 kept each table in a keyspace of its own, and
//! `key-mode`, `format` and `gen` in `meta`; format 6 keeps the queue and
//! the requests in flight in `work`, the hosts' and robots.txt tables in
//! `meta`, and the seen-set where it was. Opening an older store copies
//! the entries of its queue, in-flight, hosts and robots keyspaces
//! (adding the tag formats 1 and 2 lacked), records the current format,
//! and then deletes those keyspaces. Format 7 has 6's layout.
//!
//! The copy goes in batches, the format last: a kill halfway leaves the old
//! keyspaces as they were and the old format recorded, and the next open
//! copies again (the same keys, the same values). A kill after the format
//! and before the deletes leaves old keyspaces the next open deletes, as it
//! deletes the empty ones an older release makes before it refuses this
//! store.

use fjall::{Keyspace, KeyspaceCreateOptions};

use super::{Store, AFTER_MARKER, FLIGHT, FORMAT, HOSTS, QUEUE, ROBOTS};
use crate::frontier::FrontierError;

/// The old keyspaces, each with the table it goes to.
const OLD: [(&str, u8); 4] = [
    ("queue", QUEUE),
    ("flight", FLIGHT),
    ("hosts", HOSTS),
    ("robots", ROBOTS),
];

/// Entries per batch of the copy.
const CHUNK: usize = 10_000;

/// Copies a store of an older layout into `store`'s, if it is one. A
/// newer format is left alone, for [`Store::check_format`] to refuse.
pub(super) fn from_older_layout(store: &mut Store) -> Result<(), FrontierError> {
    let mut old = Vec::new();
    for (name, table) in OLD {
        if store.db.keyspace_exists(name) {
            let ks = store
                .db
                .keyspace(name, KeyspaceCreateOptions::default)
                .map_err(|e| store.err(e))?;
            old.push((ks, table));
        }
    }
    if old.is_empty() {
        return Ok(());
    }
    match store.recorded_format()? {
        Some(f) if f > FORMAT => return Ok(()),
        // Format 6 has the layout of this one.
        Some(f) if f >= 6 => {}
        older => copy(store, older, &old)?,
    }
    for (ks, _) in old {
        store.db.delete_keyspace(ks).map_err(|e| store.err(e))?;
    }
    Ok(())
}

/// Copies the old keyspaces' entries. `format`: the one recorded; format
/// 1 recorded a key mode and none, and a store that recorded neither was
/// made and never written to.
fn copy(
    store: &mut Store,
    format: Option<u32>,
    old: &[(Keyspace, u8)],
) -> Result<(), FrontierError> {
    let untagged = match format {
        Some(f) => f <= 2,
        None => store.get_meta(b"key-mode")?.is_some(),
    };
    let mut n = 0usize;
    for (ks, table) in old {
        for item in ks.range(AFTER_MARKER..) {
            let (k, v) = item.into_inner().map_err(|e| store.err(e))?;
            let v = match *table {
                QUEUE if untagged => tagged_queue_value(&v),
                FLIGHT if untagged => tagged_flight_value(store, &v)?,
                _ => v.to_vec(),
            };
            store.put_raw(*table, &k, &v);
            n += 1;
            // Every batch moves the generation on: a summary the old store
            // wrote is not trusted for the new one.
            if n.is_multiple_of(CHUNK) {
                store.commit()?;
            }
        }
    }
    store.put_meta(b"format", &FORMAT.to_be_bytes());
    store.commit()
}

/// A format-1 or -2 queue value (the bare URL) with tag 0 before it.
fn tagged_queue_value(url: &[u8]) -> Vec<u8> {
    let mut v = 0u32.to_be_bytes().to_vec();
    v.extend_from_slice(url);
    v
}

/// A format-1 or -2 in-flight value (`[255 - priority][key length
/// u16][key][URL]`) with tag 0 before its URL.
fn tagged_flight_value(store: &Store, v: &[u8]) -> Result<Vec<u8>, FrontierError> {
    let bad = || store.corrupt("an in-flight entry is malformed");
    let len = usize::from(u16::from_be_bytes([
        *v.get(1).ok_or_else(bad)?,
        *v.get(2).ok_or_else(bad)?,
    ]));
    let head = v.get(..3 + len).ok_or_else(bad)?;
    let mut out = head.to_vec();
    out.extend_from_slice(&0u32.to_be_bytes());
    out.extend_from_slice(&v[3 + len..]);
    Ok(out)
}
