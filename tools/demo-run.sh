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

run_mannerly() { # `mannerly crawl` on the demo's web, as key `mannerly`
    run mannerly sh -c 'exec "$0" crawl --proxy "$MANNERLY_DEMO_PROXY" --seeds "$MANNERLY_DEMO_SEEDS" \
        --min-delay "$MANNERLY_DEMO_DELAY" --concurrency "$MANNERLY_DEMO_CONCURRENCY" \
        --give-up-after 20 --out "$1" >/dev/null' "$bin" "$work/mannerly-crawl"
}
