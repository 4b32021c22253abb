/*  cache_commit: a session's Commit applied to the model, and the binder
    work it makes (the cache_model_commit_* and cache_model_*_result
    functions of cache_model.h).

    Checking: each placement against the model as it is now (the pod still
    pending and unchanged, the node there, ready, not cordoned unless the
    pod tolerates that, in sync and with room, counting what the same gang
    placed before it), all of a gang's placements or none; each eviction,
    status and condition against the object it names. Building: one Work
    per accepted item, through the work kinds' constructor
    (common/bas_work.h). Applying a result: the table at the end
    (s_results), one row per member of Work's oneof, undoes what the model
    assumed when the write failed.
*/
#include "cache_model.h"
#include "cache_model_private.h"

#include "bas_k8s.h"
#include "bas_log.h"
#include "bas_msg.h"
#include "bas_util.h"
#include "bas_work.h"

#include <string.h>

static Basalt__V1__ItemResult *
s_item (const char *key, bool accepted, const char *reason)
{
    Basalt__V1__ItemResult *r = bas_malloc (sizeof *r);
    basalt__v1__item_result__init (r);
    r->key = bas_strdup (key ? key : "");
    r->has_accepted = 1;
    r->accepted = accepted;
    r->reason = reason ? bas_strdup (reason) : NULL;
    return r;
}

//  Why a placement cannot be accepted now, or NULL if it can. `extra` is
//  what this gang already placed on the node (tentatively, not yet charged).
static const char *
s_check_placement (cache_model_t *self, const Basalt__V1__Placement *pl, const bas_res_t *extra,
                   bas_res_t *req_out, char *buf, size_t len)
{
    const Basalt__V1__Pod *pod = pl->pod_uid ? bas_store_pod (self->store, pl->pod_uid) : NULL;
    if (!pod)
        return "pod no longer exists";
    if (pod->deleting)
        return "pod is being deleted";
    if ((pod->node_name && *pod->node_name) || (pod->assumed_node && *pod->assumed_node))
        return "pod is already placed";
    if (cache_model_terminal (pod->phase))
        return "pod has finished";
    if (pl->pod_resource_version && pod->resource_version &&
        strcmp (pl->pod_resource_version, pod->resource_version) != 0)
        return "pod changed since the session's snapshot";
    const Basalt__V1__Node *node = pl->node ? bas_store_node (self->store, pl->node) : NULL;
    if (!node)
        return "node no longer exists";
    if (node->has_ready && !node->ready)
        return "node is not ready";
    //  A cordoned node takes the pods that tolerate its taint (DaemonSet
    //  pods do), as the session's NodeUnschedulable filter let through.
    if (node->unschedulable &&
        !bas_k8s_pod_tolerates (pod, BAS_TAINT_UNSCHEDULABLE, "", "NoSchedule"))
        return "node is unschedulable";
    if (cache_model_node_out_of_sync (self, pl->node))
        return "node is out of sync";
    bas_res_t idle, req;
    bas_res_zero (&idle);
    bas_res_zero (&req);
    bas_res_from_proto (&idle, node->allocatable, NULL, 0);
    bas_res_from_proto (&req, pod->requests, NULL, 0);
    cache_model_drop_ignored (self, &idle);
    cache_model_drop_ignored (self, &req);
    req.pods = idle.pods > 0 ? 1 : 0;
    const bas_res_t *used = cache_model_node_used (self, pl->node);
    if (used) {
        bas_res_t u = *used;
        if (idle.pods == 0)
            u.pods = 0;
        bas_res_sub (&idle, &u);
    }
    bas_res_sub (&idle, extra);
    if (!bas_res_fits (&req, &idle)) {
        const char *names[4];
        int n = bas_res_insufficient (&req, &idle, names, 4);
        snprintf (buf, len, "node %s has insufficient %s", pl->node,
                  n > 0 ? names[0] : "resources");
        return buf;
    }
    *req_out = req;
    return NULL;
}

static void
s_add_result (Basalt__V1__CommitResult *result, size_t *cap, Basalt__V1__ItemResult *item)
{
    if (result->n_results == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        result->results = bas_realloc (result->results, *cap * sizeof *result->results);
    }
    result->results[result->n_results++] = item;
}

