/*  test_msg: the [type][header][body] codec, written as example usage.

    Every registered message type goes through encode -> decode with every
    field set (filled generically from the descriptor), so a type whose
    body does not survive the trip fails here. Malformed messages get their
    own distinct error codes, and a ROUTER peer's identity survives an
    error so the caller can answer it. proto/basalt.proto is parsed to
    prove that every message it declares is registered.
*/
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bas_msg.h"

#ifndef BASALT_PROTO_FILE
#define BASALT_PROTO_FILE BASALT_SOURCE_DIR "/proto/basalt.proto"
#endif

// ------------------------------------------------------------ helpers

//  A new message of type `desc` with every field set: scalars nonzero,
//  strings "<field>-v", repeated fields with two elements, submessages
//  filled recursively up to `depth`, the first member of each oneof.
//  Everything is malloc'd, so protobuf_c_message_free_unpacked frees it.
static ProtobufCMessage *
s_fill (const ProtobufCMessageDescriptor *desc, int depth)
{
    ProtobufCMessage *msg = calloc (1, desc->sizeof_message);
    assert_non_null (msg);
    protobuf_c_message_init (desc, msg);
    if (depth <= 0)
        return msg;
    for (unsigned i = 0; i < desc->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &desc->fields[i];
        char *base = (char *)msg;
        if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
            uint32_t *kase = (uint32_t *)(base + f->quantifier_offset);
            if (*kase)
                continue; // another member of this oneof is already set
            *kase = f->id;
        }
        size_t n = f->label == PROTOBUF_C_LABEL_REPEATED ? 2 : 1;
        size_t size;
        switch (f->type) {
        case PROTOBUF_C_TYPE_INT32:
        case PROTOBUF_C_TYPE_SINT32:
        case PROTOBUF_C_TYPE_SFIXED32:
        case PROTOBUF_C_TYPE_UINT32:
        case PROTOBUF_C_TYPE_FIXED32:
        case PROTOBUF_C_TYPE_ENUM:
            size = 4;
            break;
        case PROTOBUF_C_TYPE_FLOAT:
            size = sizeof (float);
            break;
        case PROTOBUF_C_TYPE_BOOL:
            size = sizeof (protobuf_c_boolean);
            break;
        case PROTOBUF_C_TYPE_STRING:
        case PROTOBUF_C_TYPE_MESSAGE:
            size = sizeof (void *);
            break;
        case PROTOBUF_C_TYPE_BYTES:
            size = sizeof (ProtobufCBinaryData);
            break;
        default:
            size = 8;
            break;
        }
        char *values = base + f->offset;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            values = calloc (n, size);
            assert_non_null (values);
            *(void **)(base + f->offset) = values;
            *(size_t *)(base + f->quantifier_offset) = n;
        } else if (f->label == PROTOBUF_C_LABEL_OPTIONAL &&
                   !(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) && f->type != PROTOBUF_C_TYPE_STRING &&
                   f->type != PROTOBUF_C_TYPE_MESSAGE)
            *(protobuf_c_boolean *)(base + f->quantifier_offset) = 1;
        for (size_t k = 0; k < n; k++) {
            char *v = values + k * size;
            switch (f->type) {
            case PROTOBUF_C_TYPE_INT32:
            case PROTOBUF_C_TYPE_SINT32:
            case PROTOBUF_C_TYPE_SFIXED32:
                *(int32_t *)v = -(int32_t)(f->id * 7 + k);
                break;
            case PROTOBUF_C_TYPE_UINT32:
            case PROTOBUF_C_TYPE_FIXED32:
                *(uint32_t *)v = f->id * 7 + (uint32_t)k;
                break;
            case PROTOBUF_C_TYPE_ENUM: {
                const ProtobufCEnumDescriptor *e = f->descriptor;
                *(int32_t *)v = e->values[e->n_values - 1].value;
                break;
            }
            case PROTOBUF_C_TYPE_INT64:
            case PROTOBUF_C_TYPE_SINT64:
            case PROTOBUF_C_TYPE_SFIXED64:
                *(int64_t *)v = -((int64_t)1 << 40) - f->id;
                break;
            case PROTOBUF_C_TYPE_UINT64:
            case PROTOBUF_C_TYPE_FIXED64:
                *(uint64_t *)v = ((uint64_t)1 << 40) + f->id;
                break;
            case PROTOBUF_C_TYPE_FLOAT:
                *(float *)v = 1.5f;
                break;
            case PROTOBUF_C_TYPE_DOUBLE:
                *(double *)v = 2.25;
                break;
            case PROTOBUF_C_TYPE_BOOL:
                *(protobuf_c_boolean *)v = 1;
                break;
            case PROTOBUF_C_TYPE_STRING: {
                char text[128];
                snprintf (text, sizeof text, "%s-v%zu", f->name, k);
                *(char **)v = strdup (text);
                break;
            }
            case PROTOBUF_C_TYPE_BYTES: {
                ProtobufCBinaryData *b = (ProtobufCBinaryData *)v;
                b->data = (uint8_t *)strdup ("\x01\x02");
                b->len = 2;
                break;
            }
            case PROTOBUF_C_TYPE_MESSAGE:
                *(ProtobufCMessage **)v = s_fill (f->descriptor, depth - 1);
                break;
            }
        }
    }
    return msg;
}

