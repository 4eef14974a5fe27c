#!/usr/bin/env bash
# Instructions the crawler runs on the demo's simulated web, counted by
# valgrind's callgrind: a steadier A/B than CPU seconds (which wander by
# about 10 % from run to run here) for telling two builds apart.
#
#   tools/crawl-instructions.sh BIN [BIN2 ...]
#   RUNS=4 HOSTS=300 tools/crawl-instructions.sh /tmp/mannerly-a /tmp/mannerly-b
#
# Each build crawls under `valgrind --tool=callgrind`, builds alternated,
# RUNS times each; the demo (served by the first build) audits every run.
# Prints each run's user-space instructions, pages and violations, then
# each build's median. Counts leave out the kernel, and valgrind hides
# SHA-NI, so hashing weighs more here than on the CPU. The profiles stay
# in $OUT (default: a new directory under /tmp) for `callgrind_annotate`.
set -euo pipefail

[ $# -ge 1 ] || { sed -n 6,7p "$0" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
for b in "$@"; do
    [ -x "$b" ] || { echo "$b: not an executable" >&2; exit 1; }
done
runs=${RUNS:-4}
hosts=${HOSTS:-300}
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/crawl-instructions.XXXX")}
demo=$1

one() { # build, run number
    local bin=$1 dir=$out/$2
    mkdir -p "$dir"
    "$demo" demo --json --hosts "$hosts" --min-delay 1 --out "$dir/demo" -- sh -c \
        'exec valgrind --tool=callgrind --callgrind-out-file="$2/callgrind.out" "$0" crawl \
            --proxy "$MANNERLY_DEMO_PROXY" --seeds "$MANNERLY_DEMO_SEEDS" \
            --min-delay "$MANNERLY_DEMO_DELAY" --concurrency "$MANNERLY_DEMO_CONCURRENCY" \
            --give-up-after 20 --out "$1" >/dev/null 2>"$2/valgrind.err"' \
        "$bin" "$dir/crawl" "$dir" >"$dir/demo.json" 2>"$dir/demo.err" || true
    python3 - "$dir" "$bin" <<'PY'
import json, pathlib, sys
d = pathlib.Path(sys.argv[1])
try:
    audit = json.loads((d / "demo.json").read_text())
    total = next(l for l in (d / "callgrind.out").read_text().splitlines()
                 if l.startswith("totals:"))
except (OSError, ValueError, StopIteration) as e:
    sys.exit(f"{d}: the run did not finish ({e}); see demo.err and valgrind.err there")
print(f"{sys.argv[2]}\t{int(total.split()[1])}\t{audit['pages']}\t{audit['violations']}")
PY
}

printf 'build\tinstructions\tpages\tviolations\n'
n=0
for r in $(seq "$runs"); do
    for b in "$@"; do
        n=$((n + 1))
        one "$b" "$n" | tee -a "$out/runs.tsv"
    done
done
python3 - "$out/runs.tsv" <<'PY'
import statistics, sys
by = {}
for line in open(sys.argv[1]):
    b, ir, *_ = line.rstrip("\n").split("\t")
    by.setdefault(b, []).append(int(ir))
first = None
for b, irs in by.items():
    m = statistics.median(irs)
    first = first or m
    print(f"{b}: median {m / 1e6:.1f} M instructions ({min(irs) / 1e6:.1f}-{max(irs) / 1e6:.1f}), "
          f"{m / first:.3f} of the first")
PY
echo "profiles in $out"
