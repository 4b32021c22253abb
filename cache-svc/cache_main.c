/*  cache-svc: owns the cluster model (DESIGN.md).

    Lists and watches nodes, pods, PodGroups, queues and priority classes
    from the Kubernetes API; serves snapshots and commit answers on a ROUTER
    (--snapshot-endpoint); publishes sequenced deltas and a heartbeat on a
    PUB (--delta-endpoint); hands bind and status work to binders on a
    second ROUTER (--work-endpoint) and applies their results.

    Design note: one reactor. Informer callbacks change the model; a 2 ms
    timer flushes the changes as one Delta (coalesced), so a relist of
    150,000 pods goes out as a few hundred messages, not 150,000.

    This file is the wiring: the flags, the classes (the model, the Clone
    publisher, the Commit acceptor, the Work dispatcher, the lease) created
    and handed the sockets, and the handlers and timers of each concern
    registered: cache_informers (the API's watches, the sync),
    cache_sessions (the session ROUTER), cache_binders (the binder ROUTER,
    the heartbeat), cache_leader (--leader-elect); cache_svc.h holds the
    state they share.

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
#include "bas_workq.h"
#include "cache_binders.h"
#include "cache_commit_log.h"
#include "cache_debug.h"
#include "cache_defaults.h"
#include "cache_informers.h"
#include "cache_leader.h"
#include "cache_metrics.h"
#include "cache_model.h"
#include "cache_sessions.h"
#include "cache_svc.h"
#include "cache_ui.h"

#include <string.h>

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

// ------------------------------------------------------------ timers

static int
s_on_flush_timer (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    cache_svc_flush (arg);
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
    self.commits = bas_commit_acceptor_new (epoch, &cache_sessions_commit_apply, &self,
                                            CACHE_COMMIT_SLICE_US, CACHE_COMMIT_STEP_ITEMS);
    self.commit_timer = -1;
    self.clone = bas_clone_publisher_new ("cache-svc", epoch, CACHE_SNAPSHOT_PART,
                                          &cache_model_clone_source, self.model);
    self.snapshot_timer = -1;
    self.commit_log = cache_commit_log_new (CACHE_COMMIT_LOG_MAX, CACHE_COMMIT_LOG_MS);
    self.shares = zhashx_new ();
    zhashx_set_destructor (self.shares, cache_sessions_share_free);
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
    } else if (cache_binders_bind (&self, err, sizeof err) != 0) {
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
        cache_informer_arg_t *ia = &self.informer_args[i];
        ia->cache = &self;
        ia->kind = bas_kind_at (i);
        bas_kind_path (ia->kind, ia->path, sizeof ia->path);
        self.informers[i] =
            bas_kube_watch (self.kube, ia->path, NULL, cache_informers_on_event, ia);
        bas_kube_informer_set_optional (self.informers[i], ia->kind->optional);
    }
    bas_svc_dispatch (self.svc, self.router, &self.router_stream, cache_sessions_handlers, &self,
                      "router", "session", true);
    if (self.config.leader_elect) {
        bas_lease_config_t lcfg = {self.config.lease_namespace,   self.config.lease_name,
                                   self.config.lease_identity,    self.config.lease_duration_ms,
                                   self.config.renew_deadline_ms, self.config.retry_period_ms};
        self.lease =
            bas_lease_new (bas_svc_loop (self.svc), self.kube, &lcfg, cache_leader_on_lease, &self);
        bas_svc_set_stop (self.svc, cache_leader_on_stop, &self);
    }
    bas_svc_timer (self.svc, CACHE_FLUSH_MS, 0, s_on_flush_timer, &self, "flush");
    bas_svc_timer (self.svc, CACHE_HEARTBEAT_MS, 0, cache_binders_on_heartbeat, &self, "heartbeat");
    bas_svc_set_ready (self.svc, cache_informers_ready, &self);
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
