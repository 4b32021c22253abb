/*  test_cache_model: cache-svc's model and the rules that guard it, written
    as example usage.

    The model is fed the way the informers feed it: Kubernetes JSON through
    cache_model_api_event (which also exercises common/bas_k8s.c), or wire
    objects built in C through cache_model_upsert. Sessions' commits are
    checked against it: gangs all-or-nothing, stale pods rejected, capacity
    counted across the gangs of one commit; accepted placements become
    assumed pods and bind work. Nodes whose accounting goes negative are
    out of sync and come back by themselves (DESIGN problem 4). Changes
    coalesce into numbered deltas.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bas_kube.h"
#include "bas_log.h"
#include "bas_work.h"
#include "util_log.h"
#include "util_model.h"
#include "cache_model.h"

#define K_NODE BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE
#define K_POD BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD
#define K_PG BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP

// ------------------------------------------------------------ feeding the model

static cJSON *
s_parse (const char *text)
{
    cJSON *json = cJSON_Parse (text);
    if (!json)
        print_error ("bad test JSON: %s\n", text);
    assert_non_null (json);
    return json;
}

//  A Ready node as the API lists it.
static void
s_node (cache_model_t *model, int event, const char *name, const char *cpu, const char *memory)
{
    char text[1024];
    snprintf (text, sizeof text,
              "{\"kind\":\"Node\",\"apiVersion\":\"v1\","
              "\"metadata\":{\"name\":\"%s\",\"uid\":\"uid-%s\",\"resourceVersion\":\"1\"},"
              "\"spec\":{},"
              "\"status\":{\"allocatable\":{\"cpu\":\"%s\",\"memory\":\"%s\",\"pods\":\"110\"},"
              "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
              name, name, cpu, memory);
    cJSON *json = s_parse (text);
    assert_int_equal (cache_model_api_event (model, K_NODE, event, json), 0);
    cJSON_Delete (json);
}

typedef struct {
    const char *uid;
    const char *name;
    const char *rv;        // resourceVersion, "1" when NULL
    const char *scheduler; // "basalt" when NULL
    const char *node;      // spec.nodeName or NULL
    const char *group;     // group annotation or NULL
    const char *cpu;       // request, "100m" when NULL
    const char *phase;     // "Pending" when NULL
} s_pod_t;

static cJSON *
s_pod_json (const s_pod_t *p)
{
    char node[300] = "", ann[300] = "";
    if (p->node)
        snprintf (node, sizeof node, "\"nodeName\":\"%s\",", p->node);
    if (p->group)
        snprintf (ann, sizeof ann, ",\"annotations\":{\"scheduling.k8s.io/group-name\":\"%s\"}",
                  p->group);
    char text[2048];
    snprintf (text, sizeof text,
              "{\"kind\":\"Pod\",\"apiVersion\":\"v1\","
              "\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"%s\","
              "\"resourceVersion\":\"%s\"%s},"
              "\"spec\":{%s\"schedulerName\":\"%s\",\"containers\":[{\"name\":\"main\","
              "\"resources\":{\"requests\":{\"cpu\":\"%s\",\"memory\":\"128Mi\"}}}]},"
              "\"status\":{\"phase\":\"%s\"}}",
              p->name, p->uid, p->rv ? p->rv : "1", ann, node,
              p->scheduler ? p->scheduler : "basalt", p->cpu ? p->cpu : "100m",
              p->phase ? p->phase : "Pending");
    return s_parse (text);
}

static void
s_pod (cache_model_t *model, int event, s_pod_t p)
{
    cJSON *json = s_pod_json (&p);
    assert_int_equal (cache_model_api_event (model, K_POD, event, json), 0);
    cJSON_Delete (json);
}

static void
s_pg (cache_model_t *model, const char *uid, const char *name, int min_member, const char *phase)
{
    char text[1024];
    snprintf (text, sizeof text,
              "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\","
              "\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"%s\","
              "\"resourceVersion\":\"1\"},"
              "\"spec\":{\"minMember\":%d,\"queue\":\"default\"},"
              "\"status\":{\"phase\":\"%s\"}}",
              name, uid, min_member, phase);
    cJSON *json = s_parse (text);
    assert_int_equal (cache_model_api_event (model, K_PG, BAS_KUBE_ADDED, json), 0);
    cJSON_Delete (json);
}

//  A pod built as a wire object in C (the informer-free path).
static Basalt__V1__Object *
s_pod_object (const char *uid, const char *name, const char *scheduler, const char *node,
              int64_t milli_cpu)
{
    Basalt__V1__Pod *pod = malloc (sizeof *pod);
    basalt__v1__pod__init (pod);
    pod->uid = strdup (uid);
    pod->namespace_ = strdup ("default");
    pod->name = strdup (name);
    pod->resource_version = strdup ("1");
    pod->phase = strdup ("Pending");
    pod->scheduler_name = strdup (scheduler);
    pod->node_name = node ? strdup (node) : NULL;
    bas_res_t r;
    bas_res_zero (&r);
    r.milli_cpu = milli_cpu;
    pod->requests = bas_res_to_proto (&r);
    Basalt__V1__Object *obj = malloc (sizeof *obj);
    basalt__v1__object__init (obj);
    obj->kind_case = BASALT__V1__OBJECT__KIND_POD;
    obj->pod = pod;
    return obj;
}

static void
s_delete_pod (cache_model_t *model, const char *uid)
{
    char text[256];
    snprintf (text, sizeof text,
              "{\"metadata\":{\"name\":\"x\",\"namespace\":\"default\","
              "\"uid\":\"%s\"}}",
              uid);
    cJSON *json = s_parse (text);
    assert_int_equal (cache_model_api_event (model, K_POD, BAS_KUBE_DELETED, json), 0);
    cJSON_Delete (json);
}

// ------------------------------------------------------------ commits and work

typedef struct {
    Basalt__V1__Work *items[64];
    int n;
} s_works_t;

static void
s_collect (void *arg, Basalt__V1__Work **work_p)
{
    s_works_t *w = arg;
    assert_true (w->n < 64);
    w->items[w->n++] = *work_p;
    *work_p = NULL;
}

static void
s_works_clear (s_works_t *w)
{
    for (int i = 0; i < w->n; i++)
        basalt__v1__work__free_unpacked (w->items[i], NULL);
    w->n = 0;
}

//  Up to 8 placements "pod_uid@node/job_uid[#rv]".
typedef struct {
    Basalt__V1__Placement pl[8];
    Basalt__V1__Placement *ptrs[8];
    Basalt__V1__PodGroupStatusChange st[4];
    Basalt__V1__PodGroupStatusChange *sptrs[4];
    Basalt__V1__PodGroupStatus status[4];
    Basalt__V1__Eviction ev[4];
    Basalt__V1__Eviction *evptrs[4];
    Basalt__V1__ClaimBinding cb[8]; // claims of the placements (s_needs)
    Basalt__V1__ClaimBinding *cbp[8];
    Basalt__V1__Commit commit;
} s_commit_t;

static void
s_commit_init (s_commit_t *c)
{
    memset (c, 0, sizeof *c);
    basalt__v1__commit__init (&c->commit);
    c->commit.session_id = "session-1";
    c->commit.placements = c->ptrs;
    c->commit.statuses = c->sptrs;
    c->commit.evictions = c->evptrs;
}

static void
s_evict (s_commit_t *c, const char *pod_uid, const char *rv)
{
    size_t i = c->commit.n_evictions++;
    assert_true (i < 4);
    basalt__v1__eviction__init (&c->ev[i]);
    c->ev[i].pod_uid = (char *)pod_uid;
    c->ev[i].reason = "preempt";
    c->ev[i].pod_resource_version = (char *)rv;
    c->evptrs[i] = &c->ev[i];
}

static void
s_place (s_commit_t *c, const char *pod_uid, const char *node, const char *job_uid, const char *rv)
{
    size_t i = c->commit.n_placements++;
    assert_true (i < 8);
    basalt__v1__placement__init (&c->pl[i]);
    c->pl[i].pod_uid = (char *)pod_uid;
    c->pl[i].node = (char *)node;
    c->pl[i].job_uid = (char *)job_uid;
    c->pl[i].pod_resource_version = (char *)rv;
    c->ptrs[i] = &c->pl[i];
}

static void
s_propose_status (s_commit_t *c, const char *uid, const char *phase)
{
    size_t i = c->commit.n_statuses++;
    assert_true (i < 4);
    basalt__v1__pod_group_status_change__init (&c->st[i]);
    basalt__v1__pod_group_status__init (&c->status[i]);
    c->status[i].phase = (char *)phase;
    c->st[i].uid = (char *)uid;
    c->st[i].namespace_ = "default";
    c->st[i].status = &c->status[i];
    c->sptrs[i] = &c->st[i];
}

//  Run a commit; returns the result (free with s_result_free).
static Basalt__V1__CommitResult *
s_run (cache_model_t *model, s_commit_t *c, s_works_t *works, int *accepted)
{
    Basalt__V1__CommitResult *r = malloc (sizeof *r);
    basalt__v1__commit_result__init (r);
    //  In the smallest slices cache-svc could take (one gang or item per
    //  step), so every test here also checks that slicing changes nothing.
    cache_commit_t *cc = cache_model_commit_begin (model, &c->commit, r);
    while (!cache_model_commit_step (model, cc, 1, s_collect, works))
        ;
    int n = cache_model_commit_end (&cc);
    if (accepted)
        *accepted = n;
    //  The result is a valid message: it packs and unpacks.
    size_t len = basalt__v1__commit_result__get_packed_size (r);
    uint8_t *buf = malloc (len + 1);
    basalt__v1__commit_result__pack (r, buf);
    Basalt__V1__CommitResult *back = basalt__v1__commit_result__unpack (NULL, len, buf);
    assert_non_null (back);
    basalt__v1__commit_result__free_unpacked (back, NULL);
    free (buf);
    return r;
}

static void
s_result_free (Basalt__V1__CommitResult *r)
{
    protobuf_c_message_free_unpacked (&r->base, NULL);
}

static const Basalt__V1__ItemResult *
s_item (const Basalt__V1__CommitResult *r, const char *key)
{
    for (size_t i = 0; i < r->n_results; i++)
        if (strcmp (r->results[i]->key, key) == 0)
            return r->results[i];
    print_error ("no result for %s\n", key);
    fail ();
    return NULL;
}

//  An accepted proposal is counted, not listed: it is not among the
//  rejected ones.
static bool
s_accepted (const Basalt__V1__CommitResult *r, const char *key)
{
    for (size_t i = 0; i < r->n_results; i++)
        if (strcmp (r->results[i]->key, key) == 0) {
            print_error ("%s rejected: %s\n", key,
                         r->results[i]->reason ? r->results[i]->reason : "");
            return false;
        }
    return r->has_accepted && r->accepted > 0;
}

static int64_t
s_used_cpu (cache_model_t *model, const char *node)
{
    const bas_res_t *u = cache_model_node_used (model, node);
    return u ? u->milli_cpu : 0;
}

static int64_t
s_used_pods (cache_model_t *model, const char *node)
{
    const bas_res_t *u = cache_model_node_used (model, node);
    return u ? u->pods : 0;
}

static const Basalt__V1__Pod *
s_get_pod (cache_model_t *model, const char *uid)
{
    return bas_store_pod (cache_model_store (model), uid);
}

static Basalt__V1__Delta *
s_flush (cache_model_t *model, uint64_t *seq)
{
    zframe_t *frame = cache_model_flush (model, seq);
    if (!frame)
        return NULL;
    Basalt__V1__Delta *d =
        basalt__v1__delta__unpack (NULL, zframe_size (frame), zframe_data (frame));
    zframe_destroy (&frame);
    assert_non_null (d);
    return d;
}

static Basalt__V1__Snapshot *
s_snapshot (cache_model_t *model)
{
    zframe_t *frame = cache_model_snapshot (model);
    assert_non_null (frame);
    Basalt__V1__Snapshot *s =
        basalt__v1__snapshot__unpack (NULL, zframe_size (frame), zframe_data (frame));
    zframe_destroy (&frame);
    assert_non_null (s);
    return s;
}

//  A model with node n1 (cpu as given, 8Gi) and pod group pg1 of minMember 2.
static cache_model_t *
s_model (const char *cpu)
{
    cache_model_t *model = cache_model_new (7, "basalt, volcano");
    s_node (model, BAS_KUBE_ADDED, "n1", cpu, "8Gi");
    s_pg (model, "uid-pg1", "pg1", 2, "Inqueue");
    return model;
}

// ------------------------------------------------------------ tests

//  One pod of a two-pod gang does not fit: neither is placed, and the
//  node's accounting is untouched.
static void
test_gang_all_or_nothing (void **state)
{
    (void)state;
    cache_model_t *model = s_model ("4");
    s_pod (model, BAS_KUBE_ADDED,
           (s_pod_t){.uid = "uid-a", .name = "a", .group = "pg1", .cpu = "3"});
    s_pod (model, BAS_KUBE_ADDED,
           (s_pod_t){.uid = "uid-b", .name = "b", .group = "pg1", .cpu = "3"});
    const bas_res_t before = *cache_model_node_used (model, "n1");

    s_commit_t c;
    s_commit_init (&c);
    s_place (&c, "uid-a", "n1", "uid-pg1", "1");
    s_place (&c, "uid-b", "n1", "uid-pg1", "1");
    s_works_t works = {0};
    int accepted = -1;
    Basalt__V1__CommitResult *r = s_run (model, &c, &works, &accepted);
    assert_int_equal (accepted, 0);
    assert_int_equal (r->n_results, 2);
    assert_false (s_item (r, "uid-a")->accepted); // it fits alone, but its gang does not
    assert_false (s_item (r, "uid-b")->accepted);
    assert_non_null (strstr (s_item (r, "uid-b")->reason, "insufficient cpu"));
    assert_non_null (s_item (r, "uid-a")->reason);
    assert_true (r->has_epoch);
    assert_int_equal (r->epoch, 7);
    assert_int_equal (works.n, 0);
    assert_true (bas_res_equal (cache_model_node_used (model, "n1"), &before));
    assert_null (s_get_pod (model, "uid-a")->assumed_node);
    assert_null (s_get_pod (model, "uid-b")->assumed_node);
    cache_model_stats_t stats;
    cache_model_stats (model, &stats);
    assert_int_equal (stats.placements_rejected, 2);
    assert_int_equal (stats.placements_accepted, 0);
    s_result_free (r);

    //  The gang on two nodes fits: both are placed, with one bind each.
    s_node (model, BAS_KUBE_ADDED, "n2", "4", "8Gi");
    s_commit_init (&c);
    s_place (&c, "uid-a", "n1", "uid-pg1", "1");
    s_place (&c, "uid-b", "n2", "uid-pg1", "1");
    r = s_run (model, &c, &works, &accepted);
    assert_int_equal (accepted, 2);
    assert_true (s_accepted (r, "uid-a"));
    assert_true (s_accepted (r, "uid-b"));
    assert_int_equal (works.n, 2);
    s_result_free (r);
    s_works_clear (&works);
    cache_model_destroy (&model);
    assert_null (model);
}

//  A placement decided on an older version of the pod is rejected.
static void
test_stale_pod_rejected (void **state)
{
    (void)state;
    cache_model_t *model = s_model ("4");
    s_pod (model, BAS_KUBE_ADDED, (s_pod_t){.uid = "uid-a", .name = "a", .rv = "5"});
    s_commit_t c;
    s_commit_init (&c);
    s_place (&c, "uid-a", "n1", "uid-a-job", "4");
    s_works_t works = {0};
    Basalt__V1__CommitResult *r = s_run (model, &c, &works, NULL);
    const Basalt__V1__ItemResult *item = s_item (r, "uid-a");
    assert_false (item->accepted);
    assert_non_null (strstr (item->reason, "changed"));
    assert_int_equal (works.n, 0);
    assert_int_equal (s_used_cpu (model, "n1"), 0);
    s_result_free (r);

    //  Other reasons, each named.
    s_commit_init (&c);
    s_place (&c, "uid-gone", "n1", "j1", NULL);
    s_place (&c, "uid-a", "n9", "j2", "5");
    r = s_run (model, &c, &works, NULL);
    assert_non_null (strstr (s_item (r, "uid-gone")->reason, "no longer exists"));
    assert_non_null (strstr (s_item (r, "uid-a")->reason, "node"));
    s_result_free (r);

    //  The same version is accepted.
    s_commit_init (&c);
    s_place (&c, "uid-a", "n1", "uid-a-job", "5");
    r = s_run (model, &c, &works, NULL);
    assert_true (s_accepted (r, "uid-a"));
    s_result_free (r);
    s_works_clear (&works);
    cache_model_destroy (&model);
}

//  An accepted placement: the pod is assumed on its node, counted there,
//  published in the next delta, and a BindWork goes to the binders.
static void
test_accepted_placement_assumes_and_binds (void **state)
{
    (void)state;
    cache_model_t *model = s_model ("4");
    s_pod (model, BAS_KUBE_ADDED,
           (s_pod_t){.uid = "uid-a", .name = "a", .group = "pg1", .cpu = "1500m"});
    s_pod (model, BAS_KUBE_ADDED,
           (s_pod_t){.uid = "uid-b", .name = "b", .group = "pg1", .cpu = "500m"});
    uint64_t seq = 0;
    Basalt__V1__Delta *d = s_flush (model, &seq);
    basalt__v1__delta__free_unpacked (d, NULL);

    s_commit_t c;
    s_commit_init (&c);
    s_place (&c, "uid-a", "n1", "uid-pg1", "1");
    s_place (&c, "uid-b", "n1", "uid-pg1", "1");
    s_works_t works = {0};
    int accepted = 0;
    Basalt__V1__CommitResult *r = s_run (model, &c, &works, &accepted);
    assert_int_equal (accepted, 2);
    s_result_free (r);
    assert_string_equal (s_get_pod (model, "uid-a")->assumed_node, "n1");
    assert_string_equal (s_get_pod (model, "uid-b")->assumed_node, "n1");
    assert_int_equal (s_used_cpu (model, "n1"), 2000);
    assert_int_equal (s_used_pods (model, "n1"), 2);

    assert_int_equal (works.n, 2);
    for (int i = 0; i < 2; i++) {
        const Basalt__V1__Work *w = works.items[i];
        assert_int_equal (w->item_case, BASALT__V1__WORK__ITEM_BIND);
        assert_string_equal (w->bind->namespace_, "default");
        assert_string_equal (w->bind->node, "n1");
        assert_string_equal (w->bind->name, strcmp (w->bind->pod_uid, "uid-a") == 0 ? "a" : "b");
    }

    //  Sessions see the assumption in the next delta.
    uint64_t seq2 = 0;
    d = s_flush (model, &seq2);
    assert_int_equal (seq2, seq + 1);
    assert_int_equal (d->n_upserts, 2);
    for (size_t i = 0; i < d->n_upserts; i++)
        assert_string_equal (d->upserts[i]->pod->assumed_node, "n1");
    basalt__v1__delta__free_unpacked (d, NULL);

    //  Placing it again is refused: it is already placed.
    s_commit_init (&c);
    s_place (&c, "uid-a", "n1", "j", NULL);
    r = s_run (model, &c, &works, NULL);
    assert_non_null (strstr (s_item (r, "uid-a")->reason, "already placed"));
    s_result_free (r);

    //  The API's own MODIFIED event, still without nodeName, keeps the
    //  assumption; the bound pod (nodeName set) is counted once, not twice.
    s_pod (model, BAS_KUBE_MODIFIED,
           (s_pod_t){.uid = "uid-a", .name = "a", .rv = "2", .group = "pg1", .cpu = "1500m"});
    assert_string_equal (s_get_pod (model, "uid-a")->assumed_node, "n1");
    assert_int_equal (s_used_cpu (model, "n1"), 2000);
    s_pod (model, BAS_KUBE_MODIFIED,
           (s_pod_t){.uid = "uid-a",
                     .name = "a",
                     .rv = "3",
                     .node = "n1",
                     .group = "pg1",
                     .cpu = "1500m",
                     .phase = "Running"});
    assert_int_equal (s_used_cpu (model, "n1"), 2000);
    assert_int_equal (s_used_pods (model, "n1"), 2);
    //  Deleting an assumed pod gives its share back.
    s_delete_pod (model, "uid-b");
    assert_int_equal (s_used_cpu (model, "n1"), 1500);
    assert_int_equal (s_used_pods (model, "n1"), 1);
    s_works_clear (&works);
    cache_model_destroy (&model);
}

//  Two gangs in one commit competing for one node: the first takes the
//  capacity; the second is checked against what is left.
static void
test_gangs_compete_in_one_commit (void **state)
{
    (void)state;
    cache_model_t *model = s_model ("4");
    s_pg (model, "uid-pg2", "pg2", 2, "Inqueue");
    s_pod (model, BAS_KUBE_ADDED,
           (s_pod_t){.uid = "a1", .name = "a1", .group = "pg1", .cpu = "1500m"});
    s_pod (model, BAS_KUBE_ADDED,
           (s_pod_t){.uid = "a2", .name = "a2", .group = "pg1", .cpu = "1500m"});
    s_pod (model, BAS_KUBE_ADDED,
           (s_pod_t){.uid = "b1", .name = "b1", .group = "pg2", .cpu = "1500m"});
    s_pod (model, BAS_KUBE_ADDED,
           (s_pod_t){.uid = "b2", .name = "b2", .group = "pg2", .cpu = "1500m"});
    s_commit_t c;
    s_commit_init (&c);
    //  Interleaved, as a session may list them.
    s_place (&c, "a1", "n1", "uid-pg1", "1");
    s_place (&c, "b1", "n1", "uid-pg2", "1");
    s_place (&c, "a2", "n1", "uid-pg1", "1");
    s_place (&c, "b2", "n1", "uid-pg2", "1");
    s_works_t works = {0};
    int accepted = 0;
    Basalt__V1__CommitResult *r = s_run (model, &c, &works, &accepted);
    assert_int_equal (accepted, 2);
    assert_true (s_accepted (r, "a1"));
    assert_true (s_accepted (r, "a2"));
    assert_false (s_item (r, "b1")->accepted); // 1 CPU is left after pg1, not 1.5
    assert_false (s_item (r, "b2")->accepted);
    assert_non_null (strstr (s_item (r, "b1")->reason, "insufficient cpu"));
    assert_int_equal (works.n, 2);
    assert_int_equal (s_used_cpu (model, "n1"), 3000);
    s_result_free (r);
    s_works_clear (&works);
    cache_model_destroy (&model);
}

//  A commit applied in slices checks each gang against the model as it is
//  when the gang's turn comes: a pod deleted between two slices is not
//  bound, the gang before it is, and the whole commit matches one applied at
//  once (cache_model_commit) otherwise.
static void
test_commit_in_slices (void **state)
{
    (void)state;
    cache_model_t *model = s_model ("4");
    s_pg (model, "uid-pg2", "pg2", 2, "Inqueue");
    s_pod (model, BAS_KUBE_ADDED, (s_pod_t){.uid = "a1", .name = "a1", .group = "pg1", .cpu = "1"});
    s_pod (model, BAS_KUBE_ADDED, (s_pod_t){.uid = "a2", .name = "a2", .group = "pg1", .cpu = "1"});
    s_pod (model, BAS_KUBE_ADDED, (s_pod_t){.uid = "b1", .name = "b1", .group = "pg2", .cpu = "1"});
    s_pod (model, BAS_KUBE_ADDED, (s_pod_t){.uid = "b2", .name = "b2", .group = "pg2", .cpu = "1"});
    s_commit_t c;
    s_commit_init (&c);
    s_place (&c, "a1", "n1", "uid-pg1", "1");
    s_place (&c, "b1", "n1", "uid-pg2", "1");
    s_place (&c, "a2", "n1", "uid-pg1", "1");
    s_place (&c, "b2", "n1", "uid-pg2", "1");
    s_works_t works = {0};
    Basalt__V1__CommitResult *r = malloc (sizeof *r);
    basalt__v1__commit_result__init (r);
    cache_commit_t *cc = cache_model_commit_begin (model, &c.commit, r);
    //  A budget of one item still takes a whole gang: pg1 (a1, a2) only.
    assert_false (cache_model_commit_step (model, cc, 1, s_collect, &works));
    assert_int_equal (r->n_results, 0);
    assert_int_equal (r->accepted, 2);
    assert_int_equal (works.n, 2);
    assert_int_equal (s_used_cpu (model, "n1"), 2000);
    assert_false (r->has_epoch); // not finished: no answer yet
    s_delete_pod (model, "b2");
    assert_true (cache_model_commit_step (model, cc, 1, s_collect, &works));
    assert_true (r->has_epoch);
    assert_int_equal (cache_model_commit_end (&cc), 2);
    assert_null (cc);
    assert_true (s_accepted (r, "a1"));
    assert_true (s_accepted (r, "a2"));
    assert_false (s_item (r, "b1")->accepted); // its gang lost a member
    assert_false (s_item (r, "b2")->accepted);
    assert_string_equal (s_item (r, "b2")->reason, "pod no longer exists");
    assert_int_equal (works.n, 2);
    assert_int_equal (s_used_cpu (model, "n1"), 2000);
    s_result_free (r);
    s_works_clear (&works);
    cache_model_destroy (&model);
}

//  Two gangs that together fill a node exactly are both accepted: the
//  first gang's share is counted once, not twice.
static void
test_gangs_fill_node_exactly (void **state)
{
    (void)state;
    cache_model_t *model = s_model ("4");
    s_pg (model, "uid-pg2", "pg2", 2, "Inqueue");
    s_pod (model, BAS_KUBE_ADDED, (s_pod_t){.uid = "a1", .name = "a1", .group = "pg1", .cpu = "1"});
    s_pod (model, BAS_KUBE_ADDED, (s_pod_t){.uid = "a2", .name = "a2", .group = "pg1", .cpu = "1"});
    s_pod (model, BAS_KUBE_ADDED, (s_pod_t){.uid = "b1", .name = "b1", .group = "pg2", .cpu = "1"});
    s_pod (model, BAS_KUBE_ADDED, (s_pod_t){.uid = "b2", .name = "b2", .group = "pg2", .cpu = "1"});
    s_commit_t c;
    s_commit_init (&c);
    s_place (&c, "a1", "n1", "uid-pg1", "1");
    s_place (&c, "a2", "n1", "uid-pg1", "1");
    s_place (&c, "b1", "n1", "uid-pg2", "1");
    s_place (&c, "b2", "n1", "uid-pg2", "1");
    s_works_t works = {0};
    int accepted = 0;
    Basalt__V1__CommitResult *r = s_run (model, &c, &works, &accepted);
    if (accepted != 4)
        print_error ("b1: %s\n", s_item (r, "b1")->reason ? s_item (r, "b1")->reason : "-");
    assert_int_equal (accepted, 4);
    assert_int_equal (s_used_cpu (model, "n1"), 4000);
    assert_false (cache_model_node_out_of_sync (model, "n1"));
    s_result_free (r);
    s_works_clear (&works);
    cache_model_destroy (&model);
}

//  A session that lists one pod twice in a gang (a bug on its side, or a
//  corrupted commit) must not leave the node charged twice: the pod counts
//  once, and its delete gives everything back.
static void
test_duplicate_placement_counted_once (void **state)
{
    (void)state;
    cache_model_t *model = s_model ("4");
    s_node (model, BAS_KUBE_ADDED, "n2", "4", "8Gi");
    s_pod (model, BAS_KUBE_ADDED, (s_pod_t){.uid = "uid-a", .name = "a", .cpu = "1"});
    s_commit_t c;
    s_commit_init (&c);
    s_place (&c, "uid-a", "n1", "job-a", "1");
    s_place (&c, "uid-a", "n2", "job-a", "1");
    s_works_t works = {0};
    Basalt__V1__CommitResult *r = s_run (model, &c, &works, NULL);
    //  The gang names one pod twice: refused whole, nothing bound or counted.
    assert_int_equal (r->n_results, 2);
    assert_false (r->results[0]->accepted);
    assert_false (r->results[1]->accepted);
    assert_non_null (strstr (r->results[0]->reason, "twice"));
    s_result_free (r);
    assert_int_equal (works.n, 0);
    assert_int_equal (s_used_pods (model, "n1") + s_used_pods (model, "n2"), 0);
    //  The same pod once is accepted and counted once.
    s_commit_t c2;
    s_commit_init (&c2);
    s_place (&c2, "uid-a", "n2", "job-a", "1");
    r = s_run (model, &c2, &works, NULL);
    s_result_free (r);
    assert_int_equal (s_used_pods (model, "n1") + s_used_pods (model, "n2"), 1);
    assert_int_equal (s_used_cpu (model, "n1") + s_used_cpu (model, "n2"), 1000);
    s_delete_pod (model, "uid-a");
    assert_int_equal (s_used_cpu (model, "n1"), 0);
    assert_int_equal (s_used_cpu (model, "n2"), 0);
    assert_int_equal (s_used_pods (model, "n1") + s_used_pods (model, "n2"), 0);
    s_works_clear (&works);
    cache_model_destroy (&model);
}

//  A failed bind releases the assumption: the pod is pending again and the
//  node's accounting is restored.
static void
test_bind_failure_releases (void **state)
{
    (void)state;
    cache_model_t *model = s_model ("4");
    s_pod (model, BAS_KUBE_ADDED, (s_pod_t){.uid = "uid-a", .name = "a", .cpu = "2"});
    s_commit_t c;
    s_commit_init (&c);
    s_place (&c, "uid-a", "n1", "job-a", "1");
    s_works_t works = {0};
    Basalt__V1__CommitResult *r = s_run (model, &c, &works, NULL);
    s_result_free (r);
    assert_int_equal (works.n, 1);
    const Basalt__V1__BindWork *bind = works.items[0]->bind;
    assert_int_equal (s_used_cpu (model, "n1"), 2000);
    zframe_t *frame = cache_model_flush (model, NULL);
    assert_non_null (frame);
    zframe_destroy (&frame);

    //  A success changes nothing (the API's event will show the binding).
    assert_int_equal (cache_model_bind_result (model, bind, true, NULL), 0);
    assert_string_equal (s_get_pod (model, "uid-a")->assumed_node, "n1");
    assert_false (cache_model_dirty (model));

    //  A result for another node (a stale, re-issued bind) changes nothing.
    Basalt__V1__BindWork other = *bind;
    other.node = "n2";
    assert_int_equal (cache_model_bind_result (model, &other, false, "stale"), 0);
    assert_string_equal (s_get_pod (model, "uid-a")->assumed_node, "n1");

    assert_int_equal (cache_model_bind_result (model, bind, false, "Conflict"), 0);
    assert_null (s_get_pod (model, "uid-a")->assumed_node);
    assert_int_equal (s_used_cpu (model, "n1"), 0);
    assert_int_equal (s_used_pods (model, "n1"), 0);
    assert_true (cache_model_dirty (model));
    cache_model_stats_t stats;
    cache_model_stats (model, &stats);
    assert_true (stats.bind_failures >= 1);

    //  Pending again: the next session may place it.
    s_commit_init (&c);
    s_place (&c, "uid-a", "n1", "job-a", "1");
    int accepted = 0;
    r = s_run (model, &c, &works, &accepted);
    assert_int_equal (accepted, 1);
    s_result_free (r);
    s_works_clear (&works);
    cache_model_destroy (&model);
}

static bool
s_delta_node_state (const Basalt__V1__Delta *d, const char *node, bool *out)
{
    for (size_t i = 0; i < d->n_node_states; i++)
        if (strcmp (d->node_states[i]->node, node) == 0) {
            *out = d->node_states[i]->out_of_sync;
            return true;
        }
    return false;
}

//  DESIGN problem 4: pods bound by name beyond the node's allocatable put
//  it out of sync; nothing aborts; commits to it are refused; it returns by
//  itself when a pod goes away.
static void
test_node_out_of_sync (void **state)
{
    (void)state;
    cache_model_t *model = s_model ("2");
    Basalt__V1__Delta *d = s_flush (model, NULL);
    basalt__v1__delta__free_unpacked (d, NULL);
    //  Placed by name, by another scheduler: they count against n1 anyway.
    s_pod (model, BAS_KUBE_ADDED,
           (s_pod_t){.uid = "p1",
                     .name = "p1",
                     .scheduler = "default-scheduler",
                     .node = "n1",
                     .cpu = "1",
                     .phase = "Running"});
    s_pod (model, BAS_KUBE_ADDED,
           (s_pod_t){.uid = "p2",
                     .name = "p2",
                     .scheduler = "default-scheduler",
                     .node = "n1",
                     .cpu = "1",
                     .phase = "Running"});
    assert_false (cache_model_node_out_of_sync (model, "n1"));
    s_pod (model, BAS_KUBE_ADDED,
           (s_pod_t){.uid = "p3", .name = "p3", .node = "n1", .cpu = "500m", .phase = "Running"});
    assert_true (cache_model_node_out_of_sync (model, "n1"));
    assert_int_equal (cache_model_nodes_out_of_sync (model), 1);
    assert_int_equal (s_used_cpu (model, "n1"), 2500);
    cache_model_stats_t stats;
    cache_model_stats (model, &stats);
    assert_int_equal (stats.out_of_sync_events, 1);
    d = s_flush (model, NULL);
    bool out = false;
    assert_true (s_delta_node_state (d, "n1", &out));
    assert_true (out);
    basalt__v1__delta__free_unpacked (d, NULL);

    //  The snapshot tells new sessions too.
    Basalt__V1__Snapshot *snap = s_snapshot (model);
    assert_int_equal (snap->n_node_states, 1);
    assert_string_equal (snap->node_states[0]->node, "n1");
    assert_true (snap->node_states[0]->out_of_sync);
    assert_non_null (snap->node_states[0]->reason);
    basalt__v1__snapshot__free_unpacked (snap, NULL);

    //  A commit to it is refused, however small the pod.
    s_pod (model, BAS_KUBE_ADDED, (s_pod_t){.uid = "q", .name = "q", .cpu = "1m"});
    s_commit_t c;
    s_commit_init (&c);
    s_place (&c, "q", "n1", "job-q", "1");
    s_works_t works = {0};
    Basalt__V1__CommitResult *r = s_run (model, &c, &works, NULL);
    assert_non_null (strstr (s_item (r, "q")->reason, "out of sync"));
    assert_int_equal (works.n, 0);
    s_result_free (r);

    //  One pod goes: the accounting is whole again, and the node is back.
    s_delete_pod (model, "p3");
    assert_false (cache_model_node_out_of_sync (model, "n1"));
    assert_int_equal (cache_model_nodes_out_of_sync (model), 0);
    d = s_flush (model, NULL);
    assert_true (s_delta_node_state (d, "n1", &out));
    assert_false (out);
    basalt__v1__delta__free_unpacked (d, NULL);
    snap = s_snapshot (model);
    assert_int_equal (snap->n_node_states, 0);
    basalt__v1__snapshot__free_unpacked (snap, NULL);

    //  The allocatable shrinks (a failed device): out of sync; it grows back: in.
    s_node (model, BAS_KUBE_MODIFIED, "n1", "1", "8Gi");
    assert_true (cache_model_node_out_of_sync (model, "n1"));
    s_node (model, BAS_KUBE_MODIFIED, "n1", "4", "8Gi");
    assert_false (cache_model_node_out_of_sync (model, "n1"));
    cache_model_stats (model, &stats);
    assert_int_equal (stats.out_of_sync_events, 2);

    //  Finished pods do not count.
    s_pod (model, BAS_KUBE_MODIFIED,
           (s_pod_t){.uid = "p1",
                     .name = "p1",
                     .rv = "2",
                     .scheduler = "default-scheduler",
                     .node = "n1",
                     .cpu = "1",
                     .phase = "Succeeded"});
    assert_int_equal (s_used_cpu (model, "n1"), 1000);
    cache_model_destroy (&model);
}

//  Changes coalesce by key between flushes; each flush is the next seq.
static void
test_flush_coalesces (void **state)
{
    (void)state;
    cache_model_t *model = s_model ("4");
    s_pod (model, BAS_KUBE_ADDED, (s_pod_t){.uid = "uid-a", .name = "a"});
    assert_true (cache_model_dirty (model));
    uint64_t seq = 0;
    Basalt__V1__Delta *d = s_flush (model, &seq);
    assert_int_equal (seq, 1);
    assert_int_equal (cache_model_seq (model), 1);
    assert_int_equal (d->seq, 1);
    assert_int_equal (d->epoch, 7);
    assert_int_equal (d->n_upserts, 3); // n1, pg1, a
    basalt__v1__delta__free_unpacked (d, NULL);

    //  Nothing pending: no delta, and the seq does not move.
    assert_false (cache_model_dirty (model));
    assert_null (cache_model_flush (model, &seq));
    assert_int_equal (cache_model_seq (model), 1);

    //  One pod modified three times: one upsert, in its latest form.
    for (int i = 2; i <= 4; i++) {
        char rv[8];
        snprintf (rv, sizeof rv, "%d", i);
        s_pod (model, BAS_KUBE_MODIFIED, (s_pod_t){.uid = "uid-a", .name = "a", .rv = rv});
    }
    assert_int_equal (cache_model_dirty_count (model), 1);
    d = s_flush (model, &seq);
    assert_int_equal (seq, 2);
    assert_int_equal (d->seq, 2);
    assert_int_equal (d->n_upserts, 1);
    assert_int_equal (d->n_deletes, 0);
    assert_string_equal (d->upserts[0]->pod->uid, "uid-a");
    assert_string_equal (d->upserts[0]->pod->resource_version, "4");
    basalt__v1__delta__free_unpacked (d, NULL);

    //  Added then deleted in one window: one delete, by uid.
    s_pod (model, BAS_KUBE_ADDED, (s_pod_t){.uid = "uid-tmp", .name = "tmp"});
    s_delete_pod (model, "uid-tmp");
    d = s_flush (model, &seq);
    assert_int_equal (seq, 3);
    assert_int_equal (d->n_upserts, 0);
    assert_int_equal (d->n_deletes, 1);
    assert_true (d->deletes[0]->has_kind);
    assert_int_equal (d->deletes[0]->kind, K_POD);
    assert_string_equal (d->deletes[0]->key, "uid-tmp");
    basalt__v1__delta__free_unpacked (d, NULL);

    //  Deleting what is not there publishes nothing.
    s_delete_pod (model, "uid-never");
    assert_false (cache_model_dirty (model));

    //  The informers' sync travels alone too.
    cache_model_set_synced (model, true);
    assert_true (cache_model_synced (model));
    d = s_flush (model, &seq);
    assert_non_null (d);
    assert_int_equal (seq, 4);
    assert_true (d->has_synced);
    assert_true (d->synced);
    assert_int_equal (d->n_upserts + d->n_deletes, 0);
    basalt__v1__delta__free_unpacked (d, NULL);
    cache_model_set_synced (model, true); // no change, nothing to publish
    assert_false (cache_model_dirty (model));

    //  A replica that loads the snapshot and applies the deltas agrees.
    Basalt__V1__Snapshot *snap = s_snapshot (model);
    assert_int_equal (snap->seq, 4);
    assert_int_equal (snap->epoch, 7);
    assert_true (snap->synced);
    bas_store_t *replica = bas_store_new ();
    bas_store_load_snapshot (replica, snap);
    basalt__v1__snapshot__free_unpacked (snap, NULL);
    s_pod (model, BAS_KUBE_MODIFIED, (s_pod_t){.uid = "uid-a", .name = "a", .rv = "9"});
    d = s_flush (model, &seq);
    assert_int_equal (d->seq, 5);
    bas_store_apply_delta (replica, d);
    basalt__v1__delta__free_unpacked (d, NULL);
    assert_string_equal (bas_store_pod (replica, "uid-a")->resource_version, "9");
    assert_non_null (bas_store_node (replica, "n1"));
    bas_store_destroy (&replica);
    cache_model_destroy (&model);
}

//  The snapshot carries the ignored devices (DESIGN problem 1) and the
//  out-of-sync nodes, with the model's epoch and seq.
static void
test_snapshot_contents (void **state)
{
    (void)state;
    cache_model_t *model = s_model ("1");
    cache_model_set_ignored_devices (model, "nvidia.com/gpu, example.com/fpga,,");
    s_node (model, BAS_KUBE_ADDED, "n2", "1", "8Gi");
    s_pod (model, BAS_KUBE_ADDED,
           (s_pod_t){.uid = "big", .name = "big", .node = "n2", .cpu = "2", .phase = "Running"});
    uint64_t seq = 0;
    zframe_t *f = cache_model_flush (model, &seq);
    zframe_destroy (&f);
    Basalt__V1__Snapshot *snap = s_snapshot (model);
    assert_int_equal (snap->epoch, cache_model_epoch (model));
    assert_int_equal (snap->seq, seq);
    assert_int_equal (snap->n_ignored_devices, 2);
    assert_string_equal (snap->ignored_devices[0], "nvidia.com/gpu");
    assert_string_equal (snap->ignored_devices[1], "example.com/fpga");
    assert_int_equal (snap->n_node_states, 1); // only the out-of-sync node
    assert_string_equal (snap->node_states[0]->node, "n2");
    assert_true (snap->node_states[0]->out_of_sync);
    assert_int_equal (snap->n_objects, 4); // n1, n2, pg1, big
    basalt__v1__snapshot__free_unpacked (snap, NULL);
    cache_model_destroy (&model);
}

//  Pods of other schedulers are kept only when they hold a node.
static void
test_other_schedulers (void **state)
{
    (void)state;
    cache_model_t *model = s_model ("4");
    s_pod (model, BAS_KUBE_ADDED,
           (s_pod_t){.uid = "theirs-pending", .name = "x", .scheduler = "default-scheduler"});
    s_pod (model, BAS_KUBE_ADDED,
           (s_pod_t){.uid = "theirs-bound",
                     .name = "y",
                     .scheduler = "default-scheduler",
                     .node = "n1",
                     .cpu = "1",
                     .phase = "Running"});
    s_pod (model, BAS_KUBE_ADDED, (s_pod_t){.uid = "ours", .name = "z", .scheduler = "volcano"});
    assert_null (s_get_pod (model, "theirs-pending"));
    assert_non_null (s_get_pod (model, "theirs-bound"));
    assert_non_null (s_get_pod (model, "ours"));
    assert_int_equal (s_used_cpu (model, "n1"), 1000);

    //  The same through the C path.
    Basalt__V1__Object *obj = s_pod_object ("c-theirs", "c1", "other", NULL, 100);
    cache_model_upsert (model, &obj);
    assert_null (obj);
    assert_null (s_get_pod (model, "c-theirs"));
    obj = s_pod_object ("c-bound", "c2", "other", "n1", 500);
    cache_model_upsert (model, &obj);
    assert_non_null (s_get_pod (model, "c-bound"));
    assert_int_equal (s_used_cpu (model, "n1"), 1500);

    //  A pod of another scheduler that loses its node is dropped and uncharged.
    obj = s_pod_object ("c-bound", "c2", "other", NULL, 500);
    cache_model_upsert (model, &obj);
    assert_null (s_get_pod (model, "c-bound"));
    assert_int_equal (s_used_cpu (model, "n1"), 1000);
    //  An object without a key is freed and ignored.
    obj = s_pod_object ("", "nokey", "basalt", NULL, 1);
    cache_model_upsert (model, &obj);
    assert_null (obj);
    cache_model_destroy (&model);
}

//  A session's PodGroup status: applied to the model at once (so the next
//  session does not propose it again), written by a binder, and rolled
//  back when the write fails.
static void
test_status_change (void **state)
{
    (void)state;
    cache_model_t *model = s_model ("4");
    zframe_t *f = cache_model_flush (model, NULL);
    zframe_destroy (&f);
    s_commit_t c;
    s_commit_init (&c);
    s_propose_status (&c, "uid-pg1", "Running");
    s_works_t works = {0};
    Basalt__V1__CommitResult *r = s_run (model, &c, &works, NULL);
    assert_true (s_accepted (r, "uid-pg1"));
    s_result_free (r);
    const Basalt__V1__PodGroup *pg = bas_store_pod_group (cache_model_store (model), "uid-pg1");
    assert_string_equal (pg->status->phase, "Running");
    assert_true (cache_model_dirty (model));
    assert_int_equal (works.n, 1);
    const Basalt__V1__Work *w = works.items[0];
    assert_int_equal (w->item_case, BASALT__V1__WORK__ITEM_STATUS);
    assert_string_equal (w->status->uid, "uid-pg1");
    assert_string_equal (w->status->namespace_, "default");
    assert_string_equal (w->status->name, "pg1");
    assert_string_equal (w->status->status->phase, "Running");
    f = cache_model_flush (model, NULL);
    zframe_destroy (&f);

    //  The write failed: back to what the API has.
    assert_int_equal (cache_model_status_result (model, w->status, false), 0);
    pg = bas_store_pod_group (cache_model_store (model), "uid-pg1");
    assert_string_equal (pg->status->phase, "Inqueue");
    assert_true (cache_model_dirty (model));
    s_works_clear (&works);

    //  Proposed again and written: it stays.
    s_commit_init (&c);
    s_propose_status (&c, "uid-pg1", "Running");
    r = s_run (model, &c, &works, NULL);
    s_result_free (r);
    assert_int_equal (cache_model_status_result (model, works.items[0]->status, true), 0);
    pg = bas_store_pod_group (cache_model_store (model), "uid-pg1");
    assert_string_equal (pg->status->phase, "Running");
    //  A late failure for the same group after success restores nothing.
    assert_int_equal (cache_model_status_result (model, works.items[0]->status, false), 0);
    pg = bas_store_pod_group (cache_model_store (model), "uid-pg1");
    assert_string_equal (pg->status->phase, "Running");
    cache_model_stats_t stats;
    cache_model_stats (model, &stats);
    assert_int_equal (stats.statuses_accepted, 2);
    s_works_clear (&works);
    cache_model_destroy (&model);
}

//  The API changed the group while our write was in flight: a failed write
//  must not roll the model back over the API's newer status.
static void
test_status_rollback_after_api_change (void **state)
{
    (void)state;
    cache_model_t *model = s_model ("4");
    s_commit_t c;
    s_commit_init (&c);
    s_propose_status (&c, "uid-pg1", "Running");
    s_works_t works = {0};
    Basalt__V1__CommitResult *r = s_run (model, &c, &works, NULL);
    s_result_free (r);
    assert_int_equal (works.n, 1);
    //  Someone else wrote the group meanwhile; the watch shows it.
    cJSON *json =
        s_parse ("{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\","
                 "\"metadata\":{\"name\":\"pg1\",\"namespace\":\"default\",\"uid\":\"uid-pg1\","
                 "\"resourceVersion\":\"2\"},\"spec\":{\"minMember\":2,\"queue\":\"default\"},"
                 "\"status\":{\"phase\":\"Completed\"}}");
    assert_int_equal (cache_model_api_event (model, K_PG, BAS_KUBE_MODIFIED, json), 0);
    cJSON_Delete (json);
    assert_int_equal (cache_model_status_result (model, works.items[0]->status, false), 0);
    const Basalt__V1__PodGroup *pg = bas_store_pod_group (cache_model_store (model), "uid-pg1");
    assert_string_equal (pg->status->phase, "Completed");
    assert_string_equal (pg->resource_version, "2");
    s_works_clear (&works);
    cache_model_destroy (&model);
}

//  A status for a pod group the model does not have (deleted, or a uid from
//  before a re-creation) is rejected and produces no work.
static void
test_status_unknown_uid (void **state)
{
    (void)state;
    cache_model_t *model = s_model ("4");
    s_commit_t c;
    s_commit_init (&c);
    s_propose_status (&c, "uid-old-pg1", "Running");
    s_works_t works = {0};
    Basalt__V1__CommitResult *r = s_run (model, &c, &works, NULL);
    assert_int_equal (r->n_results, 1);
    const Basalt__V1__ItemResult *item = s_item (r, "uid-old-pg1");
    assert_false (item->accepted);
    assert_non_null (item->reason);
    assert_int_equal (works.n, 0);
    //  The live group of that name is untouched.
    const Basalt__V1__PodGroup *pg = bas_store_pod_group (cache_model_store (model), "uid-pg1");
    assert_string_equal (pg->status->phase, "Inqueue");
    cache_model_stats_t stats;
    cache_model_stats (model, &stats);
    assert_int_equal (stats.statuses_rejected, 1);
    s_result_free (r);
    cache_model_destroy (&model);
}

//  Objects that do not decode are counted and dropped; nothing aborts.
static void
test_bad_api_objects (void **state)
{
    (void)state;
    cache_model_t *model = s_model ("4");
    cJSON *bad = s_parse ("{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\",\"uid\":\"u\"},"
                          "\"spec\":{\"schedulerName\":\"basalt\",\"containers\":[{\"name\":\"c\","
                          "\"resources\":{\"requests\":{\"cpu\":\"12Qi\"}}}]}}");
    assert_int_equal (cache_model_api_event (model, K_POD, BAS_KUBE_ADDED, bad), -1);
    cJSON_Delete (bad);
    bad = s_parse ("[1,2,3]");
    assert_int_equal (cache_model_api_event (model, K_NODE, BAS_KUBE_MODIFIED, bad), -1);
    assert_int_equal (cache_model_api_event (model, K_NODE, BAS_KUBE_DELETED, bad), -1);
    cJSON_Delete (bad);
    cache_model_stats_t stats;
    cache_model_stats (model, &stats);
    assert_int_equal (stats.decode_errors, 3);
    assert_null (s_get_pod (model, "u"));
    cache_model_destroy (&model);
}

//  Evictions become EvictWork once; a second proposal while the first is
//  in flight, or one made on a stale pod, is refused; a failed eviction may
//  be proposed again.
//  The victim's Event names whom it made room for and that pod's queue
//  (issue 9: evictions are explained).
static void
test_eviction_event_names_preemptor (void **state)
{
    (void)state;
    cache_model_t *model = s_model ("4");
    s_pod (model, BAS_KUBE_ADDED,
           (s_pod_t){.uid = "uid-v",
                     .name = "victim",
                     .node = "n1",
                     .cpu = "1",
                     .phase = "Running",
                     .rv = "5"});
    s_commit_t c;
    s_commit_init (&c);
    s_evict (&c, "uid-v", "5");
    c.ev[0].reason = "reclaim";
    c.ev[0].preemptor = "team-a/trainer-0";
    c.ev[0].preemptor_queue = "q-a";
    s_works_t works = {0};
    Basalt__V1__CommitResult *r = s_run (model, &c, &works, NULL);
    s_result_free (r);
    assert_int_equal (works.n, 2);
    const Basalt__V1__EventWork *e = works.items[1]->event;
    assert_non_null (e);
    assert_string_equal (e->reason, "Reclaimed");
    assert_string_equal (e->type, "Normal");
    assert_string_equal (e->kind, "Pod");
    assert_string_equal (e->message, "Reclaimed by pod team-a/trainer-0 of queue q-a on node n1");
    s_works_clear (&works);
    cache_model_destroy (&model);
}

static void
test_evictions (void **state)
{
    (void)state;
    cache_model_t *model = s_model ("4");
    s_pod (model, BAS_KUBE_ADDED,
           (s_pod_t){.uid = "uid-v",
                     .name = "victim",
                     .node = "n1",
                     .cpu = "1",
                     .phase = "Running",
                     .rv = "5"});
    s_commit_t c;
    s_commit_init (&c);
    s_evict (&c, "uid-v", "5");
    s_works_t works = {0};
    Basalt__V1__CommitResult *r = s_run (model, &c, &works, NULL);
    assert_true (s_accepted (r, "uid-v"));
    assert_int_equal (r->accepted, 1);
    s_result_free (r);
    //  The eviction, and the victim's Event saying why.
    assert_int_equal (works.n, 2);
    assert_int_equal (works.items[0]->item_case, BASALT__V1__WORK__ITEM_EVICT);
    assert_string_equal (works.items[0]->evict->name, "victim");
    assert_string_equal (works.items[0]->evict->pod_uid, "uid-v");
    assert_int_equal (works.items[1]->item_case, BASALT__V1__WORK__ITEM_EVENT);
    assert_string_equal (works.items[1]->event->reason, "Preempted");
    assert_string_equal (works.items[1]->event->name, "victim");
    assert_string_equal (works.items[1]->event->uid, "uid-v");
    //  The victim is Releasing in the model from now on, also across an
    //  API update that does not show the deletion yet.
    const Basalt__V1__Pod *v = bas_store_pod (cache_model_store (model), "uid-v");
    assert_true (v->deleting);
    s_pod (model, BAS_KUBE_MODIFIED,
           (s_pod_t){.uid = "uid-v",
                     .name = "victim",
                     .node = "n1",
                     .cpu = "1",
                     .phase = "Running",
                     .rv = "5"});
    v = bas_store_pod (cache_model_store (model), "uid-v");
    assert_true (v->deleting);
    //  Again while in flight: refused, no second work.
    r = s_run (model, &c, &works, NULL);
    assert_false (r->results[0]->accepted);
    assert_non_null (strstr (r->results[0]->reason, "already being evicted"));
    s_result_free (r);
    assert_int_equal (works.n, 2);
    //  The eviction failed: the pod is not Releasing, and may be proposed again.
    cache_model_evict_result (model, works.items[0]->evict, false);
    assert_false (bas_store_pod (cache_model_store (model), "uid-v")->deleting);
    r = s_run (model, &c, &works, NULL);
    assert_true (s_accepted (r, "uid-v"));
    s_result_free (r);
    assert_int_equal (works.n, 4);
    //  Stale view of the pod: refused.
    s_commit_t stale;
    s_commit_init (&stale);
    s_evict (&stale, "uid-v", "4");
    cache_model_evict_result (model, works.items[2]->evict, false);
    r = s_run (model, &stale, &works, NULL);
    assert_false (r->results[0]->accepted);
    assert_non_null (strstr (r->results[0]->reason, "changed"));
    s_result_free (r);
    //  Gone: refused.
    s_delete_pod (model, "uid-v");
    r = s_run (model, &c, &works, NULL);
    assert_false (r->results[0]->accepted);
    s_result_free (r);
    assert_int_equal (works.n, 4);
    s_works_clear (&works);
    cache_model_destroy (&model);
}

//  A pipelined placement is a reservation: accepted, but nothing is bound
//  or charged to the node.
static void
test_pipelined_placement (void **state)
{
    (void)state;
    cache_model_t *model = s_model ("4");
    s_pod (model, BAS_KUBE_ADDED, (s_pod_t){.uid = "uid-a", .name = "a", .cpu = "2"});
    s_commit_t c;
    s_commit_init (&c);
    s_place (&c, "uid-a", "n1", "job-a", "1");
    c.pl[0].has_pipelined = 1;
    c.pl[0].pipelined = 1;
    s_works_t works = {0};
    Basalt__V1__CommitResult *r = s_run (model, &c, &works, NULL);
    assert_true (s_accepted (r, "uid-a"));
    assert_int_equal (r->accepted, 1);
    s_result_free (r);
    //  One nomination is written (status.nominatedNodeName), and only once.
    assert_int_equal (works.n, 1);
    assert_int_equal (works.items[0]->item_case, BASALT__V1__WORK__ITEM_POD_CONDITION);
    assert_string_equal (works.items[0]->pod_condition->nominated_node_name, "n1");
    assert_string_equal (works.items[0]->pod_condition->pod_uid, "uid-a");
    r = s_run (model, &c, &works, NULL);
    s_result_free (r);
    assert_int_equal (works.n, 1);
    s_works_clear (&works);
    assert_int_equal (s_used_cpu (model, "n1"), 0);
    const Basalt__V1__Pod *pod = bas_store_pod (cache_model_store (model), "uid-a");
    assert_true (pod->assumed_node == NULL || pod->assumed_node[0] == 0);
    cache_model_destroy (&model);
}

//  A pod proposed PodScheduled=False gets the condition written and a
//  FailedScheduling Warning event about it (the session proposes a
//  condition only when its words change); a gone pod gets neither.
static void
test_unschedulable_condition_and_event (void **state)
{
    (void)state;
    cache_model_t *model = s_model ("4");
    s_pod (model, BAS_KUBE_ADDED, (s_pod_t){.uid = "uid-a", .name = "a", .cpu = "8"});
    s_commit_t c;
    s_commit_init (&c);
    Basalt__V1__PodCondition pc = BASALT__V1__POD_CONDITION__INIT;
    pc.pod_uid = "uid-a";
    pc.type = "PodScheduled";
    pc.status = "False";
    pc.reason = "Unschedulable";
    pc.message = "0/1 nodes are available: 1 Insufficient cpu.";
    Basalt__V1__PodCondition gone = pc;
    gone.pod_uid = "uid-gone";
    Basalt__V1__PodCondition *pcs[] = {&pc, &gone};
    c.commit.pod_conditions = pcs;
    c.commit.n_pod_conditions = 2;
    s_works_t works = {0};
    Basalt__V1__CommitResult *r = s_run (model, &c, &works, NULL);
    assert_int_equal (works.n, 2);
    assert_int_equal (works.items[0]->item_case, BASALT__V1__WORK__ITEM_POD_CONDITION);
    assert_int_equal (works.items[1]->item_case, BASALT__V1__WORK__ITEM_EVENT);
    //  The condition's PATCH is bound to the pod it was decided on.
    assert_string_equal (works.items[0]->pod_condition->pod_uid, "uid-a");
    const Basalt__V1__EventWork *ev = works.items[1]->event;
    assert_string_equal (ev->kind, "Pod");
    assert_string_equal (ev->name, "a");
    assert_string_equal (ev->uid, "uid-a");
    assert_string_equal (ev->type, "Warning");
    assert_string_equal (ev->reason, "FailedScheduling");
    assert_string_equal (ev->message, pc.message);
    s_result_free (r);
    s_works_clear (&works);
    cache_model_destroy (&model);
}

//  Every member of Work's oneof has a row in cache_commit.c's result table:
//  a result of any kind is taken (0), one of no kind refused (-1).
// ------------------------------------------------------------ claims

#define K_PVC BASALT__V1__OBJECT_KIND__OBJECT_KIND_PERSISTENT_VOLUME_CLAIM
#define K_PV BASALT__V1__OBJECT_KIND__OBJECT_KIND_PERSISTENT_VOLUME

//  A claim of class "wait" in "default" as the API lists it: unbound
//  unless `volume` is given (then Bound), with a selected node or none.
static void
s_claim (cache_model_t *model, int event, const char *uid, const char *name, const char *rv,
         const char *volume, const char *selected)
{
    char ann[256] = "", vol[256] = "";
    if (selected)
        snprintf (ann, sizeof ann,
                  ",\"annotations\":{\"volume.kubernetes.io/selected-node\":\"%s\"}", selected);
    if (volume)
        snprintf (vol, sizeof vol, ",\"volumeName\":\"%s\"", volume);
    char text[2048];
    snprintf (text, sizeof text,
              "{\"kind\":\"PersistentVolumeClaim\",\"apiVersion\":\"v1\","
              "\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"%s\","
              "\"resourceVersion\":\"%s\"%s},"
              "\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"storageClassName\":\"wait\","
              "\"resources\":{\"requests\":{\"storage\":\"1Gi\"}}%s},"
              "\"status\":{\"phase\":\"%s\"}}",
              name, uid, rv, ann, vol, volume ? "Bound" : "Pending");
    cJSON *json = s_parse (text);
    assert_int_equal (cache_model_api_event (model, K_PVC, event, json), 0);
    cJSON_Delete (json);
}

//  A PV of class "wait", Available, or naming a claim (then Bound).
static void
s_pv (cache_model_t *model, int event, const char *name, const char *rv, const char *claim,
      const char *claim_uid)
{
    char ref[256] = "";
    if (claim)
        snprintf (ref, sizeof ref,
                  ",\"claimRef\":{\"namespace\":\"default\",\"name\":\"%s\",\"uid\":\"%s\"}", claim,
                  claim_uid);
    char text[2048];
    snprintf (text, sizeof text,
              "{\"kind\":\"PersistentVolume\",\"apiVersion\":\"v1\","
              "\"metadata\":{\"name\":\"%s\",\"uid\":\"uid-%s\",\"resourceVersion\":\"%s\"},"
              "\"spec\":{\"capacity\":{\"storage\":\"1Gi\"},\"accessModes\":[\"ReadWriteOnce\"],"
              "\"storageClassName\":\"wait\"%s},"
              "\"status\":{\"phase\":\"%s\"}}",
              name, name, rv, ref, claim ? "Bound" : "Available");
    cJSON *json = s_parse (text);
    assert_int_equal (cache_model_api_event (model, K_PV, event, json), 0);
    cJSON_Delete (json);
}

//  The last placement of c needs claim uid/name, bound to volume (NULL:
//  provisioned on its node). `slot` picks storage for the binding.
static void
s_needs (s_commit_t *c, int slot, const char *uid, const char *name, const char *volume)
{
    Basalt__V1__Placement *pl = &c->pl[c->commit.n_placements - 1];
    assert_true (slot < 8);
    basalt__v1__claim_binding__init (&c->cb[slot]);
    c->cb[slot].claim_uid = (char *)uid;
    c->cb[slot].namespace_ = "default";
    c->cb[slot].name = (char *)name;
    c->cb[slot].volume_name = (char *)volume;
    c->cbp[slot] = &c->cb[slot];
    pl->claims = &c->cbp[slot];
    pl->n_claims = 1;
}

static int
s_count_kind (const s_works_t *w, Basalt__V1__Work__ItemCase kind)
{
    int n = 0;
    for (int i = 0; i < w->n; i++)
        n += w->items[i]->item_case == kind;
    return n;
}

static const Basalt__V1__Work *
s_work_of (const s_works_t *w, const char *claim_uid)
{
    for (int i = 0; i < w->n; i++)
        if (w->items[i]->item_case == BASALT__V1__WORK__ITEM_CLAIM &&
            strcmp (w->items[i]->claim->claim_uid, claim_uid) == 0)
            return w->items[i];
    return NULL;
}

static const Basalt__V1__VolumeClaimWork *
s_claim_work (const s_works_t *w, const char *claim_uid)
{
    const Basalt__V1__Work *work = s_work_of (w, claim_uid);
    if (!work)
        fail_msg ("no claim work for %s", claim_uid);
    return work ? work->claim : NULL;
}

static bool
s_assumed (cache_model_t *model, const char *uid)
{
    const Basalt__V1__Pod *pod = bas_store_pod (cache_model_store (model), uid);
    return pod && pod->assumed_node && *pod->assumed_node;
}

//  Node n1, gang g1 of p1 and p2, claims c1 and c2 unbound, pv1 Available.
static cache_model_t *
s_claims_model (void)
{
    cache_model_t *model = cache_model_new (7, "basalt");
    s_node (model, BAS_KUBE_ADDED, "n1", "4", "8Gi");
    s_pg (model, "g1", "pg1", 2, "Inqueue");
    s_pod (model, BAS_KUBE_ADDED, (s_pod_t){.uid = "p1", .name = "p1", .group = "pg1"});
    s_pod (model, BAS_KUBE_ADDED, (s_pod_t){.uid = "p2", .name = "p2", .group = "pg1"});
    s_claim (model, BAS_KUBE_ADDED, "cu1", "c1", "10", NULL, NULL);
    s_claim (model, BAS_KUBE_ADDED, "cu2", "c2", "11", NULL, NULL);
    s_pv (model, BAS_KUBE_ADDED, "pv1", "12", NULL, NULL);
    return model;
}

//  Gang g1 (p1 and p2 on n1) proposed with one claim each: p1 needs
//  claim uid1 (named n1) bound to pv1 (NULL: provisioned), p2 uid2 to
//  pv2. Returns how many placements were accepted; the work in *works.
static int
s_propose_pair (cache_model_t *model, s_works_t *works, const char *uid1, const char *name1,
                const char *pv1, const char *uid2, const char *name2, const char *pv2)
{
    s_commit_t c;
    s_commit_init (&c);
    s_place (&c, "p1", "n1", "g1", "1");
    s_needs (&c, 0, uid1, name1, pv1);
    s_place (&c, "p2", "n1", "g1", "1");
    s_needs (&c, 1, uid2, name2, pv2);
    int accepted = 0;
    s_result_free (s_run (model, &c, works, &accepted));
    return accepted;
}

//  kube-scheduler's PreBind, in the cache: a gang's claims are written
//  first (the PV's claimRef for a static binding, the claim's selected
//  node for provisioning), with the objects' resourceVersions as
//  preconditions; its pods are bound only once the watch shows every
//  claim bound. Until then the claims and the PV are taken: another gang
//  proposing them is refused.
static void
test_claims_written_before_binds (void **state)
{
    (void)state;
    cache_model_t *model = s_claims_model ();
    Basalt__V1__CommitResult *r;
    int accepted = 0;
    s_works_t works = {0};
    assert_int_equal (s_propose_pair (model, &works, "cu1", "c1", "pv1", "cu2", "c2", NULL), 2);
    assert_int_equal (s_count_kind (&works, BASALT__V1__WORK__ITEM_BIND), 0);
    assert_int_equal (s_count_kind (&works, BASALT__V1__WORK__ITEM_CLAIM), 2);
    assert_true (s_assumed (model, "p1") && s_assumed (model, "p2"));
    assert_int_equal (cache_model_claim_gates (model), 1);
    const Basalt__V1__VolumeClaimWork *w1 = s_claim_work (&works, "cu1");
    assert_string_equal (w1->volume_name, "pv1");
    assert_string_equal (w1->volume_uid, "uid-pv1");
    assert_string_equal (w1->resource_version, "12"); // the PV's
    const Basalt__V1__VolumeClaimWork *w2 = s_claim_work (&works, "cu2");
    assert_null (w2->volume_name);
    assert_string_equal (w2->node, "n1");
    assert_string_equal (w2->resource_version, "11"); // the claim's
    //  The requests the binder makes of them.
    bas_work_request_t req;
    char err[256];
    assert_int_equal (bas_work_request (s_work_of (&works, "cu1"), &req, err, sizeof err), 0);
    assert_string_equal (req.path, "/api/v1/persistentvolumes/pv1");
    assert_non_null (strstr (req.body, "\"claimRef\":{\"kind\":\"PersistentVolumeClaim\""));
    assert_non_null (strstr (req.body, "\"resourceVersion\":\"12\""));
    free (req.body);
    assert_int_equal (bas_work_request (s_work_of (&works, "cu2"), &req, err, sizeof err), 0);
    assert_string_equal (req.path, "/api/v1/namespaces/default/persistentvolumeclaims/c2");
    assert_non_null (strstr (req.body, "\"volume.kubernetes.io/selected-node\":\"n1\""));
    free (req.body);

    //  Another gang may take neither the claims nor the PV meanwhile.
    s_pg (model, "g2", "pg2", 1, "Inqueue");
    s_pod (model, BAS_KUBE_ADDED, (s_pod_t){.uid = "p3", .name = "p3", .group = "pg2"});
    s_claim (model, BAS_KUBE_ADDED, "cu3", "c3", "13", NULL, NULL);
    s_commit_t c2;
    s_commit_init (&c2);
    s_place (&c2, "p3", "n1", "g2", "1");
    s_needs (&c2, 2, "cu1", "c1", NULL);
    s_works_t w2s = {0};
    r = s_run (model, &c2, &w2s, &accepted);
    assert_int_equal (accepted, 0);
    assert_non_null (strstr (s_item (r, "p3")->reason, "is being bound for another pod"));
    s_result_free (r);
    s_commit_init (&c2);
    s_place (&c2, "p3", "n1", "g2", "1");
    s_needs (&c2, 2, "cu3", "c3", "pv1");
    r = s_run (model, &c2, &w2s, &accepted);
    assert_int_equal (accepted, 0);
    assert_non_null (strstr (s_item (r, "p3")->reason, "persistentvolume \"pv1\" is no longer"));
    s_result_free (r);
    assert_int_equal (w2s.n, 0);

    //  The writes succeed and the PV controller binds c1: c2 is not yet
    //  bound, so nothing is bound.
    assert_int_equal (cache_model_work_result (model, s_work_of (&works, "cu1"), true, NULL), 0);
    s_pv (model, BAS_KUBE_MODIFIED, "pv1", "14", "c1", "cu1");
    s_claim (model, BAS_KUBE_MODIFIED, "cu1", "c1", "15", "pv1", NULL);
    assert_int_equal (cache_model_work_result (model, s_work_of (&works, "cu2"), true, NULL), 0);
    s_claim (model, BAS_KUBE_MODIFIED, "cu2", "c2", "16", NULL, "n1");
    assert_false (cache_model_has_ready (model));
    //  The provisioner's volume is bound to c2: the gang's binds go out.
    s_claim (model, BAS_KUBE_MODIFIED, "cu2", "c2", "17", "pvc-cu2", "n1");
    assert_true (cache_model_has_ready (model));
    s_works_t binds = {0};
    cache_model_take_ready (model, s_collect, &binds);
    assert_int_equal (binds.n, 2);
    assert_int_equal (s_count_kind (&binds, BASALT__V1__WORK__ITEM_BIND), 2);
    assert_int_equal (cache_model_claim_gates (model), 0);
    cache_model_stats_t st;
    cache_model_stats (model, &st);
    assert_int_equal (st.claim_writes, 2);
    assert_int_equal (st.claim_gates_failed, 0);
    s_works_clear (&binds);
    s_works_clear (&works);
    cache_model_destroy (&model);
}

//  A claim write that fails gives the whole gang up: no pod bound, each
//  pending again, the claims and the PV free for the next session.
static void
test_claims_failure_releases_gang (void **state)
{
    (void)state;
    cache_model_t *model = s_claims_model ();
    s_commit_t c;
    Basalt__V1__CommitResult *r;
    int accepted = 0;
    s_works_t works = {0};
    assert_int_equal (s_propose_pair (model, &works, "cu1", "c1", "pv1", "cu2", "c2", NULL), 2);
    assert_int_equal (cache_model_work_result (model, s_work_of (&works, "cu2"), false,
                                               "the object has been modified"),
                      0);
    assert_false (s_assumed (model, "p1"));
    assert_false (s_assumed (model, "p2"));
    assert_false (cache_model_has_ready (model));
    assert_int_equal (cache_model_claim_gates (model), 0);
    //  c1's claimRef write on pv1 is still on its way: until its result
    //  comes, gate or no gate, neither c1 nor pv1 may be taken (a second
    //  write could race it, or c1 end up bound to another PV).
    s_works_t more = {0};
    s_commit_t one;
    s_commit_init (&one);
    s_place (&one, "p1", "n1", "g1", "1");
    s_needs (&one, 0, "cu2", "c2", "pv1");
    r = s_run (model, &one, &more, &accepted);
    assert_int_equal (accepted, 0);
    assert_non_null (strstr (s_item (r, "p1")->reason, "persistentvolume \"pv1\" is no longer"));
    s_result_free (r);
    s_commit_init (&one);
    s_place (&one, "p1", "n1", "g1", "1");
    s_needs (&one, 0, "cu1", "c1", NULL);
    r = s_run (model, &one, &more, &accepted);
    assert_int_equal (accepted, 0);
    assert_non_null (strstr (s_item (r, "p1")->reason, "is being bound for another pod"));
    s_result_free (r);
    assert_int_equal (more.n, 0);
    assert_int_equal (cache_model_work_result (model, s_work_of (&works, "cu1"), true, NULL), 0);
    //  A claim bound later changes nothing: its gate is gone.
    s_claim (model, BAS_KUBE_MODIFIED, "cu2", "c2", "20", "pvc-cu2", "n1");
    assert_false (cache_model_has_ready (model));
    //  The moot check: nothing waits for a write of c1 any more.
    assert_int_equal (cache_claims_moot (model, s_claim_work (&works, "cu1")), -1);
    s_works_clear (&works);

    //  Proposed again, the gang waits; past the bind timeout it is given up.
    s_commit_init (&c);
    s_place (&c, "p1", "n1", "g1", "1");
    s_needs (&c, 0, "cu1", "c1", "pv1");
    r = s_run (model, &c, &works, &accepted);
    assert_int_equal (accepted, 1);
    s_result_free (r);
    assert_int_equal (cache_model_claim_gates (model), 1);
    assert_int_equal (cache_claims_moot (model, s_claim_work (&works, "cu1")), 0);
    cache_model_set_volume_bind_timeout (model, 1000);
    assert_int_equal (cache_claims_expire (model, bas_mono_ms ()), 0);
    assert_int_equal (cache_claims_expire (model, bas_mono_ms () + 2000), 1);
    assert_false (s_assumed (model, "p1"));
    assert_int_equal (cache_model_claim_gates (model), 0);
    cache_model_stats_t st;
    cache_model_stats (model, &st);
    assert_int_equal (st.claim_gates_failed, 2);
    //  Its write is answered late (the binder's lease ran out): only then
    //  may c1 be proposed again.
    assert_int_equal (cache_model_work_result (model, s_work_of (&works, "cu1"), false, "Expired"),
                      0);
    s_works_clear (&works);

    //  A claim deleted while its gang waits gives the gang up too.
    s_commit_init (&c);
    s_place (&c, "p1", "n1", "g1", "1");
    s_needs (&c, 0, "cu1", "c1", "pv1");
    r = s_run (model, &c, &works, &accepted);
    assert_int_equal (accepted, 1);
    s_result_free (r);
    cJSON *del = s_parse ("{\"metadata\":{\"name\":\"c1\",\"namespace\":\"default\","
                          "\"uid\":\"cu1\"}}");
    assert_int_equal (cache_model_api_event (model, K_PVC, BAS_KUBE_DELETED, del), 0);
    cJSON_Delete (del);
    assert_false (s_assumed (model, "p1"));
    assert_int_equal (cache_model_claim_gates (model), 0);
    s_works_clear (&works);
    cache_model_destroy (&model);
}

//  What a cache killed after its writes left behind (a PV naming the
//  claim, a claim naming the node) is not written again; a claim being
//  provisioned on another node, or bound to another PV, refuses the gang.
static void
test_claims_not_written_twice (void **state)
{
    (void)state;
    cache_model_t *model = s_claims_model ();
    s_pv (model, BAS_KUBE_MODIFIED, "pv1", "30", "c1", "cu1");
    s_claim (model, BAS_KUBE_MODIFIED, "cu2", "c2", "31", NULL, "n1");
    s_commit_t c;
    Basalt__V1__CommitResult *r;
    int accepted = 0;
    s_works_t works = {0};
    assert_int_equal (s_propose_pair (model, &works, "cu1", "c1", "pv1", "cu2", "c2", NULL), 2);
    assert_int_equal (works.n, 0); // no write, no bind yet
    assert_int_equal (cache_model_claim_gates (model), 1);
    s_claim (model, BAS_KUBE_MODIFIED, "cu1", "c1", "32", "pv1", NULL);
    s_claim (model, BAS_KUBE_MODIFIED, "cu2", "c2", "33", "pvc-cu2", "n1");
    cache_model_take_ready (model, s_collect, &works);
    assert_int_equal (s_count_kind (&works, BASALT__V1__WORK__ITEM_BIND), 2);
    s_works_clear (&works);
    cache_model_destroy (&model);

    model = s_claims_model ();
    s_claim (model, BAS_KUBE_MODIFIED, "cu2", "c2", "40", NULL, "n9");
    s_commit_init (&c);
    s_place (&c, "p2", "n1", "g1", "1");
    s_needs (&c, 0, "cu2", "c2", NULL);
    r = s_run (model, &c, &works, &accepted);
    assert_int_equal (accepted, 0);
    assert_non_null (strstr (s_item (r, "p2")->reason, "already being provisioned on node n9"));
    s_result_free (r);
    s_claim (model, BAS_KUBE_MODIFIED, "cu1", "c1", "41", "pv-other", NULL);
    s_commit_init (&c);
    s_place (&c, "p1", "n1", "g1", "1");
    s_needs (&c, 0, "cu1", "c1", "pv1");
    r = s_run (model, &c, &works, &accepted);
    assert_int_equal (accepted, 0);
    assert_non_null (strstr (s_item (r, "p1")->reason, "was bound to volume \"pv-other\""));
    s_result_free (r);
    assert_int_equal (works.n, 0);
    assert_false (s_assumed (model, "p1") || s_assumed (model, "p2"));
    cache_model_destroy (&model);
}

//  Two pods of one gang sharing a claim: one write, both bound after it;
//  the two deciding it differently is refused.
static void
test_claims_shared_in_gang (void **state)
{
    (void)state;
    cache_model_t *model = s_claims_model ();
    s_commit_t c;
    Basalt__V1__CommitResult *r;
    int accepted = 0;
    s_works_t works = {0};
    assert_int_equal (s_propose_pair (model, &works, "cu1", "c1", NULL, "cu1", "c1", NULL), 2);
    assert_int_equal (works.n, 1);
    assert_int_equal (cache_model_work_result (model, works.items[0], true, NULL), 0);
    s_claim (model, BAS_KUBE_MODIFIED, "cu1", "c1", "50", "pvc-cu1", "n1");
    s_works_clear (&works);
    cache_model_take_ready (model, s_collect, &works);
    assert_int_equal (s_count_kind (&works, BASALT__V1__WORK__ITEM_BIND), 2);
    s_works_clear (&works);
    cache_model_destroy (&model);

    model = s_claims_model ();
    s_node (model, BAS_KUBE_ADDED, "n2", "4", "8Gi");
    s_commit_init (&c);
    s_place (&c, "p1", "n1", "g1", "1");
    s_needs (&c, 0, "cu1", "c1", NULL);
    s_place (&c, "p2", "n2", "g1", "1");
    s_needs (&c, 1, "cu1", "c1", NULL);
    r = s_run (model, &c, &works, &accepted);
    assert_int_equal (accepted, 0);
    assert_non_null (strstr (s_item (r, "p2")->reason, "decided twice in one gang"));
    s_result_free (r);
    assert_int_equal (works.n, 0);
    assert_int_equal (cache_model_claim_gates (model), 0);
    cache_model_destroy (&model);
}

static void
test_work_result_table (void **state)
{
    (void)state;
    cache_model_t *model = cache_model_new (7, "basalt");
    const ProtobufCMessageDescriptor *wd = &basalt__v1__work__descriptor;
    for (unsigned i = 0; i < wd->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &wd->fields[i];
        if (!(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF))
            continue;
        Basalt__V1__Work *w = util_model_empty_work (f);
        if (cache_model_work_result (model, w, false, "failed") != 0)
            fail_msg ("Work member %s has no row in cache-svc's result table", f->name);
        basalt__v1__work__free_unpacked (w, NULL);
    }
    Basalt__V1__Work none = BASALT__V1__WORK__INIT;
    assert_int_equal (cache_model_work_result (model, &none, true, NULL), -1);
    cache_model_destroy (&model);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup (test_gang_all_or_nothing, util_log_quiet),
        cmocka_unit_test_setup (test_stale_pod_rejected, util_log_quiet),
        cmocka_unit_test_setup (test_accepted_placement_assumes_and_binds, util_log_quiet),
        cmocka_unit_test_setup (test_gangs_compete_in_one_commit, util_log_quiet),
        cmocka_unit_test_setup (test_gangs_fill_node_exactly, util_log_quiet),
        cmocka_unit_test_setup (test_commit_in_slices, util_log_quiet),
        cmocka_unit_test_setup (test_duplicate_placement_counted_once, util_log_quiet),
        cmocka_unit_test_setup (test_bind_failure_releases, util_log_quiet),
        cmocka_unit_test_setup (test_evictions, util_log_quiet),
        cmocka_unit_test_setup (test_pipelined_placement, util_log_quiet),
        cmocka_unit_test_setup (test_node_out_of_sync, util_log_quiet),
        cmocka_unit_test_setup (test_flush_coalesces, util_log_quiet),
        cmocka_unit_test_setup (test_snapshot_contents, util_log_quiet),
        cmocka_unit_test_setup (test_unschedulable_condition_and_event, util_log_quiet),
        cmocka_unit_test_setup (test_other_schedulers, util_log_quiet),
        cmocka_unit_test_setup (test_status_change, util_log_quiet),
        cmocka_unit_test_setup (test_status_rollback_after_api_change, util_log_quiet),
        cmocka_unit_test_setup (test_status_unknown_uid, util_log_quiet),
        cmocka_unit_test_setup (test_bad_api_objects, util_log_quiet),
        cmocka_unit_test (test_work_result_table),
        cmocka_unit_test_setup (test_claims_written_before_binds, util_log_quiet),
        cmocka_unit_test_setup (test_claims_failure_releases_gang, util_log_quiet),
        cmocka_unit_test_setup (test_claims_not_written_twice, util_log_quiet),
        cmocka_unit_test_setup (test_claims_shared_in_gang, util_log_quiet),
        cmocka_unit_test (test_eviction_event_names_preemptor),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
