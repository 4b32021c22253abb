/*  bas_k8s_node: the Node decoder: allocatable, taints, readiness,
    images.

    Each decoder reads one JSON object in a single pass with the readers of
    bas_k8s_json.h and builds its message as protobuf-c's unpacker would
    (bas_k8s_json.c's design note); NULL with err naming the object and field.
*/
#include "bas_k8s_node.h"

#include "bas_k8s_ann.h"
#include "bas_k8s_json.h"
#include "bas_resource.h"
#include "bas_util.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ------------------------------------------------------------ nodes

//  spec.taints to Taint messages.
static int
s_taints (bas_k8s_json_t *ctx, const cJSON *list, Basalt__V1__Node *node)
{
    size_t n = bas_k8s_json_count (list);
    if (n == 0)
        return 0;
    node->taints = bas_k8s_json_alloc_array (ctx, n, sizeof *node->taints);
    if (!node->taints)
        return -1;
    size_t i = 0;
    for (const cJSON *t = list->child; t; t = t->next, i++) {
        char path[48];
        snprintf (path, sizeof path, "spec.taints[%zu]", i);
        if (!cJSON_IsObject (t)) {
            bas_k8s_json_fail (ctx, "%s: expected an object, got %s", path,
                               bas_k8s_json_type_name (t));
            return -1;
        }
        Basalt__V1__Taint *taint = bas_k8s_json_alloc (ctx, sizeof *taint);
        if (!taint)
            return -1;
        basalt__v1__taint__init (taint);
        node->taints[node->n_taints++] = taint;
        if (bas_k8s_json_str (ctx, bas_k8s_json_get (t, "key"), path, &taint->key) != 0 ||
            bas_k8s_json_str (ctx, bas_k8s_json_get (t, "value"), path, &taint->value) != 0 ||
            bas_k8s_json_str (ctx, bas_k8s_json_get (t, "effect"), path, &taint->effect) != 0)
            return -1;
    }
    return 0;
}

//  The largest image size accepted: 2^53 bytes, the largest integer a
//  JSON number (a double) holds exactly.
#define S_IMAGE_SIZE_MAX 9007199254740992.0

//  status.images to NodeImage messages: each entry's names (strings) and
//  sizeBytes (an integer from 0 to 2^53; absent leaves it unset).
static int
s_node_images (bas_k8s_json_t *ctx, const cJSON *list, Basalt__V1__Node *node)
{
    size_t n = bas_k8s_json_count (list);
    if (n == 0)
        return 0;
    node->images = bas_k8s_json_alloc_array (ctx, n, sizeof *node->images);
    if (!node->images)
        return -1;
    size_t i = 0;
    for (const cJSON *e = list->child; e; e = e->next, i++) {
        char path[64];
        snprintf (path, sizeof path, "status.images[%zu]", i);
        if (!cJSON_IsObject (e)) {
            bas_k8s_json_fail (ctx, "%s: expected an object, got %s", path,
                               bas_k8s_json_type_name (e));
            return -1;
        }
        Basalt__V1__NodeImage *image = bas_k8s_json_alloc (ctx, sizeof *image);
        if (!image)
            return -1;
        basalt__v1__node_image__init (image);
        node->images[node->n_images++] = image;
        char names_path[80];
        snprintf (names_path, sizeof names_path, "%s.names", path);
        const cJSON *names, *size = bas_k8s_json_get (e, "sizeBytes");
        if (bas_k8s_json_array (ctx, bas_k8s_json_get (e, "names"), names_path, &names) != 0 ||
            bas_k8s_json_str_list (ctx, names, names_path, &image->names, &image->n_names) != 0)
            return -1;
        if (!size || cJSON_IsNull (size))
            continue;
        double d = cJSON_IsNumber (size) ? size->valuedouble : -1;
        if (!(d >= 0 && d <= S_IMAGE_SIZE_MAX) || d != (double)(int64_t)d) {
            if (cJSON_IsNumber (size))
                bas_k8s_json_fail (
                    ctx, "%s.sizeBytes: expected a byte count from 0 to 2^53, got %.17g", path, d);
            else
                bas_k8s_json_fail (ctx, "%s.sizeBytes: expected an integer, got %s", path,
                                   bas_k8s_json_type_name (size));
            return -1;
        }
        image->has_size_bytes = 1;
        image->size_bytes = (int64_t)d;
    }
    return 0;
}

