#!/usr/bin/env bash
# spider-rs beside mannerly, Scrapy and Crawlee on the demo's simulated web
# (300 generated hosts and the scripted ones: robots.txt 503/429/404/
# redirects, Crawl-delay, a 429 storm with Retry-After, nofollow pages, a
# slow host). Each crawler runs as an external process of `mannerly demo
# --`, which measures its CPU time and peak RSS and audits what it did from
# the server's own request log. One table a sitting; with SITTINGS=N,
# N sittings in a row, then mannerly's ratio to spider-rs in each and
# their median (the figure BENCHMARKS.md gives).
#
#   tools/spider-bench/run.sh                # 300 hosts, 1 s delay, concurrency 64
#   HOSTS=100 ONLY="mannerly spider" tools/spider-bench/run.sh
#   SITTINGS=3 ONLY="mannerly spider" tools/spider-bench/run.sh
#
# On first use: builds the spider-rs crawler (src/main.rs, its own
# workspace), a venv with Scrapy (pip) and the Node package with Crawlee
# (npm); ONLY skips the ones not named.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
hosts=${HOSTS:-300}
delay=${DELAY:-1}
only=${ONLY:-mannerly spider scrapy crawlee}
sittings=${SITTINGS:-1}
[[ $sittings =~ ^[1-9][0-9]*$ ]] || { echo "SITTINGS must be a whole number from 1, not '$sittings'" >&2; exit 2; }
wants() { [[ " $only " == *" $1 "* ]]; }

(cd "$root" && cargo build --release --quiet -p mannerly-cli)
bin=$root/target/release/mannerly
if wants spider; then
    cargo build --release --quiet --manifest-path "$here/Cargo.toml"
    spider_version=$(cd "$here" && cargo pkgid spider | sed 's/.*[#@]//')
fi
if wants scrapy; then
    venv=${MANNERLY_SCRAPY_VENV:-${TMPDIR:-/tmp}/mannerly-scrapy-venv}
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    [ -x "$venv/bin/scrapy" ] || "$venv/bin/pip" install --quiet 'scrapy>=2.13'
    scrapy_version=$("$venv/bin/python" -c 'import scrapy; print(scrapy.__version__)')
fi
if wants crawlee; then
    (cd "$root/node" && { [ -d node_modules/@crawlee ] || npm ci --no-audit --no-fund --loglevel=error; } \
        && npx napi build --platform --release --no-js --dts native.d.ts >/dev/null \
        && rm -f mannerly-*.tgz && npm pack --silent >/dev/null \
        && npm install --no-save --no-audit --no-fund --loglevel=error ./mannerly-*.tgz)
    crawlee_version=$(cd "$root/node" && node -p 'require("@crawlee/cheerio/package.json").version')
fi
base=$(mktemp -d)
trap 'rm -rf "$base"' EXIT

# shellcheck source=../demo-run.sh
. "$here/../demo-run.sh"

sitting() { # into $work
    rows=()
    if wants mannerly; then
        run_mannerly
        rows+=("mannerly crawl=mannerly")
    fi
    if wants spider; then
        run spider "$here/target/release/spider-bench"
        rows+=("spider-rs $spider_version=spider")
    fi
    if wants scrapy; then
        run scrapy "$venv/bin/python" "$root/python/tests/demo_spider.py" polite
        rows+=("Scrapy $scrapy_version, polite settings=scrapy")
    fi
    if wants crawlee; then
        # Crawlee made polite with mannerly's package: with its own robots.txt
        # support and sameDomainDelaySecs (mode `crawlee`) it did not finish
        # the 300-host web in 12 minutes.
        (cd "$root/node" && run crawlee node test/demo_spider.mjs mannerly)
        rows+=("Crawlee $crawlee_version + mannerly/crawlee=crawlee")
    fi

    python3 "$here/../demo_table.py" "$work" \
        "spider-bench: $hosts generated hosts + the demo's scripted ones, delay $delay s, concurrency 64" \
        "${rows[@]}" --versus mannerly spider
}

for n in $(seq "$sittings"); do
    work=$base/$n
    mkdir -p "$work"
    sitting
done
if ((sittings > 1)) && wants mannerly && wants spider; then
    python3 "$here/../demo_table.py" --median mannerly spider "$base"/*/
fi
