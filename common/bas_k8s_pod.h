/*  bas_k8s_pod: the Pod decoder (bas_k8s_pod.c).

    The decoders' contract (ownership, errors, defaults) is bas_k8s.h's;
    include bas_k8s.h, which includes this header.
*/
#ifndef BAS_K8S_POD_H
#define BAS_K8S_POD_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>
#include "basalt.pb-c.h"

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

//  The taint the node lifecycle controller puts on a cordoned node
//  (spec.unschedulable); a pod that tolerates it may go there.
#define BAS_TAINT_UNSCHEDULABLE "node.kubernetes.io/unschedulable"

//  Kubernetes' Toleration.ToleratesTaint over the pod's tolerations: true
//  when one of them tolerates the taint key=value:effect. Borrows all.
bool bas_k8s_pod_tolerates (const Basalt__V1__Pod *pod, const char *key, const char *value,
                            const char *effect);

#endif
