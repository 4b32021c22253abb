/*  session-svc: runs scheduling sessions (DESIGN.md).

    Keeps a replica of cache-svc's model by the Clone pattern (bas_replica),
    runs a session every period (default 1 s) and soon after new pending
    work arrives, and sends each session's proposals to the cache as one
    Commit. It never runs two sessions on the same view: after a commit it
    waits for the answer, and for its replica to reach the seq the cache
    published the commit's effects at, before planning again.

    A session runs in a zactor (s_worker) so that the reactor keeps
    answering (deltas, heartbeats, HTTP) while it plans: the replica lends
    it the store for the session and buffers the deltas meanwhile
    (bas_replica_hold), and the configuration in force is not replaced
    until the session is back. The actor owns nothing else and talks only
    through its pipe: a pointer to the session's job, and back when done.

    The scheduler configuration is Volcano's volcano-scheduler.conf; the
    file is checked every second and reloaded when it changes; a bad file
    is rejected with its line and reason and the previous one stays.

    Metrics: Volcano's scheduler series under Volcano's own names
    (volcano_e2e_scheduling_latency_milliseconds, action and plugin
    latency, schedule attempts, unscheduled tasks per job, the queue
    gauges) so that dashboards built for Volcano work unchanged; the
    queue gauges and PodGroup phase counts are recomputed from the replica
    every SESS_GAUGES_MS (bas_usage), outside the scheduling core, by the
    worker into a registry of its own whose series the reactor takes over.
*/
#include "bas_commit.h"
#include "bas_replica.h"
#include "bas_util.h"
#include "bas_sock.h"
#include "bas_svc.h"
#include "bas_usage.h"
#include "sess_defaults.h"
#include "sess_sched.h"

#include <math.h>
#include <string.h>
#include <sys/stat.h>

//  The job, and the store and configuration it lends, change hands through
//  the actor's pipe: libzmq's queue orders the two threads, but Debian's
//  libzmq is not built for ThreadSanitizer, so under TSan the hand-over
//  says so itself (release by the sender, acquire by the receiver).
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define S_HANDOFF_RELEASE(p) __tsan_release (p)
#define S_HANDOFF_ACQUIRE(p) __tsan_acquire (p)
#else
#define S_HANDOFF_RELEASE(p) ((void)(p))
#define S_HANDOFF_ACQUIRE(p) ((void)(p))
#endif

typedef struct {
    bas_svc_flags_t common;
    const char *snapshot_endpoint;
    const char *delta_endpoint;
    const char *scheduler_conf;
    int schedule_period_ms;
    int max_sessions;
    int step_quiet_ms;
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
    {"curve-server", BAS_FLAG_STRING, offsetof (sess_config_t, curve_server), "FILE",
     "cache-svc's public CURVE certificate"},
    {NULL},
};

//  One session, from the reactor to the worker and back.
typedef struct {
    bas_store_t *store;      // lent by the replica
    const sess_conf_t *conf; // lent: not replaced while the job is out
    sess_params_t params;
    char sid[64];
    const char *why; // static
    int64_t start_ms;
    zhashx_t *conditions;   // lent: pod conditions proposed before (s_filter_conditions)
    zhashx_t *group_events; // lent: PodGroup Events proposed before (s_filter_group_events)
    uint64_t base_seq;      // the store's seq
    //  The worker's answer: the Commit packed in parts (bas_commit_pack),
    //  NULL when there is nothing to propose, and its size.
    zframe_t **parts;
    size_t n_parts;
    size_t placements, statuses, pod_conditions, evictions;
    bool plan;             // a session (else only the usage below)
    bool want_usage;       // compute the usage for the gauges too
    int64_t usage_us;      // then: how long the walk took
    bas_metrics_t *gauges; // then: the gauge families, recomputed
} s_job_t;

