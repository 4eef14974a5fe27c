//! The bound on hosts in progress, the census of their states, and the
//! heaps that hold them.

use super::*;

#[test]
fn the_census_puts_each_host_in_one_state() {
    let mut f = LocalFrontier::in_memory(
        Politeness::new(Config {
            min_delay: 1_000,
            ..Config::default()
        }),
        no_gate(),
    );
    let t = T0.add_millis(100_000);
    for url in [
        "https://a.test/1",
        "https://a.test/2",
        "https://b.test/1",
        "https://c.test/1",
    ] {
        block_on(f.enqueue(url, 1, t)).expect("enqueue");
    }
    assert_eq!(
        f.census(t).ready,
        3,
        "nothing started yet: {:?}",
        f.census(t)
    );
    let Next::Fetch(r) = block_on(f.next(t)).expect("next") else {
        panic!("a release")
    };
    let c = f.census(t);
    assert_eq!((c.in_flight, c.ready), (1, 2), "{c:?}");
    block_on(f.complete(&r, &ok(), t.add_millis(10))).expect("complete");
    let c = f.census(t.add_millis(10));
    let waiting_or_done = c.waiting + c.done;
    assert_eq!((c.in_flight, c.ready, waiting_or_done), (0, 2, 1), "{c:?}");
    let total: u64 = c.states().iter().map(|s| s.1).sum();
    assert_eq!(total, 3, "each host counted once: {c:?}");
}

fn bounded(open: u64) -> LocalFrontier {
    LocalFrontier::in_memory(
        Politeness::new(Config::default()),
        FrontierConfig {
            max_open_keys: open,
            ..no_gate()
        },
    )
}

#[test]
fn at_most_the_bound_of_hosts_is_in_progress() {
    let mut f = bounded(2);
    for h in ["a", "b", "c", "d", "e"] {
        for p in 0..3 {
            let url = format!("https://{h}.test/{p}");
            block_on(f.enqueue(&url, 1, T0)).expect("enqueue");
        }
    }
    let order = drain(&mut f);
    assert_eq!(order.len(), 15, "every page is released: {order:?}");
    // Each host's span, in release order (`drain` completes each release
    // before asking for the next): its first release to its last.
    let mut span: HashMap<String, (usize, usize)> = HashMap::new();
    for (i, (_, url)) in order.iter().enumerate() {
        let host = url.split('/').nth(2).unwrap_or_default().to_owned();
        span.entry(host).or_insert((i, i)).1 = i;
    }
    for i in 0..order.len() {
        let open = span.values().filter(|(a, b)| *a <= i && i <= *b).count();
        assert!(
            open <= 2,
            "{open} hosts in progress at release {i}: {span:?}"
        );
    }
    assert_eq!(f.open_keys(), 0);
}

#[test]
fn a_freed_slot_goes_to_the_best_parked_host() {
    let mut f = bounded(1);
    block_on(f.enqueue("https://a.test/", 1, T0)).expect("enqueue");
    let Next::Fetch(a) = block_on(f.next(T0)).expect("next") else {
        panic!("a opens")
    };
    block_on(f.enqueue("https://b.test/", 1, T0)).expect("enqueue");
    block_on(f.enqueue("https://c.test/", 1, T0)).expect("enqueue");
    block_on(f.enqueue("https://c.test/urgent", 9, T0)).expect("enqueue");
    assert_eq!(block_on(f.next(T0)).expect("next"), Next::Busy);
    let why = f.why_not_now("https://b.test/", T0);
    assert_eq!(why, Some(Hold::Parked { open: 1 }), "{why:?}");
    // Parked hosts are counted apart: a busy crawl does not look stalled.
    let c = f.census(T0);
    assert_eq!((c.in_flight, c.parked, c.ready), (1, 2, 0), "{c:?}");
    block_on(f.complete(&a, &ok(), T0.add_millis(5))).expect("complete");
    let Next::Fetch(c) = block_on(f.next(T0.add_millis(5))).expect("next") else {
        panic!("a parked host opens when a closes")
    };
    assert_eq!(c.url, "https://c.test/urgent");
    assert_eq!(f.open_keys(), 1);
}

