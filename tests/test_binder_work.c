/*  test_binder_work: one work item from cache-svc turned into one
    Kubernetes API request, and the API's answer judged, written as example
    usage. Bodies are parsed back as JSON and compared with the shape of the
    real objects in shared/k8s-fixtures.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "bas_work.h"
#include "util_model.h"
#include "binder_work.h"

#define FIXTURES BASALT_SHARED_DIR "/k8s-fixtures/objects/"

static cJSON *
s_load (const char *name)
{
    char path[512];
    snprintf (path, sizeof path, "%s%s", FIXTURES, name);
    FILE *f = fopen (path, "rb");
    if (!f)
        print_error ("cannot open %s\n", path);
    assert_non_null (f);
    char buf[8192];
    size_t n = fread (buf, 1, sizeof buf - 1, f);
    fclose (f);
    buf[n] = 0;
    cJSON *json = cJSON_Parse (buf);
    assert_non_null (json);
    return json;
}

static const char *
s_str (const cJSON *obj, const char *path)
{
    //  "a.b.c" into nested objects.
    char copy[256];
    snprintf (copy, sizeof copy, "%s", path);
    const cJSON *cur = obj;
    char *save = NULL;
    for (char *k = strtok_r (copy, ".", &save); k && cur; k = strtok_r (NULL, ".", &save))
        cur = cJSON_GetObjectItemCaseSensitive (cur, k);
    return cJSON_IsString (cur) ? cur->valuestring : NULL;
}

//  Work items as cache-svc makes them (on the stack: borrowed strings).
typedef struct {
    Basalt__V1__Work work;
    Basalt__V1__BindWork bind;
    Basalt__V1__EvictWork evict;
    Basalt__V1__StatusWork status;
    Basalt__V1__PodGroupStatus pg_status;
    Basalt__V1__PodConditionWork cond_work;
    Basalt__V1__PodCondition cond;
} s_work_t;

static Basalt__V1__Work *
s_bind (s_work_t *w, const char *ns, const char *name, const char *uid, const char *node)
{
    basalt__v1__work__init (&w->work);
    basalt__v1__bind_work__init (&w->bind);
    w->work.has_work_id = 1;
    w->work.work_id = 17;
    w->bind.namespace_ = (char *)ns;
    w->bind.name = (char *)name;
    w->bind.pod_uid = (char *)uid;
    w->bind.node = (char *)node;
    w->work.item_case = BASALT__V1__WORK__ITEM_BIND;
    w->work.bind = &w->bind;
    return &w->work;
}

static void
test_bind_request (void **state)
{
    (void)state;
    s_work_t w;
    Basalt__V1__Work *work =
        s_bind (&w, "default", "a-p4r2l", "b8124ee8-a0c7-4069-930d-fc5e901675d3", "a-kl827");
    binder_request_t req;
    char err[256] = "";
    assert_int_equal (binder_request_build (work, &req, err, sizeof err), 0);
    assert_string_equal (req.method, "POST");
    assert_string_equal (req.path, "/api/v1/namespaces/default/pods/a-p4r2l/binding");
    assert_non_null (req.body);
    cJSON *body = cJSON_Parse (req.body);
    assert_non_null (body);
    free (req.body);

    //  Every field of the real Binding the API server accepted is there,
    //  with the same value.
    cJSON *fixture = s_load ("binding.json");
    const char *fields[] = {"kind",         "apiVersion",  "metadata.name", "metadata.namespace",
                            "metadata.uid", "target.kind", "target.name"};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        const char *want = s_str (fixture, fields[i]);
        const char *got = s_str (body, fields[i]);
        if (!got || strcmp (want, got) != 0)
            print_error ("%s: want %s, got %s\n", fields[i], want, got ? got : "(none)");
        assert_non_null (got);
        assert_string_equal (got, want);
    }
    assert_string_equal (s_str (body, "kind"), "Binding");
    assert_string_equal (s_str (body, "apiVersion"), "v1");
    assert_string_equal (s_str (body, "target.kind"), "Node");
    cJSON_Delete (fixture);
    cJSON_Delete (body);

    //  Without a uid the binding has no uid precondition (and no empty one).
    work = s_bind (&w, "ns1", "p", NULL, "n1");
    assert_int_equal (binder_request_build (work, &req, err, sizeof err), 0);
    body = cJSON_Parse (req.body);
    free (req.body);
    assert_null (cJSON_GetObjectItemCaseSensitive (
        cJSON_GetObjectItemCaseSensitive (body, "metadata"), "uid"));
    cJSON_Delete (body);
}

static void
test_malformed_work (void **state)
{
    (void)state;
    s_work_t w;
    binder_request_t req;
    char err[256];
    struct {
        const char *ns, *name, *node;
    } bad[] = {
        {"default", NULL, "n1"},  // no name
        {"default", "", "n1"},    // empty name
        {NULL, "p", "n1"},        // no namespace
        {"default", "p", NULL},   // no node
        {"default", "a/b", "n1"}, // would change the path
        {"default", "p", "n1/x"}, {"kube/system", "p", "n1"}, {"default", "p?watch=1", "n1"},
        {"default", "p#x", "n1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        Basalt__V1__Work *work = s_bind (&w, bad[i].ns, bad[i].name, "u", bad[i].node);
        err[0] = 0;
        memset (&req, 0x5a, sizeof req);
        assert_int_equal (binder_request_build (work, &req, err, sizeof err), -1);
        assert_true (strlen (err) > 0);
        assert_non_null (strstr (err, "17")); // names the work item
        assert_null (req.body);               // nothing to free
    }
    //  A work item with no item at all.
    basalt__v1__work__init (&w.work);
    assert_int_equal (binder_request_build (&w.work, &req, err, sizeof err), -1);
    assert_true (strlen (err) > 0);
    //  Status work without a status, condition work without a condition.
    basalt__v1__status_work__init (&w.status);
    w.status.namespace_ = "default";
    w.status.name = "pg1";
    w.work.item_case = BASALT__V1__WORK__ITEM_STATUS;
    w.work.status = &w.status;
    assert_int_equal (binder_request_build (&w.work, &req, err, sizeof err), -1);
    basalt__v1__pod_condition_work__init (&w.cond_work);
    w.cond_work.namespace_ = "default";
    w.cond_work.name = "p";
    w.work.item_case = BASALT__V1__WORK__ITEM_POD_CONDITION;
    w.work.pod_condition = &w.cond_work;
    assert_int_equal (binder_request_build (&w.work, &req, err, sizeof err), -1);
}

//  PodGroup has no status subresource: a merge patch on the object, with
//  the uid so a re-created group refuses it (DESIGN problem 5).
static void
test_status_patch (void **state)
{
    (void)state;
    s_work_t w;
    basalt__v1__work__init (&w.work);
    basalt__v1__status_work__init (&w.status);
    basalt__v1__pod_group_status__init (&w.pg_status);
    w.pg_status.phase = "Running";
    w.pg_status.has_running = 1;
    w.pg_status.running = 3;
    w.status.uid = "uid-pg1";
    w.status.namespace_ = "team-a";
    w.status.name = "podgroup-1234";
    w.status.status = &w.pg_status;
    w.work.item_case = BASALT__V1__WORK__ITEM_STATUS;
    w.work.status = &w.status;
    binder_request_t req;
    char err[256];
    assert_int_equal (binder_request_build (&w.work, &req, err, sizeof err), 0);
    assert_string_equal (req.method, "PATCH");
    assert_string_equal (req.path,
                         "/apis/scheduling.volcano.sh/v1beta1/namespaces/team-a/podgroups/"
                         "podgroup-1234");
    assert_non_null (req.content_type);
    assert_string_equal (req.content_type, "application/merge-patch+json");
    assert_null (strstr (req.path, "/status"));
    cJSON *body = cJSON_Parse (req.body);
    free (req.body);
    assert_non_null (body);
    assert_string_equal (s_str (body, "metadata.uid"), "uid-pg1");
    assert_string_equal (s_str (body, "status.phase"), "Running");
    const cJSON *running = cJSON_GetObjectItemCaseSensitive (
        cJSON_GetObjectItemCaseSensitive (body, "status"), "running");
    assert_true (cJSON_IsNumber (running));
    assert_int_equal (running->valueint, 3);
    //  A merge patch touches only what it names: no spec.
    assert_null (cJSON_GetObjectItemCaseSensitive (body, "spec"));
    cJSON_Delete (body);
}

static void
test_evict (void **state)
{
    (void)state;
    s_work_t w;
    basalt__v1__work__init (&w.work);
    basalt__v1__evict_work__init (&w.evict);
    w.evict.namespace_ = "default";
    w.evict.name = "victim";
    w.evict.pod_uid = "uid-victim";
    w.evict.reason = "preempt";
    w.work.item_case = BASALT__V1__WORK__ITEM_EVICT;
    w.work.evict = &w.evict;
    binder_request_t req;
    char err[256];
    assert_int_equal (binder_request_build (&w.work, &req, err, sizeof err), 0);
    assert_string_equal (req.method, "POST");
    assert_string_equal (req.path, "/api/v1/namespaces/default/pods/victim/eviction");
    cJSON *body = cJSON_Parse (req.body);
    free (req.body);
    assert_non_null (body);
    assert_string_equal (s_str (body, "kind"), "Eviction");
    assert_string_equal (s_str (body, "apiVersion"), "policy/v1");
    assert_string_equal (s_str (body, "metadata.name"), "victim");
    assert_string_equal (s_str (body, "metadata.namespace"), "default");
    //  Evict exactly the pod decided on, not a successor with its name.
    assert_string_equal (s_str (body, "deleteOptions.preconditions.uid"), "uid-victim");
    cJSON_Delete (body);

    w.evict.name = NULL;
    assert_int_equal (binder_request_build (&w.work, &req, err, sizeof err), -1);
}

static void
test_pod_condition (void **state)
{
    (void)state;
    s_work_t w;
    basalt__v1__work__init (&w.work);
    basalt__v1__pod_condition_work__init (&w.cond_work);
    basalt__v1__pod_condition__init (&w.cond);
    w.cond.type = "PodScheduled";
    w.cond.status = "False";
    w.cond.reason = "Unschedulable";
    w.cond.message = "0/3 nodes are available: 3 Insufficient cpu.";
    w.cond_work.namespace_ = "default";
    w.cond_work.name = "p1";
    w.cond_work.pod_uid = "uid-p1";
    w.cond_work.condition = &w.cond;
    w.work.item_case = BASALT__V1__WORK__ITEM_POD_CONDITION;
    w.work.pod_condition = &w.cond_work;
    binder_request_t req;
    char err[256];
    assert_int_equal (binder_request_build (&w.work, &req, err, sizeof err), 0);
    assert_string_equal (req.method, "PATCH");
    assert_string_equal (req.path, "/api/v1/namespaces/default/pods/p1/status");
    assert_string_equal (req.content_type, "application/strategic-merge-patch+json");
    cJSON *body = cJSON_Parse (req.body);
    free (req.body);
    assert_non_null (body);
    //  The uid it was decided on: a re-created pod refuses the write.
    assert_string_equal (s_str (body, "metadata.uid"), "uid-p1");
    const cJSON *conds = cJSON_GetObjectItemCaseSensitive (
        cJSON_GetObjectItemCaseSensitive (body, "status"), "conditions");
    assert_true (cJSON_IsArray (conds));
    assert_int_equal (cJSON_GetArraySize (conds), 1);
    const cJSON *c = cJSON_GetArrayItem (conds, 0);
    assert_string_equal (s_str (c, "type"), "PodScheduled");
    assert_string_equal (s_str (c, "status"), "False");
    assert_string_equal (s_str (c, "reason"), "Unschedulable");
    assert_string_equal (s_str (c, "message"), "0/3 nodes are available: 3 Insufficient cpu.");
    cJSON_Delete (body);

    //  Defaults when the session left type and status out.
    w.cond.type = NULL;
    w.cond.status = NULL;
    w.cond.reason = NULL;
    w.cond.message = NULL;
    assert_int_equal (binder_request_build (&w.work, &req, err, sizeof err), 0);
    body = cJSON_Parse (req.body);
    free (req.body);
    c = cJSON_GetArrayItem (cJSON_GetObjectItemCaseSensitive (
                                cJSON_GetObjectItemCaseSensitive (body, "status"), "conditions"),
                            0);
    assert_string_equal (s_str (c, "type"), "PodScheduled");
    assert_string_equal (s_str (c, "status"), "False");
    assert_null (cJSON_GetObjectItemCaseSensitive (c, "reason"));
    cJSON_Delete (body);
}

//  The real 409 the API sends for a pod already bound, its node name
//  replaced by the node of our work.
static char *
s_already_assigned (const char *node)
{
    cJSON *status = s_load ("status-409-binding-already-assigned.json");
    const char *msg = s_str (status, "message");
    assert_non_null (msg);
    const char *orig = "ip-192-168-157-11.us-west-2.compute.internal";
    const char *at = strstr (msg, orig);
    assert_non_null (at);
    char *out = malloc (strlen (msg) + strlen (node) + 1);
    sprintf (out, "%.*s%s%s", (int)(at - msg), msg, node, at + strlen (orig));
    cJSON_Delete (status);
    return out;
}

static void
test_result_ok (void **state)
{
    (void)state;
    s_work_t w;
    Basalt__V1__Work *work = s_bind (&w, "default", "appupdate-5b8485cd6d-bz2gz", "u", "n1");
    assert_true (binder_result_ok (work, 201, NULL));
    assert_true (binder_result_ok (work, 200, ""));

    //  Re-issued bind that already happened, to our node: done.
    char *ours = s_already_assigned ("n1");
    assert_non_null (strstr (ours, "is already assigned to node \"n1\""));
    assert_true (binder_result_ok (work, 409, ours));
    //  The same message from another code means something else.
    assert_false (binder_result_ok (work, 500, ours));
    free (ours);

    //  Already assigned to another node: not ours, not done. A node whose
    //  name extends ours is another node too.
    char *theirs = s_already_assigned ("n2");
    assert_false (binder_result_ok (work, 409, theirs));
    free (theirs);
    char *longer = s_already_assigned ("n1-large");
    assert_false (binder_result_ok (work, 409, longer));
    free (longer);

    //  Other failures.
    assert_false (binder_result_ok (work, 409, NULL));
    cJSON *conflict = s_load ("status-409-conflict-modified.json");
    assert_false (binder_result_ok (work, 409, s_str (conflict, "message")));
    cJSON_Delete (conflict);
    assert_false (binder_result_ok (work, 500, "internal error"));
    assert_false (binder_result_ok (work, 404, "pods \"x\" not found"));
    assert_false (binder_result_ok (work, 0, "connection refused"));

    //  "Already assigned" only excuses binds: a status write answered 409
    //  with such a text is still a failure.
    s_work_t sw;
    basalt__v1__work__init (&sw.work);
    basalt__v1__status_work__init (&sw.status);
    sw.work.item_case = BASALT__V1__WORK__ITEM_STATUS;
    sw.work.status = &sw.status;
    char *msg = s_already_assigned ("n1");
    assert_false (binder_result_ok (&sw.work, 409, msg));
    assert_true (binder_result_ok (&sw.work, 200, NULL));
    free (msg);
}

//  A pipelined pod is nominated: status.nominatedNodeName alone, no
//  condition; an empty nomination clears it (null in a merge patch).
static void
test_nomination (void **state)
{
    (void)state;
    s_work_t w;
    basalt__v1__work__init (&w.work);
    basalt__v1__pod_condition_work__init (&w.cond_work);
    w.cond_work.namespace_ = "default";
    w.cond_work.name = "p1";
    w.cond_work.nominated_node_name = "n3";
    w.work.item_case = BASALT__V1__WORK__ITEM_POD_CONDITION;
    w.work.pod_condition = &w.cond_work;
    binder_request_t req;
    char err[256];
    assert_int_equal (binder_request_build (&w.work, &req, err, sizeof err), 0);
    assert_string_equal (req.path, "/api/v1/namespaces/default/pods/p1/status");
    cJSON *body = cJSON_Parse (req.body);
    free (req.body);
    const cJSON *status = cJSON_GetObjectItemCaseSensitive (body, "status");
    assert_string_equal (s_str (status, "nominatedNodeName"), "n3");
    assert_null (cJSON_GetObjectItemCaseSensitive (status, "conditions"));
    cJSON_Delete (body);
    w.cond_work.nominated_node_name = "";
    assert_int_equal (binder_request_build (&w.work, &req, err, sizeof err), 0);
    body = cJSON_Parse (req.body);
    free (req.body);
    status = cJSON_GetObjectItemCaseSensitive (body, "status");
    assert_true (cJSON_IsNull (cJSON_GetObjectItemCaseSensitive (status, "nominatedNodeName")));
    cJSON_Delete (body);
    //  Neither condition nor nomination: malformed work.
    w.cond_work.nominated_node_name = NULL;
    assert_int_equal (binder_request_build (&w.work, &req, err, sizeof err), -1);
}

//  A pod's FailedScheduling event, as client-go's recorder posts it.
static void
test_event (void **state)
{
    (void)state;
    Basalt__V1__Work work = BASALT__V1__WORK__INIT;
    Basalt__V1__EventWork ev = BASALT__V1__EVENT_WORK__INIT;
    ev.namespace_ = "team-a";
    ev.kind = "Pod";
    ev.name = "p1";
    ev.uid = "uid-p1";
    ev.api_version = "v1";
    ev.type = "Warning";
    ev.reason = "FailedScheduling";
    ev.message = "queue q1 is overused";
    work.work_id = 7;
    work.item_case = BASALT__V1__WORK__ITEM_EVENT;
    work.event = &ev;
    binder_request_t req;
    char err[256];
    assert_int_equal (binder_request_build (&work, &req, err, sizeof err), 0);
    assert_string_equal (req.method, "POST");
    assert_string_equal (req.path, "/api/v1/namespaces/team-a/events");
    cJSON *body = cJSON_Parse (req.body);
    free (req.body);
    assert_non_null (body);
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive (body, "metadata");
    const char *name = cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (meta, "name"));
    assert_non_null (name);
    assert_int_equal (strncmp (name, "p1.", 3), 0); // <object>.<hex nanoseconds>
    assert_true (strlen (name) > 10 && strspn (name + 3, "0123456789abcdef") == strlen (name + 3));
    const cJSON *obj = cJSON_GetObjectItemCaseSensitive (body, "involvedObject");
    assert_string_equal (cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (obj, "kind")),
                         "Pod");
    assert_string_equal (cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (obj, "name")),
                         "p1");
    assert_string_equal (cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (obj, "uid")),
                         "uid-p1");
    assert_string_equal (cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (body, "reason")),
                         "FailedScheduling");
    assert_string_equal (cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (body, "type")),
                         "Warning");
    assert_string_equal (cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (body, "message")),
                         "queue q1 is overused");
    const char *last =
        cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (body, "lastTimestamp"));
    assert_non_null (last);
    assert_int_equal (strlen (last), 20); // 2026-11-23T23:40:00Z
    cJSON_Delete (body);
    //  No object, no event.
    ev.name = NULL;
    assert_int_equal (binder_request_build (&work, &req, err, sizeof err), -1);
    assert_non_null (strstr (err, "event work 7"));
}

//  The work kinds' table: every member of Work's oneof has one row of its
//  message, with a name and a request that refuses an empty item.
static void
test_work_kind_table (void **state)
{
    (void)state;
    const ProtobufCMessageDescriptor *wd = &basalt__v1__work__descriptor;
    size_t members = 0;
    for (unsigned i = 0; i < wd->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &wd->fields[i];
        if (!(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF))
            continue;
        members++;
        Basalt__V1__Work *w = util_model_empty_work (f);
        w->has_work_id = 1;
        w->work_id = 42;
        const bas_work_kind_t *k = bas_work_kind_of (w);
        if (!k)
            fail_msg ("Work member %s has no row in the work kinds' table", f->name);
        assert_ptr_equal (k->descriptor, f->descriptor);
        assert_string_equal (bas_work_name (w), k->name);
        for (size_t j = 0; j < bas_work_kind_count (); j++)
            if (bas_work_kind_at (j) != k)
                assert_string_not_equal (bas_work_kind_at (j)->name, k->name);
        bas_work_request_t req;
        char err[256] = "";
        assert_int_equal (bas_work_request (w, &req, err, sizeof err), -1);
        assert_non_null (strstr (err, "work 42 lacks"));
        assert_null (req.body);
        assert_false (bas_work_done (w, 500, "x"));
        assert_true (bas_work_done (w, 201, NULL));
        basalt__v1__work__free_unpacked (w, NULL);
    }
    assert_int_equal (bas_work_kind_count (), members);
    Basalt__V1__Work none = BASALT__V1__WORK__INIT;
    assert_null (bas_work_kind_of (&none));
    assert_string_equal (bas_work_name (&none), "none");
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_bind_request),  cmocka_unit_test (test_malformed_work),
        cmocka_unit_test (test_status_patch),  cmocka_unit_test (test_evict),
        cmocka_unit_test (test_pod_condition), cmocka_unit_test (test_nomination),
        cmocka_unit_test (test_result_ok),     cmocka_unit_test (test_work_kind_table),
        cmocka_unit_test (test_event),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
