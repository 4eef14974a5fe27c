"""The table the benchmark scripts beside it print: one row per crawler run
by `mannerly demo --json ... -- CMD` (tools/demo-run.sh keeps each run's
JSON in WORK/KEY.json), the violations each made by kind, and one crawler
against another.

    python3 tools/demo_table.py WORK TITLE 'NAME=KEY'... [--versus KEY KEY]
    python3 tools/demo_table.py --median KEY KEY WORK...

The second form gives the first crawler's pages per CPU second over the
second's in each sitting's WORK, and their median.
"""
import json
import statistics
import sys

KINDS = ["hosts_concurrent", "too_soon", "too_soon_by_over_100ms", "retry_after_ignored", "disallowed",
         "robots_not_first", "pages_while_robots_unavailable", "nofollow_followed"]


def external(work, key):
    return json.loads(open(f"{work}/{key}.json").read().strip().splitlines()[-1])["external"]


def median_of(a, b, works):
    ratios = [external(w, a)["pages_per_cpu_second"] / max(external(w, b)["pages_per_cpu_second"], 1e-9)
              for w in works]
    print(f"{a} / {b}, pages per CPU second, sitting by sitting: " + ", ".join(f"{r:.2f}x" for r in ratios))
    print(f"median of {len(ratios)} sittings: {statistics.median(ratios):.2f}x")


def main(argv):
    if argv[:1] == ["--median"]:
        median_of(argv[1], argv[2], argv[3:])
        return
    versus = None
    if "--versus" in argv:
        i = argv.index("--versus")
        versus, argv = argv[i + 1:i + 3], argv[:i]
    work, title, *rows = argv
    rows = [r.rsplit("=", 1) for r in rows]
    res = {key: json.loads(open(f"{work}/{key}.json").read().strip().splitlines()[-1]) for _, key in rows}
    width = max(len(name) for name, _ in rows)
    print(title)
    print(f"{'':{width}} {'pages':>6} {'CPU s':>7} {'pages/CPU s':>12} {'peak MiB':>9} {'wall s':>7} {'violations':>10}")
    for name, key in rows:
        r = res[key]
        e = r["external"]
        print(f"{name:{width}} {r['pages']:>6} {e['cpu_seconds']:>7.2f} {e['pages_per_cpu_second']:>12.0f} "
              f"{e['peak_rss_kib'] / 1024:>9.1f} {e['seconds']:>7.1f} {r['violations']:>10}")
    print("violations by kind:")
    for name, key in rows:
        print(f"  {name}: " + ", ".join(f"{k} {res[key][k]}" for k in KINDS if res[key][k]))
        for ex in res[key]["examples"][:3]:
            print(f"      e.g. {ex}")
    if versus and all(k in res for k in versus):
        names = dict((key, name) for name, key in rows)
        a, b = (res[k]["external"] for k in versus)
        print(f"{names[versus[0]]} / {names[versus[1]]}: "
              f"{a['pages_per_cpu_second'] / max(b['pages_per_cpu_second'], 1e-9):.2f}x the pages per CPU second; "
              f"peak RSS {a['peak_rss_kib'] / 1024:.1f} against {b['peak_rss_kib'] / 1024:.1f} MiB")


if __name__ == "__main__":
    main(sys.argv[1:])
