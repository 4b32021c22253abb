/*  cache_svc: what every concern of cache-svc uses: publishing the model's
    changes and asking whether this process leads.

    Design note: cache-svc is one reactor over one state (cache_t,
    cache_svc.h). Its concerns live in files of their own, each including
    this header and, where it hands work on, cache_binders.h (the work
    dispatch), never a file that includes it back; cache_main.c creates
    the classes (the model, the Clone publisher, the Commit acceptor, the
    Work dispatcher, the lease), hands them the sockets and registers the
    concerns' handlers and timers.
*/
#include "cache_svc.h"

void
cache_svc_flush (cache_t *self)
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

bool
cache_svc_leading (cache_t *self)
{
    return !self->config.leader_elect || (self->lease && bas_lease_leading (self->lease));
}
