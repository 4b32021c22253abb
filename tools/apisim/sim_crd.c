/*  sim_crd: see sim_crd.h.

    Design note: the parsed manifests are kept whole and the schemas are
    borrowed pointers into them, one slot per row of the kind table.
*/
#include "sim_crd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bas_yaml.h"
#include "sim_obj.h"

struct _sim_crds_t {
    cJSON *docs;                          // every parsed CRD (owned array)
    const cJSON *schemas[SIM_KIND_COUNT]; // openAPIV3Schema by kind id (borrowed)
    const cJSON *columns[SIM_KIND_COUNT]; // additionalPrinterColumns by kind id (borrowed)
};

typedef struct {
    sim_crds_t *self; // filling this
    const char *file; // for messages
    char *err;        // where a rejection is explained
    size_t errlen;    // its size
} s_load_t;

//  One document of a manifest: a CRD of a served kind, or something to
//  leave alone (the fixtures directory holds other files too).
static int
s_doc (void *arg, cJSON **doc_p, int index)
{
    s_load_t *load = arg;
    cJSON *doc = *doc_p;
    const char *kind = sim_json_str (doc, "kind");
    if (!kind || strcmp (kind, "CustomResourceDefinition") != 0)
        return 0;
    const char *group = sim_json_str (doc, "spec.group");
    const char *plural = sim_json_str (doc, "spec.names.plural");
    if (!group || !plural) {
        snprintf (load->err, load->errlen,
                  "%s document %d: CRD without spec.group or "
                  "spec.names.plural",
                  load->file, index);
        return -1;
    }
    const cJSON *version;
    cJSON_ArrayForEach (version, sim_json_at (doc, "spec.versions"))
    {
        const char *name = sim_json_str (version, "name");
        const sim_kind_t *k = name ? sim_kind_by_resource (group, name, plural) : NULL;
        if (!k)
            continue;
        const cJSON *schema = sim_json_at (version, "schema.openAPIV3Schema");
        if (!cJSON_IsObject (schema)) {
            snprintf (load->err, load->errlen,
                      "%s document %d: %s/%s %s has no "
                      "schema.openAPIV3Schema",
                      load->file, index, group, name, plural);
            return -1;
        }
        load->self->schemas[k->id] = schema;
        load->self->columns[k->id] = sim_json_at (version, "additionalPrinterColumns");
    }
    cJSON_AddItemToArray (load->self->docs, doc);
    *doc_p = NULL;
    return 0;
}

sim_crds_t *
sim_crds_new (char *err, size_t errlen)
{
    sim_crds_t *self = calloc (1, sizeof *self);
    if (!self || !(self->docs = cJSON_CreateArray ())) {
        snprintf (err, errlen, "out of memory");
        free (self);
        return NULL;
    }
    for (size_t i = 0; i < sim_crd_ntexts; i++) {
        s_load_t load = {self, sim_crd_texts[i].name, err, errlen};
        char yerr[512] = "";
        *err = 0;
        if (bas_yaml_load_documents (sim_crd_texts[i].text, sim_crd_texts[i].len, s_doc, &load,
                                     yerr, sizeof yerr) != 0) {
            if (!*err)
                snprintf (err, errlen, "%s: %s", sim_crd_texts[i].name, yerr);
            sim_crds_destroy (&self);
            return NULL;
        }
    }
    return self;
}

void
sim_crds_destroy (sim_crds_t **self_p)
{
    sim_crds_t *self = *self_p;
    if (!self)
        return;
    *self_p = NULL;
    cJSON_Delete (self->docs);
    free (self);
}

const cJSON *
sim_crds_schema (const sim_crds_t *self, const sim_kind_t *kind)
{
    if (!self || !kind || (int)kind->id < 0 || kind->id >= SIM_KIND_COUNT)
        return NULL;
    return self->schemas[kind->id];
}

const cJSON *
sim_crds_columns (const sim_crds_t *self, const sim_kind_t *kind)
{
    if (!self || !kind || (int)kind->id < 0 || kind->id >= SIM_KIND_COUNT)
        return NULL;
    return self->columns[kind->id];
}
