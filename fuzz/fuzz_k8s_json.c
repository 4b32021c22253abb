/*  fuzz_k8s_json: Kubernetes JSON into the model, as cache-svc reads it.
    The input is JSON text, so the recorded objects, list pages and watch
    streams of shared/k8s-fixtures are seeds as they are. It is parsed and
    then decoded by every decoder (bas_k8s_object_from_json for each kind
    the scheduler reads, whatever its "kind" says); a List's items and a
    watch event's object ({"type":…,"object":…}) are decoded the same way;
    a text of several lines is also read as a watch stream, one event per
    line.
*/
#include "fuzz_quiet.h"
#include "bas_k8s.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

static void
s_decode_all (const cJSON *obj)
{
    //  Every kind the proto names, so a kind added later is fuzzed too.
    const ProtobufCEnumDescriptor *kinds = &basalt__v1__object_kind__descriptor;
    for (unsigned i = 0; i < kinds->n_values; i++) {
        Basalt__V1__ObjectKind kind = (Basalt__V1__ObjectKind)kinds->values[i].value;
        if (kind == BASALT__V1__OBJECT_KIND__OBJECT_KIND_UNSPECIFIED)
            continue;
        char err[256];
        Basalt__V1__Object *o = bas_k8s_object_from_json (kind, obj, err, sizeof err);
        if (o)
            protobuf_c_message_free_unpacked (&o->base, NULL);
    }
}

static void
s_document (const cJSON *doc)
{
    s_decode_all (doc);
    const cJSON *items = cJSON_GetObjectItemCaseSensitive (doc, "items");
    const cJSON *item;
    if (cJSON_IsArray (items))
        cJSON_ArrayForEach (item, items) s_decode_all (item);
    const cJSON *object = cJSON_GetObjectItemCaseSensitive (doc, "object");
    if (cJSON_IsObject (object))
        s_decode_all (object);
}

FUZZ_QUIET_INITIALIZE

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    cJSON *doc = cJSON_ParseWithLength ((const char *)data, size);
    if (doc)
        s_document (doc);
    cJSON_Delete (doc);
    //  As a watch stream: one JSON event per line.
    size_t from = 0;
    for (size_t i = 0; i <= size; i++)
        if (i == size || data[i] == '\n') {
            if (i > from && (from > 0 || i < size)) {
                cJSON *event = cJSON_ParseWithLength ((const char *)data + from, i - from);
                if (event)
                    s_document (event);
                cJSON_Delete (event);
            }
            from = i + 1;
        }
    return 0;
}
