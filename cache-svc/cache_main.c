/*  cache-svc: owns the cluster model (DESIGN.md).

    Lists and watches nodes, pods, PodGroups, queues and priority classes
    from the Kubernetes API; serves snapshots and commit answers on a ROUTER
    (--snapshot-endpoint); publishes sequenced deltas and a heartbeat on a
    PUB (--delta-endpoint); hands bind and status work to binders on a
    second ROUTER (--work-endpoint) and applies their results.

    Design note: one reactor. Informer callbacks change the model; a 2 ms
    timer flushes the changes as one Delta (coalesced), so a relist of
    150,000 pods goes out as a few hundred messages, not 150,000.

    GET /debug/state dumps the model as JSON (cache_debug.h describes it).

    GET /ui is a status page that draws /debug/state every second: queues,
    jobs and why they wait, a node heat map, binders, the commits' latency.
    It is one static HTML file (ui/status.html, compiled in: cache_ui.h),
    served like /debug/state, to localhost only.
*/
#include "bas_clone.h"
#include "bas_commit.h"
#include "bas_k8s.h"
#include "bas_kube.h"
#include "bas_lease.h"
#include "bas_sock.h"
#include "bas_svc.h"
#include "bas_util.h"
#include "bas_work.h"
#include "cache_commit_log.h"
#include "cache_debug.h"
#include "cache_defaults.h"
#include "cache_metrics.h"
#include "cache_model.h"
#include "cache_ui.h"
#include "bas_workq.h"

#include <string.h>

typedef struct {
    bas_svc_flags_t common;
    const char *snapshot_endpoint;
    const char *delta_endpoint;
    const char *work_endpoint;
    bas_kube_flags_t kube;
    const char *scheduler_name;
    const char *ignored_devices;
    bool leader_elect;
    int64_t lease_duration_ms;
    int64_t renew_deadline_ms;
    int64_t retry_period_ms;
    const char *lease_name;
    const char *lease_namespace;
    const char *lease_identity;
} cache_config_t;

static const bas_flag_t s_flags[] = {
    BAS_SVC_FLAGS (cache_config_t),
    BAS_KUBE_FLAGS (cache_config_t),
    {"snapshot-endpoint", BAS_FLAG_STRING, offsetof (cache_config_t, snapshot_endpoint), "ENDPOINT",
     "ROUTER for snapshot requests and commits (bound)"},
    {"delta-endpoint", BAS_FLAG_STRING, offsetof (cache_config_t, delta_endpoint), "ENDPOINT",
     "PUB for the delta stream (bound)"},
    {"work-endpoint", BAS_FLAG_STRING, offsetof (cache_config_t, work_endpoint), "ENDPOINT",
     "ROUTER for binders (bound)"},
    {"scheduler-name", BAS_FLAG_STRING, offsetof (cache_config_t, scheduler_name), "NAMES",
     "comma-separated scheduler names whose pods are scheduled"},
    {"ignored-devices", BAS_FLAG_STRING, offsetof (cache_config_t, ignored_devices), "NAMES",
     "comma-separated resource names sessions ignore"},
    {"leader-elect", BAS_FLAG_BOOL, offsetof (cache_config_t, leader_elect), NULL,
     "hold a coordination.k8s.io Lease to lead; until then serve the model as a standby (no "
     "work, no commits)"},
    {"leader-elect-lease-duration", BAS_FLAG_DURATION, offsetof (cache_config_t, lease_duration_ms),
     "DURATION", "how long a standby waits on a lease that is not renewed before it takes it"},
    {"leader-elect-renew-deadline", BAS_FLAG_DURATION, offsetof (cache_config_t, renew_deadline_ms),
     "DURATION", "how long the leader keeps leading without a successful renewal"},
    {"leader-elect-retry-period", BAS_FLAG_DURATION, offsetof (cache_config_t, retry_period_ms),
     "DURATION", "time between attempts to take or renew the lease"},
    {"leader-elect-resource-name", BAS_FLAG_STRING, offsetof (cache_config_t, lease_name), "NAME",
     "name of the Lease"},
    {"leader-elect-resource-namespace", BAS_FLAG_STRING, offsetof (cache_config_t, lease_namespace),
     "NAMESPACE", "namespace of the Lease"},
    {"leader-elect-identity", BAS_FLAG_STRING, offsetof (cache_config_t, lease_identity), "ID",
     "holder identity written in the Lease (default: hostname_UUID)"},
    {NULL},
};

typedef struct _cache_t cache_t;

//  What an informer's callback needs: the cache and the kind it watches.
typedef struct {
    cache_t *cache;
    const bas_kind_t *kind;
    char path[128];
} s_informer_arg_t;

