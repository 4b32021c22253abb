/*  fuzz_msg: the [identity][type][header][body] ZeroMQ message codec
    (bas_msg_decode), then the JSON view of what decoded (bas_pbjson, the
    tap's rendering) and a re-encode.

    Input: byte 0 chooses the shape. Bit 7 set: raw frames, the rest split
    at every 0xFF 0x00 pair (any frame count, any type name). Otherwise:
    bits 0-6 pick one of the protocol's message types, byte 1 is the header
    length, then the header bytes, then the body; bit 6 of byte 0 adds a
    ROUTER identity frame. So the fuzzer reaches every message type's body
    without having to guess type names.
*/
#include "fuzz_quiet.h"
#include "bas_msg.h"
#include "bas_pbjson.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <czmq.h>

static void
s_add (zmsg_t *msg, const uint8_t *data, size_t size)
{
    zframe_t *frame = zframe_new (data, size);
    zmsg_append (msg, &frame);
}

FUZZ_QUIET_INITIALIZE

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    zmsg_t *msg = zmsg_new ();
    bool router;
    if (data[0] & 0x80) {
        router = (data[0] & 0x40) != 0;
        size_t from = 1;
        for (size_t i = 1; i + 1 < size; i++)
            if (data[i] == 0xFF && data[i + 1] == 0x00) {
                s_add (msg, data + from, i - from);
                from = i + 2;
                i++;
            }
        s_add (msg, data + from, size - from);
    } else {
        router = (data[0] & 0x40) != 0;
        size_t n = 0;
        const ProtobufCMessageDescriptor *const *types = bas_msgtypes (&n);
        const ProtobufCMessageDescriptor *desc = types[(data[0] & 0x3F) % n];
        size_t hlen = data[1];
        const uint8_t *rest = data + 2;
        size_t left = size - 2;
        if (hlen > left)
            hlen = left;
        if (router)
            s_add (msg, (const uint8_t *)"peer", 4);
        s_add (msg, (const uint8_t *)desc->name, strlen (desc->name));
        s_add (msg, rest, hlen);
        s_add (msg, rest + hlen, left - hlen);
    }
    bas_msg_t out;
    if (bas_msg_decode (&msg, router, &out) == BAS_MSG_OK) {
        cJSON *json = bas_pbjson_from_message (out.body);
        char *text = json ? cJSON_PrintUnformatted (json) : NULL;
        free (text);
        cJSON_Delete (json);
        bas_stream_t stream;
        bas_stream_init (&stream, "fuzz", 1);
        zmsg_t *again = bas_msg_encode (&stream, out.identity, out.body, 0);
        zmsg_destroy (&again);
    }
    bas_msg_clear (&out);
    zmsg_destroy (&msg);
    return 0;
}