//  The packed bytes of a message in a new frame.
static zframe_t *
s_pack (const ProtobufCMessage *msg)
{
    size_t len = protobuf_c_message_get_packed_size (msg);
    zframe_t *frame = zframe_new (NULL, len);
    assert_int_equal (protobuf_c_message_pack (msg, zframe_data (frame)), len);
    return frame;
}

//  A packed Header with the given version (0: no version field).
static zframe_t *
s_header (uint32_t version)
{
    Basalt__V1__Header h = BASALT__V1__HEADER__INIT;
    h.has_version = version != 0;
    h.version = version;
    h.sender = "test";
    return s_pack (&h.base);
}

//  A message from frames given as (data, size) pairs; size -1 means strlen.
static zmsg_t *
s_frames (int n, ...)
{
    zmsg_t *msg = zmsg_new ();
    va_list ap;
    va_start (ap, n);
    for (int i = 0; i < n; i++) {
        const void *data = va_arg (ap, const void *);
        long size = va_arg (ap, long);
        zmsg_addmem (msg, data, size < 0 ? strlen (data) : (size_t)size);
    }
    va_end (ap);
    return msg;
}

//  Decode and expect `want`; the message is always taken.
static int
s_decode (zmsg_t *msg, bool router, int want)
{
    bas_msg_t out;
    memset (&out, 0x5a, sizeof out); // decode must not trust what is there
    int rc = bas_msg_decode (&msg, router, &out);
    assert_null (msg);
    if (rc != want)
        print_error ("decode: got %s, want %s\n", bas_msg_strerror (rc), bas_msg_strerror (want));
    assert_int_equal (rc, want);
    if (rc != BAS_MSG_OK) {
        //  On error nothing is left but (in router mode) the identity.
        assert_null (out.header);
        assert_null (out.body);
        assert_null (out.desc);
        if (!router)
            assert_null (out.identity);
    }
    bas_msg_clear (&out);
    return rc;
}

// ------------------------------------------------------------ tests