struct _cache_t {
    cache_config_t config;
    bas_svc_t *svc;
    bas_metrics_t *metrics;
    cache_model_t *model;
    bas_workq_dispatcher_t *work;
    int64_t last_beat_ms;           // when the heartbeat timer last ran (liveness)
    bas_commit_acceptor_t *commits; // the Commit conversation's acceptor end
    int commit_timer;               // the next slice's timer, or -1
    bas_clone_publisher_t *clone;   // the Clone conversation's publisher end
    int snapshot_timer;             // the next slice's timer, or -1
    cache_commit_log_t *commit_log; // the last minutes of commits (/debug/state)
    zhashx_t *shares;               // queue name -> bas_res_t: deserved, as the last
                                    // session that said it computed it (Commit.queue_shares)
    bas_kube_t *kube;
    zsock_t *router;  // snapshots and commits
    zsock_t *pub;     // deltas
    zsock_t *workers; // binders
    bas_stream_t router_stream;
    bas_stream_t work_stream;
    //  One per row of the kind table, in its order.
    bas_kube_informer_t *informers[BAS_KIND_LIMIT];
    s_informer_arg_t informer_args[BAS_KIND_LIMIT];
    bas_lease_t *lease;        // with --leader-elect
    bas_sock_opts_t work_opts; // the binder ROUTER's, bound when leading
    bool lease_lost;           // stop with CACHE_EXIT_LEASE_LOST
    bool stopping;
    int64_t fence_until_ms; // bas_mono_ms () before which the model is not synced
    int fence_timer;        // checks the sync again when the fence ends, or -1
};

//  The binder lease must run out before the cache gives a silent binder's
//  work to another: a heartbeat's period (BINDER_HEARTBEAT_MS) and a margin.
_Static_assert(CACHE_BINDER_TIMEOUT_MS >= BAS_WORK_TTL_MS + 2000,
               "a binder may be declared lost while its work's lease still runs");

// ------------------------------------------------------------ publishing

static void
s_flush (cache_t *self)
{
    uint64_t seq = 0;
    zframe_t *body = cache_model_flush (self->model, &seq);
    if (!body)
        return;
    zmsg_t *msg = bas_clone_publisher_delta (self->clone, &body, seq);
    if (msg)
        bas_svc_send_msg (self->svc, self->pub, "subscribers", &basalt__v1__delta__descriptor,
                          &msg);
    bas_metrics_set (self->metrics, "basalt_cache_seq", NULL, (double)seq);
}

//  True without --leader-elect; with it, only while the lease is held and
//  renewed in time (asked of the clock now: a process resumed after a
//  freeze is no leader, before it acts).
static bool
s_leading (cache_t *self)
{
    return !self->config.leader_elect || (self->lease && bas_lease_leading (self->lease));
}

static void s_count_result (cache_t *self, const char *kind, bool ok);

static void
s_dispatch_work (cache_t *self)
{
    zframe_t *identity;
    Basalt__V1__Work *work;
    int64_t now = bas_mono_ms ();
    if (!s_leading (self))
        return; // a standby has no work; a lost leader hands out none
    while (bas_workq_dispatcher_next (self->work, &identity, &work, now)) {
        //  A bind the API has already done (seen through the watch: the
        //  result of a lost binder, a re-issued item) or can no longer do
        //  (the pod is gone or on another node) is settled here, not sent.
        int moot = work->item_case == BASALT__V1__WORK__ITEM_BIND
                       ? cache_model_bind_moot (self->model, work->bind)
                       : 0;
        if (moot != 0) {
            Basalt__V1__Work *w = bas_workq_dispatcher_done (self->work, identity, work->work_id);
            if (w) {
                cache_model_bind_result (self->model, w->bind, moot > 0,
                                         "the pod is gone or bound to another node");
                s_count_result (self, bas_work_name (w), moot > 0);
                bas_metrics_add (self->metrics, "basalt_work_settled_total", NULL, 1);
                basalt__v1__work__free_unpacked (w, NULL);
            }
            continue;
        }
        if (bas_svc_send (self->svc, self->workers, &self->work_stream, identity, "binder",
                          &work->base) != 0) {
            bas_workq_dispatcher_unsend (self->work, work->work_id);
            break;
        }
    }
    bas_metrics_set (self->metrics, "basalt_binder_work_in_flight", NULL,
                     (double)bas_workq_dispatcher_in_flight (self->work));
    bas_metrics_set (self->metrics, "basalt_binder_work_queued", NULL,
                     (double)bas_workq_dispatcher_queued (self->work));
}

static void
s_on_work (void *arg, Basalt__V1__Work **work_p)
{
    cache_t *self = arg;
    bas_workq_dispatcher_add (self->work, work_p);
}

// ------------------------------------------------------------ informers

static void s_check_synced (cache_t *self);

static int
s_on_fence (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    cache_t *self = arg;
    self->fence_timer = -1;
    s_check_synced (self);
    return 0;
}

