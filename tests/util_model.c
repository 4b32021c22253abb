/*  util_model: see util_model.h.

    Design note: messages are built with malloc/strdup so that the store can
    free them with protobuf_c_message_free_unpacked (system allocator). Each
    builder wraps its message in an Object, hands it to the store, and
    returns the stored copy (the same pointer: bas_store_upsert moves it).
*/
#include "util_model.h"
#include "bas_work.h"
#include "bas_util.h"

#include "bas_k8s.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bas_resource.h"
#include "bas_yaml.h"

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

// ------------------------------------------------------------ scenario loader

static const char *
s_str (const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive (obj, key);
    return cJSON_IsString (v) ? v->valuestring : NULL;
}

static int
s_int (const cJSON *obj, const char *key, int dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive (obj, key);
    if (cJSON_IsNumber (v))
        return v->valueint;
    if (cJSON_IsString (v))
        return atoi (v->valuestring);
    return dflt;
}

static Basalt__V1__Resources *
s_resources (const cJSON *list, const char *where, char *err, size_t errlen)
{
    bas_res_t r;
    if (bas_res_from_json (&r, list, where, err, errlen) != 0)
        return NULL;
    return bas_res_to_proto (&r);
}

//  "p{2..4}" -> calls fn for p2, p3, p4; other names once.
typedef int (s_name_fn) (void *arg, const char *name);

static int
s_expand (const char *pattern, s_name_fn *fn, void *arg)
{
    const char *open = strchr (pattern, '{');
    const char *dots = open ? strstr (open, "..") : NULL;
    const char *close = dots ? strchr (dots, '}') : NULL;
    if (!open || !dots || !close)
        return fn (arg, pattern);
    int from = atoi (open + 1), to = atoi (dots + 2);
    char name[256];
    for (int i = from; i <= to; i++) {
        snprintf (name, sizeof name, "%.*s%d%s", (int)(open - pattern), pattern, i, close + 1);
        if (fn (arg, name) != 0)
            return -1;
    }
    return 0;
}

typedef struct {
    bas_store_t *store;
    const cJSON *spec;
    char *err;
    size_t errlen;
} s_pod_ctx_t;

//  The image of a pod's container when the file names none, as
//  basalt-scenario gives it (tools/scenario/scn_spec.c).
#define S_DEFAULT_IMAGE "registry.k8s.io/pause:3.9"

//  A list of image names as container objects named prefix0, prefix1, ...
static void
s_image_containers (cJSON *list, const cJSON *images, const char *prefix)
{
    int k = 0;
    const cJSON *it;
    cJSON_ArrayForEach (it, images)
    {
        char name[32], num[32];
        snprintf (name, sizeof name, "%s%d", prefix, k++);
        snprintf (num, sizeof num, "%g", it->valuedouble);
        cJSON *c = cJSON_CreateObject ();
        cJSON_AddStringToObject (c, "name", name);
        cJSON_AddStringToObject (c, "image", cJSON_IsString (it) ? it->valuestring : num);
        cJSON_AddItemToArray (list, c);
    }
}

