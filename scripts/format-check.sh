#!/usr/bin/env bash
# Fails (exit 1) when a tracked .c or .h file is not as clang-format would
# write it with the checked-in .clang-format, naming each file and showing
# the first differences. Fix with: clang-format -i FILE...
# Run by .ci/run first; Debian 12's clang-format (14) is the reference.
set -uo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "format-check: clang-format not found (scripts/install-deps.sh)" >&2; exit 1; }
bad=0
while IFS= read -r f; do
    if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
        echo "format-check: $f is not clang-formatted; the difference:"
        diff -u "$f" <(clang-format "$f") | sed -n '3,14p'
        bad=$((bad + 1))
    fi
done < <(git ls-files '*.c' '*.h')
if [ $bad -gt 0 ]; then
    echo "format-check: $bad file(s) differ from .clang-format (fix: clang-format -i FILE)"
    exit 1
fi
echo "format-check: $(git ls-files '*.c' '*.h' | wc -l) files formatted"
