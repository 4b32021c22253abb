/*  bas_commit: the Commit conversation, both ends (bas_commit.h has the
    state table).

    Design note: the proposer is a handful of fields (parts out, their sums,
    the seq to wait for) that session-svc used to keep itself; the acceptor
    is a line of commits, each applied through the model's functions a
    slice at a time. Neither reads a clock of its own except through what
    its caller hands in, so tests/test_commit.c drives both in process.
*/
#include "bas_commit.h"
#include "bas_log.h"
#include "bas_util.h"

#include <string.h>

// ------------------------------------------------------------ the parts

static zframe_t *
s_pack (const Basalt__V1__Commit *commit)
{
    zframe_t *frame = zframe_new (NULL, basalt__v1__commit__get_packed_size (commit));
    if (!frame)
        abort (); // out of memory: the one abort path (STYLE.md 5)
    basalt__v1__commit__pack (commit, zframe_data (frame));
    return frame;
}

zframe_t **
bas_commit_pack (const Basalt__V1__Commit *commit, size_t part_placements, size_t *n_parts)
{
    size_t n = commit->n_placements;
    if (part_placements == 0 || n <= part_placements) {
        zframe_t **parts = bas_malloc (sizeof *parts);
        parts[0] = s_pack (commit);
        *n_parts = 1;
        return parts;
    }
    size_t *order = NULL, *start = NULL;
    size_t gangs = bas_msg_commit_gangs (commit, &order, &start);
    Basalt__V1__Placement **sorted = bas_malloc (n * sizeof *sorted);
    //  A part is closed only when the next gang does not fit in it, so two
    //  neighbouring parts hold more than part_placements together: at most
    //  2 n/part_placements + 1 parts.
    size_t cap = 2 * (n / part_placements) + 2;
    zframe_t **parts = bas_alloc (sizeof *parts * cap);
    for (size_t i = 0; i < n; i++)
        sorted[i] = commit->placements[order[i]];
    size_t count = 0, from = 0;
    for (size_t g = 0; g < gangs; g++) {
        size_t end = start[g + 1];
        bool last = g + 1 == gangs;
        //  Close the part before a gang that would overflow it, or after
        //  the last gang.
        if (!last && start[g + 2] - from <= part_placements)
            continue;
        Basalt__V1__Commit part = *commit;
        part.placements = sorted + from;
        part.n_placements = end - from;
        if (count > 0)
            part.n_evictions = 0;
        if (!last) {
            part.n_queue_shares = 0;
            part.n_statuses = 0;
            part.n_pod_conditions = 0;
            part.n_group_events = 0;
        }
        assert (count < cap); // see cap
        parts[count++] = s_pack (&part);
        from = end;
    }
    free (start);
    free (order);
    free (sorted);
    *n_parts = count;
    return parts;
}

// ------------------------------------------------------------ proposer

struct _bas_commit_proposer_t {
    int64_t timeout_ms; // give up on answers after this
    char session[64];   // the commit out's session id
    size_t in_flight;   // its parts not answered yet
    size_t accepted;    // proposals accepted in the parts answered so far
    size_t rejected;    // and rejected
    uint64_t seq;       // the greatest seq a part was answered at
    bool moves;         // the commit out places or evicts
    int64_t sent_ms;    // when it went out
    uint64_t epoch;     // the cache epoch it (and wait_seq) belong to
    uint64_t wait_seq;  // the replica reaches this before the next session
};

bas_commit_proposer_t *
bas_commit_proposer_new (int64_t timeout_ms)
{
    bas_commit_proposer_t *self = bas_alloc (sizeof *self);
    self->timeout_ms = timeout_ms;
    return self;
}

void
bas_commit_proposer_destroy (bas_commit_proposer_t **self_p)
{
    if (self_p && *self_p) {
        free (*self_p);
        *self_p = NULL;
    }
}

bas_commit_gate_t
bas_commit_proposer_may_plan (bas_commit_proposer_t *self, uint64_t replica_seq, int64_t now_ms)
{
    if (self->in_flight) {
        if (now_ms - self->sent_ms < self->timeout_ms)
            return BAS_COMMIT_ANSWERS;
        bas_warn ("commit_timeout", "session=%s parts_unanswered=%zu", self->session,
                  self->in_flight);
        self->in_flight = 0;
        return BAS_COMMIT_TIMED_OUT;
    }
    if (self->wait_seq && replica_seq < self->wait_seq)
        return BAS_COMMIT_CATCHING_UP;
    return BAS_COMMIT_PLAN;
}

