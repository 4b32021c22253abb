/*  cache_informers: cache-svc's view of the API server: one informer per
    row of the kind table feeds the model, and the model is "synced" (the
    process ready, sessions allowed to plan) once every informer has listed
    and the start fence has passed.

    Design note: an event changes the model only; the flush timer publishes
    the changes as one Delta, unless a batch grows past
    CACHE_DELTA_MAX_OBJECTS. The start fence (CACHE_START_FENCE_MS) keeps a
    started cache unsynced while an earlier cache-svc's binders may still
    write what it handed out, so no pod is placed twice across a restart.
*/
#include "cache_informers.h"
#include "bas_util.h"
#include "cache_binders.h"
#include "cache_defaults.h"

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

void
cache_informers_on_event (void *arg, bas_kube_event_t type, const cJSON *object)
{
    cache_informer_arg_t *ia = arg;
    cache_t *self = ia->cache;
    if (type == BAS_KUBE_SYNCED) {
        s_check_synced (self);
        return;
    }
    if (cache_model_api_event (self->model, ia->kind->kind, (int)type, object) != 0)
        bas_metrics_add (self->metrics, "basalt_api_decode_errors_total", NULL, 1);
    //  A claim the watch shows bound may open its gang's binds.
    if (cache_model_has_ready (self->model))
        cache_binders_dispatch (self);
    if (cache_model_dirty_count (self->model) >= CACHE_DELTA_MAX_OBJECTS)
        cache_svc_flush (self);
}

bool
cache_informers_ready (void *arg, const char **reason)
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
