/*  session-svc: runs scheduling sessions (DESIGN.md).

    Keeps a replica of cache-svc's model by the Clone pattern (bas_replica),
    runs a session every period (default 1 s) and soon after new pending
    work arrives, and sends each session's proposals to the cache as one
    Commit. It never runs two sessions on the same view: after a commit it
    waits for the answer, and for its replica to reach the seq the cache
    published the commit's effects at, before planning again.

    Wiring only: the replica (bas_replica), the Commit conversation's
    proposer (bas_commit), the session worker that plans off the reactor
    (sess_worker.c), the metrics (sess_metrics.c), the timers. The
    scheduler configuration is Volcano's volcano-scheduler.conf; the file
    is checked every second and reloaded when it changes; a bad file is
    rejected with its line and reason and the previous one stays.
*/
#include "bas_commit.h"
#include "bas_replica.h"
#include "bas_util.h"
#include "bas_sock.h"
#include "bas_svc.h"
#include "sess_defaults.h"
#include "sess_metrics.h"
#include "sess_sched.h"
#include "sess_worker.h"

typedef struct {
    bas_svc_flags_t common;
    const char *snapshot_endpoint;
    const char *delta_endpoint;
    const char *scheduler_conf;
    int schedule_period_ms;
    int max_sessions;
    int step_quiet_ms;
    int coalesce_ms;   // --session-coalesce-ms
    int spacing_pct;   // --session-spacing-pct
    bool check_base;   // --session-check-base
    bool rebuild_base; // --session-rebuild-base
    const char *curve_server;
} sess_config_t;

static const bas_flag_t s_flags[] = {
    BAS_SVC_FLAGS (sess_config_t),
    {"snapshot-endpoint", BAS_FLAG_STRING, offsetof (sess_config_t, snapshot_endpoint), "ENDPOINT",
     "cache-svc's snapshot and commit ROUTER (connected)"},
    {"delta-endpoint", BAS_FLAG_STRING, offsetof (sess_config_t, delta_endpoint), "ENDPOINT",
     "cache-svc's delta PUB (connected)"},
    {"scheduler-conf", BAS_FLAG_STRING, offsetof (sess_config_t, scheduler_conf), "FILE",
     "Volcano scheduler configuration (default: built-in)"},
    {"schedule-period-ms", BAS_FLAG_INT, offsetof (sess_config_t, schedule_period_ms), "MS",
     "time between sessions"},
    {"max-sessions", BAS_FLAG_INT, offsetof (sess_config_t, max_sessions), "N",
     "run N sessions, each once the model has been quiet, then stop scheduling (0: no limit)"},
    {"step-quiet-ms", BAS_FLAG_INT, offsetof (sess_config_t, step_quiet_ms), "MS",
     "with --max-sessions: how long the model must be unchanged before the next session"},
    {"session-coalesce-ms", BAS_FLAG_INT, offsetof (sess_config_t, coalesce_ms), "MS",
     "how long a session waits after new pending work arrives, so that work arriving together "
     "is planned together"},
    {"session-spacing-pct", BAS_FLAG_INT, offsetof (sess_config_t, spacing_pct), "PERCENT",
     "time left free after a session before one started by new work or the period, as a "
     "percentage of the time the session took (0: none)"},
    {"session-check-base", BAS_FLAG_BOOL, offsetof (sess_config_t, check_base), NULL,
     "compare the kept base of pods and PodGroups with one rebuilt from the replica before "
     "every session; a difference is logged (sched_base_mismatch), counted in "
     "basalt_session_base_total{update=\"mismatch\"} and the session goes on from the rebuilt "
     "one (for tests: it costs a rebuild)"},
    {"session-rebuild-base", BAS_FLAG_BOOL, offsetof (sess_config_t, rebuild_base), NULL,
     "derive every pod and PodGroup from the whole replica for every session, as before the "
     "base was kept"},
    {"curve-server", BAS_FLAG_STRING, offsetof (sess_config_t, curve_server), "FILE",
     "cache-svc's public CURVE certificate"},
    {NULL},
};

