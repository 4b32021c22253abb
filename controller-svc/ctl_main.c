/*  controller-svc: the PodGroup lifecycle (DESIGN.md).

    Keeps a replica of cache-svc's model by the Clone pattern, and watches
    the owners it needs itself (ReplicaSets, StatefulSets: the cache's
    model has none). Every plain pod of a configured scheduler gets a
    PodGroup `podgroup-<controller owner uid | pod uid>` and is annotated
    with it; an owner scaled to 0 loses its group, scaled up it gets it
    back. It also plays Volcano's queue controller: `root` and the default
    queue are created when missing, and each Queue's status (state,
    allocated) is kept current. The decisions live in ctl_lifecycle.c and
    ctl_queue.c; this file wires the replica, the owner informers, the API
    client and the timers to them.

    Design note: every action in flight or waiting for a retry is keyed by
    uid, never by a name, and every delete carries preconditions on the
    uid and resourceVersion it was decided on (DESIGN problem 5).
*/
#include "bas_kube.h"
#include "bas_replica.h"
#include "bas_sock.h"
#include "bas_svc.h"
#include "ctl_defaults.h"
#include "ctl_lifecycle.h"
#include "ctl_podgroup.h"
#include "ctl_queue.h"

#include <string.h>

typedef struct {
    bas_svc_flags_t common;
    const char *snapshot_endpoint;
    const char *delta_endpoint;
    bas_kube_flags_t kube;
    const char *scheduler_name;
    const char *default_queue;
    const char *curve_server;
    const char *watch_owners;
    int retry_ms;
} ctl_config_t;

static const bas_flag_t s_flags[] = {
    BAS_SVC_FLAGS (ctl_config_t),
    BAS_KUBE_FLAGS (ctl_config_t),
    {"snapshot-endpoint", BAS_FLAG_STRING, offsetof (ctl_config_t, snapshot_endpoint), "ENDPOINT",
     "cache-svc's snapshot ROUTER (connected)"},
    {"delta-endpoint", BAS_FLAG_STRING, offsetof (ctl_config_t, delta_endpoint), "ENDPOINT",
     "cache-svc's delta PUB (connected)"},
    {"scheduler-name", BAS_FLAG_STRING, offsetof (ctl_config_t, scheduler_name), "NAMES",
     "comma-separated scheduler names whose plain pods get PodGroups"},
    {"default-queue", BAS_FLAG_STRING, offsetof (ctl_config_t, default_queue), "QUEUE",
     "queue of PodGroups whose pod names none"},
    {"watch-owners", BAS_FLAG_STRING, offsetof (ctl_config_t, watch_owners), "KINDS",
     "comma-separated owner kinds to watch (replicasets, statefulsets); \"\" for none"},
    {"retry-ms", BAS_FLAG_INT, offsetof (ctl_config_t, retry_ms), "MS",
     "a failed PodGroup action is tried again after this"},
    {"curve-server", BAS_FLAG_STRING, offsetof (ctl_config_t, curve_server), "FILE",
     "cache-svc's public CURVE certificate"},
    {NULL},
};

typedef struct {
    ctl_config_t config;
    bas_svc_t *svc;
    bas_metrics_t *metrics;
    bas_kube_t *kube;
    bas_replica_t *replica;
    ctl_lifecycle_t *life; // the decisions (ctl_lifecycle.c)
    ctl_queue_t *queues;   // default queue, queue status (ctl_queue.c)
    bool scanned;          // every pod was looked at since the replica became ready
    bool holding;          // the replica's store is held still for a reset
    int step_timer;        // the next slice of a reset or scan, or -1
} ctl_t;

//  The owner kinds the controller watches itself: --watch-owners names.
static const struct {
    const char *resource; // as in --watch-owners and the API path
    const char *kind;
    const char *api_version;
    const char *path;
} s_owner_kinds[] = {
    {"replicasets", "ReplicaSet", "apps/v1", "/apis/apps/v1/replicasets"},
    {"statefulsets", "StatefulSet", "apps/v1", "/apis/apps/v1/statefulsets"},
};

//  The informer callback's argument: which kind it watches.
typedef struct {
    ctl_t *ctl;
    int kind; // index into s_owner_kinds
} s_watch_t;

static int
s_request (void *arg, const char *method, const char *path, const char *content_type,
           const char *body, bas_kube_done_fn *done, void *done_arg)
{
    return bas_kube_request (arg, method, path, content_type, body, done, done_arg);
}

//  The controller acts (reads the model into its lifecycle, writes to the
//  API) only on a ready model from a cache that leads: a standby's model is
//  kept warm and nothing is done with it (cache-svc --leader-elect).
static bool
s_active (ctl_t *self)
{
    return bas_replica_ready (self->replica) && !bas_replica_standby (self->replica);
}

