/*  test_apisim_clients: the parts of kube-apiserver's behaviour that real
    clients lean on and that the simulator must get right for them:

    - boolean query parameters (watch, allowWatchBookmarks,
      sendInitialEvents) decoded as kube-apiserver decodes them: absent,
      "0" or "false" in any case is false, anything else true — so the
      Python client's `watch=True` is a watch, not a list;
    - POST namespaces/NS/bindings (the Python client's
      create_namespaced_binding), with the pods/NAME/binding answers;
    - event field selectors on involvedObject.* (kubectl describe);
    - reads of a resourceVersion the store has not reached: a list, a get
      and an initial-events watch wait for it (--rv-wait-ms) and then fail
      with 504 "Too large resource version"; a plain watch from it sends
      only what comes after it;
    - deletes: a kind without graceful deletion sends only DELETED; a pod
      deleted at once goes through its graceful update first (MODIFIED
      with deletionGracePeriodSeconds 0, then DELETED), as the registry's
      store does;
    - the Deployment controller copies a Deployment's annotations to its
      ReplicaSet, as kube-controller-manager does (Volcano's
      scheduling.volcano.sh/group-min-member set on a Deployment reaches
      the ReplicaSet the PodGroup controller reads).

    Every test starts the real basalt-apisim on a port of its own; waits
    are for conditions, with limits only against hangs.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_apisim_util.h"

#define PODS "/api/v1/namespaces/default/pods"
#define EVENTS "/api/v1/namespaces/default/events"

static int
s_count (s_sim_t *sim, const char *path)
{
    cJSON *list = s_get_json (sim, path, 200);
    int n = cJSON_GetArraySize (cJSON_GetObjectItem (list, "items"));
    cJSON_Delete (list);
    return n;
}

static unsigned long long
s_store_rv (s_sim_t *sim)
{
    cJSON *list = s_get_json (sim, "/api/v1/namespaces", 200);
    unsigned long long rv = s_rv (list);
    cJSON_Delete (list);
    return rv;
}

//  The type of event n of a watch.
static char *
s_event_type (s_watch_t *w, int n)
{
    cJSON *e = s_watch_event (w, n);
    char *type = strdup (s_str (e, "type"));
    cJSON_Delete (e);
    return type;
}

// ---------------------------------------------------------------------------

static void
test_query_booleans (void **state)
{
    (void)state;
    s_sim_t sim;
    const char *args[] = {"--bookmark-interval-ms", "50", NULL};
    s_start (&sim, args);
    s_create_pod (&sim, "default", "p", NULL, NULL);
    //  Everything but absent, "0" and "false" (any case) means true: each
    //  of these is a watch, whose first line is the pod's ADDED.
    const char *truthy[] = {"true", "True", "TRUE", "t", "T", "1", "yes", ""};
    for (size_t i = 0; i < sizeof truthy / sizeof truthy[0]; i++) {
        char path[256];
        snprintf (path, sizeof path, PODS "?watch=%s&resourceVersion=0", truthy[i]);
        s_watch_t *w = s_watch_start (&sim, path);
        s_watch_wait_lines (w, 1);
        cJSON *e = s_watch_event (w, 0);
        if (!s_str (e, "type") || strcmp (s_str (e, "type"), "ADDED") != 0)
            fail_msg ("watch=%s: first line is not an ADDED event: %s", truthy[i], w->data);
        cJSON_Delete (e);
        s_watch_destroy (&w);
    }
    const char *falsy[] = {"false", "False", "FALSE", "fAlSe", "0"};
    for (size_t i = 0; i < sizeof falsy / sizeof falsy[0]; i++) {
        char path[256];
        snprintf (path, sizeof path, PODS "?watch=%s", falsy[i]);
        cJSON *list = s_get_json (&sim, path, 200);
        if (!s_str (list, "kind") || strcmp (s_str (list, "kind"), "PodList") != 0)
            fail_msg ("watch=%s is not a list", falsy[i]);
        cJSON_Delete (list);
    }
    //  allowWatchBookmarks=True gets bookmarks; sendInitialEvents=True
    //  ends the initial events with the annotated bookmark.
    s_watch_t *w = s_watch_start (&sim, PODS "?watch=True&allowWatchBookmarks=True"
                                             "&sendInitialEvents=True"
                                             "&resourceVersionMatch=NotOlderThan");
    s_watch_wait_lines (w, 3);
    char *t0 = s_event_type (w, 0), *t1 = s_event_type (w, 1), *t2 = s_event_type (w, 2);
    assert_string_equal (t0, "ADDED");
    assert_string_equal (t1, "BOOKMARK");
    assert_string_equal (t2, "BOOKMARK");
    free (t0);
    free (t1);
    free (t2);
    assert_non_null (strstr (w->data, "\"k8s.io/initial-events-end\":\"true\""));
    s_watch_destroy (&w);
    s_stop (&sim);
}

static void
test_bindings_collection (void **state)
{
    (void)state;
    s_sim_t sim;
    const char *args[] = {"--run-delay-ms", "-1", NULL};
    s_start (&sim, args);
    s_create_pod (&sim, "default", "a-p4r2l", NULL, NULL);
    //  The fixture's Binding names its pod in metadata.name.
    char *binding = s_fixture ("objects/binding.json");
    cJSON *b = cJSON_Parse (binding);
    cJSON_DeleteItemFromObject (cJSON_GetObjectItem (b, "metadata"), "uid");
    char *body = cJSON_PrintUnformatted (b);
    cJSON_Delete (b);
    char *out = NULL;
    assert_int_equal (s_req (&sim, "POST", "/api/v1/namespaces/default/bindings", NULL, body, &out),
                      201);
    char *want = s_fixture ("objects/status-201-binding-success.json");
    assert_string_equal (out, want);
    free (want);
    free (out);
    cJSON *pod = s_get_json (&sim, PODS "/a-p4r2l", 200);
    assert_string_equal (s_str (pod, "spec.nodeName"), "a-kl827");
    cJSON_Delete (pod);
    //  Again: the subresource's 409, word for word.
    assert_int_equal (s_req (&sim, "POST", "/api/v1/namespaces/default/bindings", NULL, body, &out),
                      409);
    assert_string_equal (
        out, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
             "\"Failure\",\"message\":\"Operation cannot be fulfilled on pods/binding "
             "\\\"a-p4r2l\\\": pod a-p4r2l is already assigned to node \\\"a-kl827\\\"\","
             "\"reason\":\"Conflict\",\"details\":{\"name\":\"a-p4r2l\",\"kind\":"
             "\"pods/binding\"},\"code\":409}\n");
    free (out);
    free (body);
    free (binding);
    //  No such pod; no name; another namespace in the body; not a POST.
    cJSON *st = s_send (&sim, "POST", "/api/v1/namespaces/default/bindings", NULL,
                        "{\"metadata\":{\"name\":\"ghost\"},\"target\":{\"kind\":\"Node\","
                        "\"name\":\"n\"}}",
                        404);
    assert_string_equal (s_str (st, "message"), "pods \"ghost\" not found");
    cJSON_Delete (st);
    st = s_send (&sim, "POST", "/api/v1/namespaces/default/bindings", NULL,
                 "{\"metadata\":{},\"target\":{\"name\":\"n\"}}", 400);
    assert_string_equal (s_str (st, "message"), "Name parameter required.");
    cJSON_Delete (st);
    st = s_send (&sim, "POST", "/api/v1/namespaces/default/bindings", NULL,
                 "{\"metadata\":{\"name\":\"a-p4r2l\",\"namespace\":\"other\"},"
                 "\"target\":{\"name\":\"n\"}}",
                 400);
    cJSON_Delete (st);
    assert_int_equal (util_http_get (sim.port, "/api/v1/namespaces/default/bindings", NULL), 405);
    //  Discovery lists it, as kube-apiserver does.
    cJSON *core = s_get_json (&sim, "/api/v1", 200);
    char *text = cJSON_PrintUnformatted (core);
    assert_non_null (strstr (text, "{\"name\":\"bindings\",\"singularName\":\"binding\","
                                   "\"namespaced\":true,\"kind\":\"Binding\",\"verbs\":"
                                   "[\"create\"]}"));
    free (text);
    cJSON_Delete (core);
    s_stop (&sim);
}

//  Create an Event about pod `name` (uid) with a reason.
static void
s_create_event (s_sim_t *sim, const char *event, const char *name, const char *uid,
                const char *reason, const char *source_json)
{
    char body[1024];
    snprintf (body, sizeof body,
              "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"%s\"},"
              "\"involvedObject\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"namespace\":"
              "\"default\",\"name\":\"%s\",\"uid\":\"%s\"},\"reason\":\"%s\",\"message\":"
              "\"m\",\"type\":\"Warning\",%s}",
              event, name, uid, reason, source_json);
    cJSON_Delete (s_send (sim, "POST", EVENTS, NULL, body, 201));
}

static void
test_event_selectors (void **state)
{
    (void)state;
    s_sim_t sim;
    s_start (&sim, NULL);
    s_create_pod (&sim, "default", "a", NULL, NULL);
    s_create_pod (&sim, "default", "b", NULL, NULL);
    cJSON *pa = s_get_json (&sim, PODS "/a", 200);
    char uid[64];
    snprintf (uid, sizeof uid, "%s", s_str (pa, "metadata.uid"));
    cJSON_Delete (pa);
    s_create_event (&sim, "a.1", "a", uid, "FailedScheduling",
                    "\"source\":{\"component\":\"basalt\"}");
    s_create_event (&sim, "a.2", "a", "old-uid", "Scheduled", "\"reportingComponent\":\"basalt\"");
    s_create_event (&sim, "b.1", "b", "uid-b", "FailedScheduling", "\"source\":{}");
    //  What kubectl describe pod asks for: name, namespace, uid (and kind).
    char path[512];
    snprintf (path, sizeof path,
              EVENTS "?fieldSelector=involvedObject.name%%3Da,involvedObject.namespace%%3D"
                     "default,involvedObject.uid%%3D%s,involvedObject.kind%%3DPod",
              uid);
    cJSON *list = s_get_json (&sim, path, 200);
    assert_int_equal (cJSON_GetArraySize (cJSON_GetObjectItem (list, "items")), 1);
    assert_string_equal (s_str (list, "items.0.metadata.name"), "a.1");
    cJSON_Delete (list);
    assert_int_equal (s_count (&sim, EVENTS "?fieldSelector=involvedObject.name%3Da"), 2);
    assert_int_equal (s_count (&sim, "/api/v1/events?fieldSelector=reason%3DFailedScheduling"), 2);
    assert_int_equal (s_count (&sim, EVENTS "?fieldSelector=type%3DWarning,reason!%3DScheduled"),
                      2);
    //  source: the component, else the reporting controller.
    assert_int_equal (s_count (&sim, EVENTS "?fieldSelector=source%3Dbasalt"), 2);
    assert_int_equal (s_count (&sim, EVENTS "?fieldSelector=reportingComponent%3Dbasalt"), 1);
    //  A watch with the selector sees only its object's events.
    s_watch_t *w = s_watch_start (&sim, EVENTS "?watch=1&fieldSelector=involvedObject.name%3Db");
    s_watch_wait_lines (w, 1);
    s_create_event (&sim, "a.3", "a", uid, "X", "\"source\":{}");
    s_create_event (&sim, "b.2", "b", "uid-b", "Y", "\"source\":{}");
    s_watch_wait_lines (w, 2);
    assert_null (strstr (w->data, "\"a.3\""));
    assert_non_null (strstr (w->data, "\"b.2\""));
    s_watch_destroy (&w);
    //  An unknown field is the server's 400.
    cJSON *st = s_get_json (&sim, EVENTS "?fieldSelector=involvedObject.color%3Dred", 400);
    assert_string_equal (s_str (st, "message"), "field label not supported: involvedObject.color");
    cJSON_Delete (st);
    s_stop (&sim);
}

// ---------------------------------------------------------------------------
// Reads of a resourceVersion the store has not reached

//  The 504 kube-apiserver gives (storage.NewTooLargeResourceVersionError).
static void
s_expect_too_large (const cJSON *st, unsigned long long want)
{
    char message[128];
    snprintf (message, sizeof message,
              "Timeout: Too large resource version: %llu, current: ", want);
    assert_string_equal (s_str (st, "kind"), "Status");
    assert_string_equal (s_str (st, "reason"), "Timeout");
    assert_non_null (s_str (st, "message"));
    if (strncmp (s_str (st, "message"), message, strlen (message)) != 0)
        fail_msg ("message \"%s\", want \"%s…\"", s_str (st, "message"), message);
    assert_int_equal (cJSON_GetObjectItem ((cJSON *)st, "code")->valueint, 504);
    assert_string_equal (s_str (st, "details.causes.0.reason"), "ResourceVersionTooLarge");
    assert_string_equal (s_str (st, "details.causes.0.message"), "Too large resource version");
    assert_int_equal (cJSON_GetObjectItem (s_at (st, "details"), "retryAfterSeconds")->valueint, 1);
}

static void
test_future_resource_version (void **state)
{
    (void)state;
    s_sim_t sim;
    const char *args[] = {"--rv-wait-ms", "500", NULL};
    s_start (&sim, args);
    s_create_pod (&sim, "default", "p0", NULL, NULL);
    unsigned long long rv = s_store_rv (&sim);
    unsigned long long future = rv + 1000;
    char path[256];
    //  A list: waits, then 504 with Retry-After.
    snprintf (path, sizeof path, PODS "?resourceVersion=%llu", future);
    char *body = NULL, *headers = NULL;
    assert_int_equal (util_http_request_ex (sim.port, "GET", path, NULL, NULL, &body, &headers),
                      504);
    cJSON *st = cJSON_Parse (body);
    s_expect_too_large (st, future);
    cJSON_Delete (st);
    assert_non_null (strstr (headers, "Retry-After: 1\r\n"));
    free (body);
    free (headers);
    //  So does a get; an exact list is not a wait (resourceVersionMatch).
    snprintf (path, sizeof path, PODS "/p0?resourceVersion=%llu", future);
    st = s_get_json (&sim, path, 504);
    s_expect_too_large (st, future);
    cJSON_Delete (st);
    //  An initial-events watch: the stream carries the 504 as an ERROR.
    snprintf (path, sizeof path,
              PODS "?watch=1&sendInitialEvents=true&allowWatchBookmarks=true"
                   "&resourceVersionMatch=NotOlderThan&resourceVersion=%llu",
              future);
    s_watch_t *w = s_watch_start (&sim, path);
    s_watch_wait_lines (w, 1);
    cJSON *e = s_watch_event (w, 0);
    assert_string_equal (s_str (e, "type"), "ERROR");
    s_expect_too_large (s_at (e, "object"), future);
    cJSON_Delete (e);
    assert_true (util_wait_until (s_watch_is_done, w, 5000));
    s_watch_destroy (&w);

    //  A plain watch from a future resourceVersion is accepted and sends
    //  only what comes after it (the watch cache does not refuse it).
    rv = s_store_rv (&sim);
    snprintf (path, sizeof path, PODS "?watch=1&resourceVersion=%llu", rv + 2);
    w = s_watch_start (&sim, path);
    s_watch_pump (w, 20);
    s_create_pod (&sim, "default", "w1", NULL, NULL); // rv + 1
    s_create_pod (&sim, "default", "w2", NULL, NULL); // rv + 2
    s_create_pod (&sim, "default", "w3", NULL, NULL); // rv + 3
    s_watch_wait_lines (w, 1);
    assert_int_equal (s_watch_lines (w), 1);
    e = s_watch_event (w, 0);
    assert_string_equal (s_str (e, "type"), "ADDED");
    assert_string_equal (s_str (e, "object.metadata.name"), "w3");
    cJSON_Delete (e);
    s_watch_destroy (&w);
    s_stop (&sim);

    //  A list of the next resourceVersion waits for it and then succeeds
    //  (with the pod created meanwhile). This simulator waits for as long
    //  as it may, so only the pod's arrival ends the wait.
    const char *patient[] = {"--rv-wait-ms", "600000", NULL};
    s_start (&sim, patient);
    snprintf (path, sizeof path, PODS "?resourceVersion=%llu", s_store_rv (&sim) + 1);
    w = s_watch_start (&sim, path);
    s_watch_pump (w, 20);
    assert_false (w->done);
    s_create_pod (&sim, "default", "p1", NULL, NULL);
    assert_true (util_wait_until (s_watch_is_done, w, 10000));
    assert_int_equal (w->code, 200);
    assert_non_null (strstr (w->data, "\"kind\":\"PodList\""));
    assert_non_null (strstr (w->data, "\"name\":\"p1\""));
    s_watch_destroy (&w);
    s_stop (&sim);
}

// ---------------------------------------------------------------------------
// Delete events

static void
test_delete_events (void **state)
{
    (void)state;
    s_sim_t sim;
    const char *args[] = {"--run-delay-ms", "0", "--stop-delay-ms", "0", NULL};
    s_start (&sim, args);
    unsigned long long rv = s_store_rv (&sim);
    char path[256];
    //  A PodGroup (no graceful deletion, no finalizers): DELETED only.
    snprintf (path, sizeof path,
              "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups?watch=1"
              "&resourceVersion=%llu",
              rv);
    s_watch_t *w = s_watch_start (&sim, path);
    cJSON_Delete (s_send (&sim, "POST",
                          "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups", NULL,
                          "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":"
                          "\"PodGroup\",\"metadata\":{\"name\":\"pg\"},\"spec\":{\"minMember\":1}}",
                          201));
    cJSON_Delete (s_send (&sim, "DELETE",
                          "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/pg",
                          NULL, NULL, 200));
    s_watch_wait_lines (w, 2);
    char *t = s_event_type (w, 1);
    assert_string_equal (t, "DELETED");
    free (t);
    s_watch_destroy (&w);
    //  A pod deleted with grace 0, and one not on a node: the registry
    //  writes the graceful update (deletionTimestamp, grace 0) and then
    //  deletes (pods always take the graceful path in kube-apiserver's
    //  store: CheckGracefulDelete returns true with period 0).
    rv = s_store_rv (&sim);
    s_create_pod (&sim, "default", "p", NULL, NULL);
    snprintf (path, sizeof path, PODS "?watch=1&resourceVersion=%llu", rv);
    w = s_watch_start (&sim, path);
    s_watch_wait_lines (w, 1);
    cJSON_Delete (s_send (&sim, "DELETE", PODS "/p", NULL, "{\"gracePeriodSeconds\":0}", 200));
    s_watch_wait_lines (w, 3);
    char *t1 = s_event_type (w, 1), *t2 = s_event_type (w, 2);
    assert_string_equal (t1, "MODIFIED");
    assert_string_equal (t2, "DELETED");
    free (t1);
    free (t2);
    cJSON *e = s_watch_event (w, 1);
    assert_non_null (s_str (e, "object.metadata.deletionTimestamp"));
    assert_int_equal (
        cJSON_GetObjectItem (s_at (e, "object.metadata"), "deletionGracePeriodSeconds")->valueint,
        0);
    cJSON_Delete (e);
    assert_int_equal (s_watch_lines (w), 3);
    s_watch_destroy (&w);
    s_stop (&sim);
}

// ---------------------------------------------------------------------------
// The Deployment controller

#define RSS "/apis/apps/v1/namespaces/default/replicasets"

typedef struct {
    s_sim_t *sim;      // the simulator
    const char *key;   // annotation of the Deployment's ReplicaSet
    const char *value; // wanted value
} s_rs_ann_t;

//  The one ReplicaSet has annotation key = value.
static bool
s_rs_annotated (void *arg)
{
    s_rs_ann_t *a = arg;
    char *body = NULL;
    if (util_http_get (a->sim->port, RSS, &body) != 200) {
        free (body);
        return false;
    }
    cJSON *list = cJSON_Parse (body);
    free (body);
    char path[300];
    snprintf (path, sizeof path, "items.0.metadata.annotations.%s", a->key);
    const char *v =
        cJSON_GetArraySize (cJSON_GetObjectItem (list, "items")) == 1 ? s_str (list, path) : NULL;
    bool ok = v && !strcmp (v, a->value);
    cJSON_Delete (list);
    return ok;
}

static void
test_deployment_annotations (void **state)
{
    (void)state;
    s_sim_t sim;
    const char *args[] = {"--run-delay-ms", "0", NULL};
    s_start (&sim, args);
    cJSON_Delete (s_send (
        &sim, "POST", "/apis/apps/v1/namespaces/default/deployments", NULL,
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","
        "\"annotations\":{\"scheduling.volcano.sh/group-min-member\":\"3\",\"team\":\"a\","
        "\"kubectl.kubernetes.io/last-applied-configuration\":\"{}\","
        "\"deployment.kubernetes.io/revision\":\"7\"}},\"spec\":{\"replicas\":3,\"selector\":"
        "{\"matchLabels\":{\"app\":\"web\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":"
        "\"web\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"nginx:1\"}]}}}}",
        201));
    s_rs_ann_t a = {&sim, "scheduling\\.volcano\\.sh/group-min-member", "3"};
    if (!util_wait_until (s_rs_annotated, &a, 10000)) {
        char *body = NULL;
        util_http_get (sim.port, RSS, &body);
        fail_msg ("the ReplicaSet did not get group-min-member 3: %s", body ? body : "");
    }
    cJSON *list = s_get_json (&sim, RSS, 200);
    cJSON *ann = (cJSON *)s_at (list, "items.0.metadata.annotations");
    assert_string_equal (s_str (ann, "team"), "a");
    //  The skipped ones are the ReplicaSet's own or not copied at all.
    assert_null (s_str (ann, "kubectl\\.kubernetes\\.io/last-applied-configuration"));
    assert_string_equal (s_str (ann, "deployment\\.kubernetes\\.io/revision"), "1");
    assert_string_equal (s_str (ann, "deployment\\.kubernetes\\.io/desired-replicas"), "3");
    cJSON_Delete (list);
    //  A changed annotation follows to the current ReplicaSet.
    cJSON_Delete (s_send (&sim, "PATCH", "/apis/apps/v1/namespaces/default/deployments/web",
                          "application/merge-patch+json",
                          "{\"metadata\":{\"annotations\":{\"scheduling.volcano.sh/"
                          "group-min-member\":\"2\"}}}",
                          200));
    a.value = "2";
    assert_true (util_wait_until (s_rs_annotated, &a, 10000));
    s_stop (&sim);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown (test_query_booleans, s_teardown),
        cmocka_unit_test_teardown (test_bindings_collection, s_teardown),
        cmocka_unit_test_teardown (test_event_selectors, s_teardown),
        cmocka_unit_test_teardown (test_future_resource_version, s_teardown),
        cmocka_unit_test_teardown (test_delete_events, s_teardown),
        cmocka_unit_test_teardown (test_deployment_annotations, s_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
