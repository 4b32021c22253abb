/*  sim_valid: the validation of built-in kinds the simulator does on
    create, the part of kube-apiserver's that clients run into:

    - metadata.name (and generateName, as a prefix) of every kind by the
      kind table's rule, with apimachinery's messages: a lowercase RFC 1123
      subdomain (253 characters at most), a label (63) for namespaces, a
      DNS-1035 label (starts with a letter) for services, a path segment
      (no '/' or '%', not '.' or '..') for the RBAC kinds;
    - pods: spec.containers is required; each container (and init
      container) needs a name that is a lowercase RFC 1123 label, unique in
      the pod, and an image.

    - the storage kinds: sim_valid_storage.h.

    Errors are field errors (sim_field.h) for the caller's 422 Invalid.
    Custom resources are validated against their CRD's schema
    (sim_schema.h); their names follow the same subdomain rule.
*/
#ifndef SIM_VALID_H
#define SIM_VALID_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "sim_field.h"
#include "sim_kind.h"

//  apimachinery's message for a string that is not a lowercase RFC 1123
//  subdomain.
#define SIM_VALID_SUBDOMAIN_MSG                                                                    \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "   \
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "  \
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"

//  True if text is a lowercase RFC 1123 subdomain (length not checked).
bool sim_valid_is_subdomain (const char *text);

//  Validate metadata.name and metadata.generateName of a new object of
//  kind (stored form).
void sim_valid_meta (const sim_kind_t *kind, const cJSON *obj, sim_field_errors_t *errs);

//  Validate the kind-specific rules of a new built-in object (pods' spec,
//  the storage kinds). A pod with scheduling gates may not name a node
//  (ValidatePodCreate).
void sim_valid_spec (const sim_kind_t *kind, const cJSON *obj, sim_field_errors_t *errs);

//  Validate an update of a built-in object from `old` to `obj` (stored
//  forms): a pod's scheduling gates may only be removed, never added
//  (validateOnlyDeletedSchedulingGates: one error per gate the old pod
//  did not have, "only deletion is allowed, but found new scheduling gate");
//  a storage object's whole validation and what may not change. A write to
//  /status (`status_write`) is checked for the scheduling gates only.
void sim_valid_update (const sim_kind_t *kind, const cJSON *old, const cJSON *obj,
                       bool status_write, sim_field_errors_t *errs);

#endif
