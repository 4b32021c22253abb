/*  bas_k8s: the kind table, one constant row per API kind Basalt reads
    (bas_k8s.h says what a row holds), and the lookups over it.

    Design note: this file is the top of the Kubernetes layer. It knows
    every kind and calls each kind's decoder through its row; the decoders
    (bas_k8s_pod.c, bas_k8s_node.c, bas_k8s_volcano.c, bas_k8s_policy.c)
    and the JSON readers under them (bas_k8s_json.c) know nothing of the
    table, so no file below includes bas_k8s.h.
*/
#include "bas_k8s.h"

#include "bas_util.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

// ------------------------------------------------------------ the kind table

//  Each decoder as the table calls it.
#define S_DECODER(fn)                                                                              \
    static ProtobufCMessage *s_decode_##fn (const cJSON *obj, char *err, size_t errlen)            \
    {                                                                                              \
        void *msg = bas_k8s_##fn##_from_json (obj, err, errlen);                                   \
        return msg;                                                                                \
    }
S_DECODER (node)
S_DECODER (pod)
S_DECODER (podgroup)
S_DECODER (queue)
S_DECODER (priorityclass)
S_DECODER (resourcequota)
S_DECODER (pdb)
S_DECODER (hypernode)
S_DECODER (storageclass)
S_DECODER (pv)
S_DECODER (pvc)
S_DECODER (csinode)

#define S_CORE "v1"
#define S_VOLCANO "scheduling.volcano.sh/v1beta1"

//  In the order cache-svc starts the informers: the kinds a pod or group
//  refers to are listed before it.
static const bas_kind_t s_kinds[] = {
    {BASALT__V1__OBJECT_KIND__OBJECT_KIND_PRIORITY_CLASS, "PriorityClass", "priorityclass",
     "scheduling.k8s.io/v1", "priorityclasses", false, BAS_KIND_KEY_NAME,
     offsetof (Basalt__V1__PriorityClass, name), &basalt__v1__priority_class__descriptor,
     s_decode_priorityclass, false},
    {BASALT__V1__OBJECT_KIND__OBJECT_KIND_RESOURCE_QUOTA, "ResourceQuota", "resourcequota", S_CORE,
     "resourcequotas", true, BAS_KIND_KEY_UID, offsetof (Basalt__V1__ResourceQuota, uid),
     &basalt__v1__resource_quota__descriptor, s_decode_resourcequota, false},
    {BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_DISRUPTION_BUDGET, "PodDisruptionBudget",
     "poddisruptionbudget", "policy/v1", "poddisruptionbudgets", true, BAS_KIND_KEY_UID,
     offsetof (Basalt__V1__PodDisruptionBudget, uid),
     &basalt__v1__pod_disruption_budget__descriptor, s_decode_pdb, false},
    {BASALT__V1__OBJECT_KIND__OBJECT_KIND_HYPER_NODE, "HyperNode", "hypernode",
     "topology.volcano.sh/v1alpha1", "hypernodes", false, BAS_KIND_KEY_NAME,
     offsetof (Basalt__V1__HyperNode, name), &basalt__v1__hyper_node__descriptor,
     s_decode_hypernode, true},
    {BASALT__V1__OBJECT_KIND__OBJECT_KIND_STORAGE_CLASS, "StorageClass", "storageclass",
     "storage.k8s.io/v1", "storageclasses", false, BAS_KIND_KEY_NAME,
     offsetof (Basalt__V1__StorageClass, name), &basalt__v1__storage_class__descriptor,
     s_decode_storageclass, false},
    {BASALT__V1__OBJECT_KIND__OBJECT_KIND_PERSISTENT_VOLUME, "PersistentVolume", "persistentvolume",
     S_CORE, "persistentvolumes", false, BAS_KIND_KEY_NAME,
     offsetof (Basalt__V1__PersistentVolume, name), &basalt__v1__persistent_volume__descriptor,
     s_decode_pv, false},
    {BASALT__V1__OBJECT_KIND__OBJECT_KIND_PERSISTENT_VOLUME_CLAIM, "PersistentVolumeClaim",
     "persistentvolumeclaim", S_CORE, "persistentvolumeclaims", true, BAS_KIND_KEY_UID,
     offsetof (Basalt__V1__PersistentVolumeClaim, uid),
     &basalt__v1__persistent_volume_claim__descriptor, s_decode_pvc, false},
    {BASALT__V1__OBJECT_KIND__OBJECT_KIND_CSI_NODE, "CSINode", "csinode", "storage.k8s.io/v1",
     "csinodes", false, BAS_KIND_KEY_NAME, offsetof (Basalt__V1__CSINode, name),
     &basalt__v1__csinode__descriptor, s_decode_csinode, false},
    {BASALT__V1__OBJECT_KIND__OBJECT_KIND_QUEUE, "Queue", "queue", S_VOLCANO, "queues", false,
     BAS_KIND_KEY_NAME, offsetof (Basalt__V1__Queue, name), &basalt__v1__queue__descriptor,
     s_decode_queue, false},
    {BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE, "Node", "node", S_CORE, "nodes", false,
     BAS_KIND_KEY_NAME, offsetof (Basalt__V1__Node, name), &basalt__v1__node__descriptor,
     s_decode_node, false},
    {BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP, "PodGroup", "podgroup", S_VOLCANO, "podgroups",
     true, BAS_KIND_KEY_UID, offsetof (Basalt__V1__PodGroup, uid),
     &basalt__v1__pod_group__descriptor, s_decode_podgroup, false},
    {BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, "Pod", "pod", S_CORE, "pods", true, BAS_KIND_KEY_UID,
     offsetof (Basalt__V1__Pod, uid), &basalt__v1__pod__descriptor, s_decode_pod, false},
};
#define S_NKINDS (sizeof s_kinds / sizeof s_kinds[0])

