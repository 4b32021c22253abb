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

#include <cjson/cJSON.h>
#include <protobuf-c/protobuf-c.h>

//  A new cJSON object owned by the caller.
cJSON *bas_pbjson_from_message (const ProtobufCMessage *msg);

//  True if any string field, at any depth, equals `text` (used by the tap's
//  --name filter: pod, PodGroup, node or queue names).
bool bas_pbjson_has_string (const ProtobufCMessage *msg, const char *text);

#endif
