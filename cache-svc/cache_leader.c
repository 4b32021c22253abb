/*  cache_leader: cache-svc's leader election (--leader-elect), over a
    coordination.k8s.io Lease (bas_lease).

    Design note: a standby serves the model (snapshots, deltas) but hands
    out no work and accepts no commit. On taking the lease it binds the
    binder ROUTER and says so in the next Delta; on losing it the process
    stops at once with CACHE_EXIT_LEASE_LOST and comes back as a standby
    with a new epoch. On SIGTERM a leader releases the lease first, so the
    standby takes over at its next attempt.
*/
#include "cache_leader.h"
#include "bas_util.h"
#include "cache_binders.h"
#include "cache_defaults.h"

#include <string.h>

//  Taking the lease binds the binder ROUTER; losing it stops the process.
void
cache_leader_on_lease (void *arg, bool leading, const char *reason)
{
    cache_t *self = arg;
    if (leading) {
        char err[512];
        if (cache_binders_bind (self, err, sizeof err) != 0) {
            self->lease_lost = true; // cannot lead without binders: let another
            bas_svc_stop (self->svc);
            return;
        }
        cache_model_set_standby (self->model, false);
        cache_svc_flush (self); // sessions and the controller hear it now
        bas_metrics_set (self->metrics, "basalt_leader", NULL, 1);
        bas_info ("leading", "work=%s", self->config.work_endpoint);
        return;
    }
    bas_metrics_set (self->metrics, "basalt_leader", NULL, 0);
    if (strcmp (reason, "released") == 0)
        return; // a stop under way
    //  Stop at once, as kube-scheduler and Volcano do: no more work goes
    //  out (cache_svc_leading is false from now on), and the restarted process
    //  comes back as a standby with a new epoch, which sessions, the
    //  controller and binders follow.
    bas_error ("leader_lost", "reason=\"%s\" exit=%d", reason, CACHE_EXIT_LEASE_LOST);
    self->lease_lost = true;
    bas_svc_stop (self->svc);
}

static void
s_on_released (void *arg)
{
    cache_t *self = arg;
    bas_svc_stop (self->svc);
}

static int
s_on_release_timeout (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    cache_t *self = arg;
    bas_warn ("lease_release_slow", "waited_ms=%d", CACHE_LEASE_RELEASE_WAIT_MS);
    bas_svc_stop (self->svc);
    return 0;
}

//  SIGTERM: a leader gives the lease up first, so that the standby takes
//  over at its next attempt instead of waiting out the lease duration.
int
cache_leader_on_stop (void *arg)
{
    cache_t *self = arg;
    if (!self->lease || !bas_lease_leading (self->lease))
        return 0;
    bas_svc_timer (self->svc, CACHE_LEASE_RELEASE_WAIT_MS, 1, s_on_release_timeout, self,
                   "lease-release");
    bas_lease_release (self->lease, s_on_released, self);
    return 1;
}
