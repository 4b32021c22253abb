/*  binder-svc: a stateless worker that performs API writes on the
    scheduler's behalf (DESIGN.md). Any number may run.

    Connects a DEALER to cache-svc's work endpoint, announces its credits
    (Ready), takes bind / evict / status work, performs each as one API
    request through the libcurl-multi client inside the reactor, and answers
    with a WorkResult, which also returns the credit. If the cache answers
    "unknown binder" (it restarted), the binder announces itself again.
    On SIGTERM it stops taking work and drains what is in flight.
*/
#include "bas_kube.h"
#include "bas_util.h"
#include "bas_sock.h"
#include "bas_svc.h"
#include "binder_defaults.h"
#include "binder_work.h"

#include <string.h>
#include <unistd.h>

typedef struct {
    bas_svc_flags_t common;
    const char *work_endpoint;
    int concurrency;
    const char *binder_id;
    bas_kube_flags_t kube;
    const char *curve_server;
} binder_config_t;

static const bas_flag_t s_flags[] = {
    BAS_SVC_FLAGS (binder_config_t),
    BAS_KUBE_FLAGS (binder_config_t),
    {"work-endpoint", BAS_FLAG_STRING, offsetof (binder_config_t, work_endpoint), "ENDPOINT",
     "cache-svc's work ROUTER (connected)"},
    {"concurrency", BAS_FLAG_INT, offsetof (binder_config_t, concurrency), "N",
     "API writes in flight at once (credits announced to the cache)"},
    {"binder-id", BAS_FLAG_STRING, offsetof (binder_config_t, binder_id), "NAME",
     "name shown in the cache's logs (default host-pid)"},
    {"curve-server", BAS_FLAG_STRING, offsetof (binder_config_t, curve_server), "FILE",
     "cache-svc's public CURVE certificate"},
    {NULL},
};

typedef struct {
    binder_config_t config;
    bas_svc_t *svc;
    bas_metrics_t *metrics;
    bas_kube_t *kube;
    zsock_t *dealer;
    bas_stream_t stream;
    char id[64];
    char instance[160];    // this process for the cache: id and start epoch (Ready.instance)
    int in_flight;         // requests sent, not yet answered
    zlistx_t *calls;       // s_call_t in flight (borrowed: each call owns itself)
    uint64_t last_work_id; // the highest work id received from cache_epoch (in heartbeats)
    bool draining;         // SIGTERM: take no more work
    int64_t drain_deadline_ms;
    //  The clocks' offset: the least (receipt - send) wall time of the
    //  cache's messages, so that a message's age is measured without
    //  trusting the two clocks to agree (s_work_age_ms).
    uint64_t cache_epoch;
    int64_t watch_at_ms;     // the freeze watch's last tick (s_on_watch)
    uint64_t fence;          // after a freeze: the fence not yet echoed by the
                             // cache (all work expires until then), or 0
    uint64_t fences;         // fences raised so far (the next one's number)
    int64_t least_offset_us; // S_OFFSET_NONE before the first message
    int64_t least_at_ms;     // bas_mono_ms () when it was last brought forward
} binder_t;

#define S_OFFSET_NONE INT64_MAX
//  The least offset creeps up this many microseconds a second, so that a
//  cache clock stepped back (or drifting) is followed: 1 ms a second, far
//  above any real drift, far below any age that matters.
#define S_OFFSET_CREEP_US_PER_S 1000

typedef struct {
    binder_t *binder;
    Basalt__V1__Work *work; // owned
    int64_t start_ms;
    const char *method; // HTTP method of the request (static)
    void *handle;       // its place in binder_t.calls
} s_call_t;

static void
s_send_ready (binder_t *self)
{
    Basalt__V1__Ready ready = BASALT__V1__READY__INIT;
    ready.has_credits = 1;
    ready.credits = self->draining ? 0 : self->config.concurrency - self->in_flight;
    if (ready.credits < 0)
        ready.credits = 0;
    ready.binder_id = self->id;
    ready.instance = self->instance;
    bas_svc_send (self->svc, self->dealer, &self->stream, NULL, "cache-svc", &ready.base);
}