#[test]
fn a_host_given_more_urls_while_in_flight_stays_open() {
    let mut f = bounded(1);
    block_on(f.enqueue("https://a.test/", 1, T0)).expect("enqueue");
    block_on(f.enqueue("https://b.test/", 1, T0)).expect("enqueue");
    let Next::Fetch(first) = block_on(f.next(T0)).expect("next") else {
        panic!("one opens")
    };
    let host = first.url.clone();
    // A link found on the page, for the same host: it stays open for it.
    block_on(f.enqueue(&format!("{host}next"), 1, T0)).expect("enqueue");
    block_on(f.complete(&first, &ok(), T0.add_millis(10))).expect("complete");
    let Next::Wait { until } = block_on(f.next(T0.add_millis(10))).expect("next") else {
        panic!("the open host waits its delay; the other stays parked")
    };
    let Next::Fetch(second) = block_on(f.next(until)).expect("next") else {
        panic!("released")
    };
    assert_eq!(second.url, format!("{host}next"));
}

#[test]
fn a_host_held_back_long_gives_its_slot_up() {
    let mut f = bounded(1);
    block_on(f.enqueue("https://a.test/1", 1, T0)).expect("enqueue");
    block_on(f.enqueue("https://a.test/2", 1, T0)).expect("enqueue");
    let Next::Fetch(first) = block_on(f.next(T0)).expect("next") else {
        panic!("a opens")
    };
    block_on(f.enqueue("https://b.test/", 1, T0)).expect("enqueue");
    // a.test answers 429 with an hour's Retry-After: b.test goes meanwhile.
    let busy = Outcome::Status {
        status: 429,
        latency: 10,
        retry_after: Some("3600".into()),
    };
    block_on(f.complete(&first, &busy, T0.add_millis(10))).expect("complete");
    let Next::Fetch(b) = block_on(f.next(T0.add_millis(10))).expect("next") else {
        panic!("the parked host opens while a.test waits its hour")
    };
    assert_eq!(b.url, "https://b.test/");
    block_on(f.complete(&b, &ok(), T0.add_millis(20))).expect("complete");
    // Then a.test comes back when its hour is over.
    let Next::Wait { until } = block_on(f.next(T0.add_millis(20))).expect("next") else {
        panic!("a.test waits")
    };
    assert!(until.millis_since(T0) >= 3_600_000, "{until:?}");
    let Next::Fetch(again) = block_on(f.next(until)).expect("next") else {
        panic!("a.test goes on")
    };
    assert_eq!(again.url, "https://a.test/2");
}

#[test]
fn a_heap_gives_back_the_room_a_burst_took_and_keeps_a_little() {
    let mut heap: BinaryHeap<u64> = (0..100_000).collect();
    for _ in 0..99_000 {
        heap.pop();
    }
    trim(&mut heap);
    assert!(heap.capacity() < 10_000, "{}", heap.capacity());
    assert_eq!(heap.len(), 1_000);
    // A heap that fills and drains every turn keeps its room.
    heap.clear();
    trim(&mut heap);
    assert!(heap.capacity() >= HEAP_KEPT, "{}", heap.capacity());
    let kept = heap.capacity();
    heap.extend(0..3_000);
    heap.clear();
    trim(&mut heap);
    assert_eq!(heap.capacity(), kept);
}

#[test]
fn a_crawl_start_of_many_hosts_leaves_the_heaps_small() {
    let mut f = bounded(4);
    for h in 0..20_000 {
        block_on(f.enqueue(&format!("https://h{h}.test/"), 1, T0)).expect("enqueue");
    }
    // Asking passes every host through the time and ready heaps: four
    // open, the rest are parked.
    let mut released = 0;
    while let Next::Fetch(_) = block_on(f.next(T0)).expect("next") {
        released += 1;
    }
    assert_eq!(released, 4);
    assert!(f.time.capacity() <= 4 * HEAP_KEPT, "{}", f.time.capacity());
    assert!(
        f.ready.capacity() <= 4 * HEAP_KEPT,
        "{}",
        f.ready.capacity()
    );
    assert!(f.parked.len() >= 19_990);
}