Basalt__V1__Node *
bas_k8s_node_from_json (const cJSON *obj, char *err, size_t errlen)
{
    bas_k8s_json_t ctx;
    bas_k8s_json_init (&ctx, err, errlen, "node");
    bas_k8s_meta_t m;
    if (bas_k8s_json_meta (&ctx, obj, "node", &m) != 0)
        return NULL;
    Basalt__V1__Node *node = bas_k8s_json_alloc (&ctx, sizeof *node);
    if (!node)
        return NULL;
    basalt__v1__node__init (node);
    if (bas_k8s_json_set_str (&ctx, &node->name, m.name) ||
        bas_k8s_json_set_str (&ctx, &node->uid, m.uid) ||
        bas_k8s_json_set_str (&ctx, &node->resource_version, m.rv) ||
        bas_k8s_json_kv_list (&ctx, m.labels, "metadata.labels", NULL, &node->labels,
                              &node->n_labels))
        goto error;
    const cJSON *spec, *status, *taints, *conditions, *images;
    node->has_unschedulable = 1;
    node->unschedulable = 0;
    if (bas_k8s_json_object (&ctx, bas_k8s_json_get (obj, "spec"), "spec", &spec) != 0 ||
        bas_k8s_json_object (&ctx, bas_k8s_json_get (obj, "status"), "status", &status) != 0 ||
        bas_k8s_json_array (&ctx, bas_k8s_json_get (spec, "taints"), "spec.taints", &taints) != 0 ||
        s_taints (&ctx, taints, node) != 0 ||
        bas_k8s_json_bool (&ctx, bas_k8s_json_get (spec, "unschedulable"), "spec.unschedulable",
                           &node->unschedulable, NULL) != 0 ||
        bas_k8s_json_resources (&ctx, bas_k8s_json_get (status, "allocatable"),
                                "status.allocatable", &node->allocatable) != 0 ||
        bas_k8s_json_array (&ctx, bas_k8s_json_get (status, "conditions"), "status.conditions",
                            &conditions) != 0 ||
        bas_k8s_json_array (&ctx, bas_k8s_json_get (status, "images"), "status.images", &images) !=
            0 ||
        s_node_images (&ctx, images, node) != 0)
        goto error;
    if (!node->allocatable) {
        //  A node without allocatable has nothing to give: zero, not absent.
        bas_res_t zero;
        bas_res_zero (&zero);
        node->allocatable = bas_res_to_proto (&zero);
        if (!node->allocatable) {
            bas_k8s_json_fail (&ctx, "out of memory");
            goto error;
        }
    }
    //  Ready unless a Ready condition says otherwise (simulated nodes may
    //  have no conditions at all).
    node->has_ready = 1;
    node->ready = 1;
    for (const cJSON *c = conditions ? conditions->child : NULL; c; c = c->next) {
        const char *type, *cstatus;
        if (!cJSON_IsObject (c)) {
            bas_k8s_json_fail (&ctx, "status.conditions: expected an object, got %s",
                               bas_k8s_json_type_name (c));
            goto error;
        }
        if (bas_k8s_json_peek_str (&ctx, bas_k8s_json_get (c, "type"), "status.conditions[].type",
                                   &type) != 0 ||
            bas_k8s_json_peek_str (&ctx, bas_k8s_json_get (c, "status"),
                                   "status.conditions[].status", &cstatus) != 0)
            goto error;
        if (type && strcmp (type, "Ready") == 0)
            node->ready = cstatus && strcmp (cstatus, "True") == 0;
    }
    return node;
error:
    protobuf_c_message_free_unpacked (&node->base, NULL);
    return NULL;
}
