/*  bas_k8s_policy: the ResourceQuota, PriorityClass and PodDisruptionBudget
    decoders (bas_k8s_policy.c).

    The decoders' contract (ownership, errors, defaults) is bas_k8s.h's;
    include bas_k8s.h, which includes this header.
*/
#ifndef BAS_K8S_POLICY_H
#define BAS_K8S_POLICY_H

#include <stddef.h>

#include <cjson/cJSON.h>
#include "basalt.pb-c.h"

//  A v1 ResourceQuota (spec.hard, status.used, each by resource name in
//  milli-units); NULL with err on a bad object or quantity.
Basalt__V1__ResourceQuota *bas_k8s_resourcequota_from_json (const cJSON *obj, char *err,
                                                            size_t errlen);
//  A policy/v1 PodDisruptionBudget (selector, minAvailable or
//  maxUnavailable as written, the status counts); NULL with err when both
//  are set or one is neither an integer nor a percentage.
Basalt__V1__PodDisruptionBudget *bas_k8s_pdb_from_json (const cJSON *obj, char *err, size_t errlen);
Basalt__V1__PriorityClass *bas_k8s_priorityclass_from_json (const cJSON *obj, char *err,
                                                            size_t errlen);

#endif