//  Every registered type, filled and empty, survives encode -> decode.
static void
test_round_trip_every_type (void **state)
{
    (void)state;
    size_t n = 0;
    const ProtobufCMessageDescriptor *const *types = bas_msgtypes (&n);
    assert_true (n >= 30);
    bas_stream_t stream;
    bas_stream_init (&stream, "test-svc", 42);
    uint64_t expect_seq = 0;
    for (size_t i = 0; i < n; i++) {
        const ProtobufCMessageDescriptor *desc = types[i];
        assert_int_equal (desc->magic, PROTOBUF_C__MESSAGE_DESCRIPTOR_MAGIC);
        //  Each registered type is found by its own name.
        assert_ptr_equal (bas_msgtype_lookup (desc->name, strlen (desc->name)), desc);
        for (int filled = 0; filled <= 1; filled++) {
            ProtobufCMessage *body = s_fill (desc, filled ? 3 : 0);
            zframe_t *want = s_pack (body);
            if (filled && zframe_size (want) == 0)
                print_error ("%s packs to nothing when filled\n", desc->name);
            assert_true (!filled || zframe_size (want) > 0);
            if (!filled)
                assert_int_equal (zframe_size (want), 0);

            zmsg_t *msg = bas_msg_encode (&stream, NULL, body, 0);
            expect_seq++;
            assert_int_equal (zmsg_size (msg), 3);
            //  The type frame is the full protobuf name, the dispatch key.
            char *type = zframe_strdup (zmsg_first (msg));
            assert_string_equal (type, desc->name);
            free (type);

            bas_msg_t m;
            assert_int_equal (bas_msg_decode (&msg, false, &m), BAS_MSG_OK);
            assert_null (msg);
            assert_ptr_equal (m.desc, desc);
            assert_ptr_equal (m.body->descriptor, desc);
            assert_null (m.identity);
            assert_non_null (m.header);
            assert_true (m.header->has_version);
            assert_int_equal (m.header->version, BAS_PROTOCOL_VERSION);
            assert_string_equal (m.header->sender, "test-svc");
            assert_true (m.header->has_epoch);
            assert_int_equal (m.header->epoch, 42);
            assert_true (m.header->has_seq);
            assert_int_equal (m.header->seq, expect_seq);
            assert_true (m.header->has_send_time_us);
            assert_true (m.header->send_time_us > 0);

            zframe_t *got = s_pack (m.body);
            if (!zframe_eq (got, want))
                print_error ("%s: body changed in transit\n", desc->name);
            assert_true (zframe_eq (got, want));
            zframe_destroy (&got);
            zframe_destroy (&want);
            bas_msg_clear (&m);
            assert_null (m.body);
            protobuf_c_message_free_unpacked (body, NULL);
        }
    }
    assert_int_equal (stream.seq, expect_seq);
}

//  Streams numbered by the model (the cache's deltas) pass their own seq,
//  and a ROUTER reply carries the peer identity in front.
static void
test_encode_seq_override_and_identity (void **state)
{
    (void)state;
    bas_stream_t stream;
    bas_stream_init (&stream, "cache-svc", 7);
    Basalt__V1__Delta delta = BASALT__V1__DELTA__INIT;
    delta.has_seq = 1;
    delta.seq = 1234;
    zmsg_t *msg = bas_msg_encode (&stream, NULL, &delta.base, 1234);
    assert_int_equal (stream.seq, 0); // the stream's own counter is untouched
    bas_msg_t m;
    assert_int_equal (bas_msg_decode (&msg, false, &m), BAS_MSG_OK);
    assert_int_equal (m.header->seq, 1234);
    assert_int_equal (((Basalt__V1__Delta *)m.body)->seq, 1234);
    bas_msg_clear (&m);

    zframe_t *peer = zframe_new ("peer-1", 6);
    Basalt__V1__Ready ready = BASALT__V1__READY__INIT;
    ready.has_credits = 1;
    ready.credits = 5;
    ready.binder_id = "b1";
    msg = bas_msg_encode (&stream, peer, &ready.base, 0);
    assert_int_equal (zmsg_size (msg), 4);
    assert_true (zframe_eq (zmsg_first (msg), peer)); // copied, not taken
    assert_int_equal (bas_msg_decode (&msg, true, &m), BAS_MSG_OK);
    assert_non_null (m.identity);
    assert_true (zframe_eq (m.identity, peer));
    assert_ptr_equal (m.desc, &basalt__v1__ready__descriptor);
    assert_int_equal (((Basalt__V1__Ready *)m.body)->credits, 5);
    assert_string_equal (((Basalt__V1__Ready *)m.body)->binder_id, "b1");
    assert_int_equal (m.header->seq, 1);
    bas_msg_clear (&m);
    bas_msg_clear (&m); // clearing twice is harmless
    zframe_destroy (&peer);

    //  A body packed ahead of time moves into the message.
    zframe_t *body = s_pack (&ready.base);
    msg = bas_msg_encode_packed (&stream, NULL, &basalt__v1__ready__descriptor, &body, 0);
    assert_null (body);
    assert_int_equal (bas_msg_decode (&msg, false, &m), BAS_MSG_OK);
    assert_int_equal (m.header->seq, 2);
    assert_int_equal (((Basalt__V1__Ready *)m.body)->credits, 5);
    bas_msg_clear (&m);
}

