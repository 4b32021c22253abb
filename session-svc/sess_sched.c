/*  sess_sched: one scheduling session, open to commit (see sess_sched.h).

    Design note: the order is Volcano's runOnce — open the model, open the
    plugins in tier order (they register callbacks), run the configured
    actions in order, let the plugins close (gang writes its conditions),
    then turn the session's outcome into a Commit. Nothing outlives the
    call but the Commit, and the model's storage in the caller's
    sess_keep_t (reused, never read, by the next session); the replica is
    never changed.
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
    sess_keep_t *own_keep = params->keep ? NULL : sess_keep_new ();
    ssn.keep = params->keep ? params->keep : own_keep;
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
    sess_keep_destroy (&own_keep);
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
