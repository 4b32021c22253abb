/*  bas_usage: see bas_usage.h. */
#include "bas_usage.h"
#include "bas_util.h"

#include <stdlib.h>
#include <string.h>

const char *const bas_usage_phase_names[BAS_USAGE_PHASES] = {"Pending", "Inqueue", "Running",
                                                             "Completed", "Unknown"};

struct _bas_usage_t {
    zhashx_t *queues;            // name -> bas_usage_queue_t* (owned)
    zhashx_t *jobs;              // "ns/name" -> bas_usage_job_t* (owned)
    bas_usage_queue_t **qsorted; // queues by name
    bas_usage_job_t **jsorted;   // jobs by namespace/name
    size_t nqueues, njobs;
};

size_t
bas_usage_phase_index (const char *phase)
{
    if (!phase || !*phase)
        return 0;
    for (size_t i = 0; i < BAS_USAGE_PHASES; i++)
        if (strcmp (phase, bas_usage_phase_names[i]) == 0)
            return i;
    return BAS_USAGE_PHASES - 1;
}

//  Resources from the wire; a malformed list counts as nothing (the cache
//  already logged it when the object arrived).
static void
s_res (bas_res_t *r, const Basalt__V1__Resources *p)
{
    char err[128];
    if (bas_res_from_proto (r, p, err, sizeof err) != 0)
        bas_res_zero (r);
}

static bas_usage_queue_t *
s_queue (bas_usage_t *self, const char *name)
{
    bas_usage_queue_t *q = zhashx_lookup (self->queues, name);
    if (!q) {
        q = bas_alloc (sizeof *q);
        q->name = name;
        zhashx_insert (self->queues, name, q);
    }
    return q;
}

static void
s_on_queue (void *arg, const Basalt__V1__Object *obj)
{
    bas_usage_t *self = arg;
    const Basalt__V1__Queue *queue = obj->queue;
    if (!queue->name)
        return;
    bas_usage_queue_t *q = s_queue (self, queue->name);
    q->queue = queue;
    q->has_deserved = queue->deserved != NULL;
    q->has_capability = queue->capability != NULL;
    s_res (&q->deserved, queue->deserved);
    s_res (&q->capability, queue->capability);
}

static void
s_on_group (void *arg, const Basalt__V1__Object *obj)
{
    bas_usage_t *self = arg;
    const Basalt__V1__PodGroup *pg = obj->pod_group;
    char key[512];
    snprintf (key, sizeof key, "%s/%s", pg->namespace_ ? pg->namespace_ : "",
              pg->name ? pg->name : "");
    bas_usage_job_t *j = bas_alloc (sizeof *j);
    j->group = pg;
    j->queue = pg->queue && *pg->queue ? pg->queue : "default";
    if (zhashx_insert (self->jobs, key, j) != 0) {
        free (j); // two groups with one name: the store keys by uid; keep the first
        return;
    }
    bas_usage_queue_t *q = s_queue (self, j->queue);
    q->jobs++;
    const char *phase = pg->status ? pg->status->phase : NULL;
    size_t pi = bas_usage_phase_index (phase);
    q->phases[pi]++;
    if (pi == 1) { // Inqueue
        bas_res_t min;
        s_res (&min, pg->min_resources);
        bas_res_add (&q->inqueue, &min);
    }
}

static bool
s_terminated (const Basalt__V1__Pod *pod)
{
    return pod->phase &&
           (strcmp (pod->phase, "Succeeded") == 0 || strcmp (pod->phase, "Failed") == 0);
}

static void
s_on_pod (void *arg, const Basalt__V1__Object *obj)
{
    bas_usage_t *self = arg;
    const Basalt__V1__Pod *pod = obj->pod;
    if (!pod->group || !*pod->group)
        return;
    char key[512];
    snprintf (key, sizeof key, "%s/%s", pod->namespace_ ? pod->namespace_ : "", pod->group);
    bas_usage_job_t *j = zhashx_lookup (self->jobs, key);
    if (!j)
        return;
    j->pods++;
    if (s_terminated (pod)) {
        j->terminated++;
        return;
    }
    bas_res_t req;
    s_res (&req, pod->requests);
    bas_usage_queue_t *q = s_queue (self, j->queue);
    bas_res_add (&q->request, &req);
    bool bound = pod->node_name && *pod->node_name;
    bool assumed = !bound && pod->assumed_node && *pod->assumed_node;
    if (bound || assumed) {
        if (bound)
            j->bound++;
        else
            j->assumed++;
        bas_res_add (&j->allocated, &req);
        bas_res_add (&q->allocated, &req);
    } else if (!pod->deleting)
        j->pending++;
}

static int
s_queue_cmp (const void *a, const void *b)
{
    return strcmp ((*(bas_usage_queue_t *const *)a)->name, (*(bas_usage_queue_t *const *)b)->name);
}

static int
s_job_cmp (const void *a, const void *b)
{
    const Basalt__V1__PodGroup *x = (*(bas_usage_job_t *const *)a)->group;
    const Basalt__V1__PodGroup *y = (*(bas_usage_job_t *const *)b)->group;
    int c = strcmp (x->namespace_ ? x->namespace_ : "", y->namespace_ ? y->namespace_ : "");
    return c ? c : strcmp (x->name ? x->name : "", y->name ? y->name : "");
}

bas_usage_t *
bas_usage_new (bas_store_t *store)
{
    bas_usage_t *self = bas_alloc (sizeof *self);
    self->queues = zhashx_new ();
    zhashx_set_destructor (self->queues, (zhashx_destructor_fn *)zstr_free);
    self->jobs = zhashx_new ();
    zhashx_set_destructor (self->jobs, (zhashx_destructor_fn *)zstr_free);
    bas_store_foreach (store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_QUEUE, s_on_queue, self);
    bas_store_foreach (store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP, s_on_group, self);
    bas_store_foreach (store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, s_on_pod, self);

    self->nqueues = zhashx_size (self->queues);
    self->qsorted = bas_alloc (sizeof *self->qsorted * (self->nqueues + 1));
    size_t i = 0;
    for (bas_usage_queue_t *q = zhashx_first (self->queues); q; q = zhashx_next (self->queues))
        self->qsorted[i++] = q;
    qsort (self->qsorted, self->nqueues, sizeof *self->qsorted, s_queue_cmp);
    self->njobs = zhashx_size (self->jobs);
    self->jsorted = bas_alloc (sizeof *self->jsorted * (self->njobs + 1));
    i = 0;
    for (bas_usage_job_t *j = zhashx_first (self->jobs); j; j = zhashx_next (self->jobs))
        self->jsorted[i++] = j;
    qsort (self->jsorted, self->njobs, sizeof *self->jsorted, s_job_cmp);
    return self;
}

void
bas_usage_destroy (bas_usage_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    bas_usage_t *self = *self_p;
    free (self->qsorted);
    free (self->jsorted);
    zhashx_destroy (&self->queues);
    zhashx_destroy (&self->jobs);
    free (self);
    *self_p = NULL;
}

size_t
bas_usage_queue_count (bas_usage_t *self)
{
    return self->nqueues;
}

const bas_usage_queue_t *
bas_usage_queue (bas_usage_t *self, size_t i)
{
    return i < self->nqueues ? self->qsorted[i] : NULL;
}

size_t
bas_usage_job_count (bas_usage_t *self)
{
    return self->njobs;
}

const bas_usage_job_t *
bas_usage_job (bas_usage_t *self, size_t i)
{
    return i < self->njobs ? self->jsorted[i] : NULL;
}
