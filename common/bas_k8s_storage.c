/*  bas_k8s_storage: see bas_k8s_storage.h.

    What each field means to scheduling is kube-scheduler's VolumeBinding
    (pkg/scheduler/framework/plugins/volumebinding) and the helpers it
    calls (k8s.io/component-helpers/storage/volume):
      - a claim is fully bound when spec.volumeName is set and the PV
        controller has annotated it pv.kubernetes.io/bind-completed;
      - a claim's class is spec.storageClassName, else the older
        volume.beta.kubernetes.io/storage-class annotation;
      - a PV's topology is spec.nodeAffinity.required (ORed terms).
*/
#include "bas_k8s_storage.h"
#include "bas_k8s_json.h"
#include "bas_quantity.h"

#include <stdio.h>
#include <string.h>

//  A storage quantity (resources.requests.storage, capacity.storage) in
//  bytes; absent leaves *has false.
static int
s_storage_bytes (bas_k8s_json_t *ctx, const cJSON *list, const char *path, int64_t *out,
                 protobuf_c_boolean *has)
{
    const cJSON *obj;
    if (bas_k8s_json_object (ctx, list, path, &obj) != 0)
        return -1;
    const cJSON *q = bas_k8s_json_get (obj, "storage");
    if (!q)
        return 0;
    char where[160];
    snprintf (where, sizeof where, "%s.storage", path);
    const char *text;
    if (bas_k8s_json_peek_str (ctx, q, where, &text) != 0)
        return -1;
    if (!text) {
        bas_k8s_json_fail (ctx, "%s: expected a quantity, got null", where);
        return -1;
    }
    char err[256];
    if (bas_quantity_parse_value (text, out, err, sizeof err) != 0) {
        bas_k8s_json_fail (ctx, "%s: %s", where, err);
        return -1;
    }
    if (*out < 0) {
        bas_k8s_json_fail (ctx, "%s: must not be negative", where);
        return -1;
    }
    *has = 1;
    return 0;
}

//  The class a claim or volume names: the spec's field, else the beta
//  annotation (which wins where both are set, as the helpers read it).
static int
s_class (bas_k8s_json_t *ctx, const cJSON *spec, const bas_k8s_meta_t *m, char **out)
{
    const char *ann, *field;
    if (bas_k8s_json_map_str (ctx, m->annotations, "metadata.annotations",
                              BAS_ANN_BETA_STORAGE_CLASS, &ann) != 0 ||
        bas_k8s_json_peek_str (ctx, bas_k8s_json_get (spec, "storageClassName"),
                               "spec.storageClassName", &field) != 0)
        return -1;
    const char *cls = ann ? ann : field;
    return cls ? bas_k8s_json_set_str (ctx, out, cls) : 0;
}

static int
s_access_modes (bas_k8s_json_t *ctx, const cJSON *spec, char ***out, size_t *n_out)
{
    const cJSON *modes;
    return bas_k8s_json_array (ctx, bas_k8s_json_get (spec, "accessModes"), "spec.accessModes",
                               &modes) != 0 ||
                   bas_k8s_json_str_list (ctx, modes, "spec.accessModes", out, n_out) != 0
               ? -1
               : 0;
}

