#!/usr/bin/env bash
# A fleet of `mannerly crawl --frontier redis://` workers on the demo's
# simulated web with no delay, against one worker on the embedded frontier,
# in the same run: pages/s by number of workers, and what the Redis server
# spent per page (commands, and CPU from its own INFO counters), from which
# the pages/s one server core could feed is extrapolated.
#
#   tools/fleet-bench/run.sh              # 2,000 hosts (~18,000 pages), 1 2 4 workers
#   HOSTS=500 WORKERS="1 2" tools/fleet-bench/run.sh
#   HOSTS=200 PAGES=90 tools/fleet-bench/run.sh  # fewer, larger sites (9 pages each by default)
#   DELAY=1 HOSTS=300 tools/fleet-bench/run.sh   # a polite crawl (1 s between a host's
#                                                # requests): the server's share of a core
#                                                # is then µs/page × pages/s
#   COMMANDS=1 tools/fleet-bench/run.sh  # also: server time per command and
#                                        # per script (SLOWLOG; adds overhead)
#   CLAIM=1 tools/fleet-bench/run.sh     # workers take one URL of a host at a
#                                        # time (--claim 1; default: the CLI's, 16)
#   PIN=1 tools/fleet-bench/run.sh       # the server alone on core 0
#   CALLGRIND=1 tools/fleet-bench/run.sh # the server under valgrind's callgrind:
#                                        # instructions per page, which this noisy
#                                        # machine does not change (its CPU time per
#                                        # page varied 1.3x between runs of one
#                                        # binary); the crawl runs ~6x slower
#   CALLGRIND=1 KEEP_CG=/tmp/cg tools/fleet-bench/run.sh  # and keep each run's
#                                        # dump as /tmp/cg.<workers> (pages in
#                                        # /tmp/cg.<workers>.pages)
#   BIN=path/to/mannerly tools/fleet-bench/run.sh  # that binary, unbuilt
#
# Needs redis-server and redis-cli (Debian's redis-server package).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
hosts=${HOSTS:-2000}
workers=${WORKERS:-"1 2 4"}
partitions=${PARTITIONS:-1024}
[ -n "${BIN:-}" ] || (cd "$root" && cargo build --release --quiet -p mannerly-cli)
bin=${BIN:-$root/target/release/mannerly}
work=$(mktemp -d)
# A port nothing listens on (a random one collided with the simulated
# web's once).
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cleanup() {
    redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
    if [ -n "${vpid:-}" ]; then wait "$vpid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
# PIN=1: the server gets core 0 to itself and everything else shares the
# rest, so its CPU per page is not inflated by the crawl competing for its
# core (on a 2-core machine, pages/s then falls).
server_cpus=() client_cpus=()
if [ -n "${PIN:-}" ]; then
    last=$(($(nproc) - 1))
    server_cpus=(taskset -c 0) client_cpus=(taskset -c "1-$last")
fi
vpid=
if [ -n "${CALLGRIND:-}" ]; then
    command -v valgrind >/dev/null || { echo "CALLGRIND=1 needs valgrind" >&2; exit 1; }
    "${server_cpus[@]}" valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" \
        redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
        --dir "$work" --logfile "$work/redis.log" >"$work/valgrind.log" 2>&1 &
    vpid=$!
    for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.2; done
else
    "${server_cpus[@]}" redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize yes \
        --dir "$work" --logfile "$work/redis.log"
fi
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
redis-cli -p "$port" ping >/dev/null 2>&1 || { echo "redis-server on port $port did not start:" >&2; cat "$work/redis.log" >&2; exit 1; }

# Every worker gets the seeds (enqueueing them twice is a no-op), so all
# start at once.
cat >"$work/workers.sh" <<'SH'
#!/bin/sh
bin=$1; out=$2; n=$3; frontier=$4; crawl=$5; partitions=$6; claim=$7
i=0
while [ "$i" -lt "$n" ]; do
    if [ -n "$frontier" ]; then
        "$bin" crawl --proxy "$MANNERLY_DEMO_PROXY" --seeds "$MANNERLY_DEMO_SEEDS" --min-delay "$MANNERLY_DEMO_DELAY" \
            --give-up-after 5 --frontier "$frontier" --crawl-name "$crawl" --partitions "$partitions" ${claim:+--claim "$claim"} \
            --out "$out/w$i" >"$out/w$i.log" 2>&1 &
    else
        "$bin" crawl --proxy "$MANNERLY_DEMO_PROXY" --seeds "$MANNERLY_DEMO_SEEDS" --min-delay "$MANNERLY_DEMO_DELAY" \
            --give-up-after 5 --out "$out/w$i" >"$out/w$i.log" 2>&1 &
    fi
    i=$((i + 1))
done
wait
SH

info() { redis-cli -p "$port" info "$1" | tr -d '\r'; }
field() { sed -n "s/^$1:\([0-9.]*\).*/\1/p"; }
evalsha() { info commandstats | sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),usec=\([0-9]*\).*/\1 \2/p'; }

printf '%-22s %7s %8s %8s %12s %14s %16s\n' "" pages seconds pages/s "cmds/page" "server CPU µs/page" "pages/s per core"
run() { # label, workers, frontier URL ('' for the embedded frontier), crawl name
    local label=$1 n=$2 frontier=$3 crawl=$4
    redis-cli -p "$port" config resetstat >/dev/null
    if [ -n "${COMMANDS:-}" ]; then
        redis-cli -p "$port" config set slowlog-log-slower-than 0 >/dev/null
        redis-cli -p "$port" config set slowlog-max-len 10000000 >/dev/null
        redis-cli -p "$port" slowlog reset >/dev/null
    fi
    local cpu0 cmds0
    cpu0=$(info cpu | awk -F: '/^used_cpu_(user|sys):/{s+=$2} END{printf "%.6f", s}')
    cmds0=$(info stats | field total_commands_processed)
    local in0 out0
    in0=$(info stats | field total_net_input_bytes); out0=$(info stats | field total_net_output_bytes)
    local pid sys0 sys1 k0 k1
    k0=$(info cpu | field used_cpu_sys)
    pid=$(info server | field process_id)
    sys0=$(awk '/^sysc[rw]:/{s+=$2} END{print s}' "/proc/$pid/io" 2>/dev/null || echo 0)
    rm -rf "$work/run"; mkdir -p "$work/run"
    if [ -n "$vpid" ]; then rm -f "$work"/cg.out.*; callgrind_control -z "$vpid" >/dev/null 2>&1; fi
    "${client_cpus[@]}" "$bin" demo --json --hosts "$hosts" ${PAGES:+--pages "$PAGES"} --min-delay "${DELAY:-0}" -- sh "$work/workers.sh" "$bin" "$work/run" "$n" "$frontier" "$crawl" "$partitions" "${CLAIM:-}" \
        >"$work/audit.json" 2>"$work/demo.err" || true
    if [ -n "${KEEP_LOGS:-}" ]; then mkdir -p "$KEEP_LOGS/$n"; cp "$work"/run/w*.log "$KEEP_LOGS/$n/" 2>/dev/null || true; fi
    local cpu1 cmds1
    cpu1=$(info cpu | awk -F: '/^used_cpu_(user|sys):/{s+=$2} END{printf "%.6f", s}')
    cmds1=$(info stats | field total_commands_processed)
    local in1 out1
    in1=$(info stats | field total_net_input_bytes); out1=$(info stats | field total_net_output_bytes)
    sys1=$(awk '/^sysc[rw]:/{s+=$2} END{print s}' "/proc/$pid/io" 2>/dev/null || echo 0)
    k1=$(info cpu | field used_cpu_sys)
    python3 - "$work/audit.json" "$label" "$cpu0" "$cpu1" "$cmds0" "$cmds1" "$frontier" "$in0" "$in1" "$out0" "$out1" "$sys0" "$sys1" "$k0" "$k1" <<'PY'
import json, sys
path, label, cpu0, cpu1, c0, c1, frontier, in0, in1, out0, out1, sys0, sys1, k0, k1 = sys.argv[1:]
a = json.loads(open(path).read().strip().splitlines()[-1])
pages, secs = a["pages"], a["external"]["seconds"]
if frontier:
    cmds = (int(c1) - int(c0)) / max(pages, 1)
    us = (float(cpu1) - float(cpu0)) * 1e6 / max(pages, 1)
    core = f"{1e6 / us:,.0f}" if us > 0 else "-"
    print(f"{label:<22} {pages:>7} {secs:>8.1f} {pages / secs:>8.0f} {cmds:>12.1f} {us:>14.1f} {core:>16}  violations {a['violations']}  bytes/page in {(int(in1) - int(in0)) / max(pages, 1):,.0f} out {(int(out1) - int(out0)) / max(pages, 1):,.0f}  reads+writes/page {(int(sys1) - int(sys0)) / max(pages, 1):.2f}  kernel {100 * (float(k1) - float(k0)) / max(float(cpu1) - float(cpu0), 1e-9):.0f} %")
else:
    print(f"{label:<22} {pages:>7} {secs:>8.1f} {pages / secs:>8.0f} {'-':>12} {'-':>14} {'-':>16}  violations {a['violations']}")
PY
    # CALLGRIND=1: the server's instructions in this run, per page, and
    # the share of them in scripts and in the commands scripts call.
    if [ -n "$vpid" ] && [ -n "$frontier" ]; then
        callgrind_control -d "$vpid" >/dev/null 2>&1
        local dump pages
        for _ in $(seq 50); do dump=$(ls "$work"/cg.out.* 2>/dev/null | head -1); [ -n "$dump" ] && break; sleep 0.2; done
        sleep 1
        pages=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["pages"])' "$work/audit.json")
        if [ -n "${KEEP_CG:-}" ]; then cp "$dump" "$KEEP_CG.$n"; echo "$pages" >"$KEEP_CG.$n.pages"; fi
        callgrind_annotate --inclusive=yes "$dump" 2>/dev/null | python3 -c '
import re, sys
pages = int(sys.argv[1])
total, named = None, {}
for line in sys.stdin:
    m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)", line)
    if not m:
        continue
    n, what = int(m.group(1).replace(",", "")), m.group(2)
    if "PROGRAM TOTALS" in what:
        total = n
    for f in ("evalGenericCommand", "scriptCall", "lua_pcall"):
        if what.startswith("???:" + f + " "):
            named[f] = n