static void
s_answer (binder_t *self, const Basalt__V1__Work *work, bool ok, long code, const char *reason,
          const char *message)
{
    Basalt__V1__WorkResult r = BASALT__V1__WORK_RESULT__INIT;
    r.has_work_id = 1;
    r.work_id = work->work_id;
    r.has_ok = 1;
    r.ok = ok;
    r.has_http_code = 1;
    r.http_code = (int32_t)code;
    r.reason = (char *)reason;
    r.message = (char *)message;
    bas_svc_send (self->svc, self->dealer, &self->stream, NULL, "cache-svc", &r.base);
    char labels[96];
    snprintf (labels, sizeof labels, "kind=\"%s\",code=\"%ld\"", bas_work_name (work), code);
    bas_metrics_add (self->metrics, "basalt_binder_requests_total", labels, 1);
}

static void
s_on_done (void *arg, const bas_kube_response_t *resp)
{
    s_call_t *call = arg;
    binder_t *self = call->binder;
    bool ok = binder_result_ok (call->work, resp->code, resp->message);
    if (resp->code == 0 && resp->reason && strcmp (resp->reason, "Expired") == 0)
        bas_metrics_add (self->metrics, "basalt_binder_work_expired_total", NULL, 1);
    double ms = (double)(bas_mono_ms () - call->start_ms);
    char labels[64];
    snprintf (labels, sizeof labels, "kind=\"%s\"", bas_work_name (call->work));
    bas_metrics_observe (self->metrics, "basalt_binder_request_duration_milliseconds", labels, ms);
    if (call->work->item_case == BASALT__V1__WORK__ITEM_BIND) {
        const Basalt__V1__BindWork *b = call->work->bind;
        if (ok)
            bas_debug ("bound", "pod=%s/%s node=%s code=%ld", b->namespace_, b->name, b->node,
                       resp->code);
        else
            bas_warn ("bind_failed", "pod=%s/%s node=%s code=%ld reason=%s msg=\"%s\"",
                      b->namespace_, b->name, b->node, resp->code,
                      resp->reason ? resp->reason : "-", resp->message ? resp->message : "");
    } else if (!ok)
        bas_warn ("write_failed", "kind=%s code=%ld reason=%s msg=\"%s\"",
                  bas_work_name (call->work), resp->code, resp->reason ? resp->reason : "-",
                  resp->message ? resp->message : "");
    s_answer (self, call->work, ok, resp->code, resp->reason, resp->message);
    if (call->handle)
        zlistx_delete (self->calls, call->handle);
    self->in_flight--;
    bas_metrics_set (self->metrics, "basalt_binder_in_flight", NULL, self->in_flight);
    basalt__v1__work__free_unpacked (call->work, NULL);
    free (call);
    if (self->draining && self->in_flight == 0)
        bas_svc_stop (self->svc);
}

//  The request's method as a static string (the request is freed first).
static const char *
s_method (const char *method)
{
    static const char *const known[] = {"POST", "PUT", "PATCH", "DELETE", "GET"};
    for (size_t i = 0; method && i < sizeof known / sizeof known[0]; i++)
        if (strcmp (method, known[i]) == 0)
            return known[i];
    return "OTHER";
}

//  How long ago the cache sent this message, on the binder's clock: its
//  (receipt - send) wall time less the least such value seen (the clocks'
//  offset plus the link's least delay). A binder that was frozen reads the
//  messages queued meanwhile as old. The least value creeps up slowly, to
//  follow a clock that was stepped or a cache-svc started on another host
//  whose clock is behind; it is kept across cache epochs, because the first
//  message of a new cache-svc may be one that waited while this binder was
//  frozen (the kill soak found that starting afresh there let such work
//  through). A cache whose clock is ahead lowers it at once.
static int64_t
s_work_age_ms (binder_t *self, const bas_msg_t *msg)
{
    const Basalt__V1__Header *h = msg->header;
    if (!h || !h->has_send_time_us)
        return 0;
    int64_t now_ms = bas_mono_ms ();
    int64_t offset = zclock_usecs () - h->send_time_us;
    if (self->least_offset_us != S_OFFSET_NONE)
        self->least_offset_us += (now_ms - self->least_at_ms) * S_OFFSET_CREEP_US_PER_S / 1000;
    if (offset < self->least_offset_us)
        self->least_offset_us = offset;
    self->least_at_ms = now_ms;
    return (offset - self->least_offset_us) / 1000;
}

