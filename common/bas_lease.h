/*  bas_lease: leader election on a coordination.k8s.io/v1 Lease, the way
    client-go's leaderelection does it, on the caller's reactor.

    Every retry period a candidate reads the Lease. It takes it when there
    is none (create), when the holder is empty (released), or when the
    record it last saw has not changed for the lease duration as measured
    on this process's own monotonic clock (not the writer's renewTime: the
    two machines' clocks need not agree). Taking and renewing are PUTs with
    the resourceVersion last read, so of two candidates only one wins.

    A leader renews every retry period. It counts itself leader only while
    its last successful renewal was *sent* less than the renew deadline
    ago: a renewal that is slow, failing, or a process that was frozen
    (SIGSTOP) and resumes, is no longer leader when it next asks, before it
    could act on a stale belief. The deadline is shorter than the lease
    duration, so a leader always gives up before a standby can take over.
    A 409 on renewal is followed by a read: the Lease still ours (our last
    renewal was applied but its answer lost) is renewed, anyone else's ends
    leadership at once.

    Leadership, once lost, does not come back: like kube-scheduler and
    Volcano, a service that loses the lease stops and is restarted as a
    standby (its state was built for a leader).

    Identity: by default hostname + "_" + a random UUID, as client-go does.
*/
#ifndef BAS_LEASE_H
#define BAS_LEASE_H

#include "bas_kube.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    const char *name_space;    // the Lease's namespace
    const char *name;          // the Lease's name
    const char *identity;      // holderIdentity; NULL: hostname_uuid
    int64_t lease_duration_ms; // how long a standby waits on an unchanged record
    int64_t renew_deadline_ms; // how long a leader keeps leading without a renewal
    int64_t retry_period_ms;   // between attempts
} bas_lease_config_t;

//  0, or -1 with a message when the durations cannot work together
//  (client-go's rules: lease duration > renew deadline > retry period
//  * 1.2, all > 0).
int bas_lease_config_check (const bas_lease_config_t *cfg, char *err, size_t errlen);

typedef struct _bas_lease_t bas_lease_t;

//  Called once when this process becomes leader (leading = true) and once
//  when it stops being leader (false, with a reason); never again after.
typedef void (bas_lease_fn) (void *arg, bool leading, const char *reason);

//  Start electing on `loop` through `kube` (both borrowed, they outlive
//  the elector). The first attempt is made at once. cfg is copied.
bas_lease_t *bas_lease_new (zloop_t *loop, bas_kube_t *kube, const bas_lease_config_t *cfg,
                            bas_lease_fn *fn, void *arg);
void bas_lease_destroy (bas_lease_t **self_p);

//  True only while leader and the last renewal was sent less than the
//  renew deadline ago (checked against the clock now, not at the last tick).
bool bas_lease_leading (bas_lease_t *self);

const char *bas_lease_identity (bas_lease_t *self);

//  The holder last read from the Lease ("" when none or not read yet).
const char *bas_lease_holder (bas_lease_t *self);

//  Give the lease up (holder "", duration 1 s, as client-go's
//  ReleaseOnCancel), so that a standby takes over at its next attempt
//  instead of waiting out the duration. Stops leading at once; `done` is
//  called once the API has answered (or at once when not leading).
typedef void (bas_lease_released_fn) (void *arg);
void bas_lease_release (bas_lease_t *self, bas_lease_released_fn *done, void *arg);

//  Counters for metrics.
typedef struct {
    unsigned long attempts;    // reads, creates and updates sent
    unsigned long failures;    // those that failed (not counting 404 on read)
    unsigned long transitions; // leaseTransitions last read
} bas_lease_stats_t;
void bas_lease_stats (bas_lease_t *self, bas_lease_stats_t *stats);

#endif
