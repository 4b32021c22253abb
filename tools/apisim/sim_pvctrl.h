/*  sim_pvctrl: the simulated PersistentVolume controller (and the
    provisioner of dynamic classes), the part of kube-controller-manager's
    pv_controller.go and a CSI external-provisioner that a scheduler sees.

    - A Pending claim without spec.volumeName is bound to the smallest
      Available volume that matches (findMatchingVolume in index.go): the
      same storage class name, capacity >= the claim's request, access
      modes a superset of the claim's, the same volumeMode, the claim's
      selector matching the volume's labels, no claimRef (or a claimRef
      naming this claim: a volume pre-bound to a claim is taken first).
      A claim with spec.volumeName is bound to that volume only.
    - Binding writes both sides as the real controller does: the volume's
      spec.claimRef (kind, namespace, name, uid, apiVersion,
      resourceVersion), status.phase Bound and, when the controller set
      the claimRef, the annotation pv.kubernetes.io/bound-by-controller;
      the claim's spec.volumeName, status.phase Bound, status.capacity and
      status.accessModes (the volume's), the annotation
      pv.kubernetes.io/bind-completed and, when the controller set the
      volumeName, pv.kubernetes.io/bound-by-controller. Each side is one
      write (the real controller writes spec and status separately).
    - Claims of a class whose volumeBindingMode is WaitForFirstConsumer are
      left alone until the scheduler writes the annotation
      volume.kubernetes.io/selected-node (kube-scheduler's VolumeBinding
      PreBind), and then a dynamic class (any provisioner but
      kubernetes.io/no-provisioner) gets a volume provisioned; or until
      the scheduler writes a volume's claimRef naming the claim (its
      static binding), and then that volume is bound. The controller
      matches such a claim only with a volume pre-bound to it, as
      findBestMatchForClaim passes FindMatchingVolume no node. Claims of
      an Immediate class (or of no class, or of a class that does not
      exist) bind as soon as a volume matches, and a dynamic Immediate
      class provisions at once.
    - Provisioning: the claim is annotated
      volume.kubernetes.io/storage-provisioner (and the beta name), and a
      volume pvc-<claim uid> is created with the claim's request as its
      capacity, its access modes and volumeMode, the class's name and
      reclaimPolicy, a claimRef to the claim, the annotation
      pv.kubernetes.io/provisioned-by, and, for a selected node, a
      nodeAffinity.required term naming the node (see sim_pvctrl.c for
      which labels). The next sync binds the claim to it.
    - Generic ephemeral volumes (the ephemeral volume controller): a pod's
      volume with ephemeral.volumeClaimTemplate gets the claim
      <pod>-<volume> from the template, owned by the pod (so the garbage
      collector deletes it with the pod); it then binds like any claim.
    - A volume without a claimRef is Available; one whose claim is gone is
      Released (reclaim policy Retain or Recycle) or deleted (Delete); a
      bound claim whose volume is gone is Lost.

    The DefaultStorageClass admission plugin is the API's (a new claim
    without storageClassName gets the default class). Not simulated:
    volume expansion,
    recycling, and the scheduler's own binding of static volumes (in a
    real cluster kube-scheduler writes the claimRef of a WaitForFirstConsumer
    claim's static volume itself; a volume pre-bound that way is completed
    here like any pre-bound one).

    Design note: like sim_ctrl, it reacts to store events by queueing keys
    and does the work from the API's tick, never inside a store write.
    Pending claims are remembered so that a new volume or class wakes
    them (the real controller resyncs every claim periodically instead).
*/
#ifndef SIM_PVCTRL_H
#define SIM_PVCTRL_H

#include <stdint.h>

#include "sim_store.h"

//  The annotations the controller, the scheduler and the provisioner
//  write.
#define SIM_ANN_SELECTED_NODE "volume.kubernetes.io/selected-node"
#define SIM_ANN_BIND_COMPLETED "pv.kubernetes.io/bind-completed"
#define SIM_ANN_BOUND_BY_CONTROLLER "pv.kubernetes.io/bound-by-controller"
#define SIM_ANN_STORAGE_PROVISIONER "volume.kubernetes.io/storage-provisioner"
#define SIM_ANN_BETA_STORAGE_PROVISIONER "volume.beta.kubernetes.io/storage-provisioner"
#define SIM_ANN_PROVISIONED_BY "pv.kubernetes.io/provisioned-by"
//  The provisioner of classes whose volumes an administrator creates.
#define SIM_NO_PROVISIONER "kubernetes.io/no-provisioner"

typedef struct _sim_api_t sim_api_t;
typedef struct _sim_pvctrl_t sim_pvctrl_t;

//  A controller writing through api (borrowed; must outlive it).
sim_pvctrl_t *sim_pvctrl_new (sim_api_t *api);
//  NULL-safe; nulls the pointer.
void sim_pvctrl_destroy (sim_pvctrl_t **self_p);

//  Every store change, after the store was updated.
void sim_pvctrl_on_event (sim_pvctrl_t *self, const sim_event_t *event);

//  Do queued work (a bounded amount). Returns now_ms when work is left,
//  else INT64_MAX.
int64_t sim_pvctrl_run (sim_pvctrl_t *self, int64_t now_ms);

#endif