static void s_freeze_check (binder_t *self);

static int
s_handle_work (void *arg, bas_msg_t *msg)
{
    binder_t *self = arg;
    s_freeze_check (self);
    Basalt__V1__Work *work = (Basalt__V1__Work *)msg->body;
    //  A new cache (another epoch) numbers its work from 1 again: what this
    //  binder received from the one before says nothing about it.
    if (msg->header && msg->header->has_epoch && msg->header->epoch != self->cache_epoch) {
        self->cache_epoch = msg->header->epoch;
        self->last_work_id = 0;
    }
    if (work->work_id > self->last_work_id)
        self->last_work_id = work->work_id;
    //  Work older than its lease may have been re-issued to another binder
    //  already: do nothing with it, say so (the cache ignores the answer
    //  when it has re-issued the work, and plans again when it has not).
    int64_t age = s_work_age_ms (self, msg);
    //  After a freeze, until the cache echoes the fence, the work may have
    //  waited through it (s_freeze_check).
    if (age >= BAS_WORK_TTL_MS || self->fence) {
        bas_metrics_add (self->metrics, "basalt_binder_work_expired_total", NULL, 1);
        bas_warn ("work_expired", "work_id=%llu kind=%s age_ms=%lld",
                  (unsigned long long)work->work_id, bas_work_name (work), (long long)age);
        s_answer (self, work, false, 0, "Expired", "the work's lease ran out before it started");
        return 0;
    }
    char err[256];
    binder_request_t req;
    if (binder_request_build (work, &req, err, sizeof err) != 0) {
        bas_warn ("work_invalid", "work_id=%llu msg=\"%s\"", (unsigned long long)work->work_id,
                  err);
        s_answer (self, work, false, 0, "BadWork", err);
        return 0;
    }
    s_call_t *call = bas_alloc (sizeof *call);
    call->binder = self;
    call->work = work;
    call->start_ms = bas_mono_ms ();
    call->method = s_method (req.method);
    msg->body = NULL; // the call owns the work now
    call->handle = zlistx_add_end (self->calls, call);
    self->in_flight++;
    bas_metrics_set (self->metrics, "basalt_binder_in_flight", NULL, self->in_flight);
    //  No attempt starts once the lease has run out (bas_kube_request_until).
    int64_t deadline = call->start_ms + (BAS_WORK_TTL_MS - age);
    if (bas_kube_request_until (self->kube, req.method, req.path, req.content_type, req.body,
                                deadline, s_on_done, call) != 0) {
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
    const Basalt__V1__Error *e = (const Basalt__V1__Error *)msg->body;
    if (e->code == BASALT__V1__ERROR_CODE__ERROR_CODE_UNKNOWN_PEER) {
        //  The cache does not know us (it restarted): announce ourselves again.
        bas_info ("rejoin", "reason=\"%s\"", e->message ? e->message : "");
        s_send_ready (self);
    } else
        bas_warn ("cache_error", "code=%d msg=\"%s\"", e->code, e->message ? e->message : "");
    return 0;
}

//  The cache's answer to a fence: the work it sent before has all been read
//  (and answered Expired); from here on, work is judged by its age again.
static int
s_handle_heartbeat (void *arg, bas_msg_t *msg)
{
    binder_t *self = arg;
    const Basalt__V1__Heartbeat *hb = (const Basalt__V1__Heartbeat *)msg->body;
    if (self->fence && hb->has_fence_echo && hb->fence_echo == self->fence) {
        bas_info ("thawed", "fence=%llu msg=\"the cache answered the fence: work is taken again\"",
                  (unsigned long long)self->fence);
        self->fence = 0;
    }
    return 0;
}

static const bas_handler_t s_handlers[] = {
    {&basalt__v1__work__descriptor, s_handle_work},
    {&basalt__v1__error__descriptor, s_handle_error},
    {&basalt__v1__heartbeat__descriptor, s_handle_heartbeat},
    {NULL, NULL},
};

static void s_send_heartbeat (binder_t *self);

//  The freeze watch, every BINDER_WATCH_MS and at the top of the work
//  handler (which may run first when the freeze came before the loop
//  started: zloop then starts its timers afresh): a gap of a work lease
//  means this process was frozen (SIGSTOP, a stalled VM). What the cache
//  sent meanwhile may have been re-issued to another binder, and its age
//  cannot tell (the clocks' offset is learnt from these very messages when
//  the freeze came before the first one). So the binder raises a fence: a
//  number it sends the cache at once (and in every heartbeat until
//  answered), and answers every Work Expired until the cache's echo of it
//  arrives (the cache plans again what it has not re-issued). The work
//  connection keeps order, so whatever the cache sent before it read the
//  fence (which it read after the thaw) comes before the echo, whether it
//  waited on the socket or in the process's own I/O thread, frozen as
//  well. Nothing compares the cache's clock with this one's.
static void
s_freeze_check (binder_t *self)
{
    int64_t now = bas_mono_ms ();
    int64_t gap = now - self->watch_at_ms;
    self->watch_at_ms = now;
    if (gap < BAS_WORK_TTL_MS)
        return;
    self->fence = ++self->fences;
    bas_warn ("frozen",
              "ms=%lld fence=%llu msg=\"the process did not run for a work lease; the work the "
              "cache sent before it answers the fence is answered Expired\"",
              (long long)gap, (unsigned long long)self->fence);
    s_send_heartbeat (self);
}

static int
s_on_watch (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    s_freeze_check (arg);
    return 0;
}

static int
s_on_heartbeat (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    binder_t *self = arg;
    s_send_heartbeat (self);
    if (self->draining && bas_mono_ms () > self->drain_deadline_ms) {
        bas_warn ("drain_timeout", "in_flight=%d", self->in_flight);
        return -1;
    }
    return 0;
}

static void
s_send_heartbeat (binder_t *self)
{
    //  The heartbeat says which work this binder holds: the cache re-issues
    //  what it sent here, that this binder received (id <= last_work_id) and
    //  no longer holds, but whose result never reached it (lost with a
    //  connection that dropped), and never re-issues what is held.
    Basalt__V1__Heartbeat hb = BASALT__V1__HEARTBEAT__INIT;
    hb.service = self->id;
    hb.has_last_work_id = 1;
    hb.last_work_id = self->last_work_id;
    hb.has_work_epoch = 1;
    hb.work_epoch = self->cache_epoch;
    uint64_t *held = bas_malloc ((zlistx_size (self->calls) + 1) * sizeof *held);
    for (s_call_t *c = zlistx_first (self->calls); c; c = zlistx_next (self->calls))
        held[hb.n_work_held++] = c->work->work_id;
    hb.work_held = held;
    hb.has_fence = self->fence != 0;
    hb.fence = self->fence;
    bas_svc_send (self->svc, self->dealer, &self->stream, NULL, "cache-svc", &hb.base);
    free (held);
}

//  Ready while taking work: a draining binder asks not to get any.
static bool
s_ready (void *arg, const char **reason)
{
    binder_t *self = arg;
    if (self->draining) {
        *reason = "draining: finishing the writes in flight";
        return false;
    }
    return true;
}

static int
s_on_stop (void *arg)
{
    binder_t *self = arg;
    self->draining = true;
    self->drain_deadline_ms = bas_mono_ms () + BINDER_DRAIN_MS;
    s_send_ready (self); // zero credits: send no more
    bas_info ("draining", "in_flight=%d", self->in_flight);
    return self->in_flight > 0 ? 1 : 0;
}

int
main (int argc, char **argv)
{
    binder_t self = {0};
    self.config.common.http = BINDER_HTTP;
    self.config.work_endpoint = BINDER_WORK_ENDPOINT;
    self.config.concurrency = BINDER_CONCURRENCY;
    self.config.kube.qps = BINDER_KUBE_QPS;
    self.config.kube.burst = BINDER_KUBE_BURST;
    self.least_offset_us = S_OFFSET_NONE;
    int exit_code = 0;
    self.svc = bas_svc_new ("binder-svc", "Basalt binder: performs API writes for the scheduler.",
                            s_flags, &self.config, &self.config.common, argc, argv, &exit_code);
    if (!self.svc)
        return exit_code;
    if (self.config.concurrency < 1) {
        bas_error ("bad_flag", "flag=--concurrency value=%d msg=\"must be at least 1\"",
                   self.config.concurrency);
        bas_svc_destroy (&self.svc);
        return 2;
    }
    self.metrics = bas_svc_metrics (self.svc);
    double buckets[16];
    bas_metrics_exp_buckets (1, 2, 16, buckets);
    bas_metrics_describe (self.metrics, "basalt_binder_requests_total", BAS_METRIC_COUNTER,
                          "API writes by kind and HTTP code", NULL, 0);
    bas_metrics_describe (self.metrics, "basalt_binder_in_flight", BAS_METRIC_GAUGE,
                          "API writes in flight", NULL, 0);
    bas_metrics_describe (self.metrics, "basalt_binder_request_duration_milliseconds",
                          BAS_METRIC_HISTOGRAM, "API write latency by kind of work", buckets, 16);
    bas_metrics_describe (self.metrics, "basalt_binder_work_expired_total", BAS_METRIC_COUNTER,
                          "Work items not written because their lease (BAS_WORK_TTL_MS) ran out "
                          "before a request could start (a binder frozen, a cache restarted)",
                          NULL, 0);
    bas_metrics_set (self.metrics, "basalt_binder_in_flight", NULL, 0);
    bas_metrics_add (self.metrics, "basalt_binder_work_expired_total", NULL, 0);
    if (self.config.binder_id)
        snprintf (self.id, sizeof self.id, "%s", self.config.binder_id);
    else {
        char host[48] = "binder";
        gethostname (host, sizeof host - 1);
        snprintf (self.id, sizeof self.id, "%s-%d", host, (int)getpid ());
    }
    bas_stream_init (&self.stream, "binder-svc", bas_svc_epoch (self.svc));

    char err[512];
    bas_kube_config_t kcfg = {0};
    bas_sock_opts_t opts = bas_sock_opts_default ();
    opts.curve_cert = self.config.common.curve_cert;
    opts.curve_server = self.config.curve_server;
    //  One instance for this process's whole life, said in every Ready:
    //  when the connection to cache-svc drops and comes back (a cache
    //  frozen past the ZMTP heartbeat timeout), the cache answers the first
    //  message on the new connection "unknown binder: send Ready", and the
    //  Ready's instance gives this binder back the work it holds, instead
    //  of a new binder and this one declared lost. (Not a fixed ZeroMQ
    //  identity: bas_sock.h says why.)
    snprintf (self.instance, sizeof self.instance, "%s/%llu", self.id,
              (unsigned long long)bas_svc_epoch (self.svc));
    //  ZMTP heartbeats drop the connection only after a long silence: a
    //  cache whose reactor is held for seconds must find the results queued
    //  for it still there, not lost with a dropped connection. The cache
    //  judges binders on its own clock (and this binder resends what it
    //  holds in every heartbeat).
    opts.heartbeat_timeout_ms = BINDER_ZMTP_TIMEOUT_MS;
    opts.reconnect_ivl_max_ms = BINDER_RECONNECT_MAX_MS;
    self.calls = zlistx_new ();
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
    bas_svc_dispatch (self.svc, self.dealer, NULL, s_handlers, &self, "work", "cache-svc", false);
    bas_svc_timer (self.svc, BINDER_HEARTBEAT_MS, 0, s_on_heartbeat, &self, "heartbeat");
    self.watch_at_ms = bas_mono_ms ();
    bas_svc_timer (self.svc, BINDER_WATCH_MS, 0, s_on_watch, &self, "freeze watch");
    bas_svc_set_stop (self.svc, s_on_stop, &self);
    bas_svc_set_ready (self.svc, s_ready, &self);
    s_send_ready (&self);
    bas_info ("listening", "binder=%s work=%s credits=%d api=%s", self.id,
              self.config.work_endpoint, self.config.concurrency, kcfg.server);
    exit_code = bas_svc_run (self.svc);
done:
    bas_kube_destroy (&self.kube);
    zlistx_destroy (&self.calls); // the list only: each call is freed when its request ends
    bas_kube_config_clear (&kcfg);
    bas_svc_keep (self.svc, &self.dealer); // not closed (bas_svc_exit)
    bas_svc_exit (&self.svc, exit_code);
}
