/*  sess_action_gangreclaim: give a starving gang what other queues
    borrowed, by evicting whole victim gangs, or their members above
    minMember, of reclaimable queues (Volcano v1.15's gangreclaim).

    Queues of admitted (not Pending), valid jobs in queue order; an
    overused queue (Overused) reclaims nothing. Each of its starving jobs
    (JobStarving) once, in job order, gets one statement: the queue must
    be allowed to reclaim for the gang's whole pending request
    (Preemptive, given the summed request), then sess_gang_evict
    (sess_gang_evict.c) chooses the victims — Running pods of other,
    reclaimable queues, as surplus or whole bundles in victim queue
    order, through the plugins' Reclaimable filters — and adds the
    evictions and the gang's pipelined pods only when every pending pod
    of the gang places. The statement is committed when the job is then
    pipelined (JobPipelined), else discarded.

    Arguments (`configurations`, name gangreclaim): maxDomains (positive,
    default 8) and allowWholeBundle (default true); a bad value is warned
    about when the configuration loads and the default is used.
*/
#include "sess_session.h"

void
sess_gangreclaim_execute (sess_session_t *ssn, const cJSON *args)
{
    sess_gang_run (ssn, args, SESS_GANG_RECLAIM, "gangreclaim");
}