typedef struct {
    sess_config_t config;
    bas_svc_t *svc;
    zactor_t *worker;      // runs the sessions (sess_worker.c)
    sess_job_t *job;       // the session out with the worker, or NULL
    bool conf_check_due;   // the file is checked when the session is back
    bool gauges_due;       // and the gauges recomputed
    int64_t gauges_ms;     // when the gauges were last recomputed
    int64_t gauges_gap_ms; // the least time between two recomputations
    int64_t last_end_ms;   // when the last session came back
    int64_t last_run_ms;   // and how long it took
    bas_metrics_t *metrics;
    bas_replica_t *replica;
    sess_conf_t *conf;             // configuration in force
    struct timespec conf_mtime;    // of the file it came from
    bas_commit_proposer_t *commit; // the Commit conversation's proposer end
    bool new_work;                 // pending pods arrived since the last session
    int trigger_timer;             // armed one-shot timer, or -1
    uint64_t sessions;             // sessions run
    int64_t last_change_ms;        // when the replica last changed
    bool stepping_done;            // --max-sessions sessions have run
    zhashx_t *conditions;          // pod uid -> "reason|message" last proposed
    zhashx_t *group_events;        // PodGroup uid -> "type|reason|message" last proposed
} sess_t;

static void s_session (sess_t *self, const char *why);
static int s_load_conf (sess_t *self, bool at_start);
static void s_job_send (sess_t *self, sess_job_t *job);

//  The gauges are recomputed by the worker, which walks the store, with the
//  next session or on their own; the reactor only sets them.
static void
s_update_gauges (sess_t *self)
{
    bas_metrics_set (self->metrics, "basalt_replica_seq", NULL,
                     (double)bas_replica_seq (self->replica));
    if (!bas_replica_has_snapshot (self->replica))
        return;
    if (bas_mono_ms () - self->gauges_ms < self->gauges_gap_ms)
        return;
    self->gauges_due = true;
    if (self->job)
        return; // with the next job
    bas_store_t *store = bas_replica_hold (self->replica);
    if (!store)
        return; // catching up: with the next session or period
    sess_job_t *job = bas_alloc (sizeof *job);
    job->store = store;
    s_job_send (self, job);
}

static int
s_on_trigger (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    sess_t *self = arg;
    self->trigger_timer = -1;
    s_session (self, "trigger");
    return 0;
}

//  A session soon, but never closer to the end of the last one than
//  --session-spacing-pct of what it took: on a big cluster, where a
//  session takes most of a second, changes arriving back to back (bind
//  after bind, status after status) would otherwise keep a core planning
//  sessions that find nothing new, while the cache and the binders that
//  carry out the last one wait for CPU. The period runs them regardless.
static int64_t
s_spaced_until (const sess_t *self)
{
    return self->last_end_ms + self->config.spacing_pct * self->last_run_ms / 100;
}

static void
s_trigger (sess_t *self)
{
    if (self->trigger_timer != -1)
        return;
    int64_t delay = self->config.coalesce_ms;
    int64_t next = s_spaced_until (self);
    if (next - bas_mono_ms () > delay)
        delay = next - bas_mono_ms ();
    self->trigger_timer =
        bas_svc_timer (self->svc, (size_t)delay, 1, s_on_trigger, self, "session");
}

static void
s_on_upsert (void *arg, const Basalt__V1__Object *obj)
{
    sess_t *self = arg;
    if (sess_new_work (obj))
        self->new_work = true;
}

static void
s_on_reset (void *arg)
{
    sess_t *self = arg;
    self->new_work = true;
    //  A snapshot of a new epoch: a restarted cache answers nothing sent
    //  to the old one (bas_commit.h).
    bas_commit_proposer_reset (self->commit, bas_replica_epoch (self->replica));
}

static void
s_on_change (void *arg)
{
    sess_t *self = arg;
    self->last_change_ms = bas_mono_ms ();
    if (self->new_work ||
        bas_commit_proposer_caught_up (self->commit, bas_replica_seq (self->replica)))
        s_trigger (self);
}

