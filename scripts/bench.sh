#!/usr/bin/env bash
# Run Basalt's benchmarks against a build directory and print their lines.
#
#   scripts/bench.sh [BUILD_DIR]      (default: build)
#
# Every executable BUILD_DIR/tools/bench/basalt-bench-* is run with its
# default arguments and prints key=value lines on stdout, each shown
# prefixed with the benchmark's name: one line (see tools/bench/bench_main.c),
# or one per scale (basalt-bench-e2e: small and medium by default, a few
# minutes; --scale large|restart|all for the bigger ones). Numbers depend
# on the machine and the build type: configure with
# -DCMAKE_BUILD_TYPE=Release to measure. Nothing here
# is a pass/fail threshold; a benchmark that exits non-zero is reported and
# makes the script exit 1.
set -uo pipefail

BUILD=${1:-build}
BENCH_DIR="$BUILD/tools/bench"
if [ ! -d "$BENCH_DIR" ]; then
    echo "bench.sh: $BENCH_DIR does not exist: build first (make build)" >&2
    exit 2
fi
type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD/CMakeCache.txt" 2>/dev/null)
echo "# basalt benchmarks: build=$BUILD type=${type:-?} host=$(uname -n) cpus=$(nproc)"

status=0
found=0

# run_bench NAME CMD...: run one benchmark and print each line it writes on
# stdout prefixed with NAME (most print one line; basalt-bench-e2e prints one
# per scale). Its stderr (progress, diagnostics) is shown only when it fails.
run_bench() {
    local name=$1; shift
    local err rc
    found=$((found + 1))
    err=$(mktemp)
    out=$("$@" 2>"$err")
    rc=$?
    if [ -n "$out" ]; then
        while IFS= read -r line; do echo "$name $line"; done <<<"$out"
    fi
    if [ $rc -ne 0 ]; then
        echo "$name FAILED (exit $rc):"
        tail -n 40 "$err" | sed "s/^/$name   /"
        status=1
    fi
    rm -f "$err"
}

# run_other NAME CMD...: run a benchmark that is not a basalt-bench-* binary.
run_other() {
    run_bench "$@"
}

# --- Benchmarks built from tools/bench (basalt-bench-*), in name order. ---
for bench in "$BENCH_DIR"/basalt-bench-*; do
    [ -x "$bench" ] && [ -f "$bench" ] || continue
    run_bench "$(basename "$bench")" "$bench"
done

# --- The session benchmark's placement constraints, HyperNodes and images, each timed
# against the same cluster without them in the same invocation. ---
if [ -x "$BENCH_DIR/basalt-bench-session" ]; then
    run_other "basalt-bench-session-constraints" "$BENCH_DIR/basalt-bench-session" \
        --constraints --no-baseline
    run_other "basalt-bench-session-racks" "$BENCH_DIR/basalt-bench-session" \
        --racks 100 --no-baseline
    run_other "basalt-bench-session-images" "$BENCH_DIR/basalt-bench-session" \
        --images --no-baseline
fi

# --- Other benchmarks: add them here, one line of key=value output each. ---
# Example:
#   run_other "apisim-list" "$BUILD/tools/apisim/basalt-apisim-bench" --pods 20000

[ "$found" -gt 0 ] || { echo "bench.sh: no basalt-bench-* in $BENCH_DIR" >&2; exit 2; }
exit $status