static void
s_check_synced (cache_t *self)
{
    bool all = true;
    for (size_t i = 0; i < bas_kind_count (); i++)
        all = all && self->informers[i] && bas_kube_informer_synced (self->informers[i]);
    int64_t fence = self->fence_until_ms - bas_mono_ms ();
    if (all && fence > 0) {
        //  Listed, but an earlier cache-svc's binders may still write what
        //  it handed out (CACHE_START_FENCE_MS): not synced before then.
        if (self->fence_timer == -1) {
            bas_info ("start_fence", "wait_ms=%lld", (long long)fence);
            self->fence_timer =
                zloop_timer (bas_svc_loop (self->svc), (size_t)fence + 1, 1, s_on_fence, self);
        }
        all = false;
    }
    if (all && !cache_model_synced (self->model))
        bas_info ("synced", "nodes=%zu pods=%zu podgroups=%zu queues=%zu",
                  bas_store_size (cache_model_store (self->model),
                                  BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE),
                  bas_store_size (cache_model_store (self->model),
                                  BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD),
                  bas_store_size (cache_model_store (self->model),
                                  BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP),
                  bas_store_size (cache_model_store (self->model),
                                  BASALT__V1__OBJECT_KIND__OBJECT_KIND_QUEUE));
    cache_model_set_synced (self->model, all);
}

static void
s_on_api_event (void *arg, bas_kube_event_t type, const cJSON *object)
{
    s_informer_arg_t *ia = arg;
    cache_t *self = ia->cache;
    if (type == BAS_KUBE_SYNCED) {
        s_check_synced (self);
        return;
    }
    if (cache_model_api_event (self->model, ia->kind->kind, (int)type, object) != 0)
        bas_metrics_add (self->metrics, "basalt_api_decode_errors_total", NULL, 1);
    if (cache_model_dirty_count (self->model) >= CACHE_DELTA_MAX_OBJECTS)
        s_flush (self);
}

// ------------------------------------------------------------ the session ROUTER

static void s_snapshot_arm (cache_t *self);

//  One slice of the snapshots being sent (bas_clone_publisher_next): parts
//  of CACHE_SNAPSHOT_PART objects, a reader after the other, for at most
//  CACHE_COMMIT_SLICE_US. Pending changes are published first, so that no
//  part is ahead of the delta stream the reader applies after the last.
static int
s_on_snapshot_timer (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    cache_t *self = arg;
    self->snapshot_timer = -1;
    s_flush (self);
    int64_t start = bas_mono_us ();
    const char *requester;
    zmsg_t *out;
    while (bas_mono_us () - start < CACHE_COMMIT_SLICE_US &&
           (out = bas_clone_publisher_next (self->clone, &self->router_stream, &requester))) {
        int rc = bas_svc_send_msg (self->svc, self->router, requester,
                                   &basalt__v1__snapshot__descriptor, &out);
        if (bas_clone_publisher_sent (self->clone, rc, bas_mono_us ()) < 0)
            bas_metrics_add (self->metrics, "basalt_snapshots_dropped_total", NULL, 1);
    }
    s_snapshot_arm (self);
    return 0;
}

static void
s_snapshot_arm (cache_t *self)
{
    if (self->snapshot_timer == -1 && bas_clone_publisher_serving (self->clone) > 0)
        self->snapshot_timer =
            bas_svc_timer (self->svc, 0, 1, s_on_snapshot_timer, self, "snapshot");
}

//  A reader's request: its snapshot starts now (the seq is exact after the
//  flush) and goes out in parts on the following turns.
static int
s_handle_snapshot_request (void *arg, bas_msg_t *msg)
{
    cache_t *self = arg;
    s_flush (self);
    bas_clone_publisher_request (self->clone, msg->identity,
                                 (const Basalt__V1__SnapshotRequest *)msg->body, bas_mono_us ());
    s_snapshot_arm (self);
    return 0;
}

static void s_commit_arm (cache_t *self);

//  A commit answered (bas_commit_acceptor_turn published its changes
//  first): the answer goes out, the counts and the commit log are kept.
static void
s_commit_finish (cache_t *self, const bas_commit_done_t *done)
{
    const Basalt__V1__Commit *commit = done->commit;
    bas_svc_send (self->svc, self->router, &self->router_stream, done->identity, "session",
                  &done->result->base);
    bas_metrics_add (self->metrics, "basalt_commit_placements_total", "result=\"accepted\"",
                     done->accepted);
    bas_metrics_add (self->metrics, "basalt_commit_rejections_total", NULL,
                     (double)(commit->n_placements - (size_t)done->accepted));
    bas_debug ("commit", "session=%s placements=%zu accepted=%d statuses=%zu results=%zu ms=%.1f",
               commit->session_id ? commit->session_id : "-", commit->n_placements, done->accepted,
               commit->n_statuses, done->result->n_results,
               (double)(done->answered_us - done->arrived_us) / 1000.0);
    cache_commit_rec_t rec = {
        .at_ms = done->arrived_ms,
        .wait_us = done->applied_us - done->arrived_us,
        .apply_us = done->answered_us - done->applied_us,
        .placements = (uint32_t)commit->n_placements,
        .accepted = done->accepted > 0 ? (uint32_t)done->accepted : 0,
        .statuses = (uint32_t)commit->n_statuses,
        .session_us = commit->has_session_ms ? (int64_t)commit->session_ms * 1000 : -1,
    };
    snprintf (rec.session, sizeof rec.session, "%s", commit->session_id ? commit->session_id : "");
    cache_commit_log_add (self->commit_log, &rec);
}

