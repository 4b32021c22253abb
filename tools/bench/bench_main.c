/*  basalt-bench-session: one scheduling session over a synthetic cluster.

        basalt-bench-session [--nodes N] [--pods N] [--gang N] [--node-cpu Q]
                             [--node-memory Q] [--node-pods N] [--pod-cpu Q]
                             [--pod-memory Q] [--conf FILE] [--no-baseline]
                             [--constraints] [--images]

    Builds a replica like the one session-svc keeps (N nodes, one default
    queue, pending pods in gangs of --gang with minMember = gang size) and
    times one sess_run with Volcano's default configuration (or --conf).
    In the same invocation it times a trivial first-fit gang placement
    written here (no plugins, no ordering, no scoring) over the same
    replica, so the result is also reported as a ratio that does not depend
    on the machine. Prints one line:

        nodes=5000 pods=50000 gangs=16667 session_ms=… pods_per_s=…
        ms_per_gang=… placed=… firstfit_ms=… firstfit_placed=… ratio_vs_firstfit=…

    With --racks N the nodes are grouped in N tier-1 HyperNodes (8 to a
    tier-2 one) and every gang asks for networkTopology {mode: hard,
    highestTierAllowed: 1}; the same cluster without them is timed too.

    With --constraints every gang's pods repel each other per node (required
    pod anti-affinity on kubernetes.io/hostname, selecting the gang's own
    label) and every second gang also spreads over the zones (maxSkew 1,
    DoNotSchedule; nodes are in 10 zones); the same cluster without them is
    timed in the same invocation and the line adds plain_ms and
    ratio_vs_plain.

    With --images every node lists 20 images in status.images, each by a
    digest and a tag as kubelets report them (10 of the 20 application
    images the pods run, 500 MiB each, by the node's parity, and 10 others),
    and every pod runs one of the application images (by its gang), so
    nodeorder's ImageLocality score is on; the same cluster without images
    is timed too (plain_ms, ratio_vs_plain), as with --constraints.

    With --volumes every pending pod uses its own claim, fully bound to its
    own CSI volume (VolumeBinding, VolumeZone and NodeVolumeLimits all
    run; nothing restricts the nodes), with --volume-zones a volume whose
    zone label is its gang's zone (a tenth of the nodes); the same cluster
    without them is timed too. With --wffc every pending pod uses its own
    unbound claim of a WaitForFirstConsumer class with a CSI provisioner
    (the session matches it against the class's volumes, none, and
    provisions it on the node it picks); the same cluster without claims
    is timed too. With --wffc-local the claims' class has no provisioner
    and every node has local volumes for them (one per pod the node can
    hold, node affinity to its hostname): the session matches each claim
    with a volume on the node it tries.

    With --running N the cluster also holds N Running pods bound round
    robin, in Running gangs; --sessions K times K more sessions over the
    same replica with the model's storage kept between them, as
    session-svc's worker keeps it (the line adds the later sessions'
    median and slowest).

    Design note: this is a measurement, not a test; nothing here asserts a
    time. The model is built with the same wire objects cache-svc sends.
*/
#include "bas_log.h"
#include "bas_util.h"
#include "bas_resource.h"
#include "bas_store.h"
#include "sess_sched.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    long nodes;           // cluster size
    long pods;            // pending pods
    long gang;            // pods per gang (the last gang may be smaller)
    const char *node_cpu; // node allocatable
    const char *node_memory;
    long node_pods;
    const char *pod_cpu; // pod request
    const char *pod_memory;
    const char *conf_file; // scheduler configuration, NULL = default
    bool baseline;         // also time first-fit
    bool constraints;      // anti-affinity on every gang, spread on half
    long racks;            // > 0: that many tier-1 HyperNodes (8 per tier-2 spine) and every
                           // gang hard-bound to one rack
    bool images;           // nodes list images, pods run them (ImageLocality)
    bool volumes;          // every pending pod uses a bound claim on a CSI volume
    bool volume_zones;     // ...in its gang's zone (a zone label on the volume)
    bool zone_selector;    // every pending pod has a nodeSelector on its gang's zone
    bool wffc;             // every pending pod uses an unbound WaitForFirstConsumer claim
    bool wffc_local;       // ...of a class without provisioner, with local volumes on nodes
    long running;          // pods already Running (bound, in Running gangs), before the pending
    long sessions;         // sessions run one after another over the same replica
    bool settle;           // write each kept session's PodGroup statuses back to the replica
} bench_opts_t;

//  --images: application images the pods run, and other images per node.
#define S_BENCH_APP_IMAGES 20
#define S_BENCH_OTHER_IMAGES 10
#define S_BENCH_APP_IMAGE_BYTES (500LL * 1024 * 1024)
#define S_BENCH_OTHER_IMAGE_BYTES (100LL * 1024 * 1024)

static double
s_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

//  Resources from quantity strings; NULL with err on a bad quantity.
static Basalt__V1__Resources *
s_resources (const char *cpu, const char *memory, long pods, char *err, size_t errlen)
{
    cJSON *list = cJSON_CreateObject ();
    cJSON_AddStringToObject (list, "cpu", cpu);
    cJSON_AddStringToObject (list, "memory", memory);
    bas_res_t r;
    int rc = bas_res_from_json (&r, list, "resources", err, errlen);
    cJSON_Delete (list);
    if (rc != 0)
        return NULL;
    r.pods = pods;
    return bas_res_to_proto (&r);
}

