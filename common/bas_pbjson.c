/*  bas_pbjson: see bas_pbjson.h. Walks ProtobufCFieldDescriptor tables:
    `offset` locates the value, `quantifier_offset` the has_ flag, the
    repeated count or the oneof case.
*/
#include "bas_pbjson.h"
#include "bas_util.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool
s_present (const ProtobufCMessage *msg, const ProtobufCFieldDescriptor *f, size_t *count)
{
    const char *base = (const char *)msg;
    *count = 1;
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
        *count = *(const size_t *)(base + f->quantifier_offset);
        return *count > 0;
    }
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
        return *(const uint32_t *)(base + f->quantifier_offset) == f->id;
    if (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_MESSAGE)
        return *(const void *const *)(base + f->offset) != NULL;
    if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->quantifier_offset)
        return *(const protobuf_c_boolean *)(base + f->quantifier_offset);
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

//  64-bit integers: exact JSON integers (cJSON prints its doubles with 15
//  significant digits, so a microsecond time or an epoch ending in 0 came
//  out as 1.79546028530084e+15), written as raw text; beyond 2^53, which a
//  double cannot hold, strings as proto3's JSON mapping has them.
static cJSON *
s_int64 (int64_t v)
{
    char buf[32];
    snprintf (buf, sizeof buf, "%lld", (long long)v);
    if (v > -(INT64_C (1) << 53) && v < (INT64_C (1) << 53))
        return cJSON_CreateRaw (buf);
    return cJSON_CreateString (buf);
}

static cJSON *
s_uint64 (uint64_t v)
{
    char buf[32];
    snprintf (buf, sizeof buf, "%llu", (unsigned long long)v);
    if (v < (UINT64_C (1) << 53))
        return cJSON_CreateRaw (buf);
    return cJSON_CreateString (buf);
}

static cJSON *
s_value (const ProtobufCFieldDescriptor *f, const void *p)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
        return cJSON_CreateNumber (*(const int32_t *)p);
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        return cJSON_CreateNumber (*(const uint32_t *)p);
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        return s_int64 (*(const int64_t *)p);
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        return s_uint64 (*(const uint64_t *)p);
    case PROTOBUF_C_TYPE_FLOAT:
        return cJSON_CreateNumber (*(const float *)p);
    case PROTOBUF_C_TYPE_DOUBLE:
        return cJSON_CreateNumber (*(const double *)p);
    case PROTOBUF_C_TYPE_BOOL:
        return cJSON_CreateBool (*(const protobuf_c_boolean *)p);
    case PROTOBUF_C_TYPE_ENUM: {
        const ProtobufCEnumValue *ev =
            protobuf_c_enum_descriptor_get_value (f->descriptor, *(const int *)p);
        return ev ? cJSON_CreateString (ev->name) : cJSON_CreateNumber (*(const int *)p);
    }
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(const char *const *)p;
        return cJSON_CreateString (s ? s : "");
    }
    case PROTOBUF_C_TYPE_BYTES: {
        const ProtobufCBinaryData *b = p;
        char *hex = bas_malloc (b->len * 2 + 1);
        for (size_t i = 0; i < b->len; i++)
            snprintf (hex + 2 * i, 3, "%02x", b->data[i]);
        hex[b->len * 2] = 0;
        cJSON *out = cJSON_CreateString (hex);
        free (hex);
        return out;
    }
    case PROTOBUF_C_TYPE_MESSAGE: {
        const ProtobufCMessage *m = *(const ProtobufCMessage *const *)p;
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
        const char *field = (const char *)msg + f->offset;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            cJSON *arr = cJSON_AddArrayToObject (out, f->name);
            const char *elems = *(const char *const *)field;
            for (size_t k = 0; k < count; k++)
                cJSON_AddItemToArray (arr, s_value (f, elems + k * s_size (f->type)));
        } else
            cJSON_AddItemToObject (out, f->name, s_value (f, field));
    }
    return out;
}

void
bas_pbjson_strings (const ProtobufCMessage *msg, bas_pbjson_string_fn *fn, void *arg)
{
    const ProtobufCMessageDescriptor *d = msg->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->type != PROTOBUF_C_TYPE_STRING && f->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        size_t count;
        if (!s_present (msg, f, &count))
            continue;
        const char *field = (const char *)msg + f->offset;
        const void *const *elems = f->label == PROTOBUF_C_LABEL_REPEATED
                                       ? *(const void *const *const *)field
                                       : (const void *const *)field;
        for (size_t k = 0; k < count; k++) {
            const void *v = elems[k];
            if (!v)
                continue;
            if (f->type == PROTOBUF_C_TYPE_STRING)
                fn (arg, msg, f->name, (const char *)v);
            else
                bas_pbjson_strings (v, fn, arg);
        }
    }
}

