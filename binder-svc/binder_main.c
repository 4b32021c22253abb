/*  binder-svc: a stateless worker that performs API writes on the
    scheduler's behalf (DESIGN.md). Any number may run.

    Connects a DEALER to cache-svc's work endpoint, announces its credits
    (Ready), takes bind / evict / status work, performs each as one API
    request through the libcurl-multi client inside the reactor, and answers
    with a WorkResult, which also returns the credit. If the cache answers
    "unknown binder" (it restarted), the binder announces itself again.
    On SIGTERM it stops taking work and drains what is in flight. The
    conversation's rules (the lease, the freeze fence, what a heartbeat
    says) are bas_workq's worker end (common/bas_workq.h); this file wires
    it to the socket, the API client and the timers.
*/
#include "bas_kube.h"
#include "bas_util.h"
#include "bas_sock.h"
#include "bas_svc.h"
#include "bas_workq.h"
#include "binder_config.h"
#include "binder_defaults.h"
#include "binder_work.h"

typedef struct {
    binder_config_t config;
    bas_svc_t *svc;
    bas_metrics_t *metrics;
    bas_kube_t *kube;
    zsock_t *dealer;
    bas_stream_t stream;
    bas_workq_worker_t *workq; // the conversation with cache-svc (common/bas_workq.h)
    int64_t drain_deadline_ms; // SIGTERM: stop by then
} binder_t;

typedef struct {
    binder_t *binder;
    Basalt__V1__Work *work; // owned
    int64_t start_ms;
    void *held; // its handle in the worker (bas_workq_worker_started)
} s_call_t;

//  Send msg to cache-svc; a WorkResult answering `work` is counted.
static void
s_send (binder_t *self, ProtobufCMessage *msg, const Basalt__V1__Work *work)
{
    bas_svc_send (self->svc, self->dealer, &self->stream, NULL, "cache-svc", msg);
    if (work)
        binder_answer_count (self->metrics, work, (const Basalt__V1__WorkResult *)msg);
}

static void
s_send_ready (binder_t *self)
{
    Basalt__V1__Ready ready = BASALT__V1__READY__INIT;
    bas_workq_worker_ready (self->workq, &ready);
    s_send (self, &ready.base, NULL);
}

static void
s_send_heartbeat (binder_t *self)
{
    Basalt__V1__Heartbeat hb = BASALT__V1__HEARTBEAT__INIT;
    bas_workq_worker_heartbeat (self->workq, &hb);
    s_send (self, &hb.base, NULL);
}

static void
s_on_done (void *arg, const bas_kube_response_t *resp)
{
    s_call_t *call = arg;
    binder_t *self = call->binder;
    Basalt__V1__WorkResult r = BASALT__V1__WORK_RESULT__INIT;
    binder_result_judge (self->metrics, call->work, resp, bas_mono_ms () - call->start_ms, &r);
    s_send (self, &r.base, call->work);
    bas_workq_worker_finished (self->workq, call->held);
    bas_metrics_set (self->metrics, "basalt_binder_in_flight", NULL,
                     bas_workq_worker_in_flight (self->workq));
    basalt__v1__work__free_unpacked (call->work, NULL);
    free (call);
    if (bas_workq_worker_draining (self->workq) && bas_workq_worker_in_flight (self->workq) == 0)
        bas_svc_stop (self->svc);
}

static int
s_handle_work (void *arg, bas_msg_t *msg)
{
    binder_t *self = arg;
    Basalt__V1__Work *work = (Basalt__V1__Work *)msg->body;
    bas_workq_verdict_t v =
        bas_workq_worker_work (self->workq, msg->header, work, bas_mono_ms (), zclock_usecs ());
    if (v.send_heartbeat)
        s_send (self, &v.heartbeat.base, NULL); // a fence, raised just now
    Basalt__V1__WorkResult r = BASALT__V1__WORK_RESULT__INIT;
    if (!v.perform) {
        bas_metrics_add (self->metrics, "basalt_binder_work_expired_total", NULL, 1);
        bas_workq_worker_expired_result (work, &r);
        s_send (self, &r.base, work);
        return 0;
    }
    char err[256];
    binder_request_t req;
    if (binder_request_build (work, &req, err, sizeof err) != 0) {
        bas_warn ("work_invalid", "work_id=%llu msg=\"%s\"", (unsigned long long)work->work_id,
                  err);
        binder_result_fill (&r, work, false, 0, "BadWork", err);
        s_send (self, &r.base, work);
        return 0;
    }
    s_call_t *call = bas_alloc (sizeof *call);
    *call = (s_call_t){self, work, bas_mono_ms (),
                       bas_workq_worker_started (self->workq, work->work_id)};
    msg->body = NULL; // the call owns the work now
    bas_metrics_set (self->metrics, "basalt_binder_in_flight", NULL,
                     bas_workq_worker_in_flight (self->workq));
    if (bas_kube_request_until (self->kube, req.method, req.path, req.content_type, req.body,
                                v.deadline_ms, s_on_done, call) != 0) {
        bas_kube_response_t resp = {0, "", 0, "ClientError", "request could not be queued"};
        s_on_done (call, &resp);
    }
    free (req.body);
    return 0;
}

