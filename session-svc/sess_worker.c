/*  sess_worker: the session worker, a zactor that plans off the reactor.

    A session runs in this actor so that session-svc's reactor keeps
    answering (deltas, heartbeats, commit answers, HTTP) while it plans:
    the replica lends it the store for the session and buffers the deltas
    meanwhile (bas_replica_hold), and the configuration in force is not
    replaced until the session is back. The actor owns nothing else and
    talks only through its pipe: a pointer to the session's job, and back
    when done; between sessions it keeps the model's storage
    (sess_keep_t), which it alone uses. It plans (sess_run), drops the pod conditions and PodGroup
    Events this process already proposed in the same words, and packs what
    is left in parts (bas_commit_pack), so that the reactor only sends it.
*/
#include "sess_worker.h"
#include "bas_commit.h"
#include "bas_usage.h"
#include "bas_util.h"
#include "sess_defaults.h"
#include "sess_metrics.h"

#include <string.h>

//  The job, and the store and configuration it lends, change hands through
//  the actor's pipe: libzmq's queue orders the two threads, but Debian's
//  libzmq is not built for ThreadSanitizer, so under TSan the hand-over
//  says so itself (release by the sender, acquire by the receiver).
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define S_HANDOFF_RELEASE(p) __tsan_release (p)
#define S_HANDOFF_ACQUIRE(p) __tsan_acquire (p)
#else
#define S_HANDOFF_RELEASE(p) ((void)(p))
#define S_HANDOFF_ACQUIRE(p) ((void)(p))
#endif

//  Drop pod conditions this process already proposed in the same words:
//  the API has them, and re-sending them every period would be a write per
//  pending pod per session. Forget pods that are gone or placed.
static void
s_filter_conditions (zhashx_t *conditions, bas_store_t *store, Basalt__V1__Commit *commit)
{
    zlistx_t *gone = zlistx_new ();
    zlistx_set_destructor (gone, (zlistx_destructor_fn *)zstr_free);
    for (void *v = zhashx_first (conditions); v; v = zhashx_next (conditions)) {
        const char *uid = zhashx_cursor (conditions);
        const Basalt__V1__Pod *pod = bas_store_pod (store, uid);
        if (!pod || (pod->node_name && *pod->node_name) ||
            (pod->assumed_node && *pod->assumed_node))
            zlistx_add_end (gone, strdup (uid));
    }
    for (char *uid = zlistx_first (gone); uid; uid = zlistx_next (gone))
        zhashx_delete (conditions, uid);
    zlistx_destroy (&gone);
    size_t kept = 0;
    for (size_t i = 0; i < commit->n_pod_conditions; i++) {
        Basalt__V1__PodCondition *c = commit->pod_conditions[i];
        char key[1024];
        snprintf (key, sizeof key, "%s|%s|%s|%s", c->type ? c->type : "",
                  c->status ? c->status : "", c->reason ? c->reason : "",
                  c->message ? c->message : "");
        const char *last = c->pod_uid ? zhashx_lookup (conditions, c->pod_uid) : NULL;
        if (!c->pod_uid || (last && strcmp (last, key) == 0)) {
            basalt__v1__pod_condition__free_unpacked (c, NULL);
            continue;
        }
        zhashx_update (conditions, c->pod_uid, strdup (key));
        commit->pod_conditions[kept++] = c;
    }
    commit->n_pod_conditions = kept;
}

//  Drop PodGroup Events this process already had sent in the same words;
//  forget groups that are gone or no longer Pending (refused again later,
//  they are said again).
static void
s_filter_group_events (zhashx_t *said, bas_store_t *store, Basalt__V1__Commit *commit)
{
    zlistx_t *gone = zlistx_new ();
    zlistx_set_destructor (gone, (zlistx_destructor_fn *)zstr_free);
    //  Keyed by "uid|type": a waiting group may have one Event of each type
    //  (Normal: enqueue refused; Warning: its gang unschedulable). Forgotten
    //  once the group is gone or no longer waits.
    for (void *v = zhashx_first (said); v; v = zhashx_next (said)) {
        const char *key = zhashx_cursor (said);
        char uid[256];
        snprintf (uid, sizeof uid, "%.*s", (int)strcspn (key, "|"), key);
        const Basalt__V1__PodGroup *pg = bas_store_pod_group (store, uid);
        const char *phase = pg && pg->status ? pg->status->phase : NULL;
        if (!pg ||
            (phase && *phase && strcmp (phase, "Pending") != 0 && strcmp (phase, "Inqueue") != 0))
            zlistx_add_end (gone, strdup (key));
    }
    for (char *uid = zlistx_first (gone); uid; uid = zlistx_next (gone))
        zhashx_delete (said, uid);
    zlistx_destroy (&gone);
    size_t kept = 0;
    for (size_t i = 0; i < commit->n_group_events; i++) {
        Basalt__V1__PodGroupEvent *e = commit->group_events[i];
        char key[1024];
        snprintf (key, sizeof key, "%s|%s|%s", e->type ? e->type : "", e->reason ? e->reason : "",
                  e->message ? e->message : "");
        char said_key[300];
        snprintf (said_key, sizeof said_key, "%s|%s", e->uid ? e->uid : "", e->type ? e->type : "");
        const char *last = e->uid ? zhashx_lookup (said, said_key) : NULL;
        if (!e->uid || (last && strcmp (last, key) == 0)) {
            basalt__v1__pod_group_event__free_unpacked (e, NULL);
            continue;
        }
        zhashx_update (said, said_key, strdup (key));
        commit->group_events[kept++] = e;
    }
    commit->n_group_events = kept;
}