// ------------------------------------------------------------ JSON to message

static bool
s_fail (char *err, size_t errlen, const char *path, const char *what)
{
    if (err && errlen)
        snprintf (err, errlen, "%s: %s", path, what);
    return false;
}

//  A JSON number or numeric string as a 64-bit integer within [lo, hi]
//  (signed) or [0, uhi] (unsigned).
static bool
s_json_int (const cJSON *j, bool is_signed, int64_t lo, int64_t hi, uint64_t uhi, int64_t *sv,
            uint64_t *uv)
{
    if (cJSON_IsNumber (j)) {
        double d = j->valuedouble;
        if (d != floor (d) || isnan (d))
            return false;
        if (is_signed) {
            if (d < (double)lo || d > (double)hi || d >= 9223372036854775808.0)
                return false;
            *sv = (int64_t)d;
            return *sv >= lo && *sv <= hi;
        }
        if (d < 0 || d > (double)uhi || d >= 18446744073709551616.0)
            return false;
        *uv = (uint64_t)d;
        return *uv <= uhi;
    }
    //  A string, or raw integer text from bas_pbjson_from_message.
    if (!(cJSON_IsString (j) || cJSON_IsRaw (j)) || !j->valuestring || !j->valuestring[0])
        return false;
    char *end;
    errno = 0;
    if (is_signed) {
        long long v = strtoll (j->valuestring, &end, 10);
        if (*end || errno || v < lo || v > hi)
            return false;
        *sv = v;
        return true;
    }
    if (j->valuestring[0] == '-')
        return false;
    unsigned long long v = strtoull (j->valuestring, &end, 10);
    if (*end || errno || v > uhi)
        return false;
    *uv = v;
    return true;
}

static int
s_hexval (char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static ProtobufCMessage *s_to_message (const ProtobufCMessageDescriptor *desc, const cJSON *json,
                                       const char *path, char *err, size_t errlen);

//  Fill one value of field f at p (already zeroed) from j. `path` names it.
static bool
s_set_value (const ProtobufCFieldDescriptor *f, void *p, const cJSON *j, const char *path,
             char *err, size_t errlen)
{
    int64_t sv = 0;
    uint64_t uv = 0;
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
        if (!s_json_int (j, true, INT32_MIN, INT32_MAX, 0, &sv, &uv))
            return s_fail (err, errlen, path, "not a 32-bit integer");
        *(int32_t *)p = (int32_t)sv;
        return true;
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        if (!s_json_int (j, false, 0, 0, UINT32_MAX, &sv, &uv))
            return s_fail (err, errlen, path, "not an unsigned 32-bit integer");
        *(uint32_t *)p = (uint32_t)uv;
        return true;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        if (!s_json_int (j, true, INT64_MIN, INT64_MAX, 0, &sv, &uv))
            return s_fail (err, errlen, path, "not a 64-bit integer");
        *(int64_t *)p = sv;
        return true;
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        if (!s_json_int (j, false, 0, 0, UINT64_MAX, &sv, &uv))
            return s_fail (err, errlen, path, "not an unsigned 64-bit integer");
        *(uint64_t *)p = uv;
        return true;
    case PROTOBUF_C_TYPE_FLOAT:
        if (!cJSON_IsNumber (j))
            return s_fail (err, errlen, path, "not a number");
        *(float *)p = (float)j->valuedouble;
        return true;
    case PROTOBUF_C_TYPE_DOUBLE:
        if (!cJSON_IsNumber (j))
            return s_fail (err, errlen, path, "not a number");
        *(double *)p = j->valuedouble;
        return true;
    case PROTOBUF_C_TYPE_BOOL:
        if (!cJSON_IsBool (j))
            return s_fail (err, errlen, path, "not true or false");
        *(protobuf_c_boolean *)p = cJSON_IsTrue (j);
        return true;
    case PROTOBUF_C_TYPE_ENUM: {
        const ProtobufCEnumValue *ev = NULL;
        if (cJSON_IsString (j))
            ev = protobuf_c_enum_descriptor_get_value_by_name (f->descriptor, j->valuestring);
        else if (s_json_int (j, true, INT32_MIN, INT32_MAX, 0, &sv, &uv))
            ev = protobuf_c_enum_descriptor_get_value (f->descriptor, (int)sv);
        if (!ev)
            return s_fail (err, errlen, path, "not a value of the enum");
        *(int *)p = ev->value;
        return true;
    }
    case PROTOBUF_C_TYPE_STRING:
        if (!cJSON_IsString (j))
            return s_fail (err, errlen, path, "not a string");
        *(char **)p = bas_strdup (j->valuestring);
        return true;
    case PROTOBUF_C_TYPE_BYTES: {
        if (!cJSON_IsString (j))
            return s_fail (err, errlen, path, "not a hex string");
        size_t n = strlen (j->valuestring);
        if (n % 2)
            return s_fail (err, errlen, path, "odd number of hex digits");
        ProtobufCBinaryData *b = p;
        b->len = n / 2;
        b->data = bas_malloc (b->len ? b->len : 1);
        for (size_t i = 0; i < b->len; i++) {
            int hi = s_hexval (j->valuestring[2 * i]), lo = s_hexval (j->valuestring[2 * i + 1]);
            if (hi < 0 || lo < 0)
                return s_fail (err, errlen, path, "not hex");
            b->data[i] = (uint8_t)(hi << 4 | lo);
        }
        return true;
    }
    case PROTOBUF_C_TYPE_MESSAGE: {
        if (!cJSON_IsObject (j))
            return s_fail (err, errlen, path, "not an object");
        ProtobufCMessage *m = s_to_message (f->descriptor, j, path, err, errlen);
        *(ProtobufCMessage **)p = m;
        return m != NULL;
    }
    }
    return s_fail (err, errlen, path, "unsupported field type");
}

