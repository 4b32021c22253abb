/*  cache_binders: cache-svc's binder ROUTER (--work-endpoint): the Work
    conversation's dispatcher end (bas_workq) handed its socket, the
    binders' Ready, WorkResult and Heartbeat, the work sent out, and the
    heartbeat timer that also beats the delta stream.

    Design note: the socket is bound only while this cache leads
    (cache_leader binds it at once without --leader-elect). Work goes out
    after each commit slice, each Ready and each result; a bind the API has
    already done, or can no longer do, is settled here instead of sent.
    Binder liveness is judged by the heartbeat timer, once the reactor has
    caught up with the binders' traffic, and never after a turn that held
    the reactor (a freeze is not the binders' silence).
*/
#include "cache_binders.h"
#include "bas_util.h"
#include "bas_work.h"
#include "cache_defaults.h"
#include "cache_metrics.h"

#include <stdio.h>

//  The binder lease must run out before the cache gives a silent binder's
//  work to another: a heartbeat's period (BINDER_HEARTBEAT_MS) and a margin.
_Static_assert(CACHE_BINDER_TIMEOUT_MS >= BAS_WORK_TTL_MS + 2000,
               "a binder may be declared lost while its work's lease still runs");

//  A result or heartbeat from a binder that never said Ready (on this
//  connection): ask it to.
static void
s_unknown_binder (cache_t *self, bas_msg_t *msg)
{
    bas_svc_send_error (self->svc, self->workers, &self->work_stream, msg->identity, "binder",
                        BASALT__V1__ERROR_CODE__ERROR_CODE_UNKNOWN_PEER,
                        "unknown binder: send Ready", msg->desc->name);
}

static void
s_count_result (cache_t *self, const char *kind, bool ok)
{
    char labels[64];
    snprintf (labels, sizeof labels, "kind=\"%s\",result=\"%s\"", kind, ok ? "ok" : "failed");
    bas_metrics_add (self->metrics, "basalt_work_results_total", labels, 1);
}

void
cache_binders_dispatch (cache_t *self)
{
    zframe_t *identity;
    Basalt__V1__Work *work;
    int64_t now = bas_mono_ms ();
    if (!cache_svc_leading (self))
        return; // a standby has no work; a lost leader hands out none
    //  Binds whose gang's claims are now bound (cache_claims.c).
    cache_model_take_ready (self->model, cache_binders_on_work, self);
    while (bas_workq_dispatcher_next (self->work, &identity, &work, now)) {
        //  A bind the API has already done (seen through the watch: the
        //  result of a lost binder, a re-issued item) or can no longer do
        //  (the pod is gone or on another node) is settled here, not sent.
        //  Likewise a claim write the watch shows done, or that nothing
        //  waits for any more (cache_claims.c).
        int moot = work->item_case == BASALT__V1__WORK__ITEM_BIND
                       ? cache_model_bind_moot (self->model, work->bind)
                   : work->item_case == BASALT__V1__WORK__ITEM_CLAIM
                       ? cache_claims_moot (self->model, work->claim)
                       : 0;
        if (moot != 0) {
            Basalt__V1__Work *w = bas_workq_dispatcher_done (self->work, identity, work->work_id);
            if (w) {
                cache_model_work_result (self->model, w, moot > 0,
                                         "the object is gone or changed since");
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

void
cache_binders_on_work (void *arg, Basalt__V1__Work **work_p)
{
    cache_t *self = arg;
    bas_workq_dispatcher_add (self->work, work_p);
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
    cache_binders_dispatch (self);
    return 0;
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
    cache_binders_dispatch (self);
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
        cache_binders_dispatch (self);
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

int
cache_binders_on_heartbeat (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    cache_t *self = arg;
    cache_svc_flush (self);
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
    //  Gangs whose claims took too long are pending again.
    cache_claims_expire (self->model, now);
    bas_metrics_set (self->metrics, "basalt_binders", NULL,
                     (double)bas_workq_dispatcher_binders (self->work));
    cache_binders_dispatch (self);
    cache_metrics_update (self->metrics, self->model, self->work);
    return 0;
}

//  The binder ROUTER, bound when this cache leads (at once without
//  --leader-elect): binders reach only a leader, also through a Service
//  that selects every replica (a standby refuses the connection).
int
cache_binders_bind (cache_t *self, char *err, size_t errlen)
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
