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
ProtobufCMessage *bas_pbjson_to_message (const ProtobufCMessageDescriptor *desc,
                                         const cJSON *json, char *err, size_t errlen);

//  True if any string field, at any depth, equals `text` (used by the tap's
//  --name filter: pod, PodGroup, node or queue names).
bool bas_pbjson_has_string (const ProtobufCMessage *msg, const char *text);

#endif