static Basalt__V1__Object *
s_object (Basalt__V1__Object__KindCase kind)
{
    Basalt__V1__Object *obj = bas_alloc (sizeof *obj);
    basalt__v1__object__init (obj);
    obj->kind_case = kind;
    return obj;
}

static Basalt__V1__KeyValue *
s_kv (const char *key, const char *value)
{
    Basalt__V1__KeyValue *kv = bas_alloc (sizeof *kv);
    basalt__v1__key_value__init (kv);
    kv->key = bas_strdup (key);
    kv->value = bas_strdup (value);
    return kv;
}

//  A selector of the pods labelled gang=<name>.
static Basalt__V1__LabelSelector *
s_gang_selector (const char *gang)
{
    Basalt__V1__LabelSelector *sel = bas_alloc (sizeof *sel);
    basalt__v1__label_selector__init (sel);
    sel->match_labels = bas_alloc (sizeof *sel->match_labels);
    sel->match_labels[0] = s_kv ("gang", gang);
    sel->n_match_labels = 1;
    return sel;
}

//  --constraints: the gang label, one-per-node anti-affinity, and on every
//  second gang a zone spread.
static void
s_constrain (Basalt__V1__Pod *pod, const char *gang, long g)
{
    char labels[96];
    snprintf (labels, sizeof labels, "gang=%s", gang);
    pod->labels = bas_strdup (labels);
    Basalt__V1__PodPlacement *pl = bas_alloc (sizeof *pl);
    basalt__v1__pod_placement__init (pl);
    pod->placement = pl;
    Basalt__V1__PodAffinityTerm *term = bas_alloc (sizeof *term);
    basalt__v1__pod_affinity_term__init (term);
    term->label_selector = s_gang_selector (gang);
    term->topology_key = bas_strdup ("kubernetes.io/hostname");
    pl->pod_anti_affinity = bas_alloc (sizeof *pl->pod_anti_affinity);
    pl->pod_anti_affinity[0] = term;
    pl->n_pod_anti_affinity = 1;
    if (g % 2)
        return;
    Basalt__V1__TopologySpreadConstraint *c = bas_alloc (sizeof *c);
    basalt__v1__topology_spread_constraint__init (c);
    c->has_max_skew = true;
    c->max_skew = 1;
    c->topology_key = bas_strdup ("topology.kubernetes.io/zone");
    c->when_unsatisfiable = bas_strdup ("DoNotSchedule");
    c->label_selector = s_gang_selector (gang);
    pl->topology_spread = bas_alloc (sizeof *pl->topology_spread);
    pl->topology_spread[0] = c;
    pl->n_topology_spread = 1;
}

//  A HyperNode named name_fmt % index, of that tier, whose members are the
//  `type`s named member_fmt % i for i in [first, last).
static void
s_hypernode (bas_store_t *store, const char *name_fmt, long index, int tier, const char *type,
             const char *member_fmt, long first, long last)
{
    char name[64];
    Basalt__V1__HyperNode *hn = bas_alloc (sizeof *hn);
    basalt__v1__hyper_node__init (hn);
    snprintf (name, sizeof name, name_fmt, index);
    hn->name = bas_strdup (name);
    hn->has_tier = true;
    hn->tier = tier;
    hn->members = bas_alloc ((size_t)(last - first + 1) * sizeof *hn->members);
    for (long i = first; i < last; i++) {
        Basalt__V1__HyperNodeMember *m = bas_alloc (sizeof *m);
        basalt__v1__hyper_node_member__init (m);
        m->type = bas_strdup (type);
        snprintf (name, sizeof name, member_fmt, i);
        m->exact_name = bas_strdup (name);
        hn->members[hn->n_members++] = m;
    }
    Basalt__V1__Object *obj = s_object (BASALT__V1__OBJECT__KIND_HYPER_NODE);
    obj->hyper_node = hn;
    bas_store_upsert (store, &obj);
}

//  One status.images entry named by a digest and a tag.
static Basalt__V1__NodeImage *
s_node_image (const char *repo, int index, int64_t size)
{
    Basalt__V1__NodeImage *image = bas_alloc (sizeof *image);
    basalt__v1__node_image__init (image);
    char name[160];
    image->names = bas_alloc (2 * sizeof *image->names);
    snprintf (name, sizeof name, "registry.example/%s-%02d@sha256:%064d", repo, index, index);
    image->names[0] = bas_strdup (name);
    snprintf (name, sizeof name, "registry.example/%s-%02d:v1", repo, index);
    image->names[1] = bas_strdup (name);
    image->n_names = 2;
    image->has_size_bytes = true;
    image->size_bytes = size;
    return image;
}

//  --images: half of the application images (by the node's parity) and
//  the others.
static void
s_node_images (Basalt__V1__Node *node, long index)
{
    node->images =
        bas_alloc ((S_BENCH_APP_IMAGES / 2 + S_BENCH_OTHER_IMAGES) * sizeof *node->images);
    for (int j = (int)(index % 2); j < S_BENCH_APP_IMAGES; j += 2)
        node->images[node->n_images++] = s_node_image ("app", j, S_BENCH_APP_IMAGE_BYTES);
    for (int j = 0; j < S_BENCH_OTHER_IMAGES; j++)
        node->images[node->n_images++] = s_node_image ("other", j, S_BENCH_OTHER_IMAGE_BYTES);
}

