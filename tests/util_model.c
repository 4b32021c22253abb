/*  util_model: see util_model.h.

    Design note: messages are built with malloc/strdup so that the store can
    free them with protobuf_c_message_free_unpacked (system allocator). Each
    builder wraps its message in an Object, hands it to the store, and
    returns the stored copy (the same pointer: bas_store_upsert moves it).
*/
#include "util_model.h"
#include "bas_work.h"
#include "bas_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bas_resource.h"

//  Creation times increase in the order objects are added: 1000 + the
//  number of objects the store holds (no global counter).
static int64_t
s_next_time (bas_store_t *store)
{
    static const Basalt__V1__ObjectKind kinds[] = {
        BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD,
        BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP, BASALT__V1__OBJECT_KIND__OBJECT_KIND_QUEUE,
        BASALT__V1__OBJECT_KIND__OBJECT_KIND_PRIORITY_CLASS};
    int64_t n = 1000;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        n += (int64_t)bas_store_size (store, kinds[i]);
    return n;
}

static void *
s_new (size_t size)
{
    void *p = calloc (1, size);
    if (!p)
        abort ();
    return p;
}

static void
s_append (void ***arr, size_t *n, void *item)
{
    *arr = realloc (*arr, (*n + 1) * sizeof **arr);
    if (!*arr)
        abort ();
    (*arr)[(*n)++] = item;
}

static Basalt__V1__KeyValue *
s_kv (const char *key, const char *value)
{
    Basalt__V1__KeyValue *kv = s_new (sizeof *kv);
    basalt__v1__key_value__init (kv);
    kv->key = bas_strdup (key);
    kv->value = bas_strdup (value);
    return kv;
}

static void
s_upsert (bas_store_t *store, Basalt__V1__Object *obj)
{
    if (bas_store_upsert (store, &obj) != 0) {
        fprintf (stderr, "util_model: object has no key\n");
        abort ();
    }
}

Basalt__V1__Resources *
util_model_resources (const char *cpu, const char *memory, int pods)
{
    cJSON *list = cJSON_CreateObject ();
    if (cpu)
        cJSON_AddStringToObject (list, "cpu", cpu);
    if (memory)
        cJSON_AddStringToObject (list, "memory", memory);
    bas_res_t r;
    char err[256];
    if (bas_res_from_json (&r, list, "test", err, sizeof err) != 0) {
        fprintf (stderr, "util_model: %s\n", err);
        abort ();
    }
    cJSON_Delete (list);
    r.pods = pods;
    return bas_res_to_proto (&r);
}

Basalt__V1__Node *
util_model_node (bas_store_t *store, const char *name, const char *cpu, const char *memory,
                 int pods)
{
    Basalt__V1__Node *node = s_new (sizeof *node);
    basalt__v1__node__init (node);
    node->name = bas_strdup (name);
    node->uid = bas_strdup (name);
    node->allocatable = util_model_resources (cpu, memory, pods);
    node->has_ready = true;
    node->ready = true;
    Basalt__V1__Object *obj = s_new (sizeof *obj);
    basalt__v1__object__init (obj);
    obj->kind_case = BASALT__V1__OBJECT__KIND_NODE;
    obj->node = node;
    s_upsert (store, obj);
    return node;
}

Basalt__V1__Queue *
util_model_queue (bas_store_t *store, const char *name, const char *parent, int weight)
{
    Basalt__V1__Queue *q = s_new (sizeof *q);
    basalt__v1__queue__init (q);
    q->name = bas_strdup (name);
    q->uid = bas_strdup (name);
    if (parent)
        q->parent = bas_strdup (parent);
    q->has_weight = true;
    q->weight = weight;
    q->has_creation_time_ms = true;
    q->creation_time_ms = s_next_time (store);
    Basalt__V1__Object *obj = s_new (sizeof *obj);
    basalt__v1__object__init (obj);
    obj->kind_case = BASALT__V1__OBJECT__KIND_QUEUE;
    obj->queue = q;
    s_upsert (store, obj);
    return q;
}

//  The world's "default" queue, as controller-svc creates it (weight 1,
//  reclaimable), made the first time a test needs it; created before
//  anything else (time 0), as the implicit queue of a real cluster is.
static void
s_default_queue (bas_store_t *store)
{
    if (bas_store_queue (store, "default"))
        return;
    Basalt__V1__Queue *q = s_new (sizeof *q);
    basalt__v1__queue__init (q);
    q->name = bas_strdup ("default");
    q->uid = bas_strdup ("default");
    q->has_weight = true;
    q->weight = 1;
    q->has_creation_time_ms = true;
    q->creation_time_ms = 0;
    Basalt__V1__Object *obj = s_new (sizeof *obj);
    basalt__v1__object__init (obj);
    obj->kind_case = BASALT__V1__OBJECT__KIND_QUEUE;
    obj->queue = q;
    s_upsert (store, obj);
}

