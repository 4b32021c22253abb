/*  test_ctl_lifecycle: controller-svc's PodGroup lifecycle decisions
    against a fake API that records every request and answers when the test
    says, with a clock the test moves. Written as the spec of:

    - creation: a pod of a watched owner gets the group its owner's
      annotations say, then is annotated; an owner the informers do not
      hold is read with a GET (its uid checked), the pod's own annotation
      as the fallback; the pods of one owner send one POST of their group,
      not one each;
    - the deferred clean-up keyed by uid (DESIGN problem 5): a delete
      decided for group uid A, retried later, never touches the group B
      that now has A's name;
    - the precondition path: every DELETE carries {uid, resourceVersion};
      a 409 precondition failure is dropped and never retried (counted at
      the fake); a 5xx is retried, unless the decision went stale;
    - a pod never joins a group whose delete is unresolved;
    - bad input (a queue that does not exist, a malformed min-member
      annotation) gives one Warning Event, and everything else goes on.
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
#include "bas_store.h"
#include "ctl_lifecycle.h"
#include "util_fakeapi.h"

#define S_RETRY_MS 1000

typedef struct {
    util_fakeapi_t api; // the requests and the clock
    bas_store_t *store;
    ctl_lifecycle_t *life;
} s_fake_t;

static int
s_setup (void **state)
{
    s_fake_t *f = calloc (1, sizeof *f);
    f->api.now = 1000000;
    f->store = bas_store_new ();
    ctl_lifecycle_config_t cfg = {
        .scheduler_names = "basalt,volcano",
        .default_queue = "default",
        .component = "test",
        .retry_ms = S_RETRY_MS,
        .request = util_fakeapi_request,
        .request_arg = &f->api,
        .clock = util_fakeapi_clock,
        .wall_clock = util_fakeapi_clock,
        .clock_arg = &f->api,
    };
    f->life = ctl_lifecycle_new (&cfg, f->store);
    *state = f;
    return 0;
}

static int
s_teardown (void **state)
{
    s_fake_t *f = *state;
    ctl_lifecycle_destroy (&f->life);
    bas_store_destroy (&f->store);
    util_fakeapi_clear (&f->api);
    free (f);
    return 0;
}

//  Answer request i.
static void
s_answer (s_fake_t *f, int i, long code, const char *reason, const char *body)
{
    util_fakeapi_answer (&f->api, i, code, reason, body);
}

static const char *
s_at_str (const cJSON *obj, const char *a, const char *b, const char *c)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive (obj, a);
    if (b)
        v = cJSON_GetObjectItemCaseSensitive (v, b);
    if (c)
        v = cJSON_GetObjectItemCaseSensitive (v, c);
    return cJSON_IsString (v) ? v->valuestring : NULL;
}

//  Put an object into the model (as the replica would) and tell the lifecycle.
static const Basalt__V1__Pod *
s_pod (s_fake_t *f, const char *uid, const char *name, const char *owner_kind,
       const char *owner_uid, const char *group, bool deleting, const char *min_member)
{
    char owner[256] = "";
    if (owner_uid)
        snprintf (owner, sizeof owner,
                  ",\"ownerReferences\":[{\"apiVersion\":\"%s\",\"kind\":\"%s\",\"name\":\"%s\","
                  "\"uid\":\"%s\",\"controller\":true}]",
                  strcmp (owner_kind, "Job") == 0 ? "batch/v1" : "apps/v1", owner_kind,
                  strcmp (owner_kind, "Job") == 0 ? "job1" : "rs1", owner_uid);
    char ann[256] = "";
    int n = 0;
    if (group)
        n += snprintf (ann + n, sizeof ann - (size_t)n, "\"scheduling.k8s.io/group-name\":\"%s\"",
                       group);
    if (min_member)
        n += snprintf (ann + n, sizeof ann - (size_t)n,
                       "%s\"scheduling.volcano.sh/group-min-member\":\"%s\"", n ? "," : "",
                       min_member);
    char text[2048];
    snprintf (text, sizeof text,
              "{\"metadata\":{\"uid\":\"%s\",\"namespace\":\"ns\",\"name\":\"%s\","
              "\"resourceVersion\":\"1\",\"creationTimestamp\":\"2024-01-01T00:00:00Z\"%s,"
              "\"annotations\":{%s}%s},"
              "\"spec\":{\"schedulerName\":\"basalt\",\"containers\":[{\"name\":\"c\","
              "\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"64Mi\"}}}]},"
              "\"status\":{\"phase\":\"Pending\"}}",
              uid, name, owner, ann,
              deleting ? ",\"deletionTimestamp\":\"2024-01-01T00:01:00Z\"" : "");
    cJSON *json = cJSON_Parse (text);
    assert_non_null (json);
    char err[256];
    Basalt__V1__Object *obj = calloc (1, sizeof *obj);
    basalt__v1__object__init (obj);
    obj->pod = bas_k8s_pod_from_json (json, err, sizeof err);
    if (!obj->pod)
        print_error ("%s\n", err);
    assert_non_null (obj->pod);
    obj->kind_case = BASALT__V1__OBJECT__KIND_POD;
    cJSON_Delete (json);
    assert_int_equal (bas_store_upsert (f->store, &obj), 0);
    const Basalt__V1__Pod *pod = bas_store_pod (f->store, uid);
    ctl_lifecycle_pod_upsert (f->life, pod);
    return pod;
}

static const Basalt__V1__PodGroup *
s_group (s_fake_t *f, const char *uid, const char *name, const char *rv, const char *queue)
{
    char text[1024];
    snprintf (text, sizeof text,
              "{\"metadata\":{\"uid\":\"%s\",\"namespace\":\"ns\",\"name\":\"%s\","
              "\"resourceVersion\":\"%s\"},\"spec\":{\"minMember\":1,\"queue\":\"%s\"},"
              "\"status\":{\"phase\":\"Pending\"}}",
              uid, name, rv, queue);
    cJSON *json = cJSON_Parse (text);
    char err[256];
    Basalt__V1__Object *obj = calloc (1, sizeof *obj);
    basalt__v1__object__init (obj);
    obj->pod_group = bas_k8s_podgroup_from_json (json, err, sizeof err);
    assert_non_null (obj->pod_group);
    obj->kind_case = BASALT__V1__OBJECT__KIND_POD_GROUP;
    cJSON_Delete (json);
    assert_int_equal (bas_store_upsert (f->store, &obj), 0);
    const Basalt__V1__PodGroup *pg = bas_store_pod_group (f->store, uid);
    ctl_lifecycle_group_upsert (f->life, pg);
    return pg;
}

static void
s_group_gone (s_fake_t *f, const char *uid, bool tell)
{
    if (tell)
        ctl_lifecycle_group_delete (f->life, uid, bas_store_pod_group (f->store, uid));
    assert_int_equal (
        bas_store_delete (f->store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP, uid), 0);
}

static void
s_pod_gone (s_fake_t *f, const char *uid)
{
    ctl_lifecycle_pod_delete (f->life, uid, bas_store_pod (f->store, uid));
    assert_int_equal (bas_store_delete (f->store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, uid),
                      0);
}

static void
s_queue (s_fake_t *f, const char *name)
{
    char text[256];
    snprintf (text, sizeof text, "{\"metadata\":{\"name\":\"%s\",\"uid\":\"q-%s\"},\"spec\":{}}",
              name, name);
    cJSON *json = cJSON_Parse (text);
    char err[256];
    Basalt__V1__Object *obj = calloc (1, sizeof *obj);
    basalt__v1__object__init (obj);
    obj->queue = bas_k8s_queue_from_json (json, err, sizeof err);
    obj->kind_case = BASALT__V1__OBJECT__KIND_QUEUE;
    cJSON_Delete (json);
    assert_int_equal (bas_store_upsert (f->store, &obj), 0);
}

//  The owner informer reports ReplicaSet rs1 (uid rs-uid) with `replicas`.
static void
s_rs (s_fake_t *f, int replicas, const char *min_member)
{
    char text[512];
    snprintf (text, sizeof text,
              "{\"metadata\":{\"uid\":\"rs-uid\",\"namespace\":\"ns\",\"name\":\"rs1\","
              "\"resourceVersion\":\"%d\",\"annotations\":{%s%s%s}},"
              "\"spec\":{\"replicas\":%d}}",
              100 + replicas, min_member ? "\"scheduling.volcano.sh/group-min-member\":\"" : "",
              min_member ? min_member : "", min_member ? "\"" : "", replicas);
    cJSON *json = cJSON_Parse (text);
    assert_non_null (json);
    ctl_lifecycle_owner_event (f->life, "ReplicaSet", "apps/v1", BAS_KUBE_MODIFIED, json);
    cJSON_Delete (json);
}

static void
s_assert_delete (s_fake_t *f, int i, const char *uid, const char *rv)
{
    util_fakeapi_req_t *r = &f->api.req[i];
    assert_string_equal (r->method, "DELETE");
    assert_string_equal (
        r->path, "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/podgroup-rs-uid");
    assert_string_equal (s_at_str (r->body, "kind", NULL, NULL), "DeleteOptions");
    //  Every DELETE names the group it was decided on.
    const char *have_uid = s_at_str (r->body, "preconditions", "uid", NULL);
    const char *have_rv = s_at_str (r->body, "preconditions", "resourceVersion", NULL);
    if (!have_uid || !have_rv)
        fail_msg ("DELETE %s without preconditions {uid, resourceVersion}", r->path);
    assert_string_equal (have_uid, uid);
    assert_string_equal (have_rv, rv);
}

static int
s_count (s_fake_t *f, const char *method)
{
    return util_fakeapi_count (&f->api, method);
}

// ------------------------------------------------------------ creation

static void
test_create_from_owner_annotations (void **state)
{
    s_fake_t *f = *state;
    s_queue (f, "default");
    s_rs (f, 2, "2");
    //  The pod's own annotation says 5; the owner's (2) is the one.
    s_pod (f, "p1", "rs1-a", "ReplicaSet", "rs-uid", NULL, false, "5");
    assert_int_equal (f->api.n, 1);
    assert_string_equal (f->api.req[0].method, "POST");
    assert_string_equal (f->api.req[0].path,
                         "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups");
    cJSON *pg = f->api.req[0].body;
    assert_string_equal (s_at_str (pg, "metadata", "name", NULL), "podgroup-rs-uid");
    assert_int_equal (cJSON_GetObjectItem (cJSON_GetObjectItem (pg, "spec"), "minMember")->valueint,
                      2);
    assert_string_equal (s_at_str (pg, "spec", "minResources", "cpu"), "200m");
    //  A second event of the same pod while the POST is in flight sends nothing.
    ctl_lifecycle_pod_upsert (f->life, bas_store_pod (f->store, "p1"));
    assert_int_equal (f->api.n, 1);

    s_answer (f, 0, 201, NULL, "{}");
    assert_int_equal (f->api.n, 2);
    assert_string_equal (f->api.req[1].method, "PATCH");
    assert_string_equal (f->api.req[1].path, "/api/v1/namespaces/ns/pods/rs1-a");
    assert_string_equal (s_at_str (f->api.req[1].body, "metadata", "uid", NULL), "p1");
    assert_string_equal (
        s_at_str (f->api.req[1].body, "metadata", "annotations", "scheduling.k8s.io/group-name"),
        "podgroup-rs-uid");
    s_answer (f, 1, 200, NULL, "{}");
    assert_int_equal (ctl_lifecycle_pending (f->life), 0);

    //  A second pod of the same owner finds the group (AlreadyExists is success).
    s_pod (f, "p2", "rs1-b", "ReplicaSet", "rs-uid", NULL, false, NULL);
    assert_int_equal (f->api.n, 3);
    s_answer (f, 2, 409, "AlreadyExists", "{}");
    assert_int_equal (f->api.n, 4);
    assert_string_equal (f->api.req[3].method, "PATCH");
    s_answer (f, 3, 200, NULL, "{}");
    assert_int_equal (ctl_lifecycle_pending (f->life), 0);
}

//  The pods of one owner arrive together: one POST of their group, not one
//  each (the others were answered 409); the others are annotated once the
//  group is there. If that POST fails, another pod sends it.
static void
test_create_once_per_group (void **state)
{
    s_fake_t *f = *state;
    s_queue (f, "default");
    s_rs (f, 4, NULL);
    s_pod (f, "p1", "rs1-a", "ReplicaSet", "rs-uid", NULL, false, NULL);
    s_pod (f, "p2", "rs1-b", "ReplicaSet", "rs-uid", NULL, false, NULL);
    s_pod (f, "p3", "rs1-c", "ReplicaSet", "rs-uid", NULL, false, NULL);
    assert_int_equal (s_count (f, "POST"), 1);
    ctl_lifecycle_stats_t st;
    ctl_lifecycle_stats (f->life, &st);
    assert_int_equal (st.joined, 2);
    //  It fails: the next pod to look again sends it.
    s_answer (f, 0, 500, "InternalError", "{}");
    f->api.now += S_RETRY_MS + 1;
    ctl_lifecycle_tick (f->life);
    assert_int_equal (s_count (f, "POST"), 2);
    int post = f->api.n - 1;
    assert_string_equal (f->api.req[post].method, "POST");
    //  It succeeds; the group comes into the model; a fourth pod arrives.
    s_answer (f, post, 201, NULL, "{}");
    s_group (f, "pg-1", "podgroup-rs-uid", "1", "default");
    s_pod (f, "p4", "rs1-d", "ReplicaSet", "rs-uid", NULL, false, NULL);
    f->api.now += S_RETRY_MS + 1;
    ctl_lifecycle_tick (f->life);
    //  Every pod annotated once, still one successful POST.
    assert_int_equal (s_count (f, "POST"), 2);
    assert_int_equal (s_count (f, "PATCH"), 4);
    for (int i = 0; i < f->api.n; i++)
        if (!f->api.req[i].answered && strcmp (f->api.req[i].method, "PATCH") == 0)
            s_answer (f, i, 200, NULL, "{}");
    assert_int_equal (ctl_lifecycle_pending (f->life), 0);
}

//  An owner no informer holds (a Job) is read from the API; its uid must
//  match the pod's owner reference.
static void
test_create_reads_owner (void **state)
{
    s_fake_t *f = *state;
    s_queue (f, "default");
    s_pod (f, "p1", "job1-x", "Job", "job-uid", NULL, false, "3");
    assert_int_equal (f->api.n, 1);
    assert_string_equal (f->api.req[0].method, "GET");
    assert_string_equal (f->api.req[0].path, "/apis/batch/v1/namespaces/ns/jobs/job1");
    //  A transient failure: tried again after the retry time, not before.
    s_answer (f, 0, 503, "ServiceUnavailable", NULL);
    ctl_lifecycle_tick (f->life);
    assert_int_equal (f->api.n, 1);
    f->api.now += S_RETRY_MS;
    ctl_lifecycle_tick (f->life);
    assert_int_equal (f->api.n, 2);
    assert_string_equal (f->api.req[1].method, "GET");
    s_answer (
        f, 1, 200, NULL,
        "{\"metadata\":{\"name\":\"job1\",\"uid\":\"job-uid\",\"annotations\":{"
        "\"scheduling.volcano.sh/group-min-member\":\"4\",\"volcano.sh/preemptable\":\"true\"}}}");
    assert_int_equal (f->api.n, 3);
    cJSON *pg = f->api.req[2].body;
    assert_int_equal (cJSON_GetObjectItem (cJSON_GetObjectItem (pg, "spec"), "minMember")->valueint,
                      4);
    assert_string_equal (s_at_str (pg, "metadata", "annotations", "volcano.sh/preemptable"),
                         "true");
    assert_string_equal (s_at_str (pg, "metadata", "name", NULL), "podgroup-job-uid");

    //  Another pod whose owner's name now belongs to another object (uid
    //  differs): the pod's own annotation is the fallback.
    s_pod (f, "p2", "job1-y", "Job", "job-uid-2", NULL, false, "3");
    assert_int_equal (f->api.n, 4);
    s_answer (f, 3, 200, NULL,
              "{\"metadata\":{\"name\":\"job1\",\"uid\":\"job-uid\",\"annotations\":{"
              "\"scheduling.volcano.sh/group-min-member\":\"4\"}}}");
    assert_int_equal (f->api.n, 5);
    pg = f->api.req[4].body;
    assert_int_equal (cJSON_GetObjectItem (cJSON_GetObjectItem (pg, "spec"), "minMember")->valueint,
                      3);
}

// ------------------------------------------------------------ deletes

//  DESIGN problem 5. A clean-up decided for group uid A fails and waits to
//  be retried; meanwhile A is replaced by B under the same name (the
//  owner is back, with a live pod in B, and the owner informer has not
//  said so yet). The retry, keyed by uid A, finds A gone and is dropped:
//  no request names B. A clean-up keyed by ns/name would delete B here.
static void
test_cleanup_keyed_by_uid (void **state)
{
    s_fake_t *f = *state;
    s_queue (f, "default");
    s_rs (f, 0, NULL);
    s_group (f, "pg-A", "podgroup-rs-uid", "10", "default");
    assert_int_equal (f->api.n, 1);
    s_assert_delete (f, 0, "pg-A", "10");
    s_answer (f, 0, 503, "ServiceUnavailable", NULL); // (after the client's own retries)

    //  The model drops A without the lifecycle seeing the event (the
    //  strongest case: the record is only found by its uid), and B comes.
    s_group_gone (f, "pg-A", false);
    s_pod (f, "p2", "rs1-b", "ReplicaSet", "rs-uid", "podgroup-rs-uid", false, NULL);
    s_group (f, "pg-B", "podgroup-rs-uid", "20", "default");
    //  B is not deleted: its owner has a live pod.
    assert_int_equal (f->api.n, 1);

    f->api.now += S_RETRY_MS;
    ctl_lifecycle_tick (f->life);
    f->api.now += 10 * S_RETRY_MS;
    ctl_lifecycle_tick (f->life);
    assert_int_equal (f->api.n, 1); // nothing sent: not for A, and never for B
    assert_int_equal (s_count (f, "DELETE"), 1);
    ctl_lifecycle_stats_t st;
    ctl_lifecycle_stats (f->life, &st);
    assert_int_equal (st.deletes_sent, 1);
    assert_int_equal (st.deletes_dropped, 1);
    assert_int_equal (ctl_lifecycle_pending (f->life), 0);
    for (int i = 0; i < f->api.n; i++) {
        char *text = f->api.req[i].body ? cJSON_PrintUnformatted (f->api.req[i].body) : NULL;
        bool names_b = text && strstr (text, "pg-B");
        free (text);
        assert_false (names_b);
    }
}

//  The same when the model's delete event of A is seen: the record goes
//  with A, and B (same name) is untouched.
static void
test_cleanup_forgotten_with_its_group (void **state)
{
    s_fake_t *f = *state;
    s_queue (f, "default");
    s_rs (f, 0, NULL);
    s_group (f, "pg-A", "podgroup-rs-uid", "10", "default");
    s_answer (f, 0, 500, "InternalError", NULL);
    s_group_gone (f, "pg-A", true);
    s_pod (f, "p2", "rs1-b", "ReplicaSet", "rs-uid", "podgroup-rs-uid", false, NULL);
    s_group (f, "pg-B", "podgroup-rs-uid", "20", "default");
    f->api.now += 5 * S_RETRY_MS;
    ctl_lifecycle_tick (f->life);
    assert_int_equal (f->api.n, 1);
    assert_int_equal (ctl_lifecycle_pending (f->life), 0);
}

//  A 409 precondition failure means the decision is stale: dropped, never
//  retried, however long we wait. A new decision needs a newer model.
static void
test_precondition_409_not_retried (void **state)
{
    s_fake_t *f = *state;
    s_queue (f, "default");
    s_rs (f, 0, NULL);
    s_group (f, "pg-A", "podgroup-rs-uid", "10", "default");
    assert_int_equal (f->api.n, 1);
    s_assert_delete (f, 0, "pg-A", "10");
    s_answer (
        f, 0, 409, "Conflict",
        "Operation cannot be fulfilled on podgroups.scheduling.volcano.sh \"podgroup-rs-uid\": "
        "StorageError: invalid object, Code: 4, Key: /registry/podgroups/ns/podgroup-rs-uid, "
        "ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: ResourceVersion in "
        "precondition: 10, ResourceVersion in object meta: 11");
    for (int i = 0; i < 20; i++) {
        f->api.now += S_RETRY_MS;
        ctl_lifecycle_tick (f->life);
    }
    //  The model (still behind the API) shows A at 10 again: no new DELETE.
    ctl_lifecycle_group_upsert (f->life, bas_store_pod_group (f->store, "pg-A"));
    ctl_lifecycle_scan (f->life);
    assert_int_equal (f->api.n, 1);
    ctl_lifecycle_stats_t st;
    ctl_lifecycle_stats (f->life, &st);
    assert_int_equal (st.deletes_sent, 1);
    assert_int_equal (st.deletes_retried, 0);
    assert_int_equal (st.deletes_dropped, 1);

    //  The model catches up (A at 11) and the owner is still at 0: a fresh
    //  decision on the fresh version (not the old one again).
    s_group (f, "pg-A", "podgroup-rs-uid", "11", "default");
    assert_int_equal (f->api.n, 2);
    s_assert_delete (f, 1, "pg-A", "11");
    s_answer (f, 1, 200, NULL, "{}");
    s_group_gone (f, "pg-A", true);
    assert_int_equal (ctl_lifecycle_pending (f->life), 0);

    //  404: already gone, dropped too.
    s_group (f, "pg-C", "podgroup-rs-uid", "30", "default");
    assert_int_equal (f->api.n, 3);
    s_answer (f, 2, 404, "NotFound", NULL);
    f->api.now += 5 * S_RETRY_MS;
    ctl_lifecycle_tick (f->life);
    assert_int_equal (f->api.n, 3);
}

//  A 5xx is retried with the same preconditions after the retry time;
//  a scale-up makes the decision stale and the retry is dropped.
static void
test_5xx_retried_until_stale (void **state)
{
    s_fake_t *f = *state;
    s_queue (f, "default");
    s_rs (f, 0, NULL);
    s_group (f, "pg-A", "podgroup-rs-uid", "10", "default");
    s_answer (f, 0, 500, "InternalError", NULL);
    f->api.now += S_RETRY_MS - 1;
    ctl_lifecycle_tick (f->life);
    assert_int_equal (f->api.n, 1);
    f->api.now += 1;
    ctl_lifecycle_tick (f->life);
    assert_int_equal (f->api.n, 2);
    s_assert_delete (f, 1, "pg-A", "10");
    s_answer (f, 1, 0, "TransportError", NULL);
    s_rs (f, 1, NULL); // scaled up again
    f->api.now += 5 * S_RETRY_MS;
    ctl_lifecycle_tick (f->life);
    assert_int_equal (f->api.n, 2);
    ctl_lifecycle_stats_t st;
    ctl_lifecycle_stats (f->life, &st);
    assert_int_equal (st.deletes_retried, 1);
    assert_int_equal (st.deletes_dropped, 1);
}

//  Scaled to 0, the group goes only once none of the owner's pods is
//  live: a pod still running keeps it.
static void
test_delete_waits_for_live_pods (void **state)
{
    s_fake_t *f = *state;
    s_queue (f, "default");
    s_rs (f, 1, NULL);
    s_group (f, "pg-A", "podgroup-rs-uid", "10", "default");
    s_pod (f, "p1", "rs1-a", "ReplicaSet", "rs-uid", "podgroup-rs-uid", false, NULL);
    int sent = f->api.n;
    s_rs (f, 0, NULL);
    assert_int_equal (f->api.n, sent);
    //  The ReplicaSet controller deletes the pod (graceful: deletionTimestamp).
    s_pod (f, "p1", "rs1-a", "ReplicaSet", "rs-uid", "podgroup-rs-uid", true, NULL);
    assert_int_equal (f->api.n, sent + 1);
    s_assert_delete (f, sent, "pg-A", "10");
}

//  Scale 1 -> 0 -> 1: the new pod arrives while the old group's DELETE is
//  in flight. It does not join the group that is going away; it waits,
//  and gets a new group once the old one is gone.
static void
test_pod_waits_for_unresolved_delete (void **state)
{
    s_fake_t *f = *state;
    s_queue (f, "default");
    s_rs (f, 0, NULL);
    s_group (f, "pg-A", "podgroup-rs-uid", "10", "default");
    assert_int_equal (f->api.n, 1); // DELETE A in flight
    s_rs (f, 1, NULL);
    s_pod (f, "p2", "rs1-b", "ReplicaSet", "rs-uid", NULL, false, NULL);
    assert_int_equal (f->api.n, 1); // no PATCH to A's name
    s_answer (f, 0, 200, NULL, "{}");
    assert_int_equal (f->api.n, 1); // the model still shows A
    s_group_gone (f, "pg-A", true);
    assert_int_equal (f->api.n, 2);
    assert_string_equal (f->api.req[1].method, "POST");
    s_answer (f, 1, 201, NULL, "{}");
    assert_int_equal (f->api.n, 3);
    assert_string_equal (f->api.req[2].method, "PATCH");
    s_answer (f, 2, 200, NULL, "{}");
    ctl_lifecycle_stats_t st;
    ctl_lifecycle_stats (f->life, &st);
    assert_int_equal (st.waits, 1);

    //  The other ending: the DELETE is refused (the group changed), so the
    //  group stays, and the waiting pod joins it.
    s_group (f, "pg-B", "podgroup-rs-uid", "20", "default");
    s_rs (f, 0, NULL);
    s_pod_gone (f, "p2");
    int del = f->api.n - 1;
    assert_string_equal (f->api.req[del].method, "DELETE");
    s_rs (f, 1, NULL);
    s_pod (f, "p3", "rs1-c", "ReplicaSet", "rs-uid", NULL, false, NULL);
    assert_int_equal (f->api.n, del + 1);
    s_answer (f, del, 409, "Conflict", "Precondition failed");
    assert_int_equal (f->api.n, del + 2);
    assert_string_equal (f->api.req[del + 1].method, "PATCH");
    assert_string_equal (f->api.req[del + 1].path, "/api/v1/namespaces/ns/pods/rs1-c");
}

// ------------------------------------------------------------ bad input

static const cJSON *
s_event (s_fake_t *f, int i)
{
    assert_string_equal (f->api.req[i].method, "POST");
    assert_string_equal (f->api.req[i].path, "/api/v1/namespaces/ns/events");
    return f->api.req[i].body;
}

static void
test_queue_not_found_event (void **state)
{
    s_fake_t *f = *state;
    s_queue (f, "default");
    s_group (f, "pg-X", "my-job", "5", "no-such-queue");
    assert_int_equal (f->api.n, 1);
    const cJSON *ev = s_event (f, 0);
    assert_string_equal (s_at_str (ev, "reason", NULL, NULL), "QueueNotFound");
    assert_string_equal (s_at_str (ev, "type", NULL, NULL), "Warning");
    assert_string_equal (s_at_str (ev, "involvedObject", "kind", NULL), "PodGroup");
    assert_string_equal (s_at_str (ev, "involvedObject", "name", NULL), "my-job");
    assert_string_equal (s_at_str (ev, "involvedObject", "uid", NULL), "pg-X");
    assert_non_null (strstr (s_at_str (ev, "message", NULL, NULL), "\"no-such-queue\""));
    s_answer (f, 0, 201, NULL, "{}");
    //  Once per group and queue, not on every update.
    s_group (f, "pg-X", "my-job", "6", "no-such-queue");
    assert_int_equal (f->api.n, 1);
    //  Nothing else stops: a pod still gets its group.
    s_pod (f, "p1", "solo", NULL, NULL, NULL, false, NULL);
    assert_int_equal (f->api.n, 2);
    assert_string_equal (f->api.req[1].method, "POST");
    assert_non_null (strstr (f->api.req[1].path, "/podgroups"));
    //  The queue exists now, is deleted again: warned again.
    s_queue (f, "no-such-queue");
    s_group (f, "pg-X", "my-job", "7", "no-such-queue");
    assert_int_equal (f->api.n, 2);
    bas_store_delete (f->store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_QUEUE, "no-such-queue");
    ctl_lifecycle_queue_delete (f->life, "no-such-queue");
    assert_int_equal (f->api.n, 3);
    s_event (f, 2);
}

static void
test_invalid_min_member_event (void **state)
{
    s_fake_t *f = *state;
    s_queue (f, "default");
    s_rs (f, 1, "two");
    s_pod (f, "p1", "rs1-a", "ReplicaSet", "rs-uid", NULL, false, NULL);
    //  An Event about the ReplicaSet, then the group anyway, with minMember 1.
    assert_int_equal (f->api.n, 2);
    const cJSON *ev = s_event (f, 0);
    assert_string_equal (s_at_str (ev, "reason", NULL, NULL), "InvalidAnnotation");
    assert_string_equal (s_at_str (ev, "involvedObject", "kind", NULL), "ReplicaSet");
    assert_string_equal (s_at_str (ev, "involvedObject", "uid", NULL), "rs-uid");
    assert_non_null (strstr (s_at_str (ev, "message", NULL, NULL), "\"two\""));
    s_answer (f, 0, 404, "NotFound", NULL); // an API without events: nothing breaks
    assert_string_equal (f->api.req[1].method, "POST");
    cJSON *pg = f->api.req[1].body;
    assert_int_equal (cJSON_GetObjectItem (cJSON_GetObjectItem (pg, "spec"), "minMember")->valueint,
                      1);
    s_answer (f, 1, 500, "InternalError", NULL);
    //  The retry builds again, but does not warn again.
    f->api.now += S_RETRY_MS;
    ctl_lifecycle_tick (f->life);
    assert_int_equal (f->api.n, 3);
    assert_string_equal (f->api.req[2].method, "POST");
    assert_non_null (strstr (f->api.req[2].path, "/podgroups"));

    //  A bare pod's own malformed annotation: an Event about the pod.
    s_pod (f, "p9", "solo", NULL, NULL, NULL, false, "-3");
    assert_int_equal (f->api.n, 5);
    ev = s_event (f, 3);
    assert_string_equal (s_at_str (ev, "involvedObject", "kind", NULL), "Pod");
    assert_string_equal (s_at_str (ev, "involvedObject", "name", NULL), "solo");
}

//  A malformed owner from the informer is logged and skipped.
static void
test_invalid_owner (void **state)
{
    s_fake_t *f = *state;
    cJSON *json = cJSON_Parse ("{\"metadata\":{\"uid\":\"rs-uid\",\"namespace\":\"ns\","
                               "\"name\":\"rs1\"},\"spec\":{\"replicas\":\"lots\"}}");
    ctl_lifecycle_owner_event (f->life, "ReplicaSet", "apps/v1", BAS_KUBE_ADDED, json);
    cJSON_Delete (json);
    json = cJSON_Parse ("{\"metadata\":{\"name\":\"rs1\"},\"spec\":{\"replicas\":0}}");
    ctl_lifecycle_owner_event (f->life, "ReplicaSet", "apps/v1", BAS_KUBE_ADDED, json);
    cJSON_Delete (json);
    assert_int_equal (f->api.n, 0);
    //  And the lifecycle goes on.
    s_queue (f, "default");
    s_rs (f, 0, NULL);
    s_group (f, "pg-A", "podgroup-rs-uid", "10", "default");
    assert_int_equal (f->api.n, 1);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown (test_create_from_owner_annotations, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_create_reads_owner, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_create_once_per_group, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_cleanup_keyed_by_uid, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_cleanup_forgotten_with_its_group, s_setup,
                                         s_teardown),
        cmocka_unit_test_setup_teardown (test_precondition_409_not_retried, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_5xx_retried_until_stale, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_delete_waits_for_live_pods, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_pod_waits_for_unresolved_delete, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_queue_not_found_event, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_invalid_min_member_event, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_invalid_owner, s_setup, s_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