static int
s_handle_commit_result (void *arg, bas_msg_t *msg)
{
    sess_t *self = arg;
    const Basalt__V1__CommitResult *r = (const Basalt__V1__CommitResult *)msg->body;
    bas_commit_answer_t out;
    if (bas_commit_proposer_answer (self->commit, r, bas_replica_epoch (self->replica), &out) != 0)
        return 0; // an answer to a commit we gave up on
    bas_metrics_add (self->metrics, "basalt_commit_items_total", "result=\"accepted\"",
                     (double)out.accepted);
    bas_metrics_add (self->metrics, "basalt_commit_items_total", "result=\"rejected\"",
                     (double)out.rejected);
    if (out.last && out.go_on) {
        self->new_work = true;
        if (bas_replica_seq (self->replica) >= out.wait_seq)
            s_trigger (self);
    }
    return 0;
}

static const bas_handler_t s_handlers[] = {
    {&basalt__v1__commit_result__descriptor, s_handle_commit_result},
    {NULL, NULL},
};

static void
s_session (sess_t *self, const char *why)
{
    if (self->job || !bas_replica_ready (self->replica) || bas_replica_busy (self->replica))
        return;
    //  A standby cache (it does not hold the leader lease): plan nothing.
    if (bas_replica_standby (self->replica))
        return;
    //  May I plan: every part of the last commit answered, and the replica
    //  at the seq its effects were published at.
    bas_commit_gate_t gate = bas_commit_proposer_may_plan (
        self->commit, bas_replica_seq (self->replica), bas_mono_ms ());
    if (gate == BAS_COMMIT_TIMED_OUT)
        bas_replica_resync (self->replica, "commit answer lost");
    if (gate != BAS_COMMIT_PLAN)
        return;
    //  Stepping (--max-sessions): a reproducible run of exactly N sessions,
    //  each on a model whose previous effects (binds, evictions, status
    //  writes) have reached the API and come back: quiet for a while.
    if (self->config.max_sessions > 0) {
        if (self->sessions >= (uint64_t)self->config.max_sessions) {
            if (!self->stepping_done)
                bas_info ("max_sessions_reached", "sessions=%llu",
                          (unsigned long long)self->sessions);
            self->stepping_done = true;
            return;
        }
        if (bas_mono_ms () - self->last_change_ms < self->config.step_quiet_ms)
            return;
        //  ...and the cache has said, since the last change, that no binder
        //  work is pending: binds, evictions and status writes are done.
        if (bas_replica_heartbeat_ms (self->replica) <= self->last_change_ms ||
            bas_replica_cache_work_pending (self->replica) != 0)
            return;
    }
    bas_store_t *store = bas_replica_hold (self->replica);
    if (!store)
        return;
    bas_commit_proposer_planning (self->commit);
    self->new_work = false;
    sess_job_t *job = bas_alloc (sizeof *job);
    job->store = store;
    job->conf = self->conf;
    job->why = why;
    job->start_ms = bas_mono_ms ();
    snprintf (job->sid, sizeof job->sid, "%llx-%llu", (unsigned long long)bas_svc_epoch (self->svc),
              (unsigned long long)++self->sessions);
    job->params.session_id = job->sid;
    job->params.now_ms = bas_now_us () / 1000;
    job->params.out_of_sync_nodes = bas_replica_out_of_sync (self->replica);
    job->params.ignored_devices = bas_replica_ignored_devices (self->replica);
    job->params.base_check = self->config.check_base;
    job->params.base_rebuild = self->config.rebuild_base;
    job->conditions = self->conditions;
    job->group_events = self->group_events;
    job->base_seq = bas_replica_seq (self->replica);
    job->plan = true;
    s_job_send (self, job);
}

static void
s_job_send (sess_t *self, sess_job_t *job)
{
    job->want_usage = self->gauges_due;
    self->gauges_due = false;
    self->job = job;
    sess_worker_send (self->worker, job);
}

