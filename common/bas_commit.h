/*  bas_commit: the Commit conversation between session-svc (the proposer)
    and cache-svc (the acceptor), both ends, with no sockets inside.

    A session plans on its replica of the cache's model and proposes what
    it decided (placements, evictions, PodGroup statuses, pod conditions,
    events) as one Commit, cut into parts between whole gangs so that the
    cache reads each part in one short reactor turn. The cache queues the
    parts in arrival order, applies each in slices across reactor turns
    (whole gangs per slice), publishes the changes as Deltas and only then
    answers the part with the seq they were published at. The proposer
    sums the answers and plans again only once every part is answered and
    its replica has reached that seq, so that no session plans on a view
    without its own last proposals.

    Proposer end (bas_commit_proposer_*): the caller asks whether it may
    plan, packs the commit (bas_commit_pack, pure: it runs in the session's
    worker thread), sends the parts, says how many went out, and hands in
    each CommitResult and each snapshot's epoch. Time is passed in.
    Acceptor end (bas_commit_acceptor_*): the caller hands in each Commit
    and calls a turn per reactor turn; the model's side (checking and
    applying, publishing) comes in through bas_commit_apply_t, as
    bas_clone's publisher gets its model through bas_clone_source_t; the
    caller sends the answer the class makes. tests/test_commit.c drives
    both ends in process. Single-threaded; no globals.

    THE STATE TABLE

    Messages (proto/basalt.proto; a session's DEALER <-> the cache's ROUTER):
      Commit        (proposer -> acceptor) one part: session_id, base_seq,
                    placements of whole gangs; the first part also the
                    evictions, the last the statuses, pod conditions,
                    events and queue shares; session_ms in each
      CommitResult  (acceptor -> proposer) one per part: session_id,
                    accepted (a count), results (the rejected, with
                    reasons), seq (the Delta that holds the part's
                    effects), epoch (the acceptor's process run)

    Proposer, one per session-svc:

      state     | message / event           | does
      ----------+---------------------------+----------------------------------
      idle      | may I plan?               | yes
      idle      | commit packed, n parts    | -> answering(n) if n > 0 went out
                |   sent                    |    (parts the socket refused are
                |                           |    dropped: their gangs are
                |                           |    proposed again next session);
                |                           |    0 sent: stays idle
      answering | may I plan?, before the   | no
                |   timeout                 |
      answering | may I plan?, timeout      | -> idle, given up (logged); the
                |   passed (now - sent >=   |    caller resnapshots its replica
                |   timeout)                |    (the answers may be lost with
                |                           |    the deltas); no plan this time
      answering | CommitResult, this        | summed (accepted, rejected, the
                |   session, parts left     |    greatest seq: answers out of
                |                           |    order give the same sum)
      answering | CommitResult, this        | -> catching up to the greatest
                |   session, the last part  |    seq (none when the answer's
                |                           |    epoch is not the replica's);
                |                           |    go on soon when something
                |                           |    moved (accepted placements or
                |                           |    evictions) or was rejected
      any       | CommitResult, another     | ignored (late: an answer to a
                |   session (or none out)   |    commit given up on, or a
                |                           |    duplicate after the last part)
      answering,| snapshot of another epoch | -> idle: a restarted cache
      catching  |   than the commit's       |    answers nothing sent to the
        up      |   (a restarted cache)     |    old one, and its seqs start
                |                           |    afresh
      catching  | may I plan?, replica      | no; the replica's change that
        up      |   seq < the awaited seq   |    reaches it triggers a session
      catching  | may I plan?, replica      | yes; planning clears the seq
        up      |   seq >= the awaited seq  |    -> idle
      An answer counts as one part: CommitResult carries no part number, and
      the cache answers each part once, in order, on one connection.

    Acceptor, one per cache-svc:

      state     | message / event           | does
      ----------+---------------------------+----------------------------------
      (standby) | Commit                    | answered at once by the caller
                |                           |    (bas_commit_acceptor_refuse):
                |                           |    accepted 0, the present seq;
                |                           |    nothing applied or queued
      idle      | Commit                    | -> applying it next turn
      applying  | Commit                    | queued behind, in arrival order
      applying  | turn                      | whole gangs, then the other items,
                |                           |    for at most the slice's time;
                |                           |    the changes are published
                |                           |    (a Delta) before the turn ends
      applying  | turn, the last items      | changes published first, then
                |                           |    the answer: seq = the published
                |                           |    seq, epoch = the acceptor's;
                |                           |    -> the next commit, or idle
      A gang is never cut by a slice: a step applies whole gangs, and a slice
      ends between two steps.

    Timers (the caller's reactor runs them, with its values):
      commit timeout  SESS_COMMIT_TIMEOUT_MS (10 s): the proposer gives up
                      on answers (bas_commit_proposer_may_plan)
      part size       SESS_COMMIT_PART_PLACEMENTS (4096) placements a part
      slice           CACHE_COMMIT_SLICE_US of applying per reactor turn,
                      CACHE_COMMIT_STEP_ITEMS items per step; a zero-delay
                      one-shot timer while commits wait
*/
#ifndef BAS_COMMIT_H
#define BAS_COMMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <czmq.h>
#include "basalt.pb-c.h"
#include "bas_msg.h"

