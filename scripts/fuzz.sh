#!/usr/bin/env bash
# Run every libFuzzer target of fuzz/ for SECONDS each (make fuzz).
#
#   scripts/fuzz.sh BUILD_DIR SECONDS [TARGET...]
#   FUZZ_RUNS=10000000 scripts/fuzz.sh BUILD_DIR 36000 fuzz_msg
#
# With FUZZ_RUNS set, a target also stops after that many executions
# (whichever comes first): the long runs reported in fuzz/README.md.
#
# Each target first replays its regression inputs (fuzz/regress/TARGET/,
# crashes found before and fixed), then fuzzes for SECONDS from its working
# corpus (BUILD_DIR/fuzz/corpus/TARGET, kept between runs) and its seeds
# (fuzz/seeds/TARGET/ and the shared fixtures named below). A crash, a
# leak, a timeout (10 s per input) or more than 2 GB of memory fails the
# target; the input is saved as BUILD_DIR/fuzz/crash-TARGET-*, to be fixed
# and then copied into fuzz/regress/TARGET/. One line per target:
#   fuzz target=fuzz_msg seconds=30 execs=1534635 corpus=412 result=ok
# The script exits 1 when any target failed.
set -uo pipefail
BUILD=${1:?usage: scripts/fuzz.sh BUILD_DIR SECONDS [TARGET...]}
SECONDS_EACH=${2:?usage: scripts/fuzz.sh BUILD_DIR SECONDS [TARGET...]}
shift 2
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SHARED=$ROOT/../shared/k8s-fixtures
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(fuzz_msg fuzz_k8s_json fuzz_yaml fuzz_sched_conf fuzz_quantity
                                     fuzz_kubeconfig fuzz_apisim)

# Seed directories beyond fuzz/seeds/TARGET (read, never written).
seeds_for() {
    case $1 in
        fuzz_k8s_json) echo "$SHARED/objects $SHARED/watch $ROOT/tests/fixtures" ;;
        fuzz_yaml) echo "$SHARED/objects $ROOT/examples/demo" ;;
        *) echo "" ;;
    esac
}

status=0
for t in "${TARGETS[@]}"; do
    bin=$BUILD/fuzz/$t
    if [ ! -x "$bin" ]; then
        echo "fuzz target=$t result=missing ($bin: build with make fuzz)"
        status=1
        continue
    fi
    corpus=$BUILD/fuzz/corpus/$t
    mkdir -p "$corpus"
    log=$BUILD/fuzz/$t.log
    opts=(-timeout=10 -rss_limit_mb=2048 -print_final_stats=1
          "-artifact_prefix=$BUILD/fuzz/crash-$t-")
    regress=$ROOT/fuzz/regress/$t
    if [ -d "$regress" ] && [ -n "$(ls -A "$regress")" ]; then
        if ! "$bin" "${opts[@]}" "$regress"/* > "$log.regress" 2>&1; then
            echo "fuzz target=$t result=regression (see $log.regress)"
            grep -E "^==[0-9]+==ERROR|^SUMMARY|runtime error|^Running: " "$log.regress" | head -8
            status=1
            continue
        fi
    fi
    dirs=("$corpus")
    [ -d "$ROOT/fuzz/seeds/$t" ] && dirs+=("$ROOT/fuzz/seeds/$t")
    for d in $(seeds_for "$t"); do [ -d "$d" ] && dirs+=("$d"); done
    runs=()
    [ -n "${FUZZ_RUNS:-}" ] && runs=("-runs=$FUZZ_RUNS")
    start=$(date +%s)
    "$bin" "${opts[@]}" -max_total_time="$SECONDS_EACH" "${runs[@]}" "${dirs[@]}" > "$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    size=$(ls "$corpus" | wc -l)
    took=$(( $(date +%s) - start ))
    if [ $rc -eq 0 ]; then
        echo "fuzz target=$t seconds=$took execs=${execs:-?} corpus=$size result=ok"
    else
        echo "fuzz target=$t seconds=$took execs=${execs:-?} corpus=$size result=FAILED (exit $rc, see $log)"
        grep -E "^==[0-9]+==ERROR|^SUMMARY|runtime error|Test unit written" "$log" | head -5
        status=1
    fi
done
exit $status