if total:
    ev, sc = named.get("evalGenericCommand", 0), named.get("scriptCall", 0)
    print(f"    server instructions {total / pages / 1e3:,.0f} k/page: scripts {ev / pages / 1e3:,.0f} k "
          f"(commands they call {sc / pages / 1e3:,.0f} k), the rest {(total - ev) / pages / 1e3:,.0f} k")
' "$pages"
    fi
    # COMMANDS=1: where the server's time went, by command (scripts'
    # own calls included), per page.
    if [ -n "$frontier" ] && [ -n "${COMMANDS:-}" ]; then
        redis-cli -p "$port" slowlog get 10000000 >"$work/slowlog.txt"
        python3 "$here/scripts.py" "$root/crates/fleet/src/lua.rs" "$work/slowlog.txt" "$work/audit.json"
        local pages
        pages=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["pages"])' "$work/audit.json")
        info commandstats | sed -n 's/^cmdstat_\([a-z|]*\):calls=\([0-9]*\),usec=\([0-9]*\),.*/\3 \2 \1/p' | sort -rn | head -${COMMANDS_TOP:-15} |
            awk -v p="$pages" '{printf "    %-16s %8.1f calls/page %8.1f µs/page\n", $3, $2 / p, $1 / p}'
    fi
}
run "embedded, 1 worker" 1 "" ""
for n in $workers; do
    run "fleet, $n worker(s)" "$n" "redis://127.0.0.1:$port/" "bench$n"
