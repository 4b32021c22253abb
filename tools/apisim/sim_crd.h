/*  sim_crd: the CustomResourceDefinitions the simulator serves, read from
    the manifests embedded at build time (sim_embed.cmake writes
    sim_crd_data.c from BASALT_CRD_DIR: Volcano's own PodGroup and Queue
    CRDs in the shared fixtures).

    A sim_crds_t parses them once when the API starts and answers, for a
    row of the kind table, the openAPIV3Schema of the CRD version the
    simulator serves (matched by group, plural and served version name).
    Validation (sim_schema.h) and the OpenAPI documents (sim_openapi.c)
    both read that schema, so what the simulator enforces and publishes is
    what the CRD says, not a copy. The version's additionalPrinterColumns
    are the Table columns `kubectl get` shows (sim_table.h).
*/
#ifndef SIM_CRD_H
#define SIM_CRD_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "sim_kind.h"

//  One embedded manifest (generated; immutable).
typedef struct {
    const char *name; // the file's base name
    const char *text; // its bytes, NUL-terminated
    size_t len;       // length without the NUL
} sim_crd_text_t;

extern const sim_crd_text_t sim_crd_texts[];
extern const size_t sim_crd_ntexts;

typedef struct _sim_crds_t sim_crds_t;

//  Parse the embedded manifests. Every CustomResourceDefinition among them
//  must describe a resource of the kind table with a schema for the
//  version served; anything else (or YAML that does not parse) is an
//  error naming the file: NULL with the reason in err.
sim_crds_t *sim_crds_new (char *err, size_t errlen);

//  NULL-safe; nulls the pointer.
void sim_crds_destroy (sim_crds_t **self_p);

//  The openAPIV3Schema for kind (borrowed, lives as long as self), or NULL
//  for a kind no CRD defines (the built-in ones).
const cJSON *sim_crds_schema (const sim_crds_t *self, const sim_kind_t *kind);

//  The additionalPrinterColumns of the CRD version served for kind
//  (borrowed, lives as long as self; what `kubectl get` prints, see
//  sim_table.h), or NULL when it has none or no CRD defines the kind.
const cJSON *sim_crds_columns (const sim_crds_t *self, const sim_kind_t *kind);

#endif
