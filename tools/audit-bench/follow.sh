#!/usr/bin/env bash
# `mannerly audit --follow` over a day of appended lines: the generated
# day's log (gen_log) is appended in ten steps to a file the audit follows;
# after each step, once the audit has read every line (its metrics say
# so), its resident memory is printed. Flat memory means the tenth step
# costs what the first did.
#
#   tools/audit-bench/follow.sh [LINES]      (default 1,000,000)
set -euo pipefail
cd "$(dirname "$0")/../.."
lines=${1:-1000000}
steps=10
cargo build --release --quiet -p mannerly-cli --bin mannerly
cargo build --release --quiet -p mannerly-audit --example gen_log
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
target/release/examples/gen_log "$lines" > "$work/day.log"
printf 'User-agent: *\nDisallow: /private/\nDisallow: /search\nCrawl-delay: 1\n\nUser-agent: Googlebot\nDisallow: /private/\n\nUser-agent: GPTBot\nDisallow: /\n' > "$work/robots.txt"
n=$(wc -l < "$work/day.log")
: > "$work/access.log"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
target/release/mannerly audit "$work/access.log" --robots "$work/robots.txt" --offline --follow \
    --json-lines --metrics "127.0.0.1:$port" > /dev/null 2> "$work/err" &
pid=$!
read_lines() {
    curl -s "http://127.0.0.1:$port/metrics" | awk '$1 == "mannerly_audit_lines_total" {print $2}'
}
printf '%-22s %12s %10s %8s\n' "appended" "lines read" "RSS MiB" "CPU s"
per=$(( (n + steps - 1) / steps ))
for step in $(seq "$steps"); do
    start=$(( (step - 1) * per + 1 ))
    end=$(( start + per - 1 ))
    sed -n "${start},${end}p;${end}q" "$work/day.log" >> "$work/access.log"
    want=$(wc -l < "$work/access.log")
    # Wait (at most 120 s) until the audit has read every appended line.
    for _ in $(seq 1200); do
        got=$(read_lines || true)
        [ "${got%.*}" = "$want" ] && break
        sleep 0.1
    done
    rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
    cpu=$(awk '{print ($14 + $15) / 100}' "/proc/$pid/stat")
    printf '%-22s %12s %10.1f %8s\n' "$step/$steps of the day" "${got:-?}" "$(echo "$rss / 1024" | bc -l)" "$cpu"
done
kill -INT "$pid"
wait "$pid" 2>/dev/null || true
pid=
