/*  ctl_event: Kubernetes Events (core/v1) that controller-svc posts when
    its input is bad (a PodGroup naming a queue that does not exist, a
    malformed min-member annotation): what a user sees with
    `kubectl describe` next to the object at fault.
*/
#ifndef CTL_EVENT_H
#define CTL_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

//  The object an Event is about (all borrowed).
typedef struct {
    const char *api_version; // "v1", "apps/v1", "scheduling.volcano.sh/v1beta1"
    const char *kind;        // "Pod", "ReplicaSet", "PodGroup"
    const char *ns;
    const char *name;
    const char *uid;
} ctl_event_object_t;

//  A Warning Event about `obj` with `reason` and `message`, from
//  `component`, at wall time `now_ms`: a new cJSON owned by the caller, to
//  POST to /api/v1/namespaces/<obj->ns>/events. Its name is
//  "<obj name>.<hex ns time>", like client-go's recorder.
cJSON *ctl_event_build (const ctl_event_object_t *obj, const char *reason, const char *message,
                        const char *component, int64_t now_ms);

#endif