Basalt__V1__PersistentVolumeClaim *
bas_k8s_pvc_from_json (const cJSON *obj, char *err, size_t errlen)
{
    bas_k8s_json_t ctx;
    bas_k8s_json_init (&ctx, err, errlen, "persistentvolumeclaim");
    bas_k8s_meta_t m;
    if (bas_k8s_json_meta (&ctx, obj, "persistentvolumeclaim", &m) != 0)
        return NULL;
    Basalt__V1__PersistentVolumeClaim *pvc = bas_k8s_json_alloc (&ctx, sizeof *pvc);
    if (!pvc)
        return NULL;
    basalt__v1__persistent_volume_claim__init (pvc);
    const cJSON *spec, *status, *resources;
    const char *selected, *completed;
    Basalt__V1__OwnerRef *owner = NULL;
    if (bas_k8s_json_set_str (&ctx, &pvc->uid, m.uid) ||
        bas_k8s_json_set_str (&ctx, &pvc->namespace_, m.ns) ||
        bas_k8s_json_set_str (&ctx, &pvc->name, m.name) ||
        bas_k8s_json_set_str (&ctx, &pvc->resource_version, m.rv) ||
        bas_k8s_json_object (&ctx, bas_k8s_json_get (obj, "spec"), "spec", &spec) != 0 ||
        bas_k8s_json_object (&ctx, bas_k8s_json_get (obj, "status"), "status", &status) != 0 ||
        bas_k8s_json_str (&ctx, bas_k8s_json_get (spec, "volumeName"), "spec.volumeName",
                          &pvc->volume_name) != 0 ||
        bas_k8s_json_str (&ctx, bas_k8s_json_get (spec, "volumeMode"), "spec.volumeMode",
                          &pvc->volume_mode) != 0 ||
        s_class (&ctx, spec, &m, &pvc->storage_class) != 0 ||
        bas_k8s_json_str (&ctx, bas_k8s_json_get (status, "phase"), "status.phase", &pvc->phase) !=
            0 ||
        s_access_modes (&ctx, spec, &pvc->access_modes, &pvc->n_access_modes) != 0 ||
        bas_k8s_json_object (&ctx, bas_k8s_json_get (spec, "resources"), "spec.resources",
                             &resources) != 0 ||
        s_storage_bytes (&ctx, bas_k8s_json_get (resources, "requests"), "spec.resources.requests",
                         &pvc->request_bytes, &pvc->has_request_bytes) != 0 ||
        bas_k8s_json_label_selector (&ctx, bas_k8s_json_get (spec, "selector"), "spec.selector",
                                     &pvc->selector) != 0 ||
        bas_k8s_json_map_str (&ctx, m.annotations, "metadata.annotations", BAS_ANN_SELECTED_NODE,
                              &selected) != 0 ||
        bas_k8s_json_map_str (&ctx, m.annotations, "metadata.annotations", BAS_ANN_BIND_COMPLETED,
                              &completed) != 0 ||
        bas_k8s_json_controller_owner (&ctx, m.owners, &owner) != 0)
        goto error;
    pvc->has_deleting = 1;
    pvc->deleting = m.deleting;
    //  The helpers test that the annotation is there, whatever its value.
    pvc->has_bind_completed = 1;
    pvc->bind_completed = completed != NULL;
    if ((selected && bas_k8s_json_set_str (&ctx, &pvc->selected_node, selected)) ||
        (owner && owner->uid && bas_k8s_json_set_str (&ctx, &pvc->owner_uid, owner->uid)))
        goto error;
    if (owner)
        protobuf_c_message_free_unpacked (&owner->base, NULL);
    return pvc;
error:
    if (owner)
        protobuf_c_message_free_unpacked (&owner->base, NULL);
    protobuf_c_message_free_unpacked (&pvc->base, NULL);
    return NULL;
}

//  spec.nodeAffinity.required.nodeSelectorTerms into pv->node_affinity.
static int
s_pv_affinity (bas_k8s_json_t *ctx, const cJSON *spec, Basalt__V1__PersistentVolume *pv)
{
    static const char path[] = "spec.nodeAffinity.required.nodeSelectorTerms";
    const cJSON *na, *req, *terms;
    if (bas_k8s_json_object (ctx, bas_k8s_json_get (spec, "nodeAffinity"), "spec.nodeAffinity",
                             &na) != 0 ||
        bas_k8s_json_object (ctx, bas_k8s_json_get (na, "required"), "spec.nodeAffinity.required",
                             &req) != 0 ||
        bas_k8s_json_array (ctx, bas_k8s_json_get (req, "nodeSelectorTerms"), path, &terms) != 0)
        return -1;
    if (!req)
        return 0;
    pv->has_has_node_affinity = 1;
    pv->has_node_affinity = 1;
    size_t n = bas_k8s_json_count (terms);
    if (n == 0) {
        //  The API server refuses a required affinity without terms; one
        //  that came through anyway would match no node.
        bas_k8s_json_fail (ctx, "%s: must have at least one term", path);
        return -1;
    }
    pv->node_affinity = bas_k8s_json_alloc_array (ctx, n, sizeof *pv->node_affinity);
    if (!pv->node_affinity)
        return -1;
    for (const cJSON *t = terms->child; t; t = t->next)
        if (bas_k8s_json_node_term (ctx, t, path, &pv->node_affinity[pv->n_node_affinity++]) != 0)
            return -1;
    return 0;
}

