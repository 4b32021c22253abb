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

//  The annotation names, the timestamp parser and the decoders, one header
//  per group of kinds (each a layer below the kind table; none includes
//  this header).
#include "bas_k8s_ann.h"
#include "bas_k8s_time.h"
#include "bas_k8s_pod.h"
#include "bas_k8s_node.h"
#include "bas_k8s_volcano.h"
#include "bas_k8s_policy.h"
#include "bas_k8s_storage.h"

// ------------------------------------------------------------ the kind table

//  What Basalt knows of one API kind that it reads into its model: one
//  constant row per kind (bas_k8s.c, "the kind table"), the one place a
//  kind exists for the store, the replica, cache-svc's informers and
//  decoders, its metrics and the scenario loader. Adding a kind: its
//  message in proto/basalt.proto (a member of Object's oneof numbered as
//  its ObjectKind value), its decoder in the bas_k8s_<group>.c of its
//  group of kinds, and one row in bas_k8s.c; the
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

#endif
