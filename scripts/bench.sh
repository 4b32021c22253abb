#!/usr/bin/env bash
# Run Basalt's benchmarks against a build directory and print one line each.
#
#   scripts/bench.sh [BUILD_DIR]      (default: build)
#
# Every executable BUILD_DIR/tools/bench/basalt-bench-* is run with its
# default arguments and must print one key=value line (see
# tools/bench/bench_main.c). Numbers depend on the machine and the build
# type: configure with -DCMAKE_BUILD_TYPE=Release to measure. Nothing here
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

# run_other NAME CMD...: run a benchmark that is not a basalt-bench-* binary.
run_other() {
    local name=$1; shift
    found=$((found + 1))
    if out=$("$@" 2>&1); then
        echo "$name $out"
    else
        echo "$name FAILED (exit $?): $out"
        status=1
    fi
}

# --- Benchmarks built from tools/bench (basalt-bench-*), in name order. ---
for bench in "$BENCH_DIR"/basalt-bench-*; do
    [ -x "$bench" ] && [ -f "$bench" ] || continue
    found=$((found + 1))
    name=$(basename "$bench")
    if out=$("$bench" 2>&1); then
        echo "$name $out"
    else
        echo "$name FAILED (exit $?): $out"
        status=1
    fi
done

# --- Other benchmarks: add them here, one line of key=value output each. ---
# Example:
#   run_other "apisim-list" "$BUILD/tools/apisim/basalt-apisim-bench" --pods 20000

[ "$found" -gt 0 ] || { echo "bench.sh: no basalt-bench-* in $BENCH_DIR" >&2; exit 2; }
exit $status
