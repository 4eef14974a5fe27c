//! One crawler's view of a parsed file ([`AgentRules`]): its rules sorted
//! into decision order once and indexed by the first bytes of their
//! literal prefix, for checking many URLs fast. Every crawler no group
//! names gets the same view, so it is built once per file and shared.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use super::key_index::KeyIndex;
use super::query::select_groups;
use super::*;
use crate::fold::{fold_key, word as head};

/// One crawler's view of a robots.txt file, for checking many URLs fast.
///
/// Rules are sorted once into decision order (priority, then Allow before
/// Disallow, then file order), so the first matching rule decides; answers
/// are identical to [`Robots::explain`]. A rule can only match a path that
/// starts with the rule's literal prefix (the bytes before its first `*`),
/// so rules are also indexed by the first bytes of that prefix and a check
/// only tries the rules of the path's bucket plus the few rules whose
/// prefix is too short to index.
#[derive(Debug, Clone)]
pub struct AgentRules<'r> {
    robots: &'r Robots,
    view: &'r View,
}

/// Named crawlers' views kept by the file: a slot per token a group
/// names (told apart case-insensitively, as groups are chosen), each view
/// built on first use. A crawler asking [`Robots::is_allowed`] once per
/// URL gets its view built once, as if it had kept [`Robots::for_agent`]'s,
/// and finds it again without a lock. Equal whatever they hold, and a
/// clone starts empty.
#[derive(Debug, Default)]
pub(super) struct NamedViews {
    slots: OnceLock<Slots>,
    /// The slot found last, tried first: a crawler asks about many URLs
    /// in a row (a hint only; a stale one costs one comparison).
    last: AtomicUsize,
}

/// The slots, their order by key, and two filters that say at once
/// that a crawler no group names has none: one bit per token's length
/// (before the agent is even read), one per token's [`fold_key`].
#[derive(Debug)]
struct Slots {
    list: Vec<NamedSlot>,
    /// Past [`SCAN_UP_TO`] slots, each slot's key and index, sorted: a
    /// name past the filters is found by binary search, so a file naming
    /// thousands of crawlers (which fill the filters) costs a crawler it
    /// does not name a dozen comparisons, not one per token. (Tokens made
    /// to share a crawler's key cost it one comparison each, as a scan
    /// would.) Empty for fewer slots, which are scanned.
    by_key: Vec<(u64, u32)>,
    lengths: u64,
    filter: [u64; 4],
}

/// A token's place in the file (its group and agent line), its
/// [`fold_key`], and its view.
#[derive(Debug)]
struct NamedSlot {
    group: u32,
    line: u32,
    key: u64,
    view: OnceLock<Box<View>>,
}

/// Up to this many slots are scanned for a name past the filters (most
/// files name a few crawlers); more are searched in [`Slots::by_key`].
const SCAN_UP_TO: usize = 32;

impl NamedViews {
    /// The slot of the token `agent` names, if a group names it.
    fn slot<'v>(&'v self, groups: &[Group], agent: &str) -> Option<&'v OnceLock<Box<View>>> {
        let slots = self.slots.get_or_init(|| slots_of(groups));
        if slots.lengths & length_bit(agent) == 0 {
            return None;
        }
        let names = |s: &NamedSlot| groups[s.group as usize].agents[s.line as usize].names(agent);
        let last = self.last.load(Ordering::Relaxed);
        if let Some(s) = slots.list.get(last).filter(|s| names(s)) {
            return Some(&s.view);
        }
        let key = fold_key(agent);
        let (word, bit) = filter_bit(key);
        if slots.filter[word] & bit == 0 {
            return None;
        }
        let i = if slots.by_key.is_empty() {
            slots.list.iter().position(|s| s.key == key && names(s))?
        } else {
            // The slots with the agent's key, in file order: the first
            // that names it is the first line that does.
            let from = slots.by_key.partition_point(|&(k, _)| k < key);
            let run = slots.by_key.get(from..).unwrap_or_default();
            run.iter()
                .take_while(|&&(k, _)| k == key)
                .map(|&(_, i)| i as usize)
                .find(|&i| slots.list.get(i).is_some_and(&names))?
        };
        let found = slots.list.get(i)?;
        self.last.store(i, Ordering::Relaxed);
        Some(&found.view)
    }
}