//  labels, affinity, hostPorts, topologySpreadConstraints and the
//  containers' images (image, images, initImages), through the cache's own
//  decoder: the fields are written into a pod object as the scenario
//  runner writes them and decoded by bas_k8s_pod_from_json, whose results
//  replace the pod's.
static int
s_pod_placement_fields (Basalt__V1__Pod *pod, const cJSON *p, const char *name, char *err,
                        size_t errlen)
{
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive (p, "labels");
    const cJSON *affinity = cJSON_GetObjectItemCaseSensitive (p, "affinity");
    const cJSON *ports = cJSON_GetObjectItemCaseSensitive (p, "hostPorts");
    const cJSON *spread = cJSON_GetObjectItemCaseSensitive (p, "topologySpreadConstraints");
    const cJSON *image = cJSON_GetObjectItemCaseSensitive (p, "image");
    const cJSON *images = cJSON_GetObjectItemCaseSensitive (p, "images");
    const cJSON *inits = cJSON_GetObjectItemCaseSensitive (p, "initImages");
    if (image && images) {
        snprintf (err, errlen, "pod %s: image and images: give one or the other", name);
        return -1;
    }
    cJSON *obj = cJSON_CreateObject ();
    cJSON *meta = cJSON_AddObjectToObject (obj, "metadata");
    cJSON_AddStringToObject (meta, "name", name);
    cJSON_AddStringToObject (meta, "namespace", pod->namespace_ ? pod->namespace_ : "default");
    if (labels) {
        cJSON *l = cJSON_AddObjectToObject (meta, "labels");
        const cJSON *it;
        cJSON_ArrayForEach (it, labels)
        {
            char num[32];
            snprintf (num, sizeof num, "%g", it->valuedouble);
            cJSON_AddStringToObject (l, it->string, cJSON_IsString (it) ? it->valuestring : num);
        }
    }
    cJSON *spec = cJSON_AddObjectToObject (obj, "spec");
    if (pod->node_name) // a bound pod keeps no images, as the cache decodes it
        cJSON_AddStringToObject (spec, "nodeName", pod->node_name);
    if (affinity)
        cJSON_AddItemToObject (spec, "affinity", cJSON_Duplicate (affinity, true));
    if (spread)
        cJSON_AddItemToObject (spec, "topologySpreadConstraints", cJSON_Duplicate (spread, true));
    cJSON *c = cJSON_CreateObject ();
    cJSON_AddStringToObject (c, "name", "main");
    cJSON_AddStringToObject (c, "image", S_DEFAULT_IMAGE);
    cJSON *cports = cJSON_AddArrayToObject (c, "ports");
    const cJSON *it;
    cJSON_ArrayForEach (it, ports)
    {
        cJSON *cp = cJSON_CreateObject ();
        cJSON_AddNumberToObject (cp, "containerPort", it->valuedouble);
        cJSON_AddNumberToObject (cp, "hostPort", it->valuedouble);
        cJSON_AddItemToArray (cports, cp);
    }
    cJSON *containers = cJSON_AddArrayToObject (spec, "containers");
    if (images) {
        //  One container per image, the first with the ports.
        s_image_containers (containers, images, "c");
        cJSON *first = cJSON_GetArrayItem (containers, 0);
        if (first)
            cJSON_AddItemToObject (first, "ports", cJSON_DetachItemFromObject (c, "ports"));
        cJSON_Delete (c);
    } else {
        if (image)
            cJSON_ReplaceItemInObjectCaseSensitive (
                c, "image", cJSON_CreateString (cJSON_IsString (image) ? image->valuestring : ""));
        cJSON_AddItemToArray (containers, c);
    }
    s_image_containers (cJSON_AddArrayToObject (spec, "initContainers"), inits, "init-");
    Basalt__V1__Pod *d = bas_k8s_pod_from_json (obj, err, errlen);
    cJSON_Delete (obj);
    if (!d)
        return -1;
#define S_MOVE(field)                                                                              \
    do {                                                                                           \
        pod->n_##field = d->n_##field;                                                             \
        pod->field = d->field;                                                                     \
        d->n_##field = 0;                                                                          \
        d->field = NULL;                                                                           \
    } while (0)
    S_MOVE (affinity_terms);
    S_MOVE (images);
#undef S_MOVE
    free (pod->labels);
    pod->labels = d->labels;
    d->labels = NULL;
    //  What the decoder reads from labels when no annotation says it
    //  (volcano.sh/preemptable, volcano.sh/task-spec), as the cache sees it.
    if (!pod->preemptable) {
        pod->preemptable = d->preemptable;
        d->preemptable = NULL;
    }
    if (!pod->task_role) {
        pod->task_role = d->task_role;
        d->task_role = NULL;
    }
    if (pod->placement)
        protobuf_c_message_free_unpacked (&pod->placement->base, NULL);
    pod->placement = d->placement;
    d->placement = NULL;
    protobuf_c_message_free_unpacked (&d->base, NULL);
    return 0;
}

