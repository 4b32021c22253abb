/*  test_k8s: real Kubernetes and Volcano objects (shared/k8s-fixtures)
    decoded into Basalt's wire objects, and bad objects rejected with a
    message that names the object and the field.

    Expected values were read off the fixture files by hand; the sums in
    pod.json: containers vsystem (500m, 256Mi) + auth (200m, 128Mi), an init
    container with no resources: 700m and 384Mi.
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
#include "bas_resource.h"

#define FIXTURES BASALT_SHARED_DIR "/k8s-fixtures/"

#define OWN_FIXTURES BASALT_SOURCE_DIR "/tests/fixtures/"

//  Parse a fixture file (relative to the shared fixtures, or with a "./"
//  prefix to Basalt's own in tests/fixtures/); fails the test if it cannot
//  be read.
static cJSON *
s_load (const char *relpath)
{
    char path[512];
    if (strncmp (relpath, "./", 2) == 0)
        snprintf (path, sizeof path, "%s%s", OWN_FIXTURES, relpath + 2);
    else
        snprintf (path, sizeof path, "%s%s", FIXTURES, relpath);
    FILE *f = fopen (path, "rb");
    if (!f)
        print_error ("cannot open %s\n", path);
    assert_non_null (f);
    fseek (f, 0, SEEK_END);
    long n = ftell (f);
    fseek (f, 0, SEEK_SET);
    char *text = malloc ((size_t)n + 1);
    assert_non_null (text);
    assert_int_equal (fread (text, 1, (size_t)n, f), (size_t)n);
    text[n] = '\0';
    fclose (f);
    cJSON *json = cJSON_Parse (text);
    free (text);
    assert_non_null (json);
    return json;
}

//  Parse inline JSON.
static cJSON *
s_json (const char *text)
{
    cJSON *json = cJSON_Parse (text);
    if (!json)
        print_error ("bad test JSON: %s\n", text);
    assert_non_null (json);
    return json;
}

//  The wire resources as a vector.
static bas_res_t
s_res (const Basalt__V1__Resources *p)
{
    bas_res_t r;
    char err[256];
    assert_int_equal (bas_res_from_proto (&r, p, err, sizeof err), 0);
    return r;
}

//  Value of key in a KeyValue list, or NULL.
static const char *
s_kv (Basalt__V1__KeyValue **kvs, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp (kvs[i]->key, key) == 0)
            return kvs[i]->value;
    return NULL;
}

//  Pack and unpack a message: the decoded message is a valid one.
static void
s_wire_check (const ProtobufCMessage *msg)
{
    size_t len = protobuf_c_message_get_packed_size (msg);
    uint8_t *buf = malloc (len + 1);
    assert_non_null (buf);
    assert_int_equal (protobuf_c_message_pack (msg, buf), len);
    ProtobufCMessage *back = protobuf_c_message_unpack (msg->descriptor, NULL, len, buf);
    assert_non_null (back);
    protobuf_c_message_free_unpacked (back, NULL);
    free (buf);
}

static void
test_pod_fixture (void **state)
{
    (void)state;
    cJSON *json = s_load ("objects/pod.json");
    char err[512] = "";
    Basalt__V1__Pod *pod = bas_k8s_pod_from_json (json, err, sizeof err);
    if (!pod)
        print_error ("%s\n", err);
    assert_non_null (pod);
    assert_string_equal (pod->uid, "0ebe8b8b-5449-4a41-bea5-9884e89f66d8");
    assert_string_equal (pod->namespace_, "di-288312");
    assert_string_equal (pod->name, "vsystem-867f4b77cc-pqcns");
    assert_string_equal (pod->resource_version, "970028273");
    assert_string_equal (pod->node_name, "pvx510.wdf.sap.corp");
    assert_string_equal (pod->phase, "Pending");
    assert_string_equal (pod->scheduler_name, "default-scheduler");
    assert_null (pod->group);
    assert_null (pod->task_role);
    assert_null (pod->queue_annotation);
    assert_null (pod->preemptable);
    assert_null (pod->min_member_annotation);
    assert_null (pod->priority_class_name);
    assert_int_equal (pod->n_volcano_annotations, 0);
    assert_true (pod->has_priority);
    assert_int_equal (pod->priority, 0);
    assert_true (pod->has_creation_time_ms);
    assert_true (pod->creation_time_ms == 1711449839000LL); // 2024-03-26T10:43:59Z
    assert_true (pod->has_deleting);
    assert_false (pod->deleting);
    //  Owner: the controller ReplicaSet.
    assert_non_null (pod->owner);
    assert_string_equal (pod->owner->kind, "ReplicaSet");
    assert_string_equal (pod->owner->name, "vsystem-867f4b77cc");
    assert_string_equal (pod->owner->uid, "ca82db22-ef61-49db-ad84-35e502375121");
    assert_string_equal (pod->owner->api_version, "apps/v1");
    //  Tolerations and node selector.
    assert_int_equal (pod->n_tolerations, 3);
    assert_string_equal (pod->tolerations[0]->key, "node.kubernetes.io/not-ready");
    assert_string_equal (pod->tolerations[0]->operator_, "Exists");
    assert_string_equal (pod->tolerations[0]->effect, "NoExecute");
    assert_null (pod->tolerations[0]->value);
    assert_string_equal (pod->tolerations[2]->key, "node.kubernetes.io/memory-pressure");
    assert_string_equal (pod->tolerations[2]->effect, "NoSchedule");
    assert_int_equal (pod->n_node_selector, 1);
    assert_string_equal (pod->node_selector[0]->key, "node-role.kubernetes.io/sdi");
    assert_string_equal (pod->node_selector[0]->value, "");
    assert_int_equal (pod->n_affinity_terms, 0);
    assert_null (pod->placement); // no pod terms, ports, spread or preferences
    //  Labels: one line each, sorted by key ("app" < "datahub..." < "pod-..." < "vora-...").
    assert_string_equal (pod->labels, "app=vora\ndatahub.sap.com/app=vsystem\n"
                                      "datahub.sap.com/app-component=vsystem\n"
                                      "pod-template-hash=867f4b77cc\nvora-component=vsystem");
    //  Requests: 500m + 200m, 256Mi + 128Mi; the init container asks nothing.
    bas_res_t r = s_res (pod->requests);
    assert_int_equal (r.milli_cpu, 700);
    assert_true (r.memory == 384LL << 20);
    assert_int_equal (r.pods, 1);
    assert_int_equal (r.nscalars, 0);
    //  Bound (spec.nodeName): no images kept.
    assert_int_equal (pod->n_images, 0);
    assert_null (pod->images);
    s_wire_check (&pod->base);
    protobuf_c_message_free_unpacked (&pod->base, NULL);
    //  The same pod not bound yet: the init container's image first, then
    //  the two containers'; all tagged, so as written.
    cJSON_DeleteItemFromObjectCaseSensitive (cJSON_GetObjectItemCaseSensitive (json, "spec"),
                                             "nodeName");
    pod = bas_k8s_pod_from_json (json, err, sizeof err);
    assert_non_null (pod);
    assert_null (pod->node_name);
    assert_int_equal (pod->n_images, 3);
    assert_string_equal (pod->images[0], "pvx092.wdf.sap.corp/slvi/288312/"
                                         "com.sap.datahub.linuxx86_64/vsystem-hana-init:3.3.30");
    assert_string_equal (pod->images[1], "pvx092.wdf.sap.corp/slvi/288312/"
                                         "com.sap.datahub.linuxx86_64/vsystem:3.3.30");
    assert_string_equal (pod->images[2], "pvx092.wdf.sap.corp/slvi/288312/"
                                         "com.sap.datahub.linuxx86_64/vsystem-auth:3.3.30");
    s_wire_check (&pod->base);
    protobuf_c_message_free_unpacked (&pod->base, NULL);
    cJSON_Delete (json);

    //  A Guaranteed pod from another cluster.
    json = s_load ("objects/pod-running-guaranteed.json");
    pod = bas_k8s_pod_from_json (json, err, sizeof err);
    assert_non_null (pod);
    assert_string_equal (pod->phase, "Running");
    assert_string_equal (pod->owner->name, "nginx-7fb78fb6d8");
    assert_int_equal (pod->n_tolerations, 2);
    r = s_res (pod->requests);
    assert_int_equal (r.milli_cpu, 200);
    assert_int_equal (r.memory, 20 << 20);
    assert_int_equal (pod->n_images, 0); // running on a node
    protobuf_c_message_free_unpacked (&pod->base, NULL);
    cJSON_Delete (json);

    //  A ReplicaSet's metadata decodes the same way: its controller owner.
    json = s_load ("objects/replicaset.json");
    pod = bas_k8s_pod_from_json (json, err, sizeof err);
    assert_non_null (pod);
    assert_string_equal (pod->owner->kind, "Deployment");
    assert_string_equal (pod->owner->uid, "6f6143bc-a5f3-11e9-990f-42010a800218");
    protobuf_c_message_free_unpacked (&pod->base, NULL);
    cJSON_Delete (json);
}

//  Pod labels, pod (anti-)affinity terms and host ports: the
//  documentation's example (a required affinity term, a preferred
//  anti-affinity one), then a pod with every form of required term.
static void
test_pod_affinity (void **state)
{
    (void)state;
    cJSON *json = s_load ("./pod-with-pod-affinity.json");
    char err[512] = "";
    Basalt__V1__Pod *pod = bas_k8s_pod_from_json (json, err, sizeof err);
    if (!pod)
        print_error ("%s\n", err);
    assert_non_null (pod);
    assert_int_equal (pod->placement->n_pod_affinity, 1);
    const Basalt__V1__PodAffinityTerm *t = pod->placement->pod_affinity[0];
    assert_string_equal (t->topology_key, "topology.kubernetes.io/zone");
    assert_non_null (t->label_selector);
    assert_int_equal (t->label_selector->n_match_labels, 0);
    assert_int_equal (t->label_selector->n_match_expressions, 1);
    assert_string_equal (t->label_selector->match_expressions[0]->key, "security");
    assert_string_equal (t->label_selector->match_expressions[0]->operator_, "In");
    assert_int_equal (t->label_selector->match_expressions[0]->n_values, 1);
    assert_string_equal (t->label_selector->match_expressions[0]->values[0], "S1");
    assert_null (t->namespace_selector);
    assert_int_equal (t->n_namespaces, 0);
    assert_int_equal (pod->placement->n_pod_anti_affinity, 0); // preferred only
    assert_int_equal (pod->placement->n_preferred_pod_anti_affinity, 1);
    assert_int_equal (pod->placement->preferred_pod_anti_affinity[0]->weight, 100);
    t = pod->placement->preferred_pod_anti_affinity[0]->term;
    assert_string_equal (t->topology_key, "topology.kubernetes.io/zone");
    assert_string_equal (t->label_selector->match_expressions[0]->values[0], "S2");
    assert_int_equal (pod->placement->n_preferred_pod_affinity, 0);
    assert_int_equal (pod->placement->n_preferred_node_affinity, 0);
    assert_null (pod->labels);
    assert_int_equal (pod->placement->n_host_ports, 0);
    s_wire_check (&pod->base);
    protobuf_c_message_free_unpacked (&pod->base, NULL);
    cJSON_Delete (json);

    json = s_json (
        "{\"metadata\":{\"name\":\"w\",\"namespace\":\"ml\",\"labels\":{\"role\":\"worker\","
        "\"app\":\"mpi\"}},\"spec\":{\"affinity\":{\"podAntiAffinity\":{\"required"
        "DuringSchedulingIgnoredDuringExecution\":[{\"labelSelector\":{\"matchLabels\":"
        "{\"app\":\"mpi\"}},\"topologyKey\":\"kubernetes.io/hostname\"},{\"labelSelector\":"
        "{},\"namespaces\":[\"a\",\"b\"],\"namespaceSelector\":{},\"topologyKey\":\"zone\"}]}},"
        "\"containers\":[{\"name\":\"c\",\"ports\":[{\"containerPort\":80},{\"containerPort\":"
        "8080,\"hostPort\":8080,\"protocol\":\"UDP\",\"hostIP\":\"10.0.0.1\"}]}]}}");
    pod = bas_k8s_pod_from_json (json, err, sizeof err);
    if (!pod)
        print_error ("%s\n", err);
    assert_non_null (pod);
    assert_string_equal (pod->labels, "app=mpi\nrole=worker"); // sorted by key
    assert_int_equal (pod->placement->n_pod_affinity, 0);
    assert_int_equal (pod->placement->n_pod_anti_affinity, 2);
    t = pod->placement->pod_anti_affinity[0];
    assert_string_equal (t->topology_key, "kubernetes.io/hostname");
    assert_string_equal (
        s_kv (t->label_selector->match_labels, t->label_selector->n_match_labels, "app"), "mpi");
    t = pod->placement->pod_anti_affinity[1];
    //  An empty selector is there (selects every pod), unlike an absent one.
    assert_non_null (t->label_selector);
    assert_int_equal (t->label_selector->n_match_labels + t->label_selector->n_match_expressions,
                      0);
    assert_non_null (t->namespace_selector);
    assert_int_equal (t->n_namespaces, 2);
    assert_string_equal (t->namespaces[1], "b");
    assert_int_equal (pod->placement->n_topology_spread, 0);
    assert_int_equal (pod->placement->n_preferred_node_affinity, 0);
    assert_int_equal (pod->placement->n_host_ports,
                      1); // the port without a hostPort asks the node nothing
    assert_int_equal (pod->placement->host_ports[0]->port, 8080);
    assert_string_equal (pod->placement->host_ports[0]->protocol, "UDP");
    assert_string_equal (pod->placement->host_ports[0]->host_ip, "10.0.0.1");
    s_wire_check (&pod->base);
    protobuf_c_message_free_unpacked (&pod->base, NULL);
    cJSON_Delete (json);

    //  A sidecar (an init container with restartPolicy Always) holds its
    //  host ports beside the containers; an ordinary init container has
    //  ended before the pod runs and holds none.
    json = s_json ("{\"metadata\":{\"name\":\"s\",\"namespace\":\"ml\"},\"spec\":{"
                   "\"initContainers\":[{\"name\":\"setup\",\"ports\":[{\"containerPort\":7000,"
                   "\"hostPort\":7000}]},{\"name\":\"proxy\",\"restartPolicy\":\"Always\","
                   "\"ports\":[{\"containerPort\":8001,\"hostPort\":8001}]}],"
                   "\"containers\":[{\"name\":\"c\"}]}}");
    pod = bas_k8s_pod_from_json (json, err, sizeof err);
    if (!pod)
        print_error ("%s\n", err);
    assert_non_null (pod);
    assert_non_null (pod->placement);
    assert_int_equal (pod->placement->n_host_ports, 1);
    assert_int_equal (pod->placement->host_ports[0]->port, 8001);
    s_wire_check (&pod->base);
    protobuf_c_message_free_unpacked (&pod->base, NULL);
    cJSON_Delete (json);
}

//  Preferred node affinity: weights and preferences.
static void
test_pod_preferred (void **state)
{
    (void)state;
    cJSON *json = s_json (
        "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ml\"},\"spec\":{\"affinity\":{"
        "\"nodeAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":"
        "30,\"preference\":{\"matchExpressions\":[{\"key\":\"disk\",\"operator\":\"In\","
        "\"values\":[\"ssd\"]}]}}],\"requiredDuringSchedulingIgnoredDuringExecution\":{"
        "\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":"
        "\"In\",\"values\":[\"n1\"]}]}]}}}}}");
    char err[512] = "";
    Basalt__V1__Pod *pod = bas_k8s_pod_from_json (json, err, sizeof err);
    if (!pod)
        print_error ("%s\n", err);
    assert_non_null (pod);
    assert_int_equal (pod->placement->n_preferred_node_affinity, 1);
    assert_int_equal (pod->placement->preferred_node_affinity[0]->weight, 30);
    assert_string_equal (
        pod->placement->preferred_node_affinity[0]->preference->match_expressions[0]->key, "disk");
    assert_int_equal (pod->n_affinity_terms, 1);
    assert_string_equal (pod->affinity_terms[0]->match_fields[0]->values[0], "n1");
    s_wire_check (&pod->base);
    protobuf_c_message_free_unpacked (&pod->base, NULL);
    cJSON_Delete (json);
}

//  spec.topologySpreadConstraints: every field, and the defaults left absent.
static void
test_pod_spread (void **state)
{
    (void)state;
    cJSON *json = s_json (
        "{\"metadata\":{\"name\":\"s\",\"namespace\":\"ml\"},\"spec\":{\"topologySpread"
        "Constraints\":[{\"maxSkew\":1,\"topologyKey\":\"topology.kubernetes.io/zone\","
        "\"whenUnsatisfiable\":\"DoNotSchedule\",\"labelSelector\":{\"matchLabels\":{\"app\":"
        "\"s\"}},\"minDomains\":3,\"nodeAffinityPolicy\":\"Ignore\",\"nodeTaintsPolicy\":"
        "\"Honor\",\"matchLabelKeys\":[\"pod-template-hash\"]},{\"maxSkew\":2,\"topologyKey\":"
        "\"kubernetes.io/hostname\",\"whenUnsatisfiable\":\"ScheduleAnyway\"}]}}");
    char err[512] = "";
    Basalt__V1__Pod *pod = bas_k8s_pod_from_json (json, err, sizeof err);
    if (!pod)
        print_error ("%s\n", err);
    assert_non_null (pod);
    assert_int_equal (pod->placement->n_topology_spread, 2);
    const Basalt__V1__TopologySpreadConstraint *c = pod->placement->topology_spread[0];
    assert_int_equal (c->max_skew, 1);
    assert_string_equal (c->topology_key, "topology.kubernetes.io/zone");
    assert_string_equal (c->when_unsatisfiable, "DoNotSchedule");
    assert_string_equal (
        s_kv (c->label_selector->match_labels, c->label_selector->n_match_labels, "app"), "s");
    assert_true (c->has_min_domains);
    assert_int_equal (c->min_domains, 3);
    assert_string_equal (c->node_affinity_policy, "Ignore");
    assert_string_equal (c->node_taints_policy, "Honor");
    assert_int_equal (c->n_match_label_keys, 1);
    assert_string_equal (c->match_label_keys[0], "pod-template-hash");
    c = pod->placement->topology_spread[1];
    assert_string_equal (c->when_unsatisfiable, "ScheduleAnyway");
    assert_null (c->label_selector); // selects no pod
    assert_false (c->has_min_domains);
    assert_null (c->node_affinity_policy);
    s_wire_check (&pod->base);
    protobuf_c_message_free_unpacked (&pod->base, NULL);
    cJSON_Delete (json);
}

//  The watch stream: every event's pod decodes; a graceful delete shows.
static void
test_pod_watch_stream (void **state)
{
    (void)state;
    char path[512];
    snprintf (path, sizeof path, "%swatch/pods-watch-added-modified-deleted.ndjson", FIXTURES);
    FILE *f = fopen (path, "r");
    assert_non_null (f);
    static const bool deleting[] = {false, false, true, true, true, true};
    size_t events = 0;
    size_t cap = 1 << 20;
    char *line = malloc (cap);
    assert_non_null (line);
    while (fgets (line, (int)cap, f)) {
        cJSON *event = s_json (line);
        char err[512] = "";
        Basalt__V1__Pod *pod =
            bas_k8s_pod_from_json (cJSON_GetObjectItem (event, "object"), err, sizeof err);
        if (!pod)
            print_error ("event %zu: %s\n", events, err);
        assert_non_null (pod);
        assert_true (events < sizeof deleting / sizeof deleting[0]);
        assert_int_equal (pod->deleting, deleting[events]);
        assert_string_equal (pod->node_name, "aeraki-control-plane");
        assert_string_equal (pod->namespace_, "default");
        protobuf_c_message_free_unpacked (&pod->base, NULL);
        cJSON_Delete (event);
        events++;
    }
    free (line);
    fclose (f);
    assert_int_equal (events, 6);

    //  A BOOKMARK's minimal pod: nulls everywhere, still decodes.
    cJSON *event = s_load ("watch/bookmark.ndjson");
    char err[256];
    Basalt__V1__Pod *pod =
        bas_k8s_pod_from_json (cJSON_GetObjectItem (event, "object"), err, sizeof err);
    assert_non_null (pod);
    assert_string_equal (pod->resource_version, "3845");
    assert_null (pod->name);
    assert_false (pod->has_creation_time_ms);
    assert_int_equal (s_res (pod->requests).milli_cpu, 0);
    protobuf_c_message_free_unpacked (&pod->base, NULL);
    cJSON_Delete (event);
}

//  Requests as Kubernetes computes them, on a pod written for the purpose.
static void
test_pod_requests (void **state)
{
    (void)state;
    cJSON *json = s_json (
        "{\"metadata\":{\"name\":\"p1\",\"namespace\":\"default\",\"uid\":\"u1\"},"
        "\"spec\":{"
        " \"containers\":["
        "  {\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}},"
        "  {\"name\":\"b\",\"resources\":{\"limits\":{\"cpu\":\"500m\",\"memory\":\"2Gi\","
        "    \"nvidia.com/gpu\":\"1\"},\"requests\":{\"memory\":\"1Gi\"}}}],"
        " \"initContainers\":["
        "  {\"name\":\"i1\",\"resources\":{\"requests\":{\"cpu\":\"3\",\"memory\":\"1Gi\"}}},"
        "  {\"name\":\"i2\",\"resources\":{\"requests\":{\"memory\":\"4Gi\","
        "    \"nvidia.com/gpu\":\"2\"}}}],"
        " \"overhead\":{\"cpu\":\"100m\",\"memory\":\"10Mi\"}}}");
    char err[512] = "";
    Basalt__V1__Pod *pod = bas_k8s_pod_from_json (json, err, sizeof err);
    if (!pod)
        print_error ("%s\n", err);
    assert_non_null (pod);
    bas_res_t r = s_res (pod->requests);
    //  containers: cpu 1 + 0.5 (limit) = 1.5; memory 1Gi + 1Gi (request wins
    //  over the 2Gi limit) = 2Gi; gpu 1 (limit). Init max: cpu 3, memory
    //  4Gi, gpu 2. Then overhead 100m, 10Mi.
    assert_int_equal (r.milli_cpu, 3100);
    assert_true (r.memory == (4LL << 30) + (10 << 20));
    assert_int_equal (bas_res_scalar_get (&r, "nvidia.com/gpu"), 2);
    assert_int_equal (r.pods, 1);
    protobuf_c_message_free_unpacked (&pod->base, NULL);
    cJSON_Delete (json);

    //  Without init containers the sum shows: a limit stands in for a
    //  missing request (cpu, gpu), a request wins over its limit (memory).
    json = s_json ("{\"metadata\":{\"name\":\"p3\",\"namespace\":\"ns\"},\"spec\":{"
                   " \"containers\":["
                   "  {\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":\"1\","
                   "   \"memory\":\"1Gi\"}}},"
                   "  {\"name\":\"b\",\"resources\":{\"limits\":{\"cpu\":\"500m\","
                   "   \"memory\":\"2Gi\",\"nvidia.com/gpu\":\"1\"},\"requests\":"
                   "   {\"memory\":\"1Gi\"}}}]}}");
    pod = bas_k8s_pod_from_json (json, err, sizeof err);
    assert_non_null (pod);
    r = s_res (pod->requests);
    assert_int_equal (r.milli_cpu, 1500);
    assert_true (r.memory == 2LL << 30);
    assert_int_equal (bas_res_scalar_get (&r, "nvidia.com/gpu"), 1);
    protobuf_c_message_free_unpacked (&pod->base, NULL);
    cJSON_Delete (json);

    //  Sidecars (restartPolicy Always) add up and stay for later inits.
    json = s_json ("{\"metadata\":{\"name\":\"p2\",\"namespace\":\"ns\"},\"spec\":{"
                   " \"containers\":[{\"name\":\"main\",\"resources\":{\"requests\":"
                   "   {\"cpu\":\"1\"}}}],"
                   " \"initContainers\":["
                   "  {\"name\":\"side\",\"restartPolicy\":\"Always\",\"resources\":"
                   "   {\"requests\":{\"cpu\":\"500m\"}}},"
                   "  {\"name\":\"late\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]}}");
    pod = bas_k8s_pod_from_json (json, err, sizeof err);
    assert_non_null (pod);
    //  Running: 1 + 0.5 = 1.5; init "late" runs beside the sidecar: 2.5.
    assert_int_equal (s_res (pod->requests).milli_cpu, 2500);
    protobuf_c_message_free_unpacked (&pod->base, NULL);
    cJSON_Delete (json);
}

//  Volcano's annotations and labels, affinity, deletion.
static void
test_pod_volcano (void **state)
{
    (void)state;
    cJSON *json = s_json (
        "{\"metadata\":{\"name\":\"job-0\",\"namespace\":\"team\",\"uid\":\"u2\","
        " \"creationTimestamp\":\"2024-01-02T03:04:05Z\","
        " \"deletionTimestamp\":\"2024-01-02T03:05:00Z\","
        " \"annotations\":{\"scheduling.k8s.io/group-name\":\"job-pg\","
        "  \"scheduling.volcano.sh/queue-name\":\"q1\","
        "  \"scheduling.volcano.sh/group-min-member\":\"3\","
        "  \"volcano.sh/job-name\":\"job\",\"other.io/x\":\"y\"},"
        " \"labels\":{\"volcano.sh/task-spec\":\"worker\",\"volcano.sh/preemptable\":\"true\"},"
        " \"ownerReferences\":[{\"kind\":\"Job\",\"name\":\"j\",\"uid\":\"x\"},"
        "  {\"kind\":\"Job\",\"name\":\"job\",\"uid\":\"ju\",\"controller\":true}]},"
        "\"spec\":{\"schedulerName\":\"volcano\",\"priority\":-5,"
        " \"priorityClassName\":\"low\","
        " \"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
        "  {\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\","
        "   \"values\":[\"a\",\"b\"]}]},{\"matchFields\":[{\"key\":\"metadata.name\","
        "   \"operator\":\"NotIn\",\"values\":[\"n1\"]}]}]}}},"
        " \"containers\":[{\"name\":\"c\"}]}}");
    char err[512] = "";
    Basalt__V1__Pod *pod = bas_k8s_pod_from_json (json, err, sizeof err);
    if (!pod)
        print_error ("%s\n", err);
    assert_non_null (pod);
    assert_string_equal (pod->group, "job-pg");
    assert_string_equal (pod->queue_annotation, "q1");
    assert_string_equal (pod->min_member_annotation, "3");
    assert_string_equal (pod->task_role, "worker"); // from the label
    assert_string_equal (pod->preemptable, "true"); // from the label
    assert_int_equal (pod->n_volcano_annotations, 3);
    assert_string_equal (
        s_kv (pod->volcano_annotations, pod->n_volcano_annotations, "volcano.sh/job-name"), "job");
    assert_string_equal (s_kv (pod->volcano_annotations, pod->n_volcano_annotations,
                               "scheduling.volcano.sh/queue-name"),
                         "q1");
    assert_null (s_kv (pod->volcano_annotations, pod->n_volcano_annotations, "other.io/x"));
    assert_string_equal (pod->owner->uid, "ju");
    assert_true (pod->deleting);
    assert_true (pod->creation_time_ms == 1704164645000LL);
    assert_int_equal (pod->priority, -5);
    assert_string_equal (pod->priority_class_name, "low");
    assert_int_equal (pod->n_affinity_terms, 2);
    assert_int_equal (pod->affinity_terms[0]->n_match_expressions, 1);
    assert_string_equal (pod->affinity_terms[0]->match_expressions[0]->key, "zone");
    assert_int_equal (pod->affinity_terms[0]->match_expressions[0]->n_values, 2);
    assert_string_equal (pod->affinity_terms[0]->match_expressions[0]->values[1], "b");
    assert_int_equal (pod->affinity_terms[1]->n_match_fields, 1);
    assert_string_equal (pod->affinity_terms[1]->match_fields[0]->operator_, "NotIn");
    s_wire_check (&pod->base);
    protobuf_c_message_free_unpacked (&pod->base, NULL);
    cJSON_Delete (json);

    //  The annotation wins over the label.
    json = s_json ("{\"metadata\":{\"name\":\"p\",\"annotations\":{\"volcano.sh/task-spec\":"
                   "\"ps\"},\"labels\":{\"volcano.sh/task-spec\":\"worker\"}}}");
    pod = bas_k8s_pod_from_json (json, err, sizeof err);
    assert_non_null (pod);
    assert_string_equal (pod->task_role, "ps");
    protobuf_c_message_free_unpacked (&pod->base, NULL);
    cJSON_Delete (json);
}

//  Container images as kube-scheduler's ImageLocality names them: a name
//  whose last ':' is not after its last '/' has no tag and gets ":latest"
//  (a registry port is not a tag; a digest is kept as written); one entry
//  per container, init containers first, duplicates kept; no containers,
//  no images; a pod with spec.nodeName, none (an empty nodeName is no
//  node).
static void
test_pod_images (void **state)
{
    (void)state;
    cJSON *json =
        s_json ("{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\"},\"spec\":{"
                "\"containers\":[{\"name\":\"a\",\"image\":\"nginx\"},"
                "{\"name\":\"b\",\"image\":\"localhost:5000/team/app\"},"
                "{\"name\":\"c\",\"image\":\"busybox@sha256:b4675e30\"},"
                "{\"name\":\"d\",\"image\":\"nginx\"},{\"name\":\"e\"}],"
                "\"initContainers\":[{\"name\":\"i\",\"image\":\"registry.k8s.io/pause:3.9\"}]}}");
    char err[512] = "";
    Basalt__V1__Pod *pod = bas_k8s_pod_from_json (json, err, sizeof err);
    if (!pod)
        print_error ("%s\n", err);
    assert_non_null (pod);
    static const char *const want[] = {
        "registry.k8s.io/pause:3.9", "nginx:latest", "localhost:5000/team/app:latest",
        "busybox@sha256:b4675e30",   "nginx:latest", ":latest"};
    assert_int_equal (pod->n_images, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < pod->n_images; i++)
        assert_string_equal (pod->images[i], want[i]);
    s_wire_check (&pod->base);
    protobuf_c_message_free_unpacked (&pod->base, NULL);
    cJSON_Delete (json);

    json = s_json ("{\"metadata\":{\"name\":\"p2\",\"namespace\":\"ns\"}}");
    pod = bas_k8s_pod_from_json (json, err, sizeof err);
    assert_non_null (pod);
    assert_int_equal (pod->n_images, 0);
    assert_null (pod->images);
    protobuf_c_message_free_unpacked (&pod->base, NULL);
    cJSON_Delete (json);

    static const char *const bound[][2] = {{"\"n1\"", "0"}, {"\"\"", "1"}};
    for (size_t i = 0; i < 2; i++) {
        char doc[256];
        snprintf (doc, sizeof doc,
                  "{\"metadata\":{\"name\":\"p3\",\"namespace\":\"ns\"},\"spec\":{"
                  "\"nodeName\":%s,\"containers\":[{\"name\":\"a\",\"image\":\"nginx\"}]}}",
                  bound[i][0]);
        json = s_json (doc);
        pod = bas_k8s_pod_from_json (json, err, sizeof err);
        assert_non_null (pod);
        assert_int_equal (pod->n_images, atoi (bound[i][1]));
        protobuf_c_message_free_unpacked (&pod->base, NULL);
        cJSON_Delete (json);
    }
}

static void
test_pod_errors (void **state)
{
    (void)state;
    static const struct {
        const char *json; // a bad pod
        const char *want; // the start of the message
    } cases[] = {
        {"{\"metadata\":{\"name\":\"p1\",\"namespace\":\"default\"},\"spec\":{\"containers\":["
         "{\"name\":\"main\",\"resources\":{\"requests\":{\"cpu\":\"12Qi\"}}}]}}",
         "pod default/p1 container main requests: cpu \"12Qi\": unknown suffix \"Qi\""},
        {"{\"metadata\":{\"name\":\"p1\",\"namespace\":\"default\"},\"spec\":{\"containers\":["
         "{\"name\":\"main\",\"resources\":{\"limits\":{\"memory\":\"1.2.3\"}}}]}}",
         "pod default/p1 container main limits: memory \"1.2.3\": unexpected second '.'"},
        {"{\"metadata\":{\"name\":\"p1\",\"namespace\":\"default\"},\"spec\":{\"initContainers\":["
         "{\"name\":\"init\",\"resources\":{\"requests\":{\"cpu\":\"--1\"}}}]}}",
         "pod default/p1 init container init requests: cpu \"--1\""},
        {"{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\"},\"spec\":{\"overhead\":"
         "{\"cpu\":\"x\"}}}",
         "pod ns/p1 spec.overhead: cpu \"x\""},
        {"{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\"},\"spec\":{\"priority\":\"high\"}}",
         "pod ns/p1: spec.priority: expected an integer, got a string"},
        {"{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\"},\"spec\":{\"priority\":1.5}}",
         "pod ns/p1: spec.priority: expected a 32-bit integer"},
        {"{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\"},\"spec\":{\"nodeName\":5}}",
         "pod ns/p1: spec.nodeName: expected a string, got a number"},
        {"{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\",\"creationTimestamp\":\"yesterday\"}"
         "}",
         "pod ns/p1: metadata.creationTimestamp: malformed RFC 3339 time \"yesterday\""},
        {"{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\",\"annotations\":"
         "{\"scheduling.k8s.io/group-name\":7}}}",
         "pod ns/p1: metadata.annotations[\"scheduling.k8s.io/group-name\"]: expected a string"},
        {"{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\"},\"spec\":{\"tolerations\":[1]}}",
         "pod ns/p1: spec.tolerations[0]: expected an object, got a number"},
        {"{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\"},\"spec\":{\"containers\":{}}}",
         "pod ns/p1: spec.containers: expected an array, got an object"},
        {"{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\",\"ownerReferences\":"
         "[{\"kind\":\"Job\",\"controller\":\"yes\"}]}}",
         "pod ns/p1: metadata.ownerReferences[0]: expected a boolean, got a string"},
        {"{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\"},\"spec\":{\"containers\":["
         "{\"name\":\"a\",\"resources\":{\"requests\":{\"a.io/1\":\"1\",\"a.io/2\":\"1\"}}},"
         "{\"name\":\"b\",\"resources\":{\"requests\":{\"a.io/3\":\"1\",\"a.io/4\":\"1\","
         "\"a.io/5\":\"1\",\"a.io/6\":\"1\",\"a.io/7\":\"1\",\"a.io/8\":\"1\",\"a.io/"
         "9\":\"1\"}}}]}}",
         "pod ns/p1: too many scalar resources"},
        {"{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\"},\"spec\":{\"affinity\":"
         "{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{"
         "\"labelSelector\":{\"matchLabels\":{\"app\":\"x\"}}}]}}}}",
         "pod ns/p1: spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution:"
         " topologyKey: required"},
        {"{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\"},\"spec\":{\"affinity\":"
         "{\"podAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{"
         "\"labelSelector\":[],\"topologyKey\":\"zone\"}]}}}}",
         "pod ns/p1: spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution: "
         "expected an object, got an array"},
        {"{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\",\"labels\":{\"a\":1}}}",
         "pod ns/p1: metadata.labels[\"a\"]: expected a string, got a number"},
        {"{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\"},\"spec\":{\"containers\":["
         "{\"name\":\"c\",\"ports\":[{\"hostPort\":70000}]}]}}",
         "pod ns/p1: spec.containers[].ports[].hostPort: 70000 is not a port number"},
        {"{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\"},\"spec\":{\"topologySpread"
         "Constraints\":[{\"topologyKey\":\"zone\",\"maxSkew\":0}]}}",
         "pod ns/p1: spec.topologySpreadConstraints[0]: maxSkew: must be at least 1"},
        {"{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\"},\"spec\":{\"topologySpread"
         "Constraints\":[{\"maxSkew\":1}]}}",
         "pod ns/p1: spec.topologySpreadConstraints[0]: topologyKey: required"},
        {"{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\"},\"spec\":{\"topologySpread"
         "Constraints\":[{\"maxSkew\":1,\"topologyKey\":\"z\",\"matchLabelKeys\":[3]}]}}",
         "pod ns/p1: spec.topologySpreadConstraints[0]: expected a string, got a number"},
        {"{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\"},\"spec\":{\"affinity\":{"
         "\"nodeAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":0,"
         "\"preference\":{}}]}}}}",
         "pod ns/p1: spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution: "
         "weight: must be from 1 to 100"},
        {"{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\"},\"spec\":{\"affinity\":{"
         "\"nodeAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":5,"
         "\"preference\":7}]}}}}",
         "pod ns/p1: spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution: "
         "expected an object, got a number"},
        {"{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\"},\"spec\":{\"affinity\":{"
         "\"podAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":5,"
         "\"podAffinityTerm\":{\"labelSelector\":{}}}]}}}}",
         "pod ns/p1: spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution: "
         "topologyKey: required"},
        {"{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\",\"labels\":{\"a=b\":\"c\"}}}",
         "pod ns/p1: metadata.labels[\"a=b\"]: not a valid label"},
        {"{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\"},\"spec\":{\"containers\":["
         "{\"name\":\"a\",\"image\":\"nginx\"},{\"name\":\"b\",\"image\":[\"nginx\"]}]}}",
         "pod ns/p1: spec.containers[1].image: expected a string, got an array"},
        {"{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\"},\"spec\":{\"initContainers\":["
         "{\"name\":\"a\",\"image\":7}]}}",
         "pod ns/p1: spec.initContainers[0].image: expected a string, got a number"},
        {"{\"metadata\":5}", "pod: metadata: expected an object, got a number"},
        {"[]", "pod: expected a JSON object, got an array"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cJSON *json = s_json (cases[i].json);
        char err[512] = "";
        Basalt__V1__Pod *pod = bas_k8s_pod_from_json (json, err, sizeof err);
        if (pod || strncmp (err, cases[i].want, strlen (cases[i].want)) != 0)
            print_error ("case %zu:\n got  %s\n want %s\n", i, err, cases[i].want);
        assert_null (pod);
        assert_int_equal (strncmp (err, cases[i].want, strlen (cases[i].want)), 0);
        cJSON_Delete (json);
    }
    //  NULL input, NULL err buffer.
    assert_null (bas_k8s_pod_from_json (NULL, NULL, 0));
}

static void
test_nodes (void **state)
{
    (void)state;
    char err[512] = "";
    cJSON *json = s_load ("objects/node-tainted.json");
    Basalt__V1__Node *node = bas_k8s_node_from_json (json, err, sizeof err);
    if (!node)
        print_error ("%s\n", err);
    assert_non_null (node);
    assert_string_equal (node->name, "master-0.imeixner20210707.lab.upshift.rdu2.redhat.com");
    assert_string_equal (node->uid, "7b9db4ae-6ec2-45b7-ba44-dd0df8e32466");
    assert_string_equal (node->resource_version, "1917241");
    assert_int_equal (node->n_labels, 7);
    assert_string_equal (s_kv (node->labels, node->n_labels, "node.openshift.io/os_id"), "rhcos");
    assert_int_equal (node->n_taints, 1);
    assert_string_equal (node->taints[0]->key, "node-role.kubernetes.io/master");
    assert_string_equal (node->taints[0]->effect, "NoSchedule");
    assert_null (node->taints[0]->value);
    bas_res_t a = s_res (node->allocatable);
    assert_int_equal (a.milli_cpu, 7500);
    assert_int_equal (a.pods, 250);
    assert_true (a.memory == 15258956LL * 1024);
    assert_true (bas_res_scalar_get (&a, "ephemeral-storage") == 37087380622LL);
    assert_int_equal (a.nscalars, 1); // hugepages are "0"
    assert_true (node->has_ready && node->ready);
    assert_true (node->has_unschedulable && !node->unschedulable);
    s_wire_check (&node->base);
    protobuf_c_message_free_unpacked (&node->base, NULL);
    cJSON_Delete (json);

    json = s_load ("objects/node-gpu.json");
    node = bas_k8s_node_from_json (json, err, sizeof err);
    assert_non_null (node);
    assert_string_equal (node->name, "nori");
    assert_int_equal (node->n_labels, 85);
    assert_int_equal (node->n_taints, 0);
    a = s_res (node->allocatable);
    assert_int_equal (bas_res_scalar_get (&a, "nvidia.com/gpu"), 1);
    assert_int_equal (a.milli_cpu, 2000);
    assert_int_equal (a.pods, 110);
    assert_true (a.memory == 16367668LL * 1024);
    assert_true (node->ready);
    assert_int_equal (node->n_images, 22);
    assert_int_equal (node->images[0]->n_names, 2);
    assert_string_equal (node->images[0]->names[1],
                         "docker.io/rancher/nginx-ingress-controller:v1.12.0-hardened6");
    assert_true (node->images[0]->has_size_bytes && node->images[0]->size_bytes == 298493685);
    assert_true (node->images[21]->size_bytes == 301463); // mirrored-pause:3.6, the last
    s_wire_check (&node->base);
    protobuf_c_message_free_unpacked (&node->base, NULL);
    cJSON_Delete (json);

    //  A minikube node's kubelet report (tests/fixtures/README.md): 17
    //  images, most with a digest and a tag, some with a tag alone, names
    //  as the runtime gave them.
    json = s_load ("./node-minikube-images.json");
    node = bas_k8s_node_from_json (json, err, sizeof err);
    if (!node)
        print_error ("%s\n", err);
    assert_non_null (node);
    assert_string_equal (node->name, "minikube");
    assert_int_equal (node->n_images, 17);
    const Basalt__V1__NodeImage *img = node->images[0];
    assert_int_equal (img->n_names, 2);
    assert_string_equal (img->names[0],
                         "quay.io/kubernetes-ingress-controller/nginx-ingress-controller@sha256:"
                         "464db4880861bd9d1e74e67a4a9c975a6e74c1e9968776d8d4cc73492a56dfa5");
    assert_string_equal (img->names[1],
                         "quay.io/kubernetes-ingress-controller/nginx-ingress-controller:0.25.0");
    assert_true (img->has_size_bytes && img->size_bytes == 508299926);
    img = node->images[4]; // a tag and no digest
    assert_int_equal (img->n_names, 1);
    assert_string_equal (img->names[0], "k8s.gcr.io/kubernetes-dashboard-amd64:v1.10.1");
    assert_true (img->size_bytes == 121711221);
    img = node->images[15];
    assert_string_equal (img->names[1], "blang/busybox-bash:latest");
    assert_true (img->size_bytes == 5912460);
    img = node->images[16];
    assert_string_equal (img->names[1], "k8s.gcr.io/pause:3.1");
    assert_true (img->size_bytes == 742472);
    int64_t total = 0;
    for (size_t i = 0; i < node->n_images; i++)
        total += node->images[i]->size_bytes;
    assert_true (total == 1916448172); // the sum of the 17 sizeBytes of the file
    s_wire_check (&node->base);
    protobuf_c_message_free_unpacked (&node->base, NULL);
    cJSON_Delete (json);

    //  A server NodeList: items without kind/apiVersion.
    json = s_load ("objects/nodelist.json");
    const cJSON *items = cJSON_GetObjectItem (json, "items");
    assert_int_equal (cJSON_GetArraySize (items), 1);
    node = bas_k8s_node_from_json (cJSON_GetArrayItem (items, 0), err, sizeof err);
    assert_non_null (node);
    assert_string_equal (node->name, "onprem-control-plane");
    a = s_res (node->allocatable);
    assert_int_equal (a.milli_cpu, 6000);
    assert_int_equal (a.pods, 110);
    protobuf_c_message_free_unpacked (&node->base, NULL);
    cJSON_Delete (json);

    //  Not ready, cordoned; and a simulated node with no conditions at all.
    json = s_json ("{\"metadata\":{\"name\":\"n1\"},\"spec\":{\"unschedulable\":true},"
                   "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"}]}}");
    node = bas_k8s_node_from_json (json, err, sizeof err);
    assert_non_null (node);
    assert_false (node->ready);
    assert_true (node->unschedulable);
    bas_res_t none = s_res (node->allocatable); // present, and zero
    assert_true (bas_res_is_empty (&none));
    assert_int_equal (none.pods, 0);
    protobuf_c_message_free_unpacked (&node->base, NULL);
    cJSON_Delete (json);
    json = s_json ("{\"metadata\":{\"name\":\"sim-1\"},\"status\":{\"allocatable\":"
                   "{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}");
    node = bas_k8s_node_from_json (json, err, sizeof err);
    assert_non_null (node);
    assert_true (node->ready);
    protobuf_c_message_free_unpacked (&node->base, NULL);
    cJSON_Delete (json);

    //  Bad allocatable and bad taints.
    json = s_json ("{\"metadata\":{\"name\":\"n2\"},\"status\":{\"allocatable\":"
                   "{\"cpu\":\"4 cores\"}}}");
    assert_null (bas_k8s_node_from_json (json, err, sizeof err));
    assert_non_null (strstr (err, "node n2 status.allocatable: cpu \"4 cores\""));
    cJSON_Delete (json);
    json = s_json ("{\"metadata\":{\"name\":\"n3\"},\"spec\":{\"taints\":\"none\"}}");
    assert_null (bas_k8s_node_from_json (json, err, sizeof err));
    assert_string_equal (err, "node n3: spec.taints: expected an array, got a string");
    cJSON_Delete (json);

    //  Bad images: each refused with the entry and the field named.
    static const struct {
        const char *images, *want;
    } bad[] = {
        {"{}", "node n4: status.images: expected an array, got an object"},
        {"[7]", "node n4: status.images[0]: expected an object, got a number"},
        {"[{\"names\":[\"a:1\"],\"sizeBytes\":1},{\"names\":\"b:1\"}]",
         "node n4: status.images[1].names: expected an array, got a string"},
        {"[{\"names\":[\"a:1\",null]}]",
         "node n4: status.images[0].names: expected a string, got null"},
        {"[{\"names\":[\"a:1\"],\"sizeBytes\":-5}]",
         "node n4: status.images[0].sizeBytes: expected a byte count from 0 to 2^53, got -5"},
        {"[{\"names\":[\"a:1\"],\"sizeBytes\":1.5}]",
         "node n4: status.images[0].sizeBytes: expected a byte count from 0 to 2^53, got 1.5"},
        {"[{\"names\":[\"a:1\"],\"sizeBytes\":1e20}]",
         "node n4: status.images[0].sizeBytes: expected a byte count from 0 to 2^53, got 1e+20"},
        {"[{\"names\":[\"a:1\"],\"sizeBytes\":\"12Mi\"}]",
         "node n4: status.images[0].sizeBytes: expected an integer, got a string"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char doc[256];
        snprintf (doc, sizeof doc, "{\"metadata\":{\"name\":\"n4\"},\"status\":{\"images\":%s}}",
                  bad[i].images);
        json = s_json (doc);
        err[0] = 0;
        node = bas_k8s_node_from_json (json, err, sizeof err);
        if (node || strcmp (err, bad[i].want) != 0)
            fail_msg ("%s: got \"%s\", want \"%s\"", bad[i].images, err, bad[i].want);
        cJSON_Delete (json);
    }
    //  An entry without names or size, and a size of 0, are kept as given.
    json = s_json ("{\"metadata\":{\"name\":\"n5\"},\"status\":{\"images\":["
                   "{},{\"names\":[\"a:1\"],\"sizeBytes\":0}]}}");
    node = bas_k8s_node_from_json (json, err, sizeof err);
    assert_non_null (node);
    assert_int_equal (node->n_images, 2);
    assert_int_equal (node->images[0]->n_names, 0);
    assert_false (node->images[0]->has_size_bytes);
    assert_true (node->images[1]->has_size_bytes && node->images[1]->size_bytes == 0);
    protobuf_c_message_free_unpacked (&node->base, NULL);
    cJSON_Delete (json);
}

static void
test_hypernode (void **state)
{
    (void)state;
    char err[512] = "";
    cJSON *json = s_load ("./hypernode-rack.json");
    Basalt__V1__HyperNode *hn = bas_k8s_hypernode_from_json (json, err, sizeof err);
    if (!hn)
        print_error ("%s\n", err);
    assert_non_null (hn);
    assert_string_equal (hn->name, "rack-0");
    assert_true (hn->has_tier && hn->tier == 1);
    assert_string_equal (hn->tier_name, "rack");
    assert_int_equal (hn->n_members, 1);
    assert_string_equal (hn->members[0]->type, "Node");
    assert_null (hn->members[0]->exact_name);
    assert_non_null (hn->members[0]->label_match);
    assert_int_equal (hn->members[0]->label_match->n_match_labels, 2);
    s_wire_check (&hn->base);
    protobuf_c_message_free_unpacked (&hn->base, NULL);
    cJSON_Delete (json);
    json = s_load ("./hypernode-spine.json");
    hn = bas_k8s_hypernode_from_json (json, err, sizeof err);
    assert_non_null (hn);
    assert_int_equal (hn->tier, 2);
    assert_int_equal (hn->n_members, 2);
    assert_string_equal (hn->members[1]->type, "HyperNode");
    assert_string_equal (hn->members[1]->exact_name, "rack-1");
    protobuf_c_message_free_unpacked (&hn->base, NULL);
    cJSON_Delete (json);
    static const struct {
        const char *spec, *want;
    } bad[] = {
        {"{\"members\":[]}", "hypernode h: spec.tier: missing"},
        {"{\"tier\":-1}", "spec.tier: negative"},
        {"{\"tier\":\"1\"}", "spec.tier"},
        {"{\"tier\":1,\"members\":[{\"type\":\"Rack\",\"selector\":{\"exactMatch\":{\"name\":"
         "\"a\"}}}]}",
         "spec.members[0].type: \"Rack\" is neither"},
        {"{\"tier\":1,\"members\":[{\"type\":\"Node\",\"selector\":{}}]}",
         "spec.members[0].selector: needs exactly one"},
        {"{\"tier\":1,\"members\":[{\"type\":\"Node\",\"selector\":{\"exactMatch\":{\"name\":"
         "\"a\"},\"regexMatch\":{\"pattern\":\"a.*\"}}}]}",
         "(2 given)"},
        {"{\"tier\":1,\"members\":[{\"type\":\"HyperNode\",\"selector\":{\"labelMatch\":{}}}]}",
         "only a member of type Node"},
        {"{\"tier\":1,\"members\":[7]}", "spec.members[0]"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char doc[512];
        snprintf (doc, sizeof doc, "{\"metadata\":{\"name\":\"h\"},\"spec\":%s}", bad[i].spec);
        json = s_json (doc);
        err[0] = 0;
        assert_null (bas_k8s_hypernode_from_json (json, err, sizeof err));
        if (!strstr (err, bad[i].want))
            fail_msg ("%s: got \"%s\", want \"%s\"", bad[i].spec, err, bad[i].want);
        cJSON_Delete (json);
    }
}

static void
test_podgroup_network_topology (void **state)
{
    (void)state;
    char err[512] = "";
    cJSON *json = s_json (
        "{\"metadata\":{\"name\":\"pg\",\"namespace\":\"ns\",\"uid\":\"u\",\"annotations\":{"
        "\"volcano.sh/job-allocated-hypernode\":\"rack-0\"}},\"spec\":{\"minMember\":4,"
        "\"networkTopology\":{\"mode\":\"hard\",\"highestTierAllowed\":1}}}");
    Basalt__V1__PodGroup *pg = bas_k8s_podgroup_from_json (json, err, sizeof err);
    assert_non_null (pg);
    assert_string_equal (pg->network_topology_mode, "hard");
    assert_true (pg->has_highest_tier_allowed && pg->highest_tier_allowed == 1);
    assert_null (pg->highest_tier_name);
    assert_string_equal (pg->allocated_hypernode, "rack-0");
    protobuf_c_message_free_unpacked (&pg->base, NULL);
    cJSON_Delete (json);
    //  No mode: Volcano's default, hard.
    json = s_json ("{\"metadata\":{\"name\":\"pg\",\"namespace\":\"ns\"},\"spec\":{"
                   "\"networkTopology\":{\"highestTierName\":\"rack\"}}}");
    pg = bas_k8s_podgroup_from_json (json, err, sizeof err);
    assert_non_null (pg);
    assert_string_equal (pg->network_topology_mode, "hard");
    assert_string_equal (pg->highest_tier_name, "rack");
    assert_false (pg->has_highest_tier_allowed);
    protobuf_c_message_free_unpacked (&pg->base, NULL);
    cJSON_Delete (json);
    //  No networkTopology: no mode.
    json = s_json ("{\"metadata\":{\"name\":\"pg\",\"namespace\":\"ns\"},\"spec\":{}}");
    pg = bas_k8s_podgroup_from_json (json, err, sizeof err);
    assert_non_null (pg);
    assert_null (pg->network_topology_mode);
    protobuf_c_message_free_unpacked (&pg->base, NULL);
    cJSON_Delete (json);
    json = s_json ("{\"metadata\":{\"name\":\"pg\",\"namespace\":\"ns\"},\"spec\":{"
                   "\"networkTopology\":{\"mode\":\"strict\"}}}");
    assert_null (bas_k8s_podgroup_from_json (json, err, sizeof err));
    assert_non_null (strstr (err, "spec.networkTopology.mode: \"strict\" is neither"));
    cJSON_Delete (json);
}

static void
test_pdb (void **state)
{
    (void)state;
    cJSON *json = s_load ("./pdb-zk.json");
    char err[512] = "";
    Basalt__V1__PodDisruptionBudget *b = bas_k8s_pdb_from_json (json, err, sizeof err);
    if (!b)
        print_error ("%s\n", err);
    assert_non_null (b);
    assert_string_equal (b->name, "zk-pdb");
    assert_string_equal (b->namespace_, "default");
    assert_string_equal (b->min_available, "2");
    assert_null (b->max_unavailable);
    assert_non_null (b->selector);
    assert_int_equal (b->selector->n_match_labels, 1);
    assert_string_equal (b->selector->match_labels[0]->key, "app");
    assert_string_equal (b->selector->match_labels[0]->value, "zookeeper");
    assert_true (b->has_disruptions_allowed && b->disruptions_allowed == 1);
    assert_true (b->current_healthy == 3 && b->desired_healthy == 2 && b->expected_pods == 3);
    s_wire_check (&b->base);
    protobuf_c_message_free_unpacked (&b->base, NULL);
    cJSON_Delete (json);
    static const struct {
        const char *spec, *want;
    } bad[] = {
        {"{\"minAvailable\":\"50\",\"maxUnavailable\":1}", "both set"},
        {"{\"maxUnavailable\":\"ten%\"}",
         "spec.maxUnavailable: expected an integer or a percentage"},
        {"{\"minAvailable\":true}", "spec.minAvailable: expected an integer or a percentage"},
        {"{\"selector\":[]}", "spec.selector"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char doc[256];
        snprintf (doc, sizeof doc,
                  "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},\"spec\":%s}", bad[i].spec);
        json = s_json (doc);
        err[0] = 0;
        assert_null (bas_k8s_pdb_from_json (json, err, sizeof err));
        if (!strstr (err, bad[i].want))
            fail_msg ("%s: got \"%s\", want \"%s\"", bad[i].spec, err, bad[i].want);
        cJSON_Delete (json);
    }
    json = s_json ("{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},\"spec\":{"
                   "\"maxUnavailable\":\"25%\",\"selector\":{}},\"status\":{\"disruptedPods\":"
                   "{\"w-1\":\"2026-11-26T04:00:00Z\",\"w-2\":\"2026-11-26T04:00:01Z\"}}}");
    b = bas_k8s_pdb_from_json (json, err, sizeof err);
    assert_non_null (b);
    assert_string_equal (b->max_unavailable, "25%");
    assert_int_equal (b->n_disrupted_pods, 2);
    assert_string_equal (b->disrupted_pods[0], "w-1");
    assert_string_equal (b->disrupted_pods[1], "w-2");
    assert_non_null (b->selector); // {} selects every pod of the namespace
    protobuf_c_message_free_unpacked (&b->base, NULL);
    cJSON_Delete (json);
}

static void
test_podgroup (void **state)
{
    (void)state;
    char err[512] = "";
    cJSON *json = s_load ("objects/podgroup.json");
    Basalt__V1__PodGroup *pg = bas_k8s_podgroup_from_json (json, err, sizeof err);
    if (!pg)
        print_error ("%s\n", err);
    assert_non_null (pg);
    assert_string_equal (pg->name, "test");
    assert_string_equal (pg->namespace_, "default");
    assert_string_equal (pg->uid, "eb2508f5-3349-439c-b94d-4ac23afd71ff");
    assert_string_equal (pg->resource_version, "109074");
    assert_string_equal (pg->queue, "default");
    assert_true (pg->has_min_member);
    assert_int_equal (pg->min_member, 1);
    assert_string_equal (pg->priority_class_name, "high-prority"); // sic, upstream
    bas_res_t mr = s_res (pg->min_resources);
    assert_int_equal (mr.milli_cpu, 3000);
    assert_true (mr.memory == 2048LL << 20);
    assert_true (pg->creation_time_ms == 1597148935000LL);
    assert_int_equal (pg->n_owners, 1);
    assert_string_equal (pg->owners[0]->kind, "Job");
    assert_string_equal (pg->owners[0]->api_version, "batch.volcano.sh/v1alpha1");
    assert_false (pg->deleting);
    assert_non_null (pg->status);
    assert_string_equal (pg->status->phase, "Running");
    assert_int_equal (pg->status->running, 1);
    assert_int_equal (pg->status->succeeded, 0);
    assert_int_equal (pg->status->failed, 0);
    assert_int_equal (pg->status->n_conditions, 2);
    const Basalt__V1__PodGroupCondition *c = pg->status->conditions[0];
    assert_string_equal (c->type, "Unschedulable");
    assert_string_equal (c->status, "True");
    assert_string_equal (c->reason, "NotEnoughResources");
    assert_string_equal (c->transition_id, "77d5be3f-6169-4f86-8e65-0bdc621ce983");
    assert_string_equal (c->last_transition_time, "2020-08-11T12:28:57Z");
    assert_string_equal (
        c->message, "1/0 tasks in gang unschedulable: pod group is not ready, 1 minAvailable.");
    assert_string_equal (pg->status->conditions[1]->type, "Scheduled");
    assert_null (pg->status->conditions[1]->message);
    s_wire_check (&pg->base);

    //  The status written back carries the same fields, Volcano's names.
    cJSON *st = bas_k8s_podgroup_status_to_json (pg->status);
    assert_non_null (st);
    assert_string_equal (cJSON_GetObjectItem (st, "phase")->valuestring, "Running");
    assert_int_equal (cJSON_GetObjectItem (st, "running")->valueint, 1);
    assert_int_equal (cJSON_GetObjectItem (st, "failed")->valueint, 0);
    cJSON *conds = cJSON_GetObjectItem (st, "conditions");
    assert_int_equal (cJSON_GetArraySize (conds), 2);
    cJSON *c0 = cJSON_GetArrayItem (conds, 0);
    assert_string_equal (cJSON_GetObjectItem (c0, "transitionID")->valuestring,
                         "77d5be3f-6169-4f86-8e65-0bdc621ce983");
    assert_string_equal (cJSON_GetObjectItem (c0, "lastTransitionTime")->valuestring,
                         "2020-08-11T12:28:57Z");
    assert_null (cJSON_GetObjectItem (cJSON_GetArrayItem (conds, 1), "message"));
    //  It decodes back to the same status.
    cJSON *wrapped = cJSON_CreateObject ();
    cJSON_AddItemToObject (wrapped, "status", st);
    Basalt__V1__PodGroup *again = bas_k8s_podgroup_from_json (wrapped, err, sizeof err);
    assert_non_null (again);
    assert_string_equal (again->status->conditions[0]->reason, "NotEnoughResources");
    assert_int_equal (again->status->running, 1);
    protobuf_c_message_free_unpacked (&again->base, NULL);
    cJSON_Delete (wrapped);
    protobuf_c_message_free_unpacked (&pg->base, NULL);
    cJSON_Delete (json);

    //  An empty status is still a whole one (so a merge patch resets it).
    st = bas_k8s_podgroup_status_to_json (NULL);
    assert_non_null (st);
    cJSON_Delete (st);
    Basalt__V1__PodGroupStatus empty = BASALT__V1__POD_GROUP_STATUS__INIT;
    st = bas_k8s_podgroup_status_to_json (&empty);
    char *text = cJSON_PrintUnformatted (st);
    assert_string_equal (text, "{\"running\":0,\"succeeded\":0,\"failed\":0,\"conditions\":[]}");
    free (text);
    cJSON_Delete (st);

    //  Defaults: no queue -> "default"; minTaskMember as decimal text.
    json = s_json ("{\"metadata\":{\"name\":\"pg\",\"namespace\":\"ns\","
                   "\"deletionTimestamp\":\"2024-05-06T07:08:09.123456Z\"},"
                   "\"spec\":{\"queue\":\"\",\"minTaskMember\":{\"ps\":1,\"worker\":4}}}");
    pg = bas_k8s_podgroup_from_json (json, err, sizeof err);
    assert_non_null (pg);
    assert_string_equal (pg->queue, "default");
    assert_false (pg->has_min_member);
    assert_null (pg->min_resources);
    assert_int_equal (pg->n_min_task_member, 2);
    assert_string_equal (s_kv (pg->min_task_member, 2, "worker"), "4");
    assert_true (pg->deleting);
    assert_non_null (pg->status);
    assert_null (pg->status->phase);
    assert_null (pg->preemptable);
    protobuf_c_message_free_unpacked (&pg->base, NULL);
    cJSON_Delete (json);

    //  volcano.sh/preemptable (gangpreempt, gangreclaim): the annotation as
    //  written, else the label.
    json = s_json ("{\"metadata\":{\"name\":\"pg\",\"namespace\":\"ns\",\"annotations\":"
                   "{\"volcano.sh/preemptable\":\"false\"},\"labels\":"
                   "{\"volcano.sh/preemptable\":\"true\"}}}");
    pg = bas_k8s_podgroup_from_json (json, err, sizeof err);
    assert_non_null (pg);
    assert_string_equal (pg->preemptable, "false");
    s_wire_check (&pg->base);
    protobuf_c_message_free_unpacked (&pg->base, NULL);
    cJSON_Delete (json);
    json = s_json ("{\"metadata\":{\"name\":\"pg\",\"namespace\":\"ns\",\"labels\":"
                   "{\"volcano.sh/preemptable\":\"False\"}}}");
    pg = bas_k8s_podgroup_from_json (json, err, sizeof err);
    assert_non_null (pg);
    assert_string_equal (pg->preemptable, "False");
    protobuf_c_message_free_unpacked (&pg->base, NULL);
    cJSON_Delete (json);

    //  The task-topology annotations (volcano.sh/task-topology-affinity,
    //  -anti-affinity, -task-order) as written, an empty one kept empty;
    //  absent ones stay unset; a non-string one is refused by its path.
    json = s_json ("{\"metadata\":{\"name\":\"pg\",\"namespace\":\"ns\",\"annotations\":{"
                   "\"volcano.sh/task-topology-affinity\":\"ps,worker;ps,,chief,;\","
                   "\"volcano.sh/task-topology-anti-affinity\":\"\"}}}");
    pg = bas_k8s_podgroup_from_json (json, err, sizeof err);
    assert_non_null (pg);
    assert_string_equal (pg->task_topology_affinity, "ps,worker;ps,,chief,;");
    assert_string_equal (pg->task_topology_anti_affinity, "");
    assert_null (pg->task_topology_task_order);
    s_wire_check (&pg->base);
    protobuf_c_message_free_unpacked (&pg->base, NULL);
    cJSON_Delete (json);
    json = s_json ("{\"metadata\":{\"name\":\"pg\",\"namespace\":\"ns\",\"annotations\":{"
                   "\"volcano.sh/task-topology-task-order\":\"ps,worker\"}}}");
    pg = bas_k8s_podgroup_from_json (json, err, sizeof err);
    assert_non_null (pg);
    assert_null (pg->task_topology_affinity);
    assert_null (pg->task_topology_anti_affinity);
    assert_string_equal (pg->task_topology_task_order, "ps,worker");
    protobuf_c_message_free_unpacked (&pg->base, NULL);
    cJSON_Delete (json);
    json = s_json ("{\"metadata\":{\"name\":\"pg\",\"namespace\":\"ns\",\"annotations\":{"
                   "\"volcano.sh/task-topology-affinity\":3}}}");
    assert_null (bas_k8s_podgroup_from_json (json, err, sizeof err));
    assert_non_null (strstr (err, "volcano.sh/task-topology-affinity"));
    cJSON_Delete (json);

    //  minResources as Volcano's scheduler reads it: quota forms (count/*,
    //  requests.*, limits.cpu) read past, pods kept, extended resources
    //  kept and their requests. form dropped; limits.<extended> is an
    //  extended name to Kubernetes, so Volcano keeps it too.
    json = s_json ("{\"metadata\":{\"name\":\"pg\",\"namespace\":\"ns\",\"uid\":\"u\"},"
                   "\"spec\":{\"minResources\":{\"pods\":\"3\",\"count/pods\":\"3\","
                   "\"cpu\":\"3\",\"memory\":\"3Gi\",\"requests.cpu\":\"3\","
                   "\"requests.memory\":\"3Gi\",\"limits.cpu\":\"3\",\"limits.memory\":\"3Gi\","
                   "\"nvidia.com/gpu\":\"2\",\"requests.nvidia.com/gpu\":\"2\","
                   "\"limits.nvidia.com/gpu\":\"2\"}}}");
    pg = bas_k8s_podgroup_from_json (json, err, sizeof err);
    assert_non_null (pg);
    assert_null (pg->spec_error);
    assert_null (pg->min_resources_ignored);
    assert_non_null (pg->min_resources);
    assert_int_equal (pg->min_resources->milli_cpu, 3000);
    assert_int_equal (pg->min_resources->memory, 3LL << 30);
    assert_int_equal (pg->min_resources->pods, 3);
    assert_int_equal (pg->min_resources->n_scalars, 2);
    assert_string_equal (pg->min_resources->scalars[0]->name, "limits.nvidia.com/gpu");
    assert_string_equal (pg->min_resources->scalars[1]->name, "nvidia.com/gpu");
    assert_int_equal (pg->min_resources->scalars[1]->value, 2);
    s_wire_check (&pg->base);
    protobuf_c_message_free_unpacked (&pg->base, NULL);
    cJSON_Delete (json);
    //  A key that is neither a resource nor a quota form is named, not
    //  silently dropped; a quantity that does not parse, or is negative,
    //  keeps the group (its reason in spec_error, no minimum) instead of
    //  dropping it where nobody sees.
    json = s_json ("{\"metadata\":{\"name\":\"pg\",\"namespace\":\"ns\"},\"spec\":{"
                   "\"minResources\":{\"gpu\":\"1\",\"storage\":\"1Gi\",\"cpu\":\"1\"}}}");
    pg = bas_k8s_podgroup_from_json (json, err, sizeof err);
    assert_non_null (pg);
    assert_string_equal (pg->min_resources_ignored, "\"gpu\", \"storage\"");
    assert_int_equal (pg->min_resources->milli_cpu, 1000);
    protobuf_c_message_free_unpacked (&pg->base, NULL);
    cJSON_Delete (json);
    static const struct {
        const char *list;
        const char *want;
    } bad_min[] = {
        {"{\"cpu\":\"1x\"}", "spec.minResources: cpu \"1x\": unknown suffix \"x\""},
        {"{\"cpu\":\"-1\"}", "spec.minResources: cpu \"-1\": must not be negative"},
        {"{\"memory\":\"12Qi\"}", "spec.minResources: memory \"12Qi\""},
        {"{\"nvidia.com/gpu\":true}", "spec.minResources: nvidia.com/gpu: expected a quantity"},
        {"[1]", "spec.minResources: expected an object of quantities"},
    };
    for (size_t i = 0; i < sizeof bad_min / sizeof bad_min[0]; i++) {
        char text[256];
        snprintf (text, sizeof text,
                  "{\"metadata\":{\"name\":\"pg\",\"namespace\":\"ns\"},\"spec\":{"
                  "\"minResources\":%s}}",
                  bad_min[i].list);
        json = s_json (text);
        pg = bas_k8s_podgroup_from_json (json, err, sizeof err);
        assert_non_null (pg);
        assert_null (pg->min_resources);
        assert_non_null (pg->spec_error);
        if (strncmp (pg->spec_error, bad_min[i].want, strlen (bad_min[i].want)) != 0)
            print_error ("case %zu:\n got  %s\n want %s\n", i, pg->spec_error, bad_min[i].want);
        assert_int_equal (strncmp (pg->spec_error, bad_min[i].want, strlen (bad_min[i].want)), 0);
        protobuf_c_message_free_unpacked (&pg->base, NULL);
        cJSON_Delete (json);
    }

    //  Wrong types.
    static const struct {
        const char *json;
        const char *want;
    } bad[] = {
        {"{\"metadata\":{\"name\":\"pg\",\"namespace\":\"ns\"},\"spec\":{\"minMember\":\"x\"}}",
         "podgroup ns/pg: spec.minMember: expected an integer, got a string"},
        {"{\"metadata\":{\"name\":\"pg\",\"namespace\":\"ns\"},\"spec\":{\"minMember\":3e10}}",
         "podgroup ns/pg: spec.minMember: expected a 32-bit integer"},
        {"{\"metadata\":{\"name\":\"pg\",\"namespace\":\"ns\"},\"status\":{\"running\":\"1\"}}",
         "podgroup ns/pg: status.running: expected an integer, got a string"},
        {"{\"metadata\":{\"name\":\"pg\",\"namespace\":\"ns\"},\"status\":{\"conditions\":"
         "[{\"type\":1}]}}",
         "podgroup ns/pg: status.conditions[0]: expected a string, got a number"},
        {"{\"metadata\":{\"name\":\"pg\",\"namespace\":\"ns\"},\"spec\":{\"minTaskMember\":"
         "{\"w\":\"2\"}}}",
         "podgroup ns/pg: spec.minTaskMember[\"w\"]: expected an integer, got a string"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json = s_json (bad[i].json);
        pg = bas_k8s_podgroup_from_json (json, err, sizeof err);
        if (pg || strncmp (err, bad[i].want, strlen (bad[i].want)) != 0)
            print_error ("case %zu:\n got  %s\n want %s\n", i, err, bad[i].want);
        assert_null (pg);
        assert_int_equal (strncmp (err, bad[i].want, strlen (bad[i].want)), 0);
        cJSON_Delete (json);
    }
}

static void
test_queue (void **state)
{
    (void)state;
    char err[512] = "";
    cJSON *json = s_load ("objects/queue.json");
    Basalt__V1__Queue *q = bas_k8s_queue_from_json (json, err, sizeof err);
    if (!q)
        print_error ("%s\n", err);
    assert_non_null (q);
    assert_string_equal (q->name, "test");
    assert_string_equal (q->uid, "88babd01-c83f-4010-9701-c2471c1dd040");
    assert_int_equal (q->weight, 1);
    assert_true (q->has_reclaimable && q->reclaimable);
    assert_string_equal (q->state, "Open");
    assert_int_equal (q->priority, 100);
    assert_null (q->parent);
    assert_true (q->creation_time_ms == 1735551072000LL);
    bas_res_t r = s_res (q->capability);
    assert_int_equal (r.milli_cpu, 8000);
    assert_true (r.memory == 16LL << 30);
    r = s_res (q->deserved);
    assert_int_equal (r.milli_cpu, 4000);
    assert_true (r.memory == 8LL << 30);
    r = s_res (q->guarantee);
    assert_int_equal (r.milli_cpu, 2000);
    assert_true (r.memory == 4LL << 30);
    assert_non_null (q->allocated);
    r = s_res (q->allocated);
    assert_true (bas_res_is_empty (&r));
    s_wire_check (&q->base);
    protobuf_c_message_free_unpacked (&q->base, NULL);
    cJSON_Delete (json);

    //  Defaults: weight 1, reclaimable, Open; no capability means none.
    json = s_json ("{\"metadata\":{\"name\":\"test-sub-0\"},\"spec\":{\"parent\":\"test-root\","
                   "\"reclaimable\":false,\"weight\":3}}");
    q = bas_k8s_queue_from_json (json, err, sizeof err);
    assert_non_null (q);
    assert_string_equal (q->parent, "test-root");
    assert_false (q->reclaimable);
    assert_int_equal (q->weight, 3);
    assert_string_equal (q->state, "Open");
    assert_null (q->capability);
    protobuf_c_message_free_unpacked (&q->base, NULL);
    cJSON_Delete (json);
    json = s_json ("{\"metadata\":{\"name\":\"plain\"},\"status\":{\"state\":\"Closed\"}}");
    q = bas_k8s_queue_from_json (json, err, sizeof err);
    assert_non_null (q);
    assert_int_equal (q->weight, 1);
    assert_true (q->reclaimable);
    assert_string_equal (q->state, "Closed");
    protobuf_c_message_free_unpacked (&q->base, NULL);
    cJSON_Delete (json);

    //  spec.affinity: node groups (the Queue CRD's four lists); an affinity
    //  naming no group is kept (not the same as none for the nodegroup plugin).
    json = s_json ("{\"metadata\":{\"name\":\"ng\"},\"spec\":{\"affinity\":{"
                   "\"nodeGroupAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
                   "[\"a\",\"b\"],\"preferredDuringSchedulingIgnoredDuringExecution\":[\"c\"]},"
                   "\"nodeGroupAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
                   "[\"d\"]}}}}");
    q = bas_k8s_queue_from_json (json, err, sizeof err);
    assert_non_null (q);
    assert_non_null (q->affinity);
    assert_int_equal (q->affinity->n_group_required, 2);
    assert_string_equal (q->affinity->group_required[1], "b");
    assert_int_equal (q->affinity->n_group_preferred, 1);
    assert_string_equal (q->affinity->group_preferred[0], "c");
    assert_int_equal (q->affinity->n_anti_required, 1);
    assert_int_equal (q->affinity->n_anti_preferred, 0);
    s_wire_check (&q->base);
    protobuf_c_message_free_unpacked (&q->base, NULL);
    cJSON_Delete (json);
    //  The node group caps annotation is carried as written (the plugin
    //  parses it and says when it does not).
    json = s_json ("{\"metadata\":{\"name\":\"caps\",\"annotations\":{\"volcano.sh/"
                   "nodegroup-resource-limits\":\"{\\\"g1\\\":{\\\"cpu\\\":\\\"1\\\"}}\"}}}");
    q = bas_k8s_queue_from_json (json, err, sizeof err);
    if (!q)
        print_error ("%s\n", err);
    assert_non_null (q);
    assert_string_equal (q->nodegroup_resource_limits, "{\"g1\":{\"cpu\":\"1\"}}");
    protobuf_c_message_free_unpacked (&q->base, NULL);
    cJSON_Delete (json);
    //  The hierarchical drf annotations: path and weights, as written (the
    //  plugin splits them); absent, both stay unset.
    json = s_json ("{\"metadata\":{\"name\":\"root-eng-prod\",\"annotations\":{"
                   "\"volcano.sh/hierarchy\":\"root/eng/prod\","
                   "\"volcano.sh/hierarchy-weights\":\"1/2/8\"}}}");
    q = bas_k8s_queue_from_json (json, err, sizeof err);
    if (!q)
        print_error ("%s\n", err);
    assert_non_null (q);
    assert_string_equal (q->hierarchy, "root/eng/prod");
    assert_string_equal (q->hierarchy_weights, "1/2/8");
    s_wire_check (&q->base);
    protobuf_c_message_free_unpacked (&q->base, NULL);
    cJSON_Delete (json);
    json = s_json ("{\"metadata\":{\"name\":\"flat\",\"annotations\":{\"x\":\"y\"}}}");
    q = bas_k8s_queue_from_json (json, err, sizeof err);
    assert_non_null (q);
    assert_null (q->hierarchy);
    assert_null (q->hierarchy_weights);
    protobuf_c_message_free_unpacked (&q->base, NULL);
    cJSON_Delete (json);
    json = s_json ("{\"metadata\":{\"name\":\"bad\",\"annotations\":{"
                   "\"volcano.sh/hierarchy\":3}}}");
    assert_null (bas_k8s_queue_from_json (json, err, sizeof err));
    assert_string_equal (err, "queue bad: metadata.annotations[\"volcano.sh/hierarchy\"]: "
                              "expected a string, got a number");
    cJSON_Delete (json);
    json = s_json ("{\"metadata\":{\"name\":\"ng\"},\"spec\":{\"affinity\":{}}}");
    q = bas_k8s_queue_from_json (json, err, sizeof err);
    assert_non_null (q);
    assert_non_null (q->affinity);
    protobuf_c_message_free_unpacked (&q->base, NULL);
    cJSON_Delete (json);
    json = s_json ("{\"metadata\":{\"name\":\"bad\"},\"spec\":{\"affinity\":{"
                   "\"nodeGroupAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
                   "\"a\"}}}}");
    assert_null (bas_k8s_queue_from_json (json, err, sizeof err));
    assert_string_equal (err, "queue bad: spec.affinity.nodeGroupAffinity.requiredDuringScheduling"
                              "IgnoredDuringExecution: expected an array, got a string");
    cJSON_Delete (json);
    json = s_json ("{\"metadata\":{\"name\":\"bad\"},\"spec\":{\"reclaimable\":\"yes\"}}");
    assert_null (bas_k8s_queue_from_json (json, err, sizeof err));
    assert_string_equal (err, "queue bad: spec.reclaimable: expected a boolean, got a string");
    cJSON_Delete (json);
    json = s_json ("{\"metadata\":{\"name\":\"bad\"},\"spec\":{\"capability\":{\"memory\":"
                   "\"1Gb\"}}}");
    assert_null (bas_k8s_queue_from_json (json, err, sizeof err));
    assert_non_null (strstr (err, "queue bad spec.capability: memory \"1Gb\""));
    cJSON_Delete (json);
}

//  A ResourceQuota: spec.hard and status.used by name, in milli-units; a
//  bad quantity is named with its place.
static void
test_resourcequota (void **state)
{
    (void)state;
    cJSON *json = s_load ("./resourcequota-mem-cpu.json");
    char err[512] = "";
    Basalt__V1__ResourceQuota *q = bas_k8s_resourcequota_from_json (json, err, sizeof err);
    if (!q)
        print_error ("%s\n", err);
    assert_non_null (q);
    assert_string_equal (q->name, "mem-cpu-demo");
    assert_string_equal (q->namespace_, "quota-mem-cpu-example");
    assert_int_equal (q->n_hard, 4);
    static const struct {
        const char *name;
        int64_t milli;
    } hard[] = {{"requests.cpu", 1000},
                {"requests.memory", 1024LL * 1024 * 1024 * 1000},
                {"limits.cpu", 2000},
                {"limits.memory", 2048LL * 1024 * 1024 * 1000}};
    for (size_t i = 0; i < 4; i++) {
        size_t k = 0;
        while (k < q->n_hard && strcmp (q->hard[k]->name, hard[i].name) != 0)
            k++;
        assert_true (k < q->n_hard);
        assert_true (q->hard[k]->milli_value == hard[i].milli);
    }
    assert_int_equal (q->n_used, 4);
    s_wire_check (&q->base);
    protobuf_c_message_free_unpacked (&q->base, NULL);
    cJSON_Delete (json);
    json = s_json ("{\"metadata\":{\"name\":\"q\",\"namespace\":\"ns\"},\"spec\":{\"hard\":"
                   "{\"cpu\":\"2Qi\"}}}");
    assert_null (bas_k8s_resourcequota_from_json (json, err, sizeof err));
    assert_non_null (strstr (err, "resourcequota ns/q: spec.hard[\"cpu\"]:"));
    cJSON_Delete (json);
}

static void
test_priorityclass (void **state)
{
    (void)state;
    char err[512] = "";
    cJSON *json = s_load ("objects/priorityclass-system-node-critical.json");
    Basalt__V1__PriorityClass *pc = bas_k8s_priorityclass_from_json (json, err, sizeof err);
    assert_non_null (pc);
    assert_string_equal (pc->name, "system-node-critical");
    assert_true (pc->has_value);
    assert_int_equal (pc->value, 2000001000);
    assert_true (pc->has_global_default);
    assert_false (pc->global_default);
    assert_string_equal (pc->preemption_policy, "PreemptLowerPriority");
    protobuf_c_message_free_unpacked (&pc->base, NULL);
    cJSON_Delete (json);

    json = s_json ("{\"metadata\":{\"name\":\"hi\"},\"value\":1000,\"globalDefault\":true,"
                   "\"preemptionPolicy\":\"Never\"}");
    pc = bas_k8s_priorityclass_from_json (json, err, sizeof err);
    assert_non_null (pc);
    assert_int_equal (pc->value, 1000);
    assert_true (pc->global_default);
    assert_string_equal (pc->preemption_policy, "Never");
    protobuf_c_message_free_unpacked (&pc->base, NULL);
    cJSON_Delete (json);

    json = s_json ("{\"metadata\":{\"name\":\"big\"},\"value\":3000000000}");
    assert_null (bas_k8s_priorityclass_from_json (json, err, sizeof err));
    assert_non_null (strstr (err, "priorityclass big: value: expected a 32-bit integer"));
    cJSON_Delete (json);
}

static void
test_time (void **state)
{
    (void)state;
    assert_true (bas_k8s_time_parse_ms ("1970-01-01T00:00:00Z") == 0);
    assert_true (bas_k8s_time_parse_ms ("2024-01-02T03:04:05Z") == 1704164645000LL);
    assert_true (bas_k8s_time_parse_ms ("2024-01-02T03:04:05.5Z") == 1704164645500LL);
    assert_true (bas_k8s_time_parse_ms ("2024-01-02T03:04:05.123456789Z") == 1704164645123LL);
    assert_true (bas_k8s_time_parse_ms ("2024-01-02T04:04:05+01:00") == 1704164645000LL);
    assert_true (bas_k8s_time_parse_ms ("2024-01-01T22:04:05-05:00") == 1704164645000LL);
    assert_true (bas_k8s_time_parse_ms ("2024-02-29T00:00:00Z") == 1709164800000LL);
    assert_true (bas_k8s_time_parse_ms ("2000-03-01T00:00:00Z") == 951868800000LL);
    static const char *const bad[] = {
        "",
        "2024-01-02",
        "2024-01-02 03:04:05Z",
        "2024-01-02T03:04:05",
        "2024-13-02T03:04:05Z",
        "2023-02-29T00:00:00Z",
        "2024-01-32T00:00:00Z",
        "2024-01-02T24:00:00Z",
        "2024-01-02T03:60:00Z",
        "2024-01-02T03:04:60Z",
        "2024-01-02T03:04:05.Z",
        "2024-01-02T03:04:05Zjunk",
        "2024-01-02T03:04:05+0100",
        "1969-12-31T23:59:59Z",
        "24-01-02T03:04:05Z",
        "yesterday",
        NULL,
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (bas_k8s_time_parse_ms (bad[i]) != -1)
            print_error ("accepted \"%s\"\n", bad[i] ? bad[i] : "(null)");
        assert_true (bas_k8s_time_parse_ms (bad[i]) == -1);
    }
}

//  Garbage must never crash a decoder: every fixture fed to every decoder,
//  and every prefix of a pod document that still parses.
//  A key given twice in one JSON object (cJSON keeps both): the object is
//  refused with the key named, at any depth, with few keys or many; before,
//  two "tolerations" lists wrote past the first one's room (found by
//  fuzz/fuzz_k8s_json; the input is in fuzz/regress).
static void
test_key_given_twice (void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"{\"metadata\":{\"name\":\"p\",\"uid\":\"u\"},\"spec\":{\"tolerations\":[{\"key\":\"a\"}],"
         "\"tolerations\":[{\"key\":\"b\"},{\"key\":\"c\"}]}}",
         "pod: spec: key \"tolerations\" is given twice"},
        {"{\"metadata\":{\"name\":\"p\",\"uid\":\"u\"},\"spec\":{\"tolerations\":[{\"key\":\"a\","
         "\"key\":\"b\"}]}}",
         "pod: the object: key \"key\" is given twice"},
        {"{\"metadata\":{\"name\":\"p\",\"name\":\"q\",\"uid\":\"u\"}}",
         "pod: metadata: key \"name\" is given twice"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cJSON *json = cJSON_Parse (cases[i][0]);
        assert_non_null (json);
        char err[256];
        assert_null (bas_k8s_pod_from_json (json, err, sizeof err));
        assert_string_equal (err, cases[i][1]);
        cJSON_Delete (json);
    }
    //  Many labels (the sorted path), one repeated far apart.
    char text[8192];
    int n =
        snprintf (text, sizeof text, "{\"metadata\":{\"name\":\"p\",\"uid\":\"u\",\"labels\":{");
    for (int k = 0; k < 100; k++)
        n += snprintf (text + n, sizeof text - (size_t)n, "\"l%d\":\"v\",", k);
    snprintf (text + n, sizeof text - (size_t)n, "\"l7\":\"w\"}}}");
    cJSON *json = cJSON_Parse (text);
    assert_non_null (json);
    char err[256];
    assert_null (bas_k8s_pod_from_json (json, err, sizeof err));
    assert_string_equal (err, "pod: labels: key \"l7\" is given twice");
    //  The same labels without the repeat decode.
    cJSON_DeleteItemFromArray (cJSON_GetObjectItemCaseSensitive (
                                   cJSON_GetObjectItemCaseSensitive (json, "metadata"), "labels"),
                               100);
    Basalt__V1__Pod *pod = bas_k8s_pod_from_json (json, err, sizeof err);
    assert_non_null (pod);
    protobuf_c_message_free_unpacked (&pod->base, NULL);
    cJSON_Delete (json);
}

static void
test_garbage (void **state)
{
    (void)state;
    static const char *const files[] = {
        "objects/pod.json",           "objects/node-gpu.json",   "objects/podgroup.json",
        "objects/queue.json",         "objects/binding.json",    "objects/status-422-invalid.json",
        "objects/podlist-empty.json", "objects/deployment.json", "./node-minikube-images.json",
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        cJSON *json = s_load (files[i]);
        char err[512];
        Basalt__V1__Pod *pod = bas_k8s_pod_from_json (json, err, sizeof err);
        if (pod)
            protobuf_c_message_free_unpacked (&pod->base, NULL);
        Basalt__V1__Node *node = bas_k8s_node_from_json (json, err, sizeof err);
        if (node)
            protobuf_c_message_free_unpacked (&node->base, NULL);
        Basalt__V1__PodGroup *pg = bas_k8s_podgroup_from_json (json, err, sizeof err);
        if (pg)
            protobuf_c_message_free_unpacked (&pg->base, NULL);
        Basalt__V1__Queue *q = bas_k8s_queue_from_json (json, err, sizeof err);
        if (q)
            protobuf_c_message_free_unpacked (&q->base, NULL);
        Basalt__V1__PriorityClass *pc = bas_k8s_priorityclass_from_json (json, err, sizeof err);
        if (pc)
            protobuf_c_message_free_unpacked (&pc->base, NULL);
        cJSON_Delete (json);
    }
    //  Every field of a pod replaced by values of each wrong type: decoders
    //  return an object or NULL with a message, never crash or leak.
    static const char *const values[] = {"null", "1",  "\"s\"",     "true",
                                         "[]",   "{}", "[1,\"x\"]", "{\"a\":[{}]}"};
    static const char *const paths[][2] = {
        {"metadata"},
        {"metadata", "name"},
        {"metadata", "labels"},
        {"metadata", "ownerReferences"},
        {"spec"},
        {"spec", "containers"},
        {"spec", "initContainers"},
        {"spec", "tolerations"},
        {"spec", "nodeSelector"},
        {"spec", "affinity"},
        {"status"},
        {"status", "phase"},
    };
    cJSON *base = s_load ("objects/pod.json");
    for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++)
        for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
            cJSON *doc = cJSON_Duplicate (base, 1);
            cJSON *parent = doc;
            const char *key = paths[p][0];
            if (paths[p][1]) {
                parent = cJSON_GetObjectItem (doc, paths[p][0]);
                key = paths[p][1];
            }
            cJSON *item = cJSON_Parse (values[v]);
            if (!cJSON_ReplaceItemInObjectCaseSensitive (parent, key, item))
                cJSON_AddItemToObject (parent, key, item); // the pod had no such field
            char err[512] = "";
            Basalt__V1__Pod *pod = bas_k8s_pod_from_json (doc, err, sizeof err);
            if (pod)
                protobuf_c_message_free_unpacked (&pod->base, NULL);
            else
                assert_non_null (strstr (err, "pod"));
            cJSON_Delete (doc);
        }
    cJSON_Delete (base);
    //  The same for a node's images, the list and one entry's fields.
    base = s_load ("./node-minikube-images.json");
    for (size_t v = 0; v < sizeof values / sizeof values[0]; v++)
        for (int where = 0; where < 3; where++) {
            cJSON *doc = cJSON_Duplicate (base, 1);
            cJSON *parent = cJSON_GetObjectItem (doc, "status");
            const char *key = "images";
            if (where > 0) {
                parent = cJSON_GetArrayItem (cJSON_GetObjectItem (parent, "images"), 3);
                key = where == 1 ? "names" : "sizeBytes";
            }
            assert_true (
                cJSON_ReplaceItemInObjectCaseSensitive (parent, key, cJSON_Parse (values[v])));
            char err[512] = "";
            Basalt__V1__Node *node = bas_k8s_node_from_json (doc, err, sizeof err);
            if (node)
                protobuf_c_message_free_unpacked (&node->base, NULL);
            else
                assert_non_null (strstr (err, "node minikube: status.images"));
            cJSON_Delete (doc);
        }
    cJSON_Delete (base);
}

//  The kind table: every ObjectKind and every member of Object's oneof has
//  one row, numbered alike, keyed by the field its row names; each row's
//  decoder gives an Object the table recognises with the key it names.
static void
test_kind_table (void **state)
{
    (void)state;
    const ProtobufCEnumDescriptor *ed = &basalt__v1__object_kind__descriptor;
    for (unsigned i = 0; i < ed->n_values; i++) {
        if (ed->values[i].value == BASALT__V1__OBJECT_KIND__OBJECT_KIND_UNSPECIFIED)
            continue;
        const bas_kind_t *k = bas_kind_of ((Basalt__V1__ObjectKind)ed->values[i].value);
        if (!k)
            fail_msg ("ObjectKind %s has no row in the kind table", ed->values[i].name);
    }
    const ProtobufCMessageDescriptor *od = &basalt__v1__object__descriptor;
    for (unsigned i = 0; i < od->n_fields; i++)
        if (!bas_kind_of ((Basalt__V1__ObjectKind)od->fields[i].id))
            fail_msg ("Object member %s: no row numbered %u", od->fields[i].name, od->fields[i].id);
    assert_int_equal (bas_kind_count (), ed->n_values - 1);
    for (size_t i = 0; i < bas_kind_count (); i++) {
        const bas_kind_t *k = bas_kind_at (i);
        assert_true (k->kind > 0 && k->kind < BAS_KIND_LIMIT);
        for (size_t j = 0; j < i; j++) {
            assert_int_not_equal (bas_kind_at (j)->kind, k->kind);
            assert_string_not_equal (bas_kind_at (j)->name, k->name);
            assert_string_not_equal (bas_kind_at (j)->label, k->label);
        }
        assert_ptr_equal (bas_kind_named (k->name), k);
        const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field (od, k->kind);
        assert_non_null (f);
        assert_ptr_equal (f->descriptor, k->descriptor);
        const ProtobufCFieldDescriptor *key = protobuf_c_message_descriptor_get_field_by_name (
            k->descriptor, k->key == BAS_KIND_KEY_UID ? "uid" : "name");
        assert_non_null (key);
        assert_int_equal (key->offset, k->key_offset);
        //  Its decoder, through the one dispatch, on a minimal object.
        //  (A HyperNode's CRD requires spec.tier.)
        char json[512], err[256] = "";
        snprintf (json, sizeof json,
                  "{\"apiVersion\":\"%s\",\"kind\":\"%s\",\"metadata\":{\"name\":\"n1\","
                  "\"uid\":\"u1\"%s}%s}",
                  k->group_version, k->name, k->namespaced ? ",\"namespace\":\"ns\"" : "",
                  k->kind == BASALT__V1__OBJECT_KIND__OBJECT_KIND_HYPER_NODE
                      ? ",\"spec\":{\"tier\":1}"
                      : "");
        cJSON *doc = cJSON_Parse (json);
        Basalt__V1__Object *obj = bas_k8s_object_from_json (k->kind, doc, err, sizeof err);
        if (!obj)
            fail_msg ("%s: %s", k->name, err);
        assert_ptr_equal (bas_kind_of_object (obj), k);
        assert_string_equal (bas_kind_key (obj), k->key == BAS_KIND_KEY_UID ? "u1" : "n1");
        protobuf_c_message_free_unpacked (&obj->base, NULL);
        cJSON_Delete (doc);
    }
    char path[128];
    bas_kind_path (bas_kind_of (BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD), path, sizeof path);
    assert_string_equal (path, "/api/v1/pods");
    bas_kind_path (bas_kind_of (BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP), path, sizeof path);
    assert_string_equal (path, "/apis/scheduling.volcano.sh/v1beta1/podgroups");
    //  An unknown kind is an error, never a guess.
    assert_null (bas_kind_of (0));
    assert_null (bas_kind_of ((Basalt__V1__ObjectKind)BAS_KIND_LIMIT));
    assert_null (bas_kind_named ("Secret"));
    assert_int_equal (bas_k8s_kind_named ("Secret"),
                      BASALT__V1__OBJECT_KIND__OBJECT_KIND_UNSPECIFIED);
    char err[256] = "";
    cJSON *doc = cJSON_Parse ("{\"metadata\":{\"name\":\"x\"}}");
    assert_null (bas_k8s_object_from_json ((Basalt__V1__ObjectKind)99, doc, err, sizeof err));
    assert_non_null (strstr (err, "not a kind the scheduler reads"));
    cJSON_Delete (doc);
    Basalt__V1__Object empty = BASALT__V1__OBJECT__INIT;
    assert_null (bas_kind_of_object (&empty));
    assert_null (bas_kind_key (&empty));
}

//  spec.schedulingGates by name; the first input of an unbound pod that
//  Basalt does not implement and that would change where it may run, by
//  its path (README "Inputs Basalt refuses"); a bound pod is decoded
//  whatever it asked for (it is only accounted).
static void
test_pod_gates_and_unsupported (void **state)
{
    (void)state;
    char err[512] = "";
    cJSON *json = s_json ("{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},\"spec\":{"
                          "\"schedulingGates\":[{\"name\":\"example.com/quota\"},"
                          "{\"name\":\"b\"}],\"containers\":[{\"name\":\"c\"}]}}");
    Basalt__V1__Pod *pod = bas_k8s_pod_from_json (json, err, sizeof err);
    assert_non_null (pod);
    assert_int_equal (pod->n_scheduling_gates, 2);
    assert_string_equal (pod->scheduling_gates[0], "example.com/quota");
    assert_string_equal (pod->scheduling_gates[1], "b");
    assert_null (pod->unsupported);
    s_wire_check (&pod->base);
    protobuf_c_message_free_unpacked (&pod->base, NULL);
    cJSON_Delete (json);

    static const struct {
        const char *spec;
        const char *want;
    } held[] = {
        {"\"resourceClaims\":[{\"name\":\"gpu\",\"resourceClaimName\":\"g\"}]",
         "spec.resourceClaims: Dynamic Resource Allocation is not implemented"},
        {"\"resources\":{\"requests\":{\"cpu\":\"2\"}}", "spec.resources: pod-level resources"},
        {"\"volumes\":[{\"name\":\"d\",\"gcePersistentDisk\":{\"pdName\":\"x\"}}]",
         "spec.volumes[0].gcePersistentDisk (volume \"d\")"},
        {"\"volumes\":[{\"name\":\"d\",\"awsElasticBlockStore\":{\"volumeID\":\"x\"}}]",
         "spec.volumes[0].awsElasticBlockStore (volume \"d\")"},
        {"\"volumes\":[{\"name\":\"d\",\"azureDisk\":{\"diskName\":\"x\"}}]",
         "spec.volumes[0].azureDisk (volume \"d\")"},
        {"\"volumes\":[{\"name\":\"d\",\"rbd\":{\"image\":\"x\"}}]",
         "spec.volumes[0].rbd (volume \"d\")"},
        {"\"volumes\":[{\"name\":\"d\",\"iscsi\":{\"iqn\":\"x\"}}]",
         "spec.volumes[0].iscsi (volume \"d\")"},
        {"\"volumes\":[{\"name\":\"d\",\"cinder\":{\"volumeID\":\"x\"}}]",
         "spec.volumes[0].cinder (volume \"d\")"},
        //  What the scheduler does not need, or decides itself (claims):
        //  nothing held.
        {"\"volumes\":[{\"name\":\"data\",\"persistentVolumeClaim\":{\"claimName\":\"x\"}}]", NULL},
        {"\"volumes\":[{\"name\":\"e\",\"emptyDir\":{}},{\"name\":\"s\",\"secret\":{}}],"
         "\"resourceClaims\":[],\"resources\":{}",
         NULL},
    };
    for (size_t i = 0; i < sizeof held / sizeof held[0]; i++) {
        for (int bound = 0; bound < 2; bound++) {
            char text[768];
            snprintf (text, sizeof text,
                      "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},\"spec\":{%s%s,"
                      "\"containers\":[{\"name\":\"c\"}]}}",
                      bound ? "\"nodeName\":\"n1\"," : "", held[i].spec);
            json = s_json (text);
            pod = bas_k8s_pod_from_json (json, err, sizeof err);
            assert_non_null (pod);
            if (bound || !held[i].want)
                assert_null (pod->unsupported);
            else {
                assert_non_null (pod->unsupported);
                if (strncmp (pod->unsupported, held[i].want, strlen (held[i].want)) != 0)
                    print_error ("case %zu:\n got  %s\n want %s\n", i, pod->unsupported,
                                 held[i].want);
                assert_int_equal (strncmp (pod->unsupported, held[i].want, strlen (held[i].want)),
                                  0);
            }
            protobuf_c_message_free_unpacked (&pod->base, NULL);
            cJSON_Delete (json);
        }
    }

    //  A gate must be an object with a name.
    static const char *const bad[] = {
        "\"schedulingGates\":[\"x\"]",
        "\"schedulingGates\":[{}]",
        "\"schedulingGates\":[{\"name\":1}]",
        "\"schedulingGates\":{}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[512];
        snprintf (text, sizeof text,
                  "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},\"spec\":{%s}}", bad[i]);
        json = s_json (text);
        assert_null (bas_k8s_pod_from_json (json, err, sizeof err));
        assert_non_null (strstr (err, "spec.schedulingGates"));
        cJSON_Delete (json);
    }
}

//  A pod's claims, in spec.volumes order: a persistentVolumeClaim's
//  claimName, a generic ephemeral volume's "<pod>-<volume>", for a pod
//  bound or not; a claim volume without its name is refused.
static void
test_pod_claims (void **state)
{
    (void)state;
    char err[512];
    const char *text =
        "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},\"spec\":{%s\"volumes\":["
        "{\"name\":\"cfg\",\"configMap\":{\"name\":\"x\"}},"
        "{\"name\":\"data\",\"persistentVolumeClaim\":{\"claimName\":\"dataset\"}},"
        "{\"name\":\"scratch\",\"ephemeral\":{\"volumeClaimTemplate\":{}}}],"
        "\"containers\":[{\"name\":\"c\"}]}}";
    for (int bound = 0; bound < 2; bound++) {
        char buf[1024];
        snprintf (buf, sizeof buf, text, bound ? "\"nodeName\":\"n1\"," : "");
        cJSON *json = s_json (buf);
        Basalt__V1__Pod *pod = bas_k8s_pod_from_json (json, err, sizeof err);
        assert_non_null (pod);
        assert_null (pod->unsupported);
        assert_int_equal (pod->n_claims, 2);
        assert_string_equal (pod->claims[0]->name, "dataset");
        assert_false (pod->claims[0]->ephemeral);
        assert_string_equal (pod->claims[1]->name, "p-scratch");
        assert_true (pod->claims[1]->ephemeral);
        s_wire_check (&pod->base);
        protobuf_c_message_free_unpacked (&pod->base, NULL);
        cJSON_Delete (json);
    }
    static const char *const bad[] = {
        "{\"name\":\"d\",\"persistentVolumeClaim\":{}}",
        "{\"name\":\"d\",\"persistentVolumeClaim\":{\"claimName\":7}}",
        "{\"ephemeral\":{}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char buf[512];
        snprintf (buf, sizeof buf,
                  "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},\"spec\":{\"volumes\":[%s],"
                  "\"containers\":[{\"name\":\"c\"}]}}",
                  bad[i]);
        cJSON *json = s_json (buf);
        assert_null (bas_k8s_pod_from_json (json, err, sizeof err));
        assert_non_null (strstr (err, "pod ns/p: spec.volumes[0]"));
        cJSON_Delete (json);
    }
}

//  PersistentVolumeClaim, PersistentVolume and StorageClass: the fields
//  volume binding reads, the defaults, and bad input named by its path.
static void
test_storage (void **state)
{
    (void)state;
    char err[512];
    cJSON *json = s_json (
        "{\"metadata\":{\"name\":\"data\",\"namespace\":\"ns\",\"uid\":\"u1\","
        "\"resourceVersion\":\"5\",\"annotations\":{\"pv.kubernetes.io/bind-completed\":\"yes\","
        "\"volume.kubernetes.io/selected-node\":\"n1\"},\"ownerReferences\":[{\"apiVersion\":"
        "\"v1\",\"kind\":\"Pod\",\"name\":\"p\",\"uid\":\"pod-uid\",\"controller\":true}]},"
        "\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"storageClassName\":\"local\","
        "\"volumeName\":\"pv-1\",\"resources\":{\"requests\":{\"storage\":\"10Gi\"}},"
        "\"selector\":{\"matchLabels\":{\"tier\":\"fast\"}}},\"status\":{\"phase\":\"Bound\"}}");
    Basalt__V1__PersistentVolumeClaim *pvc = bas_k8s_pvc_from_json (json, err, sizeof err);
    assert_non_null (pvc);
    assert_string_equal (pvc->uid, "u1");
    assert_string_equal (pvc->namespace_, "ns");
    assert_string_equal (pvc->volume_name, "pv-1");
    assert_string_equal (pvc->storage_class, "local");
    assert_string_equal (pvc->phase, "Bound");
    assert_true (pvc->bind_completed);
    assert_string_equal (pvc->selected_node, "n1");
    assert_int_equal (pvc->n_access_modes, 1);
    assert_true (pvc->has_request_bytes);
    assert_int_equal (pvc->request_bytes, 10LL << 30);
    assert_non_null (pvc->selector);
    assert_string_equal (pvc->owner_uid, "pod-uid");
    s_wire_check (&pvc->base);
    protobuf_c_message_free_unpacked (&pvc->base, NULL);
    cJSON_Delete (json);

    //  The beta annotation names the class where spec has none; no class
    //  and no bind-completed annotation otherwise.
    json = s_json ("{\"metadata\":{\"name\":\"d\",\"namespace\":\"ns\",\"annotations\":"
                   "{\"volume.beta.kubernetes.io/storage-class\":\"old\"}},\"spec\":{}}");
    pvc = bas_k8s_pvc_from_json (json, err, sizeof err);
    assert_non_null (pvc);
    assert_string_equal (pvc->storage_class, "old");
    assert_false (pvc->bind_completed);
    assert_null (pvc->volume_name);
    protobuf_c_message_free_unpacked (&pvc->base, NULL);
    cJSON_Delete (json);

    json = s_json ("{\"metadata\":{\"name\":\"pv-1\",\"uid\":\"v1\",\"labels\":{\"topology."
                   "kubernetes.io/zone\":\"a\"}},\"spec\":{\"capacity\":{\"storage\":\"1Ti\"},"
                   "\"accessModes\":[\"ReadWriteOnce\",\"ReadOnlyMany\"],\"storageClassName\":"
                   "\"local\",\"claimRef\":{\"namespace\":\"ns\",\"name\":\"data\",\"uid\":\"u1\"},"
                   "\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[{\"matchExpressions\":"
                   "[{\"key\":\"kubernetes.io/hostname\",\"operator\":\"In\",\"values\":[\"n1\"]}]}"
                   "]}}},\"status\":{\"phase\":\"Bound\"}}");
    Basalt__V1__PersistentVolume *pv = bas_k8s_pv_from_json (json, err, sizeof err);
    assert_non_null (pv);
    assert_string_equal (pv->name, "pv-1");
    assert_int_equal (pv->capacity_bytes, 1LL << 40);
    assert_int_equal (pv->n_access_modes, 2);
    assert_string_equal (pv->claim_name, "data");
    assert_string_equal (pv->claim_uid, "u1");
    assert_true (pv->has_node_affinity);
    assert_int_equal (pv->n_node_affinity, 1);
    assert_string_equal (pv->node_affinity[0]->match_expressions[0]->values[0], "n1");
    assert_int_equal (pv->n_labels, 1);
    assert_null (pv->csi_driver);
    s_wire_check (&pv->base);
    protobuf_c_message_free_unpacked (&pv->base, NULL);
    cJSON_Delete (json);

    json = s_json ("{\"metadata\":{\"name\":\"local\"},\"provisioner\":\"example.com/x\","
                   "\"allowedTopologies\":[{\"matchLabelExpressions\":[{\"key\":\"topology."
                   "kubernetes.io/zone\",\"values\":[\"a\",\"b\"]}]}]}");
    Basalt__V1__StorageClass *sc = bas_k8s_storageclass_from_json (json, err, sizeof err);
    assert_non_null (sc);
    assert_string_equal (sc->volume_binding_mode, "Immediate"); // the API server's default
    assert_int_equal (sc->n_allowed_topologies, 1);
    assert_string_equal (sc->allowed_topologies[0]->match_expressions[0]->operator_, "In");
    assert_int_equal (sc->allowed_topologies[0]->match_expressions[0]->n_values, 2);
    s_wire_check (&sc->base);
    protobuf_c_message_free_unpacked (&sc->base, NULL);
    cJSON_Delete (json);

    //  A CSINode: a negative count is kept (the session refuses the node
    //  saying so), an absent one is no limit, a driver needs a name.
    json = s_json ("{\"metadata\":{\"name\":\"n1\"},\"spec\":{\"drivers\":[{\"name\":"
                   "\"disk.example.com\",\"nodeID\":\"i-1\",\"allocatable\":{\"count\":-1}},"
                   "{\"name\":\"nfs.example.com\",\"nodeID\":\"i-1\"}]}}");
    Basalt__V1__CSINode *cn = bas_k8s_csinode_from_json (json, err, sizeof err);
    assert_non_null (cn);
    assert_int_equal (cn->n_drivers, 2);
    assert_true (cn->drivers[0]->has_count);
    assert_int_equal (cn->drivers[0]->count, -1);
    assert_false (cn->drivers[1]->has_count);
    s_wire_check (&cn->base);
    protobuf_c_message_free_unpacked (&cn->base, NULL);
    cJSON_Delete (json);
    json = s_json ("{\"metadata\":{\"name\":\"n1\"},\"spec\":{\"drivers\":[{\"nodeID\":"
                   "\"i-1\"}]}}");
    assert_null (bas_k8s_csinode_from_json (json, err, sizeof err));
    assert_string_equal (err, "csinode n1: spec.drivers[0].name: required");
    cJSON_Delete (json);
    json = s_json ("{\"metadata\":{\"name\":\"n1\"},\"spec\":{\"drivers\":[{\"name\":\"d\","
                   "\"allocatable\":{\"count\":\"many\"}}]}}");
    assert_null (bas_k8s_csinode_from_json (json, err, sizeof err));
    assert_non_null (strstr (err, "csinode n1: spec.drivers[0].allocatable.count"));
    cJSON_Delete (json);

    static const struct {
        int kind; // 0 claim, 1 volume, 2 class
        const char *json;
        const char *want;
    } bad[] = {
        {0,
         "{\"metadata\":{\"name\":\"d\",\"namespace\":\"ns\"},\"spec\":{\"resources\":"
         "{\"requests\":{\"storage\":\"12Qi\"}}}}",
         "persistentvolumeclaim ns/d: spec.resources.requests.storage:"},
        {0,
         "{\"metadata\":{\"name\":\"d\",\"namespace\":\"ns\"},\"spec\":{\"resources\":"
         "{\"requests\":{\"storage\":\"-1Gi\"}}}}",
         "persistentvolumeclaim ns/d: spec.resources.requests.storage: must not be negative"},
        {0, "{\"metadata\":{\"name\":\"d\",\"namespace\":\"ns\"},\"spec\":{\"accessModes\":7}}",
         "persistentvolumeclaim ns/d: spec.accessModes"},
        {1,
         "{\"metadata\":{\"name\":\"v\"},\"spec\":{\"nodeAffinity\":{\"required\":"
         "{\"nodeSelectorTerms\":[]}}}}",
         "persistentvolume v: spec.nodeAffinity.required.nodeSelectorTerms: must have at least "
         "one term"},
        {1,
         "{\"metadata\":{\"name\":\"v\"},\"spec\":{\"nodeAffinity\":{\"required\":"
         "{\"nodeSelectorTerms\":[\"x\"]}}}}",
         "persistentvolume v: spec.nodeAffinity.required.nodeSelectorTerms: expected an object"},
        {1, "{\"metadata\":{\"name\":\"v\"},\"spec\":{\"capacity\":{\"storage\":true}}}",
         "persistentvolume v: spec.capacity.storage"},
        {2, "{\"metadata\":{\"name\":\"c\"},\"volumeBindingMode\":\"Later\"}",
         "storageclass c: volumeBindingMode: \"Later\" is neither Immediate nor "
         "WaitForFirstConsumer"},
        {2,
         "{\"metadata\":{\"name\":\"c\"},\"allowedTopologies\":[{\"matchLabelExpressions\":"
         "[{\"key\":\"z\",\"values\":\"a\"}]}]}",
         "storageclass c: allowedTopologies.matchLabelExpressions.values"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json = s_json (bad[i].json);
        err[0] = 0;
        ProtobufCMessage *m =
            bad[i].kind == 0 ? (ProtobufCMessage *)bas_k8s_pvc_from_json (json, err, sizeof err)
            : bad[i].kind == 1
                ? (ProtobufCMessage *)bas_k8s_pv_from_json (json, err, sizeof err)
                : (ProtobufCMessage *)bas_k8s_storageclass_from_json (json, err, sizeof err);
        if (m || strncmp (err, bad[i].want, strlen (bad[i].want)) != 0)
            print_error ("case %zu:\n got  %s\n want %s\n", i, err, bad[i].want);
        assert_null (m);
        assert_int_equal (strncmp (err, bad[i].want, strlen (bad[i].want)), 0);
        cJSON_Delete (json);
    }
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_pod_fixture),
        cmocka_unit_test (test_pod_images),
        cmocka_unit_test (test_pod_watch_stream),
        cmocka_unit_test (test_pod_requests),
        cmocka_unit_test (test_pod_volcano),
        cmocka_unit_test (test_pod_errors),
        cmocka_unit_test (test_pod_gates_and_unsupported),
        cmocka_unit_test (test_nodes),
        cmocka_unit_test (test_pod_affinity),
        cmocka_unit_test (test_pod_spread),
        cmocka_unit_test (test_pod_preferred),
        cmocka_unit_test (test_resourcequota),
        cmocka_unit_test (test_pdb),
        cmocka_unit_test (test_hypernode),
        cmocka_unit_test (test_podgroup_network_topology),
        cmocka_unit_test (test_podgroup),
        cmocka_unit_test (test_queue),
        cmocka_unit_test (test_priorityclass),
        cmocka_unit_test (test_time),
        cmocka_unit_test (test_kind_table),
        cmocka_unit_test (test_pod_claims),
        cmocka_unit_test (test_storage),
        cmocka_unit_test (test_garbage),
        cmocka_unit_test (test_key_given_twice),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