//  One slice of the oldest commit: whole gangs for at most CACHE_COMMIT_SLICE_US,
//  then the work it made goes to the binders at once (binds start while the
//  rest of the commit waits for the next turn) and the deltas are published.
static int
s_on_commit_timer (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    cache_t *self = arg;
    self->commit_timer = -1;
    bas_commit_done_t done;
    int rc = bas_commit_acceptor_turn (self->commits, &done);
    if (rc == 0)
        return 0;
    if (rc == 2)
        s_commit_finish (self, &done);
    s_dispatch_work (self);
    s_commit_arm (self);
    return 0;
}

static void
s_commit_arm (cache_t *self)
{
    if (self->commit_timer == -1 && bas_commit_acceptor_queued (self->commits) > 0)
        self->commit_timer = bas_svc_timer (self->svc, 0, 1, s_on_commit_timer, self, "commit");
}

// The model's side of the Commit conversation (bas_commit_apply_t).
static void *
s_apply_begin (void *arg, Basalt__V1__Commit *commit, Basalt__V1__CommitResult *result)
{
    cache_t *self = arg;
    cache_commit_t *cc = cache_model_commit_begin (self->model, commit, result);
    cache_model_commit_consume (cc, commit);
    return cc;
}

static bool
s_apply_step (void *arg, void *progress, size_t budget)
{
    cache_t *self = arg;
    return cache_model_commit_step (self->model, progress, budget, s_on_work, self);
}

static int
s_apply_end (void *arg, void **progress_p)
{
    (void)arg;
    cache_commit_t *cc = *progress_p;
    *progress_p = NULL;
    return cache_model_commit_end (&cc);
}

static uint64_t
s_apply_publish (void *arg)
{
    cache_t *self = arg;
    s_flush (self);
    return cache_model_seq (self->model);
}

static int64_t
s_apply_clock (void *arg)
{
    (void)arg;
    return bas_mono_us ();
}

static const bas_commit_apply_t s_commit_apply = {s_apply_begin, s_apply_step, s_apply_end,
                                                  s_apply_publish, s_apply_clock};

//  A commit is taken over (the message is kept until answered) and applied
//  in slices on the following turns, in the order commits arrived.
static void
s_share_free (void **item_p)
{
    free (*item_p);
    *item_p = NULL;
}

//  The queues' deserved shares a session computed: kept for /debug/state
//  (the spec's deserved, when a Queue sets one, is shown instead).
static void
s_take_shares (cache_t *self, const Basalt__V1__Commit *commit)
{
    for (size_t i = 0; i < commit->n_queue_shares; i++) {
        const Basalt__V1__QueueShare *sh = commit->queue_shares[i];
        bas_res_t *r = bas_alloc (sizeof *r);
        if (!sh->queue || bas_res_from_proto (r, sh->deserved, NULL, 0) != 0) {
            free (r);
            continue;
        }
        zhashx_update (self->shares, sh->queue, r);
    }
}

static int
s_handle_commit (void *arg, bas_msg_t *msg)
{
    cache_t *self = arg;
    const Basalt__V1__Commit *commit = (const Basalt__V1__Commit *)msg->body;
    if (!s_leading (self)) {
        //  Nothing is assumed: the answer accepts nothing (a standby's
        //  sessions plan nothing, so this is a session that has not yet
        //  heard; a leader past its deadline is stopping).
        Basalt__V1__CommitResult result;
        bas_commit_acceptor_refuse (commit, cache_model_seq (self->model), &result);
        bas_svc_send (self->svc, self->router, &self->router_stream, msg->identity, "session",
                      &result.base);
        bas_warn ("commit_refused", "session=%s placements=%zu reason=\"not the leader\"",
                  commit->session_id ? commit->session_id : "-", commit->n_placements);
        return 0;
    }
    s_take_shares (self, commit);
    bas_commit_acceptor_take (self->commits, msg, bas_mono_us (), (int64_t)zclock_time ());
    s_commit_arm (self);
    return 0;
}