//  Accepted proposals are counted, not listed.
static void
s_accept (Basalt__V1__CommitResult *result)
{
    result->has_accepted = 1;
    result->accepted++;
}

//  A commit being applied in slices (cache_model_commit_begin/step/end).
struct _cache_commit_t {
    const Basalt__V1__Commit *commit; // borrowed: the caller keeps it until _end
    Basalt__V1__CommitResult *result; // borrowed: filled here
    size_t cap;                       // room in result->results
    size_t *order;                    // placement indices grouped by job (bas_msg_commit_gangs)
    size_t *start;                    // each job's range in order
    size_t jobs;                      // number of jobs
    size_t next_job, next_eviction, next_status, next_condition, next_event; // progress
    int accepted;              // placements accepted so far
    Basalt__V1__Commit *owned; // the same commit when its placements are freed
                               // as their gangs are applied (_consume), or NULL
};

//  One gang, all of its placements or none (the g-th job of the commit).
static void
s_commit_gang (cache_model_t *self, cache_commit_t *cc, size_t g, cache_work_fn *fn, void *arg)
{
    const Basalt__V1__Commit *commit = cc->commit;
    Basalt__V1__CommitResult *result = cc->result;
    const Basalt__V1__Placement *first = commit->placements[cc->order[cc->start[g]]];
    const char *reason = NULL;
    char buf[256];
    zhashx_t *tentative = zhashx_new (); // node -> bas_res_t for this job
    zhashx_set_destructor (tentative, (zhashx_destructor_fn *)zstr_free);
    zhashx_t *seen = zhashx_new ();   // pod uids of this job so far
    zhashx_t *claims = zhashx_new (); // claim uid -> its decision, PV name -> "pv": this job's
    zhashx_set_destructor (claims, (zhashx_destructor_fn *)zstr_free);
    bool gated = false; // some pod's claims are written before the binds
    for (size_t k = cc->start[g]; k < cc->start[g + 1] && !reason; k++) {
        const Basalt__V1__Placement *pl = commit->placements[cc->order[k]];
        if (pl->pipelined)
            continue;
        //  A pod proposed twice would be bound twice: refuse the gang.
        if (pl->pod_uid && zhashx_insert (seen, pl->pod_uid, (void *)"1") != 0) {
            reason = "pod proposed twice in one gang";
            break;
        }
        //  Gangs accepted earlier in this commit are already charged to
        //  their nodes (cache_model_charge below): only this gang's own earlier
        //  placements are tentative here, or they would count twice.
        bas_res_t sum, req;
        bas_res_zero (&sum);
        const char *node = pl->node ? pl->node : "";
        bas_res_t *t = zhashx_lookup (tentative, node);
        if (t)
            bas_res_add (&sum, t);
        reason = s_check_placement (self, pl, &sum, &req, buf, sizeof buf);
        if (!reason && pl->n_claims) {
            reason = cache_claims_check (self, pl, claims, buf, sizeof buf);
            gated = true;
        }
        if (!reason) {
            if (!t) {
                t = bas_alloc (sizeof *t);
                zhashx_insert (tentative, node, t);
            }
            bas_res_add (t, &req);
        }
    }
    //  A gang whose claims are written first: its binds wait for them
    //  (cache_claims.c).
    cache_gate_t *gate = !reason && gated ? cache_claims_gate_new (self, first->job_uid) : NULL;
    for (size_t k = cc->start[g]; k < cc->start[g + 1]; k++) {
        const Basalt__V1__Placement *pl = commit->placements[cc->order[k]];
        if (pl->pipelined) {
            //  A reservation on resources being freed: nothing to bind
            //  and nothing to charge; the next session decides again.
            //  The pod is nominated to the node (status.nominatedNodeName),
            //  written only when the nomination changes.
            s_accept (result);
            const Basalt__V1__Pod *pod =
                pl->pod_uid ? bas_store_pod (self->store, pl->pod_uid) : NULL;
            const char *was = pod ? zhashx_lookup (self->nominated, pod->uid) : NULL;
            if (pod && pl->node && (!was || strcmp (was, pl->node) != 0)) {
                zhashx_update (self->nominated, pod->uid, bas_strdup (pl->node));
                Basalt__V1__PodConditionWork *cw = bas_alloc (sizeof *cw);
                basalt__v1__pod_condition_work__init (cw);
                cw->namespace_ = bas_strdup (pod->namespace_ ? pod->namespace_ : "default");
                cw->name = bas_strdup (pod->name ? pod->name : "");
                cw->pod_uid = bas_strdup (pod->uid);
                cw->nominated_node_name = bas_strdup (pl->node);
                Basalt__V1__Work *w =
                    bas_work_new (BASALT__V1__WORK__ITEM_POD_CONDITION, &cw->base);
                fn (arg, &w);
            }
            continue;
        }
        if (reason) {
            self->stats.placements_rejected++;
            s_add_result (result, &cc->cap, s_item (pl->pod_uid, false, reason));
            continue;
        }
        bas_store_pod_set_assumed (self->store, pl->pod_uid, pl->node);
        const Basalt__V1__Pod *pod = bas_store_pod (self->store, pl->pod_uid);
        cache_model_charge (self, pod);
        cache_model_mark (self, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, pl->pod_uid);
        self->stats.placements_accepted++;
        cc->accepted++;
        s_accept (result);
        Basalt__V1__BindWork *b = bas_alloc (sizeof *b);
        basalt__v1__bind_work__init (b);
        b->pod_uid = bas_strdup (pod->uid);
        b->namespace_ = bas_strdup (pod->namespace_ ? pod->namespace_ : "default");
        b->name = bas_strdup (pod->name ? pod->name : "");
        b->node = bas_strdup (pl->node);
        Basalt__V1__Work *w = bas_work_new (BASALT__V1__WORK__ITEM_BIND, &b->base);
        if (gate) {
            cache_claims_add (self, gate, pl, fn, arg);
            cache_claims_hold (gate, &w);
        } else
            fn (arg, &w);
    }
    //  Claims bound already (or nothing left to write) open the gate now.
    if (gate) {
        cache_claims_opened (self, gate);
        cache_model_take_ready (self, fn, arg);
    }
    if (reason)
        bas_debug ("gang_rejected", "job=%s reason=\"%s\"", first->job_uid ? first->job_uid : "-",
                   reason);
    zhashx_destroy (&tentative);
    zhashx_destroy (&seen);
    zhashx_destroy (&claims);
}

