/*  sess_plugin_conformance: Volcano's conformance plugin.

    Critical pods are never victims of preemption or reclaim: pods of the
    system-cluster-critical / system-node-critical priority classes and
    pods in kube-system. Used by preempt and reclaim (later actions).
*/
#include "sess_session.h"

#include <string.h>

static bool
s_critical (const sess_task_t *task)
{
    const char *pc = task->pod->priority_class_name;
    const char *ns = task->pod->namespace_;
    if (pc &&
        (strcmp (pc, "system-cluster-critical") == 0 || strcmp (pc, "system-node-critical") == 0))
        return true;
    return ns && strcmp (ns, "kube-system") == 0;
}

static int
s_evictable (void *self, const sess_task_t *preemptor, sess_task_t **cands, int n,
             sess_task_t **out)
{
    (void)self;
    (void)preemptor;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (!s_critical (cands[i]))
            out[k++] = cands[i];
    return k;
}

int
sess_conformance_open (sess_session_t *ssn, const sess_plugin_conf_t *conf, void **self_p)
{
    (void)conf;
    *self_p = NULL;
    sess_add_preemptable_fn (ssn, NULL, s_evictable);
    sess_add_reclaimable_fn (ssn, NULL, s_evictable);
    return 0;
}

void
sess_conformance_close (sess_session_t *ssn, void *self)
{
    (void)ssn;
    (void)self;
}
