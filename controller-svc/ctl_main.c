/*  controller-svc: the PodGroup lifecycle (DESIGN.md).

    Keeps a replica of cache-svc's model by the Clone pattern and gives every
    plain pod of a configured scheduler (no scheduling.k8s.io/group-name
    annotation) a PodGroup `podgroup-<controller owner uid | pod uid>`, then
    annotates the pod with it. AlreadyExists counts as created.

    Design note: every action in flight or waiting for a retry is keyed by
    the pod's uid, never by a name (DESIGN problem 5): a pod deleted and
    re-created under the same name is a different key, and a stale action's
    API write carries the uid it was decided on as a precondition.
*/
#include "bas_kube.h"
#include "bas_replica.h"
#include "bas_sock.h"
#include "bas_svc.h"
#include "ctl_defaults.h"
#include "ctl_podgroup.h"

#include <string.h>

typedef struct {
    bas_svc_flags_t common;
    const char *snapshot_endpoint;
    const char *delta_endpoint;
    bas_kube_flags_t kube;
    const char *scheduler_name;
    const char *default_queue;
    const char *curve_cert;
    const char *curve_server;
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
    {"curve-cert", BAS_FLAG_STRING, offsetof (ctl_config_t, curve_cert), "FILE",
     "own CURVE certificate for tcp:// endpoints"},
    {"curve-server", BAS_FLAG_STRING, offsetof (ctl_config_t, curve_server), "FILE",
     "cache-svc's public CURVE certificate"},
    {NULL},
};

typedef enum { S_CREATING = 1, S_ANNOTATING = 2, S_FAILED = 3 } s_state_t;

//  One pod's pending action, keyed by the pod's uid.
typedef struct {
    char uid[128];             // the pod's uid (the key)
    char ns[128];
    char name[256];            // the pod's name
    char group[320];           // the PodGroup name decided for it
    s_state_t state;
    int64_t retry_after_ms;    // for S_FAILED
} s_action_t;

typedef struct {
    ctl_config_t config;
    bas_svc_t *svc;
    bas_metrics_t *metrics;
    bas_kube_t *kube;
    bas_replica_t *replica;
    zhashx_t *actions;         // pod uid -> s_action_t
    bool scanned;              // every pod was looked at since the replica became ready
} ctl_t;

typedef struct {
    ctl_t *ctl;
    char uid[128];             // the pod the request was for
} s_call_t;

static void s_consider (ctl_t *self, const Basalt__V1__Pod *pod);

static void
s_count (ctl_t *self, const char *what, long code)
{
    char labels[96];
    snprintf (labels, sizeof labels, "action=\"%s\",code=\"%ld\"", what, code);
    bas_metrics_add (self->metrics, "basalt_controller_requests_total", labels, 1);
}

static void
s_fail (ctl_t *self, s_action_t *a)
{
    a->state = S_FAILED;
    a->retry_after_ms = bas_mono_ms () + CTL_RETRY_MS;
    (void) self;
}

static void
s_on_annotated (void *arg, const bas_kube_response_t *resp)
{
    s_call_t *call = arg;
    ctl_t *self = call->ctl;
    s_count (self, "annotate", resp->code);
    s_action_t *a = zhashx_lookup (self->actions, call->uid);
    if (a) {
        if (resp->code >= 200 && resp->code < 300) {
            bas_info ("pod_annotated", "pod=%s/%s podgroup=%s", a->ns, a->name, a->group);
            zhashx_delete (self->actions, call->uid);
        }
        else if (resp->code == 404 || resp->code == 409) {
            //  The pod is gone or is another pod now: the decision is stale.
            bas_info ("annotate_dropped", "pod=%s/%s code=%ld", a->ns, a->name, resp->code);
            zhashx_delete (self->actions, call->uid);
        }
        else {
            bas_warn ("annotate_failed", "pod=%s/%s code=%ld reason=%s msg=\"%s\"", a->ns, a->name,
                      resp->code, resp->reason ? resp->reason : "-", resp->message ? resp->message : "");
            s_fail (self, a);
        }
    }
    free (call);
}