static void
s_commit_eviction (cache_model_t *self, cache_commit_t *cc, size_t i, cache_work_fn *fn, void *arg)
{
    Basalt__V1__CommitResult *result = cc->result;
    const Basalt__V1__Eviction *ev = cc->commit->evictions[i];
    const Basalt__V1__Pod *pod = ev->pod_uid ? bas_store_pod (self->store, ev->pod_uid) : NULL;
    const char *why = NULL;
    if (!pod)
        why = "pod no longer exists";
    else if (zhashx_lookup (self->evicting, ev->pod_uid))
        why = "pod is already being evicted";
    else if (pod->deleting)
        why = "pod is already being deleted";
    else if (ev->pod_resource_version && pod->resource_version &&
             strcmp (ev->pod_resource_version, pod->resource_version) != 0)
        why = "pod changed since the session's snapshot";
    if (why) {
        self->stats.evictions_rejected++;
        s_add_result (result, &cc->cap, s_item (ev->pod_uid, false, why));
        return;
    }
    zhashx_insert (self->evicting, ev->pod_uid, (void *)"1");
    bas_store_pod_set_deleting (self->store, ev->pod_uid, true);
    cache_model_mark (self, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, ev->pod_uid);
    self->stats.evictions_accepted++;
    s_accept (result);
    bas_debug ("evicting", "pod=%s/%s node=%s reason=\"%s\"", pod->namespace_, pod->name,
               pod->node_name ? pod->node_name : "-", ev->reason ? ev->reason : "");
    Basalt__V1__EvictWork *e = bas_alloc (sizeof *e);
    basalt__v1__evict_work__init (e);
    e->pod_uid = bas_strdup (pod->uid);
    e->namespace_ = bas_strdup (pod->namespace_ ? pod->namespace_ : "default");
    e->name = bas_strdup (pod->name ? pod->name : "");
    e->reason = ev->reason ? bas_strdup (ev->reason) : NULL;
    Basalt__V1__Work *w = bas_work_new (BASALT__V1__WORK__ITEM_EVICT, &e->base);
    fn (arg, &w);
    //  The victim is told why (kubectl describe pod): whom it made room
    //  for, in which queue, as kube-scheduler's Preempted Event does.
    bool reclaim = ev->reason && strcmp (ev->reason, "reclaim") == 0;
    char message[768], queue[160] = "";
    if (ev->preemptor_queue && *ev->preemptor_queue)
        snprintf (queue, sizeof queue, " of queue %s", ev->preemptor_queue);
    if (ev->preemptor && *ev->preemptor)
        snprintf (message, sizeof message, "%s by pod %s%s on node %s",
                  reclaim ? "Reclaimed" : "Preempted", ev->preemptor, queue,
                  pod->node_name ? pod->node_name : "-");
    else
        snprintf (message, sizeof message, "Evicted by the scheduler (%s) on node %s",
                  ev->reason ? ev->reason : "preempt", pod->node_name ? pod->node_name : "-");
    Basalt__V1__EventWork *evw = bas_alloc (sizeof *evw);
    basalt__v1__event_work__init (evw);
    evw->namespace_ = bas_strdup (pod->namespace_ ? pod->namespace_ : "default");
    evw->kind = bas_strdup ("Pod");
    evw->name = bas_strdup (pod->name);
    evw->uid = bas_strdup (pod->uid);
    evw->api_version = bas_strdup ("v1");
    evw->type = bas_strdup ("Normal");
    evw->reason = bas_strdup (reclaim ? "Reclaimed" : "Preempted");
    evw->message = bas_strdup (message);
    Basalt__V1__Work *we = bas_work_new (BASALT__V1__WORK__ITEM_EVENT, &evw->base);
    fn (arg, &we);
}