static void
test_decode_frame_counts (void **state)
{
    (void)state;
    const char *type = "basalt.v1.Ready";
    zframe_t *h = s_header (BAS_PROTOCOL_VERSION);

    //  No message at all, and a message with no frames.
    bas_msg_t out;
    zmsg_t *none = NULL;
    assert_int_equal (bas_msg_decode (&none, false, &out), BAS_MSG_ETRUNCATED);
    bas_msg_clear (&out);
    s_decode (zmsg_new (), false, BAS_MSG_ETRUNCATED);
    s_decode (zmsg_new (), true, BAS_MSG_ETRUNCATED);
    //  One and two frames.
    s_decode (s_frames (1, type, -1L), false, BAS_MSG_ETRUNCATED);
    s_decode (s_frames (2, type, -1L, zframe_data (h), (long)zframe_size (h)), false,
              BAS_MSG_ETRUNCATED);
    //  Three frames in router mode: the first is the identity, two are left.
    s_decode (s_frames (3, type, -1L, zframe_data (h), (long)zframe_size (h), "", 0L), true,
              BAS_MSG_ETRUNCATED);
    //  Exactly three: fine (an empty Ready body is a valid Ready).
    s_decode (s_frames (3, type, -1L, zframe_data (h), (long)zframe_size (h), "", 0L), false,
              BAS_MSG_OK);
    //  Four frames where three are expected.
    s_decode (s_frames (4, type, -1L, zframe_data (h), (long)zframe_size (h), "", 0L, "", 0L),
              false, BAS_MSG_EEXTRA);
    zframe_destroy (&h);
}

static void
test_decode_bad_frames (void **state)
{
    (void)state;
    zframe_t *h = s_header (BAS_PROTOCOL_VERSION);
    const void *hd = zframe_data (h);
    long hs = (long)zframe_size (h);

    //  Unknown type names, including a prefix and a near miss of a real one.
    s_decode (s_frames (3, "basalt.v1.NoSuchThing", -1L, hd, hs, "", 0L), false, BAS_MSG_EUNKNOWN);
    s_decode (s_frames (3, "basalt.v1.Read", -1L, hd, hs, "", 0L), false, BAS_MSG_EUNKNOWN);
    s_decode (s_frames (3, "basalt.v1.Readyy", -1L, hd, hs, "", 0L), false, BAS_MSG_EUNKNOWN);
    s_decode (s_frames (3, "Ready", -1L, hd, hs, "", 0L), false, BAS_MSG_EUNKNOWN);
    s_decode (s_frames (3, "", 0L, hd, hs, "", 0L), false, BAS_MSG_EUNKNOWN);

    //  A header that is not a Header: a varint that never ends.
    static const uint8_t trunc_varint[] = {0xFF, 0xFF, 0xFF};
    s_decode (s_frames (3, "basalt.v1.Ready", -1L, trunc_varint, 3L, "", 0L), false,
              BAS_MSG_EHEADER);
    //  A header whose sender (field 2, length-delimited) claims 100 bytes.
    static const uint8_t long_string[] = {0x12, 0x64, 'a', 'b'};
    s_decode (s_frames (3, "basalt.v1.Ready", -1L, long_string, 4L, "", 0L), false,
              BAS_MSG_EHEADER);

    //  A body that is not a BindWork, with a good header.
    s_decode (s_frames (3, "basalt.v1.BindWork", -1L, hd, hs, trunc_varint, 3L), false,
              BAS_MSG_EBODY);
    //  BindWork.pod_uid (field 1) claims 127 bytes and has 2.
    static const uint8_t short_field[] = {0x0A, 0x7F, 'x', 'y'};
    s_decode (s_frames (3, "basalt.v1.BindWork", -1L, hd, hs, short_field, 4L), false,
              BAS_MSG_EBODY);
    //  A submessage (Work.bind, field 2) whose own contents are truncated.
    static const uint8_t bad_nested[] = {0x12, 0x03, 0x0A, 0x09, 'z'};
    s_decode (s_frames (3, "basalt.v1.Work", -1L, hd, hs, bad_nested, 5L), false, BAS_MSG_EBODY);

    //  A header from a future protocol version.
    zframe_t *v99 = s_header (99);
    s_decode (
        s_frames (3, "basalt.v1.Ready", -1L, zframe_data (v99), (long)zframe_size (v99), "", 0L),
        false, BAS_MSG_EVERSION);
    //  A header without a version is accepted (all fields are optional).
    zframe_t *v0 = s_header (0);
    s_decode (
        s_frames (3, "basalt.v1.Ready", -1L, zframe_data (v0), (long)zframe_size (v0), "", 0L),
        false, BAS_MSG_OK);
    zframe_destroy (&v0);
    zframe_destroy (&v99);
    zframe_destroy (&h);
}