//  --volumes: the pod's own claim, fully bound to its own CSI volume (with
//  --volume-zones in its gang's zone: nodes are in 10 zones), so
//  VolumeBinding, VolumeZone and NodeVolumeLimits all have work.
static void
s_pod_volume (bas_store_t *store, Basalt__V1__Pod *pod, long g, bool zoned)
{
    char name[160], zone[32];
    snprintf (name, sizeof name, "data-%s", pod->name);
    snprintf (zone, sizeof zone, "zone-%ld", g % 10);
    Basalt__V1__PersistentVolumeClaim *pvc = bas_alloc (sizeof *pvc);
    basalt__v1__persistent_volume_claim__init (pvc);
    pvc->namespace_ = bas_strdup ("default");
    pvc->name = bas_strdup (name);
    char uid[200];
    snprintf (uid, sizeof uid, "pvc:default/%s", name);
    pvc->uid = bas_strdup (uid);
    snprintf (name, sizeof name, "pv-%s", pod->name);
    pvc->volume_name = bas_strdup (name);
    pvc->has_bind_completed = pvc->bind_completed = true;
    pvc->phase = bas_strdup ("Bound");
    pvc->storage_class = bas_strdup ("disk");
    Basalt__V1__PersistentVolume *pv = bas_alloc (sizeof *pv);
    basalt__v1__persistent_volume__init (pv);
    pv->name = bas_strdup (name);
    pv->uid = bas_strdup (name);
    pv->phase = bas_strdup ("Bound");
    pv->storage_class = bas_strdup ("disk");
    pv->csi_driver = bas_strdup ("disk.example.com");
    pv->csi_volume_handle = bas_strdup (name);
    if (zoned) {
        pv->labels = bas_alloc (sizeof *pv->labels);
        pv->labels[0] = s_kv ("topology.kubernetes.io/zone", zone);
        pv->n_labels = 1;
    }
    pod->claims = bas_alloc (sizeof *pod->claims);
    pod->claims[0] = bas_alloc (sizeof *pod->claims[0]);
    basalt__v1__pod_claim__init (pod->claims[0]);
    pod->claims[0]->name = bas_strdup (pvc->name);
    pod->n_claims = 1;
    Basalt__V1__Object *obj = s_object (BASALT__V1__OBJECT__KIND_PERSISTENT_VOLUME_CLAIM);
    obj->persistent_volume_claim = pvc;
    bas_store_upsert (store, &obj);
    obj = s_object (BASALT__V1__OBJECT__KIND_PERSISTENT_VOLUME);
    obj->persistent_volume = pv;
    bas_store_upsert (store, &obj);
}

//  --wffc: the pod's own claim, unbound, of the class "wffc"
//  (WaitForFirstConsumer, provisioned by disk.example.com).
static void
s_pod_wffc (bas_store_t *store, Basalt__V1__Pod *pod)
{
    char name[160], uid[200];
    snprintf (name, sizeof name, "data-%s", pod->name);
    snprintf (uid, sizeof uid, "pvc:default/%s", name);
    Basalt__V1__PersistentVolumeClaim *pvc = bas_alloc (sizeof *pvc);
    basalt__v1__persistent_volume_claim__init (pvc);
    pvc->namespace_ = bas_strdup ("default");
    pvc->name = bas_strdup (name);
    pvc->uid = bas_strdup (uid);
    pvc->phase = bas_strdup ("Pending");
    pvc->storage_class = bas_strdup ("wffc");
    pvc->access_modes = bas_alloc (sizeof *pvc->access_modes);
    pvc->access_modes[0] = bas_strdup ("ReadWriteOnce");
    pvc->n_access_modes = 1;
    pvc->has_request_bytes = true;
    pvc->request_bytes = 10LL << 30;
    pod->claims = bas_alloc (sizeof *pod->claims);
    pod->claims[0] = bas_alloc (sizeof *pod->claims[0]);
    basalt__v1__pod_claim__init (pod->claims[0]);
    pod->claims[0]->name = bas_strdup (name);
    pod->n_claims = 1;
    Basalt__V1__Object *obj = s_object (BASALT__V1__OBJECT__KIND_PERSISTENT_VOLUME_CLAIM);
    obj->persistent_volume_claim = pvc;
    bas_store_upsert (store, &obj);
}

//  --wffc-local: `count` local volumes of the class on the node, each with
//  node affinity to its hostname.
static void
s_local_volumes (bas_store_t *store, const char *node, long count)
{
    for (long k = 0; k < count; k++) {
        char name[128];
        snprintf (name, sizeof name, "local-%s-%03ld", node, k);
        Basalt__V1__PersistentVolume *pv = bas_alloc (sizeof *pv);
        basalt__v1__persistent_volume__init (pv);
        pv->name = bas_strdup (name);
        pv->uid = bas_strdup (name);
        pv->phase = bas_strdup ("Available");
        pv->storage_class = bas_strdup ("wffc");
        pv->access_modes = bas_alloc (sizeof *pv->access_modes);
        pv->access_modes[0] = bas_strdup ("ReadWriteOnce");
        pv->n_access_modes = 1;
        pv->has_capacity_bytes = true;
        pv->capacity_bytes = 100LL << 30;
        pv->has_has_node_affinity = pv->has_node_affinity = true;
        Basalt__V1__NodeSelectorTerm *term = bas_alloc (sizeof *term);
        basalt__v1__node_selector_term__init (term);
        Basalt__V1__NodeSelectorRequirement *req = bas_alloc (sizeof *req);
        basalt__v1__node_selector_requirement__init (req);
        req->key = bas_strdup ("kubernetes.io/hostname");
        req->operator_ = bas_strdup ("In");
        req->values = bas_alloc (sizeof *req->values);
        req->values[0] = bas_strdup (node);
        req->n_values = 1;
        term->match_expressions = bas_alloc (sizeof *term->match_expressions);
        term->match_expressions[0] = req;
        term->n_match_expressions = 1;
        pv->node_affinity = bas_alloc (sizeof *pv->node_affinity);
        pv->node_affinity[0] = term;
        pv->n_node_affinity = 1;
        Basalt__V1__Object *obj = s_object (BASALT__V1__OBJECT__KIND_PERSISTENT_VOLUME);
        obj->persistent_volume = pv;
        bas_store_upsert (store, &obj);
    }
}

