/*  bas_k8s_storage: the PersistentVolumeClaim, PersistentVolume and
    StorageClass decoders (bas_k8s_storage.c): what volume scheduling
    reads of them, as kube-scheduler's VolumeBinding plugin reads it.

    The decoders' contract (ownership, errors, defaults) is bas_k8s.h's;
    include bas_k8s.h, which includes this header.
*/
#ifndef BAS_K8S_STORAGE_H
#define BAS_K8S_STORAGE_H

#include <stddef.h>

#include <cjson/cJSON.h>
#include "basalt.pb-c.h"

//  The annotations volume binding reads and writes (the PV controller's and
//  the scheduler's, k8s.io/component-helpers/storage/volume).
#define BAS_ANN_BIND_COMPLETED "pv.kubernetes.io/bind-completed"
#define BAS_ANN_SELECTED_NODE "volume.kubernetes.io/selected-node"
#define BAS_ANN_BETA_STORAGE_CLASS "volume.beta.kubernetes.io/storage-class"

//  A v1 PersistentVolumeClaim: spec.volumeName, the class (spec, else the
//  beta annotation), status.phase, the annotations above, accessModes,
//  resources.requests.storage in bytes, selector, the controller owner's
//  uid. NULL with err on a bad object or quantity.
Basalt__V1__PersistentVolumeClaim *bas_k8s_pvc_from_json (const cJSON *obj, char *err,
                                                          size_t errlen);
//  A v1 PersistentVolume: class, phase, accessModes, capacity.storage in
//  bytes, claimRef, nodeAffinity.required's terms, labels, spec.csi's
//  driver and volumeHandle.
Basalt__V1__PersistentVolume *bas_k8s_pv_from_json (const cJSON *obj, char *err, size_t errlen);
//  A storage.k8s.io/v1 StorageClass: provisioner, volumeBindingMode
//  (Immediate when absent, as the API server defaults it; any other value
//  than Immediate or WaitForFirstConsumer is refused), allowedTopologies.
Basalt__V1__StorageClass *bas_k8s_storageclass_from_json (const cJSON *obj, char *err,
                                                          size_t errlen);

//  A storage.k8s.io/v1 CSINode: each driver's name, nodeID and
//  allocatable.count as given (the API server refuses a negative count;
//  one that comes through anyway is kept, and the session refuses the node
//  saying why rather than guess a limit).
Basalt__V1__CSINode *bas_k8s_csinode_from_json (const cJSON *obj, char *err, size_t errlen);

#endif
