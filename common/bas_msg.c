/*  bas_msg: see bas_msg.h.

    The type registry is a const array the build writes from protoc-c's
    header (scripts/msgtypes.sh); tests/test_msg.c parses the .proto file
    and fails when a message is missing from it.
*/
#include "bas_msg.h"
#include "bas_util.h"

#include <errno.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

//  Generated from protoc-c's header by the build (scripts/msgtypes.sh).
static const ProtobufCMessageDescriptor *const s_types[] = {
#include "bas_msgtypes.inc"
};

const ProtobufCMessageDescriptor *const *
bas_msgtypes (size_t *n)
{
    *n = sizeof s_types / sizeof s_types[0];
    return s_types;
}

const ProtobufCMessageDescriptor *
bas_msgtype_lookup (const char *name, size_t len)
{
    //  38 entries: a linear scan with a length check first is cheaper than
    //  hashing for the handful of types a socket actually carries.
    for (size_t i = 0; i < sizeof s_types / sizeof s_types[0]; i++) {
        const char *full = s_types[i]->name;
        if (strlen (full) == len && memcmp (full, name, len) == 0)
            return s_types[i];
    }
    return NULL;
}

const char *
bas_msg_strerror (int rc)
{
    switch (rc) {
    case BAS_MSG_OK:
        return "ok";
    case BAS_MSG_ETRUNCATED:
        return "truncated";
    case BAS_MSG_EEXTRA:
        return "extra_frames";
    case BAS_MSG_EUNKNOWN:
        return "unknown_type";
    case BAS_MSG_EHEADER:
        return "bad_header";
    case BAS_MSG_EBODY:
        return "bad_body";
    case BAS_MSG_EVERSION:
        return "bad_version";
    case BAS_MSG_EAGAIN:
        return "nothing_to_read";
    case BAS_MSG_ENOHANDLER:
        return "no_handler";
    default:
        return "error";
    }
}

void
bas_msg_clear (bas_msg_t *m)
{
    if (m->header)
        basalt__v1__header__free_unpacked (m->header, NULL);
    if (m->body)
        protobuf_c_message_free_unpacked (m->body, NULL);
    zframe_destroy (&m->identity);
    memset (m, 0, sizeof *m);
}

int
bas_msg_decode (zmsg_t **msg_p, bool router, bas_msg_t *out)
{
    memset (out, 0, sizeof *out);
    zmsg_t *msg = *msg_p;
    *msg_p = NULL;
    if (!msg)
        return BAS_MSG_ETRUNCATED;
    int rc = BAS_MSG_OK;
    if (router) {
        out->identity = zmsg_pop (msg);
        if (!out->identity) {
            rc = BAS_MSG_ETRUNCATED;
            goto done;
        }
    }
    if (zmsg_size (msg) < 3) {
        rc = BAS_MSG_ETRUNCATED;
        goto done;
    }
    if (zmsg_size (msg) > 3) {
        rc = BAS_MSG_EEXTRA;
        goto done;
    }
    zframe_t *type = zmsg_first (msg);
    zframe_t *header = zmsg_next (msg);
    zframe_t *body = zmsg_next (msg);
    const ProtobufCMessageDescriptor *desc =
        bas_msgtype_lookup ((const char *)zframe_data (type), zframe_size (type));
    if (!desc) {
        rc = BAS_MSG_EUNKNOWN;
        goto done;
    }
    out->header = basalt__v1__header__unpack (NULL, zframe_size (header), zframe_data (header));
    if (!out->header) {
        rc = BAS_MSG_EHEADER;
        goto done;
    }
    if (out->header->has_version && out->header->version != BAS_PROTOCOL_VERSION) {
        rc = BAS_MSG_EVERSION;
        goto done;
    }
    out->body = protobuf_c_message_unpack (desc, NULL, zframe_size (body), zframe_data (body));
    if (!out->body) {
        rc = BAS_MSG_EBODY;
        goto done;
    }
    out->desc = desc;
done:
    if (rc != BAS_MSG_OK) {
        //  Keep the identity so the caller can answer with an Error.
        zframe_t *identity = out->identity;
        out->identity = NULL;
        bas_msg_clear (out);
        out->identity = identity;
    }
    zmsg_destroy (&msg);
    return rc;
}

void
bas_stream_init (bas_stream_t *stream, const char *sender, uint64_t epoch)
{
    memset (stream, 0, sizeof *stream);
    snprintf (stream->sender, sizeof stream->sender, "%s", sender);
    stream->epoch = epoch;
}

