/*  bas_pbjson: see bas_pbjson.h. Walks ProtobufCFieldDescriptor tables:
    `offset` locates the value, `quantifier_offset` the has_ flag, the
    repeated count or the oneof case.
*/
#include "bas_pbjson.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool
s_present (const ProtobufCMessage *msg, const ProtobufCFieldDescriptor *f, size_t *count)
{
    const char *base = (const char *) msg;
    *count = 1;
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
        *count = *(const size_t *) (base + f->quantifier_offset);
        return *count > 0;
    }
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
        return *(const uint32_t *) (base + f->quantifier_offset) == f->id;
    if (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_MESSAGE)
        return *(const void *const *) (base + f->offset) != NULL;
    if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->quantifier_offset)
        return *(const protobuf_c_boolean *) (base + f->quantifier_offset);
    return true;
}

static size_t
s_size (ProtobufCType type)
{
    switch (type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_FLOAT:
    case PROTOBUF_C_TYPE_ENUM:
        return 4;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
        return 8;
    case PROTOBUF_C_TYPE_BOOL:
        return sizeof (protobuf_c_boolean);
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_MESSAGE:
        return sizeof (void *);
    case PROTOBUF_C_TYPE_BYTES:
        return sizeof (ProtobufCBinaryData);
    }
    return 0;
}

static cJSON *
s_int64 (int64_t v)
{
    if (v > -(INT64_C (1) << 53) && v < (INT64_C (1) << 53))
        return cJSON_CreateNumber ((double) v);
    char buf[32];
    snprintf (buf, sizeof buf, "%lld", (long long) v);
    return cJSON_CreateString (buf);
}

static cJSON *
s_uint64 (uint64_t v)
{
    if (v < (UINT64_C (1) << 53))
        return cJSON_CreateNumber ((double) v);
    char buf[32];
    snprintf (buf, sizeof buf, "%llu", (unsigned long long) v);
    return cJSON_CreateString (buf);
}

static cJSON *
s_value (const ProtobufCFieldDescriptor *f, const void *p)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
        return cJSON_CreateNumber (*(const int32_t *) p);
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        return cJSON_CreateNumber (*(const uint32_t *) p);
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        return s_int64 (*(const int64_t *) p);
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        return s_uint64 (*(const uint64_t *) p);
    case PROTOBUF_C_TYPE_FLOAT:
        return cJSON_CreateNumber (*(const float *) p);
    case PROTOBUF_C_TYPE_DOUBLE:
        return cJSON_CreateNumber (*(const double *) p);
    case PROTOBUF_C_TYPE_BOOL:
        return cJSON_CreateBool (*(const protobuf_c_boolean *) p);
    case PROTOBUF_C_TYPE_ENUM: {
        const ProtobufCEnumValue *ev =
            protobuf_c_enum_descriptor_get_value (f->descriptor, *(const int *) p);
        return ev ? cJSON_CreateString (ev->name) : cJSON_CreateNumber (*(const int *) p);
    }
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(const char *const *) p;
        return cJSON_CreateString (s ? s : "");
    }
    case PROTOBUF_C_TYPE_BYTES: {
        const ProtobufCBinaryData *b = p;
        char *hex = malloc (b->len * 2 + 1);
        if (!hex)
            abort ();
        for (size_t i = 0; i < b->len; i++)
            snprintf (hex + 2 * i, 3, "%02x", b->data[i]);
        hex[b->len * 2] = 0;
        cJSON *out = cJSON_CreateString (hex);
        free (hex);
        return out;
    }
    case PROTOBUF_C_TYPE_MESSAGE: {
        const ProtobufCMessage *m = *(const ProtobufCMessage *const *) p;
        return m ? bas_pbjson_from_message (m) : cJSON_CreateNull ();
    }
    }
    return cJSON_CreateNull ();
}

cJSON *
bas_pbjson_from_message (const ProtobufCMessage *msg)
{
    cJSON *out = cJSON_CreateObject ();
    const ProtobufCMessageDescriptor *d = msg->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        size_t count;
        if (!s_present (msg, f, &count))
            continue;
        const char *field = (const char *) msg + f->offset;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            cJSON *arr = cJSON_AddArrayToObject (out, f->name);
            const char *elems = *(const char *const *) field;
            for (size_t k = 0; k < count; k++)
                cJSON_AddItemToArray (arr, s_value (f, elems + k * s_size (f->type)));
        }
        else
            cJSON_AddItemToObject (out, f->name, s_value (f, field));
    }
    return out;
}

bool
bas_pbjson_has_string (const ProtobufCMessage *msg, const char *text)
{
    const ProtobufCMessageDescriptor *d = msg->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->type != PROTOBUF_C_TYPE_STRING && f->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        size_t count;
        if (!s_present (msg, f, &count))
            continue;
        const char *field = (const char *) msg + f->offset;
        const void *const *elems = f->label == PROTOBUF_C_LABEL_REPEATED
                                       ? *(const void *const *const *) field
                                       : (const void *const *) field;
        for (size_t k = 0; k < count; k++) {
            const void *v = elems[k];
            if (!v)
                continue;
            if (f->type == PROTOBUF_C_TYPE_STRING && strcmp ((const char *) v, text) == 0)
                return true;
            if (f->type == PROTOBUF_C_TYPE_MESSAGE && bas_pbjson_has_string (v, text))
                return true;
        }
    }
    return false;
}