static ProtobufCMessage *
s_to_message (const ProtobufCMessageDescriptor *desc, const cJSON *json, const char *path,
              char *err, size_t errlen)
{
    if (!cJSON_IsObject (json)) {
        s_fail (err, errlen, path, "not an object");
        return NULL;
    }
    ProtobufCMessage *msg = bas_malloc (desc->sizeof_message);
    protobuf_c_message_init (desc, msg);
    char *base = (char *)msg;
    const cJSON *item;
    cJSON_ArrayForEach (item, json)
    {
        char sub[256];
        snprintf (sub, sizeof sub, "%s.%s", path, item->string ? item->string : "?");
        const ProtobufCFieldDescriptor *f =
            item->string ? protobuf_c_message_descriptor_get_field_by_name (desc, item->string)
                         : NULL;
        if (!f) {
            s_fail (err, errlen, sub, "no such field");
            goto error;
        }
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            if (!cJSON_IsArray (item)) {
                s_fail (err, errlen, sub, "not an array");
                goto error;
            }
            size_t *count = (size_t *)(base + f->quantifier_offset);
            void **arr = (void **)(base + f->offset);
            if (*arr) {
                s_fail (err, errlen, sub, "given twice");
                goto error;
            }
            size_t n = (size_t)cJSON_GetArraySize (item);
            if (n == 0)
                continue;
            size_t size = s_size (f->type);
            *arr = bas_alloc (size * n);
            const cJSON *elem;
            cJSON_ArrayForEach (elem, item)
            {
                //  Count first: free_unpacked then frees what was filled.
                char *slot = (char *)*arr + *count * size;
                (*count)++;
                if (!s_set_value (f, slot, elem, sub, err, errlen))
                    goto error;
            }
            continue;
        }
        if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
            uint32_t *which = (uint32_t *)(base + f->quantifier_offset);
            if (*which) {
                s_fail (err, errlen, sub, "a second member of the same oneof");
                goto error;
            }
            if (!s_set_value (f, base + f->offset, item, sub, err, errlen)) {
                //  Let free_unpacked see (and free) a half-built member.
                *which = f->id;
                goto error;
            }
            *which = f->id;
            continue;
        }
        //  Scalars start at their defaults, not zero: clear before setting.
        //  A string or message field holds a pointer that may be a default.
        if (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_MESSAGE) {
            void **slot = (void **)(base + f->offset);
            if (*slot && *slot != f->default_value) {
                s_fail (err, errlen, sub, "given twice");
                goto error;
            }
            *slot = NULL;
        } else
            memset (base + f->offset, 0, s_size (f->type));
        bool ok = s_set_value (f, base + f->offset, item, sub, err, errlen);
        if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->quantifier_offset &&
            f->type != PROTOBUF_C_TYPE_STRING && f->type != PROTOBUF_C_TYPE_MESSAGE)
            *(protobuf_c_boolean *)(base + f->quantifier_offset) = 1;
        if (!ok)
            goto error;
    }
    return msg;
error:
    protobuf_c_message_free_unpacked (msg, NULL);
    return NULL;
}

ProtobufCMessage *
bas_pbjson_to_message (const ProtobufCMessageDescriptor *desc, const cJSON *json, char *err,
                       size_t errlen)
{
    if (err && errlen)
        err[0] = 0;
    return s_to_message (desc, json, desc->short_name, err, errlen);
}