int64_t
bas_now_us (void)
{
    struct timeval tv;
    gettimeofday (&tv, NULL);
    return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

int64_t
bas_mono_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
bas_mono_us (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static zframe_t *
s_header_frame (bas_stream_t *stream, uint64_t seq_override)
{
    Basalt__V1__Header header = BASALT__V1__HEADER__INIT;
    header.has_version = 1;
    header.version = BAS_PROTOCOL_VERSION;
    header.sender = stream->sender;
    header.has_epoch = 1;
    header.epoch = stream->epoch;
    header.has_seq = 1;
    header.seq = seq_override ? seq_override : ++stream->seq;
    header.has_send_time_us = 1;
    header.send_time_us = bas_now_us ();
    uint8_t buf[256];
    size_t len = basalt__v1__header__get_packed_size (&header);
    if (len > sizeof buf)
        return zframe_new (NULL, 0); // sender names are capped at 63 bytes
    basalt__v1__header__pack (&header, buf);
    return zframe_new (buf, len);
}

zmsg_t *
bas_msg_encode_packed (bas_stream_t *stream, zframe_t *identity,
                       const ProtobufCMessageDescriptor *desc, zframe_t **body_p,
                       uint64_t seq_override)
{
    zmsg_t *msg = zmsg_new ();
    if (identity)
        zmsg_append (msg, &(zframe_t *){zframe_dup (identity)});
    zmsg_addstr (msg, desc->name);
    zframe_t *header = s_header_frame (stream, seq_override);
    zmsg_append (msg, &header);
    zmsg_append (msg, body_p);
    return msg;
}

zmsg_t *
bas_msg_encode (bas_stream_t *stream, zframe_t *identity, const ProtobufCMessage *body,
                uint64_t seq_override)
{
    size_t len = protobuf_c_message_get_packed_size (body);
    zframe_t *frame = zframe_new (NULL, len);
    protobuf_c_message_pack (body, zframe_data (frame));
    return bas_msg_encode_packed (stream, identity, body->descriptor, &frame, seq_override);
}

int
bas_msg_send_raw (zsock_t *sock, zmsg_t **msg_p)
{
    //  The socket has a zero send timeout (bas_sock), so zmsg_send fails
    //  with EAGAIN instead of blocking; zmsg_send destroys the message only
    //  on success.
    int rc = zmsg_send (msg_p, sock);
    if (rc != 0) {
        int saved = errno;
        zmsg_destroy (msg_p);
        errno = saved;
    }
    return rc;
}

int
bas_msg_send (zsock_t *sock, bas_stream_t *stream, zframe_t *identity, const ProtobufCMessage *body)
{
    zmsg_t *msg = bas_msg_encode (stream, identity, body, 0);
    return bas_msg_send_raw (sock, &msg);
}

const bas_handler_t *
bas_handler_find (const bas_handler_t *table, const ProtobufCMessageDescriptor *desc)
{
    for (const bas_handler_t *h = table; h->desc; h++)
        if (h->desc == desc)
            return h;
    return NULL;
}

//  The placements' indices grouped by job, each job's in commit order, the
//  jobs in the order of their first placement: `order` holds the indices and
//  `start[g]`..`start[g+1]` the g-th job's range. One hash pass and a counting
//  sort, so a commit of 50,000 placements costs linear time (comparing every
//  placement with every job's first was quadratic: tens of seconds).
//  Returns the number of jobs; the caller frees `*order_p` and `*start_p`.
size_t
bas_msg_commit_gangs (const Basalt__V1__Commit *commit, size_t **order_p, size_t **start_p)
{
    size_t n = commit->n_placements;
    size_t *group = bas_alloc ((n ? n : 1) * sizeof *group);
    size_t *start = bas_alloc ((n + 2) * sizeof *start);
    size_t *order = bas_alloc ((n ? n : 1) * sizeof *order);
    zhashx_t *jobs = zhashx_new (); // job uid -> group number + 1
    size_t groups = 0;
    for (size_t i = 0; i < n; i++) {
        const char *job = commit->placements[i]->job_uid ? commit->placements[i]->job_uid : "";
        uintptr_t g = (uintptr_t)zhashx_lookup (jobs, job);
        if (!g) {
            g = ++groups;
            zhashx_insert (jobs, job, (void *)g);
        }
        group[i] = (size_t)g - 1;
        start[group[i] + 1]++;
    }
    zhashx_destroy (&jobs);
    for (size_t g = 0; g < groups; g++)
        start[g + 1] += start[g];
    size_t *fill = bas_alloc ((groups ? groups : 1) * sizeof *fill);
    for (size_t i = 0; i < n; i++)
        order[start[group[i]] + fill[group[i]]++] = i;
    free (fill);
    free (group);
    *order_p = order;
    *start_p = start;
    return groups;
}