Basalt__V1__PodGroup *
util_model_pod_group (bas_store_t *store, const char *ns, const char *name, const char *queue,
                      int min_member)
{
    if (!queue || strcmp (queue, "default") == 0)
        s_default_queue (store);
    Basalt__V1__PodGroup *pg = s_new (sizeof *pg);
    basalt__v1__pod_group__init (pg);
    ns = ns ? ns : "default";
    pg->namespace_ = bas_strdup (ns);
    pg->name = bas_strdup (name);
    char uid[512];
    snprintf (uid, sizeof uid, "pg:%s/%s", ns, name);
    pg->uid = bas_strdup (uid);
    pg->resource_version = bas_strdup ("1");
    pg->queue = bas_strdup (queue ? queue : "default");
    pg->has_min_member = true;
    pg->min_member = min_member;
    pg->has_creation_time_ms = true;
    pg->creation_time_ms = s_next_time (store);
    Basalt__V1__Object *obj = s_new (sizeof *obj);
    basalt__v1__object__init (obj);
    obj->kind_case = BASALT__V1__OBJECT__KIND_POD_GROUP;
    obj->pod_group = pg;
    s_upsert (store, obj);
    return pg;
}

Basalt__V1__Pod *
util_model_pod (bas_store_t *store, const char *ns, const char *name, const char *group,
                const char *cpu, const char *memory)
{
    Basalt__V1__Pod *pod = s_new (sizeof *pod);
    basalt__v1__pod__init (pod);
    ns = ns ? ns : "default";
    pod->namespace_ = bas_strdup (ns);
    pod->name = bas_strdup (name);
    char uid[512];
    snprintf (uid, sizeof uid, "pod:%s/%s", ns, name);
    pod->uid = bas_strdup (uid);
    pod->resource_version = bas_strdup ("1");
    pod->phase = bas_strdup ("Pending");
    pod->scheduler_name = bas_strdup ("volcano");
    if (group)
        pod->group = bas_strdup (group);
    pod->requests = util_model_resources (cpu, memory, 0);
    pod->has_creation_time_ms = true;
    pod->creation_time_ms = s_next_time (store);
    Basalt__V1__Object *obj = s_new (sizeof *obj);
    basalt__v1__object__init (obj);
    obj->kind_case = BASALT__V1__OBJECT__KIND_POD;
    obj->pod = pod;
    s_upsert (store, obj);
    return pod;
}

Basalt__V1__PriorityClass *
util_model_priority_class (bas_store_t *store, const char *name, int value)
{
    Basalt__V1__PriorityClass *pc = s_new (sizeof *pc);
    basalt__v1__priority_class__init (pc);
    pc->name = bas_strdup (name);
    pc->has_value = true;
    pc->value = value;
    Basalt__V1__Object *obj = s_new (sizeof *obj);
    basalt__v1__object__init (obj);
    obj->kind_case = BASALT__V1__OBJECT__KIND_PRIORITY_CLASS;
    obj->priority_class = pc;
    s_upsert (store, obj);
    return pc;
}

void
util_model_label (Basalt__V1__Node *node, const char *key, const char *value)
{
    s_append ((void ***)&node->labels, &node->n_labels, s_kv (key, value));
}

void
util_model_taint (Basalt__V1__Node *node, const char *key, const char *value, const char *effect)
{
    Basalt__V1__Taint *t = s_new (sizeof *t);
    basalt__v1__taint__init (t);
    t->key = bas_strdup (key);
    t->value = bas_strdup (value);
    t->effect = bas_strdup (effect);
    s_append ((void ***)&node->taints, &node->n_taints, t);
}

void
util_model_selector (Basalt__V1__Pod *pod, const char *key, const char *value)
{
    s_append ((void ***)&pod->node_selector, &pod->n_node_selector, s_kv (key, value));
}

void
util_model_toleration (Basalt__V1__Pod *pod, const char *key, const char *op, const char *value,
                       const char *effect)
{
    Basalt__V1__Toleration *t = s_new (sizeof *t);
    basalt__v1__toleration__init (t);
    t->key = key ? bas_strdup (key) : NULL;
    t->operator_ = op ? bas_strdup (op) : NULL;
    t->value = value ? bas_strdup (value) : NULL;
    t->effect = effect ? bas_strdup (effect) : NULL;
    s_append ((void ***)&pod->tolerations, &pod->n_tolerations, t);
}

void
util_model_phase (Basalt__V1__PodGroup *pg, const char *phase)
{
    if (!pg->status) {
        pg->status = s_new (sizeof *pg->status);
        basalt__v1__pod_group_status__init (pg->status);
    }
    free (pg->status->phase);
    pg->status->phase = bas_strdup (phase);
}

void
util_model_bind (Basalt__V1__Pod *pod, const char *node, const char *phase)
{
    free (pod->node_name);
    pod->node_name = bas_strdup (node);
    free (pod->phase);
    pod->phase = bas_strdup (phase ? phase : "Running");
}

// ------------------------------------------------------------ feed back, look-ups