static int
s_add_pod (void *arg, const char *name)
{
    s_pod_ctx_t *ctx = arg;
    const cJSON *p = ctx->spec;
    const char *ns = s_str (p, "namespace");
    Basalt__V1__Pod *pod = util_model_pod (ctx->store, ns, name, s_str (p, "group"), NULL, NULL);
    protobuf_c_message_free_unpacked (&pod->requests->base, NULL);
    pod->requests =
        s_resources (cJSON_GetObjectItemCaseSensitive (p, "requests"), name, ctx->err, ctx->errlen);
    if (!pod->requests)
        return -1;
    if (s_str (p, "task"))
        pod->task_role = bas_strdup (s_str (p, "task"));
    if (s_str (p, "node"))
        util_model_bind (pod, s_str (p, "node"),
                         s_str (p, "phase") ? s_str (p, "phase") : "Running");
    else if (s_str (p, "phase")) {
        free (pod->phase);
        pod->phase = bas_strdup (s_str (p, "phase"));
    }
    if (s_str (p, "priorityClassName"))
        pod->priority_class_name = bas_strdup (s_str (p, "priorityClassName"));
    if (cJSON_GetObjectItemCaseSensitive (p, "priority")) {
        pod->has_priority = true;
        pod->priority = s_int (p, "priority", 0);
    }
    const cJSON *pre = cJSON_GetObjectItemCaseSensitive (p, "preemptable");
    if (pre)
        pod->preemptable = bas_strdup (cJSON_IsTrue (pre) ? "true" : "false");
    const char *policy = s_str (p, "preemptionPolicy");
    if (policy)
        pod->preemption_policy = bas_strdup (policy);
    const cJSON *sel = cJSON_GetObjectItemCaseSensitive (p, "nodeSelector");
    const cJSON *it;
    cJSON_ArrayForEach (it, sel)
    {
        if (cJSON_IsString (it))
            util_model_selector (pod, it->string, it->valuestring);
    }
    const cJSON *tols = cJSON_GetObjectItemCaseSensitive (p, "tolerations");
    cJSON_ArrayForEach (it, tols)
    {
        util_model_toleration (pod, s_str (it, "key"), s_str (it, "operator"), s_str (it, "value"),
                               s_str (it, "effect"));
    }
    return s_pod_placement_fields (pod, p, name, ctx->err, ctx->errlen);
}

//  The keys the scenario format allows (shared/scenarios/README.md):
//  anything else is an error, so a typo cannot pass silently.
static const char *const s_top_keys[] = {
    "name",   "description",    "config",          "sessions", "nodes",
    "queues", "podgroups",      "priorityClasses", "pods",     "manifests",
    "expect", "resourceQuotas", "hypernodes",      "steps",    NULL};
//  A step (tools/scenario/README.md): what it waits for, how many sessions
//  the wait may take, what it creates then.
static const char *const s_step_keys[] = {"until", "within", "create", NULL};
static const char *const s_until_keys[] = {
    "bound",         "boundCount",        "boundTotal",      "pending",  "podPhase",
    "podgroupPhase", "podgroupCondition", "podgroupMessage", "nodePods", NULL};
static const char *const s_hypernode_keys[] = {"name",       "tier",      "tierName",   "nodes",
                                               "hypernodes", "nodeRegex", "nodeLabels", NULL};
static const char *const s_quota_keys[] = {"name", "namespace", "hard", "used", NULL};
static const char *const s_node_keys[] = {"name",          "allocatable", "labels", "taints",
                                          "unschedulable", "images",      NULL};
static const char *const s_queue_keys[] = {"name",     "parent",    "weight",      "capability",
                                           "deserved", "guarantee", "reclaimable", "priority",
                                           "state",    "affinity",  "annotations", NULL};
static const char *const s_pg_keys[] = {"name",
                                        "namespace",
                                        "queue",
                                        "minMember",
                                        "minTaskMember",
                                        "minResources",
                                        "priorityClassName",
                                        "phase",
                                        "annotations",
                                        "networkTopology",
                                        NULL};
static const char *const s_pc_keys[] = {"name",        "value", "globalDefault", "preemptionPolicy",
                                        "description", NULL};
static const char *const s_pod_keys[] = {"name",
                                         "namespace",
                                         "group",
                                         "task",
                                         "requests",
                                         "node",
                                         "phase",
                                         "nodeSelector",
                                         "tolerations",
                                         "priorityClassName",
                                         "priority",
                                         "preemptable",
                                         "preemptionPolicy",
                                         "labels",
                                         "affinity",
                                         "hostPorts",
                                         "topologySpreadConstraints",
                                         "image",
                                         "images",
                                         "initImages",
                                         NULL};
static const char *const s_expect_keys[] = {
    "bound",           "boundCount",     "boundTotal",   "pending",       "podPhase",
    "pipelined",       "evicted",        "evictedCount", "podgroupPhase", "podgroupCondition",
    "podgroupMessage", "noStatusUpdate", "nodeState",    "nodePods",      NULL};

static int
s_keys_in (const cJSON *obj, const char *const *allowed, const char *where, char *err,
           size_t errlen)
{
    if (!cJSON_IsObject (obj)) {
        snprintf (err, errlen, "%s: expected a mapping", where);
        return -1;
    }
    const cJSON *it;
    cJSON_ArrayForEach (it, obj)
    {
        bool ok = false;
        for (const char *const *k = allowed; *k && !ok; k++)
            ok = strcmp (*k, it->string) == 0;
        if (!ok) {
            snprintf (err, errlen, "%s: unknown key \"%s\"", where, it->string);
            return -1;
        }
    }
    return 0;
}