done
# Calibration, in the same run: what the server spends on a bare round
# trip and a bare script call (4 clients), so figures from machines of
# different speed (or one machine at different times: this one varied
# 2.7x within an hour) can be set side by side as multiples of it.
if [ -z "$vpid" ] && command -v redis-benchmark >/dev/null; then
    calib() { # label, calls, command...
        local label=$1 n=$2 c0 c1; shift 2
        c0=$(info cpu | awk -F: '/^used_cpu_(user|sys):/{s+=$2} END{printf "%.6f", s}')
        redis-benchmark -p "$port" -c 4 -n "$n" -q "$@" >/dev/null 2>&1
        c1=$(info cpu | awk -F: '/^used_cpu_(user|sys):/{s+=$2} END{printf "%.6f", s}')
        python3 -c "import sys; print('calibration: %-26s %6.1f µs of server CPU per call' % (sys.argv[1], (float(sys.argv[3]) - float(sys.argv[2])) * 1e6 / int(sys.argv[4])))" "$label" "$c0" "$c1" "$n"
    }
    calib "PING" 100000 ping
    calib "EVAL of 'return 1'" 100000 eval "return 1" 0
fi
echo "(hosts: $hosts generated with ${PAGES:-9} pages each + the demo's scripted ones; delay: ${DELAY:-0} s; partitions: $partitions; claim: ${CLAIM:-default of the binary}; Redis $(redis-server --version | sed -n 's/.*v=\([0-9.]*\).*/\1/p'))"
