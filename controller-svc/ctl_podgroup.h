/*  ctl_podgroup: the PodGroup a plain pod gets, as Volcano's PodGroup
    controller makes it: `podgroup-<controller owner uid | pod uid>`, owned
    by the pod's controller (else by the pod), minMember 1 (or the pod's
    scheduling.volcano.sh/group-min-member), minResources = the pod's
    requests, the pod's priorityClassName, the queue from
    scheduling.volcano.sh/queue-name (else the default queue), the pod's
    volcano.sh/ annotations inherited, phase Pending.
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

//  The group name for `pod` into buf ("podgroup-<uid>"). Returns buf.
const char *ctl_podgroup_name (const Basalt__V1__Pod *pod, char *buf, size_t len);

//  The PodGroup object to create for `pod`; a new cJSON owned by the
//  caller, or NULL with a message in err (e.g. a malformed min-member
//  annotation, which names the pod and the value).
cJSON *ctl_podgroup_build (const Basalt__V1__Pod *pod, const char *default_queue, char *err,
                           size_t errlen);

#endif