static int
s_list_keys (const cJSON *doc, const char *list, const char *const *allowed, char *err,
             size_t errlen)
{
    const cJSON *it;
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive (doc, list))
    {
        if (s_keys_in (it, allowed, list, err, errlen) != 0)
            return -1;
    }
    return 0;
}

//  One manifest (Node, Pod, PodGroup, Queue, PriorityClass, ResourceQuota)
//  into the store.
static int
s_add_manifest (bas_store_t *store, const cJSON *m, int n, char *err, size_t errlen)
{
    cJSON *obj = cJSON_Duplicate (m, 1);
    cJSON *meta = cJSON_GetObjectItemCaseSensitive (obj, "metadata");
    if (!cJSON_IsObject (meta))
        meta = cJSON_AddObjectToObject (obj, "metadata");
    const char *kind = cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (obj, "kind"));
    if (!cJSON_GetObjectItemCaseSensitive (meta, "uid")) {
        //  A Pod or PodGroup gets the uid the file's own ones get
        //  ("pod:ns/name"), so expectations name it the same way.
        char uid[600];
        const char *name = cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (meta, "name"));
        const char *ns =
            cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (meta, "namespace"));
        bool named = name && kind && (!strcmp (kind, "Pod") || !strcmp (kind, "PodGroup"));
        if (named)
            snprintf (uid, sizeof uid, "%s:%s/%s", strcmp (kind, "Pod") ? "pg" : "pod",
                      ns ? ns : "default", name);
        else
            snprintf (uid, sizeof uid, "manifest-%d", n);
        cJSON_AddStringToObject (meta, "uid", uid);
    }
    Basalt__V1__Object *o = bas_k8s_object_from_json (bas_k8s_kind_named (kind), obj, err, errlen);
    if (!o) {
        char why[256];
        snprintf (why, sizeof why, "%s", err);
        snprintf (err, errlen, "manifest %d (%s): %s", n, kind ? kind : "no kind", why);
    }
    cJSON_Delete (obj); // kind points into it
    if (!o)
        return -1;
    if (o->kind_case == BASALT__V1__OBJECT__KIND_POD_GROUP && !o->pod_group->has_creation_time_ms) {
        o->pod_group->has_creation_time_ms = true;
        o->pod_group->creation_time_ms = s_next_time (store);
    }
    if (o->kind_case == BASALT__V1__OBJECT__KIND_POD && !o->pod->has_creation_time_ms) {
        o->pod->has_creation_time_ms = true;
        o->pod->creation_time_ms = s_next_time (store);
    }
    if (o->kind_case == BASALT__V1__OBJECT__KIND_POD && !o->pod->phase)
        o->pod->phase = bas_strdup ("Pending"); // what the API server gives on create
    s_upsert (store, o);
    return 0;
}

int
util_model_add_objects (bas_store_t *store, const cJSON *list, int first, char *err, size_t errlen)
{
    const cJSON *it;
    int n = first;
    cJSON_ArrayForEach (it, list)
    {
        if (s_add_manifest (store, it, n++, err, errlen) != 0)
            return -1;
    }
    return 0;
}

static int
s_check_keys (const cJSON *doc, char *err, size_t errlen)
{
    if (s_keys_in (doc, s_top_keys, "scenario", err, errlen) != 0 ||
        s_list_keys (doc, "nodes", s_node_keys, err, errlen) != 0 ||
        s_list_keys (doc, "queues", s_queue_keys, err, errlen) != 0 ||
        s_list_keys (doc, "podgroups", s_pg_keys, err, errlen) != 0 ||
        s_list_keys (doc, "priorityClasses", s_pc_keys, err, errlen) != 0 ||
        s_list_keys (doc, "pods", s_pod_keys, err, errlen) != 0 ||
        s_list_keys (doc, "resourceQuotas", s_quota_keys, err, errlen) != 0 ||
        s_list_keys (doc, "hypernodes", s_hypernode_keys, err, errlen) != 0)
        return -1;
    const cJSON *expect = cJSON_GetObjectItemCaseSensitive (doc, "expect");
    if (expect && s_keys_in (expect, s_expect_keys, "expect", err, errlen) != 0)
        return -1;
    if (s_list_keys (doc, "steps", s_step_keys, err, errlen) != 0)
        return -1;
    const cJSON *step;
    cJSON_ArrayForEach (step, cJSON_GetObjectItemCaseSensitive (doc, "steps"))
    {
        const cJSON *until = cJSON_GetObjectItemCaseSensitive (step, "until");
        const cJSON *within = cJSON_GetObjectItemCaseSensitive (step, "within");
        const cJSON *create = cJSON_GetObjectItemCaseSensitive (step, "create");
        if (s_keys_in (until, s_until_keys, "steps.until", err, errlen) != 0)
            return -1;
        if (cJSON_GetArraySize (until) == 0 || !cJSON_IsNumber (within) || within->valueint < 1 ||
            !cJSON_IsArray (create) || cJSON_GetArraySize (create) == 0) {
            snprintf (err, errlen,
                      "steps: each needs until (an expectation), within (sessions, "
                      "at least 1) and create (objects)");
            return -1;
        }
    }
    return 0;
}

