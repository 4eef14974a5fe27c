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
# in $OUT (default: a new directory under /tmp, no spaces in its path) for
# `callgrind_annotate`.
set -euo pipefail

[ $# -ge 1 ] || { sed -n 6,7p "$0" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
for b in "$@"; do
    [ -x "$b" ] || { echo "$b: not an executable" >&2; exit 1; }
done
here=$(cd "$(dirname "$0")" && pwd)
runs=${RUNS:-4}
# Read by demo-run.sh: the demo's binary, its web, where runs land.
bin=$1
hosts=${HOSTS:-300}
delay=1
work=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/crawl-instructions.XXXX")}
mkdir -p "$work"
# shellcheck source=demo-run.sh
. "$here/demo-run.sh"

one() { # build, run number: a line of runs.tsv
    run_mannerly "$2" "$1" "valgrind --tool=callgrind --callgrind-out-file=$work/$2.callgrind"
    python3 - "$work" "$2" "$1" <<'PY'
import json, pathlib, sys
work, n, build = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
try:
    audit = json.loads((work / f"{n}.json").read_text())
    total = next(l for l in (work / f"{n}.callgrind").read_text().splitlines()
                 if l.startswith("totals:"))
except (OSError, ValueError, StopIteration) as e:
    sys.exit(f"run {n}: no instruction count ({e}); see {work}/{n}.err")
print(f"{build}\t{int(total.split()[1])}\t{audit['pages']}\t{audit['violations']}")
PY
}

printf 'build\tinstructions\tpages\tviolations\n'
n=0
for r in $(seq "$runs"); do
    for b in "$@"; do
        n=$((n + 1))
        one "$b" "$n" | tee -a "$work/runs.tsv"
    done
done
python3 - "$work/runs.tsv" <<'PY'
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
echo "profiles in $work"