static void
s_wffc_class (bas_store_t *store, bool local)
{
    Basalt__V1__StorageClass *sc = bas_alloc (sizeof *sc);
    basalt__v1__storage_class__init (sc);
    sc->name = bas_strdup ("wffc");
    sc->uid = bas_strdup ("wffc");
    sc->provisioner = bas_strdup (local ? "kubernetes.io/no-provisioner" : "disk.example.com");
    sc->volume_binding_mode = bas_strdup ("WaitForFirstConsumer");
    Basalt__V1__Object *obj = s_object (BASALT__V1__OBJECT__KIND_STORAGE_CLASS);
    obj->storage_class = sc;
    bas_store_upsert (store, &obj);
}

static int
s_build (bas_store_t *store, const bench_opts_t *o, long *gangs_out, char *err, size_t errlen)
{
    if (o->wffc)
        s_wffc_class (store, o->wffc_local);
    int64_t clock = 1000;
    char name[64];
    for (long i = 0; i < o->nodes; i++) {
        Basalt__V1__Node *node = bas_alloc (sizeof *node);
        basalt__v1__node__init (node);
        snprintf (name, sizeof name, "node-%05ld", i);
        node->name = bas_strdup (name);
        node->uid = bas_strdup (name);
        node->allocatable = s_resources (o->node_cpu, o->node_memory, o->node_pods, err, errlen);
        if (!node->allocatable) {
            protobuf_c_message_free_unpacked (&node->base, NULL);
            return -1;
        }
        node->has_ready = node->ready = true;
        node->has_unschedulable = true;
        char zone[32];
        snprintf (zone, sizeof zone, "zone-%ld", i % 10);
        node->labels = bas_alloc (2 * sizeof *node->labels);
        node->labels[0] = s_kv ("kubernetes.io/hostname", name);
        node->labels[1] = s_kv ("topology.kubernetes.io/zone", zone);
        node->n_labels = 2;
        if (o->images)
            s_node_images (node, i);
        if (o->wffc_local)
            s_local_volumes (store, name, o->pods / (o->nodes > 0 ? o->nodes : 1) + 1);
        Basalt__V1__Object *obj = s_object (BASALT__V1__OBJECT__KIND_NODE);
        obj->node = node;
        bas_store_upsert (store, &obj);
    }
    //  --racks: contiguous blocks of nodes, racks in spines of 8.
    for (long r = 0; r < o->racks; r++)
        s_hypernode (store, "rack-%04ld", r, 1, "Node", "node-%05ld", r * o->nodes / o->racks,
                     (r + 1) * o->nodes / o->racks);
    for (long sp = 0; sp * 8 < o->racks; sp++)
        s_hypernode (store, "spine-%03ld", sp, 2, "HyperNode", "rack-%04ld", sp * 8,
                     sp * 8 + 8 < o->racks ? sp * 8 + 8 : o->racks);
    Basalt__V1__Queue *q = bas_alloc (sizeof *q);
    basalt__v1__queue__init (q);
    q->name = bas_strdup ("default");
    q->uid = bas_strdup ("default");
    q->has_weight = true;
    q->weight = 1;
    q->has_creation_time_ms = true;
    q->creation_time_ms = clock++;
    Basalt__V1__Object *qobj = s_object (BASALT__V1__OBJECT__KIND_QUEUE);
    qobj->queue = q;
    bas_store_upsert (store, &qobj);

    //  The running gangs first (created earlier), then the pending ones.
    long rgangs = (o->running + o->gang - 1) / o->gang;
    long pgangs = (o->pods + o->gang - 1) / o->gang;
    long gangs = rgangs + pgangs;
    long bound = 0; // running pods placed so far, round robin over the nodes
    for (long g = 0; g < gangs; g++) {
        bool running = g < rgangs;
        long total = running ? o->running : o->pods;
        long last = running ? rgangs - 1 : gangs - 1;
        long size = g == last && total % o->gang ? total % o->gang : o->gang;
        Basalt__V1__PodGroup *pg = bas_alloc (sizeof *pg);
        basalt__v1__pod_group__init (pg);
        snprintf (name, sizeof name, "gang-%06ld", g);
        pg->namespace_ = bas_strdup ("default");
        pg->name = bas_strdup (name);
        char uid[160];
        snprintf (uid, sizeof uid, "pg:default/%s", name);
        pg->uid = bas_strdup (uid);
        pg->resource_version = bas_strdup ("1");
        pg->queue = bas_strdup ("default");
        pg->has_min_member = true;
        pg->min_member = (int32_t)size;
        pg->has_creation_time_ms = true;
        pg->creation_time_ms = clock++;
        pg->status = bas_alloc (sizeof *pg->status);
        basalt__v1__pod_group_status__init (pg->status);
        pg->status->phase = bas_strdup (running ? "Running" : "Pending");
        if (running) {
            pg->status->has_running = true;
            pg->status->running = (int32_t)size;
        }
        if (o->racks > 0) {
            pg->network_topology_mode = bas_strdup ("hard");
            pg->has_highest_tier_allowed = true;
            pg->highest_tier_allowed = 1;
        }
        Basalt__V1__Object *obj = s_object (BASALT__V1__OBJECT__KIND_POD_GROUP);
        obj->pod_group = pg;
        bas_store_upsert (store, &obj);
        for (long t = 0; t < size; t++) {
            Basalt__V1__Pod *pod = bas_alloc (sizeof *pod);
            basalt__v1__pod__init (pod);
            char pname[96];
            snprintf (pname, sizeof pname, "%s-%ld", name, t);
            snprintf (uid, sizeof uid, "pod:default/%s", pname);
            pod->namespace_ = bas_strdup ("default");
            pod->name = bas_strdup (pname);
            pod->uid = bas_strdup (uid);
            pod->resource_version = bas_strdup ("1");
            pod->phase = bas_strdup (running ? "Running" : "Pending");
            if (running) {
                snprintf (pname, sizeof pname, "node-%05ld", bound++ % o->nodes);
                pod->node_name = bas_strdup (pname);
                snprintf (pname, sizeof pname, "%s-%ld", name, t);
            }
            pod->scheduler_name = bas_strdup ("volcano");
            pod->group = bas_strdup (name);
            pod->requests = s_resources (o->pod_cpu, o->pod_memory, 1, err, errlen);
            if (!pod->requests) {
                protobuf_c_message_free_unpacked (&pod->base, NULL);
                return -1;
            }
            pod->has_creation_time_ms = true;
            pod->creation_time_ms = clock++;
            if (o->constraints)
                s_constrain (pod, name, g);
            if (o->images) {
                char image[96];
                snprintf (image, sizeof image, "registry.example/app-%02ld:v1",
                          g % S_BENCH_APP_IMAGES);
                pod->images = bas_alloc (sizeof *pod->images);
                pod->images[0] = bas_strdup (image);
                pod->n_images = 1;
            }
            if (o->volumes && !running)
                s_pod_volume (store, pod, g, o->volume_zones);
            if (o->wffc && !running)
                s_pod_wffc (store, pod);
            if (o->zone_selector && !running) {
                char zone[32];
                snprintf (zone, sizeof zone, "zone-%ld", g % 10);
                pod->node_selector = bas_alloc (sizeof *pod->node_selector);
                pod->node_selector[0] = s_kv ("topology.kubernetes.io/zone", zone);
                pod->n_node_selector = 1;
            }
            Basalt__V1__Object *pobj = s_object (BASALT__V1__OBJECT__KIND_POD);
            pobj->pod = pod;
            bas_store_upsert (store, &pobj);
        }
    }
    *gangs_out = pgangs;
    return 0;
}

