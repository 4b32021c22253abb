/*  test_tap: the tap of bas_svc and the basalt-tap tool, as a user sees them.

    - Every message type declared in proto/basalt.proto, with every field
      set (every member of every oneof in turn), goes through a real
      `basalt-tap --json` process and comes back: its JSON body converted
      back to the message (bas_pbjson_to_message) packs to the very bytes
      that were published, and its header too. A message added to the
      .proto without being known to the tap fails here.
    - A stalled tap subscriber (connected, never reading) never blocks or
      loses real traffic; the tap drops, and counts, what it cannot queue;
      with no subscriber the tap copies nothing at all.
    - A subscriber that reads gets every message, numbered without gaps.
    - --stats, --record and --read: per-link per-type counts and rates, and
      the drops seen as gaps in tap_seq.
    - bas_pbjson_to_message refuses malformed JSON with a reason.
    - A tap on tcp:// (a real binder-svc, the real basalt-tap) takes the
      service's CURVE certificates: a basalt-tap whose certificate is in
      --curve-clients gets the messages, one whose certificate is not (and a
      plain subscriber) gets nothing; either side refuses tcp:// without
      the certificates, naming the flags.

    Tests wait for conditions (util_wait_until), never fixed sleeps, and use
    their own ipc directory.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bas_msg.h"
#include "bas_pbjson.h"
#include "bas_sock.h"
#include "bas_svc.h"
#include "util_proc.h"
#include "util_prom.h"

#ifndef BASALT_PROTO_FILE
#define BASALT_PROTO_FILE BASALT_SOURCE_DIR "/proto/basalt.proto"
#endif

#define S_WAIT_MS 20000

// ------------------------------------------------------------ a message with every field set

static size_t
s_value_size (ProtobufCType type)
{
    switch (type) {
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
    default:
        return 4;
    }
}

static ProtobufCMessage *s_fill (const ProtobufCMessageDescriptor *desc, unsigned variant,
                                 int depth);

//  One value of field f at p, distinct per field and element `k`; 64-bit
//  fields get values beyond 2^53 so that they travel as JSON strings.
static void
s_fill_value (const ProtobufCFieldDescriptor *f, void *p, unsigned variant, unsigned k, int depth)
{
    unsigned seed = f->id * 7 + k * 3 + variant;
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
        *(int32_t *)p = -(int32_t)(1000 + seed);
        break;
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        *(uint32_t *)p = 4000000000u - seed;
        break;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        *(int64_t *)p = (k % 2) ? -(INT64_C (1) << 60) - seed : (int64_t)seed * 1000003;
        break;
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        *(uint64_t *)p = (k % 2) ? (UINT64_C (1) << 63) + seed : (uint64_t)seed * 999983;
        break;
    case PROTOBUF_C_TYPE_FLOAT:
        *(float *)p = 0.25f * (float)seed;
        break;
    case PROTOBUF_C_TYPE_DOUBLE:
        *(double *)p = 0.1 * seed;
        break;
    case PROTOBUF_C_TYPE_BOOL:
        *(protobuf_c_boolean *)p = 1; // false is the default: set the other
        break;
    case PROTOBUF_C_TYPE_ENUM: {
        const ProtobufCEnumDescriptor *ed = f->descriptor;
        *(int *)p = ed->values[(seed % (ed->n_values - 1)) + 1].value;
        break;
    }
    case PROTOBUF_C_TYPE_STRING: {
        char buf[96];
        //  Quotes, a backslash, a newline and UTF-8: the JSON path escapes.
        snprintf (buf, sizeof buf, "%s-%u \"q\" \\ \n é", f->name, seed);
        *(char **)p = strdup (buf);
        break;
    }
    case PROTOBUF_C_TYPE_BYTES: {
        ProtobufCBinaryData *b = p;
        b->len = 5;
        b->data = malloc (5);
        for (size_t i = 0; i < 5; i++)
            b->data[i] = (uint8_t)(seed + i * 61);
        break;
    }
    case PROTOBUF_C_TYPE_MESSAGE:
        *(ProtobufCMessage **)p = s_fill (f->descriptor, variant + k, depth + 1);
        break;
    }
}

//  Every field set: scalars, strings, nested messages, two elements of each
//  repeated field; in each oneof the member `variant` selects.
static ProtobufCMessage *
s_fill (const ProtobufCMessageDescriptor *desc, unsigned variant, int depth)
{
    ProtobufCMessage *msg = malloc (desc->sizeof_message);
    assert_non_null (msg);
    protobuf_c_message_init (desc, msg);
    char *base = (char *)msg;
    if (depth > 8)
        return msg;
    for (unsigned i = 0; i < desc->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &desc->fields[i];
        if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
            //  Members of one oneof share quantifier_offset; pick one.
            unsigned members = 0, index = 0;
            for (unsigned j = 0; j < desc->n_fields; j++)
                if ((desc->fields[j].flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
                    desc->fields[j].quantifier_offset == f->quantifier_offset) {
                    if (j == i)
                        index = members;
                    members++;
                }
            if (index != variant % members)
                continue;
            s_fill_value (f, base + f->offset, variant, 0, depth);
            *(uint32_t *)(base + f->quantifier_offset) = f->id;
            continue;
        }
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = 2, size = s_value_size (f->type);
            char *arr = calloc (n, size);
            for (size_t k = 0; k < n; k++)
                s_fill_value (f, arr + k * size, variant, (unsigned)k, depth);
            *(size_t *)(base + f->quantifier_offset) = n;
            *(void **)(base + f->offset) = arr;
            continue;
        }
        s_fill_value (f, base + f->offset, variant, 0, depth);
        if (f->quantifier_offset && f->type != PROTOBUF_C_TYPE_STRING &&
            f->type != PROTOBUF_C_TYPE_MESSAGE)
            *(protobuf_c_boolean *)(base + f->quantifier_offset) = 1;
    }
    return msg;
}

//  Largest oneof of a message at any depth: how many variants show every member.
static unsigned
s_variants (const ProtobufCMessageDescriptor *desc, int depth)
{
    unsigned most = 1;
    if (depth > 8)
        return 1;
    for (unsigned i = 0; i < desc->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &desc->fields[i];
        if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
            unsigned members = 0;
            for (unsigned j = 0; j < desc->n_fields; j++)
                if ((desc->fields[j].flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
                    desc->fields[j].quantifier_offset == f->quantifier_offset)
                    members++;
            most = members > most ? members : most;
        }
        if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
            unsigned sub = s_variants (f->descriptor, depth + 1);
            most = sub > most ? sub : most;
        }
    }
    return most;
}

static zframe_t *
s_pack (const ProtobufCMessage *m)
{
    size_t len = protobuf_c_message_get_packed_size (m);
    zframe_t *frame = zframe_new (NULL, len);
    protobuf_c_message_pack (m, zframe_data (frame));
    return frame;
}

// ------------------------------------------------------------ the types basalt.proto declares

//  Full names of every `message Name {` in proto/basalt.proto (caller
//  destroys the list).
static zlistx_t *
s_proto_messages (void)
{
    FILE *f = fopen (BASALT_PROTO_FILE, "r");
    if (!f)
        print_error ("cannot open %s\n", BASALT_PROTO_FILE);
    assert_non_null (f);
    zlistx_t *names = zlistx_new ();
    zlistx_set_destructor (names, (zlistx_destructor_fn *)zstr_free);
    char line[512], package[128] = "";
    while (fgets (line, sizeof line, f)) {
        char *p = line + strspn (line, " \t");
        char word[128];
        if (sscanf (p, "package %127[A-Za-z0-9_.]", word) == 1)
            snprintf (package, sizeof package, "%s", word);
        if (strncmp (p, "message", 7) != 0 || (p[7] != ' ' && p[7] != '\t'))
            continue;
        p += 7 + strspn (p + 7, " \t");
        size_t len = strspn (p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
        assert_true (len > 0);
        char full[256];
        snprintf (full, sizeof full, "%s.%.*s", package, (int)len, p);
        zlistx_add_end (names, strdup (full));
    }
    fclose (f);
    assert_true (zlistx_size (names) > 0);
    return names;
}

// ------------------------------------------------------------ helpers

typedef struct {
    char *dir;
    char endpoint[320];
    char out[384]; // basalt-tap's output
    pid_t tap;
} s_env_t;

static void
s_env_init (s_env_t *env, const char *tag)
{
    memset (env, 0, sizeof *env);
    env->dir = util_tmpdir (tag);
    snprintf (env->endpoint, sizeof env->endpoint, "ipc://%s/tap.sock", env->dir);
    snprintf (env->out, sizeof env->out, "%s/tap.out", env->dir);
}

static void
s_env_fini (s_env_t *env)
{
    if (env->tap > 0)
        util_stop (env->tap, 5000);
    util_rmtree (env->dir);
    free (env->dir);
}

static char *
s_tap_bin (void)
{
    static char bin[512];
    snprintf (bin, sizeof bin, "%s/tools/tap/basalt-tap", BASALT_BIN_DIR);
    return bin;
}

//  Publish [type][info][header][body] on pub as a service's tap would.
static void
s_publish (zsock_t *pub, const char *svc, const char *dir, const char *peer, uint64_t tap_seq,
           const ProtobufCMessageDescriptor *desc, zframe_t *header, zframe_t *body)
{
    zmsg_t *msg = zmsg_new ();
    zmsg_addstr (msg, desc->name);
    zmsg_addstrf (msg, "svc=%s epoch=42 dir=%s peer=%s time_us=%lld tap_seq=%llu", svc, dir, peer,
                  (long long)(1700000000000000LL + (long long)tap_seq * 1000),
                  (unsigned long long)tap_seq);
    zmsg_append (msg, &(zframe_t *){zframe_dup (header)});
    zmsg_append (msg, &(zframe_t *){zframe_dup (body)});
    assert_int_equal (zmsg_send (&msg, pub), 0);
}

static zframe_t *
s_header (uint64_t seq)
{
    Basalt__V1__Header h = BASALT__V1__HEADER__INIT;
    h.has_version = 1;
    h.version = BAS_PROTOCOL_VERSION;
    h.sender = "test";
    h.has_epoch = 1;
    h.epoch = 42;
    h.has_seq = 1;
    h.seq = seq;
    h.has_send_time_us = 1;
    h.send_time_us = 1700000000000000LL;
    h.trace_id = "trace";
    return s_pack (&h.base);
}

typedef struct {
    const char *path;
    const char *needle;
    int count; // wanted occurrences of needle
} s_grep_t;

static bool
s_file_has (void *arg)
{
    s_grep_t *g = arg;
    char *text = util_read_file (g->path, NULL);
    int n = 0;
    for (const char *p = text; p && (p = strstr (p, g->needle)); p++)
        n++;
    free (text);
    return n >= g->count;
}

// ------------------------------------------------------------ round trip through basalt-tap --json

typedef struct {
    uint64_t tap_seq;
    const ProtobufCMessageDescriptor *desc;
    zframe_t *header;
    zframe_t *body;
} s_sent_t;

typedef struct {
    zsock_t *pub;
    s_env_t *env;
    zframe_t *header;
    zframe_t *body;
} s_probe_t;

//  Publish a probe and see whether the tap printed one (it has joined).
static bool
s_tap_joined (void *arg)
{
    s_probe_t *p = arg;
    s_publish (p->pub, "probe-svc", "out", "-", 0, &basalt__v1__heartbeat__descriptor, p->header,
               p->body);
    s_grep_t g = {p->env->out, "probe-svc", 1};
    return s_file_has (&g);
}

static void
test_roundtrip_every_type (void **state)
{
    (void)state;
    s_env_t env;
    s_env_init (&env, "tap-roundtrip");
    char err[256];
    zsock_t *pub = bas_sock_new (ZMQ_PUB, env.endpoint, true, NULL, err, sizeof err);
    assert_non_null (pub);
    char *argv[] = {s_tap_bin (), "--json", env.endpoint, NULL};
    env.tap = util_spawn (argv, env.out);
    assert_true (env.tap > 0);

    //  PUB/SUB joins late: publish probes until the tap prints one.
    Basalt__V1__Heartbeat hb = BASALT__V1__HEARTBEAT__INIT;
    hb.service = "probe";
    s_probe_t probe = {pub, &env, s_header (1), s_pack (&hb.base)};
    assert_true (util_wait_until (s_tap_joined, &probe, S_WAIT_MS));
    zframe_destroy (&probe.header);
    zframe_destroy (&probe.body);

    //  Every declared message, in every oneof variant, numbered by tap_seq.
    zlistx_t *names = s_proto_messages ();
    s_sent_t sent[512];
    size_t nsent = 0;
    for (char *name = zlistx_first (names); name; name = zlistx_next (names)) {
        const ProtobufCMessageDescriptor *desc = bas_msgtype_lookup (name, strlen (name));
        if (!desc)
            fail_msg ("%s is declared in basalt.proto but the tap does not know it "
                      "(bas_msgtypes)",
                      name);
        unsigned variants = s_variants (desc, 0);
        for (unsigned v = 0; v < variants; v++) {
            assert_true (nsent < sizeof sent / sizeof sent[0]);
            ProtobufCMessage *m = s_fill (desc, v, 0);
            s_sent_t *s = &sent[nsent++];
            s->tap_seq = 1000 + nsent;
            s->desc = desc;
            s->header = s_header (s->tap_seq);
            s->body = s_pack (m);
            protobuf_c_message_free_unpacked (m, NULL);
            s_publish (pub, "cache-svc", "out", "session", s->tap_seq, desc, s->header, s->body);
        }
    }
    size_t ntypes = 0;
    bas_msgtypes (&ntypes);
    assert_int_equal (zlistx_size (names), ntypes); // and nothing registered that is not declared
    zlistx_destroy (&names);

    //  Wait for the last one (the tap prints in order).
    char last[64];
    snprintf (last, sizeof last, "\"tap_seq\":%llu,", (unsigned long long)sent[nsent - 1].tap_seq);
    s_grep_t g = {env.out, last, 1};
    if (!util_wait_until (s_file_has, &g, S_WAIT_MS)) {
        char *text = util_read_file (env.out, NULL);
        fail_msg ("basalt-tap did not print every message; its output:\n%s", text ? text : "");
    }

    //  Convert each JSON line back and compare bytes.
    char *text = util_read_file (env.out, NULL);
    assert_non_null (text);
    size_t matched = 0;
    char *save = NULL;
    for (char *line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save)) {
        if (line[0] != '{')
            fail_msg ("basalt-tap printed a line that is not JSON: %s", line);
        cJSON *j = cJSON_Parse (line);
        if (!j)
            fail_msg ("basalt-tap printed invalid JSON: %s", line);
        const cJSON *seq = cJSON_GetObjectItemCaseSensitive (j, "tap_seq");
        assert_true (cJSON_IsNumber (seq));
        s_sent_t *s = NULL;
        for (size_t i = 0; i < nsent; i++)
            if ((double)sent[i].tap_seq == seq->valuedouble)
                s = &sent[i];
        if (!s) {
            cJSON_Delete (j);
            continue; // a probe
        }
        const cJSON *type = cJSON_GetObjectItemCaseSensitive (j, "type");
        assert_true (cJSON_IsString (type));
        assert_string_equal (type->valuestring, s->desc->name);
        //  Integers stay integers: times and epochs ending in 0 were printed
        //  as 1.700000000001e+15 (the header's send time is one of them).
        char want[64];
        snprintf (want, sizeof want, "\"time_us\":%lld",
                  (long long)(1700000000000000LL + (long long)s->tap_seq * 1000));
        if (!strstr (line, want) || strstr (line, "e+"))
            fail_msg ("basalt-tap --json did not print integers as integers (%s): %s", want, line);
        assert_string_equal (cJSON_GetObjectItemCaseSensitive (j, "svc")->valuestring, "cache-svc");
        assert_string_equal (cJSON_GetObjectItemCaseSensitive (j, "dir")->valuestring, "out");
        assert_string_equal (cJSON_GetObjectItemCaseSensitive (j, "peer")->valuestring, "session");
        char err2[256];
        ProtobufCMessage *body = bas_pbjson_to_message (
            s->desc, cJSON_GetObjectItemCaseSensitive (j, "body"), err2, sizeof err2);
        if (!body)
            fail_msg ("%s: JSON does not convert back: %s\n%s", s->desc->name, err2, line);
        zframe_t *again = s_pack (body);
        if (!zframe_eq (again, s->body))
            fail_msg ("%s: JSON round trip changed the message\n%s", s->desc->name, line);
        zframe_destroy (&again);
        protobuf_c_message_free_unpacked (body, NULL);
        ProtobufCMessage *header = bas_pbjson_to_message (
            &basalt__v1__header__descriptor, cJSON_GetObjectItemCaseSensitive (j, "header"), err2,
            sizeof err2);
        assert_non_null (header);
        again = s_pack (header);
        assert_true (zframe_eq (again, s->header));
        zframe_destroy (&again);
        protobuf_c_message_free_unpacked (header, NULL);
        matched++;
        cJSON_Delete (j);
    }
    free (text);
    assert_int_equal (matched, nsent);
    for (size_t i = 0; i < nsent; i++) {
        zframe_destroy (&sent[i].header);
        zframe_destroy (&sent[i].body);
    }
    zsock_destroy (&pub);
    s_env_fini (&env);
}

// ------------------------------------------------------------ JSON that is not a message

static void
test_pbjson_rejects (void **state)
{
    (void)state;
    static const struct {
        const ProtobufCMessageDescriptor *desc;
        const char *json;
        const char *why; // expected in the error
    } cases[] = {
        {&basalt__v1__ready__descriptor, "{\"credits\":1,\"nope\":2}", "nope"},
        {&basalt__v1__ready__descriptor, "{\"credits\":\"x\"}", "credits"},
        {&basalt__v1__ready__descriptor, "{\"credits\":4294967296}", "credits"},
        {&basalt__v1__ready__descriptor, "{\"credits\":1.5}", "credits"},
        {&basalt__v1__ready__descriptor, "[1]", "object"},
        {&basalt__v1__header__descriptor, "{\"seq\":-1}", "seq"},
        {&basalt__v1__header__descriptor, "{\"seq\":\"18446744073709551616\"}", "seq"},
        {&basalt__v1__header__descriptor, "{\"sender\":7}", "sender"},
        {&basalt__v1__object_ref__descriptor, "{\"kind\":\"OBJECT_KIND_NOPE\"}", "kind"},
        {&basalt__v1__item_result__descriptor, "{\"accepted\":1}", "accepted"},
        {&basalt__v1__resources__descriptor, "{\"scalars\":{\"name\":\"a\"}}", "scalars"},
        {&basalt__v1__resources__descriptor, "{\"scalars\":[{\"name\":\"a\"},{\"value\":\"z\"}]}",
         "value"},
        {&basalt__v1__object__descriptor, "{\"node\":{\"name\":\"a\"},\"pod\":{\"uid\":\"u\"}}",
         "oneof"},
        {&basalt__v1__object__descriptor, "{\"node\":{\"name\":\"a\",\"bad\":1}}", "bad"},
        {&basalt__v1__work__descriptor, "{\"bind\":{\"pod_uid\":[]}}", "pod_uid"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cJSON *j = cJSON_Parse (cases[i].json);
        assert_non_null (j);
        char err[256];
        ProtobufCMessage *m = bas_pbjson_to_message (cases[i].desc, j, err, sizeof err);
        if (m)
            fail_msg ("accepted %s as %s", cases[i].json, cases[i].desc->name);
        if (!strstr (err, cases[i].why))
            fail_msg ("error for %s does not name \"%s\": %s", cases[i].json, cases[i].why, err);
        cJSON_Delete (j);
    }
    //  And what it accepts besides its own output: numbers as strings, enums by number.
    cJSON *j = cJSON_Parse ("{\"kind\":3,\"key\":\"k\"}");
    char err[256];
    Basalt__V1__ObjectRef *ref = (Basalt__V1__ObjectRef *)bas_pbjson_to_message (
        &basalt__v1__object_ref__descriptor, j, err, sizeof err);
    assert_non_null (ref);
    assert_int_equal (ref->kind, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP);
    assert_string_equal (ref->key, "k");
    protobuf_c_message_free_unpacked (&ref->base, NULL);
    cJSON_Delete (j);
    j = cJSON_Parse ("{\"seq\":\"12345678901234567890\"}");
    Basalt__V1__Header *h = (Basalt__V1__Header *)bas_pbjson_to_message (
        &basalt__v1__header__descriptor, j, err, sizeof err);
    assert_non_null (h);
    assert_true (h->has_seq && h->seq == UINT64_C (12345678901234567890));
    assert_false (h->has_epoch);
    protobuf_c_message_free_unpacked (&h->base, NULL);
    cJSON_Delete (j);
}

// ------------------------------------------------------------ the tap inside a service

static int
s_end_loop (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    (void)arg;
    return -1;
}

typedef struct {
    bas_svc_t *svc;
    int want;
} s_subs_t;

//  Run the service's reactor for a moment (it reads the XPUB's
//  subscriptions), then check the count.
static bool
s_subscribers_are (void *arg)
{
    s_subs_t *s = arg;
    zloop_t *loop = bas_svc_loop (s->svc);
    zloop_timer (loop, 5, 1, s_end_loop, NULL);
    zloop_start (loop);
    return bas_svc_tap_subscribers (s->svc) == s->want;
}

static bas_svc_t *
s_svc_with_tap (const char *endpoint, const char *hwm)
{
    static const bas_flag_t flags[] = {
        {"http", BAS_FLAG_STRING, offsetof (bas_svc_flags_t, http), "ADDR", "http"},
        {"log-format", BAS_FLAG_STRING, offsetof (bas_svc_flags_t, log_format), "F", "log"},
        {"v", BAS_FLAG_INT, offsetof (bas_svc_flags_t, verbosity), "N", "v"},
        {"tap", BAS_FLAG_STRING, offsetof (bas_svc_flags_t, tap), "E", "tap"},
        {"tap-hwm", BAS_FLAG_INT, offsetof (bas_svc_flags_t, tap_hwm), "N", "hwm"},
        {NULL},
    };
    static bas_svc_flags_t config;
    memset (&config, 0, sizeof config);
    char *argv[] = {"test-svc", "--tap", (char *)endpoint, "--tap-hwm", (char *)hwm, NULL};
    int code = 0;
    bas_svc_t *svc = bas_svc_new ("test-svc", "test", flags, &config, &config, 5, argv, &code);
    assert_non_null (svc);
    return svc;
}

static double
s_metric (bas_svc_t *svc, const char *name)
{
    return bas_metrics_get (bas_svc_metrics (svc), name, NULL);
}

//  Send n Commits DEALER -> ROUTER through the service and receive each;
//  returns how many arrived intact.
static int
s_traffic (bas_svc_t *svc, zsock_t *dealer, zsock_t *router, int n)
{
    bas_stream_t stream;
    bas_stream_init (&stream, "test-svc", 1);
    Basalt__V1__Commit commit = BASALT__V1__COMMIT__INIT;
    char sid[1024];
    memset (sid, 's', sizeof sid - 1);
    sid[sizeof sid - 1] = 0;
    commit.session_id = sid; // ~1 KiB a message
    int arrived = 0;
    for (int i = 0; i < n; i++) {
        commit.has_base_seq = 1;
        commit.base_seq = (uint64_t)i;
        assert_int_equal (bas_svc_send (svc, dealer, &stream, NULL, "cache-svc", &commit.base), 0);
        bas_msg_t msg;
        //  bas_svc_recv never waits: poll first (a ZeroMQ socket's read
        //  readiness, as the reactor sees it).
        zmq_pollitem_t item = {zsock_resolve (router), 0, ZMQ_POLLIN, 0};
        assert_int_equal (zmq_poll (&item, 1, 10000), 1);
        assert_int_equal (bas_svc_recv (svc, router, true, "session", &msg), BAS_MSG_OK);
        const Basalt__V1__Commit *got = (const Basalt__V1__Commit *)msg.body;
        if (msg.desc == &basalt__v1__commit__descriptor && got->base_seq == (uint64_t)i &&
            strcmp (got->session_id, sid) == 0)
            arrived++;
        bas_msg_clear (&msg);
    }
    return arrived;
}

//  A ROUTER bound and a DEALER connected on ipc://DIR/work.sock.
static void
s_pair (const s_env_t *env, zsock_t **router, zsock_t **dealer)
{
    char err[256], ep[384];
    snprintf (ep, sizeof ep, "ipc://%s/work.sock", env->dir);
    *router = bas_sock_new (ZMQ_ROUTER, ep, true, NULL, err, sizeof err);
    *dealer = bas_sock_new (ZMQ_DEALER, ep, false, NULL, err, sizeof err);
    assert_non_null (*router);
    assert_non_null (*dealer);
}

static void
test_stalled_subscriber_drops_and_counts (void **state)
{
    (void)state;
    s_env_t env;
    s_env_init (&env, "tap-stall");
    bas_svc_t *svc = s_svc_with_tap (env.endpoint, "10");
    zsock_t *router, *dealer;
    s_pair (&env, &router, &dealer);

    //  No subscriber: nothing is mirrored, nothing dropped.
    assert_int_equal (s_traffic (svc, dealer, router, 100), 100);
    assert_true (s_metric (svc, "basalt_tap_messages_total") == 0);
    assert_true (s_metric (svc, "basalt_tap_drops_total") == 0);

    //  A subscriber that connects and never reads, with a tiny queue.
    zsock_t *stalled = zsock_new (ZMQ_SUB);
    zsock_set_rcvhwm (stalled, 1);
    zsock_set_rcvbuf (stalled, 4096);
    zsock_set_subscribe (stalled, "");
    assert_int_equal (zsock_connect (stalled, "%s", env.endpoint), 0);
    s_subs_t one = {svc, 1};
    assert_true (util_wait_until (s_subscribers_are, &one, S_WAIT_MS));

    //  Real traffic goes on, every message intact; the tap drops and counts.
    int n = 20000;
    assert_int_equal (s_traffic (svc, dealer, router, n), n);
    double mirrored = s_metric (svc, "basalt_tap_messages_total");
    double drops = s_metric (svc, "basalt_tap_drops_total");
    assert_true (drops > 0);
    assert_true (mirrored > 0);
    assert_true (mirrored + drops == 2.0 * n); // every message in and out, one or the other
    assert_true (bas_metrics_get (bas_svc_metrics (svc), "basalt_messages_total",
                                  "dir=\"out\",peer=\"cache-svc\",type=\"basalt.v1.Commit\"") ==
                 100 + n);

    //  The subscriber leaves: the tap stops copying at once.
    zsock_destroy (&stalled);
    s_subs_t none = {svc, 0};
    assert_true (util_wait_until (s_subscribers_are, &none, S_WAIT_MS));
    assert_int_equal (s_traffic (svc, dealer, router, 100), 100);
    assert_true (s_metric (svc, "basalt_tap_messages_total") == mirrored);
    assert_true (s_metric (svc, "basalt_tap_drops_total") == drops);

    zsock_destroy (&dealer);
    zsock_destroy (&router);
    bas_svc_destroy (&svc);
    s_env_fini (&env);
}

//  A subscriber that keeps up gets every message, in order, with the
//  frames of the real message and tap_seq without a gap.
//  bas_svc_recv never waits (cache-svc's heartbeat drains the binders'
//  socket in the turn where zmq_poll had said it was readable; the
//  workers handler then read with a blocking recv and held the reactor for
//  ~1 s, until the next heartbeat). On a socket with nothing to read it
//  answers BAS_MSG_EAGAIN: a read that waited would get the socket's
//  receive timeout instead, and ETRUNCATED.
static void
test_recv_never_waits (void **state)
{
    (void)state;
    s_env_t env;
    s_env_init (&env, "tap-nowait");
    bas_svc_t *svc = s_svc_with_tap (env.endpoint, "1000");
    zsock_t *router, *dealer;
    s_pair (&env, &router, &dealer);
    zsock_set_rcvtimeo (router, 2000);
    bas_msg_t msg;
    assert_int_equal (bas_svc_recv (svc, router, true, "session", &msg), BAS_MSG_EAGAIN);
    assert_null (msg.identity);
    bas_msg_clear (&msg);
    //  One message: read once, then nothing again.
    assert_int_equal (s_traffic (svc, dealer, router, 1), 1);
    assert_int_equal (bas_svc_recv (svc, router, true, "session", &msg), BAS_MSG_EAGAIN);
    bas_msg_clear (&msg);
    zsock_destroy (&dealer);
    zsock_destroy (&router);
    bas_svc_destroy (&svc);
    s_env_fini (&env);
}

static void
test_reading_subscriber_gets_everything (void **state)
{
    (void)state;
    s_env_t env;
    s_env_init (&env, "tap-read");
    bas_svc_t *svc = s_svc_with_tap (env.endpoint, "1000");
    char err[256];
    zsock_t *router, *dealer;
    s_pair (&env, &router, &dealer);
    zsock_t *sub = bas_sock_new (ZMQ_SUB, env.endpoint, false, NULL, err, sizeof err);
    assert_non_null (sub);
    s_subs_t one = {svc, 1};
    assert_true (util_wait_until (s_subscribers_are, &one, S_WAIT_MS));

    int n = 50;
    assert_int_equal (s_traffic (svc, dealer, router, n), n);
    uint64_t last = 0;
    for (int i = 0; i < 2 * n; i++) {
        zsock_set_rcvtimeo (sub, S_WAIT_MS);
        zmsg_t *msg = zmsg_recv (sub);
        assert_non_null (msg);
        assert_int_equal (zmsg_size (msg), 4);
        char *type = zmsg_popstr (msg);
        char *info = zmsg_popstr (msg);
        assert_string_equal (type, "basalt.v1.Commit");
        const char *dir = i % 2 ? "dir=in peer=session" : "dir=out peer=cache-svc";
        if (!strstr (info, dir) || !strstr (info, "svc=test-svc"))
            fail_msg ("message %d: info \"%s\" lacks \"%s\"", i, info, dir);
        uint64_t seq = strtoull (strstr (info, "tap_seq=") + 8, NULL, 10);
        assert_true (seq == last + 1);
        last = seq;
        zframe_t *header = zmsg_pop (msg);
        zframe_t *body = zmsg_pop (msg);
        Basalt__V1__Commit *c =
            basalt__v1__commit__unpack (NULL, zframe_size (body), zframe_data (body));
        assert_non_null (c);
        assert_true (c->base_seq == (uint64_t)(i / 2));
        basalt__v1__commit__free_unpacked (c, NULL);
        zframe_destroy (&header);
        zframe_destroy (&body);
        zstr_free (&type);
        zstr_free (&info);
        zmsg_destroy (&msg);
    }
    assert_true (s_metric (svc, "basalt_tap_messages_total") == 2.0 * n);
    assert_true (s_metric (svc, "basalt_tap_drops_total") == 0);
    zsock_destroy (&sub);
    zsock_destroy (&dealer);
    zsock_destroy (&router);
    bas_svc_destroy (&svc);
    s_env_fini (&env);
}

// ------------------------------------------------------------ --stats, --record, --read

typedef struct {
    const char *path;
    const char *link;
    const char *type;
    unsigned long total;
} s_row_t;

//  The latest stats row for link and type shows `total`.
static bool
s_row_total_is (void *arg)
{
    s_row_t *r = arg;
    char *text = util_read_file (r->path, NULL);
    const char *row = NULL;
    for (const char *p = text; p && (p = strstr (p, r->link)); p++)
        row = p;
    bool ok = false;
    if (row) {
        char type[64];
        unsigned long count, total;
        double rate;
        ok = sscanf (row + strlen (r->link), " %63s %lu %lf %lu", type, &count, &rate, &total) ==
                 4 &&
             strcmp (type, r->type) == 0 && total == r->total;
    }
    free (text);
    return ok;
}

static void
test_stats_record_replay (void **state)
{
    (void)state;
    s_env_t env;
    s_env_init (&env, "tap-stats");
    char err[256], capture[384];
    snprintf (capture, sizeof capture, "%s/capture.bin", env.dir);
    zsock_t *pub = bas_sock_new (ZMQ_PUB, env.endpoint, true, NULL, err, sizeof err);
    assert_non_null (pub);
    char *argv[] = {s_tap_bin (), "--stats", "--record", capture, env.endpoint, NULL};
    env.tap = util_spawn (argv, env.out);

    Basalt__V1__Heartbeat hb = BASALT__V1__HEARTBEAT__INIT;
    hb.service = "probe";
    s_probe_t probe = {pub, &env, s_header (1), s_pack (&hb.base)};
    //  With --stats the probe shows up in the table printed each second.
    assert_true (util_wait_until (s_tap_joined, &probe, S_WAIT_MS));

    //  7 Deltas out of cache-svc, 3 Commits into it, with tap_seq 1..12
    //  where 4 and 9 are missing: two messages the service's tap dropped.
    Basalt__V1__Delta delta = BASALT__V1__DELTA__INIT;
    Basalt__V1__Commit commit = BASALT__V1__COMMIT__INIT;
    zframe_t *dbody = s_pack (&delta.base), *cbody = s_pack (&commit.base);
    uint64_t seq = 0;
    for (int i = 0; i < 10; i++) {
        seq++;
        if (seq == 4 || seq == 9)
            seq++;
        if (i < 7)
            s_publish (pub, "cache-svc", "out", "subscribers", seq, &basalt__v1__delta__descriptor,
                       probe.header, dbody);
        else
            s_publish (pub, "cache-svc", "in", "session", seq, &basalt__v1__commit__descriptor,
                       probe.header, cbody);
    }
    //  The live table: totals per link and type, printed every second.
    s_row_t r = {env.out, "cache-svc in session", "Commit", 3};
    assert_true (util_wait_until (s_row_total_is, &r, S_WAIT_MS));
    util_stop (env.tap, 5000);
    env.tap = 0;

    //  Replay the capture with --stats: exact counts, rates over the
    //  capture's time span, and the two drops.
    char replay[384];
    snprintf (replay, sizeof replay, "%s/replay.out", env.dir);
    char *argv2[] = {s_tap_bin (), "--stats", "--read", capture, NULL};
    pid_t p = util_spawn (argv2, replay);
    int st = 0;
    assert_int_equal (waitpid (p, &st, 0), p);
    assert_true (WIFEXITED (st) && WEXITSTATUS (st) == 0);
    char *text = util_read_file (replay, NULL);
    assert_non_null (text);
    unsigned long count, total;
    double rate;
    const char *row = strstr (text, "cache-svc out subscribers");
    assert_non_null (row);
    row += strlen ("cache-svc out subscribers");
    assert_int_equal (sscanf (row, " Delta %lu %lf %lu", &count, &rate, &total), 3);
    assert_int_equal (count, 7);
    assert_int_equal (total, 7);
    //  The fake clock puts tap_seq N at N ms: 7 Deltas over 1..8 are 1000/s.
    assert_true (fabs (rate - 1000.0) < 1);
    row = strstr (text, "cache-svc in session");
    assert_non_null (row);
    assert_int_equal (sscanf (row + strlen ("cache-svc in session"), " Commit %lu %lf %lu", &count,
                              &rate, &total),
                      3);
    assert_int_equal (total, 3);
    assert_true (fabs (rate - 1500.0) < 1); // 3 over tap_seq 10..12
    const char *dropped = strstr (text, "dropped cache-svc 42");
    if (!dropped)
        fail_msg ("no drops line in:\n%s", text);
    unsigned long gaps = 0;
    assert_int_equal (sscanf (dropped + strlen ("dropped cache-svc 42"), " %lu", &gaps), 1);
    assert_int_equal (gaps, 2);
    free (text);

    //  The same capture in the default, readable form: one line per message.
    snprintf (replay, sizeof replay, "%s/replay2.out", env.dir);
    char *argv3[] = {s_tap_bin (), "--type", "Commit", "--read", capture, NULL};
    p = util_spawn (argv3, replay);
    assert_int_equal (waitpid (p, &st, 0), p);
    assert_true (WIFEXITED (st) && WEXITSTATUS (st) == 0);
    text = util_read_file (replay, NULL);
    int lines = 0;
    for (const char *q = text; q && (q = strstr (q, " Commit ")); q++)
        lines++;
    assert_int_equal (lines, 3);
    assert_null (strstr (text, "Delta"));
    free (text);

    zframe_destroy (&dbody);
    zframe_destroy (&cbody);
    zframe_destroy (&probe.header);
    zframe_destroy (&probe.body);
    zsock_destroy (&pub);
    s_env_fini (&env);
}

// ------------------------------------------------------------ --name follows uids

//  Append one tapped message (type, info, header, body) to a capture.
static void
s_capture (FILE *f, uint64_t tap_seq, const ProtobufCMessageDescriptor *desc, const char *json)
{
    cJSON *j = cJSON_Parse (json);
    assert_non_null (j);
    char err[256];
    ProtobufCMessage *m = bas_pbjson_to_message (desc, j, err, sizeof err);
    if (!m)
        fail_msg ("%s: %s", json, err);
    cJSON_Delete (j);
    zframe_t *body = s_pack (m);
    protobuf_c_message_free_unpacked (m, NULL);
    zframe_t *header = s_header (tap_seq);
    char info[160];
    snprintf (info, sizeof info, "svc=cache-svc epoch=42 dir=out peer=x time_us=%llu tap_seq=%llu",
              (unsigned long long)(1700000000000000ULL + tap_seq), (unsigned long long)tap_seq);
    const void *data[4] = {desc->name, info, zframe_data (header), zframe_data (body)};
    uint32_t len[4] = {(uint32_t)strlen (desc->name), (uint32_t)strlen (info),
                       (uint32_t)zframe_size (header), (uint32_t)zframe_size (body)};
    for (int i = 0; i < 4; i++) {
        assert_int_equal (fwrite (&len[i], sizeof len[i], 1, f), 1);
        assert_int_equal (fwrite (data[i], 1, len[i], f), len[i]);
    }
    zframe_destroy (&header);
    zframe_destroy (&body);
}

static void
test_name_follows_uids (void **state)
{
    (void)state;
    s_env_t env;
    s_env_init (&env, "tap-name");
    char capture[384];
    snprintf (capture, sizeof capture, "%s/capture.bin", env.dir);
    FILE *f = fopen (capture, "wb");
    assert_non_null (f);
    //  The pod train-0 (uid u-train) arrives, is placed by session s-1,
    //  bound by work 7; another pod goes through s-2 and work 8. Only the
    //  first Delta names train-0; the rest carry its uid, or the session or
    //  work id that came with it.
    s_capture (f, 1, &basalt__v1__delta__descriptor,
               "{\"upserts\":[{\"pod\":{\"uid\":\"u-train\",\"namespace\":\"ml\",\"name\":\"train-"
               "0\"}}]}");
    s_capture (
        f, 2, &basalt__v1__commit__descriptor,
        "{\"session_id\":\"s-2\",\"placements\":[{\"pod_uid\":\"u-other\",\"node\":\"n2\"}]}");
    s_capture (
        f, 3, &basalt__v1__commit__descriptor,
        "{\"session_id\":\"s-1\",\"placements\":[{\"pod_uid\":\"u-train\",\"node\":\"n1\"}]}");
    s_capture (f, 4, &basalt__v1__commit_result__descriptor,
               "{\"session_id\":\"s-2\",\"accepted\":1}");
    s_capture (f, 5, &basalt__v1__commit_result__descriptor,
               "{\"session_id\":\"s-1\",\"accepted\":1}");
    s_capture (f, 6, &basalt__v1__work__descriptor,
               "{\"work_id\":8,\"bind\":{\"pod_uid\":\"u-other\",\"node\":\"n2\"}}");
    s_capture (f, 7, &basalt__v1__work__descriptor,
               "{\"work_id\":7,\"bind\":{\"pod_uid\":\"u-train\",\"node\":\"n1\"}}");
    s_capture (f, 8, &basalt__v1__work_result__descriptor, "{\"work_id\":8,\"ok\":true}");
    s_capture (f, 9, &basalt__v1__work_result__descriptor, "{\"work_id\":7,\"ok\":true}");
    assert_int_equal (fclose (f), 0);

    char *argv[] = {s_tap_bin (), "--json", "--name", "train-0", "--read", capture, NULL};
    assert_int_equal (util_run (argv, env.out, S_WAIT_MS), 0);
    char *text = util_read_file (env.out, NULL);
    assert_non_null (text);
    //  Exactly tap_seq 1, 3, 5, 7, 9, in order.
    const long want[] = {1, 3, 5, 7, 9};
    size_t n = 0;
    for (char *line = strtok (text, "\n"); line; line = strtok (NULL, "\n")) {
        cJSON *j = cJSON_Parse (line);
        if (!j)
            continue; // not a message line
        const cJSON *seq = cJSON_GetObjectItem (j, "tap_seq");
        if (n >= sizeof want / sizeof want[0] || !cJSON_IsNumber (seq) ||
            (long)seq->valuedouble != want[n])
            fail_msg ("message %zu: tap_seq %g, wanted %ld", n,
                      cJSON_IsNumber (seq) ? seq->valuedouble : -1.0, n < 5 ? want[n] : -1L);
        n++;
        cJSON_Delete (j);
    }
    assert_int_equal (n, 5);
    free (text);
    s_env_fini (&env);
}

//  An endpoint nothing binds: said at once (no socket file) and after 5 s.
static void
test_silent_endpoint_warned (void **state)
{
    (void)state;
    s_env_t env;
    s_env_init (&env, "tap-silent");
    char *argv[] = {s_tap_bin (), env.endpoint, NULL};
    env.tap = util_spawn (argv, env.out);
    s_grep_t g = {env.out, "no socket file there yet", 1};
    assert_true (util_wait_until (s_file_has, &g, S_WAIT_MS));
    s_grep_t g2 = {env.out, "nothing received from ipc://", 1};
    assert_true (util_wait_until (s_file_has, &g2, S_WAIT_MS));
    //  A tcp:// endpoint is refused with the reason, not left waiting.
    char out[400];
    snprintf (out, sizeof out, "%s/tcp.out", env.dir);
    char *tcp[] = {s_tap_bin (), "tcp://127.0.0.1:1", NULL};
    assert_int_equal (util_run (tcp, out, S_WAIT_MS), 1);
    s_grep_t g3 = {out, "give --curve-cert FILE", 1};
    assert_true (s_file_has (&g3));
    s_env_fini (&env);
}

//  A tcp:// endpoint bound with CURVE: refused without an allow-list of
//  client certificates (a CURVE server with no ZAP handler lets any key
//  in); with one, an allowed client's message arrives and a client whose
//  key is not in the list gets nothing through.
static void
test_curve_bind_needs_clients (void **state)
{
    (void)state;
    char dir[] = "/tmp/basalt-curve-XXXXXX";
    assert_non_null (mkdtemp (dir));
    char clients[300], server_path[300], client_path[300], other_path[300];
    snprintf (clients, sizeof clients, "%s/clients", dir);
    assert_int_equal (zsys_dir_create ("%s", clients), 0);
    snprintf (server_path, sizeof server_path, "%s/server.cert", dir);
    snprintf (client_path, sizeof client_path, "%s/client.cert", dir);
    snprintf (other_path, sizeof other_path, "%s/other.cert", dir);
    zcert_t *server = zcert_new (), *client = zcert_new (), *other = zcert_new ();
    assert_int_equal (zcert_save (server, server_path), 0);
    assert_int_equal (zcert_save (client, client_path), 0);
    assert_int_equal (zcert_save (other, other_path), 0);
    char allowed[320];
    snprintf (allowed, sizeof allowed, "%s/client.cert", clients);
    assert_int_equal (zcert_save_public (client, allowed), 0);

    bas_sock_opts_t opts = bas_sock_opts_default ();
    opts.curve_cert = server_path;
    char err[400] = "";
    assert_null (bas_sock_new (ZMQ_ROUTER, "tcp://127.0.0.1:*", true, &opts, err, sizeof err));
    assert_non_null (strstr (err, "--curve-clients DIR"));

    opts.curve_clients = clients;
    zactor_t *auth = bas_sock_auth_new (clients);
    assert_non_null (auth);
    zsock_t *router = bas_sock_new (ZMQ_ROUTER, "tcp://127.0.0.1:*", true, &opts, err, sizeof err);
    if (!router)
        fail_msg ("%s", err);
    char endpoint[128];
    char *last = zsock_last_endpoint (router); // the caller's to free
    snprintf (endpoint, sizeof endpoint, "%s", last);
    zstr_free (&last);

    bas_sock_opts_t copts = bas_sock_opts_default ();
    copts.curve_cert = client_path;
    copts.curve_server = server_path;
    zsock_t *good = bas_sock_new (ZMQ_DEALER, endpoint, false, &copts, err, sizeof err);
    if (!good)
        fail_msg ("%s", err);
    zstr_send (good, "allowed");
    zsock_set_rcvtimeo (router, S_WAIT_MS);
    zmsg_t *msg = zmsg_recv (router);
    assert_non_null (msg);
    zframe_t *id = zmsg_pop (msg);
    char *text = zmsg_popstr (msg);
    assert_string_equal (text, "allowed");
    free (text);
    zframe_destroy (&id);
    zmsg_destroy (&msg);

    copts.curve_cert = other_path;
    zsock_t *bad = bas_sock_new (ZMQ_DEALER, endpoint, false, &copts, err, sizeof err);
    if (!bad)
        fail_msg ("%s", err);
    zstr_send (bad, "intruder");
    zstr_send (good, "allowed again"); // the router is up and answering meanwhile
    zsock_set_rcvtimeo (router, S_WAIT_MS);
    msg = zmsg_recv (router);
    assert_non_null (msg);
    id = zmsg_pop (msg);
    text = zmsg_popstr (msg);
    assert_string_equal (text, "allowed again"); // never "intruder"
    free (text);
    zframe_destroy (&id);
    zmsg_destroy (&msg);
    zsock_set_rcvtimeo (router, 300);
    msg = zmsg_recv (router); // a bounded look for the intruder's message: none
    assert_null (msg);

    zsock_destroy (&bad);
    zsock_destroy (&good);
    zsock_destroy (&router);
    zactor_destroy (&auth);
    zcert_destroy (&server);
    zcert_destroy (&client);
    zcert_destroy (&other);
    zsys_dir_delete ("%s", clients); // best effort
    char cmd[400];
    snprintf (cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal (system (cmd), 0);
}

// ------------------------------------------------------------ a service's tap on tcp://

static char *
s_svc_bin (const char *name)
{
    static char bin[512];
    snprintf (bin, sizeof bin, "%s/%s/%s", BASALT_BIN_DIR, name, name);
    return bin;
}

//  Lines of `path` that show a message of type `type` (basalt-tap's
//  readable form: "... binder-svc out cache-svc Heartbeat seq=...").
static int
s_count (const char *path, const char *type)
{
    char *text = util_read_file (path, NULL);
    char needle[80];
    snprintf (needle, sizeof needle, " %s ", type);
    int n = 0;
    for (const char *p = text; p && (p = strstr (p, needle)); p++)
        n++;
    free (text);
    return n;
}

typedef struct {
    const char *path;
    int want;
} s_lines_t;

static bool
s_heartbeats_at_least (void *arg)
{
    s_lines_t *l = arg;
    return s_count (l->path, "Heartbeat") >= l->want;
}

//  binder-svc is the service: with no cache-svc and no API server it does
//  nothing but send a Heartbeat each second, which its tap mirrors.
static void
test_tcp_tap_takes_curve (void **state)
{
    (void)state;
    char *dir = util_tmpdir ("tap-tcp");
    char clients[300], svc_cert[300], svc_public[300], tap_cert[300], other_cert[300];
    snprintf (clients, sizeof clients, "%s/clients", dir);
    assert_int_equal (zsys_dir_create ("%s", clients), 0);
    snprintf (svc_cert, sizeof svc_cert, "%s/svc.cert", dir);
    snprintf (svc_public, sizeof svc_public, "%s/svc-public.cert", dir);
    snprintf (tap_cert, sizeof tap_cert, "%s/tap.cert", dir);
    snprintf (other_cert, sizeof other_cert, "%s/other.cert", dir);
    zcert_t *svc = zcert_new (), *tap = zcert_new (), *other = zcert_new ();
    assert_int_equal (zcert_save (svc, svc_cert), 0);
    assert_int_equal (zcert_save_public (svc, svc_public), 0); // all a tap user gets
    assert_int_equal (zcert_save (tap, tap_cert), 0);
    assert_int_equal (zcert_save (other, other_cert), 0);
    char allowed[320];
    snprintf (allowed, sizeof allowed, "%s/tap.cert", clients);
    assert_int_equal (zcert_save_public (tap, allowed), 0);

    char endpoint[64], work[384], http[64], svc_log[384], good_out[384], bad_out[384], out[384];
    snprintf (endpoint, sizeof endpoint, "tcp://127.0.0.1:%d", util_free_port ());
    snprintf (work, sizeof work, "ipc://%s/work.sock", dir);
    int http_port = util_free_port ();
    snprintf (http, sizeof http, "127.0.0.1:%d", http_port);
    snprintf (svc_log, sizeof svc_log, "%s/svc.log", dir);
    snprintf (good_out, sizeof good_out, "%s/good.out", dir);
    snprintf (bad_out, sizeof bad_out, "%s/bad.out", dir);
    snprintf (out, sizeof out, "%s/refused.out", dir);

    //  The service refuses a tcp:// tap without an allow-list, naming --tap.
    char *no_clients[] = {s_svc_bin ("binder-svc"),
                          "--master",
                          "http://127.0.0.1:1",
                          "--work-endpoint",
                          work,
                          "--tap",
                          endpoint,
                          "--curve-cert",
                          svc_cert,
                          NULL};
    int rc = util_run (no_clients, out, S_WAIT_MS);
    assert_true (rc > 0);
    s_grep_t g = {out, "--tap tcp://127.0.0.1:", 1};
    s_grep_t g2 = {out, "--curve-clients DIR", 1};
    if (!s_file_has (&g) || !s_file_has (&g2)) {
        char *text = util_read_file (out, NULL);
        fail_msg ("binder-svc's refusal does not name --tap and --curve-clients:\n%s",
                  text ? text : "");
    }
    //  basalt-tap refuses tcp:// without both certificates, naming the flags.
    char *no_curve[] = {s_tap_bin (), endpoint, NULL};
    char *no_server[] = {s_tap_bin (), "--curve-cert", tap_cert, endpoint, NULL};
    char **refused[] = {no_curve, no_server};
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal (util_run (refused[i], out, S_WAIT_MS), 1);
        s_grep_t g3 = {out, "give --curve-cert FILE", 1};
        s_grep_t g4 = {out, "--curve-server FILE", 1};
        assert_true (s_file_has (&g3) && s_file_has (&g4));
    }

    char *svc_argv[] = {s_svc_bin ("binder-svc"),
                        "--master",
                        "http://127.0.0.1:1",
                        "--work-endpoint",
                        work,
                        "--http",
                        http,
                        "--tap",
                        endpoint,
                        "--curve-cert",
                        svc_cert,
                        "--curve-clients",
                        clients,
                        NULL};
    pid_t svc_pid = util_spawn (svc_argv, svc_log);
    assert_true (svc_pid > 0);
    char *good_argv[] = {s_tap_bin (), "--curve-cert", tap_cert, "--curve-server",
                         svc_public,   endpoint,       NULL};
    char *bad_argv[] = {s_tap_bin (), "--curve-cert", other_cert, "--curve-server",
                        svc_public,   endpoint,       NULL};
    pid_t good = util_spawn (good_argv, good_out);
    pid_t bad = util_spawn (bad_argv, bad_out);
    assert_true (good > 0 && bad > 0);
    //  And a subscriber with no CURVE at all.
    zsock_t *plain = zsock_new_sub (endpoint, "");
    assert_non_null (plain);

    //  The allowed basalt-tap gets the service's messages.
    s_lines_t two = {good_out, 2};
    if (!util_wait_until (s_heartbeats_at_least, &two, S_WAIT_MS)) {
        char *text = util_read_file (svc_log, NULL);
        fail_msg ("the allowed basalt-tap got no Heartbeat; binder-svc's log:\n%s",
                  text ? text : "");
    }
    //  A bounded look at the others: while the allowed one receives two
    //  more messages, they receive none, and the service counts one
    //  subscriber only.
    s_lines_t more = {good_out, s_count (good_out, "Heartbeat") + 2};
    assert_true (util_wait_until (s_heartbeats_at_least, &more, S_WAIT_MS));
    assert_int_equal (s_count (bad_out, "Heartbeat"), 0);
    char *bad_text = util_read_file (bad_out, NULL);
    if (bad_text && strstr (bad_text, "binder-svc"))
        fail_msg ("a basalt-tap whose certificate is not allowed printed:\n%s", bad_text);
    free (bad_text);
    zmsg_t *leaked = NULL;
    zpoller_t *poller = zpoller_new (plain, NULL);
    if (zpoller_wait (poller, 0) == plain)
        leaked = zmsg_recv (plain);
    assert_null (leaked);
    zpoller_destroy (&poller);
    char *metrics = NULL;
    assert_int_equal (util_http_get (http_port, "/metrics", &metrics), 200);
    assert_true (util_prom_sample (metrics, "basalt_tap_subscribers") == 1);
    free (metrics);

    zsock_destroy (&plain);
    util_stop (bad, 5000);
    util_stop (good, 5000);
    int st = util_stop (svc_pid, 10000);
    if (!(WIFEXITED (st) && WEXITSTATUS (st) == 0)) {
        char *log = util_read_file (svc_log, NULL);
        fail_msg ("binder-svc did not exit 0 on SIGTERM (status %d):\n%s", st, log ? log : "");
    }
    zcert_destroy (&svc);
    zcert_destroy (&tap);
    zcert_destroy (&other);
    util_rmtree (dir);
    free (dir);
}

int
main (void)
{
    zsys_init ();
    zsys_set_logstream (NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_roundtrip_every_type),
        cmocka_unit_test (test_pbjson_rejects),
        cmocka_unit_test (test_stalled_subscriber_drops_and_counts),
        cmocka_unit_test (test_reading_subscriber_gets_everything),
        cmocka_unit_test (test_recv_never_waits),
        cmocka_unit_test (test_stats_record_replay),
        cmocka_unit_test (test_name_follows_uids),
        cmocka_unit_test (test_silent_endpoint_warned),
        cmocka_unit_test (test_curve_bind_needs_clients),
        cmocka_unit_test (test_tcp_tap_takes_curve),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
