/*  bas_pbjson: any protobuf-c message as JSON, driven by its descriptor.

    The tap prints every message type through this one function, so a
    message added to proto/basalt.proto is printable without new code.
    Field names are the proto names; 64-bit integers are JSON numbers when
    they fit a double exactly, else strings; bytes are hex; enums are their
    value names; unset optional fields are left out; a oneof shows only its
    set member.
*/
#ifndef BAS_PBJSON_H
#define BAS_PBJSON_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>
#include <protobuf-c/protobuf-c.h>

//  A new cJSON object owned by the caller.
cJSON *bas_pbjson_from_message (const ProtobufCMessage *msg);

//  The inverse of bas_pbjson_from_message: a new message of type `desc`
//  from a JSON object in that form (owned by the caller; free with
//  protobuf_c_message_free_unpacked (msg, NULL)). Also accepts numbers as
//  strings, enums by number and 64-bit values as numbers. Unknown fields,
//  wrong JSON types, bad hex, out-of-range numbers and a oneof with two
//  members set are errors: NULL with a message naming the field in err.
ProtobufCMessage *bas_pbjson_to_message (const ProtobufCMessageDescriptor *desc, const cJSON *json,
                                         char *err, size_t errlen);

//  Call fn for every string field present in msg, at any depth (repeated
//  fields: each element), with the message that holds it and the field's
//  proto name. Used by the tap's --name filter: which messages mention a
//  pod, PodGroup, node or queue name, and the uids they carry with it.
typedef void (bas_pbjson_string_fn) (void *arg, const ProtobufCMessage *owner, const char *field,
                                     const char *value);
void bas_pbjson_strings (const ProtobufCMessage *msg, bas_pbjson_string_fn *fn, void *arg);

#endif
