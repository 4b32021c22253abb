/*  bas_k8s_volcano: the decoders of Volcano's kinds and the PodGroup status
    written back (bas_k8s_volcano.c).

    The decoders' contract (ownership, errors, defaults) is bas_k8s.h's;
    include bas_k8s.h, which includes this header.
*/
#ifndef BAS_K8S_VOLCANO_H
#define BAS_K8S_VOLCANO_H

#include <stddef.h>

#include <cjson/cJSON.h>
#include "basalt.pb-c.h"

Basalt__V1__PodGroup *bas_k8s_podgroup_from_json (const cJSON *obj, char *err, size_t errlen);
Basalt__V1__Queue *bas_k8s_queue_from_json (const cJSON *obj, char *err, size_t errlen);
//  A topology.volcano.sh/v1alpha1 HyperNode (tier, tierName, members with
//  exactly one selector each; labelMatch only for nodes).
Basalt__V1__HyperNode *bas_k8s_hypernode_from_json (const cJSON *obj, char *err, size_t errlen);

//  The PodGroup status as JSON {"phase":…,"running":…,"conditions":[…]}:
//  a new cJSON owned by the caller (NULL when out of memory). Volcano's
//  field names (transitionID, lastTransitionTime). running, succeeded,
//  failed and conditions are always written, zeros and [] included, so that
//  a merge patch replaces the old status whole. status may be NULL: {}.
cJSON *bas_k8s_podgroup_status_to_json (const Basalt__V1__PodGroupStatus *status);

#endif