// ------------------------------------------------------------ the parts

//  `commit` packed as Commit messages of at most `part_placements`
//  placements each (0: one message), each gang whole in one part (a gang
//  larger than a part alone), gangs in the order they first appear. The
//  first part also carries the evictions (before the placements that use
//  the room they free), the last the PodGroup statuses, pod conditions,
//  events and queue shares (after the binds: a status write queued behind
//  them is replaced by the next session's, so a gang's Running is written
//  once); all parts share the session id. Returns a malloc'd array of
//  *n_parts frames (at least one), owned by the caller; `commit` is not
//  changed. Pure: safe to call from a worker thread.
//
//  Why: cache-svc reads a message in one reactor turn, and decoding the
//  commit of a 50,000-pod session took it ~25 ms.
zframe_t **bas_commit_pack (const Basalt__V1__Commit *commit, size_t part_placements,
                            size_t *n_parts);

// ------------------------------------------------------------ proposer

typedef struct _bas_commit_proposer_t bas_commit_proposer_t;

//  The answer to "may I plan?".
typedef enum {
    BAS_COMMIT_PLAN = 0,    // yes
    BAS_COMMIT_ANSWERS,     // no: parts unanswered, within the timeout
    BAS_COMMIT_TIMED_OUT,   // no: parts unanswered past it, given up now
                            // (the caller resnapshots its replica)
    BAS_COMMIT_CATCHING_UP, // no: the replica is behind the awaited seq
} bas_commit_gate_t;

//  What one CommitResult added (bas_commit_proposer_answer).
typedef struct {
    size_t accepted;       // proposals this answer accepted
    size_t rejected;       // and rejected
    bool last;             // it was the commit's last answer; then:
    size_t total_accepted; // the commit's, all parts
    size_t total_rejected; // the commit's, all parts
    uint64_t wait_seq;     // the seq to reach before planning (0: none)
    bool go_on;            // something moved or was rejected: plan soon
} bas_commit_answer_t;

//  A proposer that gives up on answers after timeout_ms.
bas_commit_proposer_t *bas_commit_proposer_new (int64_t timeout_ms);
void bas_commit_proposer_destroy (bas_commit_proposer_t **self_p);

//  May a session plan now on a replica at `replica_seq`? BAS_COMMIT_TIMED_OUT
//  is said once: the commit is given up at that call.
bas_commit_gate_t bas_commit_proposer_may_plan (bas_commit_proposer_t *self, uint64_t replica_seq,
                                                int64_t now_ms);

//  A session begins (after BAS_COMMIT_PLAN): the awaited seq is reached.
void bas_commit_proposer_planning (bas_commit_proposer_t *self);

//  The commit of `session_id` (copied) went out in `parts` parts (0: none
//  did, nothing changes) to a cache of `epoch`; `moves`: it places or
//  evicts.
void bas_commit_proposer_sent (bas_commit_proposer_t *self, const char *session_id, size_t parts,
                               bool moves, uint64_t epoch, int64_t now_ms);

