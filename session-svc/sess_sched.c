/*  sess_sched: one scheduling session, open to commit (see sess_sched.h).

    Design note: the order is Volcano's runOnce — open the model, open the
    plugins in tier order (they register callbacks), run the configured
    actions in order, let the plugins close (gang writes its conditions),
    then turn the session's outcome into a Commit. Nothing outlives the
    call but the Commit; the replica is never changed.
*/
#include "sess_sched.h"
#include "sess_session.h"
#include "bas_util.h"
#include "bas_msg.h"

#include <stdlib.h>
#include <string.h>

//  Tasks reserved (Pipelined) at the end: counted, and listed on request.
static void
s_pipelined (sess_session_t *ssn, sess_params_t *params)
{
    int n = 0;
    for (int t = 0; t < ssn->ntasks; t++)
        if (ssn->tasks[t].status == SESS_TASK_PIPELINED)
            n++;
    params->pods_pipelined = n;
    if (!params->want_pipelined || n == 0)
        return;
    params->pipelined = bas_alloc (sizeof *params->pipelined * (size_t)n);
    for (int t = 0; t < ssn->ntasks; t++) {
        const sess_task_t *task = &ssn->tasks[t];
        if (task->status != SESS_TASK_PIPELINED)
            continue;
        params->pipelined[params->n_pipelined].pod_uid = task->pod->uid;
        params->pipelined[params->n_pipelined].node = task->node ? task->node->node->name : "";
        params->n_pipelined++;
    }
}

Basalt__V1__Commit *
sess_run (bas_store_t *replica, const sess_conf_t *conf, sess_params_t *params)
{
    sess_params_t dummy = {0};
    if (!params)
        params = &dummy;
    params->jobs_total = params->jobs_ready = params->pods_placed = params->pods_pending = 0;
    params->pods_evicted = params->pods_pipelined = 0;
    memset (params->pods_held, 0, sizeof params->pods_held);
    params->nodes_out_of_sync = 0;
    params->n_action_times = params->n_plugin_times = 0;
    params->pipelined = NULL;
    params->n_pipelined = 0;
    sess_conf_t *own_conf = NULL;
    if (!conf)
        conf = own_conf = sess_conf_default ();
    bas_store_t *empty = NULL;
    if (!replica)
        replica = empty = bas_store_new ();

    sess_session_t ssn;
    memset (&ssn, 0, sizeof ssn);
    ssn.conf = conf;
    ssn.params = params;
    ssn.replica = replica;
    ssn.cur_plugin = -1;
    ssn.enqueue_configured = sess_conf_has_action (conf, "enqueue");
    bas_res_zero (&ssn.total);

    Basalt__V1__Commit *commit = NULL;
    if (sess_model_open (&ssn) == 0 && sess_plugins_open (&ssn) == 0) {
        for (int i = 0; i < sess_conf_nactions (conf); i++) {
            const sess_action_def_t *action = sess_conf_action (conf, i);
            if (!action->execute)
                continue;
            double t0 = sess_clock_ms ();
            action->execute (&ssn, sess_conf_action_args (conf, action->name));
            if (params->n_action_times < SESS_MAX_ACTION_TIMES) {
                params->action_times[params->n_action_times].name = action->name;
                params->action_times[params->n_action_times].ms = sess_clock_ms () - t0;
                params->n_action_times++;
            }
        }
        s_pipelined (&ssn, params);
        for (int j = 0; j < ssn.njobs; j++)
            if (ssn.jobs[j].ntasks > 0 && sess_job_ready (&ssn, &ssn.jobs[j]))
                params->jobs_ready++;
        sess_plugins_close (&ssn);
        commit = sess_model_commit (&ssn);
    } else
        sess_plugins_close (&ssn);
    if (!commit) {
        //  Nothing to propose; still answer with an (empty) commit.
        commit = bas_alloc (sizeof *commit);
        basalt__v1__commit__init (commit);
        if (params->session_id)
            commit->session_id = strdup (params->session_id);
    }
    for (int k = 0; k < SESS_FN_COUNT; k++)
        free (ssn.fns[k]);
    free (ssn.plugins);
    sess_model_close (&ssn);
    bas_store_destroy (&empty);
    sess_conf_destroy (&own_conf);
    bas_debug ("sched_session_done",
               "session=%s jobs=%d ready=%d placed=%d pending=%d evicted=%d pipelined=%d "
               "nodes_out_of_sync=%d",
               params->session_id ? params->session_id : "-", params->jobs_total,
               params->jobs_ready, params->pods_placed, params->pods_pending, params->pods_evicted,
               params->pods_pipelined, params->nodes_out_of_sync);
    return commit;
}

static zframe_t *
s_pack (const Basalt__V1__Commit *commit)
{
    zframe_t *frame = zframe_new (NULL, basalt__v1__commit__get_packed_size (commit));
    if (!frame)
        abort ();
    basalt__v1__commit__pack (commit, zframe_data (frame));
    return frame;
}

zframe_t **
sess_commit_pack (const Basalt__V1__Commit *commit, size_t part_placements, size_t *n_parts)
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
        if (count == cap)
            abort (); // cannot happen: see cap
        parts[count++] = s_pack (&part);
        from = end;
    }
    free (start);
    free (order);
    free (sorted);
    *n_parts = count;
    return parts;
}