static void
s_annotate (ctl_t *self, s_action_t *a)
{
    a->state = S_ANNOTATING;
    cJSON *patch = cJSON_CreateObject ();
    cJSON *meta = cJSON_AddObjectToObject (patch, "metadata");
    //  uid in the patch: a pod re-created under this name refuses it.
    cJSON_AddStringToObject (meta, "uid", a->uid);
    cJSON *ann = cJSON_AddObjectToObject (meta, "annotations");
    cJSON_AddStringToObject (ann, "scheduling.k8s.io/group-name", a->group);
    char *body = cJSON_PrintUnformatted (patch);
    cJSON_Delete (patch);
    char path[640];
    snprintf (path, sizeof path, "/api/v1/namespaces/%s/pods/%s", a->ns, a->name);
    s_call_t *call = calloc (1, sizeof *call);
    if (!call)
        abort ();
    call->ctl = self;
    snprintf (call->uid, sizeof call->uid, "%s", a->uid);
    if (bas_kube_request (self->kube, "PATCH", path, "application/merge-patch+json", body,
                          s_on_annotated, call) != 0) {
        free (call);
        s_fail (self, a);
    }
    free (body);
}

static void
s_on_created (void *arg, const bas_kube_response_t *resp)
{
    s_call_t *call = arg;
    ctl_t *self = call->ctl;
    s_count (self, "create_podgroup", resp->code);
    s_action_t *a = zhashx_lookup (self->actions, call->uid);
    if (a) {
        bool exists = resp->code == 409 && resp->reason && strcmp (resp->reason, "AlreadyExists") == 0;
        if ((resp->code >= 200 && resp->code < 300) || exists) {
            bas_info ("podgroup_created", "podgroup=%s/%s for=%s existed=%s", a->ns, a->group,
                      a->name, exists ? "yes" : "no");
            s_annotate (self, a);
        }
        else {
            bas_warn ("podgroup_create_failed", "podgroup=%s/%s code=%ld reason=%s msg=\"%s\"",
                      a->ns, a->group, resp->code, resp->reason ? resp->reason : "-",
                      resp->message ? resp->message : "");
            s_fail (self, a);
        }
    }
    free (call);
}

static void
s_consider (ctl_t *self, const Basalt__V1__Pod *pod)
{
    if (!ctl_pod_needs_group (pod, self->config.scheduler_name))
        return;
    s_action_t *a = zhashx_lookup (self->actions, pod->uid);
    if (a && (a->state != S_FAILED || bas_mono_ms () < a->retry_after_ms))
        return;  // in flight, or waiting to retry
    if (!a) {
        a = calloc (1, sizeof *a);
        if (!a)
            abort ();
        snprintf (a->uid, sizeof a->uid, "%s", pod->uid);
        zhashx_insert (self->actions, pod->uid, a);
    }
    snprintf (a->ns, sizeof a->ns, "%s", pod->namespace_ ? pod->namespace_ : "default");
    snprintf (a->name, sizeof a->name, "%s", pod->name);
    ctl_podgroup_name (pod, a->group, sizeof a->group);
    if (bas_store_pod_group_by_name (bas_replica_store (self->replica), a->ns, a->group)) {
        s_annotate (self, a);
        return;
    }
    char err[512];
    cJSON *pg = ctl_podgroup_build (pod, self->config.default_queue, err, sizeof err);
    if (!pg) {
        bas_warn ("podgroup_invalid", "pod=%s/%s msg=\"%s\"", a->ns, a->name, err);
        s_fail (self, a);
        return;
    }
    char *body = cJSON_PrintUnformatted (pg);
    cJSON_Delete (pg);
    char path[512];
    snprintf (path, sizeof path, "/apis/scheduling.volcano.sh/v1beta1/namespaces/%s/podgroups", a->ns);
    s_call_t *call = calloc (1, sizeof *call);
    if (!call)
        abort ();
    call->ctl = self;
    snprintf (call->uid, sizeof call->uid, "%s", pod->uid);
    a->state = S_CREATING;
    if (bas_kube_request (self->kube, "POST", path, NULL, body, s_on_created, call) != 0) {
        free (call);
        s_fail (self, a);
    }
    free (body);
}

static void
s_scan_one (void *arg, const Basalt__V1__Object *obj)
{
    s_consider (arg, obj->pod);
}

static void
s_scan (ctl_t *self)
{
    if (!bas_replica_ready (self->replica))
        return;
    self->scanned = true;
    bas_store_foreach (bas_replica_store (self->replica), BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD,
                       s_scan_one, self);
    bas_metrics_set (self->metrics, "basalt_controller_actions_pending", NULL,
                     (double) zhashx_size (self->actions));
}