static const bas_handler_t s_router_handlers[] = {
    {&basalt__v1__snapshot_request__descriptor, s_handle_snapshot_request},
    {&basalt__v1__commit__descriptor, s_handle_commit},
    {NULL, NULL},
};

// ------------------------------------------------------------ the binder ROUTER

//  A result or heartbeat from a binder that never said Ready (on this
//  connection): ask it to.
static void
s_unknown_binder (cache_t *self, bas_msg_t *msg)
{
    bas_svc_send_error (self->svc, self->workers, &self->work_stream, msg->identity, "binder",
                        BASALT__V1__ERROR_CODE__ERROR_CODE_UNKNOWN_PEER,
                        "unknown binder: send Ready", msg->desc->name);
}

static int
s_handle_ready (void *arg, bas_msg_t *msg)
{
    cache_t *self = arg;
    const Basalt__V1__Ready *ready = (const Basalt__V1__Ready *)msg->body;
    bas_workq_dispatcher_ready (self->work, msg->identity, ready->has_credits ? ready->credits : 0,
                                ready->binder_id, ready->instance, bas_mono_ms ());
    bas_metrics_set (self->metrics, "basalt_binders", NULL,
                     (double)bas_workq_dispatcher_binders (self->work));
    s_dispatch_work (self);
    return 0;
}

static void
s_count_result (cache_t *self, const char *kind, bool ok)
{
    char labels[64];
    snprintf (labels, sizeof labels, "kind=\"%s\",result=\"%s\"", kind, ok ? "ok" : "failed");
    bas_metrics_add (self->metrics, "basalt_work_results_total", labels, 1);
}

static int
s_handle_result (void *arg, bas_msg_t *msg)
{
    cache_t *self = arg;
    const Basalt__V1__WorkResult *r = (const Basalt__V1__WorkResult *)msg->body;
    Basalt__V1__Work *work;
    if (bas_workq_dispatcher_result (self->work, msg->identity, r->work_id, bas_mono_ms (),
                                     &work) != 0) {
        s_unknown_binder (self, msg);
        return 0;
    }
    if (work) {
        bool ok = r->has_ok && r->ok;
        //  Which binders work (a binder pool's share), by their --binder-id.
        char id[128], labels[160];
        snprintf (labels, sizeof labels, "binder=\"%s\"",
                  bas_metrics_escape (id, sizeof id,
                                      bas_workq_dispatcher_binder_id (self->work, msg->identity)));
        bas_metrics_add (self->metrics, "basalt_work_results_by_binder_total", labels, 1);
        if (cache_model_work_result (self->model, work, ok, r->message ? r->message : r->reason) !=
            0)
            bas_warn ("work_result_unknown", "work_id=%llu", (unsigned long long)r->work_id);
        s_count_result (self, bas_work_name (work), ok);
        basalt__v1__work__free_unpacked (work, NULL);
    }
    s_dispatch_work (self);
    return 0;
}

//  The heartbeat timer has not run for two beats: the reactor was held
//  (a long turn, a freeze), and nobody could be heard meanwhile.
static bool
s_beat_late (const cache_t *self, int64_t now)
{
    return self->last_beat_ms && now - self->last_beat_ms > 2 * CACHE_HEARTBEAT_MS;
}

static int
s_handle_heartbeat (void *arg, bas_msg_t *msg)
{
    cache_t *self = arg;
    const Basalt__V1__Heartbeat *hb = (const Basalt__V1__Heartbeat *)msg->body;
    int64_t now = bas_mono_ms ();
    uint64_t fence = 0;
    int requeued = bas_workq_dispatcher_heartbeat (
        self->work, msg->identity, hb, bas_svc_epoch (self->svc), s_beat_late (self, now), now,
        CACHE_BINDER_TIMEOUT_MS, &fence);
    if (requeued < 0) {
        s_unknown_binder (self, msg);
        return 0;
    }
    if (fence) {
        Basalt__V1__Heartbeat echo = BASALT__V1__HEARTBEAT__INIT;
        echo.service = "cache-svc";
        echo.has_fence_echo = 1;
        echo.fence_echo = fence;
        bas_svc_send (self->svc, self->workers, &self->work_stream, msg->identity, "binder",
                      &echo.base);
    }
    if (requeued > 0)
        s_dispatch_work (self);
    return 0;
}

static const bas_handler_t s_work_handlers[] = {
    {&basalt__v1__ready__descriptor, s_handle_ready},
    {&basalt__v1__work_result__descriptor, s_handle_result},
    {&basalt__v1__heartbeat__descriptor, s_handle_heartbeat},
    {NULL, NULL},
};

//  Read and handle one binder message now, through the socket's dispatch
//  (the heartbeat's catch-up reads them before judging the binders).
static int
s_on_workers (zloop_t *loop, zsock_t *sock, void *arg)
{
    (void)loop;
    cache_t *self = arg;
    return bas_svc_dispatch_now (self->svc, sock);
}

