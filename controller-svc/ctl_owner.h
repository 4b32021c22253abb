/*  ctl_owner: the workload owners controller-svc watches itself
    (ReplicaSets and StatefulSets, apps/v1), keyed by uid.

    The cache's model has no owners; the controller needs two things from
    them: how many replicas an owner wants (scaled to 0, its PodGroup goes;
    scaled up, it comes back), and the owner's annotations
    (scheduling.volcano.sh/group-min-member and the volcano.sh/ ones a
    PodGroup inherits, as Volcano's --inherit-owner-annotations does).

    Design note: keyed by uid, never by namespace/name (DESIGN problem 5):
    a ReplicaSet deleted and re-created under its name is another owner.
    Only the fields above are kept, not the whole object.
*/
#ifndef CTL_OWNER_H
#define CTL_OWNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

//  One owner as last seen.
typedef struct {
    char *uid;          // metadata.uid (the key)
    char *kind;         // "ReplicaSet", "StatefulSet", ...
    char *api_version;  // "apps/v1"
    char *ns;           // metadata.namespace
    char *name;         // metadata.name
    char *rv;           // metadata.resourceVersion
    int32_t replicas;   // spec.replicas (1 when absent, the API's default)
    cJSON *annotations; // the inherited annotations only (an object; never NULL)
} ctl_owner_t;

typedef struct _ctl_owners_t ctl_owners_t;

ctl_owners_t *ctl_owners_new (void);
void ctl_owners_destroy (ctl_owners_t **self_p);

//  Record `obj` (an API object of kind `kind`, borrowed) as the owner's
//  latest state. Returns the record (borrowed, valid until the next change
//  to this owner), or NULL with a message naming the object and the field
//  in err when obj is malformed (no uid, a spec.replicas that is not a
//  non-negative integer, ...). *prev_replicas gets the replicas it had
//  before (-1 when it is new).
const ctl_owner_t *ctl_owners_upsert (ctl_owners_t *self, const char *kind, const char *api_version,
                                      const cJSON *obj, int32_t *prev_replicas, char *err,
                                      size_t errlen);

//  Forget the owner with `uid`. Returns 0, or -1 if unknown.
int ctl_owners_delete (ctl_owners_t *self, const char *uid);

//  The owner with `uid`, or NULL. Borrowed.
const ctl_owner_t *ctl_owners_get (ctl_owners_t *self, const char *uid);

size_t ctl_owners_size (ctl_owners_t *self);

//  The annotations a PodGroup may take from an owner: the object's
//  metadata.annotations whose key starts with "volcano.sh/" or
//  "scheduling.volcano.sh/". A new cJSON object owned by the caller
//  (empty when there are none).
cJSON *ctl_owner_annotations (const cJSON *obj);

#endif
