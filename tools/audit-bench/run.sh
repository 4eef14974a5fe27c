#!/usr/bin/env bash
# `mannerly audit` against GoAccess on the same generated log, in one run:
# lines per CPU second (user + system) of each, and the ratio; mannerly
# also with a proposed robots.txt judged beside (what-if) and server rules
# written. Also the
# instructions per line (callgrind, on a 200,000-line slice) and, with
# BIG=1, the peak RSS of a 50-million-line log piped through stdin.
#
#   tools/audit-bench/run.sh [LINES]      (default 1,000,000)
#
# Needs goaccess (apt-get install goaccess); valgrind for the instruction
# count (skipped without it).
set -euo pipefail
cd "$(dirname "$0")/../.."
lines=${1:-1000000}
rounds=${ROUNDS:-3}
command -v goaccess > /dev/null || { echo "goaccess not found: apt-get install goaccess" >&2; exit 2; }
cargo build --release --quiet -p mannerly-cli --bin mannerly
cargo build --release --quiet -p mannerly-audit --example gen_log
bin=target/release/mannerly
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
target/release/examples/gen_log "$lines" > "$work/access.log"
printf 'User-agent: *\nDisallow: /private/\nDisallow: /search\nCrawl-delay: 1\n\nUser-agent: Googlebot\nDisallow: /private/\n\nUser-agent: GPTBot\nDisallow: /\n' > "$work/robots.txt"
printf 'User-agent: *\nDisallow: /private/\nDisallow: /blog/\n\nUser-agent: GPTBot\nAllow: /\n' > "$work/proposed.txt"
n=$(wc -l < "$work/access.log")
echo "log: $n combined lines, $(du -m "$work/access.log" | cut -f1) MiB; $(nproc) cores"

# CPU seconds (user + system) and peak RSS of a command.
cpu() {
    /usr/bin/time -f '%U %S %M %e' -o "$work/time" "$@" > /dev/null 2>&1 || true
    tail -1 "$work/time" | awk '{printf "%.3f %d %.3f\n", $1 + $2, $3, $4}'
}
declare -a ours theirs all
for r in $(seq "$rounds"); do
    ours+=("$(cpu "$bin" audit "$work/access.log" --robots "$work/robots.txt" --offline --json)")
    all+=("$(cpu "$bin" audit "$work/access.log" --robots "$work/robots.txt" --robots-proposed "$work/proposed.txt" \
        --rules nginx --rules-out "$work/rules.conf" --offline --json)")
    theirs+=("$(cpu goaccess "$work/access.log" --log-format=COMBINED --no-global-config -o "$work/ga.json")")
done
best() { printf '%s\n' "$@" | sort -n | head -1; }
o=$(best "${ours[@]}") t=$(best "${theirs[@]}") a=$(best "${all[@]}")
read -r ocpu orss owall <<< "$o"
read -r tcpu trss twall <<< "$t"
read -r acpu arss awall <<< "$a"
python3 - "$n" "$ocpu" "$orss" "$owall" "$tcpu" "$trss" "$twall" "$acpu" "$arss" "$awall" <<'PY'
import sys
n = int(sys.argv[1]); oc, orss, ow, tc, trss, tw, ac, ars, aw = map(float, sys.argv[2:])
print(f"{'':34} {'CPU s':>7} {'wall s':>7} {'lines/CPU s':>12} {'peak MiB':>9}")
print(f"{'mannerly audit --offline':34} {oc:>7.2f} {ow:>7.2f} {n / oc:>12,.0f} {orss / 1024:>9.0f}")
print(f"{'  with what-if and nginx rules':34} {ac:>7.2f} {aw:>7.2f} {n / ac:>12,.0f} {ars / 1024:>9.0f}")
print(f"{'goaccess COMBINED, JSON':34} {tc:>7.2f} {tw:>7.2f} {n / tc:>12,.0f} {trss / 1024:>9.0f}")
print(f"ratio (lines per CPU second): {tc / oc:.1f}x; with what-if and rules {tc / ac:.1f}x")
PY
if command -v valgrind >/dev/null 2>&1; then
    head -200000 "$work/access.log" > "$work/slice.log"
    valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" "$bin" audit "$work/slice.log" \
        --robots "$work/robots.txt" --offline --json > /dev/null 2> "$work/cg.err" || true
    ir=$(grep -o 'refs: *[0-9,]*' "$work/cg.err" | tr -dc '0-9')
    echo "instructions per line (callgrind, 200,000 lines): $((ir / 200000))"
fi
if [ -n "${BIG:-}" ]; then
    /usr/bin/time -f '%U %S %M %e' -o "$work/big" sh -c \
        "target/release/examples/gen_log 50000000 | $bin audit - --robots $work/robots.txt --offline --json > /dev/null" || true
    tail -1 "$work/big" | awk '{printf "50,000,000 lines through stdin: peak RSS %d MiB, %.1f CPU s (generator included), %.1f s\n", $3 / 1024, $1 + $2, $4}'
fi