// ------------------------------------------------------------ first-fit baseline

typedef struct {
    const char *name; // borrowed from the store
    bas_res_t idle;   // what is left
} s_ff_node_t;

typedef struct {
    const char *group; // borrowed
    bas_res_t req;     // request with pods = 1
} s_ff_pod_t;

typedef struct {
    s_ff_node_t *nodes;
    size_t n_nodes;
    s_ff_pod_t *pods;
    size_t n_pods;
    zhashx_t *by_name; // node name -> s_ff_node_t * (borrowed)
} s_ff_t;

static void
s_ff_node (void *arg, const Basalt__V1__Object *obj)
{
    s_ff_t *ff = arg;
    s_ff_node_t *n = &ff->nodes[ff->n_nodes++];
    n->name = obj->node->name;
    bas_res_from_proto (&n->idle, obj->node->allocatable, NULL, 0);
}

static void
s_ff_pod (void *arg, const Basalt__V1__Object *obj)
{
    s_ff_t *ff = arg;
    bas_res_t req;
    bas_res_from_proto (&req, obj->pod->requests, NULL, 0);
    req.pods = 1;
    if (obj->pod->node_name) { // --running: it holds its node's room
        s_ff_node_t *n = zhashx_lookup (ff->by_name, obj->pod->node_name);
        if (n)
            bas_res_sub (&n->idle, &req);
        return;
    }
    s_ff_pod_t *p = &ff->pods[ff->n_pods++];
    p->group = obj->pod->group;
    p->req = req;
}

static int
s_ff_by_group (const void *a, const void *b)
{
    return strcmp (((const s_ff_pod_t *)a)->group, ((const s_ff_pod_t *)b)->group);
}

