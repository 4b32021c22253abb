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

#include <stddef.h>

#include <cjson/cJSON.h>
#include "basalt.pb-c.h"

#define BAS_ANN_GROUP_NAME "scheduling.k8s.io/group-name"
#define BAS_ANN_QUEUE_NAME "scheduling.volcano.sh/queue-name"
#define BAS_ANN_MIN_MEMBER "scheduling.volcano.sh/group-min-member"
#define BAS_ANN_TASK_SPEC "volcano.sh/task-spec"
#define BAS_ANN_PREEMPTABLE "volcano.sh/preemptable"

Basalt__V1__Node *bas_k8s_node_from_json (const cJSON *obj, char *err, size_t errlen);

//  The pod's effective request: max(sum of containers, each init container)
//  plus spec.overhead; a container with limits and no requests for a
//  resource uses the limit. Sidecars (init containers with restartPolicy
//  Always) count as Kubernetes counts them: added to the sum, and under
//  every init container that starts after them. requests.pods is 1.
//  Annotations: group, queue_annotation, min_member_annotation, and every
//  "volcano.sh/*" or "scheduling.volcano.sh/*" one in volcano_annotations;
//  task_role and preemptable from the annotation, else the label.
Basalt__V1__Pod *bas_k8s_pod_from_json (const cJSON *obj, char *err, size_t errlen);
Basalt__V1__PodGroup *bas_k8s_podgroup_from_json (const cJSON *obj, char *err, size_t errlen);
Basalt__V1__Queue *bas_k8s_queue_from_json (const cJSON *obj, char *err, size_t errlen);
//  A v1 ResourceQuota (spec.hard, status.used, each by resource name in
//  milli-units); NULL with err on a bad object or quantity.
Basalt__V1__ResourceQuota *bas_k8s_resourcequota_from_json (const cJSON *obj, char *err,
                                                            size_t errlen);
Basalt__V1__PriorityClass *bas_k8s_priorityclass_from_json (const cJSON *obj, char *err,
                                                            size_t errlen);

//  The kind of an object by its Kind name ("Pod", "ResourceQuota", ...), or
//  OBJECT_KIND_UNSPECIFIED for one the scheduler does not read.
Basalt__V1__ObjectKind bas_k8s_kind_named (const char *name);
//  Decode an API object of `kind` into a new Object (the one dispatch from a
//  kind to its decoder above); NULL with err on a bad object or a kind the
//  scheduler does not read.
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