static void
s_on_upsert (void *arg, const Basalt__V1__Object *obj)
{
    ctl_t *self = arg;
    if (obj->kind_case == BASALT__V1__OBJECT__KIND_POD && bas_replica_ready (self->replica))
        s_consider (self, obj->pod);
}

static void
s_on_delete (void *arg, const Basalt__V1__ObjectRef *ref, const Basalt__V1__Object *old)
{
    (void) old;
    ctl_t *self = arg;
    //  A deleted pod's pending action is stale; keyed by uid, so a new pod
    //  with the same name is untouched.
    if (ref->kind == BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD && ref->key) {
        s_action_t *a = zhashx_lookup (self->actions, ref->key);
        if (a && a->state == S_FAILED)
            zhashx_delete (self->actions, ref->key);
    }
}

static void
s_on_reset (void *arg)
{
    ctl_t *self = arg;
    self->scanned = false;
    s_scan (self);
}

//  The cache reports "synced" in a delta after the snapshot: scan then,
//  not at the next rescan.
static void
s_on_change (void *arg)
{
    ctl_t *self = arg;
    if (!self->scanned)
        s_scan (self);
}

static int
s_on_rescan (zloop_t *loop, int timer_id, void *arg)
{
    (void) loop;
    (void) timer_id;
    s_scan (arg);
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
    self.config.common.http = CTL_HTTP;
    self.config.snapshot_endpoint = CTL_SNAPSHOT_ENDPOINT;
    self.config.delta_endpoint = CTL_DELTA_ENDPOINT;
    self.config.kube.qps = CTL_KUBE_QPS;
    self.config.kube.burst = CTL_KUBE_BURST;
    self.config.scheduler_name = CTL_SCHEDULER_NAMES;
    self.config.default_queue = CTL_DEFAULT_QUEUE;
    int exit_code = 0;
    self.svc = bas_svc_new ("controller-svc", "Basalt controller: the PodGroup lifecycle.", s_flags,
                            &self.config, &self.config.common, argc, argv, &exit_code);
    if (!self.svc)
        return exit_code;
    self.metrics = bas_svc_metrics (self.svc);
    bas_metrics_describe (self.metrics, "basalt_controller_requests_total", BAS_METRIC_COUNTER,
                          "API requests by action and HTTP code", NULL, 0);
    bas_metrics_describe (self.metrics, "basalt_controller_actions_pending", BAS_METRIC_GAUGE,
                          "Pods with a PodGroup action in flight or waiting to retry", NULL, 0);
    self.actions = zhashx_new ();
    zhashx_set_destructor (self.actions, (zhashx_destructor_fn *) zstr_free);

    char err[512];
    bas_kube_config_t kcfg = {0};
    zloop_t *loop = bas_svc_loop (self.svc);
    self.kube = bas_svc_kube_new (self.svc, &self.config.kube, "basalt-controller/" BASALT_VERSION, &kcfg);
    if (!self.kube) {
        exit_code = 1;
        goto done;
    }
    bas_sock_opts_t opts = bas_sock_opts_default ();
    opts.curve_cert = self.config.curve_cert;
    opts.curve_server = self.config.curve_server;
    bas_replica_fns_t fns = {s_on_reset, s_on_upsert, s_on_delete, s_on_change};
    self.replica = bas_replica_new (self.svc, self.config.snapshot_endpoint,
                                    self.config.delta_endpoint, &opts, &fns, NULL, &self, err,
                                    sizeof err);
    if (!self.replica) {
        bas_error ("socket_failed", "msg=\"%s\"", err);
        exit_code = 1;
        goto done;
    }
    zloop_timer (loop, CTL_RESCAN_MS, 0, s_on_rescan, &self);
    bas_svc_set_ready (self.svc, s_ready, &self);
    bas_info ("listening", "snapshot=%s delta=%s schedulers=%s api=%s", self.config.snapshot_endpoint,
              self.config.delta_endpoint, self.config.scheduler_name, kcfg.server);
    exit_code = bas_svc_run (self.svc);
done:
    bas_replica_destroy (&self.replica);
    bas_kube_destroy (&self.kube);
    bas_kube_config_clear (&kcfg);
    zhashx_destroy (&self.actions);
    bas_svc_destroy (&self.svc);
    return exit_code;
}
