/*  test_apisim: the API simulator, driven over HTTP as a real client would.

    Every test starts the real basalt-apisim binary on a port of its own
    (--port 0 and --ready-file), talks to it with libcurl and stops it with
    SIGTERM (which must exit 0). Expected bodies come from the recorded
    fixtures in shared/k8s-fixtures wherever one exists, compared byte for
    byte; watch streams are read with curl's multi interface while the test
    makes changes through other requests.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <czmq.h>
#include <cjson/cJSON.h>
#include <cmocka.h>
#include <curl/curl.h>

#include "bas_k8s.h"
#include "sim_kind.h"
#include "sim_table.h"
#include "util_proc.h"

#include "test_apisim_util.h"

// ---------------------------------------------------------------------------
// Flags and loading

static int
s_run_status (const char *const *args, const char *log)
{
    const char *argv[16] = {SIM_BIN};
    int n = 1;
    for (int i = 0; args[i]; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    pid_t pid = util_spawn ((char *const *)argv, log);
    assert_true (pid > 0);
    int status = 0;
    waitpid (pid, &status, 0);
    assert_true (WIFEXITED (status));
    return WEXITSTATUS (status);
}

static void
test_flags (void **state)
{
    (void)state;
    char *dir = util_tmpdir ("apisim-flags");
    char log[512];
    snprintf (log, sizeof log, "%s/log", dir);
    assert_int_equal (s_run_status ((const char *[]){"--help", NULL}, log), 0);
    char *text = util_read_file (log, NULL);
    assert_non_null (strstr (text, "--run-delay-ms"));
    assert_non_null (strstr (text, "--ready-file"));
    free (text);
    unlink (log);
    assert_int_equal (s_run_status ((const char *[]){"--version", NULL}, log), 0);
    text = util_read_file (log, NULL);
    assert_non_null (strstr (text, "basalt-apisim "));
    free (text);
    unlink (log);
    assert_int_equal (s_run_status ((const char *[]){"--bogus", NULL}, log), 2);
    text = util_read_file (log, NULL);
    assert_non_null (strstr (text, "unknown option --bogus"));
    assert_non_null (strstr (text, "usage: basalt-apisim"));
    free (text);
    unlink (log);
    assert_int_equal (s_run_status ((const char *[]){"--port", "abc", NULL}, log), 2);
    assert_int_equal (s_run_status ((const char *[]){"--log-format", "xml", NULL}, log), 2);
    assert_int_equal (s_run_status ((const char *[]){"--port", NULL}, log), 2);
    util_rmtree (dir);
    free (dir);
}

static void
test_load_errors (void **state)
{
    (void)state;
    char *dir = util_tmpdir ("apisim-load");
    char bad[512], log[512];
    snprintf (bad, sizeof bad, "%s/bad.yaml", dir);
    snprintf (log, sizeof log, "%s/log", dir);
    s_write (bad, "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n---\n"
                  "apiVersion: v1\nkind: Pod\nmetadata:\n  name: [oops\n");
    assert_int_equal (s_run_status ((const char *[]){"--port", "0", "--load", bad, NULL}, log), 1);
    char *text = util_read_file (log, NULL);
    if (!strstr (text, "bad.yaml: document 1: line "))
        fail_msg ("log does not name file, document and line: %s", text);
    free (text);
    unlink (log);
    s_write (bad, "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n");
    assert_int_equal (s_run_status ((const char *[]){"--port", "0", "--load", bad, NULL}, log), 1);
    text = util_read_file (log, NULL);
    assert_non_null (strstr (text, "bad.yaml: document 0: unsupported kind \"Widget\""));
    free (text);
    unlink (log);
    //  An alias bomb goes through bas_yaml's alias budget like any YAML: the
    //  load is refused at once with the file, the document and the place
    //  (not after expanding it to the node cap, which took a GB and
    //  minutes).
    s_write (bad, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n"
                  "  a: &a [x,x,x,x,x,x,x,x,x,x]\n"
                  "  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
                  "  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
                  "  d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
                  "  e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
                  "  f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
                  "  g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
                  "  h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
                  "  i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h,*h]\n");
    assert_int_equal (s_run_status ((const char *[]){"--port", "0", "--load", bad, NULL}, log), 1);
    text = util_read_file (log, NULL);
    if (!strstr (text, "bad.yaml: document 0: line 10 column ") || !strstr (text, "alias bomb?"))
        fail_msg ("log does not refuse the alias bomb by file, document and line: %s", text);
    free (text);
    unlink (log);
    snprintf (bad, sizeof bad, "%s/bad.json", dir);
    s_write (bad, "{\"apiVersion\":\"v1\",\n\"kind\": Node}");
    assert_int_equal (s_run_status ((const char *[]){"--port", "0", "--load", bad, NULL}, log), 1);
    text = util_read_file (log, NULL);
    assert_non_null (strstr (text, "bad.json: document 0: line 2"));
    free (text);
    util_rmtree (dir);
    free (dir);
}

//  Files, directories (name order), kind: List, JSON; the list server form.
static void
test_load_and_list (void **state)
{
    (void)state;
    s_sim_t sim = {0};
    sim.dir = util_tmpdir ("apisim");
    char sub[512];
    snprintf (sub, sizeof sub, "%s/manifests", sim.dir);
    mkdir (sub, 0755);
    s_write (s_path (&sim, "manifests/10-nodes.yaml"),
             "apiVersion: v1\nkind: List\nitems:\n"
             "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: n1\n"
             "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: n2\n");
    s_write (s_path (&sim, "manifests/20-pods.yml"),
             "apiVersion: v1\nkind: Pod\nmetadata:\n  name: running\n  namespace: team-a\n"
             "spec:\n  nodeName: n1\n  containers:\n  - name: c\n    image: x\n"
             "---\n"
             "apiVersion: v1\nkind: Pod\nmetadata:\n  name: waiting\n  namespace: team-a\n"
             "spec:\n  containers:\n  - name: c\n    image: x\n"
             "    resources:\n      limits:\n        cpu: \"2\"\n        memory: 1Gi\n");
    s_write (s_path (&sim, "manifests/ignored.txt"), "not a manifest");
    //  (objects/replicaset.json says apiVersion networking.k8s.io/v1, edited
    //  upstream: a real server would not know it, so neither do we.)
    s_write (s_path (&sim, "rs.json"),
             "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":"
             "\"rs1\",\"namespace\":\"icx\"},\"spec\":{\"replicas\":1}}");
    const char *args[] = {"--load", sub,
                          "--load", FIXTURES "/objects/pod.json",
                          "--load", FIXTURES "/objects/podgroup.yaml",
                          "--load", FIXTURES "/objects/queue.yaml",
                          "--load", FIXTURES "/objects/priorityclass-system-node-critical.json",
                          "--load", FIXTURES "/objects/deployment.json",
                          "--load", s_path (&sim, "rs.json"),
                          NULL};
    s_start_in (&sim, args);

    cJSON *nodes = s_get_json (&sim, "/api/v1/nodes", 200);
    assert_string_equal (s_str (nodes, "kind"), "NodeList");
    cJSON *items = cJSON_GetObjectItem (nodes, "items");
    assert_int_equal (cJSON_GetArraySize (items), 2);
    //  Server list form: items carry no kind/apiVersion.
    assert_null (cJSON_GetObjectItem (cJSON_GetArrayItem (items, 0), "kind"));
    assert_null (cJSON_GetObjectItem (cJSON_GetArrayItem (items, 0), "apiVersion"));
    assert_string_equal (s_str (cJSON_GetArrayItem (items, 0), "metadata.name"), "n1");
    cJSON_Delete (nodes);

    //  A pod on a node at load is Running; requests default to limits.
    cJSON *pod = s_get_json (&sim, "/api/v1/namespaces/team-a/pods/running", 200);
    assert_string_equal (s_str (pod, "kind"), "Pod");
    assert_string_equal (s_str (pod, "status.phase"), "Running");
    cJSON_Delete (pod);
    pod = s_get_json (&sim, "/api/v1/namespaces/team-a/pods/waiting", 200);
    assert_string_equal (s_str (pod, "status.phase"), "Pending");
    const cJSON *c0 = cJSON_GetArrayItem (
        cJSON_GetObjectItem (cJSON_GetObjectItem (pod, "spec"), "containers"), 0);
    assert_string_equal (s_str (c0, "resources.requests.cpu"), "2");
    assert_string_equal (s_str (c0, "resources.requests.memory"), "1Gi");
    cJSON_Delete (pod);
    //  The fixture pod keeps its own uid and its Pending phase.
    pod = s_get_json (&sim, "/api/v1/namespaces/di-288312/pods/vsystem-867f4b77cc-pqcns", 200);
    assert_string_equal (s_str (pod, "status.phase"), "Pending");
    assert_non_null (s_str (pod, "metadata.uid"));
    cJSON_Delete (pod);

    cJSON *pg = s_get_json (
        &sim, "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/test", 200);
    assert_string_equal (s_str (pg, "apiVersion"), "scheduling.volcano.sh/v1beta1");
    assert_string_equal (s_str (pg, "spec.queue"), "default");
    cJSON_Delete (pg);
    cJSON *q = s_get_json (&sim, "/apis/scheduling.volcano.sh/v1beta1/queues/test", 200);
    assert_string_equal (s_str (q, "status.state"), "Open");
    cJSON_Delete (q);
    cJSON *pc =
        s_get_json (&sim, "/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical", 200);
    assert_int_equal (cJSON_GetObjectItem (pc, "value")->valuedouble, 2000001000);
    cJSON_Delete (pc);
    cJSON_Delete (s_get_json (&sim, "/apis/apps/v1/namespaces/icx/deployments/icx-db", 200));
    cJSON_Delete (s_get_json (&sim, "/apis/apps/v1/replicasets", 200));
    //  Namespaces were created for every namespace in use.
    cJSON *ns = s_get_json (&sim, "/api/v1/namespaces/team-a", 200);
    assert_string_equal (s_str (ns, "status.phase"), "Active");
    cJSON_Delete (ns);

    //  An empty list in the exact wire form, with the real headers.
    //  (Namespace icx aside: there the loaded Deployment and ReplicaSet get
    //  their pods from the controllers, as in a real cluster.)
    cJSON *any = s_get_json (&sim, "/api/v1/pods?fieldSelector=metadata.namespace%21%3Dicx", 200);
    unsigned long long rv = s_rv (any);
    assert_int_equal (cJSON_GetArraySize (cJSON_GetObjectItem (any, "items")), 3);
    cJSON_Delete (any);
    char *body = NULL, *headers = NULL;
    long code = util_http_request_ex (sim.port, "GET", "/api/v1/namespaces/nothing-here/pods", NULL,
                                      NULL, &body, &headers);
    assert_int_equal (code, 200);
    char want[256];
    snprintf (
        want, sizeof want,
        "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"%llu\"},"
        "\"items\":[]}\n",
        rv);
    assert_string_equal (body, want);
    assert_non_null (strstr (headers, "Content-Type: application/json\r\n"));
    assert_non_null (strstr (headers, "Cache-Control: no-cache, private\r\n"));
    assert_non_null (strstr (headers, "Audit-Id: "));
    assert_non_null (strstr (headers, "X-Kubernetes-Pf-Flowschema-Uid: "));
    free (body);
    free (headers);
    s_stop (&sim);
}

static void
test_discovery (void **state)
{
    (void)state;
    s_sim_t sim;
    s_start (&sim, NULL);
    char *body = NULL;
    assert_int_equal (util_http_get (sim.port, "/healthz", &body), 200);
    assert_string_equal (body, "ok");
    free (body);
    assert_int_equal (util_http_get (sim.port, "/readyz", NULL), 200);
    cJSON *v = s_get_json (&sim, "/version", 200);
    assert_string_equal (s_str (v, "major"), "1");
    assert_non_null (s_str (v, "gitVersion"));
    cJSON_Delete (v);
    cJSON *api = s_get_json (&sim, "/api", 200);
    assert_string_equal (s_str (api, "kind"), "APIVersions");
    cJSON_Delete (api);
    cJSON *apis = s_get_json (&sim, "/apis", 200);
    char *text = cJSON_PrintUnformatted (apis);
    assert_non_null (strstr (text, "\"groupVersion\":\"scheduling.volcano.sh/v1beta1\""));
    assert_non_null (strstr (text, "\"groupVersion\":\"apps/v1\""));
    assert_non_null (strstr (text, "\"groupVersion\":\"scheduling.k8s.io/v1\""));
    free (text);
    cJSON_Delete (apis);
    cJSON *core = s_get_json (&sim, "/api/v1", 200);
    text = cJSON_PrintUnformatted (core);
    assert_non_null (strstr (text,
                             "{\"name\":\"pods\",\"singularName\":\"pod\",\"namespaced\":true,"
                             "\"kind\":\"Pod\",\"verbs\":[\"create\",\"delete\","
                             "\"deletecollection\",\"get\",\"list\",\"patch\",\"update\","
                             "\"watch\"],\"shortNames\":[\"po\"]}"));
    assert_non_null (strstr (text, "\"name\":\"pods/binding\""));
    assert_non_null (
        strstr (text, "{\"name\":\"nodes\",\"singularName\":\"node\",\"namespaced\":false"));
    free (text);
    cJSON_Delete (core);
    cJSON *volcano = s_get_json (&sim, "/apis/scheduling.volcano.sh/v1beta1", 200);
    text = cJSON_PrintUnformatted (volcano);
    assert_non_null (
        strstr (text, "{\"name\":\"queues\",\"singularName\":\"queue\",\"namespaced\":false"));
    assert_non_null (strstr (text, "\"name\":\"queues/status\""));
    assert_non_null (
        strstr (text, "{\"name\":\"podgroups\",\"singularName\":\"podgroup\",\"namespaced\":true"));
    //  PodGroup has no status subresource.
    assert_null (strstr (text, "podgroups/status"));
    free (text);
    cJSON_Delete (volcano);
    s_stop (&sim);
}

static void
test_errors (void **state)
{
    (void)state;
    s_sim_t sim;
    s_start (&sim, NULL);
    char *body = NULL;
    //  404 for a missing pod, byte-equal to the recorded body.
    assert_int_equal (util_http_get (sim.port, "/api/v1/namespaces/default/pods/abc", &body), 404);
    char *want = s_fixture ("objects/status-404-notfound.json");
    assert_string_equal (body, want);
    free (want);
    free (body);
    //  Unknown paths and resources.
    const char *unknown[] = {
        "/nope",
        "/api/v2/pods",
        "/api/v1/widgets",
        "/apis/example.com/v1/things",
        "/api/v1/pods/name-without-namespace",
        "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/x/status",
        NULL};
    for (int i = 0; unknown[i]; i++) {
        assert_int_equal (util_http_get (sim.port, unknown[i], &body), 404);
        assert_string_equal (body,
                             "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                             "\"status\":\"Failure\",\"message\":\"the server could not find "
                             "the requested resource\",\"reason\":\"NotFound\",\"details\":{},"
                             "\"code\":404}\n");
        free (body);
    }
    //  PUT to a PodGroup's /status is NotFound too.
    assert_int_equal (
        s_req (&sim, "PUT",
               "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/x/status", NULL,
               "{}", NULL),
        404);
    //  Malformed JSON.
    cJSON *st =
        s_send (&sim, "POST", "/api/v1/namespaces/default/pods", NULL, "{\"metadata\":", 400);
    assert_string_equal (s_str (st, "kind"), "Status");
    assert_string_equal (s_str (st, "reason"), "BadRequest");
    assert_int_equal (cJSON_GetObjectItem (st, "code")->valueint, 400);
    cJSON_Delete (st);
    //  A body of the wrong kind.
    st = s_send (&sim, "POST", "/api/v1/nodes", NULL,
                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"x\"}}", 400);
    assert_string_equal (s_str (st, "reason"), "BadRequest");
    cJSON_Delete (st);
    //  No name and no generateName.
    st = s_send (&sim, "POST", "/api/v1/namespaces/default/pods", NULL,
                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{}}", 422);
    assert_string_equal (s_str (st, "message"),
                         "Pod \"\" is invalid: metadata.name: Required value: name or "
                         "generateName is required");
    cJSON_Delete (st);
    //  Unsupported method on a collection.
    st = s_send (&sim, "PUT", "/api/v1/namespaces/default/pods", NULL, "{}", 405);
    assert_string_equal (s_str (st, "reason"), "MethodNotAllowed");
    cJSON_Delete (st);
    s_stop (&sim);
}

static bool
s_is_uuid4 (const char *s)
{
    if (!s || strlen (s) != 36 || s[14] != '4' || !strchr ("89ab", s[19]))
        return false;
    for (int i = 0; i < 36; i++)
        if ((i == 8 || i == 13 || i == 18 || i == 23) ? s[i] != '-'
                                                      : !strchr ("0123456789abcdef", s[i]))
            return false;
    return true;
}

static void
test_create_and_get (void **state)
{
    (void)state;
    s_sim_t sim;
    s_start (&sim, NULL);
    //  Nothing is created in a namespace that does not exist (the
    //  NamespaceLifecycle admission plugin's 404).
    const char *new_pod = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},"
                          "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}";
    char *out = NULL;
    assert_int_equal (s_req (&sim, "POST", "/api/v1/namespaces/ns-new/pods", NULL, new_pod, &out),
                      404);
    assert_string_equal (out, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                              "\"status\":\"Failure\",\"message\":\"namespaces \\\"ns-new\\\" "
                              "not found\",\"reason\":\"NotFound\",\"details\":{\"name\":"
                              "\"ns-new\",\"kind\":\"namespaces\"},\"code\":404}\n");
    free (out);
    assert_int_equal (util_http_get (sim.port, "/api/v1/namespaces/ns-new", NULL), 404);
    s_ensure_namespace (&sim, "ns-new");
    unsigned long long last = 0;
    for (int i = 0; i < 5; i++) {
        cJSON *pod = s_send (
            &sim, "POST", "/api/v1/namespaces/ns-new/pods", NULL,
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"generateName\":\"job-\"},"
            "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}",
            201);
        unsigned long long rv = s_rv (pod);
        assert_true (rv > last);
        last = rv;
        const char *name = s_str (pod, "metadata.name");
        assert_int_equal (strlen (name), 9);
        assert_memory_equal (name, "job-", 4);
        assert_true (s_is_uuid4 (s_str (pod, "metadata.uid")));
        assert_non_null (s_str (pod, "metadata.creationTimestamp"));
        assert_string_equal (s_str (pod, "metadata.namespace"), "ns-new");
        assert_string_equal (s_str (pod, "status.phase"), "Pending");
        assert_string_equal (s_str (pod, "spec.schedulerName"), "default-scheduler");
        cJSON_Delete (pod);
    }

    //  PodGroup create, then a duplicate: 409 with the grouped shape.
    const char *pg =
        "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\","
        "\"metadata\":{\"name\":\"pg1\"},\"spec\":{\"minMember\":2,\"queue\":\"default\"}}";
    cJSON *created =
        s_send (&sim, "POST", "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups",
                NULL, pg, 201);
    assert_true (s_rv (created) > last);
    assert_int_equal (
        cJSON_GetObjectItem (cJSON_GetObjectItem (created, "metadata"), "generation")->valueint, 1);
    cJSON_Delete (created);
    char *body = NULL;
    assert_int_equal (s_req (&sim, "POST",
                             "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups",
                             NULL, pg, &body),
                      409);
    assert_string_equal (body,
                         "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                         "\"Failure\",\"message\":\"podgroups.scheduling.volcano.sh \\\"pg1\\\" "
                         "already exists\",\"reason\":\"AlreadyExists\",\"details\":{\"name\":"
                         "\"pg1\",\"group\":\"scheduling.volcano.sh\",\"kind\":\"podgroups\"},"
                         "\"code\":409}\n");
    free (body);
    //  A core duplicate has no group.
    s_create_pod (&sim, "default", "dup", NULL, NULL);
    assert_int_equal (s_req (&sim, "POST", "/api/v1/namespaces/default/pods", NULL,
                             "{\"metadata\":{\"name\":\"dup\"},\"spec\":{\"containers\":[]}}",
                             &body),
                      409);
    assert_non_null (strstr (body,
                             "\"message\":\"pods \\\"dup\\\" already exists\",\"reason\":"
                             "\"AlreadyExists\",\"details\":{\"name\":\"dup\",\"kind\":\"pods\"}"));
    free (body);
    //  resourceVersion may not be set on create.
    assert_int_equal (s_req (&sim, "POST", "/api/v1/nodes", NULL,
                             "{\"metadata\":{\"name\":\"n\",\"resourceVersion\":\"5\"}}", NULL),
                      500);
    //  A missing priority class is refused, an existing one sets priority.
    assert_int_equal (
        s_req (&sim, "POST", "/api/v1/namespaces/default/pods", NULL,
               "{\"metadata\":{\"name\":\"p-pc\"},\"spec\":{\"priorityClassName\":\"high\","
               "\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}",
               &body),
        403);
    assert_non_null (strstr (body, "no PriorityClass with name high was found"));
    free (body);
    cJSON_Delete (s_send (&sim, "POST", "/apis/scheduling.k8s.io/v1/priorityclasses", NULL,
                          "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\","
                          "\"metadata\":{\"name\":\"high\"},\"value\":1000}",
                          201));
    cJSON *pod =
        s_send (&sim, "POST", "/api/v1/namespaces/default/pods", NULL,
                "{\"metadata\":{\"name\":\"p-pc\"},\"spec\":{\"priorityClassName\":\"high\","
                "\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}",
                201);
    assert_int_equal (cJSON_GetObjectItem (cJSON_GetObjectItem (pod, "spec"), "priority")->valueint,
                      1000);
    cJSON_Delete (pod);
    s_stop (&sim);
}

static void
test_update_conflict (void **state)
{
    (void)state;
    s_sim_t sim;
    s_start (&sim, NULL);
    s_create_pod (&sim, "default", "x", NULL, NULL);
    cJSON *pod = s_get_json (&sim, "/api/v1/namespaces/default/pods/x", 200);
    char old_rv[32];
    snprintf (old_rv, sizeof old_rv, "%s", s_str (pod, "metadata.resourceVersion"));
    //  A good update.
    cJSON *labels = cJSON_AddObjectToObject (cJSON_GetObjectItem (pod, "metadata"), "labels");
    cJSON_AddStringToObject (labels, "a", "b");
    char *text = cJSON_PrintUnformatted (pod);
    cJSON *updated = s_send (&sim, "PUT", "/api/v1/namespaces/default/pods/x", NULL, text, 200);
    assert_true (s_rv (updated) > strtoull (old_rv, NULL, 10));
    assert_string_equal (s_str (updated, "metadata.labels.a"), "b");
    cJSON_Delete (updated);
    //  The same body again carries a stale resourceVersion now.
    char *body = NULL;
    assert_int_equal (s_req (&sim, "PUT", "/api/v1/namespaces/default/pods/x", NULL, text, &body),
                      409);
    assert_string_equal (
        body, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
              "\"Failure\",\"message\":\"Operation cannot be fulfilled on pods \\\"x\\\": "
              "the object has been modified; please apply your changes to the latest "
              "version and try again\",\"reason\":\"Conflict\",\"details\":{\"name\":"
              "\"x\",\"kind\":\"pods\"},\"code\":409}\n");
    free (body);
    free (text);
    //  Name in body different from URL.
    cJSON_ReplaceItemInObject (cJSON_GetObjectItem (pod, "metadata"), "name",
                               cJSON_CreateString ("y"));
    text = cJSON_PrintUnformatted (pod);
    cJSON *st = s_send (&sim, "PUT", "/api/v1/namespaces/default/pods/x", NULL, text, 400);
    assert_string_equal (s_str (st, "message"),
                         "the name of the object (y) does not match the name on the URL (x)");
    cJSON_Delete (st);
    free (text);
    cJSON_Delete (pod);
    //  A PUT to a missing object.
    assert_int_equal (s_req (&sim, "PUT", "/api/v1/namespaces/default/pods/none", NULL,
                             "{\"metadata\":{\"name\":\"none\"}}", NULL),
                      404);
    //  CRDs need a resourceVersion on update.
    cJSON_Delete (s_send (&sim, "POST", "/apis/scheduling.volcano.sh/v1beta1/queues", NULL,
                          "{\"metadata\":{\"name\":\"q\"},\"spec\":{\"weight\":1}}", 201));
    st = s_send (&sim, "PUT", "/apis/scheduling.volcano.sh/v1beta1/queues/q", NULL,
                 "{\"metadata\":{\"name\":\"q\"},\"spec\":{\"weight\":2}}", 422);
    assert_string_equal (s_str (st, "message"),
                         "Queue.scheduling.volcano.sh \"q\" is invalid: metadata.resourceVersion: "
                         "Invalid value: 0x0: must be specified for an update");
    cJSON_Delete (st);
    s_stop (&sim);
}

static void
test_patch (void **state)
{
    (void)state;
    s_sim_t sim;
    s_start (&sim, NULL);
    s_create_pod (&sim, "default", "p", "{\"keep\":\"1\",\"drop\":\"2\"}", NULL);
    const char *path = "/api/v1/namespaces/default/pods/p";
    cJSON *before = s_get_json (&sim, path, 200);
    unsigned long long rv0 = s_rv (before);
    char uid[64];
    snprintf (uid, sizeof uid, "%s", s_str (before, "metadata.uid"));
    cJSON_Delete (before);

    //  RFC 7386 merge patch: null removes, objects merge.
    cJSON *p = s_send (&sim, "PATCH", path, "application/merge-patch+json",
                       "{\"metadata\":{\"labels\":{\"drop\":null,\"new\":\"3\"}}}", 200);
    assert_true (s_rv (p) > rv0);
    assert_string_equal (s_str (p, "metadata.labels.keep"), "1");
    assert_string_equal (s_str (p, "metadata.labels.new"), "3");
    assert_null (s_str (p, "metadata.labels.drop"));
    unsigned long long rv1 = s_rv (p);
    cJSON_Delete (p);
    //  A patch that changes nothing is not a write.
    p = s_send (&sim, "PATCH", path, "application/merge-patch+json",
                "{\"metadata\":{\"labels\":{\"new\":\"3\"}}}", 200);
    assert_int_equal (s_rv (p), rv1);
    cJSON_Delete (p);

    //  RFC 6902 JSON patch.
    p = s_send (
        &sim, "PATCH", path, "application/json-patch+json",
        "[{\"op\":\"test\",\"path\":\"/metadata/labels/keep\",\"value\":\"1\"},"
        "{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":{\"a~b/c\":\"x\"}},"
        "{\"op\":\"replace\",\"path\":\"/metadata/labels/new\",\"value\":\"4\"},"
        "{\"op\":\"copy\",\"from\":\"/metadata/labels/new\",\"path\":\"/metadata/labels/copy\"},"
        "{\"op\":\"move\",\"from\":\"/metadata/labels/keep\",\"path\":\"/metadata/labels/moved\"},"
        "{\"op\":\"remove\",\"path\":\"/metadata/labels/copy\"},"
        "{\"op\":\"add\",\"path\":\"/spec/containers/"
        "-\",\"value\":{\"name\":\"d\",\"image\":\"y\"}}]",
        200);
    assert_string_equal (s_str (p, "metadata.labels.new"), "4");
    assert_string_equal (s_str (p, "metadata.labels.moved"), "1");
    assert_null (s_str (p, "metadata.labels.keep"));
    assert_null (s_str (p, "metadata.labels.copy"));
    assert_string_equal (s_str (p, "metadata.annotations.a~b/c"), "x");
    assert_int_equal (
        cJSON_GetArraySize (cJSON_GetObjectItem (cJSON_GetObjectItem (p, "spec"), "containers")),
        2);
    unsigned long long rv2 = s_rv (p);
    cJSON_Delete (p);
    //  A failing test op changes nothing.
    cJSON *st = s_send (&sim, "PATCH", path, "application/json-patch+json",
                        "[{\"op\":\"replace\",\"path\":\"/metadata/labels/new\",\"value\":\"5\"},"
                        "{\"op\":\"test\",\"path\":\"/metadata/labels/new\",\"value\":\"4\"}]",
                        422);
    assert_string_equal (s_str (st, "reason"), "Invalid");
    cJSON_Delete (st);
    p = s_get_json (&sim, path, 200);
    assert_int_equal (s_rv (p), rv2);
    assert_string_equal (s_str (p, "metadata.labels.new"), "4");
    cJSON_Delete (p);

    //  Strategic merge: accepted for pods (directives dropped).
    p = s_send (&sim, "PATCH", path, "application/strategic-merge-patch+json",
                "{\"metadata\":{\"labels\":{\"smp\":\"yes\"}},\"$setElementOrder/x\":[]}", 200);
    assert_string_equal (s_str (p, "metadata.labels.smp"), "yes");
    assert_null (cJSON_GetObjectItem (p, "$setElementOrder/x"));
    cJSON_Delete (p);
    //  ... and 415 for a CRD, byte-equal to the recorded body.
    cJSON_Delete (s_send (&sim, "POST",
                          "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups", NULL,
                          "{\"metadata\":{\"name\":\"pg\"},\"spec\":{\"minMember\":1}}", 201));
    char *body = NULL;
    assert_int_equal (s_req (&sim, "PATCH",
                             "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/pg",
                             "application/strategic-merge-patch+json", "{\"spec\":{}}", &body),
                      415);
    char *want = s_fixture ("objects/status-415-unsupported-media-type.json");
    assert_string_equal (body, want);
    free (want);
    free (body);
    //  A merge patch on a CRD works, status included (no status subresource).
    p = s_send (&sim, "PATCH",
                "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/pg",
                "application/merge-patch+json", "{\"status\":{\"phase\":\"Inqueue\"}}", 200);
    assert_string_equal (s_str (p, "status.phase"), "Inqueue");
    cJSON_Delete (p);

    //  A merge patch naming another uid is a failed precondition.
    char patch[256];
    snprintf (patch, sizeof patch,
              "{\"metadata\":{\"uid\":\"00000000-0000-4000-8000-000000000000\"}}");
    st = s_send (&sim, "PATCH", path, "application/merge-patch+json", patch, 409);
    char msg[600];
    snprintf (msg, sizeof msg,
              "Operation cannot be fulfilled on pods \"p\": StorageError: invalid object, Code: 4, "
              "Key: /registry/pods/default/p, ResourceVersion: 0, AdditionalErrorMsg: "
              "Precondition failed: UID in precondition: 00000000-0000-4000-8000-000000000000, "
              "UID in object meta: %s",
              uid);
    assert_string_equal (s_str (st, "message"), msg);
    cJSON_Delete (st);
    //  The same on the status subresource, as binder-svc writes a pod's
    //  condition: another uid is refused, the pod's own is taken.
    char status_path[300];
    snprintf (status_path, sizeof status_path, "%s/status", path);
    st = s_send (&sim, "PATCH", status_path, "application/strategic-merge-patch+json", patch, 409);
    assert_string_equal (s_str (st, "message"), msg);
    cJSON_Delete (st);
    snprintf (patch, sizeof patch,
              "{\"metadata\":{\"uid\":\"%s\"},\"status\":{\"conditions\":[{\"type\":"
              "\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\"}]}}",
              uid);
    p = s_send (&sim, "PATCH", status_path, "application/strategic-merge-patch+json", patch, 200);
    assert_string_equal (s_str (p, "metadata.uid"), uid);
    cJSON_Delete (p);
    //  A stale resourceVersion in a patch is a Conflict.
    st = s_send (&sim, "PATCH", path, "application/merge-patch+json",
                 "{\"metadata\":{\"resourceVersion\":\"1\"}}", 409);
    assert_string_equal (s_str (st, "reason"), "Conflict");
    cJSON_Delete (st);
    //  Unknown media type, missing object.
    assert_int_equal (s_req (&sim, "PATCH", path, "text/plain", "x", NULL), 415);
    assert_int_equal (s_req (&sim, "PATCH", "/api/v1/namespaces/default/pods/none",
                             "application/merge-patch+json", "{}", NULL),
                      404);
    s_stop (&sim);
}

static void
test_delete_preconditions (void **state)
{
    (void)state;
    s_sim_t sim;
    s_start (&sim, NULL);
    s_create_pod (&sim, "qa", "victim", NULL, NULL);
    const char *path = "/api/v1/namespaces/qa/pods/victim";
    cJSON *pod = s_get_json (&sim, path, 200);
    char uid[64], rv[32];
    snprintf (uid, sizeof uid, "%s", s_str (pod, "metadata.uid"));
    snprintf (rv, sizeof rv, "%s", s_str (pod, "metadata.resourceVersion"));
    cJSON_Delete (pod);

    char body[512], want[1024];
    snprintf (body, sizeof body,
              "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"preconditions\":{\"uid\":"
              "\"42f96939-f180-11ea-86af-52540068fe10\"}}");
    char *out = NULL;
    assert_int_equal (s_req (&sim, "DELETE", path, NULL, body, &out), 409);
    //  The shape of status-409-precondition-uid-mismatch.json.
    snprintf (want, sizeof want,
              "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
              "\"message\":\"Operation cannot be fulfilled on pods \\\"victim\\\": StorageError: "
              "invalid object, Code: 4, Key: /registry/pods/qa/victim, ResourceVersion: 0, "
              "AdditionalErrorMsg: Precondition failed: UID in precondition: "
              "42f96939-f180-11ea-86af-52540068fe10, UID in object meta: %s\",\"reason\":"
              "\"Conflict\",\"details\":{\"name\":\"victim\",\"kind\":\"pods\"},\"code\":409}\n",
              uid);
    assert_string_equal (out, want);
    free (out);
    snprintf (body, sizeof body, "{\"preconditions\":{\"resourceVersion\":\"1\"}}");
    cJSON *st = s_send (&sim, "DELETE", path, NULL, body, 409);
    snprintf (want, sizeof want,
              "Operation cannot be fulfilled on pods \"victim\": StorageError: invalid object, "
              "Code: 4, Key: /registry/pods/qa/victim, ResourceVersion: 0, AdditionalErrorMsg: "
              "Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object "
              "meta: %s",
              rv);
    assert_string_equal (s_str (st, "message"), want);
    cJSON_Delete (st);
    assert_int_equal (s_req (&sim, "DELETE", path, NULL, "{bad", NULL), 400);
    //  Matching preconditions: 200 with the object, then it is gone.
    snprintf (body, sizeof body, "{\"preconditions\":{\"uid\":\"%s\",\"resourceVersion\":\"%s\"}}",
              uid, rv);
    cJSON *gone = s_send (&sim, "DELETE", path, NULL, body, 200);
    assert_string_equal (s_str (gone, "kind"), "Pod");
    assert_string_equal (s_str (gone, "metadata.uid"), uid);
    assert_true (s_rv (gone) > strtoull (rv, NULL, 10));
    cJSON_Delete (gone);
    assert_int_equal (util_http_get (sim.port, path, NULL), 404);
    assert_int_equal (s_req (&sim, "DELETE", path, NULL, NULL, NULL), 404);

    //  Finalizers hold an object until they are removed.
    cJSON_Delete (s_send (&sim, "POST", "/api/v1/nodes", NULL,
                          "{\"metadata\":{\"name\":\"held\",\"finalizers\":[\"x/y\"]}}", 201));
    cJSON *marked = s_send (&sim, "DELETE", "/api/v1/nodes/held", NULL, NULL, 200);
    assert_non_null (s_str (marked, "metadata.deletionTimestamp"));
    cJSON_Delete (marked);
    cJSON_Delete (s_send (&sim, "PATCH", "/api/v1/nodes/held", "application/merge-patch+json",
                          "{\"metadata\":{\"finalizers\":null}}", 200));
    assert_int_equal (util_http_get (sim.port, "/api/v1/nodes/held", NULL), 404);
    s_stop (&sim);
}

typedef struct {
    s_sim_t *sim;
    const char *path;
} s_running_t;

static bool
s_pod_running (void *arg)
{
    s_running_t *r = arg;
    char *body = NULL;
    if (util_http_get (r->sim->port, r->path, &body) != 200) {
        free (body);
        return false;
    }
    bool ok = strstr (body, "\"phase\":\"Running\"") &&
              strstr (body, "{\"type\":\"Ready\",\"status\":\"True\"");
    free (body);
    return ok;
}

static void
test_binding (void **state)
{
    (void)state;
    s_sim_t sim = {0};
    sim.dir = util_tmpdir ("apisim");
    //  The pod binding.json names, with the uid the binding carries.
    s_write (s_path (&sim, "pod.yaml"),
             "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a-p4r2l\n  namespace: default\n"
             "  uid: b8124ee8-a0c7-4069-930d-fc5e901675d3\n"
             "spec:\n  containers:\n  - name: c\n    image: x\n"
             "---\n"
             "apiVersion: v1\nkind: Pod\nmetadata:\n  name: other\n  namespace: default\n"
             "spec:\n  containers:\n  - name: c\n    image: x\n");
    const char *args[] = {"--load", s_path (&sim, "pod.yaml"), "--run-delay-ms", "50", NULL};
    s_start_in (&sim, args);
    char *binding = s_fixture ("objects/binding.json");
    const char *path = "/api/v1/namespaces/default/pods/a-p4r2l/binding";
    cJSON *before = s_get_json (&sim, "/api/v1/namespaces/default/pods/a-p4r2l", 200);
    unsigned long long rv0 = s_rv (before);
    cJSON_Delete (before);

    char *body = NULL;
    assert_int_equal (s_req (&sim, "POST", path, NULL, binding, &body), 201);
    char *want = s_fixture ("objects/status-201-binding-success.json");
    assert_string_equal (body, want);
    free (want);
    free (body);
    cJSON *pod = s_get_json (&sim, "/api/v1/namespaces/default/pods/a-p4r2l", 200);
    assert_string_equal (s_str (pod, "spec.nodeName"), "a-kl827");
    assert_true (s_rv (pod) > rv0);
    char *text = cJSON_PrintUnformatted (pod);
    assert_non_null (strstr (text, "{\"type\":\"PodScheduled\",\"status\":\"True\""));
    free (text);
    cJSON_Delete (pod);

    //  Bound again: 409 already assigned, in the recorded shape.
    assert_int_equal (s_req (&sim, "POST", path, NULL, binding, &body), 409);
    assert_string_equal (
        body, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
              "\"Failure\",\"message\":\"Operation cannot be fulfilled on pods/binding "
              "\\\"a-p4r2l\\\": pod a-p4r2l is already assigned to node \\\"a-kl827\\\"\","
              "\"reason\":\"Conflict\",\"details\":{\"name\":\"a-p4r2l\",\"kind\":"
              "\"pods/binding\"},\"code\":409}\n");
    free (body);
    free (binding);

    //  The audit counts both: one binding done, one refused on the same
    //  node; a binding to another node is counted apart.
    const char *other =
        "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"a-p4r2l\"},"
        "\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"n9\"}}";
    assert_int_equal (s_req (&sim, "POST", path, NULL, other, &body), 409);
    free (body);
    cJSON *audit = s_get_json (&sim, "/admin/audit", 200);
    assert_int_equal ((int)cJSON_GetObjectItem (audit, "binds")->valuedouble, 1);
    assert_int_equal ((int)cJSON_GetObjectItem (audit, "rebindsSameNode")->valuedouble, 1);
    assert_int_equal ((int)cJSON_GetObjectItem (audit, "rebindsOtherNode")->valuedouble, 1);
    const cJSON *last = cJSON_GetObjectItem (audit, "lastRebinds");
    assert_int_equal (cJSON_GetArraySize (last), 2);
    assert_string_equal (cJSON_GetArrayItem (last, 1)->valuestring,
                         "default/a-p4r2l on a-kl827, asked n9");
    cJSON_Delete (audit);

    //  The lifecycle: Running with Ready=True after the run delay.
    s_running_t r = {&sim, "/api/v1/namespaces/default/pods/a-p4r2l"};
    assert_true (util_wait_until (s_pod_running, &r, 5000));
    pod = s_get_json (&sim, r.path, 200);
    assert_non_null (s_str (pod, "status.podIP"));
    assert_non_null (s_str (pod, "status.hostIP"));
    assert_non_null (s_str (pod, "status.startTime"));
    cJSON_Delete (pod);

    //  Missing pod, name mismatch, uid precondition, annotations merged.
    const char *b2 = "{\"kind\":\"Binding\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"ghost\","
                     "\"namespace\":\"default\"},\"target\":{\"kind\":\"Node\",\"name\":\"n\"}}";
    cJSON *st =
        s_send (&sim, "POST", "/api/v1/namespaces/default/pods/ghost/binding", NULL, b2, 404);
    assert_string_equal (s_str (st, "message"), "pods \"ghost\" not found");
    cJSON_Delete (st);
    st = s_send (&sim, "POST", "/api/v1/namespaces/default/pods/other/binding", NULL, b2, 400);
    assert_string_equal (s_str (st, "message"),
                         "name in URL does not match name in Binding object");
    cJSON_Delete (st);
    st = s_send (
        &sim, "POST", "/api/v1/namespaces/default/pods/other/binding", NULL,
        "{\"metadata\":{\"name\":\"other\",\"uid\":\"11111111-1111-4111-8111-111111111111\"},"
        "\"target\":{\"kind\":\"Node\",\"name\":\"n\"}}",
        409);
    assert_non_null (strstr (s_str (st, "message"),
                             "Precondition failed: UID in precondition: "
                             "11111111-1111-4111-8111-111111111111, UID in object meta: "));
    cJSON_Delete (st);
    cJSON_Delete (s_send (&sim, "POST", "/api/v1/namespaces/default/pods/other/binding", NULL,
                          "{\"metadata\":{\"name\":\"other\",\"annotations\":{\"k\":\"v\"}},"
                          "\"target\":{\"kind\":\"Node\",\"name\":\"n2\"}}",
                          201));
    pod = s_get_json (&sim, "/api/v1/namespaces/default/pods/other", 200);
    assert_string_equal (s_str (pod, "metadata.annotations.k"), "v");
    assert_string_equal (s_str (pod, "spec.nodeName"), "n2");
    cJSON_Delete (pod);
    s_stop (&sim);
}

static void
test_no_run_delay (void **state)
{
    (void)state;
    s_sim_t sim;
    const char *args[] = {"--run-delay-ms", "-1", NULL};
    s_start (&sim, args);
    s_create_pod (&sim, "default", "p", NULL, NULL);
    cJSON_Delete (s_send (&sim, "POST", "/api/v1/namespaces/default/pods/p/binding", NULL,
                          "{\"metadata\":{\"name\":\"p\"},\"target\":{\"name\":\"n\"}}", 201));
    //  A watch from now sees nothing for a while: the pod stays Pending.
    cJSON *pod = s_get_json (&sim, "/api/v1/namespaces/default/pods/p", 200);
    char path[256];
    snprintf (path, sizeof path,
              "/api/v1/namespaces/default/pods?watch=1&timeoutSeconds=1&resourceVersion=%llu",
              s_rv (pod));
    cJSON_Delete (pod);
    s_watch_t *w = s_watch_start (&sim, path);
    assert_true (util_wait_until (s_watch_is_done, w, 5000));
    assert_int_equal (w->len, 0);
    s_watch_destroy (&w);
    pod = s_get_json (&sim, "/api/v1/namespaces/default/pods/p", 200);
    assert_string_equal (s_str (pod, "status.phase"), "Pending");
    cJSON_Delete (pod);
    s_stop (&sim);
}

static void
test_status_subresources (void **state)
{
    (void)state;
    s_sim_t sim;
    s_start (&sim, NULL);
    const char *qpath = "/apis/scheduling.volcano.sh/v1beta1/queues/q1";
    cJSON_Delete (s_send (&sim, "POST", "/apis/scheduling.volcano.sh/v1beta1/queues", NULL,
                          "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"Queue\","
                          "\"metadata\":{\"name\":\"q1\"},\"spec\":{\"weight\":1},"
                          "\"status\":{\"state\":\"Open\"}}",
                          201));
    //  PUT /status keeps only the status change.
    cJSON *q = s_get_json (&sim, qpath, 200);
    cJSON *status = cJSON_GetObjectItem (q, "status");
    cJSON_ReplaceItemInObject (status, "state", cJSON_CreateString ("Closed"));
    cJSON_ReplaceItemInObject (cJSON_GetObjectItem (q, "spec"), "weight", cJSON_CreateNumber (9));
    char *text = cJSON_PrintUnformatted (q);
    char spath[256];
    snprintf (spath, sizeof spath, "%s/status", qpath);
    cJSON *after = s_send (&sim, "PUT", spath, NULL, text, 200);
    assert_string_equal (s_str (after, "status.state"), "Closed");
    assert_int_equal (cJSON_GetObjectItem (cJSON_GetObjectItem (after, "spec"), "weight")->valueint,
                      1);
    free (text);
    cJSON_Delete (q);
    //  PUT on the main endpoint drops status changes.
    cJSON_ReplaceItemInObject (cJSON_GetObjectItem (after, "status"), "state",
                               cJSON_CreateString ("Open"));
    cJSON_ReplaceItemInObject (cJSON_GetObjectItem (after, "spec"), "weight",
                               cJSON_CreateNumber (5));
    text = cJSON_PrintUnformatted (after);
    cJSON *main_put = s_send (&sim, "PUT", qpath, NULL, text, 200);
    assert_string_equal (s_str (main_put, "status.state"), "Closed");
    assert_int_equal (
        cJSON_GetObjectItem (cJSON_GetObjectItem (main_put, "spec"), "weight")->valueint, 5);
    //  A spec change bumps generation.
    assert_int_equal (
        cJSON_GetObjectItem (cJSON_GetObjectItem (main_put, "metadata"), "generation")->valueint,
        2);
    free (text);
    cJSON_Delete (after);
    cJSON_Delete (main_put);
    //  PATCH /status too.
    cJSON *patched = s_send (&sim, "PATCH", spath, "application/merge-patch+json",
                             "{\"spec\":{\"weight\":7},\"status\":{\"state\":\"Closing\"}}", 200);
    assert_string_equal (s_str (patched, "status.state"), "Closing");
    assert_int_equal (
        cJSON_GetObjectItem (cJSON_GetObjectItem (patched, "spec"), "weight")->valueint, 5);
    cJSON_Delete (patched);

    //  PodGroup: status written through the object itself is kept.
    const char *pgs = "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups";
    cJSON *pg = s_send (&sim, "POST", pgs, NULL,
                        "{\"metadata\":{\"name\":\"g\"},\"spec\":{\"minMember\":1}}", 201);
    cJSON *pst = cJSON_AddObjectToObject (pg, "status");
    cJSON_AddStringToObject (pst, "phase", "Running");
    cJSON_AddNumberToObject (pst, "running", 1);
    text = cJSON_PrintUnformatted (pg);
    char gpath[256];
    snprintf (gpath, sizeof gpath, "%s/g", pgs);
    cJSON *pg2 = s_send (&sim, "PUT", gpath, NULL, text, 200);
    assert_string_equal (s_str (pg2, "status.phase"), "Running");
    free (text);
    cJSON_Delete (pg);
    cJSON_Delete (pg2);
    snprintf (gpath, sizeof gpath, "%s/g/status", pgs);
    assert_int_equal (s_req (&sim, "PATCH", gpath, "application/merge-patch+json", "{}", NULL),
                      404);

    //  Pods: the main endpoint keeps status, /status changes it.
    s_create_pod (&sim, "default", "p", NULL, NULL);
    cJSON *p = s_send (&sim, "PATCH", "/api/v1/namespaces/default/pods/p",
                       "application/merge-patch+json", "{\"status\":{\"phase\":\"Failed\"}}", 200);
    assert_string_equal (s_str (p, "status.phase"), "Pending");
    cJSON_Delete (p);
    p = s_send (&sim, "PATCH", "/api/v1/namespaces/default/pods/p/status",
                "application/merge-patch+json", "{\"status\":{\"phase\":\"Failed\"}}", 200);
    assert_string_equal (s_str (p, "status.phase"), "Failed");
    cJSON_Delete (p);
    s_stop (&sim);
}

static void
test_paging (void **state)
{
    (void)state;
    s_sim_t sim;
    s_start (&sim, NULL);
    for (int i = 0; i < 25; i++) {
        char name[32];
        snprintf (name, sizeof name, "p%02d", i);
        s_create_pod (&sim, "page", name, i % 2 ? "{\"odd\":\"true\"}" : "{}", NULL);
    }
    s_create_pod (&sim, "zzz-other", "outside", NULL, NULL);
    cJSON *page = s_get_json (&sim, "/api/v1/namespaces/page/pods?limit=10", 200);
    const char *rv = s_str (page, "metadata.resourceVersion");
    char snap_rv[32];
    snprintf (snap_rv, sizeof snap_rv, "%s", rv);
    assert_int_equal (cJSON_GetArraySize (cJSON_GetObjectItem (page, "items")), 10);
    assert_int_equal (
        cJSON_GetObjectItem (cJSON_GetObjectItem (page, "metadata"), "remainingItemCount")
            ->valueint,
        15);
    char token[512];
    snprintf (token, sizeof token, "%s", s_str (page, "metadata.continue"));
    cJSON_Delete (page);
    //  A write between pages must not show up: one consistent snapshot.
    s_create_pod (&sim, "page", "p00a-late", NULL, NULL);
    cJSON_Delete (s_send (&sim, "DELETE", "/api/v1/namespaces/page/pods/p24", NULL, NULL, 200));
    int total = 10;
    char last[64] = "p09";
    while (token[0]) {
        char path[700];
        snprintf (path, sizeof path, "/api/v1/namespaces/page/pods?limit=10&continue=%s", token);
        page = s_get_json (&sim, path, 200);
        assert_string_equal (s_str (page, "metadata.resourceVersion"), snap_rv);
        cJSON *it;
        cJSON_ArrayForEach (it, cJSON_GetObjectItem (page, "items"))
        {
            const char *name = s_str (it, "metadata.name");
            //  cmocka's failures do not return, but are not declared so:
            //  the break tells the compiler (-Wformat-truncation in Release).
            if (!name) {
                fail_msg ("page item without metadata.name");
                break;
            }
            assert_true (strcmp (name, last) > 0); // sorted, no repeats
            snprintf (last, sizeof last, "%s", name);
            assert_string_not_equal (name, "p00a-late");
            total++;
        }
        const char *next = s_str (page, "metadata.continue");
        snprintf (token, sizeof token, "%s", next ? next : "");
        cJSON_Delete (page);
    }
    assert_int_equal (total, 25);
    assert_string_equal (last, "p24");
    //  With a selector: no remainingItemCount, still paged.
    page = s_get_json (&sim, "/api/v1/namespaces/page/pods?limit=5&labelSelector=odd%3Dtrue", 200);
    assert_int_equal (cJSON_GetArraySize (cJSON_GetObjectItem (page, "items")), 5);
    assert_non_null (s_str (page, "metadata.continue"));
    assert_null (
        cJSON_GetObjectItem (cJSON_GetObjectItem (page, "metadata"), "remainingItemCount"));
    cJSON_Delete (page);
    //  A token that is not one: 400; a token for a forgotten snapshot: 410.
    assert_int_equal (util_http_get (sim.port, "/api/v1/pods?limit=1&continue=%21%21", NULL), 400);
    char *body = NULL;
    //  {"v":"meta.k8s.io/v1","rv":3,"start":"x\u0000"}
    assert_int_equal (
        util_http_get (sim.port,
                       "/api/v1/pods?limit=1&continue="
                       "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6Mywic3RhcnQiOiJ4XHUwMDAwIn0",
                       &body),
        410);
    assert_non_null (strstr (body, "\"reason\":\"Expired\""));
    assert_non_null (strstr (body, "The provided continue parameter is too old"));
    free (body);
    s_stop (&sim);
}

static int
s_count_items (s_sim_t *sim, const char *path)
{
    cJSON *list = s_get_json (sim, path, 200);
    int n = cJSON_GetArraySize (cJSON_GetObjectItem (list, "items"));
    cJSON_Delete (list);
    return n;
}

static void
test_selectors (void **state)
{
    (void)state;
    s_sim_t sim;
    const char *args[] = {"--run-delay-ms", "-1", NULL};
    s_start (&sim, args);
    s_create_pod (&sim, "a", "web1", "{\"app\":\"web\",\"tier\":\"front\"}", "n1");
    s_create_pod (&sim, "a", "web2", "{\"app\":\"web\"}", NULL);
    s_create_pod (&sim, "b", "db1", "{\"app\":\"db\"}", NULL);
    s_create_pod (&sim, "b", "bare", NULL, "n2");
    assert_int_equal (s_count_items (&sim, "/api/v1/pods?labelSelector=app%3Dweb"), 2);
    assert_int_equal (s_count_items (&sim, "/api/v1/pods?labelSelector=app%3D%3Dweb"), 2);
    assert_int_equal (s_count_items (&sim, "/api/v1/pods?labelSelector=app%21%3Dweb"), 2);
    assert_int_equal (s_count_items (&sim, "/api/v1/pods?labelSelector=app%3Dweb,tier"), 1);
    assert_int_equal (s_count_items (&sim, "/api/v1/pods?labelSelector=%21app"), 1);
    assert_int_equal (s_count_items (&sim, "/api/v1/pods?labelSelector=app%20in%20(web,db)"), 3);
    assert_int_equal (s_count_items (&sim, "/api/v1/pods?labelSelector=app%20notin%20(web)"), 2);
    assert_int_equal (s_count_items (&sim, "/api/v1/pods?fieldSelector=spec.nodeName%3D"), 2);
    assert_int_equal (s_count_items (&sim, "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1"), 1);
    assert_int_equal (s_count_items (&sim, "/api/v1/pods?fieldSelector=spec.nodeName%21%3D"), 2);
    assert_int_equal (s_count_items (&sim, "/api/v1/pods?fieldSelector=metadata.namespace%3Db"), 2);
    assert_int_equal (s_count_items (&sim, "/api/v1/pods?fieldSelector=metadata.name%3Dweb2"), 1);
    assert_int_equal (s_count_items (&sim, "/api/v1/pods?fieldSelector=status.phase%3DPending"), 4);
    assert_int_equal (
        s_count_items (
            &sim,
            "/api/v1/namespaces/a/pods?fieldSelector=status.phase%3DPending,spec.nodeName%3D"),
        1);
    char *body = NULL;
    assert_int_equal (util_http_get (sim.port, "/api/v1/pods?fieldSelector=spec.foo%3Dx", &body),
                      400);
    assert_non_null (strstr (body, "field label not supported: spec.foo"));
    free (body);
    assert_int_equal (util_http_get (sim.port, "/api/v1/pods?labelSelector=a%20b%3Dc", NULL), 400);
    //  Namespace deletion takes its content with it.
    cJSON_Delete (s_send (&sim, "DELETE", "/api/v1/namespaces/b", NULL, NULL, 200));
    assert_int_equal (s_count_items (&sim, "/api/v1/pods"), 2);
    s_stop (&sim);
}

static const char *
s_event_type (const cJSON *event)
{
    return cJSON_GetObjectItem (event, "type")->valuestring;
}

static void
test_watch_events (void **state)
{
    (void)state;
    s_sim_t sim;
    const char *args[] = {"--run-delay-ms", "-1", NULL};
    s_start (&sim, args);
    s_create_pod (&sim, "w", "old1", NULL, NULL);
    s_create_pod (&sim, "w", "old2", NULL, NULL);
    s_watch_t *w = s_watch_start (&sim, "/api/v1/namespaces/w/pods?watch=1&resourceVersion=0");
    s_watch_wait_lines (w, 2);
    //  Synthetic ADDED for what exists, then live events in order.
    s_create_pod (&sim, "w", "new", NULL, NULL);
    s_create_pod (&sim, "elsewhere", "ignored", NULL, NULL);
    cJSON_Delete (s_send (&sim, "PATCH", "/api/v1/namespaces/w/pods/new",
                          "application/merge-patch+json",
                          "{\"metadata\":{\"labels\":{\"x\":\"y\"}}}", 200));
    cJSON_Delete (s_send (&sim, "DELETE", "/api/v1/namespaces/w/pods/new", NULL, NULL, 200));
    s_watch_wait_lines (w, 6);
    //  A pod on no node is deleted at once, but like the real store writes
    //  the deletion mark (grace 0) first: MODIFIED, then DELETED.
    const char *types[] = {"ADDED", "ADDED", "ADDED", "MODIFIED", "MODIFIED", "DELETED"};
    const char *names[] = {"old1", "old2", "new", "new", "new", "new"};
    unsigned long long last = 0;
    for (int i = 0; i < 6; i++) {
        cJSON *event = s_watch_event (w, i);
        assert_string_equal (s_event_type (event), types[i]);
        cJSON *obj = cJSON_GetObjectItem (event, "object");
        assert_string_equal (s_str (obj, "kind"), "Pod");
        assert_string_equal (s_str (obj, "apiVersion"), "v1");
        assert_string_equal (s_str (obj, "metadata.name"), names[i]);
        unsigned long long rv = s_rv (obj);
        assert_true (rv > last);
        last = rv;
        cJSON_Delete (event);
    }
    assert_int_equal (s_watch_lines (w), 6);
    s_watch_destroy (&w);

    //  From a list's resourceVersion: only what came after.
    cJSON *list = s_get_json (&sim, "/api/v1/namespaces/w/pods", 200);
    char path[256];
    snprintf (path, sizeof path, "/api/v1/namespaces/w/pods?watch=true&resourceVersion=%s",
              s_str (list, "metadata.resourceVersion"));
    cJSON_Delete (list);
    w = s_watch_start (&sim, path);
    s_watch_pump (w, 50);
    s_create_pod (&sim, "w", "after", NULL, NULL);
    s_watch_wait_lines (w, 1);
    cJSON *event = s_watch_event (w, 0);
    assert_string_equal (s_event_type (event), "ADDED");
    assert_string_equal (s_str (cJSON_GetObjectItem (event, "object"), "metadata.name"), "after");
    cJSON_Delete (event);
    s_watch_destroy (&w);

    //  Replay from an older resourceVersion in the window.
    w = s_watch_start (&sim, "/api/v1/namespaces/w/pods?watch=1&resourceVersion=1");
    s_watch_wait_lines (w, 7);
    event = s_watch_event (w, 0);
    assert_string_equal (s_str (cJSON_GetObjectItem (event, "object"), "metadata.name"), "old1");
    cJSON_Delete (event);
    event = s_watch_event (w, 6);
    assert_string_equal (s_str (cJSON_GetObjectItem (event, "object"), "metadata.name"), "after");
    cJSON_Delete (event);
    s_watch_destroy (&w);

    //  A selector transition: binding to n1 makes the pod appear as ADDED
    //  to a node-scoped watch.
    w = s_watch_start (&sim, "/api/v1/pods?watch=1&fieldSelector=spec.nodeName%3Dn1");
    s_watch_pump (w, 50);
    cJSON_Delete (s_send (&sim, "POST", "/api/v1/namespaces/w/pods/old1/binding", NULL,
                          "{\"metadata\":{\"name\":\"old1\"},\"target\":{\"name\":\"n1\"}}", 201));
    s_watch_wait_lines (w, 1);
    event = s_watch_event (w, 0);
    assert_string_equal (s_event_type (event), "ADDED");
    assert_string_equal (s_str (cJSON_GetObjectItem (event, "object"), "spec.nodeName"), "n1");
    cJSON_Delete (event);
    s_watch_destroy (&w);
    //  Watches on the deprecated /watch/ path work too.
    w = s_watch_start (&sim, "/api/v1/watch/namespaces/w/pods?timeoutSeconds=1");
    assert_true (util_wait_until (s_watch_is_done, w, 5000));
    assert_int_equal (w->code, 200);
    assert_true (s_watch_lines (w) >= 2);
    s_watch_destroy (&w);
    s_stop (&sim);
}

#define S_LEASES "/apis/coordination.k8s.io/v1/namespaces/volcano-system/leases"

//  A Lease body as client-go's leaselock writes it: holder, duration,
//  renewTime (MicroTime), and the resourceVersion it read (rv NULL: none).
static char *
s_lease_body (const char *holder, const char *renew, const char *rv)
{
    char *text = NULL;
    char rv_member[64] = "";
    if (rv)
        snprintf (rv_member, sizeof rv_member, ",\"resourceVersion\":\"%s\"", rv);
    int n = asprintf (&text,
                      "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
                      "\"metadata\":{\"name\":\"basalt\",\"namespace\":\"volcano-system\"%s},"
                      "\"spec\":{\"holderIdentity\":\"%s\",\"leaseDurationSeconds\":15,"
                      "\"acquireTime\":\"2024-01-01T00:00:00.000000Z\","
                      "\"renewTime\":\"%s\",\"leaseTransitions\":0}}",
                      rv_member, holder, renew);
    assert_true (n > 0);
    return text;
}

//  Leader election's lock: what client-go's leaselock does (get, create,
//  update with the resourceVersion it read, watch) gets the real API's
//  answers, byte for byte where a client reads them.
static void
test_leases (void **state)
{
    (void)state;
    s_sim_t sim;
    s_start (&sim, NULL);
    //  Discovery: the group, and the resource with its scope and no short
    //  name.
    cJSON *apis = s_get_json (&sim, "/apis", 200);
    char *text = cJSON_PrintUnformatted (apis);
    assert_non_null (strstr (text, "{\"name\":\"coordination.k8s.io\",\"versions\":[{"
                                   "\"groupVersion\":\"coordination.k8s.io/v1\","
                                   "\"version\":\"v1\"}]"));
    free (text);
    cJSON_Delete (apis);
    cJSON *gv = s_get_json (&sim, "/apis/coordination.k8s.io/v1", 200);
    text = cJSON_PrintUnformatted (gv);
    assert_string_equal (text, "{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\","
                               "\"groupVersion\":\"coordination.k8s.io/v1\",\"resources\":[{"
                               "\"name\":\"leases\",\"singularName\":\"lease\",\"namespaced\":"
                               "true,\"kind\":\"Lease\",\"verbs\":[\"create\",\"delete\","
                               "\"deletecollection\",\"get\",\"list\",\"patch\",\"update\","
                               "\"watch\"]}]}");
    free (text);
    cJSON_Delete (gv);
    //  OpenAPI: kubectl finds the PATCH of leases (fieldValidation).
    cJSON *root = s_get_json (&sim, "/openapi/v3", 200);
    const char *url = s_str (cJSON_GetObjectItem (root, "paths"),
                             "apis/coordination\\.k8s\\.io/v1.serverRelativeURL");
    assert_non_null (url);
    cJSON *doc = s_get_json (&sim, url, 200);
    cJSON *item = cJSON_GetObjectItem (cJSON_GetObjectItem (doc, "paths"),
                                       "/apis/coordination.k8s.io/v1/namespaces/{namespace}/"
                                       "leases/{name}");
    assert_string_equal (s_str (item, "patch.x-kubernetes-group-version-kind.kind"), "Lease");
    cJSON_Delete (doc);
    cJSON_Delete (root);

    //  The namespace first (nothing is created in a missing one).
    s_ensure_namespace (&sim, "volcano-system");
    //  A missing lease: 404 with the real message.
    char *body = NULL;
    assert_int_equal (util_http_get (sim.port, S_LEASES "/basalt", &body), 404);
    assert_string_equal (body, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                               "\"status\":\"Failure\",\"message\":\"leases.coordination.k8s.io "
                               "\\\"basalt\\\" not found\",\"reason\":\"NotFound\",\"details\":"
                               "{\"name\":\"basalt\",\"group\":\"coordination.k8s.io\",\"kind\":"
                               "\"leases\"},\"code\":404}\n");
    free (body);
    //  A watch from the (empty) list's resourceVersion sees every write.
    cJSON *list = s_get_json (&sim, S_LEASES, 200);
    assert_string_equal (s_str (list, "kind"), "LeaseList");
    assert_string_equal (s_str (list, "apiVersion"), "coordination.k8s.io/v1");
    assert_int_equal (cJSON_GetArraySize (cJSON_GetObjectItem (list, "items")), 0);
    char path[256];
    snprintf (path, sizeof path, S_LEASES "?watch=1&resourceVersion=%s",
              s_str (list, "metadata.resourceVersion"));
    cJSON_Delete (list);
    s_watch_t *w = s_watch_start (&sim, path);
    s_watch_pump (w, 50);

    //  Create: a spec and no status (a Lease has none).
    char *create = s_lease_body ("pod-a", "2024-01-01T00:00:00.000000Z", NULL);
    cJSON *lease = s_send (&sim, "POST", S_LEASES, NULL, create, 201);
    assert_string_equal (s_str (lease, "kind"), "Lease");
    assert_string_equal (s_str (lease, "spec.holderIdentity"), "pod-a");
    assert_null (s_at (lease, "status"));
    assert_null (s_at (lease, "metadata.generation"));
    unsigned long long rv1 = s_rv (lease);
    char rv1_text[32];
    snprintf (rv1_text, sizeof rv1_text, "%llu", rv1);
    cJSON_Delete (lease);
    //  A second candidate creating the same lease: 409 AlreadyExists.
    char *create_b = s_lease_body ("pod-b", "2024-01-01T00:00:01.000000Z", NULL);
    assert_int_equal (s_req (&sim, "POST", S_LEASES, NULL, create_b, &body), 409);
    assert_string_equal (body, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                               "\"status\":\"Failure\",\"message\":\"leases.coordination.k8s.io "
                               "\\\"basalt\\\" already exists\",\"reason\":\"AlreadyExists\","
                               "\"details\":{\"name\":\"basalt\",\"group\":\"coordination.k8s.io\","
                               "\"kind\":\"leases\"},\"code\":409}\n");
    free (body);
    free (create_b);
    free (create);
    //  The holder renews with the resourceVersion it read: a new one.
    char *renew = s_lease_body ("pod-a", "2024-01-01T00:00:02.000000Z", rv1_text);
    lease = s_send (&sim, "PUT", S_LEASES "/basalt", NULL, renew, 200);
    unsigned long long rv2 = s_rv (lease);
    assert_true (rv2 > rv1);
    assert_string_equal (s_str (lease, "spec.renewTime"), "2024-01-01T00:00:02.000000Z");
    assert_null (s_at (lease, "status"));
    cJSON_Delete (lease);
    //  The other candidate, with the resourceVersion it read before the
    //  renewal: 409 Conflict, the real Status, and nothing changes.
    char *takeover = s_lease_body ("pod-b", "2024-01-01T00:00:03.000000Z", rv1_text);
    assert_int_equal (s_req (&sim, "PUT", S_LEASES "/basalt", NULL, takeover, &body), 409);
    assert_string_equal (
        body, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
              "\"Failure\",\"message\":\"Operation cannot be fulfilled on "
              "leases.coordination.k8s.io \\\"basalt\\\": the object has been modified; please "
              "apply your changes to the latest version and try again\",\"reason\":\"Conflict\","
              "\"details\":{\"name\":\"basalt\",\"group\":\"coordination.k8s.io\",\"kind\":"
              "\"leases\"},\"code\":409}\n");
    free (body);
    free (takeover);
    lease = s_get_json (&sim, S_LEASES "/basalt", 200);
    assert_string_equal (s_str (lease, "spec.holderIdentity"), "pod-a");
    assert_int_equal (s_rv (lease), rv2);
    cJSON_Delete (lease);
    //  With the current resourceVersion the takeover succeeds.
    char rv2_text[32];
    snprintf (rv2_text, sizeof rv2_text, "%llu", rv2);
    takeover = s_lease_body ("pod-b", "2024-01-01T00:00:04.000000Z", rv2_text);
    lease = s_send (&sim, "PUT", S_LEASES "/basalt", NULL, takeover, 200);
    unsigned long long rv3 = s_rv (lease);
    assert_true (rv3 > rv2);
    assert_string_equal (s_str (lease, "spec.holderIdentity"), "pod-b");
    cJSON_Delete (lease);
    free (takeover);
    free (renew);
    //  A strategic merge patch (what `kubectl annotate` sends) is a write.
    lease = s_send (&sim, "PATCH", S_LEASES "/basalt", "application/strategic-merge-patch+json",
                    "{\"spec\":{\"leaseTransitions\":1}}", 200);
    unsigned long long rv4 = s_rv (lease);
    assert_true (rv4 > rv3);
    cJSON_Delete (lease);
    //  A lease is listed across namespaces, and deleted.
    list = s_get_json (&sim, "/apis/coordination.k8s.io/v1/leases", 200);
    assert_int_equal (cJSON_GetArraySize (cJSON_GetObjectItem (list, "items")), 1);
    assert_string_equal (s_str (list, "items.0.metadata.namespace"), "volcano-system");
    cJSON_Delete (list);
    cJSON_Delete (s_send (&sim, "DELETE", S_LEASES "/basalt", NULL, NULL, 200));
    assert_int_equal (util_http_get (sim.port, S_LEASES "/basalt", NULL), 404);

    //  The watch saw each write with the resourceVersion its reply had.
    s_watch_wait_lines (w, 5);
    const char *types[] = {"ADDED", "MODIFIED", "MODIFIED", "MODIFIED", "DELETED"};
    const unsigned long long rvs[] = {rv1, rv2, rv3, rv4, 0};
    const char *holders[] = {"pod-a", "pod-a", "pod-b", "pod-b", "pod-b"};
    unsigned long long last = 0;
    for (int i = 0; i < 5; i++) {
        cJSON *event = s_watch_event (w, i);
        assert_string_equal (s_event_type (event), types[i]);
        cJSON *obj = cJSON_GetObjectItem (event, "object");
        assert_string_equal (s_str (obj, "kind"), "Lease");
        assert_string_equal (s_str (obj, "spec.holderIdentity"), holders[i]);
        unsigned long long rv = s_rv (obj);
        if (rvs[i])
            assert_int_equal (rv, rvs[i]);
        assert_true (rv > last);
        last = rv;
        cJSON_Delete (event);
    }
    assert_int_equal (s_watch_lines (w), 5);
    s_watch_destroy (&w);
    s_stop (&sim);
}

//  One discovery entry of resource `name` in the APIResourceList at path,
//  as compact JSON (caller frees), or NULL.
static char *
s_discovery_entry (s_sim_t *sim, const char *path, const char *name)
{
    cJSON *list = s_get_json (sim, path, 200);
    char *text = NULL;
    cJSON *r;
    cJSON_ArrayForEach (r, cJSON_GetObjectItem (list, "resources"))
    {
        if (!text && !strcmp (s_str (r, "name"), name))
            text = cJSON_PrintUnformatted (r);
    }
    cJSON_Delete (list);
    return text;
}

#define S_VERBS                                                                                    \
    "\"verbs\":[\"create\",\"delete\",\"deletecollection\",\"get\",\"list\",\"patch\","            \
    "\"update\",\"watch\"]"

//  The stored-only kinds a deployment of Basalt is made of: discovery
//  with the real scopes and short names, create and read back without a
//  spurious spec or status, the API's defaults and name rules, and a
//  Service's ports merged by port.
static void
test_deploy_kinds (void **state)
{
    (void)state;
    s_sim_t sim;
    s_start (&sim, NULL);
    static const struct {
        const char *gv_path; // discovery document
        const char *entry;   // the resource's entry, exactly
    } entries[] = {
        {"/api/v1",
         "{\"name\":\"serviceaccounts\",\"singularName\":\"serviceaccount\","
         "\"namespaced\":true,\"kind\":\"ServiceAccount\"," S_VERBS ",\"shortNames\":[\"sa\"]}"},
        {"/api/v1", "{\"name\":\"configmaps\",\"singularName\":\"configmap\",\"namespaced\":true,"
                    "\"kind\":\"ConfigMap\"," S_VERBS ",\"shortNames\":[\"cm\"]}"},
        {"/api/v1", "{\"name\":\"secrets\",\"singularName\":\"secret\",\"namespaced\":true,"
                    "\"kind\":\"Secret\"," S_VERBS "}"},
        {"/api/v1", "{\"name\":\"services\",\"singularName\":\"service\",\"namespaced\":true,"
                    "\"kind\":\"Service\"," S_VERBS ",\"shortNames\":[\"svc\"]}"},
        {"/apis/rbac.authorization.k8s.io/v1",
         "{\"name\":\"clusterroles\",\"singularName\":\"clusterrole\",\"namespaced\":false,"
         "\"kind\":\"ClusterRole\"," S_VERBS "}"},
        {"/apis/rbac.authorization.k8s.io/v1",
         "{\"name\":\"clusterrolebindings\",\"singularName\":\"clusterrolebinding\","
         "\"namespaced\":false,\"kind\":\"ClusterRoleBinding\"," S_VERBS "}"},
        {"/apis/rbac.authorization.k8s.io/v1",
         "{\"name\":\"roles\",\"singularName\":\"role\",\"namespaced\":true,\"kind\":"
         "\"Role\"," S_VERBS "}"},
        {"/apis/rbac.authorization.k8s.io/v1",
         "{\"name\":\"rolebindings\",\"singularName\":\"rolebinding\",\"namespaced\":true,"
         "\"kind\":\"RoleBinding\"," S_VERBS "}"},
        {"/apis/policy/v1", "{\"name\":\"poddisruptionbudgets\",\"singularName\":"
                            "\"poddisruptionbudget\",\"namespaced\":true,\"kind\":"
                            "\"PodDisruptionBudget\"," S_VERBS ",\"shortNames\":[\"pdb\"]}"},
        {"/apis/autoscaling/v2",
         "{\"name\":\"horizontalpodautoscalers\",\"singularName\":\"horizontalpodautoscaler\","
         "\"namespaced\":true,\"kind\":\"HorizontalPodAutoscaler\"," S_VERBS
         ",\"shortNames\":[\"hpa\"]}"},
    };
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        char name[64];
        const char *start = entries[i].entry + strlen ("{\"name\":\"");
        snprintf (name, sizeof name, "%.*s", (int)(strchr (start, '"') - start), start);
        char *entry = s_discovery_entry (&sim, entries[i].gv_path, name);
        if (!entry || strcmp (entry, entries[i].entry) != 0)
            fail_msg ("%s: entry of %s is %s, want %s", entries[i].gv_path, name,
                      entry ? entry : "(none)", entries[i].entry);
        free (entry);
    }
    //  Status subresources where the real API has them, and only there.
    char *sub = s_discovery_entry (&sim, "/api/v1", "services/status");
    assert_non_null (sub);
    free (sub);
    sub = s_discovery_entry (&sim, "/apis/policy/v1", "poddisruptionbudgets/status");
    assert_non_null (sub);
    free (sub);
    sub = s_discovery_entry (&sim, "/apis/autoscaling/v2", "horizontalpodautoscalers/status");
    assert_non_null (sub);
    free (sub);
    assert_null (s_discovery_entry (&sim, "/api/v1", "configmaps/status"));
    //  The groups, and the OpenAPI documents kubectl reads for each.
    cJSON *root = s_get_json (&sim, "/openapi/v3", 200);
    const char *gvs[] = {"rbac.authorization.k8s.io/v1", "policy/v1", "autoscaling/v2", NULL};
    for (int i = 0; gvs[i]; i++) {
        char path[128], key[160];
        snprintf (path, sizeof path, "/apis/%s", gvs[i]);
        cJSON_Delete (s_get_json (&sim, path, 200));
        snprintf (key, sizeof key, "apis/%s", gvs[i]);
        cJSON *entry = cJSON_GetObjectItem (cJSON_GetObjectItem (root, "paths"), key);
        assert_non_null (entry);
        cJSON_Delete (s_get_json (&sim, s_str (entry, "serverRelativeURL"), 200));
    }
    cJSON_Delete (root);

    //  Create each kind; read back what the API would store.
    s_ensure_namespace (&sim, "volcano-system");
#define S_NS_CORE "/api/v1/namespaces/volcano-system/"
#define S_RBAC "/apis/rbac.authorization.k8s.io/v1/"
    static const struct {
        const char *path;       // collection
        const char *body;       // object
        bool spec;              // "spec" in the stored object
        bool status;            // "status" in the stored object
        const char *generation; // metadata.generation wanted, or NULL for none
    } objects[] = {
        {S_NS_CORE "serviceaccounts",
         "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":\"basalt\"}}",
         false, false, NULL},
        {S_NS_CORE "configmaps",
         "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"conf\"},"
         "\"data\":{\"a.conf\":\"x: 1\\n\"}}",
         false, false, NULL},
        {S_NS_CORE "secrets",
         "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"keys\"},"
         "\"data\":{\"k\":\"dmFsdWU=\"}}",
         false, false, NULL},
        {S_NS_CORE "services",
         "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"work\"},"
         "\"spec\":{\"selector\":{\"app\":\"b\"},\"ports\":[{\"name\":\"metrics\",\"port\":8080},"
         "{\"name\":\"work\",\"port\":5555}]}}",
         true, true, NULL},
        {S_RBAC "clusterroles",
         "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRole\","
         "\"metadata\":{\"name\":\"system:basalt\"},\"rules\":[{\"apiGroups\":[\"\"],"
         "\"resources\":[\"pods\"],\"verbs\":[\"get\"]}]}",
         false, false, NULL},
        {S_RBAC "clusterrolebindings",
         "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRoleBinding\","
         "\"metadata\":{\"name\":\"basalt\"},\"roleRef\":{\"apiGroup\":"
         "\"rbac.authorization.k8s.io\",\"kind\":\"ClusterRole\",\"name\":\"system:basalt\"},"
         "\"subjects\":[{\"kind\":\"ServiceAccount\",\"name\":\"basalt\",\"namespace\":"
         "\"volcano-system\"}]}",
         false, false, NULL},
        {S_RBAC "namespaces/volcano-system/roles",
         "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"Role\",\"metadata\":"
         "{\"name\":\"leases\"},\"rules\":[]}",
         false, false, NULL},
        {S_RBAC "namespaces/volcano-system/rolebindings",
         "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"RoleBinding\",\"metadata\":"
         "{\"name\":\"leases\"},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\","
         "\"kind\":\"Role\",\"name\":\"leases\"},\"subjects\":[]}",
         false, false, NULL},
        {"/apis/policy/v1/namespaces/volcano-system/poddisruptionbudgets",
         "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\",\"metadata\":{\"name\":"
         "\"basalt\"},\"spec\":{\"maxUnavailable\":1,\"selector\":{\"matchLabels\":{\"app\":"
         "\"b\"}}}}",
         true, true, "1"},
        {"/apis/autoscaling/v2/namespaces/volcano-system/horizontalpodautoscalers",
         "{\"apiVersion\":\"autoscaling/v2\",\"kind\":\"HorizontalPodAutoscaler\",\"metadata\":"
         "{\"name\":\"binder\"},\"spec\":{\"scaleTargetRef\":{\"apiVersion\":\"apps/v1\","
         "\"kind\":\"Deployment\",\"name\":\"binder\"},\"minReplicas\":1,\"maxReplicas\":3}}",
         true, true, NULL},
    };
    for (size_t i = 0; i < sizeof objects / sizeof objects[0]; i++) {
        cJSON *obj = s_send (&sim, "POST", objects[i].path, NULL, objects[i].body, 201);
        char path[512];
        snprintf (path, sizeof path, "%s/%s", objects[i].path, s_str (obj, "metadata.name"));
        cJSON_Delete (obj);
        obj = s_get_json (&sim, path, 200);
        if ((s_at (obj, "spec") != NULL) != objects[i].spec ||
            (s_at (obj, "status") != NULL) != objects[i].status)
            fail_msg ("%s: spec %s, status %s: %s", path, s_at (obj, "spec") ? "present" : "absent",
                      s_at (obj, "status") ? "present" : "absent", cJSON_PrintUnformatted (obj));
        const cJSON *gen = s_at (obj, "metadata.generation");
        if (objects[i].generation)
            assert_int_equal (gen ? gen->valueint : -1, atoi (objects[i].generation));
        else
            assert_null (gen);
        cJSON_Delete (obj);
    }
    //  Cluster-scoped kinds have no namespaced path.
    assert_int_equal (util_http_get (sim.port,
                                     S_RBAC "namespaces/volcano-system/clusterroles/system:basalt",
                                     NULL),
                      404);
    //  The API's defaults: a Secret's type, a Service's type, affinity and
    //  port protocol and targetPort.
    cJSON *obj = s_get_json (&sim, S_NS_CORE "secrets/keys", 200);
    assert_string_equal (s_str (obj, "type"), "Opaque");
    cJSON_Delete (obj);
    obj = s_get_json (&sim, S_NS_CORE "services/work", 200);
    assert_string_equal (s_str (obj, "spec.type"), "ClusterIP");
    assert_string_equal (s_str (obj, "spec.sessionAffinity"), "None");
    assert_string_equal (s_str (obj, "spec.ports.1.protocol"), "TCP");
    assert_int_equal (s_at (obj, "spec.ports.1.targetPort")->valueint, 5555);
    cJSON_Delete (obj);
    //  A strategic merge patch merges a Service's ports by port (not by
    //  containerPort, the key of a container's ports): one port changes.
    obj =
        s_send (&sim, "PATCH", S_NS_CORE "services/work", "application/strategic-merge-patch+json",
                "{\"spec\":{\"ports\":[{\"port\":5555,\"targetPort\":6000}]}}", 200);
    assert_int_equal (cJSON_GetArraySize (s_at (obj, "spec.ports")), 2);
    assert_string_equal (s_str (obj, "spec.ports.0.name"), "metrics");
    assert_int_equal (s_at (obj, "spec.ports.1.targetPort")->valueint, 6000);
    cJSON_Delete (obj);
    //  … and a port added by a patch is defaulted like one created.
    obj =
        s_send (&sim, "PATCH", S_NS_CORE "services/work", "application/strategic-merge-patch+json",
                "{\"spec\":{\"ports\":[{\"name\":\"x\",\"port\":7000}]}}", 200);
    assert_int_equal (cJSON_GetArraySize (s_at (obj, "spec.ports")), 3);
    assert_string_equal (s_str (obj, "spec.ports.2.protocol"), "TCP");
    cJSON_Delete (obj);

    //  Names: a path segment for RBAC (above: "system:basalt"), a subdomain
    //  elsewhere, a DNS-1035 label for Services.
    char *body = NULL;
    assert_int_equal (s_req (&sim, "POST", S_NS_CORE "configmaps", NULL,
                             "{\"metadata\":{\"name\":\"system:basalt\"}}", &body),
                      422);
    assert_non_null (strstr (body, "ConfigMap \\\"system:basalt\\\" is invalid: metadata.name: "
                                   "Invalid value: \\\"system:basalt\\\": a lowercase RFC 1123 "
                                   "subdomain must consist of"));
    free (body);
    assert_int_equal (s_req (&sim, "POST", S_NS_CORE "services", NULL,
                             "{\"metadata\":{\"name\":\"1work\"},\"spec\":{}}", &body),
                      422);
    assert_non_null (strstr (
        body, "Service \\\"1work\\\" is invalid: metadata.name: Invalid value: \\\"1work\\\": a "
              "DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
              "with an alphabetic character, and end with an alphanumeric character (e.g. "
              "'my-name',  or 'abc-123', regex used for validation is "
              "'[a-z]([-a-z0-9]*[a-z0-9])?')"));
    free (body);
    assert_int_equal (s_req (&sim, "POST", S_RBAC "clusterroles", NULL,
                             "{\"metadata\":{\"name\":\"..\"}}", &body),
                      422);
    assert_non_null (strstr (body, "ClusterRole.rbac.authorization.k8s.io \\\"..\\\" is invalid: "
                                   "metadata.name: Invalid value: \\\"..\\\": may not be '..'"));
    free (body);
    //  Namespace deletion takes the namespaced kinds with it; the cluster-
    //  scoped ones stay.
    cJSON_Delete (s_send (&sim, "DELETE", "/api/v1/namespaces/volcano-system", NULL, NULL, 200));
    assert_int_equal (util_http_get (sim.port, S_NS_CORE "configmaps/conf", NULL), 404);
    assert_int_equal (util_http_get (sim.port, S_RBAC "clusterroles/system:basalt", NULL), 200);
#undef S_NS_CORE
#undef S_RBAC
    s_stop (&sim);
}

static void
test_watch_expired (void **state)
{
    (void)state;
    s_sim_t sim;
    const char *args[] = {"--watch-window", "5", NULL};
    s_start (&sim, args);
    for (int i = 0; i < 10; i++) {
        char name[16];
        snprintf (name, sizeof name, "p%d", i);
        s_create_pod (&sim, "default", name, NULL, NULL);
    }
    s_watch_t *w = s_watch_start (&sim, "/api/v1/pods?watch=1&resourceVersion=2");
    assert_true (util_wait_until (s_watch_is_done, w, 5000));
    assert_int_equal (w->code, 200);
    assert_int_equal (s_watch_lines (w), 1);
    cJSON *event = s_watch_event (w, 0);
    assert_string_equal (s_event_type (event), "ERROR");
    cJSON *st = cJSON_GetObjectItem (event, "object");
    assert_string_equal (s_str (st, "kind"), "Status");
    assert_string_equal (s_str (st, "reason"), "Expired");
    assert_int_equal (cJSON_GetObjectItem (st, "code")->valueint, 410);
    assert_non_null (strstr (s_str (st, "message"), "too old resource version: 2 ("));
    //  Same envelope as watch/error-410-expired.ndjson (message aside).
    char *line = strndup (w->data, strcspn (w->data, "\n"));
    assert_non_null (strstr (line,
                             "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":"
                             "\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":"
                             "\"too old resource version: 2 ("));
    assert_non_null (strstr (line, ")\",\"reason\":\"Expired\",\"code\":410}}"));
    free (line);
    cJSON_Delete (event);
    s_watch_destroy (&w);
    //  The newest events are still replayable.
    cJSON *list = s_get_json (&sim, "/api/v1/pods", 200);
    char path[128];
    snprintf (path, sizeof path, "/api/v1/pods?watch=1&resourceVersion=%llu", s_rv (list) - 2);
    cJSON_Delete (list);
    w = s_watch_start (&sim, path);
    s_watch_wait_lines (w, 2);
    event = s_watch_event (w, 0);
    assert_string_equal (s_event_type (event), "ADDED");
    cJSON_Delete (event);
    s_watch_destroy (&w);
    s_stop (&sim);
}

static void
test_watch_bookmarks_and_timeout (void **state)
{
    (void)state;
    s_sim_t sim;
    const char *args[] = {"--bookmark-interval-ms", "100", NULL};
    s_start (&sim, args);
    s_create_pod (&sim, "default", "p", NULL, NULL);
    cJSON *list = s_get_json (&sim, "/api/v1/pods", 200);
    unsigned long long rv = s_rv (list);
    cJSON_Delete (list);
    char path[256];
    snprintf (path, sizeof path,
              "/api/v1/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=1&resourceVersion=%llu",
              rv);
    struct timespec t0, t1;
    clock_gettime (CLOCK_MONOTONIC, &t0);
    s_watch_t *w = s_watch_start (&sim, path);
    assert_true (util_wait_until (s_watch_is_done, w, 5000));
    clock_gettime (CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    assert_true (secs >= 0.9 && secs < 3.0);
    int n = s_watch_lines (w);
    assert_true (n >= 3);
    for (int i = 0; i < n; i++) {
        cJSON *event = s_watch_event (w, i);
        //  Only bookmarks, and no ERROR at the clean timeout.
        assert_string_equal (s_event_type (event), "BOOKMARK");
        cJSON *obj = cJSON_GetObjectItem (event, "object");
        assert_int_equal (s_rv (obj), rv);
        cJSON_Delete (event);
    }
    //  The exact shape of watch/bookmark.ndjson.
    char want[256];
    snprintf (want, sizeof want,
              "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\","
              "\"metadata\":{\"resourceVersion\":\"%llu\",\"creationTimestamp\":null},"
              "\"spec\":{\"containers\":null},\"status\":{}}}\n",
              rv);
    assert_memory_equal (w->data, want, strlen (want));
    s_watch_destroy (&w);
    //  sendInitialEvents: ADDED, then a bookmark marking the end.
    w = s_watch_start (&sim, "/api/v1/pods?watch=1&sendInitialEvents=true&allowWatchBookmarks=true"
                             "&resourceVersionMatch=NotOlderThan");
    s_watch_wait_lines (w, 2);
    cJSON *event = s_watch_event (w, 1);
    assert_string_equal (s_event_type (event), "BOOKMARK");
    const cJSON *ann = cJSON_GetObjectItem (
        cJSON_GetObjectItem (cJSON_GetObjectItem (event, "object"), "metadata"), "annotations");
    const cJSON *end = cJSON_GetObjectItem (ann, "k8s.io/initial-events-end");
    assert_true (cJSON_IsString (end));
    assert_string_equal (end->valuestring, "true");
    cJSON_Delete (event);
    s_watch_destroy (&w);
    s_stop (&sim);
}

//  Many watchers, one of them gone while suspended: the server goes on.
static void
test_watch_clients_come_and_go (void **state)
{
    (void)state;
    s_sim_t sim;
    s_start (&sim, NULL);
    s_watch_t *w[8];
    for (int i = 0; i < 8; i++) {
        w[i] = s_watch_start (&sim, "/api/v1/nodes?watch=1");
        s_watch_pump (w[i], 20);
    }
    s_watch_destroy (&w[3]);
    s_watch_destroy (&w[5]);
    cJSON_Delete (
        s_send (&sim, "POST", "/api/v1/nodes", NULL, "{\"metadata\":{\"name\":\"n\"}}", 201));
    for (int i = 0; i < 8; i++) {
        if (i == 3 || i == 5)
            continue;
        s_watch_wait_lines (w[i], 1);
        s_watch_destroy (&w[i]);
    }
    assert_int_equal (util_http_get (sim.port, "/healthz", NULL), 200);
    s_stop (&sim);
}

static void
test_sigint (void **state)
{
    (void)state;
    s_sim_t sim;
    s_start (&sim, NULL);
    s_watch_t *w = s_watch_start (&sim, "/api/v1/pods?watch=1");
    s_watch_pump (w, 50);
    kill (sim.pid, SIGINT);
    int status = 0;
    waitpid (sim.pid, &status, 0);
    s_live_remove (sim.pid);
    if (!WIFEXITED (status) || WEXITSTATUS (status) != 0) {
        char *log = util_read_file (sim.log, NULL);
        fail_msg ("status 0x%x; log:\n%s", status, log ? log : "");
    }
    s_watch_destroy (&w);
    util_rmtree (sim.dir);
    free (sim.dir);
}

static void
test_big_list (void **state)
{
    (void)state;
    s_sim_t sim = {0};
    sim.dir = util_tmpdir ("apisim");
    FILE *f = fopen (s_path (&sim, "pods.yaml"), "w");
    assert_non_null (f);
    for (int i = 0; i < 20000; i++)
        fprintf (f,
                 "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: pod-%05d\n  namespace: ns%d\n"
                 "  labels: {app: a%d}\nspec:\n  containers:\n  - name: c\n    image: busybox\n"
                 "    resources:\n      requests: {cpu: 100m, memory: 64Mi}\n",
                 i, i % 10, i % 7);
    fclose (f);
    const char *args[] = {"--load", s_path (&sim, "pods.yaml"), NULL};
    //  Correctness only: timings belong to the benchmark, not to a test.
    //  s_start_in waits for the ready file as long as the simulator lives.
    s_start_in (&sim, args);
    char *body = NULL;
    assert_int_equal (util_http_get (sim.port, "/api/v1/pods", &body), 200);
    cJSON *list = cJSON_Parse (body);
    const cJSON *items = cJSON_GetObjectItem (list, "items");
    assert_int_equal (cJSON_GetArraySize (items), 20000);
    //  Server List form: items carry no kind/apiVersion; names all there.
    assert_null (cJSON_GetObjectItem (cJSON_GetArrayItem (items, 0), "kind"));
    zhashx_t *names = zhashx_new ();
    const cJSON *item;
    cJSON_ArrayForEach (item, items)
    {
        const cJSON *meta = cJSON_GetObjectItem (item, "metadata");
        zhashx_insert (names, cJSON_GetObjectItem (meta, "name")->valuestring, (void *)"1");
    }
    assert_int_equal (zhashx_size (names), 20000);
    zhashx_destroy (&names);
    cJSON_Delete (list);
    free (body);
    s_stop (&sim);
}

// ---------------------------------------------------------------------------
// Tables (what `kubectl get` asks for)

//  kubectl get's Accept header (kubectl 1.20 to current).
#define S_TABLE_ACCEPT                                                                             \
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta."     \
    "k8s.io,application/json"

static size_t
s_body_append (char *ptr, size_t size, size_t nmemb, void *arg)
{
    char **body = arg;
    size_t old = *body ? strlen (*body) : 0, n = size * nmemb;
    char *grown = realloc (*body, old + n + 1);
    if (!grown)
        return 0;
    memcpy (grown + old, ptr, n);
    grown[old + n] = 0;
    *body = grown;
    return n;
}

//  GET path with this Accept header; asserts the code; returns the body parsed.
static cJSON *
s_get_as (s_sim_t *sim, const char *path, const char *accept, long want_code)
{
    char url[512], header[512];
    snprintf (url, sizeof url, "http://127.0.0.1:%d%s", sim->port, path);
    snprintf (header, sizeof header, "Accept: %s", accept);
    CURL *easy = curl_easy_init ();
    struct curl_slist *headers = curl_slist_append (NULL, header);
    char *body = NULL;
    curl_easy_setopt (easy, CURLOPT_URL, url);
    curl_easy_setopt (easy, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt (easy, CURLOPT_WRITEFUNCTION, s_body_append);
    curl_easy_setopt (easy, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt (easy, CURLOPT_TIMEOUT_MS, 10000L);
    long code = 0;
    if (curl_easy_perform (easy) == CURLE_OK)
        curl_easy_getinfo (easy, CURLINFO_RESPONSE_CODE, &code);
    curl_slist_free_all (headers);
    curl_easy_cleanup (easy);
    if (code != want_code)
        fail_msg ("GET %s (Accept %s): %ld, want %ld: %s", path, accept, code, want_code,
                  body ? body : "");
    cJSON *json = cJSON_Parse (body ? body : "");
    if (!json)
        fail_msg ("GET %s: not JSON: %s", path, body ? body : "");
    free (body);
    return json;
}

//  The column names of a Table, comma-separated, into buf; "*" marks the
//  ones of -o wide (priority 1).
static const char *
s_table_columns (const cJSON *table, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = 0;
    const cJSON *c;
    cJSON_ArrayForEach (c, cJSON_GetObjectItem (table, "columnDefinitions"))
    {
        const cJSON *prio = cJSON_GetObjectItem (c, "priority");
        at += (size_t)snprintf (buf + at, len - at, "%s%s%s", at ? "," : "", s_str (c, "name"),
                                cJSON_IsNumber (prio) && prio->valueint ? "*" : "");
        if (at >= len)
            break;
    }
    return buf;
}

//  A row's cells as compact JSON, into buf.
static const char *
s_table_cells (const cJSON *table, int row, char *buf, size_t len)
{
    char *text = cJSON_PrintUnformatted (s_at (table, row == 0   ? "rows.0.cells"
                                                      : row == 1 ? "rows.1.cells"
                                                                 : "rows.2.cells"));
    snprintf (buf, len, "%s", text ? text : "");
    free (text);
    return buf;
}

static const char s_table_objects[] =
    "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels:\n"
    "    node-role.kubernetes.io/control-plane: \"\"\n    kubernetes.io/role: gpu\n"
    "spec:\n  unschedulable: true\n"
    "status:\n  conditions:\n  - type: Ready\n    status: \"True\"\n  addresses:\n"
    "  - type: InternalIP\n    address: 10.0.0.1\n  nodeInfo:\n    kubeletVersion: v1.31.6\n"
    "    osImage: Debian GNU/Linux 12\n"
    "---\n"
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: bound\nspec:\n  nodeName: n1\n"
    "  containers:\n  - name: a\n    image: x\n  - name: b\n    image: y:1\n"
    "---\n"
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: done\nspec:\n  nodeName: n1\n"
    "  containers:\n  - name: a\n    image: x\nstatus:\n  phase: Succeeded\n"
    "  containerStatuses:\n  - name: a\n    ready: false\n    restartCount: 2\n"
    "    state:\n      terminated:\n        exitCode: 0\n        reason: Completed\n"
    "---\n"
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: waiting\nspec:\n  containers:\n"
    "  - name: a\n    image: x\n"
    "---\n"
    "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata:\n  name: q1\n"
    "spec:\n  weight: 1\n  parent: root\n"
    "---\n"
    "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata:\n  name: pg1\n"
    "spec:\n  minMember: 2\n  queue: q1\nstatus:\n  phase: Running\n  running: 2\n";

//  The Table form: the columns of kube-apiserver's printers (pods, nodes,
//  namespaces), of a CRD's additionalPrinterColumns (PodGroup, Queue) and
//  the default table; the row objects includeObject asks for; lists, paged
//  lists, single gets and watches; and the formatter of ages.
static void
test_tables (void **state)
{
    (void)state;
    //  In process: ages as kubectl's duration printer writes them, and the
    //  Accept headers that ask for a Table.
    static const struct {
        long long s;
        const char *text;
    } ages[] = {{-5, "<invalid>"},
                {-1, "0s"},
                {0, "0s"},
                {119, "119s"},
                {120, "2m"},
                {125, "2m5s"},
                {600, "10m"},
                {10799, "179m"},
                {10800, "3h"},
                {11040, "3h4m"},
                {8 * 3600, "8h"},
                {47 * 3600, "47h"},
                {48 * 3600, "2d"},
                {49 * 3600, "2d1h"},
                {8 * 86400, "8d"},
                {730 * 86400, "2y"},
                {731 * 86400, "2y1d"},
                {3000 * 86400LL, "8y"}};
    char buf[64];
    for (size_t i = 0; i < sizeof ages / sizeof ages[0]; i++)
        assert_string_equal (sim_table_human_duration (ages[i].s, buf, sizeof buf), ages[i].text);
    assert_string_equal (sim_table_accept (S_TABLE_ACCEPT), "meta.k8s.io/v1");
    assert_string_equal (sim_table_accept ("application/json; as=Table; v=v1beta1; g=meta.k8s.io"),
                         "meta.k8s.io/v1beta1");
    assert_string_equal (sim_table_accept ("application/vnd.kubernetes.protobuf;as=Table;v=v1;"
                                           "g=meta.k8s.io,application/json;as=Table;v=v1;"
                                           "g=meta.k8s.io"),
                         "meta.k8s.io/v1");
    assert_null (sim_table_accept ("application/json"));
    assert_null (sim_table_accept (NULL));
    assert_null (sim_table_accept ("application/json;as=PartialObjectMetadataList;v=v1;"
                                   "g=meta.k8s.io,application/json"));

    s_sim_t sim = {0};
    sim.dir = util_tmpdir ("apisim");
    s_write (s_path (&sim, "objects.yaml"), s_table_objects);
    const char *args[] = {"--load", s_path (&sim, "objects.yaml"), "--run-delay-ms", "0", NULL};
    s_start_in (&sim, args);
    char cols[1024], cells[2048];

    //  Pods: the printer's columns, the wide ones marked priority 1.
    cJSON *t = s_get_as (&sim, "/api/v1/namespaces/default/pods", S_TABLE_ACCEPT, 200);
    assert_string_equal (s_str (t, "kind"), "Table");
    assert_string_equal (s_str (t, "apiVersion"), "meta.k8s.io/v1");
    assert_non_null (s_str (t, "metadata.resourceVersion"));
    assert_string_equal (s_table_columns (t, cols, sizeof cols),
                         "Name,Ready,Status,Restarts,Age,IP*,Node*,Nominated Node*,"
                         "Readiness Gates*");
    assert_string_equal (s_str (t, "columnDefinitions.0.format"), "name");
    //  Rows in key order: bound, done, waiting. The bound pod runs on n1
    //  (the simulated kubelet started it at once); the finished one shows
    //  its container's reason and restarts; the unbound one is Pending.
    s_table_cells (t, 0, cells, sizeof cells);
    if (!strstr (cells, "[\"bound\",\"2/2\",\"Running\",\"0\",\"") ||
        !strstr (cells, "\",\"10.244.") || !strstr (cells, "\",\"n1\",\"<none>\",\"<none>\"]"))
        fail_msg ("bound pod's row: %s", cells);
    s_table_cells (t, 1, cells, sizeof cells);
    if (!strstr (cells, "[\"done\",\"0/1\",\"Completed\",\"2\","))
        fail_msg ("finished pod's row: %s", cells);
    assert_string_equal (s_str (t, "rows.1.conditions.0.type"), "Completed");
    assert_string_equal (s_str (t, "rows.1.conditions.0.reason"), "Succeeded");
    s_table_cells (t, 2, cells, sizeof cells);
    if (!strstr (cells, "[\"waiting\",\"0/1\",\"Pending\",\"0\",\"") ||
        !strstr (cells, "\"<none>\",\"<none>\",\"<none>\",\"<none>\"]"))
        fail_msg ("pending pod's row: %s", cells);
    //  Each row carries its object's metadata (includeObject=Metadata).
    assert_string_equal (s_str (t, "rows.0.object.kind"), "PartialObjectMetadata");
    assert_string_equal (s_str (t, "rows.0.object.apiVersion"), "meta.k8s.io/v1");
    assert_string_equal (s_str (t, "rows.0.object.metadata.name"), "bound");
    assert_string_equal (s_str (t, "rows.0.object.metadata.namespace"), "default");
    assert_non_null (s_str (t, "rows.0.object.metadata.uid"));
    assert_null (s_at (t, "rows.0.object.spec"));
    cJSON_Delete (t);
    //  … or the whole object, or none; anything else is a 400.
    t = s_get_as (&sim, "/api/v1/namespaces/default/pods?includeObject=Object", S_TABLE_ACCEPT,
                  200);
    assert_string_equal (s_str (t, "rows.0.object.kind"), "Pod");
    assert_string_equal (s_str (t, "rows.0.object.spec.nodeName"), "n1");
    cJSON_Delete (t);
    t = s_get_as (&sim, "/api/v1/namespaces/default/pods?includeObject=None", S_TABLE_ACCEPT, 200);
    assert_null (s_at (t, "rows.0.object"));
    cJSON_Delete (t);
    t = s_get_as (&sim, "/api/v1/namespaces/default/pods?includeObject=All", S_TABLE_ACCEPT, 400);
    assert_string_equal (s_str (t, "message"), "unrecognized includeObject value: \"All\"");
    cJSON_Delete (t);
    //  Without the header: the list itself, as before.
    t = s_get_as (&sim, "/api/v1/namespaces/default/pods", "application/json", 200);
    assert_string_equal (s_str (t, "kind"), "PodList");
    cJSON_Delete (t);
    //  A paged list: the Table carries the list's continue token.
    t = s_get_as (&sim, "/api/v1/namespaces/default/pods?limit=1", S_TABLE_ACCEPT, 200);
    assert_int_equal (cJSON_GetArraySize (cJSON_GetObjectItem (t, "rows")), 1);
    assert_non_null (s_str (t, "metadata.continue"));
    assert_int_equal (s_at (t, "metadata.remainingItemCount")->valueint, 2);
    cJSON_Delete (t);
    //  A single get: one row; the Table's resourceVersion is the object's.
    cJSON *pod = s_get_json (&sim, "/api/v1/namespaces/default/pods/waiting", 200);
    t = s_get_as (&sim, "/api/v1/namespaces/default/pods/waiting",
                  "application/json;as=Table;v=v1beta1;g=meta.k8s.io", 200);
    assert_string_equal (s_str (t, "apiVersion"), "meta.k8s.io/v1beta1");
    assert_string_equal (s_str (t, "rows.0.object.apiVersion"), "meta.k8s.io/v1beta1");
    assert_int_equal (cJSON_GetArraySize (cJSON_GetObjectItem (t, "rows")), 1);
    assert_string_equal (s_str (t, "metadata.resourceVersion"),
                         s_str (pod, "metadata.resourceVersion"));
    cJSON_Delete (t);
    cJSON_Delete (pod);
    //  A pod being deleted is Terminating.
    cJSON_Delete (s_send (&sim, "DELETE", "/api/v1/namespaces/default/pods/bound", NULL,
                          "{\"gracePeriodSeconds\":600}", 200));
    t = s_get_as (&sim, "/api/v1/namespaces/default/pods/bound", S_TABLE_ACCEPT, 200);
    assert_string_equal (s_str (t, "rows.0.cells.2"), "Terminating");
    cJSON_Delete (t);

    //  Nodes: Ready and cordoned, roles from both kinds of label, the
    //  addresses and node info of -o wide.
    t = s_get_as (&sim, "/api/v1/nodes", S_TABLE_ACCEPT, 200);
    assert_string_equal (s_table_columns (t, cols, sizeof cols),
                         "Name,Status,Roles,Age,Version,Internal-IP*,External-IP*,OS-Image*,"
                         "Kernel-Version*,Container-Runtime*");
    s_table_cells (t, 0, cells, sizeof cells);
    if (!strstr (cells, "[\"n1\",\"Ready,SchedulingDisabled\",\"control-plane,gpu\",\"") ||
        !strstr (cells, "\",\"v1.31.6\",\"10.0.0.1\",\"<none>\",\"Debian GNU/Linux 12\","
                        "\"<unknown>\",\"<unknown>\"]"))
        fail_msg ("node row: %s", cells);
    cJSON_Delete (t);
    t = s_get_as (&sim, "/api/v1/namespaces", S_TABLE_ACCEPT, 200);
    assert_string_equal (s_table_columns (t, cols, sizeof cols), "Name,Status,Age");
    assert_string_equal (s_str (t, "rows.0.cells.1"), "Active");
    cJSON_Delete (t);

    //  Custom resources: NAME, then the CRD's columns as the CRD file has
    //  them (the apiextensions server adds no AGE unless a CRD has no
    //  columns at all); cells typed as the column says.
    t = s_get_as (&sim, "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups",
                  S_TABLE_ACCEPT, 200);
    assert_string_equal (s_table_columns (t, cols, sizeof cols),
                         "Name,STATUS,minMember,RUNNINGS,AGE,QUEUE*");
    assert_string_equal (s_str (t, "columnDefinitions.4.type"), "date");
    assert_string_equal (s_str (t, "columnDefinitions.1.description"),
                         "Custom resource definition column (in JSONPath format): .status.phase");
    s_table_cells (t, 0, cells, sizeof cells);
    if (!strstr (cells, "[\"pg1\",\"Running\",2,2,\"") || !strstr (cells, "s\",\"q1\"]"))
        fail_msg ("podgroup row: %s", cells);
    cJSON_Delete (t);
    t = s_get_as (&sim, "/apis/scheduling.volcano.sh/v1beta1/queues", S_TABLE_ACCEPT, 200);
    assert_string_equal (s_table_columns (t, cols, sizeof cols), "Name,PARENT");
    assert_string_equal (s_table_cells (t, 0, cells, sizeof cells), "[\"q1\",\"root\"]");
    cJSON_Delete (t);
    //  A kind without a printer: the generic store's Name and Created At.
    t = s_get_as (&sim, "/apis/scheduling.k8s.io/v1/priorityclasses", S_TABLE_ACCEPT, 200);
    assert_string_equal (s_table_columns (t, cols, sizeof cols), "Name,Created At");
    assert_string_equal (s_str (t, "columnDefinitions.1.type"), "date");
    assert_string_equal (s_str (t, "rows.0.cells.0"), "system-cluster-critical");
    assert_int_equal (strlen (s_str (t, "rows.0.cells.1")), 20); // 2024-01-02T03:04:05Z
    cJSON_Delete (t);

    //  A watch asked for as a Table (kubectl get -w): each event's object
    //  is a Table of one row, the columns with it.
    s_watch_t *w = s_watch_start (&sim, "/api/v1/namespaces/default/pods?watch=1");
    curl_multi_remove_handle (w->multi, w->easy);
    struct curl_slist *accept = curl_slist_append (NULL, "Accept: " S_TABLE_ACCEPT);
    curl_easy_setopt (w->easy, CURLOPT_HTTPHEADER, accept);
    curl_multi_add_handle (w->multi, w->easy);
    s_watch_wait_lines (w, 3); // the three pods, ADDED
    cJSON_Delete (
        s_send (&sim, "DELETE", "/api/v1/namespaces/default/pods/waiting", NULL, NULL, 200));
    s_watch_wait_lines (w, 4);
    cJSON *ev = s_watch_event (w, 3);
    assert_string_equal (s_str (ev, "type"), "MODIFIED");
    assert_string_equal (s_str (ev, "object.kind"), "Table");
    assert_string_equal (s_str (ev, "object.columnDefinitions.2.name"), "Status");
    assert_string_equal (s_str (ev, "object.rows.0.cells.0"), "waiting");
    assert_string_equal (s_str (ev, "object.rows.0.object.metadata.name"), "waiting");
    assert_non_null (s_str (ev, "object.rows.0.object.metadata.deletionTimestamp"));
    cJSON_Delete (ev);
    s_watch_destroy (&w);
    curl_slist_free_all (accept);
    s_stop (&sim);
}

// ---------------------------------------------------------------------------
// dryRun

//  The list's resourceVersion of a path.
static unsigned long long
s_list_rv (s_sim_t *sim, const char *path)
{
    cJSON *list = s_get_json (sim, path, 200);
    unsigned long long rv = s_rv (list);
    cJSON_Delete (list);
    return rv;
}

//  dryRun=All on every write: validated as the write (same errors),
//  answered with what would be stored, nothing stored, no resourceVersion
//  used, no watch event. Other values: the 422 of ValidateDryRun.
static void
test_dry_run (void **state)
{
    (void)state;
    s_sim_t sim = {0};
    sim.dir = util_tmpdir ("apisim");
    s_write (s_path (&sim, "objects.yaml"),
             "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n"
             "  - name: c\n    image: x\n"
             "---\n"
             "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata:\n  name: q1\n"
             "spec:\n  weight: 1\n");
    const char *args[] = {"--load", s_path (&sim, "objects.yaml"), NULL};
    s_start_in (&sim, args);
    const char *pods = "/api/v1/namespaces/default/pods";
    const char *pod = "/api/v1/namespaces/default/pods/p";
    const char *queue = "/apis/scheduling.volcano.sh/v1beta1/queues/q1";
    unsigned long long rv0 = s_list_rv (&sim, pods);
    char from[256];
    snprintf (from, sizeof from, "%s?watch=1&resourceVersion=%llu", pods, rv0);
    s_watch_t *w = s_watch_start (&sim, from);
    s_watch_pump (w, 50);
    cJSON *before = s_get_json (&sim, pod, 200);

    //  create: the object as stored (uid, creationTimestamp, defaults),
    //  without a resourceVersion; not there afterwards.
    const char *new_pod = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"n\"},"
                          "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}";
    cJSON *made =
        s_send (&sim, "POST", "/api/v1/namespaces/default/pods?dryRun=All", NULL, new_pod, 201);
    assert_string_equal (s_str (made, "metadata.name"), "n");
    assert_non_null (s_str (made, "metadata.uid"));
    assert_non_null (s_str (made, "metadata.creationTimestamp"));
    assert_null (s_at (made, "metadata.resourceVersion"));
    assert_string_equal (s_str (made, "spec.schedulerName"), "default-scheduler");
    assert_string_equal (s_str (made, "status.phase"), "Pending");
    cJSON_Delete (made);
    assert_int_equal (s_req (&sim, "GET", "/api/v1/namespaces/default/pods/n", NULL, NULL, NULL),
                      404);
    //  … with the errors of a real create.
    char *real = NULL, *dry = NULL;
    const char *bad = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"b\"},"
                      "\"spec\":{\"containers\":[]}}";
    assert_int_equal (
        s_req (&sim, "POST", "/api/v1/namespaces/default/pods?dryRun=All", NULL, bad, &dry), 422);
    assert_int_equal (s_req (&sim, "POST", pods, NULL, bad, &real), 422);
    assert_string_equal (dry, real);
    free (dry);
    free (real);
    cJSON_Delete (s_send (&sim, "POST", "/api/v1/namespaces/default/pods?dryRun=All", NULL,
                          "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},"
                          "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}",
                          409));

    //  patch and update (and a /status): the result at the current
    //  resourceVersion; the stored object unchanged.
    cJSON *patched =
        s_send (&sim, "PATCH", "/api/v1/namespaces/default/pods/p?dryRun=All",
                "application/merge-patch+json", "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}", 200);
    assert_string_equal (s_str (patched, "metadata.labels.a"), "b");
    assert_string_equal (s_str (patched, "metadata.resourceVersion"),
                         s_str (before, "metadata.resourceVersion"));
    cJSON_Delete (patched);
    cJSON *q = s_get_json (&sim, queue, 200);
    cJSON_ReplaceItemInObject (cJSON_GetObjectItem (q, "spec"), "weight", cJSON_CreateNumber (9));
    char *text = cJSON_PrintUnformatted (q);
    cJSON *updated = s_send (
        &sim, "PUT", "/apis/scheduling.volcano.sh/v1beta1/queues/q1?dryRun=All", NULL, text, 200);
    assert_int_equal (s_at (updated, "spec.weight")->valueint, 9);
    cJSON_Delete (updated);
    free (text);
    cJSON_Delete (q);
    cJSON_Delete (
        s_send (&sim, "PATCH", "/apis/scheduling.volcano.sh/v1beta1/queues/q1/status?dryRun=All",
                "application/merge-patch+json", "{\"status\":{\"state\":\"Closed\"}}", 200));
    q = s_get_json (&sim, queue, 200);
    assert_int_equal (s_at (q, "spec.weight")->valueint, 1);
    assert_null (s_at (q, "status.state"));
    cJSON_Delete (q);

    //  binding and eviction: Success, and the pod as it was.
    const char *binding = "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":"
                          "\"p\"},\"target\":{\"kind\":\"Node\",\"name\":\"n1\"}}";
    cJSON_Delete (s_send (&sim, "POST", "/api/v1/namespaces/default/pods/p/binding?dryRun=All",
                          NULL, binding, 201));
    cJSON_Delete (s_send (&sim, "POST", "/api/v1/namespaces/default/pods/p/eviction?dryRun=All",
                          NULL,
                          "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":"
                          "{\"name\":\"p\"}}",
                          201));
    cJSON_Delete (s_send (&sim, "POST", "/api/v1/namespaces/default/pods/p/eviction", NULL,
                          "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":"
                          "{\"name\":\"p\"},\"deleteOptions\":{\"dryRun\":[\"All\"]}}",
                          201));

    //  delete (dryRun in the query or in DeleteOptions, as kubectl sends
    //  it) and deletecollection: the state the delete would write.
    cJSON *gone =
        s_send (&sim, "DELETE", "/api/v1/namespaces/default/pods/p?dryRun=All", NULL, NULL, 200);
    assert_non_null (s_str (gone, "metadata.deletionTimestamp"));
    cJSON_Delete (gone);
    cJSON_Delete (s_send (&sim, "DELETE", pod, NULL,
                          "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"dryRun\":[\"All\"]}",
                          200));
    cJSON_Delete (
        s_send (&sim, "DELETE", "/api/v1/namespaces/default/pods?dryRun=All", NULL, NULL, 200));
    cJSON_Delete (s_send (&sim, "DELETE",
                          "/apis/scheduling.volcano.sh/v1beta1/queues/q1?dryRun=All", NULL, NULL,
                          200));
    cJSON *after = s_get_json (&sim, pod, 200);
    assert_true (cJSON_Compare (before, after, true));
    cJSON_Delete (after);
    cJSON_Delete (before);
    assert_int_equal (s_req (&sim, "GET", queue, NULL, NULL, NULL), 200);

    //  Any other value: 422 on the verb's options, nothing done.
    char *body = NULL;
    assert_int_equal (
        s_req (&sim, "POST", "/api/v1/namespaces/default/pods?dryRun=Bogus", NULL, new_pod, &body),
        422);
    assert_string_equal (
        body, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
              "\"message\":\"CreateOptions.meta.k8s.io \\\"\\\" is invalid: dryRun: Unsupported "
              "value: []string{\\\"Bogus\\\"}: supported values: \\\"All\\\"\",\"reason\":"
              "\"Invalid\",\"details\":{\"group\":\"meta.k8s.io\",\"kind\":\"CreateOptions\","
              "\"causes\":[{\"reason\":\"FieldValueNotSupported\",\"message\":\"Unsupported "
              "value: []string{\\\"Bogus\\\"}: supported values: \\\"All\\\"\",\"field\":"
              "\"dryRun\"}]},\"code\":422}\n");
    free (body);
    cJSON *st = s_send (&sim, "PATCH", "/api/v1/namespaces/default/pods/p?dryRun=all",
                        "application/merge-patch+json", "{}", 422);
    assert_string_equal (s_str (st, "details.kind"), "PatchOptions");
    cJSON_Delete (st);
    st = s_send (&sim, "DELETE", pod, NULL, "{\"dryRun\":[\"All\",\"x\"]}", 422);
    assert_string_equal (s_str (st, "message"),
                         "DeleteOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: "
                         "[]string{\"All\", \"x\"}: supported values: \"All\"");
    cJSON_Delete (st);
    assert_int_equal (s_req (&sim, "GET", "/api/v1/namespaces/default/pods/n", NULL, NULL, NULL),
                      404);

    //  No resourceVersion was used and the watch saw nothing; a real write
    //  after it is seen.
    assert_int_equal (s_list_rv (&sim, pods), rv0);
    s_watch_pump (w, 100);
    assert_int_equal (s_watch_lines (w), 0);
    cJSON_Delete (s_send (&sim, "POST", pods, NULL, new_pod, 201));
    s_watch_wait_lines (w, 1);
    s_watch_destroy (&w);
    s_stop (&sim);
}

// ---------------------------------------------------------------------------
// The simulator serves every kind Basalt reads (a row of bas_k8s's kind
// table without a resource here would leave its informer failing)

static void
test_serves_every_kind (void **state)
{
    (void)state;
    for (size_t i = 0; i < bas_kind_count (); i++) {
        const bas_kind_t *k = bas_kind_at (i);
        const sim_kind_t *sk = sim_kind_by_kind (k->group_version, k->name);
        if (!sk)
            fail_msg ("the simulator does not serve %s %s", k->group_version, k->name);
        assert_string_equal (sk->resource, k->resource);
        assert_int_equal (sk->namespaced, k->namespaced);
    }
}

int
main (void)
{
    curl_global_init (CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_serves_every_kind),
        cmocka_unit_test_teardown (test_flags, s_teardown),
        cmocka_unit_test_teardown (test_load_errors, s_teardown),
        cmocka_unit_test_teardown (test_load_and_list, s_teardown),
        cmocka_unit_test_teardown (test_discovery, s_teardown),
        cmocka_unit_test_teardown (test_errors, s_teardown),
        cmocka_unit_test_teardown (test_create_and_get, s_teardown),
        cmocka_unit_test_teardown (test_update_conflict, s_teardown),
        cmocka_unit_test_teardown (test_patch, s_teardown),
        cmocka_unit_test_teardown (test_delete_preconditions, s_teardown),
        cmocka_unit_test_teardown (test_binding, s_teardown),
        cmocka_unit_test_teardown (test_no_run_delay, s_teardown),
        cmocka_unit_test_teardown (test_status_subresources, s_teardown),
        cmocka_unit_test_teardown (test_paging, s_teardown),
        cmocka_unit_test_teardown (test_selectors, s_teardown),
        cmocka_unit_test_teardown (test_watch_events, s_teardown),
        cmocka_unit_test_teardown (test_leases, s_teardown),
        cmocka_unit_test_teardown (test_deploy_kinds, s_teardown),
        cmocka_unit_test_teardown (test_watch_expired, s_teardown),
        cmocka_unit_test_teardown (test_watch_bookmarks_and_timeout, s_teardown),
        cmocka_unit_test_teardown (test_watch_clients_come_and_go, s_teardown),
        cmocka_unit_test_teardown (test_sigint, s_teardown),
        cmocka_unit_test_teardown (test_big_list, s_teardown),
        cmocka_unit_test_teardown (test_tables, s_teardown),
        cmocka_unit_test_teardown (test_dry_run, s_teardown),
    };
    int rc = cmocka_run_group_tests (tests, NULL, NULL);
    curl_global_cleanup ();
    return rc;
}
