/*  scn_spec: one scenario file (../shared/scenarios/README.md), checked and
    turned into what both run modes need.

    The cluster part (nodes, queues, podgroups, priorityClasses, pods and
    `manifests`) becomes one ordered list of real Kubernetes objects, the
    JSON an API server would hold for them: the in-process mode feeds them
    to cache-svc's model through the informer path (cache_model_api_event),
    the end-to-end mode loads the very same list into the API simulator.
    One conversion for both modes is what makes their outcomes comparable.

    Design note: objects get deterministic uids and creation timestamps one
    second apart in file order (priority classes, queues, nodes, podgroups,
    pods, then manifests that lack them), so Volcano's (creation time, uid)
    tie-breaks follow the file in both modes. Pods without a group are
    given schedulerName default-scheduler: they were placed outside the
    scheduler (as the seed scenarios say) and get no PodGroup from the
    controller. Priority admission (spec.priority from the class) is done
    here as the API server does it.

    Every key is checked against the README's format; an unknown key or a
    value of the wrong type is an error naming the file, line and key.

    Objects a step creates go through the same conversion (uids and
    creation times continue the file's sequence, so they sort after
    everything loaded at the start) but are kept apart, in their step.
*/
#ifndef SCN_SPEC_H
#define SCN_SPEC_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "sess_sched.h"

/*  A step (Basalt's extension, tools/scenario/README.md): wait until some
    expectations hold, then create more objects, as a controller waits for
    its PodGroup or its first pod before it creates the rest. */
typedef struct {
    cJSON *until;  // the expectations to wait for (a mapping, owned)
    int within;    // sessions the wait may take (in process; e2e: session-svc's budget)
    cJSON *create; // the objects to create then, in order, as the API holds them (owned)
    int line;      // the step's line in the file (messages)
} scn_step_t;

typedef struct {
    char *path;        // the file
    char *name;        // `name:` (or the file name without .yaml)
    char *config;      // scheduler configuration text, NULL for the default
    int config_line;   // line of the `config:` key (for messages)
    int sessions;      // sessions to run (>= 1)
    cJSON *objects;    // array of Kubernetes objects in load order (owned)
    scn_step_t *steps; // the `steps`, in order (owned), after which `sessions` run
    size_t n_steps;    // how many
    cJSON *expect;     // the `expect` mapping (owned)
} scn_spec_t;

//  Read and check `path`. Returns a new spec owned by the caller, or NULL
//  with "FILE:LINE: problem" in err.
scn_spec_t *scn_spec_load (const char *path, char *err, size_t errlen);
void scn_spec_destroy (scn_spec_t **self_p);

//  "ns/name" for a scenario reference ("p1" -> "default/p1"), into buf.
const char *scn_spec_ref (const char *ref, char *buf, size_t len);

//  The file's scheduler configuration: *conf_p gets a new one (owned by
//  the caller), NULL for the default when the file has no `config`.
//  Returns 0, or -1 with "FILE:LINE: config: problem" in err.
int scn_spec_conf (const scn_spec_t *spec, sess_conf_t **conf_p, char *err, size_t errlen);

#endif
