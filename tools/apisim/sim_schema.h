/*  sim_schema: OpenAPI v3 schema validation of custom resources, the way
    kube-apiserver's apiextensions server treats an object written to a
    CRD with a structural openAPIV3Schema.

    Three steps, in the server's order: prune (fields the schema does not
    declare are dropped, unless x-kubernetes-preserve-unknown-fields keeps
    them; a null where the schema does not allow one is dropped), default
    (a missing property with a `default` gets it), validate. Validation
    knows type (with x-kubernetes-int-or-string), properties, required,
    additionalProperties, items, enum, minimum/maximum (and exclusive),
    multipleOf, minLength/maxLength, pattern, minItems/maxItems, the string
    formats date-time and date, nullable, and allOf/anyOf/oneOf/not; each
    failure becomes the field error kube-openapi's validator and
    apiextensions' conversion of it produce ("spec.minMember: Invalid
    value: \"string\": spec.minMember in body must be of type integer:
    \"string\""). Integer formats (int32, int64) are accepted as the real
    server accepts them: its validator checks the JSON type only, so a
    whole number out of int32's range is not refused.

    The code is general: nothing in it knows a field of any resource. A
    sim_schema_t only caches compiled `pattern` regexes (POSIX extended;
    the patterns of Kubernetes schemas are written in the common subset of
    Go's RE2 and POSIX); schemas and values are the caller's.
*/
#ifndef SIM_SCHEMA_H
#define SIM_SCHEMA_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "sim_field.h"

typedef struct _sim_schema_t sim_schema_t;

sim_schema_t *sim_schema_new (void);
//  NULL-safe; nulls the pointer.
void sim_schema_destroy (sim_schema_t **self_p);

//  Drop what `schema` does not declare from `value` (changed in place).
//  With `resource`, value is a whole object: apiVersion, kind and
//  metadata are kept as they are (ObjectMeta has rules of its own).
void sim_schema_prune (const cJSON *schema, cJSON *value, bool resource);

//  Fill in the defaults `schema` declares for properties `value` lacks
//  (recursively; changed in place).
void sim_schema_default (const cJSON *schema, cJSON *value);

//  Validate `value` against `schema`; every failure is added to errs.
//  `path` names value in the messages ("" for a whole object; its
//  properties are then "spec", "spec.minMember", …).
void sim_schema_validate (sim_schema_t *self, const cJSON *schema, const cJSON *value,
                          const char *path, sim_field_errors_t *errs);

#endif
