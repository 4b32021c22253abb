#!/usr/bin/env bash
# A small supervisor for running Basalt's four services on one machine, the
# way the sidecars of one pod run: ipc:// endpoints in a shared directory.
# Each service is restarted when it exits (any process may be killed at any
# moment and the others recover). SIGTERM/SIGINT stop everything.
#
#   scripts/supervise.sh --master URL [--build DIR] [--dir DIR] [--binders N]
#                        [--scheduler-conf FILE] [--log-dir DIR]
set -uo pipefail

BUILD=build
DIR=/tmp/basalt
MASTER=""
BINDERS=1
CONF=""
LOGDIR=""
while [ $# -gt 0 ]; do
    case "$1" in
    --build) BUILD=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --master) MASTER=$2; shift 2 ;;
    --binders) BINDERS=$2; shift 2 ;;
    --scheduler-conf) CONF=$2; shift 2 ;;
    --log-dir) LOGDIR=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "supervise.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -n "$MASTER" ] || { echo "supervise.sh: --master URL is required" >&2; exit 2; }
LOGDIR=${LOGDIR:-$DIR/logs}
mkdir -p "$DIR" "$LOGDIR"

SNAP="ipc://$DIR/cache.sock"
DELTA="ipc://$DIR/delta.sock"
WORK="ipc://$DIR/work.sock"
COMMON=(--http 127.0.0.1:0 --master "$MASTER")

# run NAME CMD...: keep CMD running, restarting it after it exits.
run() {
    local name=$1; shift
    (
        trap 'kill -TERM $child 2>/dev/null; wait $child; exit 0' TERM INT
        while true; do
            "$@" >>"$LOGDIR/$name.log" 2>&1 &
            child=$!
            echo "$child" >"$DIR/$name.pid"
            wait $child
            echo "supervise.sh: $name exited with $?, restarting" >>"$LOGDIR/$name.log"
            sleep 0.2
        done
    ) &
    PIDS+=($!)
}

PIDS=()
stop() {
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
    wait
    exit 0
}
trap stop TERM INT

run cache-svc "$BUILD/cache-svc/cache-svc" "${COMMON[@]}" \
    --snapshot-endpoint "$SNAP" --delta-endpoint "$DELTA" --work-endpoint "$WORK"
SESS_ARGS=(--http 127.0.0.1:0 --snapshot-endpoint "$SNAP" --delta-endpoint "$DELTA")
[ -n "$CONF" ] && SESS_ARGS+=(--scheduler-conf "$CONF")
run session-svc "$BUILD/session-svc/session-svc" "${SESS_ARGS[@]}"
for i in $(seq 1 "$BINDERS"); do
    # Each binder serves /metrics too, on a port of its own (its log's
    # "starting" line names it), like every other service here.
    run "binder-svc-$i" "$BUILD/binder-svc/binder-svc" "${COMMON[@]}" \
        --work-endpoint "$WORK" --binder-id "binder-$i"
done
run controller-svc "$BUILD/controller-svc/controller-svc" "${COMMON[@]}" \
    --snapshot-endpoint "$SNAP" --delta-endpoint "$DELTA"
wait
