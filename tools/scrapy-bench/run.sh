#!/usr/bin/env bash
# Scrapy beside mannerly on the same simulated web (`mannerly demo`: a few
# hundred hosts with robots.txt 503/429/404/redirects, Crawl-delay, 429 storms
# with Retry-After, nofollow pages, slow hosts), each run as an external
# crawler so the CPU time and peak RSS measured are the crawler's own, and
# each judged by the same politeness audit from the server's request log.
#
#   tools/scrapy-bench/run.sh            # 300 generated hosts, 1 s delay
#   HOSTS=100 DELAY=0.5 tools/scrapy-bench/run.sh
#
# Makes a venv with a recent Scrapy (pip) under $TMPDIR on first use.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
hosts=${HOSTS:-300}
delay=${DELAY:-1}
venv=${MANNERLY_SCRAPY_VENV:-${TMPDIR:-/tmp}/mannerly-scrapy-venv}
if [ ! -x "$venv/bin/scrapy" ] || [ ! -x "$venv/bin/maturin" ]; then
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet 'scrapy>=2.13' 'maturin>=1.16,<2'
fi
# The Python package, for the Scrapy run with mannerly's middlewares.
rm -rf "$venv/wheels"
(cd "$root/python" && "$venv/bin/maturin" build --release --quiet -o "$venv/wheels")
"$venv/bin/pip" install --quiet --force-reinstall "$venv"/wheels/mannerly-*.whl
scrapy_version=$("$venv/bin/python" -c 'import scrapy; print(scrapy.__version__)')
(cd "$root" && cargo build --release --quiet -p mannerly-cli)
bin=$root/target/release/mannerly
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# shellcheck source=../demo-run.sh
. "$here/../demo-run.sh"

run_mannerly
spider=$root/python/tests/demo_spider.py
run scrapy "$venv/bin/python" "$spider" polite
run scrapy-defaults "$venv/bin/python" "$spider" defaults
run scrapy-mannerly "$venv/bin/python" "$spider" mannerly

python3 - "$work" "$hosts" "$delay" "$scrapy_version" <<'PY'
import json, sys
work, hosts, delay, version = sys.argv[1:]
rows = [("mannerly crawl", "mannerly"), (f"Scrapy {version}, polite settings", "scrapy"),
        (f"Scrapy {version}, defaults", "scrapy-defaults"),
        (f"Scrapy {version} + mannerly.scrapy", "scrapy-mannerly")]
res = {key: json.loads(open(f"{work}/{key}.json").read().strip().splitlines()[-1]) for _, key in rows}
print(f"scrapy-bench: {hosts} generated hosts + the demo's scripted ones, delay {delay} s, concurrency 64")
print(f"{'':34} {'pages':>6} {'CPU s':>7} {'pages/CPU s':>12} {'peak MiB':>9} {'wall s':>7} {'violations':>10}")
for name, key in rows:
    r = res[key]; e = r["external"]
    print(f"{name:34} {r['pages']:>6} {e['cpu_seconds']:>7.2f} {e['pages_per_cpu_second']:>12.0f} "
          f"{e['peak_rss_kib'] / 1024:>9.0f} {e['seconds']:>7.1f} {r['violations']:>10}")
kinds = ["hosts_concurrent", "too_soon", "too_soon_by_over_100ms", "retry_after_ignored", "disallowed", "robots_not_first",
         "pages_while_robots_unavailable", "nofollow_followed"]
print("violations by kind:")
for name, key in rows:
    print(f"  {name}: " + ", ".join(f"{k} {res[key][k]}" for k in kinds))
    for ex in res[key]["examples"][:3]:
        print(f"      e.g. {ex}")
m, s = res["mannerly"]["external"], res["scrapy"]["external"]
print(f"mannerly / Scrapy (polite settings): {m['pages_per_cpu_second'] / s['pages_per_cpu_second']:.1f}x "
      f"the pages per CPU second, {s['peak_rss_kib'] / max(m['peak_rss_kib'], 1):.1f}x less peak RSS")
PY
