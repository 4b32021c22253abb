/*  cache_sessions: cache-svc's session ROUTER (--snapshot-endpoint): the
    Clone conversation's snapshots (bas_clone publisher) and the Commit
    conversation's acceptor end (bas_commit), with the model's side of a
    commit and the queue shares sessions report.

    Design note: neither a snapshot nor a commit is served in one turn.
    Each is sliced on a zero-delay timer (at most CACHE_COMMIT_SLICE_US a
    turn) so that the reactor keeps publishing deltas, reading binders and
    answering HTTP meanwhile; pending changes are published before each
    slice, so no snapshot part or commit answer is ahead of the delta
    stream. A commit's work goes to the binders after each slice
    (cache_binders_dispatch). A cache that does not lead refuses commits.
*/
#include "cache_sessions.h"
#include "bas_resource.h"
#include "bas_util.h"
#include "cache_binders.h"
#include "cache_defaults.h"

#include <stdio.h>
#include <stdlib.h>

static void s_snapshot_arm (cache_t *self);

//  One slice of the snapshots being sent (bas_clone_publisher_next): parts
//  of CACHE_SNAPSHOT_PART objects, a reader after the other, for at most
//  CACHE_COMMIT_SLICE_US. Pending changes are published first, so that no
//  part is ahead of the delta stream the reader applies after the last.
static int
s_on_snapshot_timer (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    cache_t *self = arg;
    self->snapshot_timer = -1;
    cache_svc_flush (self);
    int64_t start = bas_mono_us ();
    const char *requester;
    zmsg_t *out;
    while (bas_mono_us () - start < CACHE_COMMIT_SLICE_US &&
           (out = bas_clone_publisher_next (self->clone, &self->router_stream, &requester))) {
        int rc = bas_svc_send_msg (self->svc, self->router, requester,
                                   &basalt__v1__snapshot__descriptor, &out);
        if (bas_clone_publisher_sent (self->clone, rc, bas_mono_us ()) < 0)
            bas_metrics_add (self->metrics, "basalt_snapshots_dropped_total", NULL, 1);
    }
    s_snapshot_arm (self);
    return 0;
}

static void
s_snapshot_arm (cache_t *self)
{
    if (self->snapshot_timer == -1 && bas_clone_publisher_serving (self->clone) > 0)
        self->snapshot_timer =
            bas_svc_timer (self->svc, 0, 1, s_on_snapshot_timer, self, "snapshot");
}

//  A reader's request: its snapshot starts now (the seq is exact after the
//  flush) and goes out in parts on the following turns.
static int
s_handle_snapshot_request (void *arg, bas_msg_t *msg)
{
    cache_t *self = arg;
    cache_svc_flush (self);
    bas_clone_publisher_request (self->clone, msg->identity,
                                 (const Basalt__V1__SnapshotRequest *)msg->body, bas_mono_us ());
    s_snapshot_arm (self);
    return 0;
}

static void s_commit_arm (cache_t *self);

//  A commit answered (bas_commit_acceptor_turn published its changes
//  first): the answer goes out, the counts and the commit log are kept.
static void
s_commit_finish (cache_t *self, const bas_commit_done_t *done)
{
    const Basalt__V1__Commit *commit = done->commit;
    bas_svc_send (self->svc, self->router, &self->router_stream, done->identity, "session",
                  &done->result->base);
    bas_metrics_add (self->metrics, "basalt_commit_placements_total", "result=\"accepted\"",
                     done->accepted);
    bas_metrics_add (self->metrics, "basalt_commit_rejections_total", NULL,
                     (double)(commit->n_placements - (size_t)done->accepted));
    bas_debug ("commit", "session=%s placements=%zu accepted=%d statuses=%zu results=%zu ms=%.1f",
               commit->session_id ? commit->session_id : "-", commit->n_placements, done->accepted,
               commit->n_statuses, done->result->n_results,
               (double)(done->answered_us - done->arrived_us) / 1000.0);
    cache_commit_rec_t rec = {
        .at_ms = done->arrived_ms,
        .wait_us = done->applied_us - done->arrived_us,
        .apply_us = done->answered_us - done->applied_us,
        .placements = (uint32_t)commit->n_placements,
        .accepted = done->accepted > 0 ? (uint32_t)done->accepted : 0,
        .statuses = (uint32_t)commit->n_statuses,
        .session_us = commit->has_session_ms ? (int64_t)commit->session_ms * 1000 : -1,
    };
    snprintf (rec.session, sizeof rec.session, "%s", commit->session_id ? commit->session_id : "");
    cache_commit_log_add (self->commit_log, &rec);
}