int
util_model_load (bas_store_t *store, const char *yaml, size_t len, char **config_out,
                 int *sessions_out, char *err, size_t errlen)
{
    cJSON *doc = bas_yaml_to_json (yaml, len, err, errlen);
    if (!doc)
        return -1;
    int rc = -1;
    if (config_out)
        *config_out = s_str (doc, "config") ? bas_strdup (s_str (doc, "config")) : NULL;
    if (sessions_out)
        *sessions_out = s_int (doc, "sessions", 1);
    const cJSON *it;
    if (s_check_keys (doc, err, errlen) != 0)
        goto done;
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive (doc, "priorityClasses"))
    {
        Basalt__V1__PriorityClass *pc =
            util_model_priority_class (store, s_str (it, "name"), s_int (it, "value", 0));
        if (s_str (it, "preemptionPolicy"))
            pc->preemption_policy = bas_strdup (s_str (it, "preemptionPolicy"));
        if (cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (it, "globalDefault"))) {
            pc->has_global_default = true;
            pc->global_default = true;
        }
    }
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive (doc, "nodes"))
    {
        Basalt__V1__Node *node = util_model_node (store, s_str (it, "name"), NULL, NULL, 0);
        protobuf_c_message_free_unpacked (&node->allocatable->base, NULL);
        node->allocatable = s_resources (cJSON_GetObjectItemCaseSensitive (it, "allocatable"),
                                         node->name, err, errlen);
        if (!node->allocatable)
            goto done;
        const cJSON *kv;
        const cJSON *labels = cJSON_GetObjectItemCaseSensitive (it, "labels");
        cJSON_ArrayForEach (kv, labels)
        {
            if (cJSON_IsString (kv))
                util_model_label (node, kv->string, kv->valuestring);
        }
        //  Every node has its hostname label (the kubelet sets it), as
        //  basalt-scenario's nodes do.
        if (!cJSON_GetObjectItemCaseSensitive (labels, "kubernetes.io/hostname"))
            util_model_label (node, "kubernetes.io/hostname", node->name);
        cJSON_ArrayForEach (kv, cJSON_GetObjectItemCaseSensitive (it, "taints"))
        {
            util_model_taint (node, s_str (kv, "key"), s_str (kv, "value"), s_str (kv, "effect"));
        }
        node->unschedulable = cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (it, "unschedulable"));
        node->has_unschedulable = true;
        //  status.images through the cache's own decoder.
        const cJSON *images = cJSON_GetObjectItemCaseSensitive (it, "images");
        if (images) {
            cJSON *obj = cJSON_CreateObject ();
            cJSON_AddStringToObject (cJSON_AddObjectToObject (obj, "metadata"), "name", node->name);
            cJSON_AddItemToObject (cJSON_AddObjectToObject (obj, "status"), "images",
                                   cJSON_Duplicate (images, true));
            Basalt__V1__Node *d = bas_k8s_node_from_json (obj, err, errlen);
            cJSON_Delete (obj);
            if (!d)
                goto done;
            node->images = d->images;
            node->n_images = d->n_images;
            d->images = NULL;
            d->n_images = 0;
            protobuf_c_message_free_unpacked (&d->base, NULL);
        }
    }
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive (doc, "queues"))
    {
        Basalt__V1__Queue *q = util_model_queue (store, s_str (it, "name"), s_str (it, "parent"),
                                                 s_int (it, "weight", 1));
        const char *keys[] = {"capability", "deserved", "guarantee"};
        Basalt__V1__Resources **slots[] = {&q->capability, &q->deserved, &q->guarantee};
        for (int k = 0; k < 3; k++) {
            const cJSON *r = cJSON_GetObjectItemCaseSensitive (it, keys[k]);
            if (r && !(*slots[k] = s_resources (r, keys[k], err, errlen)))
                goto done;
        }
        if (cJSON_GetObjectItemCaseSensitive (it, "reclaimable")) {
            q->has_reclaimable = true;
            q->reclaimable = cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (it, "reclaimable"));
        }
        if (cJSON_GetObjectItemCaseSensitive (it, "priority")) {
            q->has_priority = true;
            q->priority = s_int (it, "priority", 0);
        }
        if (s_str (it, "state"))
            q->state = bas_strdup (s_str (it, "state"));
        //  spec.affinity and metadata.annotations through the cache's own
        //  decoder (annotation values as text, as basalt-scenario writes them).
        const cJSON *aff = cJSON_GetObjectItemCaseSensitive (it, "affinity");
        const cJSON *ann = cJSON_GetObjectItemCaseSensitive (it, "annotations");
        if (aff || ann) {
            cJSON *obj = cJSON_CreateObject ();
            cJSON *meta = cJSON_AddObjectToObject (obj, "metadata");
            cJSON_AddStringToObject (meta, "name", q->name);
            if (aff)
                cJSON_AddItemToObject (cJSON_AddObjectToObject (obj, "spec"), "affinity",
                                       cJSON_Duplicate (aff, true));
            if (ann) {
                cJSON *a = cJSON_AddObjectToObject (meta, "annotations");
                const cJSON *kv;
                cJSON_ArrayForEach (kv, ann)
                {
                    char num[64];
                    const char *text = cJSON_IsString (kv) ? kv->valuestring
                                       : cJSON_IsBool (kv) ? (cJSON_IsTrue (kv) ? "true" : "false")
                                                           : NULL;
                    if (!text && cJSON_IsNumber (kv)) {
                        snprintf (num, sizeof num, "%.15g", kv->valuedouble);
                        text = num;
                    }
                    cJSON_AddStringToObject (a, kv->string, text ? text : "");
                }
            }
            Basalt__V1__Queue *d = bas_k8s_queue_from_json (obj, err, errlen);
            cJSON_Delete (obj);
            if (!d)
                goto done;
            q->affinity = d->affinity;
            d->affinity = NULL;
            q->hierarchy = d->hierarchy;
            d->hierarchy = NULL;
            q->hierarchy_weights = d->hierarchy_weights;
            d->hierarchy_weights = NULL;
            q->nodegroup_resource_limits = d->nodegroup_resource_limits;
            d->nodegroup_resource_limits = NULL;
            protobuf_c_message_free_unpacked (&d->base, NULL);
        }
    }
    //  Manifests: whole API objects, through the cache's own decoders, with
    //  a uid and a creation time when they have none (as an API server gives).
    int nmanifest = 0;
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive (doc, "manifests"))
    {
        if (s_add_manifest (store, it, ++nmanifest, err, errlen) != 0)
            goto done;
    }
    s_default_queue (store); // the format: "default" exists unless listed
    //  ResourceQuotas, through the cache's own decoder.
    int nquota = 0;
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive (doc, "resourceQuotas"))
    {
        cJSON *obj = cJSON_CreateObject ();
        cJSON *meta = cJSON_AddObjectToObject (obj, "metadata");
        char uid[64];
        snprintf (uid, sizeof uid, "quota-%d", ++nquota);
        cJSON_AddStringToObject (meta, "uid", uid);
        cJSON_AddStringToObject (meta, "name", s_str (it, "name") ? s_str (it, "name") : uid);
        cJSON_AddStringToObject (meta, "namespace",
                                 s_str (it, "namespace") ? s_str (it, "namespace") : "default");
        cJSON_AddItemToObject (cJSON_AddObjectToObject (obj, "spec"), "hard",
                               cJSON_Duplicate (cJSON_GetObjectItemCaseSensitive (it, "hard"), 1));
        const cJSON *used = cJSON_GetObjectItemCaseSensitive (it, "used");
        cJSON_AddItemToObject (cJSON_AddObjectToObject (obj, "status"), "used",
                               used ? cJSON_Duplicate (used, 1) : cJSON_CreateObject ());
        Basalt__V1__ResourceQuota *q = bas_k8s_resourcequota_from_json (obj, err, errlen);
        cJSON_Delete (obj);
        if (!q)
            goto done;
        Basalt__V1__Object *o = s_new (sizeof *o);
        basalt__v1__object__init (o);
        o->kind_case = BASALT__V1__OBJECT__KIND_RESOURCE_QUOTA;
        o->resource_quota = q;
        s_upsert (store, o);
    }
    //  HyperNodes, through the cache's own decoder: each list entry one
    //  member, as the format says.
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive (doc, "hypernodes"))
    {
        cJSON *obj = cJSON_CreateObject ();
        cJSON *meta = cJSON_AddObjectToObject (obj, "metadata");
        cJSON_AddStringToObject (meta, "name", s_str (it, "name") ? s_str (it, "name") : "");
        cJSON *spec = cJSON_AddObjectToObject (obj, "spec");
        cJSON_AddNumberToObject (spec, "tier", s_int (it, "tier", -1));
        if (s_str (it, "tierName"))
            cJSON_AddStringToObject (spec, "tierName", s_str (it, "tierName"));
        cJSON *members = cJSON_AddArrayToObject (spec, "members");
        static const char *const lists[2][2] = {{"nodes", "Node"}, {"hypernodes", "HyperNode"}};
        for (int l = 0; l < 2; l++) {
            const cJSON *name;
            cJSON_ArrayForEach (name, cJSON_GetObjectItemCaseSensitive (it, lists[l][0]))
            {
                cJSON *m = cJSON_CreateObject ();
                cJSON_AddStringToObject (m, "type", lists[l][1]);
                cJSON *ex =
                    cJSON_AddObjectToObject (cJSON_AddObjectToObject (m, "selector"), "exactMatch");
                cJSON_AddStringToObject (ex, "name", cJSON_GetStringValue (name));
                cJSON_AddItemToArray (members, m);
            }
        }
        if (s_str (it, "nodeRegex")) {
            cJSON *m = cJSON_CreateObject ();
            cJSON_AddStringToObject (m, "type", "Node");
            cJSON *re =
                cJSON_AddObjectToObject (cJSON_AddObjectToObject (m, "selector"), "regexMatch");
            cJSON_AddStringToObject (re, "pattern", s_str (it, "nodeRegex"));
            cJSON_AddItemToArray (members, m);
        }
        const cJSON *labels = cJSON_GetObjectItemCaseSensitive (it, "nodeLabels");
        if (labels) {
            cJSON *m = cJSON_CreateObject ();
            cJSON_AddStringToObject (m, "type", "Node");
            cJSON *lm =
                cJSON_AddObjectToObject (cJSON_AddObjectToObject (m, "selector"), "labelMatch");
            cJSON_AddItemToObject (lm, "matchLabels", cJSON_Duplicate (labels, 1));
            cJSON_AddItemToArray (members, m);
        }
        Basalt__V1__HyperNode *hn = bas_k8s_hypernode_from_json (obj, err, errlen);
        cJSON_Delete (obj);
        if (!hn)
            goto done;
        Basalt__V1__Object *o = s_new (sizeof *o);
        basalt__v1__object__init (o);
        o->kind_case = BASALT__V1__OBJECT__KIND_HYPER_NODE;
        o->hyper_node = hn;
        s_upsert (store, o);
    }
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive (doc, "podgroups"))
    {
        Basalt__V1__PodGroup *pg =
            util_model_pod_group (store, s_str (it, "namespace"), s_str (it, "name"),
                                  s_str (it, "queue"), s_int (it, "minMember", 1));
        const cJSON *mr = cJSON_GetObjectItemCaseSensitive (it, "minResources");
        if (mr && !(pg->min_resources = s_resources (mr, "minResources", err, errlen)))
            goto done;
        if (s_str (it, "priorityClassName"))
            pg->priority_class_name = bas_strdup (s_str (it, "priorityClassName"));
        //  The PodGroup annotations the scheduler reads.
        const cJSON *ann = cJSON_GetObjectItemCaseSensitive (it, "annotations");
        const char *sla = s_str (ann, "sla-waiting-time");
        if (sla)
            pg->sla_waiting_time = bas_strdup (sla);
        //  Written unquoted (true/false) it is a YAML boolean: its text, as
        //  basalt-scenario gives the API server.
        const cJSON *preempt = cJSON_GetObjectItemCaseSensitive (ann, "volcano.sh/preemptable");
        if (cJSON_IsString (preempt))
            pg->preemptable = bas_strdup (preempt->valuestring);
        else if (cJSON_IsBool (preempt))
            pg->preemptable = bas_strdup (cJSON_IsTrue (preempt) ? "true" : "false");
        const char *topo[3] = {s_str (ann, BAS_ANN_TOPO_AFFINITY),
                               s_str (ann, BAS_ANN_TOPO_ANTI_AFFINITY),
                               s_str (ann, BAS_ANN_TOPO_TASK_ORDER)};
        if (topo[0])
            pg->task_topology_affinity = bas_strdup (topo[0]);
        if (topo[1])
            pg->task_topology_anti_affinity = bas_strdup (topo[1]);
        if (topo[2])
            pg->task_topology_task_order = bas_strdup (topo[2]);
        if (s_str (ann, BAS_ANN_ALLOCATED_HYPERNODE))
            pg->allocated_hypernode = bas_strdup (s_str (ann, BAS_ANN_ALLOCATED_HYPERNODE));
        const cJSON *nt = cJSON_GetObjectItemCaseSensitive (it, "networkTopology");
        if (nt) {
            pg->network_topology_mode =
                bas_strdup (s_str (nt, "mode") ? s_str (nt, "mode") : "hard");
            if (cJSON_GetObjectItemCaseSensitive (nt, "highestTierAllowed")) {
                pg->has_highest_tier_allowed = 1;
                pg->highest_tier_allowed = s_int (nt, "highestTierAllowed", 0);
            }
            if (s_str (nt, "highestTierName"))
                pg->highest_tier_name = bas_strdup (s_str (nt, "highestTierName"));
        }
        if (s_str (it, "phase"))
            util_model_phase (pg, s_str (it, "phase"));
        const cJSON *kv;
        cJSON_ArrayForEach (kv, cJSON_GetObjectItemCaseSensitive (it, "minTaskMember"))
        {
            char num[32];
            snprintf (num, sizeof num, "%d", cJSON_IsNumber (kv) ? kv->valueint : 0);
            s_append ((void ***)&pg->min_task_member, &pg->n_min_task_member,
                      s_kv (kv->string, num));
        }
    }
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive (doc, "pods"))
    {
        s_pod_ctx_t ctx = {store, it, err, errlen};
        if (s_expand (s_str (it, "name") ? s_str (it, "name") : "", s_add_pod, &ctx) != 0)
            goto done;
    }
    rc = 0;
