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

v=$scrapy_version
python3 "$here/../demo_table.py" "$work" \
    "scrapy-bench: $hosts generated hosts + the demo's scripted ones, delay $delay s, concurrency 64" \
    "mannerly crawl=mannerly" "Scrapy $v, polite settings=scrapy" "Scrapy $v, defaults=scrapy-defaults" \
    "Scrapy $v + mannerly.scrapy=scrapy-mannerly" --versus mannerly scrapy
