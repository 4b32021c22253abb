#!/usr/bin/env bash
# make up: the simulated cluster (examples/demo) and Basalt's four services,
# kept up until Ctrl-C, for kubectl and the status page.
#
#   scripts/up.sh [BUILD_DIR]      (BASALT_UP_PORT=N picks the API port;
#                                   BASALT_UP_DIR=DIR puts kubeconfig, logs
#                                   and sockets in DIR instead of BUILD_DIR)
#
# Writes BUILD_DIR/kubeconfig for the simulator and prints the export line,
# the status page's URL and where the logs are (BUILD_DIR/up/logs); then a
# one-line progress display (pods bound / pending, jobs, queues, binders)
# refreshed every second. Ctrl-C (or SIGTERM) stops every process it started
# and says so once none is left.
set -uo pipefail
BUILD=${1:-build}
cd "$(dirname "$0")/.."
BUILD=$(realpath "$BUILD")
STATE=$(realpath -m "${BASALT_UP_DIR:-$BUILD}")
DIR="$STATE/up"
rm -rf "$DIR"
mkdir -p "$DIR/logs"
APISIM_PID=""
SUP_PID=""
say() { printf '%s\n' "$*"; }

stop() {
    trap - INT TERM EXIT
    printf '\n'
    say "up: stopping"
    [ -n "$SUP_PID" ] && kill -TERM "$SUP_PID" 2>/dev/null && wait "$SUP_PID" 2>/dev/null
    [ -n "$APISIM_PID" ] && kill -TERM "$APISIM_PID" 2>/dev/null && wait "$APISIM_PID" 2>/dev/null
    # Every process this started names $DIR in its arguments (ipc:// paths,
    # the ready file): none may be left.
    for _ in $(seq 1 50); do
        pgrep -f -- "$DIR/" >/dev/null || break
        sleep 0.1
    done
    if pgrep -fa -- "$DIR/"; then
        say "up: these are still running" >&2
        exit 1
    fi
    say "up: stopped; every process is gone (logs kept in $DIR/logs)"
    exit 0
}
trap stop INT TERM EXIT

"$BUILD/tools/apisim/basalt-apisim" --port "${BASALT_UP_PORT:-0}" \
    --ready-file "$DIR/apisim.port" --load examples/demo >"$DIR/logs/apisim.log" 2>&1 &
APISIM_PID=$!
for _ in $(seq 1 100); do
    [ -s "$DIR/apisim.port" ] && break
    kill -0 "$APISIM_PID" 2>/dev/null || { cat "$DIR/logs/apisim.log"; exit 1; }
    sleep 0.1
done
[ -s "$DIR/apisim.port" ] || { say "up: the API simulator did not start" >&2; exit 1; }
MASTER="http://127.0.0.1:$(head -n1 "$DIR/apisim.port")"
cat >"$STATE/kubeconfig" <<EOF
apiVersion: v1
kind: Config
current-context: basalt-up
clusters:
- name: basalt-up
  cluster:
    server: $MASTER
users:
- name: basalt-up
  user: {}
contexts:
- name: basalt-up
  context:
    cluster: basalt-up
    user: basalt-up
    namespace: default
EOF

scripts/supervise.sh --build "$BUILD" --dir "$DIR" --master "$MASTER" --binders 2 \
    --log-dir "$DIR/logs" >/dev/null 2>&1 &
SUP_PID=$!

# cache-svc's --http port, from its "starting" log line.
CACHE_PORT=""
for _ in $(seq 1 100); do
    CACHE_PORT=$(sed -n 's/.*svc=cache-svc event=starting .* port=\([0-9]*\).*/\1/p' \
        "$DIR/logs/cache-svc.log" 2>/dev/null | tail -n1)
    [ -n "$CACHE_PORT" ] && break
    sleep 0.1
done
[ -n "$CACHE_PORT" ] || { say "up: cache-svc did not start (see $DIR/logs)" >&2; exit 1; }

say "Basalt is up on the simulated cluster of examples/demo (20 nodes, 3 queues, 10 gangs)."
say "  API server:   $MASTER"
say "  kubectl:      export KUBECONFIG=$STATE/kubeconfig"
say "  status page:  http://127.0.0.1:$CACHE_PORT/ui"
say "  why it waits: $BUILD/tools/ctl/basalt-ctl --server $MASTER --cache http://127.0.0.1:$CACHE_PORT why default/giant-j"
say "  logs:         $DIR/logs"
say "Ctrl-C stops everything."

# The progress line, from cache-svc's /debug/state.
while true; do
    line=$(python3 - "http://127.0.0.1:$CACHE_PORT/debug/state" <<'PY' 2>/dev/null
import json, sys, time, urllib.request
try:
    s = json.load(urllib.request.urlopen(sys.argv[1], timeout=2))
except Exception:
    print("cache-svc not answering"); sys.exit(0)
jobs = s.get("jobs", [])
bound = sum(j.get("bound", 0) for j in jobs)
pending = sum(j.get("pending", 0) for j in jobs)
phases = {}
for j in jobs:
    phases[j.get("phase", "?")] = phases.get(j.get("phase", "?"), 0) + 1
b = s.get("binders", {})
print("%s  pods: %d bound, %d pending | jobs: %s | queues: %d | binders: %s" % (
    time.strftime("%H:%M:%S"), bound, pending,
    ", ".join("%d %s" % (n, p) for p, n in sorted(phases.items())) or "none",
    len(s.get("queues", [])), b.get("connected", "?")))
PY
)
    printf '\r\033[K%s' "${line:-cache-svc not answering}"
    sleep 1 &
    wait $!
done