size_t
bas_kind_count (void)
{
    return S_NKINDS;
}

const bas_kind_t *
bas_kind_at (size_t i)
{
    return i < S_NKINDS ? &s_kinds[i] : NULL;
}

const bas_kind_t *
bas_kind_of (Basalt__V1__ObjectKind kind)
{
    for (size_t i = 0; i < S_NKINDS; i++)
        if (s_kinds[i].kind == kind)
            return &s_kinds[i];
    return NULL;
}

const bas_kind_t *
bas_kind_named (const char *name)
{
    for (size_t i = 0; name && i < S_NKINDS; i++)
        if (strcmp (s_kinds[i].name, name) == 0)
            return &s_kinds[i];
    return NULL;
}

const ProtobufCMessage *
bas_kind_message (const Basalt__V1__Object *obj)
{
    //  The oneof's members share one place (a union): any of them reads it.
    return obj && obj->kind_case != BASALT__V1__OBJECT__KIND__NOT_SET
               ? (const ProtobufCMessage *)obj->node
               : NULL;
}

const bas_kind_t *
bas_kind_of_object (const Basalt__V1__Object *obj)
{
    const ProtobufCMessage *msg = bas_kind_message (obj);
    const bas_kind_t *k = msg ? bas_kind_of ((Basalt__V1__ObjectKind)obj->kind_case) : NULL;
    return k && msg->descriptor == k->descriptor ? k : NULL;
}

const char *
bas_kind_key (const Basalt__V1__Object *obj)
{
    const bas_kind_t *k = bas_kind_of_object (obj);
    if (!k)
        return NULL;
    const char *key = *(char *const *)((const char *)bas_kind_message (obj) + k->key_offset);
    return key && *key ? key : NULL;
}

void
bas_kind_path (const bas_kind_t *k, char *buf, size_t len)
{
    if (strchr (k->group_version, '/'))
        snprintf (buf, len, "/apis/%s/%s", k->group_version, k->resource);
    else
        snprintf (buf, len, "/api/%s/%s", k->group_version, k->resource);
}

Basalt__V1__ObjectKind
bas_k8s_kind_named (const char *name)
{
    const bas_kind_t *k = bas_kind_named (name);
    return k ? k->kind : BASALT__V1__OBJECT_KIND__OBJECT_KIND_UNSPECIFIED;
}

Basalt__V1__Object *
bas_k8s_object_from_json (Basalt__V1__ObjectKind kind, const cJSON *json, char *err, size_t errlen)
{
    const bas_kind_t *k = bas_kind_of (kind);
    if (!k) {
        if (err)
            snprintf (err, errlen, "kind %d is not a kind the scheduler reads", (int)kind);
        return NULL;
    }
    ProtobufCMessage *msg = k->decode (json, err, errlen);
    if (!msg)
        return NULL;
    Basalt__V1__Object *obj = bas_alloc (sizeof *obj);
    basalt__v1__object__init (obj);
    obj->kind_case = (Basalt__V1__Object__KindCase)k->kind;
    obj->node = (Basalt__V1__Node *)msg; // the union's one place (bas_kind_message)
    return obj;
}