static void s_step_arm (ctl_t *self);

//  One slice of the reset or scan under way; the replica's store is lent
//  back to it when a reset is over.
static int
s_on_step (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    ctl_t *self = arg;
    self->step_timer = -1;
    if (!ctl_lifecycle_step (self->life, CTL_SLICE_US)) {
        s_step_arm (self);
        return 0;
    }
    if (self->holding) {
        self->holding = false;
        bas_replica_release (self->replica);
    }
    return 0;
}

static void
s_step_arm (ctl_t *self)
{
    if (self->step_timer == -1)
        self->step_timer = bas_svc_timer (self->svc, 0, 1, s_on_step, self, "lifecycle");
}

//  A new snapshot: rebuild the lifecycle's indexes in slices, with the
//  store held still meanwhile (deltas wait in the replica).
static void
s_reset (ctl_t *self)
{
    if (!self->holding && !bas_replica_hold (self->replica))
        return; // not ready: the next change or rescan starts it
    self->holding = true;
    self->scanned = true;
    ctl_lifecycle_reset_begin (self->life);
    s_step_arm (self);
}

static void
s_scan (ctl_t *self)
{
    if (!s_active (self))
        return;
    if (!self->scanned) {
        s_reset (self);
        return;
    }
    ctl_lifecycle_scan_begin (self->life);
    s_step_arm (self);
}

static void
s_on_upsert (void *arg, const Basalt__V1__Object *obj)
{
    ctl_t *self = arg;
    ctl_queue_changed (self->queues);
    if (!s_active (self))
        return;
    if (obj->kind_case == BASALT__V1__OBJECT__KIND_POD)
        ctl_lifecycle_pod_upsert (self->life, obj->pod);
    else if (obj->kind_case == BASALT__V1__OBJECT__KIND_POD_GROUP)
        ctl_lifecycle_group_upsert (self->life, obj->pod_group);
}

static void
s_on_delete (void *arg, const Basalt__V1__ObjectRef *ref, const Basalt__V1__Object *old)
{
    ctl_t *self = arg;
    ctl_queue_changed (self->queues);
    //  Keyed by uid: a new object with the same name is another key.
    if (ref->kind == BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD)
        ctl_lifecycle_pod_delete (self->life, ref->key, old ? old->pod : NULL);
    else if (ref->kind == BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP)
        ctl_lifecycle_group_delete (self->life, ref->key, old ? old->pod_group : NULL);
    else if (ref->kind == BASALT__V1__OBJECT_KIND__OBJECT_KIND_QUEUE && s_active (self))
        ctl_lifecycle_queue_delete (self->life, ref->key);
}

static void
s_on_reset (void *arg)
{
    ctl_t *self = arg;
    self->scanned = false;
    ctl_queue_changed (self->queues);
    if (s_active (self))
        s_reset (self);
}

//  The cache reports "synced" in a delta after the snapshot: start then,
//  not at the next rescan.
static void
s_on_change (void *arg)
{
    ctl_t *self = arg;
    if (!self->scanned && s_active (self))
        s_reset (self);
}

static void
s_on_owner (void *arg, bas_kube_event_t type, const cJSON *object)
{
    s_watch_t *w = arg;
    ctl_lifecycle_owner_event (w->ctl->life, s_owner_kinds[w->kind].kind,
                               s_owner_kinds[w->kind].api_version, type, object);
}

static int
s_on_rescan (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    s_scan (arg);
    return 0;
}

static int
s_on_tick (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    ctl_t *self = arg;
    if (s_active (self) && !self->holding) {
        ctl_lifecycle_tick (self->life);
        ctl_queue_step (self->queues, CTL_SLICE_US);
    }
    return 0;
}

static bool
s_ready (void *arg, const char **reason)
{
    ctl_t *self = arg;
    if (!bas_replica_ready (self->replica)) {
        *reason = "no current snapshot from cache-svc";
        return false;
    }
    return true;
}