static void
s_commit_status (cache_model_t *self, cache_commit_t *cc, size_t i, cache_work_fn *fn, void *arg)
{
    Basalt__V1__CommitResult *result = cc->result;
    const Basalt__V1__PodGroupStatusChange *ch = cc->commit->statuses[i];
    const Basalt__V1__PodGroup *pg = ch->uid ? bas_store_pod_group (self->store, ch->uid) : NULL;
    if (!pg || !ch->status) {
        self->stats.statuses_rejected++;
        s_add_result (result, &cc->cap, s_item (ch->uid, false, "pod group no longer exists"));
        return;
    }
    //  Keep the status the API has, to restore it if the write fails;
    //  apply the proposal now so the next session does not propose it again.
    if (!bas_hash_lookup (self->status_previous, ch->uid) && pg->status) {
        size_t len = basalt__v1__pod_group_status__get_packed_size (pg->status);
        zchunk_t *chunk = zchunk_new (NULL, len);
        basalt__v1__pod_group_status__pack (pg->status, zchunk_data (chunk));
        zchunk_set (chunk, zchunk_data (chunk), len);
        bas_hash_insert (self->status_previous, ch->uid, chunk);
    }
    bas_store_pod_group_set_status (self->store, ch->uid,
                                    (Basalt__V1__PodGroupStatus *)bas_msg_dup (&ch->status->base));
    cache_model_mark (self, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP, ch->uid);
    self->stats.statuses_accepted++;
    s_accept (result);
    Basalt__V1__StatusWork *sw = bas_alloc (sizeof *sw);
    basalt__v1__status_work__init (sw);
    sw->uid = bas_strdup (pg->uid);
    sw->namespace_ = bas_strdup (pg->namespace_ ? pg->namespace_ : "default");
    sw->name = bas_strdup (pg->name ? pg->name : "");
    sw->status = (Basalt__V1__PodGroupStatus *)bas_msg_dup (&ch->status->base);
    Basalt__V1__Work *w = bas_work_new (BASALT__V1__WORK__ITEM_STATUS, &sw->base);
    fn (arg, &w);
}