/// One slot per agent line that names a token, in file order (and, past
/// [`SCAN_UP_TO`], in order of their keys): the first line naming a
/// token is the one found, so a token named again (in any case) leaves
/// an empty slot behind, never a second view. Built once, in time linear
/// in the file's agent lines, as choosing groups is, and sorting their
/// keys.
fn slots_of(groups: &[Group]) -> Slots {
    let mut list = Vec::new();
    let mut filter = [0; 4];
    let mut lengths = 0;
    for (g, group) in groups.iter().enumerate() {
        for (l, line) in group.agents.iter().enumerate() {
            if !line.global {
                lengths |= length_bit(&line.token);
                let key = fold_key(&line.token);
                let (word, bit) = filter_bit(key);
                filter[word] |= bit;
                list.push(NamedSlot {
                    group: g as u32,
                    line: l as u32,
                    key,
                    view: OnceLock::new(),
                });
            }
        }
    }
    let mut by_key = Vec::new();
    if list.len() > SCAN_UP_TO {
        by_key = list.iter().zip(0..).map(|(s, i)| (s.key, i)).collect();
        by_key.sort_unstable();
    }
    Slots {
        list,
        by_key,
        lengths,
        filter,
    }
}

/// A name's bit in a length filter (lengths from 63 on share one): names
/// equal but for case have equal lengths in bytes.
fn length_bit(name: &str) -> u64 {
    1 << name.len().min(63)
}

/// Where a key sits in a slot filter: a word and a bit of it.
fn filter_bit(key: u64) -> (usize, u64) {
    ((key >> 62) as usize, 1 << ((key >> 56) & 63))
}

impl Clone for NamedViews {
    fn clone(&self) -> Self {
        NamedViews::default()
    }
}

