#!/usr/bin/env bash
# Builds every fuzz target and runs each for a short time (FUZZ_SECONDS,
# default 5) from its committed seed corpus in fuzz/corpus/<target>/, as
# CI does. libFuzzer runs the whole seed corpus before it looks at the
# time, so every seed runs whatever the seconds (robots' 1,384 seeds take
# about 9 s unoptimised); the rest of the time goes to new inputs. New
# inputs go to a scratch directory, so the committed corpus stays as it is.
# A crash, a leak or a timeout fails the run and leaves the input in
# fuzz/artifacts/<target>/.
#
# Needs cargo-fuzz (`cargo install cargo-fuzz --locked`); the stable
# toolchain builds it with RUSTC_BOOTSTRAP=1 (sanitizer flags are nightly
# features).
#
# The smoke run looks for panics, hangs and memory blow-ups. The workspace
# forbids `unsafe`, so AddressSanitizer would watch only dependencies'
# code, and it nearly doubles the build (about 400 s against 230 s on 2
# cores): it is off here (FUZZ_SANITIZER=address turns it back on), and on
# by default in `cargo fuzz run` for long runs.
#
# The smoke run builds unoptimised (`--dev`, FUZZ_BUILD=release for an
# optimised one): on 2 cores that is about 175 s against 450 s, and
# debug assertions and overflow checks stay on either way. The targets
# then run fewer inputs in their seconds, which a smoke run can spare;
# long runs want `cargo fuzz run` (optimised).
set -euo pipefail
cd "$(dirname "$0")"
export RUSTC_BOOTSTRAP=1
secs=${FUZZ_SECONDS:-5}
sanitizer=${FUZZ_SANITIZER:-none}
build=(--dev)
[ "${FUZZ_BUILD:-dev}" = release ] && build=()
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
targets=$(cargo fuzz list)
echo "fuzz: building $(echo $targets | wc -w) targets"
cargo fuzz build "${build[@]}" -s "$sanitizer"
for t in $targets; do
    if [ ! -d "corpus/$t" ] || [ -z "$(ls -A "corpus/$t")" ]; then
        echo "fuzz: target $t has no seed corpus in fuzz/corpus/$t" >&2
        exit 1
    fi
    mkdir -p "$scratch/$t"
    echo "fuzz: $t for ${secs}s"
    # grep hides libFuzzer's chatter; the status is cargo fuzz's.
    set +e
    # The walk target's memory is asserted through libFuzzer's RSS limit
    # (coverage overhead included).
    rss=2048
    [ "$t" = walk ] && rss=768
    cargo fuzz run "${build[@]}" -s "$sanitizer" "$t" "$scratch/$t" "corpus/$t" -- \
        -max_total_time="$secs" -rss_limit_mb="$rss" -timeout=30 -print_final_stats=1 2>&1 \
        | grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|==|SUMMARY|Done|thread|panicked)'
    status=${PIPESTATUS[0]}
    set -e
    if [ "$status" -ne 0 ]; then
        echo "fuzz: $t FAILED (input saved under fuzz/artifacts/$t/)" >&2
        exit 1
    fi
done
echo "fuzz: $(echo $targets | wc -w) targets ran ${secs}s each without a finding"