static void
s_commit_condition (cache_model_t *self, cache_commit_t *cc, size_t i, cache_work_fn *fn, void *arg)
{
    const Basalt__V1__PodCondition *pc = cc->commit->pod_conditions[i];
    const Basalt__V1__Pod *pod = pc->pod_uid ? bas_store_pod (self->store, pc->pod_uid) : NULL;
    if (!pod)
        return;
    Basalt__V1__PodConditionWork *cw = bas_alloc (sizeof *cw);
    basalt__v1__pod_condition_work__init (cw);
    cw->namespace_ = bas_strdup (pod->namespace_ ? pod->namespace_ : "default");
    cw->name = bas_strdup (pod->name ? pod->name : "");
    cw->pod_uid = bas_strdup (pod->uid);
    cw->condition = (Basalt__V1__PodCondition *)bas_msg_dup (&pc->base);
    Basalt__V1__Work *w = bas_work_new (BASALT__V1__WORK__ITEM_POD_CONDITION, &cw->base);
    fn (arg, &w);
    //  A pod that cannot be scheduled also gets the Warning event Volcano
    //  and kube-scheduler record each time the reason changes (sessions
    //  propose a condition only then): kubectl describe pod shows it.
    if (pc->status && strcmp (pc->status, "False") == 0 && pc->type &&
        strcmp (pc->type, "PodScheduled") == 0) {
        Basalt__V1__EventWork *ev = bas_alloc (sizeof *ev);
        basalt__v1__event_work__init (ev);
        ev->namespace_ = bas_strdup (pod->namespace_ ? pod->namespace_ : "default");
        ev->kind = bas_strdup ("Pod");
        ev->name = bas_strdup (pod->name ? pod->name : "");
        ev->uid = bas_strdup (pod->uid ? pod->uid : "");
        ev->api_version = bas_strdup ("v1");
        ev->type = bas_strdup ("Warning");
        ev->reason = bas_strdup ("FailedScheduling");
        ev->message = bas_strdup (pc->message ? pc->message : "");
        Basalt__V1__Work *w = bas_work_new (BASALT__V1__WORK__ITEM_EVENT, &ev->base);
        fn (arg, &w);
    }
}

//  A PodGroup Event the session proposed, for a group the model holds.
static void
s_commit_group_event (cache_model_t *self, cache_commit_t *cc, size_t i, cache_work_fn *fn,
                      void *arg)
{
    const Basalt__V1__PodGroupEvent *ge = cc->commit->group_events[i];
    const Basalt__V1__PodGroup *pg = ge->uid ? bas_store_pod_group (self->store, ge->uid) : NULL;
    if (!pg || pg->deleting || !ge->reason || !ge->message)
        return;
    Basalt__V1__EventWork *ev = bas_alloc (sizeof *ev);
    basalt__v1__event_work__init (ev);
    ev->namespace_ = bas_strdup (pg->namespace_ ? pg->namespace_ : "default");
    ev->kind = bas_strdup ("PodGroup");
    ev->name = bas_strdup (pg->name ? pg->name : "");
    ev->uid = bas_strdup (pg->uid);
    ev->api_version = bas_strdup ("scheduling.volcano.sh/v1beta1");
    ev->type = bas_strdup (ge->type && *ge->type ? ge->type : "Normal");
    ev->reason = bas_strdup (ge->reason);
    ev->message = bas_strdup (ge->message);
    Basalt__V1__Work *w = bas_work_new (BASALT__V1__WORK__ITEM_EVENT, &ev->base);
    fn (arg, &w);
}

cache_commit_t *
cache_model_commit_begin (cache_model_t *self, const Basalt__V1__Commit *commit,
                          Basalt__V1__CommitResult *result)
{
    (void)self;
    cache_commit_t *cc = bas_alloc (sizeof *cc);
    cc->commit = commit;
    cc->result = result;
    cc->jobs = bas_msg_commit_gangs (commit, &cc->order, &cc->start);
    return cc;
}

void
cache_model_commit_consume (cache_commit_t *cc, Basalt__V1__Commit *commit)
{
    if (commit == cc->commit)
        cc->owned = commit;
}

