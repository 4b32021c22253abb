/*  sess_defaults: every tunable of session-svc's process in one place. */
#ifndef SESS_DEFAULTS_H
#define SESS_DEFAULTS_H

#define SESS_SNAPSHOT_ENDPOINT "ipc:///tmp/basalt/cache.sock"
#define SESS_DELTA_ENDPOINT "ipc:///tmp/basalt/delta.sock"
#define SESS_HTTP "127.0.0.1:8482"
#define SESS_PERIOD_MS 1000 // --schedule-period, as Volcano's default 1 s
#define SESS_TRIGGER_MS 20  // --session-coalesce-ms: run soon after new pending work arrives
#define SESS_TRIGGER_SPACING_PCT                                                                   \
    200 // --session-spacing-pct: ...but leave twice the last session's time free after it
#define SESS_COMMIT_TIMEOUT_MS 10000     // give up on a commit answer after this
#define SESS_COMMIT_PART_PLACEMENTS 4096 // placements per Commit message (bas_commit_pack)
#define SESS_CONF_CHECK_MS 1000          // how often the configuration file is checked
#define SESS_GAUGES_MS                                                                             \
    1000                       // queue gauges and PodGroup counts from the replica (a walk
                               // over every pod: not per session)
#define SESS_GAUGES_SHARE 20   // ...and at least 20x the last walk's time apart
#define SESS_STEP_QUIET_MS 300 // --max-sessions: quiet time before the next session

#endif
