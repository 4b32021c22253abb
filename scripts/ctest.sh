#!/usr/bin/env bash
# Run the CTest suite of one build directory and fail when any test failed,
# timed out, or did not run. A test exits 77 (CTest's SKIP_RETURN_CODE) when a
# tool it needs is missing; CTest reports that as "Skipped" and still exits 0,
# but every tool the suite needs is installed by scripts/install-deps.sh, so a
# skipped test here means a broken install and must not pass as green.
#   scripts/ctest.sh BUILD_DIR [ctest arguments...]
set -uo pipefail
dir=${1:?usage: scripts/ctest.sh BUILD_DIR [ctest args...]}
shift
log=$(mktemp /tmp/basalt-ctest.XXXXXX)
trap 'rm -f "$log"' EXIT
(cd "$dir" && ctest --output-on-failure "$@") 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if grep -qE '\*\*\*Skipped|\*\*\*Not Run|Disabled' "$log"; then
    echo "ctest.sh: these tests did not run; a skipped test fails the suite:" >&2
    grep -E '\*\*\*Skipped|\*\*\*Not Run|Disabled' "$log" >&2
    rc=1
fi
if ! grep -qE '^[0-9]+% tests passed' "$log"; then
    echo "ctest.sh: ctest printed no summary in $dir (no tests found?)" >&2
    rc=1
fi
exit "$rc"
