/*  sim_valid_storage: the validation of the storage kinds, restated from
    kube-apiserver's (pkg/apis/core/validation: ValidatePersistentVolume,
    ValidatePersistentVolumeClaim and their Update forms;
    pkg/apis/storage/validation: ValidateStorageClass(Update),
    ValidateCSINode(Update), ValidateCSIDriver(Update)), the rules a client
    runs into:

    - PersistentVolume: spec.capacity with exactly the key storage, a
      quantity > 0; at least one access mode, each one of ReadWriteOnce,
      ReadOnlyMany, ReadWriteMany, ReadWriteOncePod (the last alone);
      exactly one volume source, with its required fields (hostPath.path,
      local.path, nfs.server/path, csi.driver (a CSI driver name) and
      volumeHandle); a local volume needs nodeAffinity;
      nodeAffinity.required has at least one term and valid requirements
      (operator, values, key, label values; matchFields on metadata.name
      only); reclaim policy Retain/Delete/Recycle,
      volumeMode Block/Filesystem, storageClassName a subdomain. On update
      the volume source, volumeMode and a set nodeAffinity are immutable.
    - PersistentVolumeClaim: access modes as above, at least one;
      resources.requests.storage > 0; a valid selector (label keys and
      values, operators); on update the spec
      is immutable except that volumeName may be set once when empty and a
      bound claim's storage request may change; a request may not shrink;
      volumeMode is immutable.
    - StorageClass: provisioner required (a qualified name), no empty
      parameter key, reclaimPolicy Delete/Retain, volumeBindingMode
      Immediate/WaitForFirstConsumer, allowedTopologies terms with at
      least one expression with values (these allowedTopologies messages
      are the simulator's own: ValidateTopologySelectorTerm was not read);
      parameters, provisioner and reclaimPolicy may not change (Forbidden),
      volumeBindingMode is immutable.
    - CSINode: each driver a valid CSI driver name, a nodeID of at most
      192 characters, allocatable.count >= 0, unique names, topologyKeys
      non-empty, unique qualified names; on update a driver the old
      object had may change only its allocatable.
    - CSIDriver: attachRequired, podInfoOnMount and storageCapacity set
      (the defaults set them), fsGroupPolicy and volumeLifecycleModes
      known values; attachRequired and volumeLifecycleModes immutable.

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
