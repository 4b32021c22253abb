/*  ctl_podgroup: the PodGroup a plain pod gets, as Volcano's PodGroup
    controller makes it (volcano-semantics.md §4e, buildPodGroupFromPod):
    `podgroup-<controller owner uid | pod uid>`, owned by the pod's
    controller (else by the pod itself, so that deleting the pod deletes the
    group), minMember 1 or the owner's scheduling.volcano.sh/group-min-member
    (the pod's own annotation when the owner has none), minResources = the
    pod's requests x minMember, the pod's priorityClassName, the queue from
    the pod's scheduling.volcano.sh/queue-name (else the default queue), the
    owner's and then the pod's volcano.sh/ annotations, phase Pending.

    Design note: a malformed min-member annotation does not stop the group
    from being made: like Volcano, minMember stays 1, and the caller gets a
    warning naming the object and the value to put in an Event and a log.
*/
#ifndef CTL_PODGROUP_H
#define CTL_PODGROUP_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>
#include "basalt.pb-c.h"

//  True when the controller should give `pod` a PodGroup: its scheduler is
//  in `scheduler_names` (comma list), it names no group, it is not being
//  deleted and has not finished.
bool ctl_pod_needs_group (const Basalt__V1__Pod *pod, const char *scheduler_names);

//  True when `name` is in the comma list `list` (spaces around names ignored).
bool ctl_name_in_list (const char *list, const char *name);

//  The group name for `pod` into buf ("podgroup-<uid>"). Returns buf.
const char *ctl_podgroup_name (const Basalt__V1__Pod *pod, char *buf, size_t len);

//  The PodGroup object to create for `pod`: a new cJSON owned by the
//  caller. `owner_annotations` (borrowed, may be NULL) is the owner's
//  annotations object (as ctl_owner_annotations gives it). `warn` gets ""
//  or a message naming the object, the annotation and the value when a
//  min-member annotation is malformed (minMember is then 1); `warn_what`
//  (may be NULL) gets "owner" or "pod": whose annotation it was.
cJSON *ctl_podgroup_build (const Basalt__V1__Pod *pod, const cJSON *owner_annotations,
                           const char *default_queue, char *warn, size_t warnlen,
                           const char **warn_what);

//  A merge patch that brings the existing group `have` to the spec of
//  `want` (a ctl_podgroup_build result): minMember, queue,
//  priorityClassName and minResources that differ, with metadata.uid and
//  metadata.resourceVersion of `have` as preconditions (a group re-created
//  or changed since refuses it). NULL when nothing differs. Owned by the
//  caller.
cJSON *ctl_podgroup_update_patch (const Basalt__V1__PodGroup *have, const cJSON *want);

#endif
