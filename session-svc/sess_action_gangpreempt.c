/*  sess_action_gangpreempt: make room for a starving gang by evicting
    whole victim gangs, or their members above minMember, of lower
    priority in the same queue (Volcano v1.15's gangpreempt).

    Preemptors are the jobs that are admitted (not Pending), valid and
    starving (JobStarving); queues are taken in queue order, and each
    queue's starving jobs once each in job order. For each, one statement:
    sess_gang_evict (sess_gang_evict.c) chooses the victims — Bound or
    Running pods of lower-priority jobs of the queue, as surplus or whole
    bundles, through the plugins' Preemptable filters — and adds the
    evictions and the gang's pipelined pods only when every pending pod
    of the gang places. The statement is committed when the job is then
    pipelined (JobPipelined), else discarded: nothing is evicted for a
    gang that would not run.

    Arguments (`configurations`, name gangpreempt): maxDomains (positive,
    default 8) and allowWholeBundle (default true); a bad value is warned
    about when the configuration loads and the default is used.

    Where it differs from legacy preempt: no per-pod, per-node choice of
    victims, no preemption within a job, and a job is tried once per
    session.
*/
#include "sess_session.h"

void
sess_gangpreempt_execute (sess_session_t *ssn, const cJSON *args)
{
    sess_gang_run (ssn, args, SESS_GANG_PREEMPT, "gangpreempt");
}