//  A CommitResult (borrowed), the replica being of `replica_epoch`.
//  Returns 0 and fills *out when it answers the commit out, -1 when it is
//  not ours (late, duplicate, another session's): nothing changes.
int bas_commit_proposer_answer (bas_commit_proposer_t *self, const Basalt__V1__CommitResult *r,
                                uint64_t replica_epoch, bas_commit_answer_t *out);

//  The replica loaded a snapshot of `epoch`: of another epoch than the
//  commit's, the commit and the awaited seq are forgotten.
void bas_commit_proposer_reset (bas_commit_proposer_t *self, uint64_t epoch);

//  True when a seq is awaited and `replica_seq` reached it.
bool bas_commit_proposer_caught_up (bas_commit_proposer_t *self, uint64_t replica_seq);

//  Parts sent and not answered yet.
size_t bas_commit_proposer_in_flight (bas_commit_proposer_t *self);
//  The seq to reach before planning (0: none).
uint64_t bas_commit_proposer_wait_seq (bas_commit_proposer_t *self);

// ------------------------------------------------------------ acceptor

typedef struct _bas_commit_acceptor_t bas_commit_acceptor_t;

//  The model's side of applying a commit: `arg` is bas_commit_acceptor_new's.
typedef struct {
    //  Begin applying `commit` (borrowed until `end`; the model may free
    //  its placements as their gangs are applied, nulling their slots),
    //  filling `result` (borrowed). Returns the progress.
    void *(*begin) (void *arg, Basalt__V1__Commit *commit, Basalt__V1__CommitResult *result);
    //  Apply about `budget` more items, whole gangs; true when all are.
    bool (*step) (void *arg, void *progress, size_t budget);
    //  Free the progress (*progress_p, nulled); returns the placements
    //  accepted.
    int (*end) (void *arg, void **progress_p);
    //  Publish the model's pending changes as a Delta now; returns the
    //  seq of the last Delta published.
    uint64_t (*publish) (void *arg);
    //  A monotonic clock in µs: ends a slice.
    int64_t (*clock_us) (void *arg);
} bas_commit_apply_t;

//  A finished commit's answer (bas_commit_acceptor_turn): all borrowed,
//  valid until the next bas_commit_acceptor_* call.
typedef struct {
    zframe_t *identity;                     // whom to answer
    const Basalt__V1__Commit *commit;       // what it answers (applied
                                            // placements may be NULL)
    const Basalt__V1__CommitResult *result; // the answer to send
    int accepted;                           // placements accepted
    int64_t arrived_us;                     // when it was taken (monotonic)
    int64_t arrived_ms;                     // the same on the wall clock
    int64_t applied_us;                     // its first slice
    int64_t answered_us;                    // its answer
} bas_commit_done_t;

//  An acceptor of the process run `epoch`, applying through `apply`
//  (copied) with `arg`, for at most slice_us per turn in steps of
//  step_items.
bas_commit_acceptor_t *bas_commit_acceptor_new (uint64_t epoch, const bas_commit_apply_t *apply,
                                                void *arg, int64_t slice_us, size_t step_items);
void bas_commit_acceptor_destroy (bas_commit_acceptor_t **self_p);

//  A Commit and its sender (*msg taken: cleared) at `now_us` (monotonic)
//  and `wall_ms`: queued at the end of the line.
void bas_commit_acceptor_take (bas_commit_acceptor_t *self, bas_msg_t *msg, int64_t now_us,
                               int64_t wall_ms);

//  The answer of an acceptor that does not lead: `out` accepts nothing
//  and says `seq`; it borrows commit's session id.
void bas_commit_acceptor_refuse (const Basalt__V1__Commit *commit, uint64_t seq,
                                 Basalt__V1__CommitResult *out);

//  One turn: a slice of the oldest commit. Returns 0 when none waits, 1
//  after a slice with more left (its changes published), 2 when the
//  commit is finished: its changes published, *done holds the answer the
//  caller sends now.
int bas_commit_acceptor_turn (bas_commit_acceptor_t *self, bas_commit_done_t *done);

//  Commits queued, the one being applied included.
size_t bas_commit_acceptor_queued (bas_commit_acceptor_t *self);

#endif