bool
cache_model_commit_step (cache_model_t *self, cache_commit_t *cc, size_t budget, cache_work_fn *fn,
                         void *arg)
{
    const Basalt__V1__Commit *commit = cc->commit;
    size_t done = 0;
    //  Placements are committed per gang: all of a job's or none of them;
    //  a slice ends between two gangs, never inside one.
    while (cc->next_job < cc->jobs && done < budget) {
        size_t g = cc->next_job++;
        s_commit_gang (self, cc, g, fn, arg);
        done += cc->start[g + 1] - cc->start[g];
        if (cc->owned)
            for (size_t k = cc->start[g]; k < cc->start[g + 1]; k++) {
                protobuf_c_message_free_unpacked (&cc->owned->placements[cc->order[k]]->base, NULL);
                cc->owned->placements[cc->order[k]] = NULL;
            }
    }
    while (cc->next_eviction < commit->n_evictions && done < budget) {
        s_commit_eviction (self, cc, cc->next_eviction++, fn, arg);
        done++;
    }
    while (cc->next_status < commit->n_statuses && done < budget) {
        s_commit_status (self, cc, cc->next_status++, fn, arg);
        done++;
    }
    while (cc->next_condition < commit->n_pod_conditions && done < budget) {
        s_commit_condition (self, cc, cc->next_condition++, fn, arg);
        done++;
    }
    while (cc->next_event < commit->n_group_events && done < budget) {
        s_commit_group_event (self, cc, cc->next_event++, fn, arg);
        done++;
    }
    bool finished = cc->next_job == cc->jobs && cc->next_eviction == commit->n_evictions &&
                    cc->next_status == commit->n_statuses &&
                    cc->next_condition == commit->n_pod_conditions &&
                    cc->next_event == commit->n_group_events;
    if (finished) {
        cc->result->has_epoch = 1;
        cc->result->epoch = self->epoch;
    }
    return finished;
}

int
cache_model_commit_end (cache_commit_t **cc_p)
{
    if (!cc_p || !*cc_p)
        return 0;
    cache_commit_t *cc = *cc_p;
    int accepted = cc->accepted;
    free (cc->order);
    free (cc->start);
    free (cc);
    *cc_p = NULL;
    return accepted;
}

int
cache_model_commit (cache_model_t *self, const Basalt__V1__Commit *commit,
                    Basalt__V1__CommitResult *result, cache_work_fn *fn, void *arg)
{
    cache_commit_t *cc = cache_model_commit_begin (self, commit, result);
    while (!cache_model_commit_step (self, cc, SIZE_MAX, fn, arg))
        ;
    return cache_model_commit_end (&cc);
}

int
cache_model_bind_moot (cache_model_t *self, const Basalt__V1__BindWork *bind)
{
    if (!bind->pod_uid)
        return 0;
    const Basalt__V1__Pod *pod = bas_store_pod (self->store, bind->pod_uid);
    if (!pod)
        return -1;
    if (!pod->node_name || !*pod->node_name)
        return 0;
    return bind->node && strcmp (pod->node_name, bind->node) == 0 ? 1 : -1;
}

int
cache_model_bind_result (cache_model_t *self, const Basalt__V1__BindWork *bind, bool ok,
                         const char *reason)
{
    if (ok || !bind->pod_uid)
        return 0;
    self->stats.bind_failures++;
    bas_warn ("bind_failed", "pod=%s/%s node=%s reason=\"%s\"", bind->namespace_, bind->name,
              bind->node, reason ? reason : "");
    cache_model_release (self, bind);
    return 0;
}

void
cache_model_release (cache_model_t *self, const Basalt__V1__BindWork *bind)
{
    const Basalt__V1__Pod *pod = bind->pod_uid ? bas_store_pod (self->store, bind->pod_uid) : NULL;
    if (!pod || !pod->assumed_node || strcmp (pod->assumed_node, bind->node ? bind->node : "") != 0)
        return;
    //  Release the assumption: the pod is pending again for the next session.
    cache_model_uncharge (self, bind->pod_uid);
    bas_store_pod_set_assumed (self->store, bind->pod_uid, NULL);
    cache_model_charge (self, pod);
    cache_model_mark (self, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, bind->pod_uid);
}

