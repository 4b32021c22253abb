/*  bas_clone: see bas_clone.h.

    Publisher: the snapshots being sent are a list in turn order; the one
    whose part was handed out last (bas_clone_publisher_next) is `current`
    until the caller says whether the part went out. The PUB's header
    state (epoch and the stream's counter) is kept here; the ROUTER's is
    the caller's, shared with its other answers.
*/
#include "bas_clone.h"
#include "bas_log.h"
#include "bas_util.h"

#include <string.h>

//  A snapshot being sent to one reader in parts.
typedef struct {
    char *requester;             // its name, for logs
    zframe_t *identity;          // its ROUTER identity (owned)
    void *snap;                  // the source's progress (owned; source.end)
    void (*end) (void **snap_p); // frees snap
    size_t parts;                // sent so far
    bool more;                   // parts are left after the one handed out last
    int64_t started_us;          // when it began
} s_job_t;

struct _bas_clone_publisher_t {
    bas_stream_t pub_stream;   // the PUB's header state: sender, epoch
    uint64_t seq;              // the last Delta's seq
    size_t part_max;           // objects in one part
    bas_clone_source_t source; // the model's snapshots
    void *arg;                 // for source
    zlistx_t *jobs;            // s_job_t, in turn order
    s_job_t *current;          // its part is out with the caller, or NULL
    unsigned long served;      // snapshots sent whole
    unsigned long dropped;     // snapshots ended by a part not sent
};

static void
s_job_free (void **item_p)
{
    s_job_t *job = *item_p;
    if (job) {
        if (job->end)
            job->end (&job->snap);
        zframe_destroy (&job->identity);
        free (job->requester);
        free (job);
        *item_p = NULL;
    }
}

bas_clone_publisher_t *
bas_clone_publisher_new (const char *sender, uint64_t epoch, size_t part_max,
                         const bas_clone_source_t *source, void *arg)
{
    bas_clone_publisher_t *self = bas_alloc (sizeof *self);
    bas_stream_init (&self->pub_stream, sender, epoch);
    self->part_max = part_max ? part_max : 1;
    self->source = *source;
    self->arg = arg;
    self->jobs = zlistx_new ();
    zlistx_set_destructor (self->jobs, s_job_free);
    return self;
}

void
bas_clone_publisher_destroy (bas_clone_publisher_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    bas_clone_publisher_t *self = *self_p;
    zlistx_destroy (&self->jobs);
    free (self);
    *self_p = NULL;
}

uint64_t
bas_clone_publisher_epoch (bas_clone_publisher_t *self)
{
    return self->pub_stream.epoch;
}

uint64_t
bas_clone_publisher_seq (bas_clone_publisher_t *self)
{
    return self->seq;
}

zmsg_t *
bas_clone_publisher_delta (bas_clone_publisher_t *self, zframe_t **body_p, uint64_t seq)
{
    //  Readers apply seq S + 1, S + 2, ... and take any other as a lost
    //  delta: one out of sequence would send every reader back to a
    //  snapshot.
    if (seq != self->seq + 1) {
        bas_error ("delta_out_of_sequence", "seq=%llu last=%llu", (unsigned long long)seq,
                   (unsigned long long)self->seq);
        zframe_destroy (body_p);
        return NULL;
    }
    self->seq = seq;
    return bas_msg_encode_packed (&self->pub_stream, NULL, &basalt__v1__delta__descriptor, body_p,
                                  seq);
}

zmsg_t *
bas_clone_publisher_heartbeat (bas_clone_publisher_t *self, uint32_t work_pending)
{
    //  Readers compare the heartbeat's seq with theirs to find lost deltas.
    //  Before the first delta there is nothing to lose (and seq 0 would
    //  mean "the stream's own counter" to bas_msg_encode).
    if (self->seq == 0)
        return NULL;
    Basalt__V1__Heartbeat hb = BASALT__V1__HEARTBEAT__INIT;
    hb.service = (char *)self->pub_stream.sender;
    hb.has_work_pending = 1;
    hb.work_pending = work_pending;
    return bas_msg_encode (&self->pub_stream, NULL, &hb.base, self->seq);
}

bool
bas_clone_publisher_request (bas_clone_publisher_t *self, zframe_t *identity,
                             const Basalt__V1__SnapshotRequest *req, int64_t now_us)
{
    const char *requester = req->requester && *req->requester ? req->requester : "-";
    //  A new request from a reader replaces the snapshot still being sent
    //  to it: it gave up on that one (its parts carry the old request_id,
    //  which it ignores).
    bool replaced = false;
    for (s_job_t *job = zlistx_first (self->jobs); job; job = zlistx_next (self->jobs))
        if (zframe_eq (job->identity, identity)) {
            if (job == self->current)
                self->current = NULL;
            zlistx_delete (self->jobs, zlistx_cursor (self->jobs));
            replaced = true;
            break;
        }
    s_job_t *job = bas_alloc (sizeof *job);
    job->requester = strdup (requester);
    job->identity = zframe_dup (identity);
    job->snap = self->source.begin (self->arg, req->has_request_id ? req->request_id : 0);
    job->end = self->source.end;
    job->more = true;
    job->started_us = now_us;
    zlistx_add_end (self->jobs, job);
    bas_info ("snapshot_started", "requester=%s seq=%llu", requester,
              (unsigned long long)self->seq);
    return replaced;
}

zmsg_t *
bas_clone_publisher_next (bas_clone_publisher_t *self, bas_stream_t *stream, const char **requester)
{
    s_job_t *job = zlistx_first (self->jobs);
    if (!job)
        return NULL;
    bool more = false;
    zframe_t *body = self->source.part (self->arg, job->snap, self->part_max, &more);
    job->more = more;
    self->current = job;
    *requester = job->requester;
    return bas_msg_encode_packed (stream, job->identity, &basalt__v1__snapshot__descriptor, &body,
                                  0);
}

int
bas_clone_publisher_sent (bas_clone_publisher_t *self, int rc, int64_t now_us)
{
    s_job_t *job = self->current;
    self->current = NULL;
    if (!job || job != zlistx_first (self->jobs))
        return 0; // replaced meanwhile
    if (rc != 0) {
        //  A part that cannot be sent ends its snapshot: the reader is gone
        //  (EHOSTUNREACH) or takes no more (EAGAIN), the rest would be built
        //  for nobody, and a reader still there asks again (bas_replica: a
        //  part out of order, or none for 2 s).
        bas_info ("snapshot_dropped", "requester=%s parts_sent=%zu", job->requester, job->parts);
        self->dropped++;
        zlistx_delete (self->jobs, zlistx_cursor (self->jobs));
        return -1;
    }
    job->parts++;
    if (!job->more) {
        bas_info ("snapshot_served", "requester=%s parts=%zu ms=%.1f", job->requester, job->parts,
                  (double)(now_us - job->started_us) / 1000.0);
        self->served++;
        zlistx_delete (self->jobs, zlistx_cursor (self->jobs));
        return 1;
    }
    //  Readers take turns: the next one, and this one later.
    if (zlistx_size (self->jobs) > 1)
        zlistx_move_end (self->jobs, zlistx_cursor (self->jobs));
    return 0;
}

size_t
bas_clone_publisher_serving (bas_clone_publisher_t *self)
{
    return zlistx_size (self->jobs);
}

unsigned long
bas_clone_publisher_served (bas_clone_publisher_t *self)
{
    return self->served;
}

unsigned long
bas_clone_publisher_dropped (bas_clone_publisher_t *self)
{
    return self->dropped;
}
