"""Checks per second through Python on the shared corpus: mannerly against
Protego (Scrapy's default parser) and the standard library's
urllib.robotparser, in the same run, with how often each agrees with
Google's reference (the corpus's expected verdicts).

Run (in a venv with the wheel and protego installed):
    python python/benches/corpus.py [../shared]
Parsing is timed apart from checking; each parser answers every
(agent, URL) pair of every file, URLs as `http://example.com<path>`.
mannerly is timed two ways: a batch per agent
(`for_agent(agent).allowed_many(urls)`) and one call per check
(`Robots.is_allowed(agent, url)`, as Protego's `can_fetch` is called).
"""

import json
import pathlib
import sys
import time
import urllib.robotparser

import mannerly
from protego import Protego


def load(shared):
    root = pathlib.Path(shared) / "corpus"
    cases = []
    with (root / "expected.jsonl").open() as f:
        for line in f:
            c = json.loads(line)
            body = (root / "files" / f"{c['id']}.txt").read_bytes()
            urls = ["http://example.com" + u for u in c["urls"]]
            cases.append((c["id"], body, urls, c["expect"]))
    return cases


def run(name, parse, check, cases):
    t = time.perf_counter()
    parsed = [parse(body) for _, body, _, _ in cases]
    parse_s = time.perf_counter() - t
    checks = agree = 0
    first_diff = None
    t = time.perf_counter()
    for p, (cid, _, urls, expect) in zip(parsed, cases):
        for agent, e in expect.items():
            got = check(p, agent, urls)
            want = e["allowed"]
            checks += len(urls)
            for i, (g, w) in enumerate(zip(got, want)):
                if g == (w == "1"):
                    agree += 1
                elif first_diff is None:
                    first_diff = (cid, agent, urls[i], w)
    check_s = time.perf_counter() - t
    return name, checks, parse_s, check_s, agree, first_diff


def text(body):
    return body.decode("utf-8", "replace")


def main():
    shared = sys.argv[1] if len(sys.argv) > 1 else str(pathlib.Path(__file__).resolve().parents[3] / "shared")
    cases = load(shared)
    results = [
        # The reference applies no size limit (ours is 500 KiB by default).
        run("mannerly", lambda b: mannerly.Robots(b, max_bytes=1 << 40),
            lambda p, a, urls: p.for_agent(a).allowed_many(urls), cases),
        run("mannerly, one call", lambda b: mannerly.Robots(b, max_bytes=1 << 40),
            lambda p, a, urls: [p.is_allowed(a, u) for u in urls], cases),
        run("protego", lambda b: Protego.parse(text(b)),
            lambda p, a, urls: [p.can_fetch(u, a) for u in urls], cases),
    ]

    def std_parse(b):
        rp = urllib.robotparser.RobotFileParser()
        rp.parse(text(b).splitlines())
        return rp

    results.append(run("urllib.robotparser", std_parse,
                       lambda p, a, urls: [p.can_fetch(a, u) for u in urls], cases))
    print(f"{len(cases)} files; checks are (agent, URL) pairs against Google's reference verdicts")
    base = None
    for name, checks, parse_s, check_s, agree, diff in results:
        rate = checks / check_s
        base = base or rate
        print(f"{name:<20} parse {parse_s:6.2f} s  check {check_s:6.2f} s  {rate:>11,.0f} checks/s"
              f"  ({base / rate:5.1f}x slower than mannerly)  agrees {100 * agree / checks:7.3f} %"
              f" ({checks - agree:,} differ)")
        if diff:
            print(f"{'':<20} first difference: {diff[0]} agent {diff[1]} {diff[2]} (reference: {'allowed' if diff[3] == '1' else 'disallowed'})")


if __name__ == "__main__":
    main()
