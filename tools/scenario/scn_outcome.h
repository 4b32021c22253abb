/*  scn_outcome: what a scenario run left behind, in the terms of the
    scenario format, and the check of a file's `expect` against it.

    Both run modes fill the same structure (in process from cache-svc's
    model, end to end from the API server and cache-svc), so one checker
    judges both and their verdicts are comparable line by line.

    Pods and groups are keyed "namespace/name"; nodes by name.
*/
#ifndef SCN_OUTCOME_H
#define SCN_OUTCOME_H

#include <stdbool.h>
#include <stdio.h>

#include <cjson/cJSON.h>
#include <czmq.h>

typedef struct {
    char *group;     // "ns/name" of its PodGroup, or NULL
    char *node;      // spec.nodeName after the run, or NULL (pending)
    char *pipelined; // node it is reserved on without a bind, or NULL
    char *phase;     // status.phase after the run, or NULL (gone)
    bool evicted;    // the scheduler evicted it (deleted or being deleted)
} scn_pod_t;

typedef struct {
    char *phase;       // status.phase, or NULL
    char *conditions;  // "Type=Status,Type=Status" of status.conditions ("" if none)
    char *messages;    // the conditions' messages, "; "-separated ("" if none)
    int status_writes; // PodGroup status writes seen (in process: StatusWork items)
    char *write_note;  // e2e: how the write was seen ("resourceVersion 3 -> 7"), or NULL
} scn_group_t;

//  A PersistentVolumeClaim after the run.
typedef struct {
    char *volume;   // spec.volumeName, or NULL (unbound)
    char *selected; // its volume.kubernetes.io/selected-node annotation, or NULL
    char *nodes;    // the bound PV's kubernetes.io/hostname In values, ","-joined ("" none)
} scn_claim_t;

typedef struct {
    zhashx_t *claims; // "ns/name" -> scn_claim_t
    zhashx_t *pods;   // "ns/name" -> scn_pod_t
    zhashx_t *groups; // "ns/name" -> scn_group_t
    zhashx_t *nodes;  // name -> "OutOfSync" | "Ready"
    char *error;      // the run itself failed (did not settle, a process died): or NULL
} scn_outcome_t;

scn_outcome_t *scn_outcome_new (void);
void scn_outcome_destroy (scn_outcome_t **self_p);

//  The entry for key, created empty when absent (borrowed).
scn_pod_t *scn_outcome_pod (scn_outcome_t *self, const char *key);
scn_group_t *scn_outcome_group (scn_outcome_t *self, const char *key);
void scn_outcome_node (scn_outcome_t *self, const char *name, bool out_of_sync);

//  Replace a string field (copies value, NULL clears).
void scn_outcome_set (char **field, const char *value);

//  Fill pods and groups from API objects (all borrowed): `spec_objects` is
//  what the file loaded (its pods that are gone from `api_pods` were
//  evicted), `api_pods` and `api_groups` arrays of Pod and PodGroup objects
//  as the API server has them now. A pod with a deletionTimestamp counts as
//  evicted; status.nominatedNodeName of an unbound pod as pipelined there.
void scn_outcome_from_api (scn_outcome_t *self, const cJSON *spec_objects, const cJSON *api_pods,
                           const cJSON *api_groups);

//  Check every expectation of `expect` (borrowed). Writes one line per
//  failed expectation to out, prefixed "scenario NAME [MODE]: ". Returns the
//  number of failed expectations (a run error counts as one).
int scn_outcome_check (scn_outcome_t *self, const cJSON *expect, const char *name, const char *mode,
                       FILE *out);

//  The same check printing nothing, for a step that waits: returns the
//  number of failed expectations and writes the first one's message ("expected
//  podgroup pg1 phase Inqueue, found Pending") into first.
int scn_outcome_check_quiet (scn_outcome_t *self, const cJSON *expect, char *first, size_t len);

//  Fill claims from the API's PersistentVolumeClaims and PersistentVolumes
//  (arrays, borrowed; an item with a kind of another kind is skipped, so
//  one array of mixed objects may be given as both).
void scn_outcome_claims_from_api (scn_outcome_t *self, const cJSON *claims, const cJSON *volumes);

#endif