//  Split "ns/name" or "name" (namespace "default") into ns and the name.
static const char *
s_split (const char *ref, char *ns, size_t len)
{
    const char *slash = strchr (ref, '/');
    if (!slash) {
        snprintf (ns, len, "default");
        return ref;
    }
    snprintf (ns, len, "%.*s", (int)(slash - ref), ref);
    return slash + 1;
}

typedef struct {
    const char *ns;               // the namespace looked for
    const char *name;             // the name looked for
    const Basalt__V1__Pod *found; // the pod of that name (borrowed), or NULL
} s_find_t;

static void
s_find_pod (void *arg, const Basalt__V1__Object *obj)
{
    s_find_t *f = arg;
    const Basalt__V1__Pod *pod = obj->pod;
    if (!f->found && pod->name && strcmp (pod->name, f->name) == 0 &&
        strcmp (pod->namespace_ ? pod->namespace_ : "default", f->ns) == 0)
        f->found = pod;
}

const Basalt__V1__Pod *
util_model_find_pod (bas_store_t *store, const char *name)
{
    char ns[256];
    s_find_t f = {ns, s_split (name, ns, sizeof ns), NULL};
    bas_store_foreach (store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, s_find_pod, &f);
    return f.found;
}

const Basalt__V1__PodGroup *
util_model_find_pg (bas_store_t *store, const char *name)
{
    char ns[256];
    const char *base = s_split (name, ns, sizeof ns);
    return bas_store_pod_group_by_name (store, ns, base);
}

//  The uid of the pod or pod group `name` in store. A name the store does
//  not hold fails the test: "not placed" must mean a pod that exists and
//  was not placed, not a misspelt name.
static const char *
s_uid (bas_store_t *store, const char *name, bool pod)
{
    const char *uid = NULL;
    if (pod) {
        const Basalt__V1__Pod *p = util_model_find_pod (store, name);
        uid = p ? p->uid : NULL;
    } else {
        const Basalt__V1__PodGroup *pg = util_model_find_pg (store, name);
        uid = pg ? pg->uid : NULL;
    }
    if (!uid)
        fail_msg ("no %s named \"%s\" in the store", pod ? "pod" : "pod group", name);
    return uid;
}

const char *
util_model_placed (bas_store_t *store, const Basalt__V1__Commit *commit, const char *pod)
{
    const char *uid = s_uid (store, pod, true);
    for (size_t i = 0; i < commit->n_placements; i++) {
        const Basalt__V1__Placement *pl = commit->placements[i];
        if (!pl->pipelined && pl->pod_uid && strcmp (pl->pod_uid, uid) == 0)
            return pl->node;
    }
    return NULL;
}

int
util_model_placed_count (bas_store_t *store, const Basalt__V1__Commit *commit, const char *pg)
{
    const char *uid = s_uid (store, pg, false);
    int n = 0;
    for (size_t i = 0; i < commit->n_placements; i++) {
        const Basalt__V1__Placement *pl = commit->placements[i];
        if (!pl->pipelined && pl->job_uid && strcmp (pl->job_uid, uid) == 0)
            n++;
    }
    return n;
}

const Basalt__V1__PodGroupStatusChange *
util_model_status (bas_store_t *store, const Basalt__V1__Commit *commit, const char *pg)
{
    const char *uid = s_uid (store, pg, false);
    for (size_t i = 0; i < commit->n_statuses; i++)
        if (commit->statuses[i]->uid && strcmp (commit->statuses[i]->uid, uid) == 0)
            return commit->statuses[i];
    return NULL;
}

int
util_model_feed_back (bas_store_t *store, const Basalt__V1__Commit *commit, bool bind)
{
    for (size_t i = 0; i < commit->n_statuses; i++) {
        const Basalt__V1__PodGroupStatusChange *ch = commit->statuses[i];
        Basalt__V1__PodGroup *pg = (Basalt__V1__PodGroup *)bas_store_pod_group (store, ch->uid);
        if (!pg)
            continue;
        if (pg->status)
            protobuf_c_message_free_unpacked (&pg->status->base, NULL);
        pg->status = (Basalt__V1__PodGroupStatus *)bas_msg_dup (&ch->status->base);
    }
    if (bind)
        for (size_t i = 0; i < commit->n_placements; i++) {
            if (commit->placements[i]->pipelined)
                continue; // a reservation, not a bind
            Basalt__V1__Pod *pod =
                (Basalt__V1__Pod *)bas_store_pod (store, commit->placements[i]->pod_uid);
            if (pod)
                util_model_bind (pod, commit->placements[i]->node, "Running");
        }
    return 0;
}

Basalt__V1__Work *
util_model_empty_work (const ProtobufCFieldDescriptor *member)
{
    const ProtobufCMessageDescriptor *md = member->descriptor;
    ProtobufCMessage *msg = bas_alloc (md->sizeof_message);
    md->message_init (msg);
    return bas_work_new ((Basalt__V1__Work__ItemCase)member->id, msg);
}