done:
    cJSON_Delete (doc);
    return rc;
}

int
util_model_load_scenario (bas_store_t *store, const char *file, char **config_out,
                          int *sessions_out, char *err, size_t errlen)
{
    char path[1024];
    if (file[0] == '/')
        snprintf (path, sizeof path, "%s", file); // a path, not a shared scenario's name
    else
        snprintf (path, sizeof path, "%s/scenarios/%s", BASALT_SHARED_DIR, file);
    FILE *f = fopen (path, "rb");
    if (!f) {
        snprintf (err, errlen, "cannot open %s", path);
        return -1;
    }
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 > cap) {
            cap = cap ? cap * 2 : 8192;
            text = realloc (text, cap);
            if (!text)
                abort ();
        }
        size_t n = fread (text + len, 1, cap - len, f);
        if (n == 0)
            break;
        len += n;
    }
    fclose (f);
    int rc = util_model_load (store, text, len, config_out, sessions_out, err, errlen);
    free (text);
    return rc;
}

// ------------------------------------------------------------ feed back, look-ups

static void
s_pod_key (const char *name, char *buf, size_t len, const char *prefix)
{
    if (strchr (name, '/'))
        snprintf (buf, len, "%s:%s", prefix, name);
    else
        snprintf (buf, len, "%s:default/%s", prefix, name);
}