//  Trivial gang first-fit: pods grouped by gang; each pod on the first node
//  (in store order) with room; a gang that does not fit whole is undone.
//  Reads the same store the session reads. Returns pods placed.
static long
s_first_fit (bas_store_t *store)
{
    s_ff_t ff = {0};
    ff.nodes = bas_alloc ((bas_store_size (store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE) + 1) *
                          sizeof *ff.nodes);
    ff.pods = bas_alloc ((bas_store_size (store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD) + 1) *
                         sizeof *ff.pods);
    bas_store_foreach (store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE, s_ff_node, &ff);
    ff.by_name = zhashx_new ();
    for (size_t n = 0; n < ff.n_nodes; n++)
        zhashx_insert (ff.by_name, ff.nodes[n].name, &ff.nodes[n]);
    bas_store_foreach (store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, s_ff_pod, &ff);
    qsort (ff.pods, ff.n_pods, sizeof *ff.pods, s_ff_by_group);
    size_t *chosen = bas_alloc ((ff.n_pods + 1) * sizeof *chosen);
    long placed = 0;
    for (size_t start = 0; start < ff.n_pods;) {
        size_t end = start;
        while (end < ff.n_pods && strcmp (ff.pods[end].group, ff.pods[start].group) == 0)
            end++;
        size_t i;
        for (i = start; i < end; i++) {
            size_t n = 0;
            while (n < ff.n_nodes && !bas_res_fits (&ff.pods[i].req, &ff.nodes[n].idle))
                n++;
            if (n == ff.n_nodes)
                break;
            bas_res_sub (&ff.nodes[n].idle, &ff.pods[i].req);
            chosen[i] = n;
        }
        if (i == end)
            placed += (long)(end - start);
        else
            for (size_t j = start; j < i; j++)
                bas_res_add (&ff.nodes[chosen[j]].idle, &ff.pods[j].req);
        start = end;
    }
    free (chosen);
    zhashx_destroy (&ff.by_name);
    free (ff.nodes);
    free (ff.pods);
    return placed;
}

// ------------------------------------------------------------ main

static void
s_usage (FILE *out)
{
    fprintf (out, "usage: basalt-bench-session [options]\n"
                  "\n"
                  "Time one scheduling session over a synthetic cluster of pending gangs, and\n"
                  "a trivial first-fit gang placement over the same cluster for comparison.\n"
                  "\n"
                  "  --nodes N          nodes (default 5000)\n"
                  "  --pods N           pending pods (default 50000)\n"
                  "  --gang N           pods per gang, minMember = N (default 3)\n"
                  "  --node-cpu Q       node allocatable cpu (default 32)\n"
                  "  --node-memory Q    node allocatable memory (default 256Gi)\n"
                  "  --node-pods N      node allocatable pods (default 110)\n"
                  "  --pod-cpu Q        pod request cpu (default 1)\n"
                  "  --pod-memory Q     pod request memory (default 1Gi)\n"
                  "  --conf FILE        scheduler configuration (default: Volcano's default)\n"
                  "  --no-baseline      skip the first-fit comparison\n"
                  "  --constraints      anti-affinity on every gang, zone spread on half; also\n"
                  "                     time the same cluster without them\n"
                  "  --racks N          N tier-1 HyperNodes (racks of contiguous nodes, 8 per\n"
                  "                     tier-2 spine), every gang networkTopology hard tier 1;\n"
                  "                     also time the same cluster without them\n"
                  "  --images           nodes list images the pods run (ImageLocality); also\n"
                  "                     time the same cluster without them\n"
                  "  --running N        pods already Running, bound round robin to the nodes in\n"
                  "                     Running gangs of --gang, created before the pending ones\n"
                  "                     (default 0)\n"
                  "  --sessions K       run K sessions one after another over the same replica,\n"
                  "                     keeping the model's storage between them as session-svc\n"
                  "                     does; the line adds the later sessions' median and\n"
                  "                     slowest (default 1)\n"
                  "  --settle           with --sessions: write each kept session's PodGroup\n"
                  "                     statuses back to the replica, as the cache does, so\n"
                  "                     later sessions see the settled state (the change log\n"
                  "                     then names every group once)\n"
                  "  --volumes          every pending pod uses its own claim, bound to a CSI\n"
                  "                     volume; also time the same cluster without them\n"
                  "  --volume-zones     --volumes, each volume in its gang's zone (nodes are\n"
                  "                     in 10 zones): every pod may use a tenth of the nodes\n"
                  "  --wffc             every pending pod uses its own unbound claim of a\n"
                  "                     WaitForFirstConsumer class with a provisioner; also\n"
                  "                     time the same cluster without claims\n"
                  "  --wffc-local       --wffc with a class without provisioner, and on every\n"
                  "                     node a local volume per pod it can hold (its hostname)\n"
                  "  --zone-selector    every pending pod has a nodeSelector on its gang's zone\n"
                  "                     (the same tenth of the nodes, without volumes); also time\n"
                  "                     the same cluster without it\n"
                  "  --help             this text\n");
}

static int
s_double_cmp (const void *a, const void *b)
{
    double l = *(const double *)a, r = *(const double *)b;
    return l < r ? -1 : l > r;
}

static int
s_long (const char *flag, const char *text, long min, long max, long *out)
{
    char *end = NULL;
    long v = strtol (text, &end, 10);
    if (!*text || *end || v < min || v > max) {
        fprintf (stderr, "basalt-bench-session: %s needs a number from %ld to %ld, got \"%s\"\n",
                 flag, min, max, text);
        return -1;
    }
    *out = v;
    return 0;
}