//  One session in the worker: plan, drop the conditions already written,
//  pack what is left, so that the reactor only has to send it.
static void
s_work (sess_job_t *job, sess_keep_t *keep)
{
    if (job->want_usage) {
        int64_t start = bas_mono_us ();
        bas_usage_t *usage = bas_usage_new (job->store);
        job->gauges = sess_metrics_gauges_new (usage);
        bas_usage_destroy (&usage);
        job->usage_us = bas_mono_us () - start;
    }
    if (!job->plan)
        return;
    job->params.keep = keep;
    Basalt__V1__Commit *commit = sess_run (job->store, job->conf, &job->params);
    job->params.keep = NULL;
    if (!commit)
        return;
    s_filter_conditions (job->conditions, job->store, commit);
    s_filter_group_events (job->group_events, job->store, commit);
    job->placements = commit->n_placements;
    job->statuses = commit->n_statuses;
    job->pod_conditions = commit->n_pod_conditions;
    job->evictions = commit->n_evictions;
    if (job->placements || job->statuses || job->pod_conditions || job->evictions ||
        commit->n_group_events) {
        free (commit->session_id);
        commit->session_id = strdup (job->sid);
        commit->has_base_seq = 1;
        commit->base_seq = job->base_seq;
        commit->has_session_ms = 1;
        commit->session_ms = (uint32_t)(bas_mono_ms () - job->start_ms);
        job->parts = bas_commit_pack (commit, SESS_COMMIT_PART_PLACEMENTS, &job->n_parts);
    }
    protobuf_c_message_free_unpacked (&commit->base, NULL);
}

//  The worker: runs each session it is handed and hands it back. It owns
//  the storage the sessions reuse (sess_keep_t), so that a session at
//  scale neither allocates nor faults in its model afresh.
static void
s_worker (zsock_t *pipe, void *args)
{
    (void)args;
    sess_keep_t *keep = sess_keep_new ();
    zsock_signal (pipe, 0);
    while (true) {
        zmsg_t *msg = zmsg_recv (pipe);
        if (!msg)
            break;
        char *cmd = zmsg_popstr (msg);
        zframe_t *ptr = zmsg_pop (msg);
        bool run = cmd && streq (cmd, "RUN") && ptr && zframe_size (ptr) == sizeof (void *);
        bool term = !cmd || streq (cmd, "$TERM");
        if (run) {
            sess_job_t *job;
            memcpy (&job, zframe_data (ptr), sizeof job);
            S_HANDOFF_ACQUIRE (job);
            s_work (job, keep);
            S_HANDOFF_RELEASE (job);
            zsock_send (pipe, "sp", "DONE", job);
        }
        zframe_destroy (&ptr);
        zstr_free (&cmd);
        zmsg_destroy (&msg);
        if (term)
            break;
    }
    sess_keep_destroy (&keep);
}

zactor_t *
sess_worker_new (void)
{
    return zactor_new (s_worker, NULL);
}

void
sess_worker_send (zactor_t *worker, sess_job_t *job)
{
    S_HANDOFF_RELEASE (job);
    zsock_send (zactor_sock (worker), "sp", "RUN", job);
}

sess_job_t *
sess_worker_recv (zsock_t *sock)
{
    char *cmd = NULL;
    void *ptr = NULL;
    if (zsock_recv (sock, "sp", &cmd, &ptr) != 0)
        return NULL;
    zstr_free (&cmd);
    if (ptr)
        S_HANDOFF_ACQUIRE (ptr);
    return ptr;
}

void
sess_job_reclaim (sess_job_t *job)
{
    S_HANDOFF_ACQUIRE (job);
}

void
sess_job_parts_free (sess_job_t *job)
{
    for (size_t i = 0; i < job->n_parts; i++)
        zframe_destroy (&job->parts[i]);
    free (job->parts);
    job->parts = NULL;
    job->n_parts = 0;
}

void
sess_job_destroy (sess_job_t **job_p)
{
    if (!job_p || !*job_p)
        return;
    sess_job_parts_free (*job_p);
    bas_metrics_destroy (&(*job_p)->gauges);
    free (*job_p);
    *job_p = NULL;
}

bool
sess_new_work (const Basalt__V1__Object *obj)
{
    if (obj->kind_case == BASALT__V1__OBJECT__KIND_POD_GROUP) {
        const Basalt__V1__PodGroupStatus *st = obj->pod_group->status;
        return !st || !st->phase || !*st->phase || strcmp (st->phase, "Pending") == 0;
    }
    if (obj->kind_case != BASALT__V1__OBJECT__KIND_POD)
        return false;
    const Basalt__V1__Pod *pod = obj->pod;
    return !(pod->node_name && *pod->node_name) && !(pod->assumed_node && *pod->assumed_node) &&
           !pod->deleting;
}
