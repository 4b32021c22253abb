/*  sim_ctrl: the controllers of the simulated control plane — the garbage
    collector and the Deployment and ReplicaSet controllers.

    - Garbage collection follows ownerReferences (matched by uid, as the
      real collector does). When an owner is gone (Background propagation,
      the default), each dependent is deleted, unless it has another owner
      that still exists, in which case only the dangling reference is
      removed. Foreground: the owner carries the `foregroundDeletion`
      finalizer while its dependents are deleted (also in foreground), and
      goes when the last one is gone. Orphan: the owner carries the
      `orphan` finalizer while the references to it are removed from its
      dependents, then goes. Dependents created with an ownerReference to
      an object that never existed are left alone (a `--load`ed dump may
      lack the owners), which differs from the real collector.
    - ReplicaSet: keeps spec.replicas active pods (not terminating, not
      finished) named <rs>-<5 random chars> from spec.template, each with a
      controller ownerReference; deletes the excess, unbound pods first,
      then Pending before Running, not-ready before ready, newest first
      (the ranking of the real controller); writes status (replicas,
      fullyLabeledReplicas, readyReplicas, availableReplicas,
      observedGeneration). Orphaned pods are not adopted.
    - Deployment: owns one ReplicaSet per pod template, named
      <deployment>-<pod-template-hash>, whose selector, template labels and
      own labels carry the `pod-template-hash` label. The ReplicaSet of the
      current template gets spec.replicas; older ones are scaled to 0 at
      once (the effect of a Recreate rollout; RollingUpdate's gradual
      surge is not simulated) and pruned beyond revisionHistoryLimit.
      Status and the Available/Progressing conditions are kept up to date.

    Design note: like real controllers, these react to store events
    (through sim_ctrl_on_event, called by the store's listener) by queueing
    keys, and do the work later, from the API's timer tick, never inside a
    store write. Indexes by uid (every object; owner → dependents) make
    each step proportional to the objects involved, not the store size.
*/
#ifndef SIM_CTRL_H
#define SIM_CTRL_H

#include <stdbool.h>
#include <stdint.h>

#include "sim_store.h"

typedef struct _sim_api_t sim_api_t;
typedef struct _sim_ctrl_t sim_ctrl_t;

//  Controllers writing through api (borrowed; must outlive them).
sim_ctrl_t *sim_ctrl_new (sim_api_t *api);
void sim_ctrl_destroy (sim_ctrl_t **self_p);

//  Every store change, after the store was updated.
void sim_ctrl_on_event (sim_ctrl_t *self, const sim_event_t *event);

//  Do queued work (a bounded amount). Returns now_ms when work is left,
//  else INT64_MAX.
int64_t sim_ctrl_run (sim_ctrl_t *self, int64_t now_ms);

//  True if some object names uid in its ownerReferences.
bool sim_ctrl_has_dependents (sim_ctrl_t *self, const char *uid);

#endif