//  spec.csi's driver and volumeHandle (what NodeVolumeLimits counts).
static int
s_pv_csi (bas_k8s_json_t *ctx, const cJSON *spec, Basalt__V1__PersistentVolume *pv)
{
    const cJSON *csi;
    if (bas_k8s_json_object (ctx, bas_k8s_json_get (spec, "csi"), "spec.csi", &csi) != 0 ||
        bas_k8s_json_str (ctx, bas_k8s_json_get (csi, "driver"), "spec.csi.driver",
                          &pv->csi_driver) != 0 ||
        bas_k8s_json_str (ctx, bas_k8s_json_get (csi, "volumeHandle"), "spec.csi.volumeHandle",
                          &pv->csi_volume_handle) != 0)
        return -1;
    return 0;
}

Basalt__V1__PersistentVolume *
bas_k8s_pv_from_json (const cJSON *obj, char *err, size_t errlen)
{
    bas_k8s_json_t ctx;
    bas_k8s_json_init (&ctx, err, errlen, "persistentvolume");
    bas_k8s_meta_t m;
    if (bas_k8s_json_meta (&ctx, obj, "persistentvolume", &m) != 0)
        return NULL;
    Basalt__V1__PersistentVolume *pv = bas_k8s_json_alloc (&ctx, sizeof *pv);
    if (!pv)
        return NULL;
    basalt__v1__persistent_volume__init (pv);
    const cJSON *spec, *status, *ref;
    if (bas_k8s_json_set_str (&ctx, &pv->name, m.name) ||
        bas_k8s_json_set_str (&ctx, &pv->uid, m.uid) ||
        bas_k8s_json_set_str (&ctx, &pv->resource_version, m.rv) ||
        bas_k8s_json_object (&ctx, bas_k8s_json_get (obj, "spec"), "spec", &spec) != 0 ||
        bas_k8s_json_object (&ctx, bas_k8s_json_get (obj, "status"), "status", &status) != 0 ||
        s_class (&ctx, spec, &m, &pv->storage_class) != 0 ||
        bas_k8s_json_str (&ctx, bas_k8s_json_get (status, "phase"), "status.phase", &pv->phase) !=
            0 ||
        bas_k8s_json_str (&ctx, bas_k8s_json_get (spec, "volumeMode"), "spec.volumeMode",
                          &pv->volume_mode) != 0 ||
        s_access_modes (&ctx, spec, &pv->access_modes, &pv->n_access_modes) != 0 ||
        s_storage_bytes (&ctx, bas_k8s_json_get (spec, "capacity"), "spec.capacity",
                         &pv->capacity_bytes, &pv->has_capacity_bytes) != 0 ||
        bas_k8s_json_object (&ctx, bas_k8s_json_get (spec, "claimRef"), "spec.claimRef", &ref) !=
            0 ||
        bas_k8s_json_str (&ctx, bas_k8s_json_get (ref, "namespace"), "spec.claimRef.namespace",
                          &pv->claim_namespace) != 0 ||
        bas_k8s_json_str (&ctx, bas_k8s_json_get (ref, "name"), "spec.claimRef.name",
                          &pv->claim_name) != 0 ||
        bas_k8s_json_str (&ctx, bas_k8s_json_get (ref, "uid"), "spec.claimRef.uid",
                          &pv->claim_uid) != 0 ||
        s_pv_affinity (&ctx, spec, pv) != 0 || s_pv_csi (&ctx, spec, pv) != 0 ||
        bas_k8s_json_kv_list (&ctx, m.labels, "metadata.labels", NULL, &pv->labels,
                              &pv->n_labels) != 0)
        goto error;
    pv->has_deleting = 1;
    pv->deleting = m.deleting;
    return pv;
error:
    protobuf_c_message_free_unpacked (&pv->base, NULL);
    return NULL;
}