typedef struct {
    sess_config_t config;
    bas_svc_t *svc;
    zactor_t *worker;      // runs the sessions (s_worker)
    s_job_t *job;          // the session out with the worker, or NULL
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

// ------------------------------------------------------------ metrics

//  Volcano's bucket layouts (volcano-semantics.md §7): n buckets from
//  `start` to `end`, computed as client_golang's ExponentialBucketsRange
//  does (start * factor^i), so that the le labels are the very same.
static void
s_describe_histogram (bas_metrics_t *m, const char *name, const char *help, double start,
                      double end, size_t n)
{
    double buckets[32];
    double factor = pow (end / start, 1.0 / (double)(n - 1));
    for (size_t i = 0; i < n && i < 32; i++)
        buckets[i] = start * pow (factor, (double)i);
    bas_metrics_describe (m, name, BAS_METRIC_HISTOGRAM, help, buckets, n);
}

static void
s_describe (bas_metrics_t *m)
{
    s_describe_histogram (m, "volcano_e2e_scheduling_latency_milliseconds",
                          "E2e scheduling latency in milliseconds (scheduling algorithm + binding)",
                          1, 5000, 20);
    s_describe_histogram (m, "volcano_action_scheduling_latency_milliseconds",
                          "Action scheduling latency in milliseconds", 1, 2000, 20);
    s_describe_histogram (m, "volcano_plugin_scheduling_latency_milliseconds",
                          "Plugin scheduling latency in milliseconds", 0.1, 100, 15);
    bas_metrics_describe (m, "volcano_schedule_attempts_total", BAS_METRIC_COUNTER,
                          "Number of attempts to schedule pods, by the result: 'unschedulable' "
                          "means a pod could not be scheduled in a session",
                          NULL, 0);
    bas_metrics_describe (m, "volcano_unschedule_task_count", BAS_METRIC_GAUGE,
                          "Number of tasks of a job (job_id namespace/name) not scheduled", NULL,
                          0);
    bas_metrics_describe (m, "volcano_unschedule_job_count", BAS_METRIC_GAUGE,
                          "Number of jobs that could not be scheduled", NULL, 0);
    bas_metrics_describe (m, "volcano_pod_preemption_victims", BAS_METRIC_GAUGE,
                          "Number of selected preemption victims in the last session", NULL, 0);
    bas_metrics_describe (m, "volcano_total_preemption_attempts", BAS_METRIC_COUNTER,
                          "Total preemption attempts in the cluster till now", NULL, 0);
    static const char *const kinds[] = {"allocated", "request", "deserved", "capacity", "inqueue"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        char name[96], help[160];
        snprintf (name, sizeof name, "volcano_queue_%s_milli_cpu", kinds[i]);
        snprintf (help, sizeof help, "%s CPU of the queue, in milli-cores", kinds[i]);
        bas_metrics_describe (m, name, BAS_METRIC_GAUGE, help, NULL, 0);
        snprintf (name, sizeof name, "volcano_queue_%s_memory_bytes", kinds[i]);
        snprintf (help, sizeof help, "%s memory of the queue, in bytes", kinds[i]);
        bas_metrics_describe (m, name, BAS_METRIC_GAUGE, help, NULL, 0);
        snprintf (name, sizeof name, "volcano_queue_%s_scalar_resources", kinds[i]);
        snprintf (help, sizeof help, "%s scalar resources of the queue, in milli-units", kinds[i]);
        bas_metrics_describe (m, name, BAS_METRIC_GAUGE, help, NULL, 0);
    }
    bas_metrics_describe (m, "volcano_queue_weight", BAS_METRIC_GAUGE, "Weight of the queue", NULL,
                          0);
    bas_metrics_describe (m, "basalt_podgroups", BAS_METRIC_GAUGE,
                          "PodGroups by queue and phase, as the session's replica has them", NULL,
                          0);
    bas_metrics_describe (m, "basalt_sessions_total", BAS_METRIC_COUNTER,
                          "Scheduling sessions run, by outcome (commit: proposals sent)", NULL, 0);
    bas_metrics_describe (
        m, "basalt_session_pods", BAS_METRIC_GAUGE,
        "Pods of the last session by outcome (placed, pending, pipelined, evicted)", NULL, 0);
    bas_metrics_describe (m, "basalt_session_pods_held", BAS_METRIC_GAUGE,
                          "Pods the last session held back, never placed, by the field that "
                          "holds them (scheduling gates, or one Basalt does not implement)",
                          NULL, 0);
    bas_metrics_describe (m, "basalt_commit_items_total", BAS_METRIC_COUNTER,
                          "Proposals answered by the cache, by result", NULL, 0);
    bas_metrics_describe (m, "basalt_replica_seq", BAS_METRIC_GAUGE,
                          "Sequence number of the last delta applied to the replica", NULL, 0);
}

//  After each session: Volcano's session series and our own.
static void
s_session_metrics (sess_t *self, const sess_params_t *params, bool proposed, double ms)
{
    bas_metrics_t *m = self->metrics;
    bas_metrics_observe (m, "volcano_e2e_scheduling_latency_milliseconds", NULL, ms);
    for (int i = 0; i < params->n_action_times && i < SESS_MAX_ACTION_TIMES; i++) {
        char labels[96];
        snprintf (labels, sizeof labels, "action=\"%s\"", params->action_times[i].name);
        bas_metrics_observe (m, "volcano_action_scheduling_latency_milliseconds", labels,
                             params->action_times[i].ms);
    }
    for (int i = 0; i < params->n_plugin_times && i < SESS_MAX_PLUGIN_TIMES; i++) {
        char labels[128];
        snprintf (labels, sizeof labels, "plugin=\"%s\",OnSession=\"%s\"",
                  params->plugin_times[i].plugin, params->plugin_times[i].phase);
        bas_metrics_observe (m, "volcano_plugin_scheduling_latency_milliseconds", labels,
                             params->plugin_times[i].ms);
    }
    bas_metrics_add (m, "volcano_schedule_attempts_total", "result=\"scheduled\"",
                     params->pods_placed);
    bas_metrics_add (m, "volcano_schedule_attempts_total", "result=\"unschedulable\"",
                     params->pods_pending);
    bas_metrics_set (m, "volcano_pod_preemption_victims", NULL, params->pods_evicted);
    if (params->pods_evicted > 0)
        bas_metrics_add (m, "volcano_total_preemption_attempts", NULL, 1);
    bas_metrics_set (m, "basalt_session_pods", "outcome=\"placed\"", params->pods_placed);
    bas_metrics_set (m, "basalt_session_pods", "outcome=\"pending\"", params->pods_pending);
    bas_metrics_set (m, "basalt_session_pods", "outcome=\"pipelined\"", params->pods_pipelined);
    bas_metrics_set (m, "basalt_session_pods", "outcome=\"evicted\"", params->pods_evicted);
    //  Pods held back at the last session, by the field that holds them:
    //  scheduling gates, or something Basalt does not implement.
    for (int k = 0; k < SESS_HELD_NKINDS; k++) {
        char labels[64];
        snprintf (labels, sizeof labels, "field=\"%s\"", sess_held_names[k]);
        bas_metrics_set (m, "basalt_session_pods_held", labels, params->pods_held[k]);
    }
    bas_metrics_add (m, "basalt_sessions_total",
                     proposed ? "outcome=\"commit\"" : "outcome=\"nothing\"", 1);
}

//  One queue's resources as Volcano's three gauges of a kind.
static void
s_queue_res (bas_metrics_t *m, const char *kind, const char *qlabel, const bas_res_t *r)
{
    char name[96], labels[256];
    snprintf (name, sizeof name, "volcano_queue_%s_milli_cpu", kind);
    snprintf (labels, sizeof labels, "queue_name=\"%s\"", qlabel);
    bas_metrics_set (m, name, labels, (double)r->milli_cpu);
    snprintf (name, sizeof name, "volcano_queue_%s_memory_bytes", kind);
    bas_metrics_set (m, name, labels, (double)r->memory);
    snprintf (name, sizeof name, "volcano_queue_%s_scalar_resources", kind);
    for (int i = 0; i < r->nscalars; i++) {
        char esc[96];
        snprintf (labels, sizeof labels, "queue_name=\"%s\",resource=\"%s\"", qlabel,
                  bas_metrics_escape (esc, sizeof esc, r->scalars[i].name));
        //  Volcano counts scalar resources in milli-units (a GPU is 1000).
        bas_metrics_set (m, name, labels, (double)r->scalars[i].value * 1000.0);
    }
}

//  Queue gauges, unscheduled tasks per job and PodGroup phases, from the
//  replica. Series of queues and jobs that left are dropped, as Volcano
//  deletes them.
//  The gauge families recomputed from the replica.
static const char *const s_gauge_families[] = {
    "volcano_queue_allocated_milli_cpu",
    "volcano_queue_allocated_memory_bytes",
    "volcano_queue_allocated_scalar_resources",
    "volcano_queue_request_milli_cpu",
    "volcano_queue_request_memory_bytes",
    "volcano_queue_request_scalar_resources",
    "volcano_queue_deserved_milli_cpu",
    "volcano_queue_deserved_memory_bytes",
    "volcano_queue_deserved_scalar_resources",
    "volcano_queue_capacity_milli_cpu",
    "volcano_queue_capacity_memory_bytes",
    "volcano_queue_capacity_scalar_resources",
    "volcano_queue_inqueue_milli_cpu",
    "volcano_queue_inqueue_memory_bytes",
    "volcano_queue_inqueue_scalar_resources",
    "volcano_queue_weight",
    "basalt_podgroups",
    "volcano_unschedule_task_count",
    "volcano_unschedule_job_count",
};
#define S_GAUGE_FAMILIES (sizeof s_gauge_families / sizeof s_gauge_families[0])

//  Fill `m`, a registry of the gauge families only, from the usage: done
//  by the worker, which hands the series over (bas_metrics_take_series).
static void
s_apply_gauges (bas_metrics_t *m, bas_usage_t *usage)
{
    for (size_t i = 0; i < bas_usage_queue_count (usage); i++) {
        const bas_usage_queue_t *q = bas_usage_queue (usage, i);
        char qlabel[160], labels[256];
        bas_metrics_escape (qlabel, sizeof qlabel, q->name);
        s_queue_res (m, "allocated", qlabel, &q->allocated);
        s_queue_res (m, "request", qlabel, &q->request);
        s_queue_res (m, "inqueue", qlabel, &q->inqueue);
        if (q->has_deserved)
            s_queue_res (m, "deserved", qlabel, &q->deserved);
        if (q->has_capability)
            s_queue_res (m, "capacity", qlabel, &q->capability);
        if (q->queue) {
            snprintf (labels, sizeof labels, "queue_name=\"%s\"", qlabel);
            bas_metrics_set (m, "volcano_queue_weight", labels,
                             q->queue->has_weight ? q->queue->weight : 1);
        }
        for (size_t p = 0; p < BAS_USAGE_PHASES; p++) {
            snprintf (labels, sizeof labels, "queue=\"%s\",phase=\"%s\"", qlabel,
                      bas_usage_phase_names[p]);
            bas_metrics_set (m, "basalt_podgroups", labels, (double)q->phases[p]);
        }
    }
    size_t unscheduled_jobs = 0;
    for (size_t i = 0; i < bas_usage_job_count (usage); i++) {
        const bas_usage_job_t *j = bas_usage_job (usage, i);
        if (j->pending == 0)
            continue;
        unscheduled_jobs++;
        char id[256], esc[300], labels[320];
        snprintf (id, sizeof id, "%s/%s", j->group->namespace_ ? j->group->namespace_ : "",
                  j->group->name ? j->group->name : "");
        snprintf (labels, sizeof labels, "job_id=\"%s\"", bas_metrics_escape (esc, sizeof esc, id));
        bas_metrics_set (m, "volcano_unschedule_task_count", labels, (double)j->pending);
    }
    bas_metrics_set (m, "volcano_unschedule_job_count", NULL, (double)unscheduled_jobs);
}

static void s_job_send (sess_t *self, s_job_t *job);

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
    s_job_t *job = bas_alloc (sizeof *job);
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
//  SESS_TRIGGER_SPACING times what it took: on a big cluster, where a
//  session takes most of a second, changes arriving back to back (bind
//  after bind, status after status) would otherwise keep a core planning
//  sessions that find nothing new, while the cache and the binders that
//  carry out the last one wait for CPU. The period runs them regardless.
static int64_t
s_spaced_until (const sess_t *self)
{
    return self->last_end_ms + SESS_TRIGGER_SPACING * self->last_run_ms;
}

static void
s_trigger (sess_t *self)
{
    if (self->trigger_timer != -1)
        return;
    int64_t delay = SESS_TRIGGER_MS;
    int64_t next = s_spaced_until (self);
    if (next - bas_mono_ms () > delay)
        delay = next - bas_mono_ms ();
    self->trigger_timer =
        bas_svc_timer (self->svc, (size_t)delay, 1, s_on_trigger, self, "session");
}

//  New work for a session: a pod waiting for a node, or a PodGroup still
//  waiting to be enqueued (a new one, or one whose spec changed while
//  Pending). A PodGroup further on changes mostly by the status sessions
//  write themselves (Inqueue, Running, conditions): coming back, those
//  would trigger one session after another while binds return; the
//  period sees the rest.
static bool
s_new_work (const Basalt__V1__Object *obj)
{
    if (obj->kind_case == BASALT__V1__OBJECT__KIND_POD_GROUP) {
        const Basalt__V1__PodGroupStatus *st = obj->pod_group->status;
        return !st || !st->phase || !*st->phase || strcmp (st->phase, "Pending") == 0;
    }
    if (obj->kind_case != BASALT__V1__OBJECT__KIND_POD)
        return false;
    const Basalt__V1__Pod *pod = obj->pod;
    return !(pod->node_name && *pod->node_name) && !(pod->assumed_node && *pod->assumed_node) &&
           !pod->deleting;
}

static void
s_on_upsert (void *arg, const Basalt__V1__Object *obj)
{
    sess_t *self = arg;
    if (s_new_work (obj))
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

//  Drop pod conditions this process already proposed in the same words:
//  the API has them, and re-sending them every period would be a write per
//  pending pod per session. Forget pods that are gone or placed.
//  The commit parts a job still holds (sending takes each it sends).
static void
s_job_parts_free (s_job_t *job)
{
    for (size_t i = 0; i < job->n_parts; i++)
        zframe_destroy (&job->parts[i]);
    free (job->parts);
    job->parts = NULL;
    job->n_parts = 0;
}

static void
s_filter_conditions (zhashx_t *conditions, bas_store_t *store, Basalt__V1__Commit *commit)
{
    zlistx_t *gone = zlistx_new ();
    zlistx_set_destructor (gone, (zlistx_destructor_fn *)zstr_free);
    for (void *v = zhashx_first (conditions); v; v = zhashx_next (conditions)) {
        const char *uid = zhashx_cursor (conditions);
        const Basalt__V1__Pod *pod = bas_store_pod (store, uid);
        if (!pod || (pod->node_name && *pod->node_name) ||
            (pod->assumed_node && *pod->assumed_node))
            zlistx_add_end (gone, strdup (uid));
    }
    for (char *uid = zlistx_first (gone); uid; uid = zlistx_next (gone))
        zhashx_delete (conditions, uid);
    zlistx_destroy (&gone);
    size_t kept = 0;
    for (size_t i = 0; i < commit->n_pod_conditions; i++) {
        Basalt__V1__PodCondition *c = commit->pod_conditions[i];
        char key[1024];
        snprintf (key, sizeof key, "%s|%s|%s|%s", c->type ? c->type : "",
                  c->status ? c->status : "", c->reason ? c->reason : "",
                  c->message ? c->message : "");
        const char *last = c->pod_uid ? zhashx_lookup (conditions, c->pod_uid) : NULL;
        if (!c->pod_uid || (last && strcmp (last, key) == 0)) {
            basalt__v1__pod_condition__free_unpacked (c, NULL);
            continue;
        }
        zhashx_update (conditions, c->pod_uid, strdup (key));
        commit->pod_conditions[kept++] = c;
    }
    commit->n_pod_conditions = kept;
}

//  Drop PodGroup Events this process already had sent in the same words;
//  forget groups that are gone or no longer Pending (refused again later,
//  they are said again).
static void
s_filter_group_events (zhashx_t *said, bas_store_t *store, Basalt__V1__Commit *commit)
{
    zlistx_t *gone = zlistx_new ();
    zlistx_set_destructor (gone, (zlistx_destructor_fn *)zstr_free);
    //  Keyed by "uid|type": a waiting group may have one Event of each type
    //  (Normal: enqueue refused; Warning: its gang unschedulable). Forgotten
    //  once the group is gone or no longer waits.
    for (void *v = zhashx_first (said); v; v = zhashx_next (said)) {
        const char *key = zhashx_cursor (said);
        char uid[256];
        snprintf (uid, sizeof uid, "%.*s", (int)strcspn (key, "|"), key);
        const Basalt__V1__PodGroup *pg = bas_store_pod_group (store, uid);
        const char *phase = pg && pg->status ? pg->status->phase : NULL;
        if (!pg ||
            (phase && *phase && strcmp (phase, "Pending") != 0 && strcmp (phase, "Inqueue") != 0))
            zlistx_add_end (gone, strdup (key));
    }
    for (char *uid = zlistx_first (gone); uid; uid = zlistx_next (gone))
        zhashx_delete (said, uid);
    zlistx_destroy (&gone);
    size_t kept = 0;
    for (size_t i = 0; i < commit->n_group_events; i++) {
        Basalt__V1__PodGroupEvent *e = commit->group_events[i];
        char key[1024];
        snprintf (key, sizeof key, "%s|%s|%s", e->type ? e->type : "", e->reason ? e->reason : "",
                  e->message ? e->message : "");
        char said_key[300];
        snprintf (said_key, sizeof said_key, "%s|%s", e->uid ? e->uid : "", e->type ? e->type : "");
        const char *last = e->uid ? zhashx_lookup (said, said_key) : NULL;
        if (!e->uid || (last && strcmp (last, key) == 0)) {
            basalt__v1__pod_group_event__free_unpacked (e, NULL);
            continue;
        }
        zhashx_update (said, said_key, strdup (key));
        commit->group_events[kept++] = e;
    }
    commit->n_group_events = kept;
}

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
    s_job_t *job = bas_alloc (sizeof *job);
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
    job->conditions = self->conditions;
    job->group_events = self->group_events;
    job->base_seq = bas_replica_seq (self->replica);
    job->plan = true;
    s_job_send (self, job);
}

static void
s_job_send (sess_t *self, s_job_t *job)
{
    job->want_usage = self->gauges_due;
    self->gauges_due = false;
    self->job = job;
    S_HANDOFF_RELEASE (job);
    zsock_send (zactor_sock (self->worker), "sp", "RUN", job);
}

//  One session in the worker: plan, drop the conditions already written,
//  pack what is left, so that the reactor only has to send it.
static void
s_work (s_job_t *job)
{
    if (job->want_usage) {
        int64_t start = bas_mono_us ();
        bas_usage_t *usage = bas_usage_new (job->store);
        job->gauges = bas_metrics_new ();
        for (size_t i = 0; i < S_GAUGE_FAMILIES; i++)
            bas_metrics_describe (job->gauges, s_gauge_families[i], BAS_METRIC_GAUGE, "", NULL, 0);
        s_apply_gauges (job->gauges, usage);
        bas_usage_destroy (&usage);
        job->usage_us = bas_mono_us () - start;
    }
    if (!job->plan)
        return;
    Basalt__V1__Commit *commit = sess_run (job->store, job->conf, &job->params);
    if (!commit)
        return;
    s_filter_conditions (job->conditions, job->store, commit);
    s_filter_group_events (job->group_events, job->store, commit);
    job->placements = commit->n_placements;
    job->statuses = commit->n_statuses;
    job->pod_conditions = commit->n_pod_conditions;
    job->evictions = commit->n_evictions;
    if (job->placements || job->statuses || job->pod_conditions || job->evictions ||
        commit->n_group_events) {
        free (commit->session_id);
        commit->session_id = strdup (job->sid);
        commit->has_base_seq = 1;
        commit->base_seq = job->base_seq;
        commit->has_session_ms = 1;
        commit->session_ms = (uint32_t)(bas_mono_ms () - job->start_ms);
        job->parts = bas_commit_pack (commit, SESS_COMMIT_PART_PLACEMENTS, &job->n_parts);
    }
    protobuf_c_message_free_unpacked (&commit->base, NULL);
}

//  The worker: runs each session it is handed and hands it back.
static void
s_worker (zsock_t *pipe, void *args)
{
    (void)args;
    zsock_signal (pipe, 0);
    while (true) {
        zmsg_t *msg = zmsg_recv (pipe);
        if (!msg)
            break;
        char *cmd = zmsg_popstr (msg);
        zframe_t *ptr = zmsg_pop (msg);
        bool run = cmd && streq (cmd, "RUN") && ptr && zframe_size (ptr) == sizeof (void *);
        bool term = !cmd || streq (cmd, "$TERM");
        if (run) {
            s_job_t *job;
            memcpy (&job, zframe_data (ptr), sizeof job);
            S_HANDOFF_ACQUIRE (job);
            s_work (job);
            S_HANDOFF_RELEASE (job);
            zsock_send (pipe, "sp", "DONE", job);
        }
        zframe_destroy (&ptr);
        zstr_free (&cmd);
        zmsg_destroy (&msg);
        if (term)
            break;
    }
}

//  A session is back from the worker: take the store back, then send its
//  proposals to the cache as one Commit.
static int
s_on_worker (zloop_t *loop, zsock_t *sock, void *arg)
{
    (void)loop;
    sess_t *self = arg;
    char *cmd = NULL;
    void *ptr = NULL;
    if (zsock_recv (sock, "sp", &cmd, &ptr) != 0)
        return 0;
    s_job_t *job = ptr;
    zstr_free (&cmd);
    if (!job || job != self->job)
        return 0;
    S_HANDOFF_ACQUIRE (job);
    self->job = NULL;
    if (job->gauges) {
        //  The walk costs ~0.1 s at 50,000 pods: it takes at most
        //  1/SESS_GAUGES_SHARE of the worker's time.
        self->gauges_ms = bas_mono_ms ();
        self->gauges_gap_ms = SESS_GAUGES_SHARE * job->usage_us / 1000;
        if (self->gauges_gap_ms < SESS_GAUGES_MS)
            self->gauges_gap_ms = SESS_GAUGES_MS;
        for (size_t i = 0; i < S_GAUGE_FAMILIES; i++)
            bas_metrics_take_series (self->metrics, job->gauges, s_gauge_families[i]);
        bas_metrics_destroy (&job->gauges);
    }
    double ms = (double)(bas_mono_ms () - job->start_ms);
    const char *sid = job->sid;
    if (job->plan) {
        s_session_metrics (self, &job->params, job->parts != NULL, ms);
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
    s_job_parts_free (job);
    free (job);
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
    struct stat st;
    if (stat (self->config.scheduler_conf, &st) != 0) {
        bas_error ("conf_unreadable", "file=%s", self->config.scheduler_conf);
        return at_start ? -1 : 0;
    }
    if (!at_start && st.st_mtim.tv_sec == self->conf_mtime.tv_sec &&
        st.st_mtim.tv_nsec == self->conf_mtime.tv_nsec)
        return 0;
    self->conf_mtime = st.st_mtim;
    FILE *f = fopen (self->config.scheduler_conf, "rb");
    if (!f)
        return at_start ? -1 : 0;
    char *text = bas_malloc ((size_t)st.st_size + 1);
    size_t len = fread (text, 1, (size_t)st.st_size, f);
    fclose (f);
    text[len] = 0;
    char err[512];
    sess_conf_t *conf = sess_conf_parse (text, len, err, sizeof err);
    free (text);
    if (!conf) {
        bas_error ("conf_rejected", "file=%s msg=\"%s\" kept=%s", self->config.scheduler_conf, err,
                   self->conf ? "previous" : "none");
        return at_start ? -1 : 0;
    }
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
    int exit_code = 0;
    self.svc = bas_svc_new ("session-svc", "Basalt session: runs scheduling sessions.", s_flags,
                            &self.config, &self.config.common, argc, argv, &exit_code);
    if (!self.svc)
        return exit_code;
    self.metrics = bas_svc_metrics (self.svc);
    s_describe (self.metrics);
    if (self.config.schedule_period_ms < 10) {
        bas_error ("bad_flag", "flag=--schedule-period-ms value=%d msg=\"must be at least 10\"",
                   self.config.schedule_period_ms);
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
    self.worker = zactor_new (s_worker, NULL);
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
        S_HANDOFF_ACQUIRE (self.job);
        s_job_parts_free (self.job);
        bas_metrics_destroy (&self.job->gauges);
        free (self.job);
    }
    bas_replica_destroy (&self.replica);
    bas_commit_proposer_destroy (&self.commit);
    sess_conf_destroy (&self.conf);
    zhashx_destroy (&self.conditions);
    zhashx_destroy (&self.group_events);
    bas_svc_exit (&self.svc, exit_code);
}