int
main (int argc, char **argv)
{
    ctl_t self = {0};
    self.step_timer = -1;
    self.config.common.http = CTL_HTTP;
    self.config.snapshot_endpoint = CTL_SNAPSHOT_ENDPOINT;
    self.config.delta_endpoint = CTL_DELTA_ENDPOINT;
    self.config.kube.qps = CTL_KUBE_QPS;
    self.config.kube.burst = CTL_KUBE_BURST;
    self.config.scheduler_name = CTL_SCHEDULER_NAMES;
    self.config.default_queue = CTL_DEFAULT_QUEUE;
    self.config.watch_owners = CTL_WATCH_OWNERS;
    self.config.retry_ms = CTL_RETRY_MS;
    int exit_code = 0;
    s_watch_t watches[sizeof s_owner_kinds / sizeof s_owner_kinds[0]];
    self.svc = bas_svc_new ("controller-svc", "Basalt controller: the PodGroup lifecycle.", s_flags,
                            &self.config, &self.config.common, argc, argv, &exit_code);
    if (!self.svc)
        return exit_code;
    self.metrics = bas_svc_metrics (self.svc);
    ctl_lifecycle_describe_metrics (self.metrics);
    ctl_queue_describe_metrics (self.metrics);
    if (self.config.retry_ms < 1) {
        bas_error ("bad_flag", "flag=--retry-ms value=%d msg=\"must be at least 1\"",
                   self.config.retry_ms);
        exit_code = 2;
        goto done;
    }
    for (const char *p = self.config.watch_owners; p && *p;) {
        //  Every name in --watch-owners must be one this controller knows.
        while (*p == ',' || *p == ' ')
            p++;
        size_t len = strcspn (p, ", ");
        if (!len)
            break;
        bool known = false;
        for (size_t k = 0; k < sizeof s_owner_kinds / sizeof s_owner_kinds[0]; k++)
            known |= strlen (s_owner_kinds[k].resource) == len &&
                     strncmp (s_owner_kinds[k].resource, p, len) == 0;
        if (!known) {
            bas_error ("bad_flag",
                       "flag=--watch-owners value=\"%s\" msg=\"unknown kind %.*s; "
                       "known: replicasets, statefulsets\"",
                       self.config.watch_owners, (int)len, p);
            exit_code = 2;
            goto done;
        }
        p += len;
    }

    char err[512];
    bas_kube_config_t kcfg = {0};
    self.kube =
        bas_svc_kube_new (self.svc, &self.config.kube, "basalt-controller/" BASALT_VERSION, &kcfg);
    if (!self.kube) {
        exit_code = 1;
        goto done;
    }
    ctl_lifecycle_config_t lcfg = {
        .scheduler_names = self.config.scheduler_name,
        .default_queue = self.config.default_queue,
        .component = CTL_COMPONENT,
        .retry_ms = self.config.retry_ms,
        .request = s_request,
        .request_arg = self.kube,
        .metrics = self.metrics,
    };
    bas_sock_opts_t opts = bas_sock_opts_default ();
    opts.curve_cert = self.config.common.curve_cert;
    opts.curve_server = self.config.curve_server;
    bas_replica_fns_t fns = {s_on_reset, s_on_upsert, s_on_delete, s_on_change};
    self.replica =
        bas_replica_new (self.svc, self.config.snapshot_endpoint, self.config.delta_endpoint, &opts,
                         &fns, NULL, &self, err, sizeof err);
    if (!self.replica) {
        bas_error ("socket_failed", "msg=\"%s\"", err);
        exit_code = 1;
        goto done;
    }
    //  The controller reads no pod labels, affinity, ports, spread or
    //  images, and no node images.
    bas_store_drop_scheduling_fields (bas_replica_store (self.replica), true);
    self.life = ctl_lifecycle_new (&lcfg, bas_replica_store (self.replica));
    ctl_queue_config_t qcfg = {
        .default_queue = self.config.default_queue,
        .interval_ms = CTL_QUEUE_INTERVAL_MS,
        .request = s_request,
        .request_arg = self.kube,
        .metrics = self.metrics,
    };
    self.queues = ctl_queue_new (&qcfg, bas_replica_store (self.replica));
    for (size_t k = 0; k < sizeof s_owner_kinds / sizeof s_owner_kinds[0]; k++) {
        if (!ctl_name_in_list (self.config.watch_owners, s_owner_kinds[k].resource))
            continue;
        watches[k] = (s_watch_t){&self, (int)k};
        bas_kube_watch (self.kube, s_owner_kinds[k].path, NULL, s_on_owner, &watches[k]);
    }
    bas_svc_timer (self.svc, CTL_RESCAN_MS, 0, s_on_rescan, &self, "rescan");
    bas_svc_timer (self.svc, CTL_TICK_MS, 0, s_on_tick, &self, "tick");
    bas_svc_set_ready (self.svc, s_ready, &self);
    bas_info ("listening", "snapshot=%s delta=%s schedulers=%s owners=%s api=%s",
              self.config.snapshot_endpoint, self.config.delta_endpoint, self.config.scheduler_name,
              self.config.watch_owners ? self.config.watch_owners : "", kcfg.server);
    exit_code = bas_svc_run (self.svc);
done:
    //  The client first: it drops requests in flight without calling back,
    //  then the lifecycle frees their contexts.
    bas_kube_destroy (&self.kube);
    ctl_lifecycle_destroy (&self.life);
    ctl_queue_destroy (&self.queues);
    bas_replica_destroy (&self.replica);
    bas_kube_config_clear (&kcfg);
    bas_svc_exit (&self.svc, exit_code);
}