//  allowedTopologies: each term's matchLabelExpressions {key, values} as a
//  NodeSelectorTerm of In requirements (what they mean).
static int
s_allowed_topologies (bas_k8s_json_t *ctx, const cJSON *obj, Basalt__V1__StorageClass *sc)
{
    static const char path[] = "allowedTopologies";
    const cJSON *terms;
    if (bas_k8s_json_array (ctx, bas_k8s_json_get (obj, "allowedTopologies"), path, &terms) != 0)
        return -1;
    size_t n = bas_k8s_json_count (terms);
    if (n == 0)
        return 0;
    sc->allowed_topologies = bas_k8s_json_alloc_array (ctx, n, sizeof *sc->allowed_topologies);
    if (!sc->allowed_topologies)
        return -1;
    for (const cJSON *t = terms->child; t; t = t->next) {
        if (!cJSON_IsObject (t)) {
            bas_k8s_json_fail (ctx, "%s: expected an object, got %s", path,
                               bas_k8s_json_type_name (t));
            return -1;
        }
        Basalt__V1__NodeSelectorTerm *term = bas_k8s_json_alloc (ctx, sizeof *term);
        if (!term)
            return -1;
        basalt__v1__node_selector_term__init (term);
        sc->allowed_topologies[sc->n_allowed_topologies++] = term;
        const cJSON *exprs;
        if (bas_k8s_json_array (ctx, bas_k8s_json_get (t, "matchLabelExpressions"),
                                "allowedTopologies.matchLabelExpressions", &exprs) != 0)
            return -1;
        size_t ne = bas_k8s_json_count (exprs);
        if (ne == 0)
            continue;
        term->match_expressions =
            bas_k8s_json_alloc_array (ctx, ne, sizeof *term->match_expressions);
        if (!term->match_expressions)
            return -1;
        for (const cJSON *e = exprs->child; e; e = e->next) {
            if (!cJSON_IsObject (e)) {
                bas_k8s_json_fail (ctx,
                                   "allowedTopologies.matchLabelExpressions: expected an "
                                   "object, got %s",
                                   bas_k8s_json_type_name (e));
                return -1;
            }
            Basalt__V1__NodeSelectorRequirement *r = bas_k8s_json_alloc (ctx, sizeof *r);
            if (!r)
                return -1;
            basalt__v1__node_selector_requirement__init (r);
            term->match_expressions[term->n_match_expressions++] = r;
            const cJSON *values;
            if (bas_k8s_json_str (ctx, bas_k8s_json_get (e, "key"),
                                  "allowedTopologies.matchLabelExpressions.key", &r->key) != 0 ||
                bas_k8s_json_set_str (ctx, &r->operator_, "In") != 0 ||
                bas_k8s_json_array (ctx, bas_k8s_json_get (e, "values"),
                                    "allowedTopologies.matchLabelExpressions.values",
                                    &values) != 0 ||
                bas_k8s_json_str_list (ctx, values,
                                       "allowedTopologies.matchLabelExpressions.values", &r->values,
                                       &r->n_values) != 0)
                return -1;
        }
    }
    return 0;
}

Basalt__V1__StorageClass *
bas_k8s_storageclass_from_json (const cJSON *obj, char *err, size_t errlen)
{
    bas_k8s_json_t ctx;
    bas_k8s_json_init (&ctx, err, errlen, "storageclass");
    bas_k8s_meta_t m;
    if (bas_k8s_json_meta (&ctx, obj, "storageclass", &m) != 0)
        return NULL;
    Basalt__V1__StorageClass *sc = bas_k8s_json_alloc (&ctx, sizeof *sc);
    if (!sc)
        return NULL;
    basalt__v1__storage_class__init (sc);
    const char *mode;
    if (bas_k8s_json_set_str (&ctx, &sc->name, m.name) ||
        bas_k8s_json_set_str (&ctx, &sc->uid, m.uid) ||
        bas_k8s_json_set_str (&ctx, &sc->resource_version, m.rv) ||
        bas_k8s_json_str (&ctx, bas_k8s_json_get (obj, "provisioner"), "provisioner",
                          &sc->provisioner) != 0 ||
        bas_k8s_json_peek_str (&ctx, bas_k8s_json_get (obj, "volumeBindingMode"),
                               "volumeBindingMode", &mode) != 0 ||
        s_allowed_topologies (&ctx, obj, sc) != 0)
        goto error;
    if (!mode)
        mode = "Immediate";
    if (strcmp (mode, "Immediate") != 0 && strcmp (mode, "WaitForFirstConsumer") != 0) {
        char q[BAS_K8S_QUOTE_MAX * 4 + 8];
        bas_quote (mode, q, sizeof q);
        bas_k8s_json_fail (&ctx,
                           "volumeBindingMode: \"%s\" is neither Immediate nor "
                           "WaitForFirstConsumer",
                           q);
        goto error;
    }
    if (bas_k8s_json_set_str (&ctx, &sc->volume_binding_mode, mode) != 0)
        goto error;
    return sc;
error:
    protobuf_c_message_free_unpacked (&sc->base, NULL);
    return NULL;
}