//  In router mode the identity is handed back on every error, so the
//  cache can answer the peer with an Error.
static void
test_decode_router_keeps_identity (void **state)
{
    (void)state;
    zframe_t *h = s_header (BAS_PROTOCOL_VERSION);
    zframe_t *v99 = s_header (99);
    static const uint8_t garbage[] = {0xFF, 0xFF, 0xFF};
    struct {
        zmsg_t *msg;
        int want;
    } cases[] = {
        {s_frames (2, "ID1", -1L, "basalt.v1.Ready", -1L), BAS_MSG_ETRUNCATED},
        {s_frames (5, "ID1", -1L, "basalt.v1.Ready", -1L, zframe_data (h), (long)zframe_size (h),
                   "", 0L, "", 0L),
         BAS_MSG_EEXTRA},
        {s_frames (4, "ID1", -1L, "basalt.v1.Nope", -1L, zframe_data (h), (long)zframe_size (h), "",
                   0L),
         BAS_MSG_EUNKNOWN},
        {s_frames (4, "ID1", -1L, "basalt.v1.Ready", -1L, garbage, 3L, "", 0L), BAS_MSG_EHEADER},
        {s_frames (4, "ID1", -1L, "basalt.v1.Ready", -1L, zframe_data (v99),
                   (long)zframe_size (v99), "", 0L),
         BAS_MSG_EVERSION},
        {s_frames (4, "ID1", -1L, "basalt.v1.Ready", -1L, zframe_data (h), (long)zframe_size (h),
                   garbage, 3L),
         BAS_MSG_EBODY},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bas_msg_t out;
        int rc = bas_msg_decode (&cases[i].msg, true, &out);
        assert_int_equal (rc, cases[i].want);
        assert_null (cases[i].msg);
        assert_non_null (out.identity);
        assert_true (zframe_streq (out.identity, "ID1"));
        assert_null (out.header);
        assert_null (out.body);
        bas_msg_clear (&out);
        assert_null (out.identity);
    }
    zframe_destroy (&v99);
    zframe_destroy (&h);
}

//  Random bytes in the header and body never crash the decoder; each
//  outcome is one of the documented codes. Run under ASan in CI.
static void
test_decode_garbage (void **state)
{
    (void)state;
    uint32_t x = 2463534242u; // xorshift32, fixed seed: reproducible
    size_t n = 0;
    const ProtobufCMessageDescriptor *const *types = bas_msgtypes (&n);
    zframe_t *h = s_header (BAS_PROTOCOL_VERSION);
    int seen_body_error = 0;
    for (int iter = 0; iter < 4000; iter++) {
        uint8_t buf[64];
        size_t len = 0;
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        len = x % sizeof buf;
        for (size_t i = 0; i < len; i++) {
            x ^= x << 13, x ^= x >> 17, x ^= x << 5;
            buf[i] = (uint8_t)x;
        }
        const char *type = types[iter % n]->name;
        bool garble_header = iter % 4 == 0;
        zmsg_t *msg = garble_header ? s_frames (3, type, -1L, buf, (long)len, "", 0L)
                                    : s_frames (3, type, -1L, zframe_data (h),
                                                (long)zframe_size (h), buf, (long)len);
        bas_msg_t out;
        int rc = bas_msg_decode (&msg, false, &out);
        if (garble_header)
            assert_true (rc == BAS_MSG_OK || rc == BAS_MSG_EHEADER || rc == BAS_MSG_EVERSION);
        else {
            assert_true (rc == BAS_MSG_OK || rc == BAS_MSG_EBODY);
            seen_body_error += rc == BAS_MSG_EBODY;
        }
        if (rc == BAS_MSG_OK) {
            //  Whatever decoded is a valid message that packs again.
            zframe_t *again = s_pack (out.body);
            zframe_destroy (&again);
        }
        bas_msg_clear (&out);
    }
    assert_true (seen_body_error > 100);
    zframe_destroy (&h);
}