impl PartialEq for NamedViews {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// The rules that apply to a crawler, in decision order and indexed.
#[derive(Debug, Clone)]
pub(super) struct View {
    agent_match: AgentMatch,
    groups: Vec<usize>,
    /// The rules in decision order, each with what a check needs.
    order: Vec<Probe>,
    /// The patterns of `order`, end to end: a check reads them from one
    /// buffer instead of following each rule to its own.
    patterns: Vec<u8>,
    /// The rules whose literal prefix is shorter than an index key (three
    /// bytes), or every rule of a view too small to index: tried for
    /// every path.
    short: Vec<Entry>,
    /// The other rules, grouped by the first three bytes of their literal
    /// prefix ([`index_key`]), each group ascending in rank.
    indexed: Vec<Entry>,
    /// Where each key's group is in `indexed` (start, end).
    by_key: KeyIndex,
}

/// A rule in an index list, with what refuses most paths before its
/// [`Probe`] is read: a check scans these lists in order, and reads a
/// probe (elsewhere in memory) only for the few rules that pass.
#[derive(Debug, Clone, Copy, Default)]
struct Entry {
    /// The first (up to eight) bytes of the literal prefix, and which of
    /// a path's first eight bytes they fix: a path whose [`head`] differs
    /// there cannot match.
    head: u64,
    head_mask: u64,
    /// The bytes a matching path holds (see [`Rule`]; for a pattern without
    /// `*` too, whose bytes are all in the path it matches).
    required: u64,
    /// Its position in `order`.
    rank: u32,
}

impl Entry {
    /// Whether a path with this head and byte mask may match.
    fn admits(&self, path_head: u64, mask: u64) -> bool {
        path_head & self.head_mask == self.head && self.required & !mask == 0
    }
}

/// The view of the crawlers no group names (built on first use): a file
/// is usually asked about by several such crawlers. Equal whatever it
/// holds, so files compare by what they say.
#[derive(Debug, Clone, Default)]
pub(super) struct SharedView(OnceLock<View>);

impl PartialEq for SharedView {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// One rule as a check sees it.
#[derive(Debug, Clone)]
struct Probe {
    /// Its pattern: `patterns[start..end]` of the view.
    start: u32,
    end: u32,
    /// See [`Rule`]: where the first `*` is.
    first_star: u32,
    /// A match allows (Allow, or an empty Disallow).
    allows: bool,
    /// The rule's index in the file.
    rule: u32,
}

/// Below this many rules the index costs more than it saves: every rule
/// goes in the short list.
const INDEX_MIN_RULES: usize = 12;

/// A 64-bit summary of which bytes occur in `bytes` (byte value mod 64).
/// If a pattern's mask has a bit the path's lacks, some literal byte of the
/// pattern is absent from the path and it cannot match.
pub(crate) fn byte_mask(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0, |m, &b| m | 1 << (b & 63))
}

/// The index key of a literal prefix or a path: its first three bytes as
/// one number (one multiply to hash).
fn index_key(bytes: &[u8]) -> Option<u32> {
    match bytes {
        [a, b, c, ..] => Some(u32::from_le_bytes([*a, *b, *c, 0])),
        _ => None,
    }
}

/// The bytes every path matching `rule` must start with: its pattern up
/// to the first `*`, or without a final `$`.
fn literal_prefix(rule: &Rule) -> &[u8] {
    let pattern = rule.effective.as_bytes();
    match pattern.get(..rule.first_star as usize) {
        Some(before_star) => before_star,
        None => pattern.strip_suffix(b"$").unwrap_or(pattern),
    }
}

impl View {
    /// The view of `groups` (selected for a crawler as `agent_match` says).
    pub(super) fn new(robots: &Robots, agent_match: AgentMatch, groups: Vec<usize>) -> View {
        let ranked = decision_order(robots, &groups);
        let mut short = Vec::new();
        let mut keyed = Vec::with_capacity(ranked.len());
        let mut order = Vec::with_capacity(ranked.len());
        let mut patterns = Vec::with_capacity(ranked.len() * 16);
        for (rank, &i) in ranked.iter().enumerate() {
            let rule = &robots.rules[i];
            let pattern = rule.effective.as_bytes();
            let prefix = literal_prefix(rule);
            let entry = Entry::of(rule, prefix, rank as u32);
            match index_key(prefix).filter(|_| ranked.len() >= INDEX_MIN_RULES) {
                Some(key) => keyed.push((key, entry)),
                None => short.push(entry),
            }
            let start = patterns.len() as u32;
            patterns.extend_from_slice(pattern);
            order.push(Probe {
                start,
                end: patterns.len() as u32,
                first_star: rule.first_star,
                allows: rule.kind == RuleKind::Allow || pattern.is_empty(),
                rule: i as u32,
            });
        }
        let (by_key, indexed) = KeyIndex::build(&keyed);
        View {
            agent_match,
            groups,
            order,
            patterns,
            short,
            indexed,
            by_key,
        }
    }
}

impl Entry {
    /// The entry of `rule`, whose literal prefix is `prefix`, at `rank`.
    fn of(rule: &Rule, prefix: &[u8], rank: u32) -> Entry {
        let fixed = prefix.len().min(8);
        Entry {
            head: head(prefix),
            head_mask: if fixed == 8 {
                u64::MAX
            } else {
                (1u64 << (fixed * 8)) - 1
            },
            // A pattern without `*` that its head holds whole needs no
            // other check (and has no mask).
            required: rule.required,
            rank,
        }
    }
}

/// The rules of `groups` in decision order: longest pattern first, then
/// Allow before Disallow, then file order. Sorted as packed integers (the
/// rule index last, so no two are equal), one word each while lengths fit
/// 32 bits and indices 31 (every file under a gigabyte fits); else as
/// tuples.
fn decision_order(robots: &Robots, groups: &[usize]) -> Vec<usize> {
    let ids = || groups.iter().flat_map(|&g| robots.groups[g].rules.clone());
    let packed = |i: usize| -> Option<u64> {
        let rule = &robots.rules[i];
        let shorter = u32::MAX - u32::try_from(rule.priority()).ok()?;
        let index = u32::try_from(i).ok().filter(|&i| i < 1 << 31)?;
        let disallow = u64::from(rule.kind == RuleKind::Disallow);
        Some(u64::from(shorter) << 32 | disallow << 31 | u64::from(index))
    };
    let mut keys = Vec::with_capacity(groups.iter().map(|&g| robots.groups[g].rules.len()).sum());
    for i in ids() {
        let Some(key) = packed(i) else {
            return decision_order_by_tuples(robots, ids().collect());
        };
        keys.push(key);
    }
    keys.sort_unstable();
    keys.into_iter()
        .map(|k| (k & 0x7FFF_FFFF) as usize)
        .collect()
}

/// [`decision_order`] of `ids` for rules too long or too many to pack.
fn decision_order_by_tuples(robots: &Robots, mut ids: Vec<usize>) -> Vec<usize> {
    ids.sort_unstable_by_key(|&i| {
        let rule = &robots.rules[i];
        let disallow = rule.kind == RuleKind::Disallow;
        (std::cmp::Reverse(rule.priority()), disallow, i)
    });
    ids
}

impl<'r> AgentRules<'r> {
    /// The view for `user_agent`: the shared one when no group names it.
    pub(super) fn of(robots: &'r Robots, user_agent: &str) -> Self {
        // A view once built is only read: the path that builds one is kept
        // apart, so a call that finds it ready sets nothing up for it.
        let slot = robots.named_views.slot(&robots.groups, user_agent);
        let ready = match slot {
            Some(slot) => slot.get().map(|v| &**v),
            None => robots.unnamed_view.0.get(),
        };
        let view = match ready {
            Some(view) => view,
            None => Self::build(robots, slot, user_agent),
        };
        AgentRules { robots, view }
    }