//  A session is back from the worker: take the store back, then send its
//  proposals to the cache as one Commit.
static int
s_on_worker (zloop_t *loop, zsock_t *sock, void *arg)
{
    (void)loop;
    sess_t *self = arg;
    sess_job_t *job = sess_worker_recv (sock);
    if (!job || job != self->job)
        return 0;
    self->job = NULL;
    if (job->gauges) {
        //  The walk costs ~0.1 s at 50,000 pods: it takes at most
        //  1/SESS_GAUGES_SHARE of the worker's time.
        self->gauges_ms = bas_mono_ms ();
        self->gauges_gap_ms = SESS_GAUGES_SHARE * job->usage_us / 1000;
        if (self->gauges_gap_ms < SESS_GAUGES_MS)
            self->gauges_gap_ms = SESS_GAUGES_MS;
        sess_metrics_take_gauges (self->metrics, job->gauges);
        bas_metrics_destroy (&job->gauges);
    }
    double ms = (double)(bas_mono_ms () - job->start_ms);
    const char *sid = job->sid;
    if (job->plan) {
        sess_metrics_session (self->metrics, &job->params, job->parts != NULL, ms);
        self->last_end_ms = bas_mono_ms ();
        self->last_run_ms = (int64_t)ms;
    }
    if (!job->plan)
        ; // the gauges only
    else if (job->parts) {
        //  Parts not sent (the socket refused one) are dropped with the
        //  rest: the next session proposes their gangs again.
        size_t sent = 0;
        while (sent < job->n_parts &&
               bas_replica_send_packed (self->replica, &basalt__v1__commit__descriptor,
                                        &job->parts[sent]) == 0)
            sent++;
        bas_commit_proposer_sent (self->commit, sid, sent, job->placements + job->evictions > 0,
                                  bas_replica_epoch (self->replica), bas_mono_ms ());
        bas_info ("session",
                  "id=%s why=%s ms=%.0f jobs=%d ready=%d placed=%zu statuses=%zu pending=%d "
                  "parts=%zu",
                  sid, job->why, ms, job->params.jobs_total, job->params.jobs_ready,
                  job->placements, job->statuses, job->params.pods_pending, job->n_parts);
    } else
        bas_debug ("session", "id=%s why=%s ms=%.0f jobs=%d nothing=to-commit", sid, job->why, ms,
                   job->params.jobs_total);
    sess_job_destroy (&job);
    //  The deltas buffered meanwhile are applied from here on, in slices.
    bas_replica_release (self->replica);
    if (self->conf_check_due) {
        self->conf_check_due = false;
        s_load_conf (self, false);
    }
    return 0;
}

static int
s_on_gauges (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    s_update_gauges (arg);
    return 0;
}

static int
s_on_period (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    sess_t *self = arg;
    //  The spacing holds for the period too: where a session takes longer
    //  than the period, back-to-back sessions would keep a core planning
    //  while the binds of the last one wait for CPU.
    if (bas_mono_ms () < s_spaced_until (self)) {
        s_trigger (self);
        return 0;
    }
    s_session (self, "period");
    return 0;
}

//  Load the configuration file if it changed. At start a bad file is fatal
//  (returns -1); later the previous configuration stays in force.
static int
s_load_conf (sess_t *self, bool at_start)
{
    if (!self->config.scheduler_conf) {
        if (!self->conf)
            self->conf = sess_conf_default ();
        return 0;
    }
    if (self->job) {
        self->conf_check_due = true; // the session out uses it: when it is back
        return 0;
    }
    sess_conf_t *conf = NULL;
    int rc = sess_conf_reload (self->config.scheduler_conf, &self->conf_mtime, at_start, &conf);
    if (rc < 0) {
        bas_warn ("conf_kept", "file=%s kept=%s", self->config.scheduler_conf,
                  self->conf ? "previous" : "none");
        return at_start ? -1 : 0;
    }
    if (rc == 0)
        return 0;
    sess_conf_destroy (&self->conf);
    self->conf = conf;
    bas_info ("conf_loaded", "file=%s", self->config.scheduler_conf);
    return 0;
}

static int
s_on_conf_timer (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    s_load_conf (arg, false);
    return 0;
}

static bool
s_ready (void *arg, const char **reason)
{
    sess_t *self = arg;
    if (!bas_replica_has_snapshot (self->replica)) {
        *reason = "no snapshot from cache-svc yet";
        return false;
    }
    if (!bas_replica_ready (self->replica)) {
        *reason = "cache-svc is not yet synced with the API server";
        return false;
    }
    return true;
}

//  0 when a flag's value is from 0 to max, else -1 with the error logged.
static int
s_flag_range (const char *flag, int value, int max)
{
    if (value >= 0 && value <= max)
        return 0;
    bas_error ("bad_flag", "flag=%s value=%d msg=\"must be from 0 to %d\"", flag, value, max);
    return -1;
}