static sess_conf_t *
s_load_conf (const char *path, bool *bad)
{
    *bad = false;
    if (!path)
        return NULL;
    FILE *f = fopen (path, "rb");
    char *text = NULL;
    size_t len = 0;
    if (f) {
        text = bas_alloc (1 << 20);
        len = fread (text, 1, (1 << 20) - 1, f);
        fclose (f);
    }
    if (!text) {
        fprintf (stderr, "basalt-bench-session: --conf %s: cannot read the file\n", path);
        *bad = true;
        return NULL;
    }
    char err[512];
    sess_conf_t *conf = sess_conf_parse (text, len, err, sizeof err);
    free (text);
    if (!conf) {
        fprintf (stderr, "basalt-bench-session: --conf %s: %s\n", path, err);
        *bad = true;
    }
    return conf;
}

int
main (int argc, char **argv)
{
    bench_opts_t o = {.nodes = 5000,
                      .pods = 50000,
                      .gang = 3,
                      .node_cpu = "32",
                      .node_memory = "256Gi",
                      .node_pods = 110,
                      .pod_cpu = "1",
                      .pod_memory = "1Gi",
                      .baseline = true,
                      .sessions = 1};
    enum {
        OPT_NODES = 1,
        OPT_PODS,
        OPT_GANG,
        OPT_NODE_CPU,
        OPT_NODE_MEMORY,
        OPT_NODE_PODS,
        OPT_POD_CPU,
        OPT_POD_MEMORY,
        OPT_CONF,
        OPT_BASELINE,
        OPT_NO_BASELINE,
        OPT_CONSTRAINTS,
        OPT_RACKS,
        OPT_IMAGES,
        OPT_RUNNING,
        OPT_SESSIONS,
        OPT_SETTLE,
        OPT_VOLUMES,
        OPT_VOLUME_ZONES,
        OPT_ZONE_SELECTOR,
        OPT_WFFC,
        OPT_WFFC_LOCAL,
        OPT_HELP
    };
    static const struct option options[] = {
        {"nodes", required_argument, NULL, OPT_NODES},
        {"pods", required_argument, NULL, OPT_PODS},
        {"gang", required_argument, NULL, OPT_GANG},
        {"node-cpu", required_argument, NULL, OPT_NODE_CPU},
        {"node-memory", required_argument, NULL, OPT_NODE_MEMORY},
        {"node-pods", required_argument, NULL, OPT_NODE_PODS},
        {"pod-cpu", required_argument, NULL, OPT_POD_CPU},
        {"pod-memory", required_argument, NULL, OPT_POD_MEMORY},
        {"conf", required_argument, NULL, OPT_CONF},
        {"baseline", no_argument, NULL, OPT_BASELINE},
        {"no-baseline", no_argument, NULL, OPT_NO_BASELINE},
        {"constraints", no_argument, NULL, OPT_CONSTRAINTS},
        {"racks", required_argument, NULL, OPT_RACKS},
        {"images", no_argument, NULL, OPT_IMAGES},
        {"running", required_argument, NULL, OPT_RUNNING},
        {"sessions", required_argument, NULL, OPT_SESSIONS},
        {"settle", no_argument, NULL, OPT_SETTLE},
        {"volumes", no_argument, NULL, OPT_VOLUMES},
        {"volume-zones", no_argument, NULL, OPT_VOLUME_ZONES},
        {"zone-selector", no_argument, NULL, OPT_ZONE_SELECTOR},
        {"wffc", no_argument, NULL, OPT_WFFC},
        {"wffc-local", no_argument, NULL, OPT_WFFC_LOCAL},
        {"help", no_argument, NULL, OPT_HELP},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long (argc, argv, "", options, NULL)) != -1) {
        int rc = 0;
        switch (c) {
        case OPT_NODES:
            rc = s_long ("--nodes", optarg, 1, 1000000, &o.nodes);
            break;
        case OPT_PODS:
            rc = s_long ("--pods", optarg, 0, 10000000, &o.pods);
            break;
        case OPT_GANG:
            rc = s_long ("--gang", optarg, 1, 10000, &o.gang);
            break;
        case OPT_NODE_PODS:
            rc = s_long ("--node-pods", optarg, 0, 1000000, &o.node_pods);
            break;
        case OPT_NODE_CPU:
            o.node_cpu = optarg;
            break;
        case OPT_NODE_MEMORY:
            o.node_memory = optarg;
            break;
        case OPT_POD_CPU:
            o.pod_cpu = optarg;
            break;
        case OPT_POD_MEMORY:
            o.pod_memory = optarg;
            break;
        case OPT_CONF:
            o.conf_file = optarg;
            break;
        case OPT_BASELINE:
            o.baseline = true;
            break;
        case OPT_NO_BASELINE:
            o.baseline = false;
            break;
        case OPT_CONSTRAINTS:
            o.constraints = true;
            break;
        case OPT_RACKS:
            rc = s_long ("--racks", optarg, 0, 100000, &o.racks);
            break;
        case OPT_IMAGES:
            o.images = true;
            break;
        case OPT_RUNNING:
            rc = s_long ("--running", optarg, 0, 10000000, &o.running);
            break;
        case OPT_SESSIONS:
            rc = s_long ("--sessions", optarg, 1, 100000, &o.sessions);
            break;
        case OPT_SETTLE:
            o.settle = true;
            break;
        case OPT_VOLUMES:
            o.volumes = true;
            break;
        case OPT_VOLUME_ZONES:
            o.volumes = o.volume_zones = true;
            break;
        case OPT_ZONE_SELECTOR:
            o.zone_selector = true;
            break;
        case OPT_WFFC:
            o.wffc = true;
            break;
        case OPT_WFFC_LOCAL:
            o.wffc = o.wffc_local = true;
            break;
        case OPT_HELP:
            s_usage (stdout);
            return 0;
        default:
            s_usage (stderr);
            return 2;
        }
        if (rc != 0)
            return 2;
    }
    if (optind < argc) {
        fprintf (stderr, "basalt-bench-session: unexpected argument \"%s\"\n", argv[optind]);
        return 2;
    }
    bas_log_init ("basalt-bench-session", BAS_LOG_WARN, BAS_LOG_FORMAT_TEXT);
    bool bad = false;
    sess_conf_t *conf = s_load_conf (o.conf_file, &bad);
    if (bad)
        return 2;
    bas_store_t *store = bas_store_new ();
    long gangs = 0;
    char err[512];
    if (s_build (store, &o, &gangs, err, sizeof err) != 0) {
        fprintf (stderr, "basalt-bench-session: %s\n", err);
        bas_store_destroy (&store);
        sess_conf_destroy (&conf);
        return 2;
    }
    sess_params_t params = {0};
    params.session_id = "bench";
    params.now_ms = 1;
    //  The first session with storage of its own, as sess_run gives it
    //  when none is passed; --sessions more with storage kept between them.
    double t0 = s_now_ms ();
    Basalt__V1__Commit *commit = sess_run (store, conf, &params);
    double session_ms = s_now_ms () - t0;
    long placed = commit ? (long)commit->n_placements : 0;
    long claims = 0; // claims the placements carry (--wffc: one each)
    for (long i = 0; i < placed; i++)
        claims += (long)commit->placements[i]->n_claims;
    if (commit)
        protobuf_c_message_free_unpacked (&commit->base, NULL);
    printf ("nodes=%ld running=%ld pods=%ld gangs=%ld session_ms=%.1f pods_per_s=%.0f "
            "ms_per_gang=%.4f placed=%ld",
            o.nodes, o.running, o.pods, gangs, session_ms,
            session_ms > 0 ? placed * 1000.0 / session_ms : 0,
            gangs ? session_ms / (double)gangs : 0, placed);
    if (o.wffc)
        printf (" claims=%ld", claims);
    if (o.sessions > 1) {
        double *ms = bas_alloc ((size_t)o.sessions * sizeof *ms);
        sess_keep_t *keep = sess_keep_new ();
        params.keep = keep;
        long same = 0; // later sessions that placed what the first one did
        for (long k = 0; k < o.sessions; k++) {
            t0 = s_now_ms ();
            Basalt__V1__Commit *c = sess_run (store, conf, &params);
            ms[k] = s_now_ms () - t0;
            same += c && (long)c->n_placements == placed;
            //  The statuses written, as cache-svc writes them back (the
            //  status moves into the store).
            for (size_t i = 0; o.settle && c && i < c->n_statuses; i++) {
                Basalt__V1__PodGroupStatusChange *ch = c->statuses[i];
                if (ch->uid && ch->status) {
                    bas_store_pod_group_set_status (store, ch->uid, ch->status);
                    ch->status = NULL;
                }
            }
            if (c)
                protobuf_c_message_free_unpacked (&c->base, NULL);
        }
        params.keep = NULL;
        sess_keep_destroy (&keep);
        //  The first kept session fills the storage: the rest are steady.
        long n = o.sessions - 1;
        qsort (ms + 1, (size_t)n, sizeof *ms, s_double_cmp);
        printf (" kept_first_ms=%.1f kept_p50_ms=%.1f kept_max_ms=%.1f kept_same=%ld/%ld", ms[0],
                ms[1 + n / 2], ms[o.sessions - 1], same, o.sessions);
        free (ms);
    }
    if (o.constraints || o.racks > 0 || o.images || o.volumes || o.zone_selector || o.wffc) {
        //  The same cluster without the constraints, HyperNodes and images,
        //  timed the same way.
        bench_opts_t plain = o;
        plain.constraints = false;
        plain.racks = 0;
        plain.images = false;
        plain.volumes = false;
        plain.volume_zones = false;
        plain.zone_selector = false;
        plain.wffc = plain.wffc_local = false;
        bas_store_t *pstore = bas_store_new ();
        long pgangs = 0;
        if (s_build (pstore, &plain, &pgangs, err, sizeof err) != 0) {
            fprintf (stderr, "basalt-bench-session: %s\n", err);
            return 2;
        }
        t0 = s_now_ms ();
        Basalt__V1__Commit *pc = sess_run (pstore, conf, &params);
        double plain_ms = s_now_ms () - t0;
        printf (" plain_ms=%.1f plain_placed=%ld ratio_vs_plain=%.2f", plain_ms,
                pc ? (long)pc->n_placements : 0L, plain_ms > 0 ? session_ms / plain_ms : 0);
        if (pc)
            protobuf_c_message_free_unpacked (&pc->base, NULL);
        bas_store_destroy (&pstore);
    }
    if (o.baseline) {
        t0 = s_now_ms ();
        long ff_placed = s_first_fit (store);
        double ff_ms = s_now_ms () - t0;
        printf (" firstfit_ms=%.1f firstfit_placed=%ld ratio_vs_firstfit=%.2f", ff_ms, ff_placed,
                ff_ms > 0 ? session_ms / ff_ms : 0);
    }
    printf ("\n");
    bas_store_destroy (&store);
    sess_conf_destroy (&conf);
    return 0;
}