    /// The view for `user_agent` built and kept in its slot (the shared
    /// one when `slot` is `None`), or the one another thread kept first.
    #[cold]
    #[inline(never)]
    fn build(
        robots: &'r Robots,
        slot: Option<&'r OnceLock<Box<View>>>,
        user_agent: &str,
    ) -> &'r View {
        let build = || {
            let (agent_match, groups) = select_groups(&robots.groups, user_agent);
            View::new(robots, agent_match, groups)
        };
        match slot {
            Some(slot) => slot.get_or_init(|| Box::new(build())),
            None => robots.unnamed_view.0.get_or_init(build),
        }
    }

    /// How the agent selected groups.
    pub fn agent_match(&self) -> AgentMatch {
        self.view.agent_match
    }

    /// Whether the agent may fetch `url`.
    pub fn is_allowed(&self, url: &str) -> bool {
        let path = self.robots.normalized_path(url);
        self.decide(&path).0
    }

    /// Whether the agent may fetch `url`, and the deciding rule (borrowed
    /// from the file): what [`explain`](Self::explain) says, without
    /// building a [`Verdict`] (no allocation), for servers that answer
    /// many URLs.
    pub fn lookup(&self, url: &str) -> (bool, Option<&'r Rule>) {
        let path = self.robots.normalized_path(url);
        let (allowed, rule) = self.decide(&path);
        (allowed, rule.and_then(|i| self.robots.rules.get(i)))
    }

    /// Whether the agent may fetch `url`, and why.
    pub fn explain(&self, url: &str) -> Verdict {
        let path = self.robots.normalized_path(url);
        let (allowed, rule) = self.decide(&path);
        self.robots.verdict(
            &self.robots.groups,
            allowed,
            rule,
            self.view.agent_match,
            &self.view.groups,
            true,
        )
    }

    /// The decision of the rule `p`, if its pattern matches `path`.
    fn try_probe(&self, p: &Probe, path: &[u8]) -> Option<(bool, Option<usize>)> {
        let pattern = self.view.patterns.get(p.start as usize..p.end as usize)?;
        pattern_matches(pattern, p.first_star, path).then_some((p.allows, Some(p.rule as usize)))
    }

