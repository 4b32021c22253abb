/*  test_ctl_queue: controller-svc's queue controller against a fake API
    that records every request and answers when the test says, with a clock
    the test moves. Written as the spec of:

    - root and the default queue are created when the model lacks them
      (root not reclaimable, default reclaimable, both weight 1); 409 counts
      as done, another failure is tried again, an existing queue is left;
    - each queue's status is written with a merge patch to /status: state
      Open when unset, Closing -> Closed once no PodGroup names the queue,
      allocated = requests of its groups' placed, unfinished, undeleted
      pods, summed up the hierarchy to root;
    - nothing is written when the model already holds it, nothing twice
      while a write is in flight, and a failed write is tried again;
    - the PodGroup phase gauges Volcano's queue controller exports.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bas_k8s.h"
#include "bas_metrics.h"
#include "bas_store.h"
#include "ctl_queue.h"
#include "util_fakeapi.h"

#define S_INTERVAL_MS 1000
#define S_BUDGET_US 1000000

typedef struct {
    util_fakeapi_t api; // the requests and the clock
    bas_store_t *store;
    bas_metrics_t *metrics;
    ctl_queue_t *queues;
} s_fake_t;

static int
s_setup (void **state)
{
    s_fake_t *f = calloc (1, sizeof *f);
    f->api.now = 1000000;
    f->store = bas_store_new ();
    f->metrics = bas_metrics_new ();
    ctl_queue_describe_metrics (f->metrics);
    ctl_queue_config_t cfg = {
        .default_queue = "default",
        .interval_ms = S_INTERVAL_MS,
        .request = util_fakeapi_request,
        .request_arg = &f->api,
        .clock = util_fakeapi_clock,
        .clock_arg = &f->api,
        .metrics = f->metrics,
    };
    f->queues = ctl_queue_new (&cfg, f->store);
    *state = f;
    return 0;
}

static int
s_teardown (void **state)
{
    s_fake_t *f = *state;
    ctl_queue_destroy (&f->queues);
    bas_store_destroy (&f->store);
    bas_metrics_destroy (&f->metrics);
    util_fakeapi_clear (&f->api);
    free (f);
    return 0;
}

static void
s_answer (s_fake_t *f, int i, long code)
{
    util_fakeapi_answer (&f->api, i, code, NULL, "{}");
}

//  Run a whole recount (the budget is large; a slice returns true).
static void
s_step (s_fake_t *f)
{
    for (int i = 0; i < 100 && ctl_queue_step (f->queues, S_BUDGET_US); i++)
        ;
}

static void
s_upsert (s_fake_t *f, Basalt__V1__Object *obj)
{
    assert_int_equal (bas_store_upsert (f->store, &obj), 0);
    ctl_queue_changed (f->queues);
}

static cJSON *
s_json (const char *text)
{
    cJSON *json = cJSON_Parse (text);
    assert_non_null (json);
    return json;
}

//  A queue as the API would hold it; `status` is its status JSON or NULL.
static void
s_queue (s_fake_t *f, const char *name, const char *parent, const char *rv, const char *status)
{
    char text[1024];
    snprintf (text, sizeof text,
              "{\"metadata\":{\"name\":\"%s\",\"uid\":\"q-%s\",\"resourceVersion\":\"%s\"},"
              "\"spec\":{\"weight\":1%s%s%s}%s%s}",
              name, name, rv, parent ? ",\"parent\":\"" : "", parent ? parent : "",
              parent ? "\"" : "", status ? ",\"status\":" : "", status ? status : "");
    cJSON *json = s_json (text);
    char err[256];
    Basalt__V1__Object *obj = calloc (1, sizeof *obj);
    basalt__v1__object__init (obj);
    obj->queue = bas_k8s_queue_from_json (json, err, sizeof err);
    if (!obj->queue)
        print_error ("%s\n", err);
    assert_non_null (obj->queue);
    obj->kind_case = BASALT__V1__OBJECT__KIND_QUEUE;
    cJSON_Delete (json);
    s_upsert (f, obj);
}

static void
s_group (s_fake_t *f, const char *name, const char *queue, const char *phase)
{
    char text[1024];
    snprintf (text, sizeof text,
              "{\"metadata\":{\"uid\":\"pg-%s\",\"namespace\":\"ns\",\"name\":\"%s\","
              "\"resourceVersion\":\"1\"},\"spec\":{\"minMember\":1,\"queue\":\"%s\"},"
              "\"status\":{\"phase\":\"%s\"}}",
              name, name, queue, phase);
    cJSON *json = s_json (text);
    char err[256];
    Basalt__V1__Object *obj = calloc (1, sizeof *obj);
    basalt__v1__object__init (obj);
    obj->pod_group = bas_k8s_podgroup_from_json (json, err, sizeof err);
    assert_non_null (obj->pod_group);
    obj->kind_case = BASALT__V1__OBJECT__KIND_POD_GROUP;
    cJSON_Delete (json);
    s_upsert (f, obj);
}

//  A pod of group `group` requesting `cpu`; `node` binds it, `phase` and
//  `deleting` as given.
static void
s_pod (s_fake_t *f, const char *name, const char *group, const char *cpu, const char *node,
       const char *phase, bool deleting)
{
    char text[2048];
    snprintf (text, sizeof text,
              "{\"metadata\":{\"uid\":\"p-%s\",\"namespace\":\"ns\",\"name\":\"%s\","
              "\"resourceVersion\":\"1\",\"annotations\":{\"scheduling.k8s.io/group-name\":"
              "\"%s\"}%s},\"spec\":{\"schedulerName\":\"basalt\"%s%s%s,\"containers\":[{\"name\":"
              "\"c\",\"resources\":{\"requests\":{\"cpu\":\"%s\",\"memory\":\"1Gi\"}}}]},"
              "\"status\":{\"phase\":\"%s\"}}",
              name, name, group, deleting ? ",\"deletionTimestamp\":\"2024-01-01T00:01:00Z\"" : "",
              node ? ",\"nodeName\":\"" : "", node ? node : "", node ? "\"" : "", cpu, phase);
    cJSON *json = s_json (text);
    char err[256];
    Basalt__V1__Object *obj = calloc (1, sizeof *obj);
    basalt__v1__object__init (obj);
    obj->pod = bas_k8s_pod_from_json (json, err, sizeof err);
    if (!obj->pod)
        print_error ("%s\n", err);
    assert_non_null (obj->pod);
    obj->kind_case = BASALT__V1__OBJECT__KIND_POD;
    cJSON_Delete (json);
    s_upsert (f, obj);
}

static const char *
s_at (const cJSON *obj, const char *a, const char *b, const char *c)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive (obj, a);
    if (b)
        v = cJSON_GetObjectItemCaseSensitive (v, b);
    if (c)
        v = cJSON_GetObjectItemCaseSensitive (v, c);
    return cJSON_IsString (v) ? v->valuestring : NULL;
}

//  The index of the request to `path` among those from `from` on, or -1.
static int
s_find (s_fake_t *f, int from, const char *method, const char *path)
{
    for (int i = from; i < f->api.n; i++)
        if (strcmp (f->api.req[i].method, method) == 0 && strcmp (f->api.req[i].path, path) == 0)
            return i;
    return -1;
}

#define S_QUEUES "/apis/scheduling.volcano.sh/v1beta1/queues"

// ------------------------------------------------------------ creation

static void
test_creates_root_and_default (void **state)
{
    s_fake_t *f = *state;
    ctl_queue_step (f->queues, S_BUDGET_US);
    assert_int_equal (f->api.n, 2);
    for (int i = 0; i < 2; i++) {
        assert_string_equal (f->api.req[i].method, "POST");
        assert_string_equal (f->api.req[i].path, S_QUEUES);
        assert_string_equal (s_at (f->api.req[i].body, "kind", NULL, NULL), "Queue");
        const cJSON *spec = cJSON_GetObjectItemCaseSensitive (f->api.req[i].body, "spec");
        assert_int_equal (cJSON_GetObjectItemCaseSensitive (spec, "weight")->valueint, 1);
    }
    assert_string_equal (s_at (f->api.req[0].body, "metadata", "name", NULL), "root");
    assert_true (cJSON_IsFalse (cJSON_GetObjectItemCaseSensitive (
        cJSON_GetObjectItemCaseSensitive (f->api.req[0].body, "spec"), "reclaimable")));
    assert_string_equal (s_at (f->api.req[1].body, "metadata", "name", NULL), "default");
    assert_true (cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (
        cJSON_GetObjectItemCaseSensitive (f->api.req[1].body, "spec"), "reclaimable")));
    //  Not again while they are in flight.
    f->api.now += 10 * S_INTERVAL_MS;
    s_step (f);
    assert_int_equal (f->api.n, 2);
    //  root made; default refused (a 500 is tried again), then 409: done.
    s_answer (f, 0, 201);
    s_answer (f, 1, 500);
    s_step (f);
    assert_int_equal (f->api.n, 3);
    assert_string_equal (s_at (f->api.req[2].body, "metadata", "name", NULL), "default");
    s_answer (f, 2, 409);
    f->api.now += 10 * S_INTERVAL_MS;
    s_step (f);
    assert_int_equal (s_find (f, 3, "POST", S_QUEUES), -1);
    ctl_queue_stats_t st;
    ctl_queue_stats (f->queues, &st);
    assert_int_equal (st.creates, 3);
    assert_int_equal (st.write_failures, 1);
}

static void
test_existing_queues_left (void **state)
{
    s_fake_t *f = *state;
    s_queue (f, "root", NULL, "1",
             "{\"state\":\"Open\",\"allocated\":{\"cpu\":\"0\",\"memory\":\"0\"}}");
    s_queue (f, "default", NULL, "2",
             "{\"state\":\"Open\",\"allocated\":{\"cpu\":\"0\",\"memory\":\"0\"}}");
    s_step (f);
    //  Both exist and their status is what the pass finds: nothing at all.
    assert_int_equal (f->api.n, 0);
}

// ------------------------------------------------------------ status

//  root <- q1 <- q2; default beside q1. Returns with every write answered.
static void
s_hierarchy (s_fake_t *f)
{
    s_queue (f, "root", NULL, "1", NULL);
    s_queue (f, "default", NULL, "2", NULL);
    s_queue (f, "q1", NULL, "3", NULL);
    s_queue (f, "q2", "q1", "4", NULL);
    s_group (f, "g1", "q1", "Running");
    s_group (f, "g2", "q2", "Inqueue");
    s_group (f, "g3", "default", "Pending");
    s_pod (f, "a", "g1", "1", "n1", "Running", false);    // counts
    s_pod (f, "b", "g1", "2", "n1", "Succeeded", false);  // finished
    s_pod (f, "c", "g1", "4", "n1", "Running", true);     // being deleted
    s_pod (f, "d", "g2", "500m", "n2", "Pending", false); // bound, not yet running
    s_pod (f, "e", "g2", "8", NULL, "Pending", false);    // not placed
    s_pod (f, "f", "g3", "250m", NULL, "Pending", false); // not placed
}

static const char *
s_alloc (s_fake_t *f, int i, const char *res)
{
    return s_at (f->api.req[i].body, "status", "allocated", res);
}

static void
test_status_written (void **state)
{
    s_fake_t *f = *state;
    s_hierarchy (f);
    s_step (f);
    assert_int_equal (f->api.n, 4);
    int root = s_find (f, 0, "PATCH", S_QUEUES "/root/status");
    int def = s_find (f, 0, "PATCH", S_QUEUES "/default/status");
    int q1 = s_find (f, 0, "PATCH", S_QUEUES "/q1/status");
    int q2 = s_find (f, 0, "PATCH", S_QUEUES "/q2/status");
    assert_true (root >= 0 && def >= 0 && q1 >= 0 && q2 >= 0);
    for (int i = 0; i < 4; i++) {
        assert_string_equal (f->api.req[i].content_type, "application/merge-patch+json");
        assert_string_equal (s_at (f->api.req[i].body, "status", "state", NULL), "Open");
    }
    //  q2 holds d; q1 holds a and q2's; root holds everything.
    assert_string_equal (s_alloc (f, q2, "cpu"), "500m");
    assert_string_equal (s_alloc (f, q2, "memory"), "1Gi");
    assert_string_equal (s_alloc (f, q1, "cpu"), "1500m");
    assert_string_equal (s_alloc (f, q1, "memory"), "2Gi");
    assert_string_equal (s_alloc (f, root, "cpu"), "1500m");
    assert_string_equal (s_alloc (f, def, "cpu"), "0");
    //  The gauges, per queue and phase.
    assert_true (bas_metrics_get (f->metrics, "volcano_queue_pod_group_running_count",
                                  "queue_name=\"q1\"") == 1);
    assert_true (bas_metrics_get (f->metrics, "volcano_queue_pod_group_inqueue_count",
                                  "queue_name=\"q2\"") == 1);
    assert_true (bas_metrics_get (f->metrics, "volcano_queue_pod_group_pending_count",
                                  "queue_name=\"default\"") == 1);
    assert_true (bas_metrics_get (f->metrics, "volcano_queue_pod_group_running_count",
                                  "queue_name=\"default\"") == 0);
    char *text = bas_metrics_render (f->metrics);
    assert_non_null (strstr (text, "volcano_queue_pod_group_running_count{queue_name=\"root\"} 0"));
    free (text);

    //  In flight: a change does not send the same write again.
    f->api.now += S_INTERVAL_MS;
    s_pod (f, "g", "g3", "1", NULL, "Pending", false);
    s_step (f);
    assert_int_equal (f->api.n, 4);
    for (int i = 0; i < 4; i++)
        s_answer (f, i, 200);
    //  The model catches up (the watch brings the written statuses): quiet.
    s_queue (f, "root", NULL, "11",
             "{\"state\":\"Open\",\"allocated\":{\"cpu\":\"1500m\",\"memory\":\"2Gi\"}}");
    s_queue (f, "default", NULL, "12",
             "{\"state\":\"Open\",\"allocated\":{\"cpu\":\"0\",\"memory\":\"0\"}}");
    s_queue (f, "q1", NULL, "13",
             "{\"state\":\"Open\",\"allocated\":{\"cpu\":\"1500m\",\"memory\":\"2Gi\"}}");
    s_queue (f, "q2", "q1", "14",
             "{\"state\":\"Open\",\"allocated\":{\"cpu\":\"500m\",\"memory\":\"1Gi\"}}");
    f->api.now += S_INTERVAL_MS;
    s_step (f);
    assert_int_equal (f->api.n, 4);

    //  A pod of q2 is bound: not before the interval, then q2, q1, root.
    s_pod (f, "e", "g2", "8", "n3", "Pending", false);
    s_step (f);
    assert_int_equal (f->api.n, 4);
    f->api.now += S_INTERVAL_MS;
    s_step (f);
    assert_int_equal (f->api.n, 7);
    assert_string_equal (s_alloc (f, s_find (f, 4, "PATCH", S_QUEUES "/q2/status"), "cpu"),
                         "8500m");
    assert_string_equal (s_alloc (f, s_find (f, 4, "PATCH", S_QUEUES "/q1/status"), "cpu"),
                         "9500m");
    assert_string_equal (s_alloc (f, s_find (f, 4, "PATCH", S_QUEUES "/root/status"), "cpu"),
                         "9500m");
    assert_int_equal (s_find (f, 4, "PATCH", S_QUEUES "/default/status"), -1);
    //  A failed write is sent again at the next pass.
    int q2w = s_find (f, 4, "PATCH", S_QUEUES "/q2/status");
    s_answer (f, q2w, 500);
    f->api.now += S_INTERVAL_MS;
    s_step (f);
    assert_int_equal (s_find (f, 7, "PATCH", S_QUEUES "/q2/status"), 7);
    assert_int_equal (f->api.n, 8);
}

static void
test_closing_becomes_closed (void **state)
{
    s_fake_t *f = *state;
    const char *closing = "{\"state\":\"Closing\",\"allocated\":{\"cpu\":\"0\",\"memory\":\"0\"}}";
    s_queue (f, "root", NULL, "1",
             "{\"state\":\"Open\",\"allocated\":{\"cpu\":\"0\",\"memory\":\"0\"}}");
    s_queue (f, "default", NULL, "2",
             "{\"state\":\"Open\",\"allocated\":{\"cpu\":\"0\",\"memory\":\"0\"}}");
    s_queue (f, "busy", NULL, "3", closing);
    s_queue (f, "idle", NULL, "4", closing);
    s_group (f, "g1", "busy", "Pending");
    s_step (f);
    //  busy still has a group: it stays Closing (nothing to write); idle
    //  has none: Closed.
    assert_int_equal (f->api.n, 1);
    assert_string_equal (f->api.req[0].path, S_QUEUES "/idle/status");
    assert_string_equal (s_at (f->api.req[0].body, "status", "state", NULL), "Closed");
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_creates_root_and_default, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_existing_queues_left, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_status_written, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_closing_becomes_closed, s_setup, s_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
