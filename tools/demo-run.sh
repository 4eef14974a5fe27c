# Shared by the benchmark scripts beside it (sourced, not run): each
# crawler runs as an external process of `mannerly demo --`, whose JSON
# (the audit, CPU time, peak RSS) lands in "$work/KEY.json". Needs $bin
# (the mannerly binary), $hosts, $delay and $work set.

run() { # key, then the external command
    local key=$1
    shift
    "$bin" demo --json --hosts "$hosts" --min-delay "$delay" --out "$work/$key" -- "$@" \
        >"$work/$key.json" 2>"$work/$key.err" || true
    if ! grep -q '"violations"' "$work/$key.json"; then
        echo "$key: the demo did not finish:" >&2
        cat "$work/$key.err" >&2
        exit 1
    fi
}

# `mannerly crawl` on the demo's web, as key `mannerly`; or as key $1, by
# the crawler binary $2 (default $bin), run under the command $3 (split on
# spaces: `valgrind --tool=callgrind ...`, `perf stat`).
run_mannerly() {
    local key=${1:-mannerly}
    run "$key" sh -c 'exec $2 "$0" crawl --proxy "$MANNERLY_DEMO_PROXY" --seeds "$MANNERLY_DEMO_SEEDS" \
        --min-delay "$MANNERLY_DEMO_DELAY" --concurrency "$MANNERLY_DEMO_CONCURRENCY" \
        --give-up-after 20 --out "$1" >/dev/null' "${2:-$bin}" "$work/$key-crawl" "${3:-}"
}