void
bas_commit_proposer_planning (bas_commit_proposer_t *self)
{
    self->wait_seq = 0;
}

void
bas_commit_proposer_sent (bas_commit_proposer_t *self, const char *session_id, size_t parts,
                          bool moves, uint64_t epoch, int64_t now_ms)
{
    snprintf (self->session, sizeof self->session, "%s", session_id ? session_id : "");
    if (parts == 0)
        return;
    self->in_flight = parts;
    self->accepted = self->rejected = 0;
    self->seq = 0;
    self->moves = moves;
    self->sent_ms = now_ms;
    self->epoch = epoch;
}

int
bas_commit_proposer_answer (bas_commit_proposer_t *self, const Basalt__V1__CommitResult *r,
                            uint64_t replica_epoch, bas_commit_answer_t *out)
{
    *out = (bas_commit_answer_t){0};
    if (!self->in_flight || !r->session_id || strcmp (r->session_id, self->session) != 0)
        return -1; // an answer to a commit we gave up on, or already summed
    self->in_flight--;
    //  The cache counts the accepted proposals and lists the rejected.
    out->accepted = r->has_accepted ? r->accepted : 0;
    for (size_t i = 0; i < r->n_results; i++) {
        if (r->results[i]->accepted)
            out->accepted++;
        else {
            out->rejected++;
            bas_debug ("proposal_rejected", "key=%s reason=\"%s\"", r->results[i]->key,
                       r->results[i]->reason ? r->results[i]->reason : "");
        }
    }
    self->accepted += out->accepted;
    self->rejected += out->rejected;
    if (r->has_seq && r->seq > self->seq)
        self->seq = r->seq;
    if (self->in_flight > 0)
        return 0; // the cache applies the parts in order: the last answer comes last
    out->last = true;
    out->total_accepted = self->accepted;
    out->total_rejected = self->rejected;
    self->wait_seq = self->seq;
    if (r->has_epoch && r->epoch != replica_epoch)
        self->wait_seq = 0;
    out->wait_seq = self->wait_seq;
    //  Go on soon only when something moved: accepted placements and
    //  evictions may let the next gang in, rejected proposals are retried on
    //  a fresher view. A commit of status writes and reasons only changes
    //  no decision: the next period comes soon enough (no busy loop while a
    //  gang stays pending, and none while 50,000 binds come back, each
    //  session writing the Running of the gangs bound since the last).
    out->go_on = (self->moves && self->accepted > 0) || self->rejected > 0;
    return 0;
}

void
bas_commit_proposer_reset (bas_commit_proposer_t *self, uint64_t epoch)
{
    //  A snapshot of a new epoch comes from a restarted cache: it never
    //  answers a commit sent to the old one, and its seq numbers start
    //  afresh, so a seq of the old epoch to wait for would stop sessions
    //  until the new cache happens to publish that many changes.
    if (epoch != self->epoch) {
        self->in_flight = 0;
        self->wait_seq = 0;
    }
}

bool
bas_commit_proposer_caught_up (bas_commit_proposer_t *self, uint64_t replica_seq)
{
    return self->wait_seq && replica_seq >= self->wait_seq;
}

size_t
bas_commit_proposer_in_flight (bas_commit_proposer_t *self)
{
    return self->in_flight;
}

uint64_t
bas_commit_proposer_wait_seq (bas_commit_proposer_t *self)
{
    return self->wait_seq;
}

// ------------------------------------------------------------ acceptor

//  A session's commit part, queued and then applied in slices.
typedef struct {
    bas_msg_t msg;                    // the Commit and its sender (owned)
    Basalt__V1__CommitResult *result; // the answer being built (owned)
    void *progress;                   // the model's, NULL before the first slice
    int accepted;                     // placements accepted (once ended)
    int64_t arrived_us;               // when it was taken
    int64_t arrived_ms;               // the same on the wall clock
    int64_t applied_us;               // when its first slice ran, 0 before
} s_job_t;

struct _bas_commit_acceptor_t {
    uint64_t epoch;           // this process run's, in every answer
    bas_commit_apply_t apply; // the model's side
    void *arg;                // its argument
    int64_t slice_us;         // applying per turn at most
    size_t step_items;        // items per step
    zlistx_t *jobs;           // s_job_t, oldest first
    s_job_t *answered;        // the last finished, until the next call
};