    /// The decision for an already extracted (and, in RFC mode, normalised)
    /// path: (allowed, deciding rule index).
    fn decide(&self, path: &[u8]) -> (bool, Option<usize>) {
        let v = self.view;
        let path_head = head(path);
        let bucket: &[Entry] = index_key(path)
            .and_then(|k| v.by_key.get(k))
            .and_then(|(start, end)| v.indexed.get(start as usize..end as usize))
            .unwrap_or(&[]);
        let mask = byte_mask(path);
        // Each list's next rule that may match, in rank order.
        let next = |list: &mut std::slice::Iter<'_, Entry>| -> u32 {
            list.find(|e| e.admits(path_head, mask))
                .map_or(u32::MAX, |e| e.rank)
        };
        // Merge the two ascending rank lists; the first match decides.
        let (mut a, mut b) = (v.short.iter(), bucket.iter());
        let (mut x, mut y) = (next(&mut a), next(&mut b));
        loop {
            let rank = x.min(y);
            if rank == u32::MAX {
                return (true, None);
            }
            if rank == x {
                x = next(&mut a);
            } else {
                y = next(&mut b);
            }
            if let Some(d) = v
                .order
                .get(rank as usize)
                .and_then(|p| self.try_probe(p, path))
            {
                return d;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names of 63 bytes and more share the length filter's last bit: a
    /// long named token is still found, in any case, and a long name no
    /// group holds still gets the shared view.
    #[test]
    fn long_names_pass_the_length_filter() {
        let named = "x".repeat(70);
        let body = format!("User-agent: {named}\nDisallow: /\n\nUser-agent: *\nAllow: /\n");
        let robots = Robots::parse(body.as_bytes());
        assert!(!robots.is_allowed(&named.to_uppercase(), "/a"));
        assert!(robots.is_allowed(&"x".repeat(64), "/a"));
        assert!(robots.is_allowed(&"x".repeat(69), "/a"));
    }

    /// The packed sort and the tuple sort (kept for huge files) give one
    /// order: longest first, Allow before Disallow on a tie, then file
    /// order.
    #[test]
    fn packed_and_tuple_decision_orders_agree() {
        let body = "User-agent: *\nDisallow: /a\nAllow: /a\nDisallow: /abc\nAllow: /*\n\
                    Disallow: /a\nAllow: /ab$\nDisallow:\nUser-agent: b\nAllow: /zz\n\n\
                    User-agent: *\nDisallow: /q*\n";
        let robots = Robots::parse(body.as_bytes());
        let all: Vec<usize> = (0..robots.groups.len()).collect();
        let packed = decision_order(&robots, &all);
        let ids = all
            .iter()
            .flat_map(|&g| robots.groups[g].rules.clone())
            .collect();
        assert_eq!(packed, decision_order_by_tuples(&robots, ids));
        let lines: Vec<u32> = packed.iter().map(|&i| robots.rules[i].line).collect();
        assert_eq!(lines, [7, 4, 10, 13, 3, 5, 2, 6, 8]);
    }

    /// Many named crawlers asked in turn and again, in any case: each
    /// one-call answer is the full explanation's, each token has one view
    /// (built once, whatever the case it is asked in), and a token two
    /// groups name gets both groups' rules.
    #[test]
    fn kept_views_answer_as_explain_does() {
        let name = |i: u8| format!("bot{}", char::from(b'a' + i));
        let mut body = String::new();
        for i in 0..12 {
            let n = name(i);
            body.push_str(&format!(
                "User-agent: {n}\nDisallow: /p{i}/\nAllow: /p{i}/ok\n\n"
            ));
        }
        body.push_str("User-agent: BOTC\nUser-agent: twin\nDisallow: /twin/\n\n");
        body.push_str("User-agent: *\nDisallow: /\n");
        let robots = Robots::parse(body.as_bytes());
        let agents: Vec<String> = (0..12)
            .map(name)
            .chain(["BotA".into(), "TWIN".into(), "unnamed".into()])
            .collect();
        for round in 0..3 {
            for (i, agent) in agents.iter().enumerate() {
                for url in [
                    format!("/p{i}/x"),
                    format!("/p{i}/ok"),
                    "/twin/x".into(),
                    "/other".into(),
                ] {
                    let want = robots.explain(agent, &url).allowed;
                    assert_eq!(
                        robots.is_allowed(agent, &url),
                        want,
                        "{round} {agent} {url}"
                    );
                }
            }
        }
        assert!(!robots.is_allowed("botc", "/twin/x"));
        assert!(robots.is_allowed("botc", "/p2/ok"));
        assert!(!robots.is_allowed("unnamed", "/p1/ok"));
        let slots = robots
            .named_views
            .slots
            .get()
            .map(|s| s.list.as_slice())
            .unwrap_or(&[]);
        let built = slots.iter().filter(|s| s.view.get().is_some()).count();
        assert_eq!(built, 13, "botc and BOTC share one view");
    }

    /// A file naming more crawlers than are scanned: each is found by its
    /// key (in any case), a name named twice gets both groups' rules and
    /// one view, and a crawler no group names gets the shared view.
    #[test]
    fn many_named_crawlers_are_found_by_key() {
        let name = |i: u32| -> String {
            let letters = (0..6).map(|k| char::from(b'a' + ((i >> (4 * k)) & 15) as u8));
            std::iter::once('x').chain(letters).collect()
        };
        let n = 3 * SCAN_UP_TO as u32;
        let named: Vec<String> = (0..n)
            .map(|i| name(i.wrapping_mul(2_654_435_761) >> 8))
            .collect();
        let mut body = String::new();
        for (i, agent) in named.iter().enumerate() {
            body.push_str(&format!("User-agent: {agent}\nDisallow: /p{i}/\n\n"));
        }
        let twice = named[5].to_uppercase();
        body.push_str(&format!("User-agent: {twice}\nDisallow: /again/\n\n"));
        body.push_str("User-agent: *\nDisallow: /shared/\n");
        let robots = Robots::parse(body.as_bytes());
        let mut agents = named.clone();
        agents.extend(named.iter().map(|a| a.to_uppercase()));
        agents.extend((0..40).map(|i| name(i * 7 + 3)));
        for (i, agent) in agents.iter().enumerate() {
            let p = i % n as usize;
            for url in [format!("/p{p}/x"), "/again/x".into(), "/shared/x".into()] {
                let want = robots.explain(agent, &url).allowed;
                assert_eq!(robots.is_allowed(agent, &url), want, "{agent} {url}");
            }
        }
        assert!(!robots.is_allowed(&twice.to_lowercase(), "/p5/x"));
        assert!(!robots.is_allowed(&twice.to_lowercase(), "/again/x"));
        let slots = robots.named_views.slots.get().expect("slots built");
        assert_eq!(slots.by_key.len(), slots.list.len());
        let built = slots.list.iter().filter(|s| s.view.get().is_some()).count();
        assert_eq!(
            built, n as usize,
            "one view per name, the twice-named one too"
        );
    }

    /// Threads asking for the same crawler's view at once, before any is
    /// built, all get the one view the file keeps (named or shared), and
    /// it answers as the full explanation does.
    #[test]
    fn threads_racing_for_a_view_share_one() {
        let body = "User-agent: named\nDisallow: /n\n\nUser-agent: *\nDisallow: /s\n";
        for agent in ["named", "NAMED", "unnamed"] {
            let robots = Robots::parse(body.as_bytes());
            let barrier = std::sync::Barrier::new(8);
            let views: Vec<usize> = std::thread::scope(|s| {
                let racers: Vec<_> = (0..8)
                    .map(|_| {
                        s.spawn(|| {
                            barrier.wait();
                            let view = robots.for_agent(agent);
                            for url in ["/n", "/s", "/x"] {
                                let want = robots.explain(agent, url).allowed;
                                assert_eq!(view.is_allowed(url), want, "{agent} {url}");
                            }
                            std::ptr::from_ref(view.view) as usize
                        })
                    })
                    .collect();
                racers.into_iter().filter_map(|r| r.join().ok()).collect()
            });
            assert_eq!(views.len(), 8, "{agent}: a racer panicked");
            assert!(views.iter().all(|&v| v == views[0]), "{agent}: {views:?}");
            let kept = std::ptr::from_ref(robots.for_agent(agent).view) as usize;
            assert_eq!(kept, views[0], "{agent}");
        }
    }
}