// ------------------------------------------------------------ timers

static int
s_on_flush_timer (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    s_flush (arg);
    return 0;
}

// ------------------------------------------------------------ /debug/state

static int
s_debug_state (void *arg, const char *path, char **body_p, const char **ctype)
{
    (void)path;
    cache_t *self = arg;
    cache_debug_t d = {self->model, self->work, self->shares, self->svc, self->commit_log};
    *body_p = cache_debug_state (&d);
    *ctype = "application/json";
    return 200;
}

//  The status page: static bytes, copied (the server frees what it sends).
static int
s_ui (void *arg, const char *path, char **body_p, const char **ctype)
{
    (void)arg;
    (void)path;
    *body_p = bas_alloc (cache_ui_page_len + 1);
    memcpy (*body_p, cache_ui_page, cache_ui_page_len);
    *ctype = "text/html; charset=utf-8";
    return 200;
}

static int
s_on_heartbeat_timer (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    cache_t *self = arg;
    s_flush (self);
    //  The stream's heartbeat (none before the first delta): readers find
    //  lost deltas by its seq; sessions read work_pending.
    zmsg_t *hb = bas_clone_publisher_heartbeat (
        self->clone, (uint32_t)(bas_workq_dispatcher_queued (self->work) +
                                bas_workq_dispatcher_in_flight (self->work)));
    if (hb)
        bas_svc_send_msg (self->svc, self->pub, "subscribers", &basalt__v1__heartbeat__descriptor,
                          &hb);
    //  Binder liveness is judged on the binders' traffic as this reactor
    //  sees it once it has caught up. After a long turn elsewhere (a big
    //  commit, a relist), results and heartbeats the binders sent meanwhile
    //  still wait on the socket: read them first. If more are waiting than
    //  one catch-up reads, or this timer itself fires late (the reactor was
    //  held), nobody is judged this time; the next beat decides.
    int64_t now = bas_mono_ms ();
    bool late = s_beat_late (self, now);
    self->last_beat_ms = now;
    if (late)
        bas_workq_dispatcher_forgive (self->work,
                                      now); // before the heartbeats read below are judged
    bool caught_up = true;
    for (int i = 0; self->workers && zsock_events (self->workers) & ZMQ_POLLIN; i++) {
        if (i == CACHE_CATCH_UP_MAX) {
            caught_up = false;
            break;
        }
        s_on_workers (NULL, self->workers, self);
    }
    if (late || !caught_up) {
        //  Nobody could be heard while the reactor was held: silence counts
        //  from now (a binder whose connection dropped meanwhile has a full
        //  timeout to reconnect and be heard).
        bas_info ("liveness_deferred", "late=%s caught_up=%s", late ? "yes" : "no",
                  caught_up ? "yes" : "no");
    } else {
        //  Judged at the time the lateness was: a freeze that stops this
        //  turn after `now` was read (SIGSTOP, a descheduled VM) must not
        //  count as the binders' silence; the next beat sees it as late.
        int requeued = bas_workq_dispatcher_expire (self->work, now, CACHE_BINDER_TIMEOUT_MS);
        if (requeued)
            bas_warn ("work_reissued", "items=%d", requeued);
    }
    bas_metrics_set (self->metrics, "basalt_binders", NULL,
                     (double)bas_workq_dispatcher_binders (self->work));
    s_dispatch_work (self);
    cache_metrics_update (self->metrics, self->model, self->work);
    return 0;
}

// ------------------------------------------------------------ leader election

//  The binder ROUTER, bound when this cache leads (at once without
//  --leader-elect): binders reach only a leader, also through a Service
//  that selects every replica (a standby refuses the connection).
static int
s_bind_work (cache_t *self, char *err, size_t errlen)
{
    self->workers =
        bas_sock_new (ZMQ_ROUTER, self->config.work_endpoint, true, &self->work_opts, err, errlen);
    if (!self->workers) {
        bas_error ("socket_failed", "msg=\"%s\"", err);
        return -1;
    }
    bas_svc_dispatch (self->svc, self->workers, &self->work_stream, s_work_handlers, self,
                      "workers", "binder", true);
    return 0;
}

static void
s_on_lease (void *arg, bool leading, const char *reason)
{
    cache_t *self = arg;
    if (leading) {
        char err[512];
        if (s_bind_work (self, err, sizeof err) != 0) {
            self->lease_lost = true; // cannot lead without binders: let another
            bas_svc_stop (self->svc);
            return;
        }
        cache_model_set_standby (self->model, false);
        s_flush (self); // sessions and the controller hear it now
        bas_metrics_set (self->metrics, "basalt_leader", NULL, 1);
        bas_info ("leading", "work=%s", self->config.work_endpoint);
        return;
    }
    bas_metrics_set (self->metrics, "basalt_leader", NULL, 0);
    if (strcmp (reason, "released") == 0)
        return; // a stop under way
    //  Stop at once, as kube-scheduler and Volcano do: no more work goes
    //  out (s_leading is false from now on), and the restarted process
    //  comes back as a standby with a new epoch, which sessions, the
    //  controller and binders follow.
    bas_error ("leader_lost", "reason=\"%s\" exit=%d", reason, CACHE_EXIT_LEASE_LOST);
    self->lease_lost = true;
    bas_svc_stop (self->svc);
}