static void
s_job_free (bas_commit_acceptor_t *self, s_job_t **job_p)
{
    s_job_t *job = *job_p;
    if (!job)
        return;
    if (job->progress)
        self->apply.end (self->arg, &job->progress);
    if (job->result)
        protobuf_c_message_free_unpacked (&job->result->base, NULL);
    bas_msg_clear (&job->msg);
    free (job);
    *job_p = NULL;
}

bas_commit_acceptor_t *
bas_commit_acceptor_new (uint64_t epoch, const bas_commit_apply_t *apply, void *arg,
                         int64_t slice_us, size_t step_items)
{
    bas_commit_acceptor_t *self = bas_alloc (sizeof *self);
    self->epoch = epoch;
    self->apply = *apply;
    self->arg = arg;
    self->slice_us = slice_us;
    self->step_items = step_items;
    self->jobs = zlistx_new ();
    return self;
}

void
bas_commit_acceptor_destroy (bas_commit_acceptor_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    bas_commit_acceptor_t *self = *self_p;
    s_job_free (self, &self->answered);
    for (s_job_t *job = zlistx_first (self->jobs); job; job = zlistx_next (self->jobs))
        s_job_free (self, &job);
    zlistx_destroy (&self->jobs);
    free (self);
    *self_p = NULL;
}

void
bas_commit_acceptor_take (bas_commit_acceptor_t *self, bas_msg_t *msg, int64_t now_us,
                          int64_t wall_ms)
{
    s_job_free (self, &self->answered);
    const Basalt__V1__Commit *commit = (const Basalt__V1__Commit *)msg->body;
    s_job_t *job = bas_alloc (sizeof *job);
    job->result = bas_malloc (sizeof *job->result);
    basalt__v1__commit_result__init (job->result);
    job->result->session_id = commit->session_id ? bas_strdup (commit->session_id) : NULL;
    job->arrived_us = now_us;
    job->arrived_ms = wall_ms;
    job->msg = *msg;
    *msg = (bas_msg_t){0}; // the job owns the message now
    zlistx_add_end (self->jobs, job);
}

void
bas_commit_acceptor_refuse (const Basalt__V1__Commit *commit, uint64_t seq,
                            Basalt__V1__CommitResult *out)
{
    basalt__v1__commit_result__init (out);
    out->session_id = commit->session_id;
    out->has_seq = 1;
    out->seq = seq;
    out->has_accepted = 1;
    out->accepted = 0;
}

int
bas_commit_acceptor_turn (bas_commit_acceptor_t *self, bas_commit_done_t *done)
{
    s_job_free (self, &self->answered);
    s_job_t *job = zlistx_first (self->jobs);
    if (!job)
        return 0;
    Basalt__V1__Commit *commit = (Basalt__V1__Commit *)job->msg.body;
    if (!job->progress) {
        job->applied_us = self->apply.clock_us (self->arg);
        job->progress = self->apply.begin (self->arg, commit, job->result);
    }
    int64_t start = self->apply.clock_us (self->arg);
    bool finished = false;
    //  Whole gangs per step; the slice ends between two steps.
    while (!finished && self->apply.clock_us (self->arg) - start < self->slice_us)
        finished = self->apply.step (self->arg, job->progress, self->step_items);
    if (!finished) {
        self->apply.publish (self->arg);
        return 1;
    }
    job->accepted = self->apply.end (self->arg, &job->progress);
    //  Published before answered: the session's replica reaches the
    //  answer's seq, and with it the commit's effects, before it plans.
    uint64_t seq = self->apply.publish (self->arg);
    job->result->has_seq = 1;
    job->result->seq = seq;
    job->result->has_epoch = 1;
    job->result->epoch = self->epoch;
    zlistx_detach (self->jobs, zlistx_cursor (self->jobs));
    self->answered = job;
    *done = (bas_commit_done_t){
        .identity = job->msg.identity,
        .commit = commit,
        .result = job->result,
        .accepted = job->accepted,
        .arrived_us = job->arrived_us,
        .arrived_ms = job->arrived_ms,
        .applied_us = job->applied_us,
        .answered_us = self->apply.clock_us (self->arg),
    };
    return 2;
}

size_t
bas_commit_acceptor_queued (bas_commit_acceptor_t *self)
{
    return zlistx_size (self->jobs);
}
