/*  sim_kubelet: the simulated node agent (KWOK-like pod lifecycle).

    A pod bound to a node becomes Running a fixed delay after its binding:
    phase Running, conditions Initialized/Ready/ContainersReady True (the
    PodScheduled condition the binding set is kept), hostIP, podIP,
    startTime and one running containerStatus per container. The change is
    an ordinary store write, so watchers see MODIFIED.

    Design note: the delay is the same for every pod, so due times arrive in
    the order pods were scheduled and a FIFO queue is a correct timer queue.
    Entries carry the pod's uid: a pod deleted and re-created under the same
    name in between is not touched.
*/
#ifndef SIM_KUBELET_H
#define SIM_KUBELET_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "sim_rand.h"
#include "sim_store.h"

typedef struct _sim_kubelet_t sim_kubelet_t;

//  run_delay_ms < 0 disables the lifecycle. store and rand are borrowed and
//  must outlive the kubelet.
sim_kubelet_t *sim_kubelet_new (sim_store_t *store, sim_rand_t *rand, int64_t run_delay_ms);
void sim_kubelet_destroy (sim_kubelet_t **self_p);

//  The pod (namespace, name, uid) was bound or created on a node at now_ms.
void sim_kubelet_pod_bound (sim_kubelet_t *self, const char *ns, const char *name, const char *uid,
                            int64_t now_ms);

//  Start every pod whose time has come. Returns the next due time, or
//  INT64_MAX.
int64_t sim_kubelet_tick (sim_kubelet_t *self, int64_t now_ms);

//  Write a Running status into a pod tree (stored form, owned by the
//  caller), as if its containers had started now.
void sim_kubelet_make_running (sim_kubelet_t *self, cJSON *pod);

#endif
