#!/usr/bin/env bash
# make demo: Basalt on the embedded simulated cluster (examples/demo/).
# Starts the API simulator with the demo cluster, starts the four services
# under scripts/supervise.sh, waits until scheduling settles, prints who went
# where (or why they wait), stops everything. Exit 0 only if it settled.
set -uo pipefail
BUILD=${1:-build}
cd "$(dirname "$0")/.."
WORK=$(mktemp -d /tmp/basalt-demo.XXXXXX)
APISIM_PID=""
SUP_PID=""
cleanup() {
    [ -n "$SUP_PID" ] && kill -TERM "$SUP_PID" 2>/dev/null && wait "$SUP_PID" 2>/dev/null
    [ -n "$APISIM_PID" ] && kill -TERM "$APISIM_PID" 2>/dev/null && wait "$APISIM_PID" 2>/dev/null
    if [ "${KEEP:-0}" = 1 ]; then echo "logs kept in $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

"$BUILD/tools/apisim/basalt-apisim" --port 0 --ready-file "$WORK/apisim.port" \
    --load examples/demo >"$WORK/apisim.log" 2>&1 &
APISIM_PID=$!
for _ in $(seq 1 100); do
    [ -s "$WORK/apisim.port" ] && break
    kill -0 "$APISIM_PID" 2>/dev/null || { cat "$WORK/apisim.log"; exit 1; }
    sleep 0.1
done
[ -s "$WORK/apisim.port" ] || { echo "demo: the API simulator did not start"; exit 1; }
MASTER="http://127.0.0.1:$(head -n1 "$WORK/apisim.port")"
echo "demo: API simulator at $MASTER with examples/demo (20 nodes in 2 racks, 3 queues, 10 gangs, 1 Deployment)"

scripts/supervise.sh --build "$BUILD" --dir "$WORK" --master "$MASTER" --binders 2 &
SUP_PID=$!
echo "demo: cache-svc, session-svc, 2 binder-svc, controller-svc started (logs: $WORK/logs)"

if "$BUILD/tools/ctl/basalt-ctl" wait --server "$MASTER" --timeout 90 --stable 3; then
    echo
    "$BUILD/tools/ctl/basalt-ctl" status --server "$MASTER"
    exit 0
fi
echo "demo: scheduling did not settle; state now:"
"$BUILD/tools/ctl/basalt-ctl" status --server "$MASTER"
tail -n 20 "$WORK"/logs/*.log
exit 1
