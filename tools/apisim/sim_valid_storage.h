/*  sim_valid_storage: the validation of the storage kinds, restated from
    kube-apiserver's (pkg/apis/core/validation: ValidatePersistentVolume,
    ValidatePersistentVolumeClaim and their Update forms;
    pkg/apis/storage/validation: ValidateStorageClass, ValidateCSINode,
    ValidateCSIDriverName), the rules a client runs into:

    - PersistentVolume: spec.capacity with exactly the key storage, a
      quantity > 0; at least one access mode, each one of ReadWriteOnce,
      ReadOnlyMany, ReadWriteMany, ReadWriteOncePod (the last alone);
      exactly one volume source, with its required fields (hostPath.path,
      local.path, nfs.server/path, csi.driver/volumeHandle); a local
      volume needs nodeAffinity; nodeAffinity.required has at least one
      term and valid requirements; reclaim policy Retain/Delete/Recycle,
      volumeMode Block/Filesystem, storageClassName a subdomain. On update
      the volume source, volumeMode and a set nodeAffinity are immutable.
    - PersistentVolumeClaim: access modes as above, at least one;
      resources.requests.storage > 0; a valid selector; on update the spec
      is immutable except that volumeName may be set once when empty and a
      bound claim's storage request may grow (never shrink).
    - StorageClass: provisioner required (a qualified name), reclaimPolicy
      Delete/Retain, volumeBindingMode Immediate/WaitForFirstConsumer,
      allowedTopologies terms with at least one expression with values;
      parameters, provisioner, reclaimPolicy and volumeBindingMode
      immutable.
    - CSINode: each driver a valid CSI driver name, unique, with a nodeID,
      topologyKeys qualified names, allocatable.count >= 0; on update an
      existing driver's nodeID and topologyKeys are immutable.
    - CSIDriver: metadata.name a CSI driver name.

    Field paths and messages are the API server's; where the real message
    appends a diff of the old and new spec (the "immutable after creation"
    errors), the diff is left out. Writes to /status are not validated
    beyond what the generic path does.
*/
#ifndef SIM_VALID_STORAGE_H
#define SIM_VALID_STORAGE_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "sim_field.h"
#include "sim_kind.h"

//  True for the kinds this file validates.
bool sim_valid_storage_kind (const sim_kind_t *kind);

//  Validate a new object of a storage kind (stored form).
void sim_valid_storage_create (const sim_kind_t *kind, const cJSON *obj, sim_field_errors_t *errs);

//  Validate an update from `old` to `obj` (stored forms) of a storage
//  kind's main endpoint: the object as a whole, then what may not change.
void sim_valid_storage_update (const sim_kind_t *kind, const cJSON *old, const cJSON *obj,
                               sim_field_errors_t *errs);

#endif