//  One slice of the oldest commit: whole gangs for at most CACHE_COMMIT_SLICE_US,
//  then the work it made goes to the binders at once (binds start while the
//  rest of the commit waits for the next turn) and the deltas are published.
static int
s_on_commit_timer (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    cache_t *self = arg;
    self->commit_timer = -1;
    bas_commit_done_t done;
    int rc = bas_commit_acceptor_turn (self->commits, &done);
    if (rc == 0)
        return 0;
    if (rc == 2)
        s_commit_finish (self, &done);
    cache_binders_dispatch (self);
    s_commit_arm (self);
    return 0;
}

static void
s_commit_arm (cache_t *self)
{
    if (self->commit_timer == -1 && bas_commit_acceptor_queued (self->commits) > 0)
        self->commit_timer = bas_svc_timer (self->svc, 0, 1, s_on_commit_timer, self, "commit");
}

// The model's side of the Commit conversation (bas_commit_apply_t).
static void *
s_apply_begin (void *arg, Basalt__V1__Commit *commit, Basalt__V1__CommitResult *result)
{
    cache_t *self = arg;
    cache_commit_t *cc = cache_model_commit_begin (self->model, commit, result);
    cache_model_commit_consume (cc, commit);
    return cc;
}

static bool
s_apply_step (void *arg, void *progress, size_t budget)
{
    cache_t *self = arg;
    return cache_model_commit_step (self->model, progress, budget, cache_binders_on_work, self);
}

static int
s_apply_end (void *arg, void **progress_p)
{
    (void)arg;
    cache_commit_t *cc = *progress_p;
    *progress_p = NULL;
    return cache_model_commit_end (&cc);
}

static uint64_t
s_apply_publish (void *arg)
{
    cache_t *self = arg;
    cache_svc_flush (self);
    return cache_model_seq (self->model);
}

static int64_t
s_apply_clock (void *arg)
{
    (void)arg;
    return bas_mono_us ();
}

const bas_commit_apply_t cache_sessions_commit_apply = {s_apply_begin, s_apply_step, s_apply_end,
                                                        s_apply_publish, s_apply_clock};

//  The shares table's destructor (a bas_res_t each).
void
cache_sessions_share_free (void **item_p)
{
    free (*item_p);
    *item_p = NULL;
}

//  The queues' deserved shares a session computed: kept for /debug/state
//  (the spec's deserved, when a Queue sets one, is shown instead).
static void
s_take_shares (cache_t *self, const Basalt__V1__Commit *commit)
{
    for (size_t i = 0; i < commit->n_queue_shares; i++) {
        const Basalt__V1__QueueShare *sh = commit->queue_shares[i];
        bas_res_t *r = bas_alloc (sizeof *r);
        if (!sh->queue || bas_res_from_proto (r, sh->deserved, NULL, 0) != 0) {
            free (r);
            continue;
        }
        zhashx_update (self->shares, sh->queue, r);
    }
}

//  A commit is taken over (the message is kept until answered) and applied
//  in slices on the following turns, in the order commits arrived.
static int
s_handle_commit (void *arg, bas_msg_t *msg)
{
    cache_t *self = arg;
    const Basalt__V1__Commit *commit = (const Basalt__V1__Commit *)msg->body;
    if (!cache_svc_leading (self)) {
        //  Nothing is assumed: the answer accepts nothing (a standby's
        //  sessions plan nothing, so this is a session that has not yet
        //  heard; a leader past its deadline is stopping).
        Basalt__V1__CommitResult result;
        bas_commit_acceptor_refuse (commit, cache_model_seq (self->model), &result);
        bas_svc_send (self->svc, self->router, &self->router_stream, msg->identity, "session",
                      &result.base);
        bas_warn ("commit_refused", "session=%s placements=%zu reason=\"not the leader\"",
                  commit->session_id ? commit->session_id : "-", commit->n_placements);
        return 0;
    }
    s_take_shares (self, commit);
    bas_commit_acceptor_take (self->commits, msg, bas_mono_us (), (int64_t)zclock_time ());
    s_commit_arm (self);
    return 0;
}

const bas_handler_t cache_sessions_handlers[] = {
    {&basalt__v1__snapshot_request__descriptor, s_handle_snapshot_request},
    {&basalt__v1__commit__descriptor, s_handle_commit},
    {NULL, NULL},
};
