/*  test_apisim_valid: what the simulator refuses before it stores an
    object, as kube-apiserver does: a namespace that does not exist (404
    NotFound, the NamespaceLifecycle admission plugin), a built-in object
    that fails validation (422 Invalid: metadata.name not a lowercase RFC
    1123 subdomain, a pod without containers), and a custom resource that
    does not satisfy its CRD's openAPIV3Schema (422 with the message of
    kube-apiserver's structural schema validation), which also prunes
    unknown fields and fills defaults.

    Every test starts the real basalt-apisim (its own port) and talks HTTP.
    The CRD checks read the CRD manifest of the shared fixtures themselves
    and compare the simulator's messages with what that schema says (its
    pattern, its enum, its default), so a hand-written copy of the schema
    in the simulator would fail here as soon as it drifted.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bas_yaml.h"
#include "test_apisim_util.h"

#define PODS "/api/v1/namespaces/default/pods"
#define PGS "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups"
#define HYPERNODES "/apis/topology.volcano.sh/v1alpha1/hypernodes"
#define QUEUES "/apis/scheduling.volcano.sh/v1beta1/queues"
#define POD_BODY(name)                                                                             \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"" name "\"},"                \
    "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}]}}"
#define SUBDOMAIN_MSG                                                                              \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "   \
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "  \
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"

//  POST; asserts the code; returns the body (caller frees).
static char *
s_post (s_sim_t *sim, const char *path, const char *body, long want)
{
    char *out = NULL;
    long code = s_req (sim, "POST", path, NULL, body, &out);
    if (code != want)
        fail_msg ("POST %s: code %ld, want %ld; body %s", path, code, want, out ? out : "");
    return out;
}

//  The message of a Status body.
static void
s_expect_message (const char *body, const char *want)
{
    cJSON *st = cJSON_Parse (body);
    assert_non_null (st);
    const char *msg = s_str (st, "message");
    if (!msg || strcmp (msg, want) != 0)
        fail_msg ("message\n  %s\nwant\n  %s", msg ? msg : "(none)", want);
    cJSON_Delete (st);
}

//  The openAPIV3Schema node at `path` (dotted, below the root) of a CRD
//  manifest in the shared fixtures (owned by the caller's tree *doc_p).
static const cJSON *
s_crd_schema (const char *file, const char *path, cJSON **doc_p)
{
    char *text = s_fixture (file);
    char err[256];
    *doc_p = bas_yaml_to_json (text, strlen (text), err, sizeof err);
    free (text);
    assert_non_null (*doc_p);
    const cJSON *v = cJSON_GetArrayItem (s_at (*doc_p, "spec.versions"), 0);
    const cJSON *node = s_at (v, "schema.openAPIV3Schema");
    assert_non_null (node);
    return s_at (node, path);
}

// ---------------------------------------------------------------------------

static void
test_namespace_admission (void **state)
{
    (void)state;
    s_sim_t sim;
    s_start (&sim, NULL);
    char *body = s_post (&sim, "/api/v1/namespaces/team-x/pods", POD_BODY ("p"), 404);
    assert_string_equal (body, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                               "\"status\":\"Failure\",\"message\":\"namespaces \\\"team-x\\\" not "
                               "found\",\"reason\":\"NotFound\",\"details\":{\"name\":\"team-x\","
                               "\"kind\":\"namespaces\"},\"code\":404}\n");
    free (body);
    //  A custom resource too; the details name the core resource, no group.
    body = s_post (&sim, "/apis/scheduling.volcano.sh/v1beta1/namespaces/team-x/podgroups",
                   "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\","
                   "\"metadata\":{\"name\":\"pg\"},\"spec\":{\"minMember\":1}}",
                   404);
    assert_null (strstr (body, "\"group\""));
    s_expect_message (body, "namespaces \"team-x\" not found");
    free (body);
    //  Nothing was created on the way, the namespace included.
    assert_int_equal (util_http_get (sim.port, "/api/v1/namespaces/team-x", NULL), 404);
    assert_int_equal (util_http_get (sim.port, "/api/v1/namespaces/team-x/pods/p", NULL), 404);
    s_ensure_namespace (&sim, "team-x");
    free (s_post (&sim, "/api/v1/namespaces/team-x/pods", POD_BODY ("p"), 201));
    s_stop (&sim);

    //  A cluster loaded from files has the namespaces its objects use, as
    //  a real cluster has them, and its custom resources read with their
    //  CRD's defaults (as the apiextensions server reads them).
    memset (&sim, 0, sizeof sim);
    sim.dir = util_tmpdir ("apisim-valid");
    s_write (s_path (&sim, "pods.yaml"),
             "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  namespace: loaded\n"
             "spec:\n  containers:\n  - name: c\n    image: x\n---\n"
             "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata:\n"
             "  name: pg\n  namespace: loaded\nspec:\n  minMember: 1\n");
    const char *args[] = {"--load", s_path (&sim, "pods.yaml"), NULL};
    s_start_in (&sim, args);
    assert_int_equal (util_http_get (sim.port, "/api/v1/namespaces/loaded", NULL), 200);
    free (s_post (&sim, "/api/v1/namespaces/loaded/pods", POD_BODY ("b"), 201));
    cJSON *pg = s_get_json (
        &sim, "/apis/scheduling.volcano.sh/v1beta1/namespaces/loaded/podgroups/pg", 200);
    assert_string_equal (s_str (pg, "spec.queue"), "default");
    cJSON_Delete (pg);
    s_stop (&sim);
}

static void
test_builtin_validation (void **state)
{
    (void)state;
    s_sim_t sim;
    s_start (&sim, NULL);
    //  The pod: a bad name and no containers. Both errors, in
    //  ValidatePod's order (metadata first), one cause each.
    char *body = s_post (&sim, PODS,
                         "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
                         "\"Bad_Name\"},\"spec\":{}}",
                         422);
    s_expect_message (body, "Pod \"Bad_Name\" is invalid: [metadata.name: Invalid value: "
                            "\"Bad_Name\": " SUBDOMAIN_MSG ", spec.containers: Required value]");
    cJSON *st = cJSON_Parse (body);
    assert_string_equal (s_str (st, "reason"), "Invalid");
    assert_string_equal (s_str (st, "details.kind"), "Pod");
    assert_string_equal (s_str (st, "details.name"), "Bad_Name");
    assert_string_equal (s_str (st, "details.causes.0.reason"), "FieldValueInvalid");
    assert_string_equal (s_str (st, "details.causes.0.field"), "metadata.name");
    assert_string_equal (s_str (st, "details.causes.1.reason"), "FieldValueRequired");
    assert_string_equal (s_str (st, "details.causes.1.field"), "spec.containers");
    assert_string_equal (s_str (st, "details.causes.1.message"), "Required value");
    cJSON_Delete (st);
    free (body);
    //  One error alone is not in brackets.
    body = s_post (&sim, PODS,
                   "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"ok\"},"
                   "\"spec\":{\"containers\":[]}}",
                   422);
    s_expect_message (body, "Pod \"ok\" is invalid: spec.containers: Required value");
    free (body);
    //  Containers: names are labels and unique, an image is required.
    body = s_post (&sim, PODS,
                   "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"c\"},"
                   "\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"x\"},{\"name\":\"a\","
                   "\"image\":\"x\"},{\"name\":\"b.c\"}]}}",
                   422);
    s_expect_message (body, "Pod \"c\" is invalid: [spec.containers[1].name: Duplicate value: "
                            "\"a\", spec.containers[2].name: Invalid value: \"b.c\": must not "
                            "contain dots, spec.containers[2].image: Required value]");
    free (body);
    //  generateName is checked as a prefix (a trailing '-' is fine).
    body = s_post (&sim, PODS,
                   "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"generateName\":"
                   "\"Job_\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}",
                   422);
    assert_non_null (strstr (body, "metadata.generateName: Invalid value: \\\"Job_\\\": "));
    free (body);
    free (s_post (&sim, PODS,
                  "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"generateName\":"
                  "\"job-\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}",
                  201));
    //  Other kinds: a node's name is a subdomain, a namespace's a label.
    body = s_post (&sim, "/api/v1/nodes",
                   "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"Node_1\"}}",
                   422);
    s_expect_message (body, "Node \"Node_1\" is invalid: metadata.name: Invalid value: "
                            "\"Node_1\": " SUBDOMAIN_MSG);
    free (body);
    body = s_post (&sim, "/api/v1/namespaces",
                   "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":"
                   "\"team.a\"}}",
                   422);
    s_expect_message (body, "Namespace \"team.a\" is invalid: metadata.name: Invalid value: "
                            "\"team.a\": must not contain dots");
    free (body);
    char name[300], json[600];
    memset (name, 'a', 254);
    name[254] = 0;
    snprintf (json, sizeof json,
              "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\","
              "\"metadata\":{\"name\":\"%s\"},\"value\":1}",
              name);
    body = s_post (&sim, "/apis/scheduling.k8s.io/v1/priorityclasses", json, 422);
    assert_non_null (strstr (body, "must be no more than 253 characters"));
    free (body);
    //  Nothing invalid was stored.
    assert_int_equal (util_http_get (sim.port, PODS "/Bad_Name", NULL), 404);
    assert_int_equal (util_http_get (sim.port, "/api/v1/nodes/Node_1", NULL), 404);
    s_stop (&sim);
}

static void
test_crd_validation (void **state)
{
    (void)state;
    s_sim_t sim;
    s_start (&sim, NULL);
    //  The PodGroup: kube-apiserver's structural-schema message.
    char *body = s_post (&sim, PGS,
                         "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\","
                         "\"metadata\":{\"name\":\"pg\"},\"spec\":{\"minMember\":\"two\"}}",
                         422);
    s_expect_message (body, "PodGroup.scheduling.volcano.sh \"pg\" is invalid: spec.minMember: "
                            "Invalid value: \"string\": spec.minMember in body must be of type "
                            "integer: \"string\"");
    cJSON *st = cJSON_Parse (body);
    assert_string_equal (s_str (st, "details.group"), "scheduling.volcano.sh");
    assert_string_equal (s_str (st, "details.kind"), "PodGroup");
    assert_string_equal (s_str (st, "details.causes.0.reason"), "FieldValueTypeInvalid");
    assert_string_equal (s_str (st, "details.causes.0.field"), "spec.minMember");
    cJSON_Delete (st);
    free (body);
    assert_int_equal (util_http_get (sim.port, PGS "/pg", NULL), 404);

    //  The schema's own bounds, pattern and types: the pattern in the
    //  message is the one in the CRD manifest.
    cJSON *crd = NULL;
    const cJSON *queue = s_crd_schema ("crds/scheduling.volcano.sh_podgroups.yaml",
                                       "properties.spec.properties.queue", &crd);
    const char *pattern = s_str (queue, "pattern");
    assert_non_null (pattern);
    body = s_post (&sim, PGS,
                   "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\","
                   "\"metadata\":{\"name\":\"PG\"},\"spec\":{\"minMember\":-1,\"queue\":\"Q_1\","
                   "\"minResources\":{\"cpu\":true,\"memory\":\"1Gi\"}}}",
                   422);
    st = cJSON_Parse (body);
    char *text = cJSON_PrintUnformatted (cJSON_GetObjectItem (st, "details"));
    //  metadata first (ObjectMeta), then the schema.
    assert_string_equal (s_str (st, "details.causes.0.field"), "metadata.name");
    char want[1024];
    snprintf (want, sizeof want, "spec.queue in body should match '%s'", pattern);
    assert_non_null (strstr (s_str (st, "message"), want));
    assert_non_null (strstr (s_str (st, "message"),
                             "spec.minMember: Invalid value: -1: spec.minMember in body should be "
                             "greater than or equal to 0"));
    assert_non_null (strstr (s_str (st, "message"),
                             "spec.minResources.cpu: Invalid value: \"boolean\": "
                             "spec.minResources.cpu in body must be of type integer,string: "
                             "\"boolean\""));
    //  memory is a valid quantity: no error for it.
    assert_null (strstr (text, "spec.minResources.memory"));
    free (text);
    cJSON_Delete (st);
    free (body);
    cJSON_Delete (crd);

    //  Accepted: unknown fields pruned, defaults filled in (the CRD's).
    cJSON *pg = s_send (&sim, "POST", PGS, NULL,
                        "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\","
                        "\"metadata\":{\"name\":\"pg\"},\"spec\":{\"minMember\":2,\"bogus\":1,"
                        "\"minResources\":{\"cpu\":\"2\",\"memory\":4096}},\"extra\":{}}",
                        201);
    crd = NULL;
    const cJSON *dflt = s_crd_schema ("crds/scheduling.volcano.sh_podgroups.yaml",
                                      "properties.spec.properties.queue.default", &crd);
    assert_true (cJSON_IsString (dflt));
    assert_string_equal (s_str (pg, "spec.queue"), dflt->valuestring);
    cJSON_Delete (crd);
    assert_null (s_at (pg, "spec.bogus"));
    assert_null (s_at (pg, "extra"));
    assert_non_null (s_str (pg, "metadata.uid"));
    cJSON_Delete (pg);

    //  Updates are validated too: an invalid patch changes nothing.
    body = NULL;
    assert_int_equal (s_req (&sim, "PATCH", PGS "/pg", "application/merge-patch+json",
                             "{\"spec\":{\"minMember\":\"three\"}}", &body),
                      422);
    s_expect_message (body, "PodGroup.scheduling.volcano.sh \"pg\" is invalid: spec.minMember: "
                            "Invalid value: \"string\": spec.minMember in body must be of type "
                            "integer: \"string\"");
    free (body);
    pg = s_get_json (&sim, PGS "/pg", 200);
    assert_int_equal (cJSON_GetObjectItem (s_at (pg, "spec"), "minMember")->valueint, 2);
    cJSON_Delete (pg);
    //  A status with a phase the enum does not have.
    assert_int_equal (s_req (&sim, "PATCH", PGS "/pg", "application/merge-patch+json",
                             "{\"status\":{\"phase\":\"Sleeping\"}}", &body),
                      422);
    assert_non_null (strstr (body, "status.phase: Unsupported value: \\\"Sleeping\\\": "
                                   "supported values: \\\"Pending\\\", \\\"Running\\\", "
                                   "\\\"Unknown\\\", \\\"Inqueue\\\", \\\"Completed\\\""));
    free (body);

    //  Queues: bounds, enum and defaults; the /status subresource is
    //  validated against the same schema.
    body = s_post (&sim, QUEUES,
                   "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"Queue\","
                   "\"metadata\":{\"name\":\"q\"},\"spec\":{\"weight\":70000}}",
                   422);
    s_expect_message (body, "Queue.scheduling.volcano.sh \"q\" is invalid: spec.weight: Invalid "
                            "value: 70000: spec.weight in body should be less than or equal to "
                            "65535");
    free (body);
    cJSON *q = s_send (&sim, "POST", QUEUES, NULL,
                       "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"Queue\","
                       "\"metadata\":{\"name\":\"q\"},\"spec\":{\"reclaimable\":true}}",
                       201);
    assert_int_equal (cJSON_GetObjectItem (s_at (q, "spec"), "weight")->valueint, 1);
    assert_string_equal (s_str (q, "spec.dequeueStrategy"), "traverse");
    cJSON_Delete (q);
    assert_int_equal (s_req (&sim, "PATCH", QUEUES "/q/status", "application/merge-patch+json",
                             "{\"status\":{\"state\":\"Sleeping\",\"running\":-2}}", &body),
                      422);
    assert_non_null (strstr (body, "status.state: Unsupported value: \\\"Sleeping\\\""));
    assert_non_null (strstr (body, "status.running in body should be greater than or equal "
                                   "to 0"));
    free (body);
    cJSON_Delete (s_send (&sim, "PATCH", QUEUES "/q/status", "application/merge-patch+json",
                          "{\"status\":{\"state\":\"Open\",\"running\":2}}", 200));

    //  HyperNodes, against Volcano's CRD (tests/fixtures/crds): tier is
    //  required and at least 0; a member's type is Node or HyperNode.
    body = s_post (&sim, HYPERNODES,
                   "{\"apiVersion\":\"topology.volcano.sh/v1alpha1\",\"kind\":\"HyperNode\","
                   "\"metadata\":{\"name\":\"rack-0\"},\"spec\":{\"members\":[{\"type\":\"Node\","
                   "\"selector\":{\"exactMatch\":{\"name\":\"n1\"}}}]}}",
                   422);
    s_expect_message (
        body, "HyperNode.topology.volcano.sh \"rack-0\" is invalid: spec.tier: Required value");
    free (body);
    body = s_post (&sim, HYPERNODES,
                   "{\"apiVersion\":\"topology.volcano.sh/v1alpha1\",\"kind\":\"HyperNode\","
                   "\"metadata\":{\"name\":\"rack-0\"},\"spec\":{\"tier\":-1,\"members\":[{"
                   "\"type\":\"Rack\",\"selector\":{\"exactMatch\":{\"name\":\"n1\"}}}]}}",
                   422);
    assert_non_null (strstr (body, "spec.tier in body should be greater than or equal to 0"));
    assert_non_null (strstr (body, "Unsupported value: \\\"Rack\\\""));
    free (body);
    cJSON *hn = s_send (&sim, "POST", HYPERNODES, NULL,
                        "{\"apiVersion\":\"topology.volcano.sh/v1alpha1\",\"kind\":\"HyperNode\","
                        "\"metadata\":{\"name\":\"rack-0\"},\"spec\":{\"tier\":1,\"members\":[{"
                        "\"type\":\"Node\",\"selector\":{\"exactMatch\":{\"name\":\"n1\"}}}]}}",
                        201);
    assert_int_equal (cJSON_GetObjectItem (s_at (hn, "spec"), "tier")->valueint, 1);
    cJSON_Delete (hn);
    s_stop (&sim);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown (test_namespace_admission, s_teardown),
        cmocka_unit_test_teardown (test_builtin_validation, s_teardown),
        cmocka_unit_test_teardown (test_crd_validation, s_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
