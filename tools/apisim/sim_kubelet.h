/*  sim_kubelet: the simulated node agent (KWOK-like pod lifecycle).

    - Start: a pod bound to a node becomes Running a fixed delay after its
      binding: phase Running, conditions Initialized/Ready/ContainersReady
      True (the PodScheduled condition the binding set is kept), hostIP,
      podIP, startTime and one running containerStatus per container.
    - Completion (optional): a pod annotated
      `basalt.dev/complete-after-ms: "N"` finishes N ms after it started:
      containers terminated with exit code 0 (reason Completed), phase
      Succeeded; with `basalt.dev/exit-code: "C"` (C != 0) they terminate
      with code C (reason Error) and the phase is Failed.
    - Stop: a pod deleted gracefully (deletionTimestamp set) has its
      containers stopped after the stop delay or its grace period,
      whichever is shorter (exit code 137, Ready False), and is then
      deleted with grace period 0 through the delete function the API
      gives us, which is how a real kubelet ends a graceful deletion.

    - Volumes: a pod is not started while any of its persistentVolumeClaim
      volumes names a claim that is missing or not Bound, or the claim of
      a generic ephemeral volume (<pod>-<volume>) is (the real kubelet
      waits for its volumes to attach and mount). It is held, keyed by
      the claim, and started as soon as that claim's status.phase becomes
      Bound (then every claim is checked again).

    Every change is an ordinary store write, so watchers see MODIFIED (and
    DELETED at the end of a stop).

    Design note: delays differ (completion durations come from
    annotations, stops from grace periods), so pending actions live in one
    binary min-heap ordered by due time, ties in arrival order. Entries
    carry the pod's uid: a pod deleted and re-created under the same name
    in between is not touched.
*/
#ifndef SIM_KUBELET_H
#define SIM_KUBELET_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "sim_rand.h"
#include "sim_store.h"

//  The annotation that asks for completion N ms after the pod started.
#define SIM_ANNOTATION_COMPLETE_AFTER "basalt.dev/complete-after-ms"
//  The exit code the completed containers report (default 0).
#define SIM_ANNOTATION_EXIT_CODE "basalt.dev/exit-code"

typedef struct _sim_kubelet_t sim_kubelet_t;

//  Delete the pod (current stored state, borrowed) with grace period 0:
//  the API's own delete path, so that finalizers and garbage collection
//  apply. Supplied by the API.
typedef void (sim_kubelet_delete_fn) (void *arg, sim_obj_t *pod);

//  run_delay_ms < 0 disables starting pods; stop_delay_ms < 0 makes a
//  stopping pod wait its whole grace period. store and rand are borrowed
//  and must outlive the kubelet.
sim_kubelet_t *sim_kubelet_new (sim_store_t *store, sim_rand_t *rand, int64_t run_delay_ms,
                                int64_t stop_delay_ms);
void sim_kubelet_destroy (sim_kubelet_t **self_p);

//  Set the function that finishes a graceful deletion.
void sim_kubelet_set_delete (sim_kubelet_t *self, sim_kubelet_delete_fn *fn, void *arg);

//  The pod (namespace, name, uid) was bound or created on a node at now_ms.
void sim_kubelet_pod_bound (sim_kubelet_t *self, const char *ns, const char *name, const char *uid,
                            int64_t now_ms);

//  The pod was marked for deletion with this grace period (seconds > 0).
void sim_kubelet_pod_stopping (sim_kubelet_t *self, const char *ns, const char *name,
                               const char *uid, int64_t grace_s, int64_t now_ms);

//  Every store change (the API's listener): a claim that became Bound
//  releases the pods held for it, to start at now_ms; a deleted pod is
//  held no more.
void sim_kubelet_on_event (sim_kubelet_t *self, const sim_event_t *event, int64_t now_ms);

//  Run every action whose time has come. Returns the next due time, or
//  INT64_MAX.
int64_t sim_kubelet_tick (sim_kubelet_t *self, int64_t now_ms);

//  Write a Running status into a pod tree (stored form, owned by the
//  caller), as if its containers had started now.
void sim_kubelet_make_running (sim_kubelet_t *self, cJSON *pod);

#endif
