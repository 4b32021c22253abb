/*  bas_k8s: Kubernetes API objects (JSON, as the API server sends them) to
    Basalt's wire objects (proto/basalt.proto), and the few JSON bodies Basalt
    writes back (binding, PodGroup create and status patches).

    Decoders take a borrowed cJSON object and return a newly allocated
    message owned by the caller (free with protobuf_c_message_free_unpacked
    (&msg->base, NULL)), or NULL with a message in err naming the object and
    the field that is wrong. Missing optional fields are fine; a malformed
    quantity or a wrong type is an error.

    Absent fields stay absent (NULL strings and submessages, has_* = 0),
    except for these defaults, which are always set:
    - Pod: requests (with pods = 1, the pod's slot), deleting.
    - Node: allocatable (zero when absent), unschedulable, ready (true
      unless a Ready condition says otherwise; simulated nodes may have no
      conditions).
    - PodGroup: queue ("default" when empty), status with running,
      succeeded and failed, deleting.
    - Queue: weight 1, reclaimable true, state "Open", priority 0 (a queue
      without capability/deserved/guarantee has them NULL: no limit).
    - PriorityClass: value 0, global_default false, preemption_policy
      "PreemptLowerPriority".
    Every decoder returns NULL with "out of memory" in err if malloc fails.
*/
#ifndef BAS_K8S_H
#define BAS_K8S_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>
#include "basalt.pb-c.h"

#define BAS_ANN_GROUP_NAME "scheduling.k8s.io/group-name"
#define BAS_ANN_QUEUE_NAME "scheduling.volcano.sh/queue-name"
#define BAS_ANN_MIN_MEMBER "scheduling.volcano.sh/group-min-member"
#define BAS_ANN_TASK_SPEC "volcano.sh/task-spec"
#define BAS_ANN_PREEMPTABLE "volcano.sh/preemptable"
//  The task-topology plugin's PodGroup annotations.
#define BAS_ANN_TOPO_AFFINITY "volcano.sh/task-topology-affinity"
#define BAS_ANN_TOPO_ANTI_AFFINITY "volcano.sh/task-topology-anti-affinity"
#define BAS_ANN_TOPO_TASK_ORDER "volcano.sh/task-topology-task-order"
//  The HyperNode a network-topology gang was placed in (PodGroup annotation).
#define BAS_ANN_ALLOCATED_HYPERNODE "volcano.sh/job-allocated-hypernode"

//  status.images into images (names and sizeBytes, as reported; a size
//  that is not an integer from 0 to 2^53 is an error).
Basalt__V1__Node *bas_k8s_node_from_json (const cJSON *obj, char *err, size_t errlen);

//  The pod's effective request: max(sum of containers, each init container)
//  plus spec.overhead; a container with limits and no requests for a
//  resource uses the limit. Sidecars (init containers with restartPolicy
//  Always) count as Kubernetes counts them: added to the sum, and under
//  every init container that starts after them. requests.pods is 1.
//  Annotations: group, queue_annotation, min_member_annotation, and every
//  "volcano.sh/*" or "scheduling.volcano.sh/*" one in volcano_annotations;
//  task_role and preemptable from the annotation, else the label.
//  images: each container's image, init containers first, a name without
//  tag or digest given ":latest" (kube-scheduler's ImageLocality); for a
//  pod without spec.nodeName only (no score reads a bound pod's images).
Basalt__V1__Pod *bas_k8s_pod_from_json (const cJSON *obj, char *err, size_t errlen);
Basalt__V1__PodGroup *bas_k8s_podgroup_from_json (const cJSON *obj, char *err, size_t errlen);
Basalt__V1__Queue *bas_k8s_queue_from_json (const cJSON *obj, char *err, size_t errlen);
//  A v1 ResourceQuota (spec.hard, status.used, each by resource name in
//  milli-units); NULL with err on a bad object or quantity.
Basalt__V1__ResourceQuota *bas_k8s_resourcequota_from_json (const cJSON *obj, char *err,
                                                            size_t errlen);
//  A policy/v1 PodDisruptionBudget (selector, minAvailable or
//  maxUnavailable as written, the status counts); NULL with err when both
//  are set or one is neither an integer nor a percentage.
Basalt__V1__PodDisruptionBudget *bas_k8s_pdb_from_json (const cJSON *obj, char *err, size_t errlen);
//  A topology.volcano.sh/v1alpha1 HyperNode (tier, tierName, members with
//  exactly one selector each; labelMatch only for nodes).
Basalt__V1__HyperNode *bas_k8s_hypernode_from_json (const cJSON *obj, char *err, size_t errlen);
Basalt__V1__PriorityClass *bas_k8s_priorityclass_from_json (const cJSON *obj, char *err,
                                                            size_t errlen);