static int
s_handle_error (void *arg, bas_msg_t *msg)
{
    binder_t *self = arg;
    if (bas_workq_worker_error (self->workq, (const Basalt__V1__Error *)msg->body))
        s_send_ready (self);
    return 0;
}

static int
s_handle_heartbeat (void *arg, bas_msg_t *msg)
{
    binder_t *self = arg;
    bas_workq_worker_echo (self->workq, (const Basalt__V1__Heartbeat *)msg->body);
    return 0;
}

static const bas_handler_t s_handlers[] = {
    {&basalt__v1__work__descriptor, s_handle_work},
    {&basalt__v1__error__descriptor, s_handle_error},
    {&basalt__v1__heartbeat__descriptor, s_handle_heartbeat},
    {NULL, NULL},
};

//  The freeze watch's tick (bas_workq_worker_tick).
static int
s_on_watch (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    binder_t *self = arg;
    if (bas_workq_worker_tick (self->workq, bas_mono_ms ()))
        s_send_heartbeat (self);
    return 0;
}

static int
s_on_heartbeat (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    binder_t *self = arg;
    s_send_heartbeat (self);
    if (bas_workq_worker_draining (self->workq) && bas_mono_ms () > self->drain_deadline_ms) {
        bas_warn ("drain_timeout", "in_flight=%d", bas_workq_worker_in_flight (self->workq));
        return -1;
    }
    return 0;
}

//  Ready while taking work: a draining binder asks not to get any.
static bool
s_ready (void *arg, const char **reason)
{
    binder_t *self = arg;
    if (bas_workq_worker_draining (self->workq)) {
        *reason = "draining: finishing the writes in flight";
        return false;
    }
    return true;
}

static int
s_on_stop (void *arg)
{
    binder_t *self = arg;
    bas_workq_worker_drain (self->workq);
    self->drain_deadline_ms = bas_mono_ms () + BINDER_DRAIN_MS;
    s_send_ready (self); // zero credits: send no more
    bas_info ("draining", "in_flight=%d", bas_workq_worker_in_flight (self->workq));
    return bas_workq_worker_in_flight (self->workq) > 0 ? 1 : 0;
}

int
main (int argc, char **argv)
{
    binder_t self = {0};
    binder_config_init (&self.config);
    int exit_code = 0;
    self.svc =
        bas_svc_new ("binder-svc", "Basalt binder: performs API writes for the scheduler.",
                     binder_flags, &self.config, &self.config.common, argc, argv, &exit_code);
    if (!self.svc)
        return exit_code;
    if (binder_config_check (&self.config) != 0) {
        bas_svc_destroy (&self.svc);
        return 2;
    }
    self.metrics = bas_svc_metrics (self.svc);
    binder_metrics_describe (self.metrics);
    bas_stream_init (&self.stream, "binder-svc", bas_svc_epoch (self.svc));

    char err[512];
    bas_kube_config_t kcfg = {0};
    bas_sock_opts_t opts = binder_config_sock_opts (&self.config);
    self.dealer =
        bas_sock_new (ZMQ_DEALER, self.config.work_endpoint, false, &opts, err, sizeof err);
    if (!self.dealer) {
        bas_error ("socket_failed", "msg=\"%s\"", err);
        exit_code = 1;
        goto done;
    }
    self.kube =
        bas_svc_kube_new (self.svc, &self.config.kube, "basalt-binder/" BASALT_VERSION, &kcfg);
    if (!self.kube) {
        exit_code = 1;
        goto done;
    }
    self.workq = bas_workq_worker_new (self.config.binder_id, bas_svc_epoch (self.svc),
                                       self.config.concurrency, bas_mono_ms ());
    bas_svc_dispatch (self.svc, self.dealer, NULL, s_handlers, &self, "work", "cache-svc", false);
    bas_svc_timer (self.svc, BINDER_HEARTBEAT_MS, 0, s_on_heartbeat, &self, "heartbeat");
    bas_svc_timer (self.svc, BINDER_WATCH_MS, 0, s_on_watch, &self, "freeze watch");
    bas_svc_set_stop (self.svc, s_on_stop, &self);
    bas_svc_set_ready (self.svc, s_ready, &self);
    s_send_ready (&self);
    bas_info ("listening", "binder=%s work=%s credits=%d api=%s", bas_workq_worker_id (self.workq),
              self.config.work_endpoint, self.config.concurrency, kcfg.server);
    exit_code = bas_svc_run (self.svc);
done:
    bas_kube_destroy (&self.kube);
    bas_workq_worker_destroy (&self.workq);
    bas_kube_config_clear (&kcfg);
    bas_svc_keep (self.svc, &self.dealer); // not closed (bas_svc_exit)
    bas_svc_exit (&self.svc, exit_code);
}