const Basalt__V1__Pod *
util_model_find_pod (bas_store_t *store, const char *name)
{
    char uid[512];
    s_pod_key (name, uid, sizeof uid, "pod");
    return bas_store_pod (store, uid);
}

const Basalt__V1__PodGroup *
util_model_find_pg (bas_store_t *store, const char *name)
{
    char uid[512];
    s_pod_key (name, uid, sizeof uid, "pg");
    return bas_store_pod_group (store, uid);
}

const char *
util_model_placed (const Basalt__V1__Commit *commit, const char *pod)
{
    char uid[512];
    s_pod_key (pod, uid, sizeof uid, "pod");
    for (size_t i = 0; i < commit->n_placements; i++)
        if (!commit->placements[i]->pipelined && strcmp (commit->placements[i]->pod_uid, uid) == 0)
            return commit->placements[i]->node;
    return NULL;
}

int
util_model_placed_count (const Basalt__V1__Commit *commit, const char *pg)
{
    char uid[512];
    s_pod_key (pg, uid, sizeof uid, "pg");
    int n = 0;
    for (size_t i = 0; i < commit->n_placements; i++)
        if (!commit->placements[i]->pipelined && strcmp (commit->placements[i]->job_uid, uid) == 0)
            n++;
    return n;
}

const Basalt__V1__PodGroupStatusChange *
util_model_status (const Basalt__V1__Commit *commit, const char *pg)
{
    char uid[512];
    s_pod_key (pg, uid, sizeof uid, "pg");
    for (size_t i = 0; i < commit->n_statuses; i++)
        if (strcmp (commit->statuses[i]->uid, uid) == 0)
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