int
main (int argc, char **argv)
{
    sess_t self = {0};
    self.trigger_timer = -1;
    self.conditions = zhashx_new ();
    zhashx_set_destructor (self.conditions, (zhashx_destructor_fn *)zstr_free);
    self.group_events = zhashx_new ();
    zhashx_set_destructor (self.group_events, (zhashx_destructor_fn *)zstr_free);
    self.config.common.http = SESS_HTTP;
    self.config.snapshot_endpoint = SESS_SNAPSHOT_ENDPOINT;
    self.config.delta_endpoint = SESS_DELTA_ENDPOINT;
    self.config.schedule_period_ms = SESS_PERIOD_MS;
    self.config.step_quiet_ms = SESS_STEP_QUIET_MS;
    self.config.coalesce_ms = SESS_TRIGGER_MS;
    self.config.spacing_pct = SESS_TRIGGER_SPACING_PCT;
    int exit_code = 0;
    self.svc = bas_svc_new ("session-svc", "Basalt session: runs scheduling sessions.", s_flags,
                            &self.config, &self.config.common, argc, argv, &exit_code);
    if (!self.svc)
        return exit_code;
    self.metrics = bas_svc_metrics (self.svc);
    sess_metrics_describe (self.metrics);
    if (self.config.schedule_period_ms < 10) {
        bas_error ("bad_flag", "flag=--schedule-period-ms value=%d msg=\"must be at least 10\"",
                   self.config.schedule_period_ms);
        bas_svc_destroy (&self.svc);
        return 2;
    }
    if (s_flag_range ("--session-coalesce-ms", self.config.coalesce_ms, 60000) != 0 ||
        s_flag_range ("--session-spacing-pct", self.config.spacing_pct, 10000) != 0) {
        bas_svc_destroy (&self.svc);
        return 2;
    }
    if (s_load_conf (&self, true) != 0) {
        bas_svc_destroy (&self.svc);
        return 1;
    }
    self.commit = bas_commit_proposer_new (SESS_COMMIT_TIMEOUT_MS);
    char err[512];
    bas_sock_opts_t opts = bas_sock_opts_default ();
    opts.curve_cert = self.config.common.curve_cert;
    opts.curve_server = self.config.curve_server;
    self.worker = sess_worker_new ();
    if (!self.worker) {
        bas_error ("worker_failed", "msg=\"cannot start the session worker\"");
        exit_code = 1;
        goto done;
    }
    bas_svc_reader (self.svc, zactor_sock (self.worker), s_on_worker, &self, "session-done");
    bas_replica_fns_t fns = {s_on_reset, s_on_upsert, NULL, s_on_change};
    self.replica =
        bas_replica_new (self.svc, self.config.snapshot_endpoint, self.config.delta_endpoint, &opts,
                         &fns, s_handlers, &self, err, sizeof err);
    if (!self.replica) {
        bas_error ("socket_failed", "msg=\"%s\"", err);
        exit_code = 1;
        goto done;
    }
    bas_svc_timer (self.svc, (size_t)self.config.schedule_period_ms, 0, s_on_period, &self,
                   "session");
    bas_svc_timer (self.svc, SESS_CONF_CHECK_MS, 0, s_on_conf_timer, &self, "conf");
    bas_svc_timer (self.svc, SESS_GAUGES_MS, 0, s_on_gauges, &self, "gauges");
    bas_svc_set_ready (self.svc, s_ready, &self);
    bas_info ("listening", "snapshot=%s delta=%s period_ms=%d", self.config.snapshot_endpoint,
              self.config.delta_endpoint, self.config.schedule_period_ms);
    exit_code = bas_svc_run (self.svc);
done:
    //  The worker first: it may hold the replica's store.
    if (self.worker) {
        bas_svc_reader_end (self.svc, zactor_sock (self.worker));
        zactor_destroy (&self.worker);
    }
    if (self.job) {
        //  The worker handed it back before it stopped (zactor_destroy
        //  waits for that), but the DONE message was never read.
        sess_job_reclaim (self.job);
        sess_job_destroy (&self.job);
    }
    bas_replica_destroy (&self.replica);
    bas_commit_proposer_destroy (&self.commit);
    sess_conf_destroy (&self.conf);
    zhashx_destroy (&self.conditions);
    zhashx_destroy (&self.group_events);
    bas_svc_exit (&self.svc, exit_code);
}