static void
test_strerror (void **state)
{
    (void)state;
    const int codes[] = {BAS_MSG_OK,      BAS_MSG_ETRUNCATED, BAS_MSG_EEXTRA,   BAS_MSG_EUNKNOWN,
                         BAS_MSG_EHEADER, BAS_MSG_EBODY,      BAS_MSG_EVERSION, -99};
    const size_t n = sizeof codes / sizeof codes[0];
    for (size_t i = 0; i < n; i++) {
        const char *a = bas_msg_strerror (codes[i]);
        assert_non_null (a);
        assert_true (*a);
        //  Short names usable as metric label values: no spaces or quotes.
        assert_null (strpbrk (a, " \"\\"));
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal (a, bas_msg_strerror (codes[j]));
    }
    assert_string_equal (bas_msg_strerror (BAS_MSG_OK), "ok");
    assert_string_equal (bas_msg_strerror (BAS_MSG_ETRUNCATED), "truncated");
}

//  Every `message Name {` in proto/basalt.proto is registered, and every
//  registered type is declared there: adding a message without adding it
//  to bas_msg.c's table fails here.
static void
test_registry_matches_proto (void **state)
{
    (void)state;
    FILE *f = fopen (BASALT_PROTO_FILE, "r");
    if (!f)
        print_error ("cannot open %s\n", BASALT_PROTO_FILE);
    assert_non_null (f);
    char line[512];
    char package[128] = "";
    size_t declared = 0;
    while (fgets (line, sizeof line, f)) {
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (strncmp (p, "//", 2) == 0)
            continue;
        char word[128];
        if (sscanf (p, "package %127[A-Za-z0-9_.]", word) == 1)
            snprintf (package, sizeof package, "%s", word);
        if (strncmp (p, "message", 7) != 0 || (p[7] != ' ' && p[7] != '\t'))
            continue;
        p += 7;
        while (*p == ' ' || *p == '\t')
            p++;
        size_t len = strspn (p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
        assert_true (len > 0 && len < 100);
        char *rest = p + len;
        while (*rest == ' ' || *rest == '\t')
            rest++;
        assert_int_equal (*rest, '{');
        assert_string_equal (package, "basalt.v1"); // declared before any message
        char full[256];
        snprintf (full, sizeof full, "%s.%.*s", package, (int)len, p);
        const ProtobufCMessageDescriptor *desc = bas_msgtype_lookup (full, strlen (full));
        if (!desc)
            print_error ("%s is declared in basalt.proto but not registered in bas_msgtypes\n",
                         full);
        assert_non_null (desc);
        assert_string_equal (desc->name, full);
        declared++;
    }
    fclose (f);
    size_t n = 0;
    bas_msgtypes (&n);
    assert_true (declared > 0);
    //  No duplicates or strays in the registry either.
    assert_int_equal (n, declared);
}

static int s_calls;

static int
s_on_ready (void *self, bas_msg_t *msg)
{
    (void)self;
    s_calls += ((Basalt__V1__Ready *)msg->body)->credits;
    return 0;
}

static int
s_on_heartbeat (void *self, bas_msg_t *msg)
{
    (void)self;
    (void)msg;
    return -1;
}

//  A socket's handler table: dispatch by the decoded type.
static void
test_handler_find (void **state)
{
    (void)state;
    static const bas_handler_t table[] = {
        {&basalt__v1__ready__descriptor, s_on_ready},
        {&basalt__v1__heartbeat__descriptor, s_on_heartbeat},
        {NULL, NULL},
    };
    bas_stream_t stream;
    bas_stream_init (&stream, "binder", 1);
    Basalt__V1__Ready ready = BASALT__V1__READY__INIT;
    ready.has_credits = 1;
    ready.credits = 3;
    zmsg_t *msg = bas_msg_encode (&stream, NULL, &ready.base, 0);
    bas_msg_t m;
    assert_int_equal (bas_msg_decode (&msg, false, &m), BAS_MSG_OK);
    const bas_handler_t *h = bas_handler_find (table, m.desc);
    assert_ptr_equal (h, &table[0]);
    s_calls = 0;
    assert_int_equal (h->fn (NULL, &m), 0);
    assert_int_equal (s_calls, 3);
    bas_msg_clear (&m);

    assert_ptr_equal (bas_handler_find (table, &basalt__v1__heartbeat__descriptor), &table[1]);
    assert_null (bas_handler_find (table, &basalt__v1__commit__descriptor));
    static const bas_handler_t empty[] = {{NULL, NULL}};
    assert_null (bas_handler_find (empty, &basalt__v1__ready__descriptor));
}

//  Sending over real sockets: a PAIR delivers the message whole, and a
//  ROUTER (ROUTER_MANDATORY) refuses a peer that is not connected instead
//  of dropping silently or blocking.
static void
test_send (void **state)
{
    (void)state;
    zsock_t *a = zsock_new_pair ("@inproc://test-msg-send");
    zsock_t *b = zsock_new_pair (">inproc://test-msg-send");
    assert_non_null (a);
    assert_non_null (b);
    bas_stream_t stream;
    bas_stream_init (&stream, "sender", 9);
    Basalt__V1__Heartbeat hb = BASALT__V1__HEARTBEAT__INIT;
    hb.service = "cache-svc";
    assert_int_equal (bas_msg_send (a, &stream, NULL, &hb.base), 0);
    zmsg_t *msg = zmsg_recv (b);
    assert_non_null (msg);
    bas_msg_t m;
    assert_int_equal (bas_msg_decode (&msg, false, &m), BAS_MSG_OK);
    assert_string_equal (((Basalt__V1__Heartbeat *)m.body)->service, "cache-svc");
    assert_int_equal (m.header->epoch, 9);
    bas_msg_clear (&m);

    zsock_t *router = zsock_new_router ("inproc://test-msg-router");
    assert_non_null (router);
    zsock_set_router_mandatory (router, 1);
    zsock_set_sndtimeo (router, 0);
    zframe_t *nobody = zframe_new ("nobody", 6);
    errno = 0;
    assert_int_equal (bas_msg_send (router, &stream, nobody, &hb.base), -1);
    assert_int_equal (errno, EHOSTUNREACH);
    zframe_destroy (&nobody);
    zsock_destroy (&router);
    zsock_destroy (&b);
    zsock_destroy (&a);
}

static void
test_clocks (void **state)
{
    (void)state;
    int64_t a = bas_mono_ms ();
    int64_t b = bas_mono_ms ();
    assert_true (b >= a);
    //  After 2020-01-01 and before 2100-01-01.
    int64_t now = bas_now_us ();
    assert_true (now > 1577836800LL * 1000000);
    assert_true (now < 4102444800LL * 1000000);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_round_trip_every_type),
        cmocka_unit_test (test_encode_seq_override_and_identity),
        cmocka_unit_test (test_decode_frame_counts),
        cmocka_unit_test (test_decode_bad_frames),
        cmocka_unit_test (test_decode_router_keeps_identity),
        cmocka_unit_test (test_decode_garbage),
        cmocka_unit_test (test_strerror),
        cmocka_unit_test (test_registry_matches_proto),
        cmocka_unit_test (test_handler_find),
        cmocka_unit_test (test_send),
        cmocka_unit_test (test_clocks),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