static void
s_on_released (void *arg)
{
    cache_t *self = arg;
    bas_svc_stop (self->svc);
}

static int
s_on_release_timeout (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    cache_t *self = arg;
    bas_warn ("lease_release_slow", "waited_ms=%d", CACHE_LEASE_RELEASE_WAIT_MS);
    bas_svc_stop (self->svc);
    return 0;
}

//  SIGTERM: a leader gives the lease up first, so that the standby takes
//  over at its next attempt instead of waiting out the lease duration.
static int
s_on_stop (void *arg)
{
    cache_t *self = arg;
    if (!self->lease || !bas_lease_leading (self->lease))
        return 0;
    bas_svc_timer (self->svc, CACHE_LEASE_RELEASE_WAIT_MS, 1, s_on_release_timeout, self,
                   "lease-release");
    bas_lease_release (self->lease, s_on_released, self);
    return 1;
}

static bool
s_ready (void *arg, const char **reason)
{
    cache_t *self = arg;
    if (!cache_model_synced (self->model)) {
        *reason = self->fence_until_ms > bas_mono_ms ()
                      ? "synced soon: waiting out the work an earlier cache-svc handed out"
                      : "not yet synced with the API server";
        return false;
    }
    return true;
}

int
main (int argc, char **argv)
{
    cache_t self = {0};
    self.config.common.http = CACHE_HTTP;
    self.config.snapshot_endpoint = CACHE_SNAPSHOT_ENDPOINT;
    self.config.delta_endpoint = CACHE_DELTA_ENDPOINT;
    self.config.work_endpoint = CACHE_WORK_ENDPOINT;
    self.config.kube.qps = CACHE_KUBE_QPS;
    self.config.kube.burst = CACHE_KUBE_BURST;
    self.config.scheduler_name = CACHE_SCHEDULER_NAMES;
    self.config.ignored_devices = "";
    self.config.lease_duration_ms = CACHE_LEASE_DURATION_MS;
    self.config.renew_deadline_ms = CACHE_LEASE_RENEW_DEADLINE_MS;
    self.config.retry_period_ms = CACHE_LEASE_RETRY_PERIOD_MS;
    self.config.lease_name = CACHE_LEASE_NAME;
    self.config.lease_namespace = CACHE_LEASE_NAMESPACE;
    int exit_code = 0;
    self.svc = bas_svc_new ("cache-svc", "Basalt cache: owns the cluster model.", s_flags,
                            &self.config, &self.config.common, argc, argv, &exit_code);
    if (!self.svc)
        return exit_code;
    self.metrics = bas_svc_metrics (self.svc);
    cache_metrics_describe (self.metrics);
    bas_metrics_set (self.metrics, "basalt_leader", NULL, self.config.leader_elect ? 0 : 1);
    uint64_t epoch = bas_svc_epoch (self.svc);
    self.model = cache_model_new (epoch, self.config.scheduler_name);
    self.fence_until_ms = bas_mono_ms () + CACHE_START_FENCE_MS;
    self.fence_timer = -1;
    cache_model_set_ignored_devices (self.model, self.config.ignored_devices);
    self.work = bas_workq_dispatcher_new (CACHE_WORK_REISSUE_MARGIN_MS);
    self.commits = bas_commit_acceptor_new (epoch, &s_commit_apply, &self, CACHE_COMMIT_SLICE_US,
                                            CACHE_COMMIT_STEP_ITEMS);
    self.commit_timer = -1;
    self.clone = bas_clone_publisher_new ("cache-svc", epoch, CACHE_SNAPSHOT_PART,
                                          &cache_model_clone_source, self.model);
    self.snapshot_timer = -1;
    self.commit_log = cache_commit_log_new (CACHE_COMMIT_LOG_MAX, CACHE_COMMIT_LOG_MS);
    self.shares = zhashx_new ();
    zhashx_set_destructor (self.shares, s_share_free);
    bas_stream_init (&self.router_stream, "cache-svc", epoch);
    bas_stream_init (&self.work_stream, "cache-svc", epoch);

    char err[512];
    bas_kube_config_t kcfg = {0};
    bas_sock_opts_t opts = bas_sock_opts_default ();
    //  --curve-cert and --curve-clients are the shared flags: bas_svc runs
    //  the process's one authenticator for these sockets and its tap.
    opts.curve_cert = self.config.common.curve_cert;
    opts.curve_clients = self.config.common.curve_clients;
    self.router =
        bas_sock_new (ZMQ_ROUTER, self.config.snapshot_endpoint, true, &opts, err, sizeof err);
    self.pub = self.router ? bas_sock_new (ZMQ_PUB, self.config.delta_endpoint, true, &opts, err,
                                           sizeof err)
                           : NULL;
    //  No ROUTER_HANDOVER: a binder is known across reconnects by its
    //  Ready's instance (bas_workq_dispatcher_ready), not by a ZeroMQ identity; a
    //  takeover leaves the old connection without a pipe, reading stops on
    //  its next message, and its hang-up then aborts libzmq 4.3.4
    //  (bas_sock.h).
    self.work_opts = opts;
    self.work_opts.heartbeat_timeout_ms = CACHE_WORK_ZMTP_TIMEOUT_MS;
    if (!self.pub) {
        bas_error ("socket_failed", "msg=\"%s\"", err);
        exit_code = 1;
        goto done;
    }
    if (self.config.leader_elect) {
        bas_lease_config_t lcfg = {self.config.lease_namespace,   self.config.lease_name,
                                   self.config.lease_identity,    self.config.lease_duration_ms,
                                   self.config.renew_deadline_ms, self.config.retry_period_ms};
        if (bas_lease_config_check (&lcfg, err, sizeof err) != 0) {
            bas_error ("bad_flags", "msg=\"--leader-elect: %s\"", err);
            exit_code = 2;
            goto done;
        }
        cache_model_set_standby (self.model, true);
    } else if (s_bind_work (&self, err, sizeof err) != 0) {
        exit_code = 1;
        goto done;
    }
    self.kube =
        bas_svc_kube_new (self.svc, &self.config.kube, "basalt-cache/" BASALT_VERSION, &kcfg);
    if (!self.kube) {
        exit_code = 1;
        goto done;
    }
    for (size_t i = 0; i < bas_kind_count (); i++) {
        s_informer_arg_t *ia = &self.informer_args[i];
        ia->cache = &self;
        ia->kind = bas_kind_at (i);
        bas_kind_path (ia->kind, ia->path, sizeof ia->path);
        self.informers[i] = bas_kube_watch (self.kube, ia->path, NULL, s_on_api_event, ia);
        bas_kube_informer_set_optional (self.informers[i], ia->kind->optional);
    }
    bas_svc_dispatch (self.svc, self.router, &self.router_stream, s_router_handlers, &self,
                      "router", "session", true);
    if (self.config.leader_elect) {
        bas_lease_config_t lcfg = {self.config.lease_namespace,   self.config.lease_name,
                                   self.config.lease_identity,    self.config.lease_duration_ms,
                                   self.config.renew_deadline_ms, self.config.retry_period_ms};
        self.lease = bas_lease_new (bas_svc_loop (self.svc), self.kube, &lcfg, s_on_lease, &self);
        bas_svc_set_stop (self.svc, s_on_stop, &self);
    }
    bas_svc_timer (self.svc, CACHE_FLUSH_MS, 0, s_on_flush_timer, &self, "flush");
    bas_svc_timer (self.svc, CACHE_HEARTBEAT_MS, 0, s_on_heartbeat_timer, &self, "heartbeat");
    bas_svc_set_ready (self.svc, s_ready, &self);
    bas_svc_route (self.svc, "/debug/state", s_debug_state, &self);
    bas_svc_route (self.svc, "/ui", s_ui, &self);
    bas_info ("listening", "snapshot=%s delta=%s work=%s api=%s", self.config.snapshot_endpoint,
              self.config.delta_endpoint, self.config.work_endpoint, kcfg.server);
    exit_code = bas_svc_run (self.svc);
    if (self.lease_lost)
        exit_code = CACHE_EXIT_LEASE_LOST;
done:
    bas_kube_destroy (&self.kube);
    bas_lease_destroy (&self.lease); // after the client: it dropped the lease's request
    bas_kube_config_clear (&kcfg);
    //  Not closed: libzmq 4.3.4 aborts closing a connection whose peer
    //  leaves at that moment (bas_svc_exit); the process ends without it.
    bas_svc_keep (self.svc, &self.router);
    bas_svc_keep (self.svc, &self.pub);
    bas_svc_keep (self.svc, &self.workers);
    bas_workq_dispatcher_destroy (&self.work);
    bas_commit_acceptor_destroy (&self.commits);
    bas_clone_publisher_destroy (&self.clone);
    cache_commit_log_destroy (&self.commit_log);
    zhashx_destroy (&self.shares);
    cache_model_destroy (&self.model);
    bas_svc_exit (&self.svc, exit_code);
}