int
cache_model_evict_result (cache_model_t *self, const Basalt__V1__EvictWork *evict, bool ok)
{
    //  Done or failed, the pod may be proposed again: done pods go away with
    //  their delete event (which also forgets them); failed ones stay.
    const char *mark = evict->pod_uid ? zhashx_lookup (self->evicting, evict->pod_uid) : NULL;
    if (mark && !ok) {
        bool api = strcmp (mark, "api") == 0;
        zhashx_delete (self->evicting, evict->pod_uid);
        if (api)
            return 0; // the API itself is deleting it: that stands
        //  The eviction did not happen: the pod is not Releasing after all
        //  (if the API has deleted it meanwhile, its events say so).
        const Basalt__V1__Pod *pod = bas_store_pod (self->store, evict->pod_uid);
        if (pod && pod->deleting) {
            bas_store_pod_set_deleting (self->store, evict->pod_uid, false);
            cache_model_mark (self, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, evict->pod_uid);
        }
    }
    return 0;
}

int
cache_model_status_result (cache_model_t *self, const Basalt__V1__StatusWork *status, bool ok)
{
    if (!status->uid)
        return 0;
    zchunk_t *prev = bas_hash_lookup (self->status_previous, status->uid);
    if (!ok && prev) {
        if (bas_store_pod_group_set_status (self->store, status->uid,
                                            basalt__v1__pod_group_status__unpack (
                                                NULL, zchunk_size (prev), zchunk_data (prev))) == 0)
            cache_model_mark (self, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP, status->uid);
    }
    bas_hash_delete (self->status_previous, status->uid);
    return 0;
}

// ------------------------------------------------------------ results

static void
s_bind_applied (cache_model_t *self, const ProtobufCMessage *msg, bool ok, const char *message)
{
    cache_model_bind_result (self, (const Basalt__V1__BindWork *)msg, ok, message);
}

static void
s_evict_applied (cache_model_t *self, const ProtobufCMessage *msg, bool ok, const char *message)
{
    (void)message;
    cache_model_evict_result (self, (const Basalt__V1__EvictWork *)msg, ok);
}

static void
s_claim_applied (cache_model_t *self, const ProtobufCMessage *msg, bool ok, const char *message)
{
    cache_claims_result (self, (const Basalt__V1__VolumeClaimWork *)msg, ok, message);
}

static void
s_status_applied (cache_model_t *self, const ProtobufCMessage *msg, bool ok, const char *message)
{
    (void)message;
    cache_model_status_result (self, (const Basalt__V1__StatusWork *)msg, ok);
}

//  What a binder's result changes in the model, one row per member of
//  Work's oneof. A kind that assumed nothing (a pod condition, an Event:
//  written, not counted on) has a row without a function; a kind without
//  a row is refused by cache_model_work_result and fails test_cache_model.
static const struct {
    Basalt__V1__Work__ItemCase item;
    void (*apply) (cache_model_t *self, const ProtobufCMessage *msg, bool ok, const char *message);
} s_results[] = {
    {BASALT__V1__WORK__ITEM_BIND, s_bind_applied},
    {BASALT__V1__WORK__ITEM_EVICT, s_evict_applied},
    {BASALT__V1__WORK__ITEM_STATUS, s_status_applied},
    {BASALT__V1__WORK__ITEM_POD_CONDITION, NULL},
    {BASALT__V1__WORK__ITEM_EVENT, NULL},
    {BASALT__V1__WORK__ITEM_CLAIM, s_claim_applied},
};

int
cache_model_work_result (cache_model_t *self, const Basalt__V1__Work *work, bool ok,
                         const char *message)
{
    const ProtobufCMessage *msg = bas_work_item (work);
    for (size_t i = 0; msg && i < sizeof s_results / sizeof s_results[0]; i++)
        if (s_results[i].item == work->item_case) {
            if (s_results[i].apply)
                s_results[i].apply (self, msg, ok, message);
            return 0;
        }
    return -1;
}
