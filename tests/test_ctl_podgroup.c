/*  test_ctl_podgroup: the PodGroup controller-svc creates for a plain pod,
    as Volcano's PodGroup controller makes it, written as example usage:
    every field of the created object (owner references, minMember from the
    owner's annotation or the pod's, minResources, priorityClassName, queue,
    inherited annotations, phase), which pods get one, and the patch that
    brings an existing group to a pod's current spec.
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
#include "ctl_podgroup.h"

#define FIXTURES BASALT_SHARED_DIR "/k8s-fixtures/objects/"

//  A pod as the controller's replica holds it (borrowed strings).
typedef struct {
    Basalt__V1__Pod pod;
    Basalt__V1__OwnerRef owner;
    Basalt__V1__Resources req;
    Basalt__V1__Scalar gpu;
    Basalt__V1__Scalar *scalars[1];
    Basalt__V1__KeyValue ann[3];
    Basalt__V1__KeyValue *anns[3];
} s_pod_t;

static Basalt__V1__Pod *
s_pod (s_pod_t *p, bool with_owner)
{
    memset (p, 0, sizeof *p);
    basalt__v1__pod__init (&p->pod);
    p->pod.uid = "pod-uid-1";
    p->pod.namespace_ = "team-a";
    p->pod.name = "web-7d9f-x2x2";
    p->pod.scheduler_name = "volcano";
    p->pod.phase = "Pending";
    if (with_owner) {
        basalt__v1__owner_ref__init (&p->owner);
        p->owner.kind = "ReplicaSet";
        p->owner.name = "web-7d9f";
        p->owner.uid = "rs-uid-9";
        p->owner.api_version = "apps/v1";
        p->pod.owner = &p->owner;
    }
    return &p->pod;
}

static void
s_requests (s_pod_t *p, int64_t milli_cpu, int64_t memory, int64_t gpus)
{
    basalt__v1__resources__init (&p->req);
    p->req.has_milli_cpu = milli_cpu != 0;
    p->req.milli_cpu = milli_cpu;
    p->req.has_memory = memory != 0;
    p->req.memory = memory;
    if (gpus) {
        basalt__v1__scalar__init (&p->gpu);
        p->gpu.name = "nvidia.com/gpu";
        p->gpu.has_value = 1;
        p->gpu.value = gpus;
        p->scalars[0] = &p->gpu;
        p->req.scalars = p->scalars;
        p->req.n_scalars = 1;
    }
    p->pod.requests = &p->req;
}

static const cJSON *
s_at (const cJSON *obj, const char *path)
{
    char copy[256];
    snprintf (copy, sizeof copy, "%s", path);
    char *save = NULL;
    for (char *k = strtok_r (copy, ".", &save); k && obj; k = strtok_r (NULL, ".", &save))
        obj = cJSON_GetObjectItemCaseSensitive (obj, k);
    return obj;
}

static const char *
s_str (const cJSON *obj, const char *path)
{
    const cJSON *v = s_at (obj, path);
    return cJSON_IsString (v) ? v->valuestring : NULL;
}

//  Build with no owner annotations and expect no warning.
//  A string member by its exact key (keys like "volcano.sh/x" have dots).
static const char *
s_key (const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive (obj, key);
    return cJSON_IsString (v) ? v->valuestring : "(absent)";
}

static cJSON *
s_build (const Basalt__V1__Pod *pod)
{
    char warn[256] = "x";
    cJSON *pg = ctl_podgroup_build (pod, NULL, "default", warn, sizeof warn, NULL);
    assert_non_null (pg);
    if (warn[0])
        print_error ("unexpected warning: %s\n", warn);
    assert_string_equal (warn, "");
    return pg;
}

static void
test_name (void **state)
{
    (void)state;
    s_pod_t p;
    char buf[128];
    //  Named after the controller owner, so all of a ReplicaSet's pods share it.
    assert_string_equal (ctl_podgroup_name (s_pod (&p, true), buf, sizeof buf),
                         "podgroup-rs-uid-9");
    //  A bare pod's group is its own.
    assert_string_equal (ctl_podgroup_name (s_pod (&p, false), buf, sizeof buf),
                         "podgroup-pod-uid-1");
    //  An owner without a uid does not count.
    s_pod (&p, true);
    p.owner.uid = "";
    assert_string_equal (ctl_podgroup_name (&p.pod, buf, sizeof buf), "podgroup-pod-uid-1");

    cJSON *pg = s_build (s_pod (&p, true));
    assert_string_equal (s_str (pg, "metadata.name"), "podgroup-rs-uid-9");
    assert_string_equal (s_str (pg, "metadata.namespace"), "team-a");
    assert_string_equal (s_str (pg, "apiVersion"), "scheduling.volcano.sh/v1beta1");
    assert_string_equal (s_str (pg, "kind"), "PodGroup");
    cJSON_Delete (pg);
}

static void
test_owner_references (void **state)
{
    (void)state;
    s_pod_t p;
    cJSON *pg = s_build (s_pod (&p, true));
    const cJSON *owners = s_at (pg, "metadata.ownerReferences");
    assert_true (cJSON_IsArray (owners));
    assert_int_equal (cJSON_GetArraySize (owners), 1);
    const cJSON *ref = cJSON_GetArrayItem (owners, 0);
    assert_string_equal (s_str (ref, "apiVersion"), "apps/v1");
    assert_string_equal (s_str (ref, "kind"), "ReplicaSet");
    assert_string_equal (s_str (ref, "name"), "web-7d9f");
    assert_string_equal (s_str (ref, "uid"), "rs-uid-9");
    assert_true (cJSON_IsTrue (s_at (ref, "controller")));
    cJSON_Delete (pg);

    //  An owner of unknown API version gets apps/v1.
    s_pod (&p, true);
    p.owner.api_version = NULL;
    pg = s_build (&p.pod);
    ref = cJSON_GetArrayItem (s_at (pg, "metadata.ownerReferences"), 0);
    assert_string_equal (s_str (ref, "apiVersion"), "apps/v1");
    cJSON_Delete (pg);

    //  A bare pod owns its group: deleting the pod deletes the group.
    pg = s_build (s_pod (&p, false));
    owners = s_at (pg, "metadata.ownerReferences");
    assert_int_equal (cJSON_GetArraySize (owners), 1);
    ref = cJSON_GetArrayItem (owners, 0);
    assert_string_equal (s_str (ref, "apiVersion"), "v1");
    assert_string_equal (s_str (ref, "kind"), "Pod");
    assert_string_equal (s_str (ref, "name"), "web-7d9f-x2x2");
    assert_string_equal (s_str (ref, "uid"), "pod-uid-1");
    assert_true (cJSON_IsTrue (s_at (ref, "controller")));
    cJSON_Delete (pg);
}

static void
test_min_member (void **state)
{
    (void)state;
    s_pod_t p;
    cJSON *pg = s_build (s_pod (&p, true));
    assert_int_equal (s_at (pg, "spec.minMember")->valueint, 1);
    assert_true (cJSON_IsNumber (s_at (pg, "spec.minMember")));
    cJSON_Delete (pg);

    s_pod (&p, true);
    p.pod.min_member_annotation = "";
    pg = s_build (&p.pod);
    assert_int_equal (s_at (pg, "spec.minMember")->valueint, 1);
    cJSON_Delete (pg);

    p.pod.min_member_annotation = "4";
    pg = s_build (&p.pod);
    assert_int_equal (s_at (pg, "spec.minMember")->valueint, 4);
    cJSON_Delete (pg);

    //  Malformed: like Volcano, minMember stays 1; the warning names the
    //  pod and the value, for the Event and the log.
    const char *bad[] = {"abc", "-1", "3x", "1.5", "99999999999999999999", "2 ", "2147483648"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        p.pod.min_member_annotation = (char *)bad[i];
        char warn[256] = "";
        const char *whose = NULL;
        pg = ctl_podgroup_build (&p.pod, NULL, "default", warn, sizeof warn, &whose);
        assert_non_null (pg);
        assert_int_equal (s_at (pg, "spec.minMember")->valueint, 1);
        cJSON_Delete (pg);
        assert_non_null (strstr (warn, "team-a/web-7d9f-x2x2"));
        char quoted[64];
        snprintf (quoted, sizeof quoted, "\"%s\"", bad[i]);
        assert_non_null (strstr (warn, quoted));
        assert_non_null (strstr (warn, "group-min-member"));
        assert_string_equal (whose, "pod");
    }
    p.pod.min_member_annotation = "2147483647";
    pg = s_build (&p.pod);
    assert_int_equal ((long)s_at (pg, "spec.minMember")->valuedouble, 2147483647L);
    cJSON_Delete (pg);
}

//  Volcano reads minMember from the OWNER's annotation (it GETs the
//  ReplicaSet, StatefulSet, Job); the pod's own annotation is the fallback.
static void
test_owner_annotations (void **state)
{
    (void)state;
    s_pod_t p;
    s_pod (&p, true);
    s_requests (&p, 500, 1LL << 30, 1);
    p.pod.min_member_annotation = "2";
    cJSON *owner = cJSON_Parse ("{\"scheduling.volcano.sh/group-min-member\":\"3\","
                                "\"volcano.sh/preemptable\":\"false\","
                                "\"volcano.sh/revocable-zone\":\"*\"}");
    char warn[256] = "x";
    cJSON *pg = ctl_podgroup_build (&p.pod, owner, "default", warn, sizeof warn, NULL);
    assert_string_equal (warn, "");
    //  The owner's value wins over the pod's.
    assert_int_equal (s_at (pg, "spec.minMember")->valueint, 3);
    //  minResources is the pod's requests times minMember.
    assert_string_equal (s_str (pg, "spec.minResources.cpu"), "1500m");
    assert_string_equal (s_str (pg, "spec.minResources.memory"), "3Gi");
    const cJSON *gpu =
        cJSON_GetObjectItemCaseSensitive (s_at (pg, "spec.minResources"), "nvidia.com/gpu");
    assert_string_equal (gpu->valuestring, "3");
    //  The owner's volcano.sh/ annotations are inherited; the
    //  scheduling.volcano.sh/ key is an input, not copied.
    const cJSON *ann = s_at (pg, "metadata.annotations");
    assert_int_equal (cJSON_GetArraySize (ann), 2);
    assert_string_equal (s_key (ann, "volcano.sh/preemptable"), "false");
    assert_null (cJSON_GetObjectItemCaseSensitive (ann, "scheduling.volcano.sh/group-min-member"));
    cJSON_Delete (pg);

    //  The pod's own volcano.sh/ annotation overrides the owner's.
    basalt__v1__key_value__init (&p.ann[0]);
    p.ann[0].key = "volcano.sh/preemptable";
    p.ann[0].value = "true";
    p.anns[0] = &p.ann[0];
    p.pod.volcano_annotations = p.anns;
    p.pod.n_volcano_annotations = 1;
    pg = ctl_podgroup_build (&p.pod, owner, "default", warn, sizeof warn, NULL);
    ann = s_at (pg, "metadata.annotations");
    assert_int_equal (cJSON_GetArraySize (ann), 2);
    assert_string_equal (s_key (ann, "volcano.sh/preemptable"), "true");
    assert_string_equal (s_key (ann, "volcano.sh/revocable-zone"), "*");
    cJSON_Delete (pg);
    p.pod.n_volcano_annotations = 0;

    //  An owner without the annotation: the pod's is the fallback.
    cJSON_DeleteItemFromObject (owner, "scheduling.volcano.sh/group-min-member");
    pg = ctl_podgroup_build (&p.pod, owner, "default", warn, sizeof warn, NULL);
    assert_int_equal (s_at (pg, "spec.minMember")->valueint, 2);
    assert_string_equal (s_str (pg, "spec.minResources.cpu"), "1");
    cJSON_Delete (pg);

    //  An owner's malformed value: minMember 1 (not the pod's: the owner's
    //  annotation is the one that counts), and a warning naming the owner.
    cJSON_AddStringToObject (owner, "scheduling.volcano.sh/group-min-member", "three");
    const char *whose = NULL;
    pg = ctl_podgroup_build (&p.pod, owner, "default", warn, sizeof warn, &whose);
    assert_int_equal (s_at (pg, "spec.minMember")->valueint, 1);
    assert_string_equal (whose, "owner");
    assert_non_null (strstr (warn, "ReplicaSet team-a/web-7d9f"));
    assert_non_null (strstr (warn, "\"three\""));
    cJSON_Delete (pg);

    //  minMember 0 (allowed): no minResources.
    cJSON_ReplaceItemInObject (owner, "scheduling.volcano.sh/group-min-member",
                               cJSON_CreateString ("0"));
    pg = ctl_podgroup_build (&p.pod, owner, "default", warn, sizeof warn, NULL);
    assert_int_equal (s_at (pg, "spec.minMember")->valueint, 0);
    assert_null (s_at (pg, "spec.minResources"));
    cJSON_Delete (pg);
    cJSON_Delete (owner);
}

static void
test_min_resources (void **state)
{
    (void)state;
    s_pod_t p;
    s_pod (&p, true);
    s_requests (&p, 500, 256LL << 20, 0);
    cJSON *pg = s_build (&p.pod);
    assert_string_equal (s_str (pg, "spec.minResources.cpu"), "500m");
    assert_string_equal (s_str (pg, "spec.minResources.memory"), "256Mi");
    cJSON_Delete (pg);

    s_requests (&p, 2000, 3LL << 30, 2);
    pg = s_build (&p.pod);
    assert_string_equal (s_str (pg, "spec.minResources.cpu"), "2");
    assert_string_equal (s_str (pg, "spec.minResources.memory"), "3Gi");
    const cJSON *gpu =
        cJSON_GetObjectItemCaseSensitive (s_at (pg, "spec.minResources"), "nvidia.com/gpu");
    assert_true (cJSON_IsString (gpu));
    assert_string_equal (gpu->valuestring, "2");
    cJSON_Delete (pg);

    //  Only memory: no cpu key.
    s_requests (&p, 0, 1000, 0);
    pg = s_build (&p.pod);
    assert_null (s_at (pg, "spec.minResources.cpu"));
    assert_string_equal (s_str (pg, "spec.minResources.memory"), "1000");
    cJSON_Delete (pg);

    //  No requests: no minResources at all.
    s_requests (&p, 0, 0, 0);
    pg = s_build (&p.pod);
    assert_null (s_at (pg, "spec.minResources"));
    cJSON_Delete (pg);
    p.pod.requests = NULL;
    pg = s_build (&p.pod);
    assert_null (s_at (pg, "spec.minResources"));
    cJSON_Delete (pg);
}

static void
test_priority_queue_annotations_phase (void **state)
{
    (void)state;
    s_pod_t p;
    s_pod (&p, true);
    cJSON *pg = s_build (&p.pod);
    assert_null (s_at (pg, "spec.priorityClassName"));
    assert_string_equal (s_str (pg, "spec.queue"), "default");
    assert_null (s_at (pg, "metadata.annotations"));
    assert_string_equal (s_str (pg, "status.phase"), "Pending");
    cJSON_Delete (pg);

    p.pod.priority_class_name = "high-priority";
    p.pod.queue_annotation = "research";
    const char *keys[] = {"volcano.sh/preemptable", "volcano.sh/task-spec", "example.com/x"};
    const char *values[] = {"true", "worker", "nope"};
    for (int i = 0; i < 3; i++) {
        basalt__v1__key_value__init (&p.ann[i]);
        p.ann[i].key = (char *)keys[i];
        p.ann[i].value = (char *)values[i];
        p.anns[i] = &p.ann[i];
    }
    p.pod.volcano_annotations = p.anns;
    p.pod.n_volcano_annotations = 3;
    char err[256];
    pg = ctl_podgroup_build (&p.pod, NULL, "fallback-queue", err, sizeof err, NULL);
    assert_non_null (pg);
    assert_string_equal (s_str (pg, "spec.priorityClassName"), "high-priority");
    assert_string_equal (s_str (pg, "spec.queue"), "research");
    const cJSON *ann = s_at (pg, "metadata.annotations");
    assert_int_equal (cJSON_GetArraySize (ann), 2);
    assert_string_equal (
        cJSON_GetObjectItemCaseSensitive (ann, "volcano.sh/preemptable")->valuestring, "true");
    assert_string_equal (
        cJSON_GetObjectItemCaseSensitive (ann, "volcano.sh/task-spec")->valuestring, "worker");
    assert_null (cJSON_GetObjectItemCaseSensitive (ann, "example.com/x"));
    cJSON_Delete (pg);

    //  No queue annotation: the controller's default queue.
    p.pod.queue_annotation = "";
    pg = ctl_podgroup_build (&p.pod, NULL, "fallback-queue", err, sizeof err, NULL);
    assert_string_equal (s_str (pg, "spec.queue"), "fallback-queue");
    cJSON_Delete (pg);
}

//  A real pod from the API (a ReplicaSet's pod with two containers) gets a
//  group the cache can read back.
static void
test_from_api_pod (void **state)
{
    (void)state;
    FILE *f = fopen (FIXTURES "pod.json", "rb");
    assert_non_null (f);
    static char text[65536];
    size_t n = fread (text, 1, sizeof text - 1, f);
    fclose (f);
    text[n] = 0;
    cJSON *json = cJSON_Parse (text);
    assert_non_null (json);
    char err[512];
    Basalt__V1__Pod *pod = bas_k8s_pod_from_json (json, err, sizeof err);
    cJSON_Delete (json);
    assert_non_null (pod);

    cJSON *pg = s_build (pod);
    assert_string_equal (s_str (pg, "metadata.name"),
                         "podgroup-ca82db22-ef61-49db-ad84-35e502375121");
    assert_string_equal (s_str (pg, "metadata.namespace"), "di-288312");
    const cJSON *ref = cJSON_GetArrayItem (s_at (pg, "metadata.ownerReferences"), 0);
    assert_string_equal (s_str (ref, "kind"), "ReplicaSet");
    assert_string_equal (s_str (ref, "name"), "vsystem-867f4b77cc");
    //  vsystem (500m, 256Mi) + auth (200m, 128Mi).
    assert_string_equal (s_str (pg, "spec.minResources.cpu"), "700m");
    assert_string_equal (s_str (pg, "spec.minResources.memory"), "384Mi");

    //  What the controller creates, the cache decodes.
    cJSON_AddItemToObject (cJSON_GetObjectItemCaseSensitive (pg, "metadata"), "uid",
                           cJSON_CreateString ("new-pg-uid"));
    Basalt__V1__PodGroup *back = bas_k8s_podgroup_from_json (pg, err, sizeof err);
    if (!back)
        print_error ("%s\n", err);
    assert_non_null (back);
    assert_string_equal (back->name, "podgroup-ca82db22-ef61-49db-ad84-35e502375121");
    assert_int_equal (back->min_member, 1);
    assert_string_equal (back->queue, "default");
    assert_string_equal (back->status->phase, "Pending");
    assert_int_equal (back->n_owners, 1);
    assert_int_equal (back->min_resources->milli_cpu, 700);
    assert_int_equal (back->min_resources->memory, 384LL << 20);
    protobuf_c_message_free_unpacked (&back->base, NULL);
    cJSON_Delete (pg);
    protobuf_c_message_free_unpacked (&pod->base, NULL);
}

static void
test_needs_group (void **state)
{
    (void)state;
    s_pod_t p;
    const char *names = "basalt, volcano";
    assert_true (ctl_pod_needs_group (s_pod (&p, true), names));
    assert_true (ctl_pod_needs_group (s_pod (&p, false), names));
    p.pod.scheduler_name = "basalt";
    assert_true (ctl_pod_needs_group (&p.pod, names));
    assert_true (ctl_pod_needs_group (&p.pod, " volcano ,basalt "));
    assert_true (ctl_pod_needs_group (&p.pod, "basalt"));

    //  Other schedulers' pods, and names that are only prefixes or extensions.
    const char *others[] = {"default-scheduler", "volcan", "volcano2", "basalt,", "", NULL};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        p.pod.scheduler_name = (char *)others[i];
        assert_false (ctl_pod_needs_group (&p.pod, names));
    }
    s_pod (&p, true);
    assert_false (ctl_pod_needs_group (&p.pod, ""));
    assert_false (ctl_pod_needs_group (&p.pod, NULL));

    //  A pod that names its group already has one.
    s_pod (&p, true);
    p.pod.group = "my-job";
    assert_false (ctl_pod_needs_group (&p.pod, names));
    p.pod.group = "";
    assert_true (ctl_pod_needs_group (&p.pod, names));

    //  Being deleted, or finished.
    s_pod (&p, true);
    p.pod.has_deleting = 1;
    p.pod.deleting = 1;
    assert_false (ctl_pod_needs_group (&p.pod, names));
    const char *phases[] = {"Succeeded", "Failed"};
    for (int i = 0; i < 2; i++) {
        s_pod (&p, true);
        p.pod.phase = (char *)phases[i];
        assert_false (ctl_pod_needs_group (&p.pod, names));
    }
    s_pod (&p, true);
    p.pod.phase = "Running";
    assert_true (ctl_pod_needs_group (&p.pod, names));
    //  No uid or name: nothing to name the group after.
    p.pod.uid = NULL;
    assert_false (ctl_pod_needs_group (&p.pod, names));
}

//  Scaled up again, an owner's existing group follows its current pod:
//  only what differs is patched, with the group's uid and resourceVersion
//  as preconditions.
static void
test_update_patch (void **state)
{
    (void)state;
    s_pod_t p;
    s_pod (&p, true);
    s_requests (&p, 500, 256LL << 20, 0);
    cJSON *want = s_build (&p.pod);
    //  What the cache decodes from the created object is what it wants.
    cJSON *meta = cJSON_GetObjectItemCaseSensitive (want, "metadata");
    cJSON_AddStringToObject (meta, "uid", "pg-uid-1");
    cJSON_AddStringToObject (meta, "resourceVersion", "41");
    char err[256];
    Basalt__V1__PodGroup *have = bas_k8s_podgroup_from_json (want, err, sizeof err);
    assert_non_null (have);
    assert_null (ctl_podgroup_update_patch (have, want));
    cJSON_Delete (want);

    //  The pod now asks for more, in another queue, with a priority class.
    s_requests (&p, 1000, 256LL << 20, 1);
    p.pod.queue_annotation = "research";
    p.pod.priority_class_name = "high";
    cJSON *owner = cJSON_Parse ("{\"scheduling.volcano.sh/group-min-member\":\"2\"}");
    char warn[64];
    want = ctl_podgroup_build (&p.pod, owner, "default", warn, sizeof warn, NULL);
    cJSON *patch = ctl_podgroup_update_patch (have, want);
    assert_non_null (patch);
    assert_string_equal (s_str (patch, "metadata.uid"), "pg-uid-1");
    assert_string_equal (s_str (patch, "metadata.resourceVersion"), "41");
    assert_int_equal (s_at (patch, "spec.minMember")->valueint, 2);
    assert_string_equal (s_str (patch, "spec.queue"), "research");
    assert_string_equal (s_str (patch, "spec.priorityClassName"), "high");
    assert_string_equal (s_str (patch, "spec.minResources.cpu"), "2");
    assert_string_equal (s_str (patch, "spec.minResources.memory"), "512Mi");
    cJSON_Delete (patch);
    cJSON_Delete (want);
    cJSON_Delete (owner);

    //  Back to no priority class and no requests: null removes them.
    p.pod.priority_class_name = NULL;
    p.pod.queue_annotation = NULL;
    p.pod.requests = NULL;
    want = s_build (&p.pod);
    have->priority_class_name = strdup ("high");
    patch = ctl_podgroup_update_patch (have, want);
    assert_non_null (patch);
    assert_true (cJSON_IsNull (s_at (patch, "spec.priorityClassName")));
    assert_true (cJSON_IsNull (s_at (patch, "spec.minResources")));
    assert_null (s_at (patch, "spec.queue"));
    assert_null (s_at (patch, "spec.minMember"));
    cJSON_Delete (patch);
    cJSON_Delete (want);

    //  A resource the pod no longer asks for is removed key by key.
    s_requests (&p, 500, 0, 0);
    want = s_build (&p.pod);
    patch = ctl_podgroup_update_patch (have, want);
    assert_string_equal (s_str (patch, "spec.minResources.cpu"), "500m");
    assert_true (cJSON_IsNull (s_at (patch, "spec.minResources.memory")));
    cJSON_Delete (patch);
    cJSON_Delete (want);
    protobuf_c_message_free_unpacked (&have->base, NULL);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_name),
        cmocka_unit_test (test_owner_references),
        cmocka_unit_test (test_min_member),
        cmocka_unit_test (test_owner_annotations),
        cmocka_unit_test (test_update_patch),
        cmocka_unit_test (test_min_resources),
        cmocka_unit_test (test_priority_queue_annotations_phase),
        cmocka_unit_test (test_from_api_pod),
        cmocka_unit_test (test_needs_group),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