Basalt__V1__CSINode *
bas_k8s_csinode_from_json (const cJSON *obj, char *err, size_t errlen)
{
    bas_k8s_json_t ctx;
    bas_k8s_json_init (&ctx, err, errlen, "csinode");
    bas_k8s_meta_t m;
    if (bas_k8s_json_meta (&ctx, obj, "csinode", &m) != 0)
        return NULL;
    Basalt__V1__CSINode *cn = bas_k8s_json_alloc (&ctx, sizeof *cn);
    if (!cn)
        return NULL;
    basalt__v1__csinode__init (cn);
    const cJSON *spec, *drivers;
    if (bas_k8s_json_set_str (&ctx, &cn->name, m.name) ||
        bas_k8s_json_set_str (&ctx, &cn->uid, m.uid) ||
        bas_k8s_json_set_str (&ctx, &cn->resource_version, m.rv) ||
        bas_k8s_json_object (&ctx, bas_k8s_json_get (obj, "spec"), "spec", &spec) != 0 ||
        bas_k8s_json_array (&ctx, bas_k8s_json_get (spec, "drivers"), "spec.drivers", &drivers) !=
            0)
        goto error;
    size_t n = bas_k8s_json_count (drivers);
    if (n) {
        cn->drivers = bas_k8s_json_alloc_array (&ctx, n, sizeof *cn->drivers);
        if (!cn->drivers)
            goto error;
    }
    size_t i = 0;
    for (const cJSON *d = n ? drivers->child : NULL; d; d = d->next, i++) {
        char path[64];
        snprintf (path, sizeof path, "spec.drivers[%zu]", i);
        if (!cJSON_IsObject (d)) {
            bas_k8s_json_fail (&ctx, "%s: expected an object, got %s", path,
                               bas_k8s_json_type_name (d));
            goto error;
        }
        Basalt__V1__CSINodeDriver *drv = bas_k8s_json_alloc (&ctx, sizeof *drv);
        if (!drv)
            goto error;
        basalt__v1__csinode_driver__init (drv);
        cn->drivers[cn->n_drivers++] = drv;
        char where[96];
        const cJSON *alloc;
        snprintf (where, sizeof where, "%s.name", path);
        if (bas_k8s_json_str (&ctx, bas_k8s_json_get (d, "name"), where, &drv->name) != 0)
            goto error;
        snprintf (where, sizeof where, "%s.nodeID", path);
        if (bas_k8s_json_str (&ctx, bas_k8s_json_get (d, "nodeID"), where, &drv->node_id) != 0)
            goto error;
        snprintf (where, sizeof where, "%s.allocatable", path);
        if (bas_k8s_json_object (&ctx, bas_k8s_json_get (d, "allocatable"), where, &alloc) != 0)
            goto error;
        snprintf (where, sizeof where, "%s.allocatable.count", path);
        if (bas_k8s_json_int32 (&ctx, bas_k8s_json_get (alloc, "count"), where, &drv->count,
                                &drv->has_count) != 0)
            goto error;
        if (!drv->name || !*drv->name) {
            bas_k8s_json_fail (&ctx, "%s.name: required", path);
            goto error;
        }
    }
    return cn;
error:
    protobuf_c_message_free_unpacked (&cn->base, NULL);
    return NULL;
}