// ------------------------------------------------------------ the kind table

//  What Basalt knows of one API kind that it reads into its model: one
//  constant row per kind (bas_k8s.c, "the kind table"), the one place a
//  kind exists for the store, the replica, cache-svc's informers and
//  decoders, its metrics and the scenario loader. Adding a kind: its
//  message in proto/basalt.proto (a member of Object's oneof numbered as
//  its ObjectKind value) and one row with its decoder in bas_k8s.c; the
//  informer, store, replica, metrics and snapshots follow from the row.
//  test_k8s walks the table (numbers, keys, paths, decoders) and
//  test_apisim checks the simulator serves every row.
typedef enum {
    BAS_KIND_KEY_NAME = 1, // cluster-scoped and named once: nodes, queues
    BAS_KIND_KEY_UID,      // names are reused, uids not (DESIGN problem 5)
} bas_kind_key_t;

typedef struct {
    Basalt__V1__ObjectKind kind; // = the Object oneof member's field number
    const char *name;            // the Kind: "Pod"
    const char *label;           // its metric label value: "pod"
    const char *group_version;   // "v1", "scheduling.volcano.sh/v1beta1"
    const char *resource;        // the plural in its URLs: "pods"
    bool namespaced;
    bas_kind_key_t key;                           // the model's key
    size_t key_offset;                            // that string field in the message
    const ProtobufCMessageDescriptor *descriptor; // the message
    //  A new message from the API's JSON; NULL with err (object and field).
    ProtobufCMessage *(*decode) (const cJSON *obj, char *err, size_t errlen);
    //  Served only where its CRD is installed (Volcano < 1.12 has no
    //  HyperNodes): a 404 on list means none of it, not a failure.
    bool optional;
} bas_kind_t;

//  Every ObjectKind value in the table is below this (array sizes).
#define BAS_KIND_LIMIT 16

//  The rows, in the order cache-svc starts their informers.
size_t bas_kind_count (void);
const bas_kind_t *bas_kind_at (size_t i);
//  The row of a kind, by its ObjectKind value or its Kind name; NULL for a
//  kind Basalt does not read (never a guess).
const bas_kind_t *bas_kind_of (Basalt__V1__ObjectKind kind);
const bas_kind_t *bas_kind_named (const char *name);
//  The row of an Object's set member; NULL when none is set, the member is
//  NULL, or its kind has no row.
const bas_kind_t *bas_kind_of_object (const Basalt__V1__Object *obj);
//  The set member of an Object (Node, Pod, ...), or NULL.
const ProtobufCMessage *bas_kind_message (const Basalt__V1__Object *obj);
//  The model's key of an Object (its uid or name per its row); NULL when
//  the kind is unknown or the key empty.
const char *bas_kind_key (const Basalt__V1__Object *obj);
//  The cluster-wide list and watch path of a kind ("/api/v1/pods").
void bas_kind_path (const bas_kind_t *k, char *buf, size_t len);

//  The kind of an object by its Kind name ("Pod", "ResourceQuota", ...), or
//  OBJECT_KIND_UNSPECIFIED for one the scheduler does not read.
Basalt__V1__ObjectKind bas_k8s_kind_named (const char *name);
//  Decode an API object of `kind` into a new Object (its row's decoder);
//  NULL with err on a bad object or a kind the scheduler does not read.
Basalt__V1__Object *bas_k8s_object_from_json (Basalt__V1__ObjectKind kind, const cJSON *json,
                                              char *err, size_t errlen);

//  The PodGroup status as JSON {"phase":…,"running":…,"conditions":[…]}:
//  a new cJSON owned by the caller (NULL when out of memory). Volcano's
//  field names (transitionID, lastTransitionTime). running, succeeded,
//  failed and conditions are always written, zeros and [] included, so that
//  a merge patch replaces the old status whole. status may be NULL: {}.
cJSON *bas_k8s_podgroup_status_to_json (const Basalt__V1__PodGroupStatus *status);

//  Parse an RFC 3339 timestamp ("2024-01-02T03:04:05Z") to ms since the epoch;
//  returns -1 when malformed. Fractions (".123456789") and offsets
//  ("+01:00") are accepted; times before 1970 are -1 too.
int64_t bas_k8s_time_parse_ms (const char *text);

#endif
