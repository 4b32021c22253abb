/*  cache_work: the binder pool seen from cache-svc.

    Binders connect to the work ROUTER, announce credits (Ready), and get
    work least-recently-used first; each result returns one credit. Work
    whose result never comes (the binder went silent, or the result is
    overdue) is re-issued: a bind that already happened is recognised by the
    binder (409 "already assigned" to the same node counts as success), so
    re-issuing is safe. Pure bookkeeping: no sockets here.
*/
#ifndef CACHE_WORK_H
#define CACHE_WORK_H

#include <stdbool.h>
#include <stdint.h>

#include <czmq.h>
#include "basalt.pb-c.h"

typedef struct _cache_work_t cache_work_t;

cache_work_t *cache_work_new (void);
void cache_work_destroy (cache_work_t **self_p);

//  Queue a work item (taken); assigns its work_id. Returns the id. A
//  PodGroup status whose group already has one waiting (not yet sent)
//  replaces that one's content instead, and that one's id is returned.
uint64_t cache_work_add (cache_work_t *self, Basalt__V1__Work **work_p);

//  A binder announced `credits` (its total capacity minus work in flight).
//  `instance` (Ready.instance, may be NULL) names the binder process: a
//  Ready on a new connection (`identity`) with the instance of a known
//  binder moves that binder, and the work in flight to it, to the new
//  connection (its old one dropped, or the process reconnected after a
//  long freeze of either side); messages from the old one are then from
//  an unknown peer.
void cache_work_ready (cache_work_t *self, zframe_t *identity, int credits, const char *binder_id,
                       const char *instance, int64_t now_ms);

//  Any message from a binder proves it alive. Returns false if unknown.
bool cache_work_seen (cache_work_t *self, zframe_t *identity, int64_t now_ms);

//  Next (binder, work) pair to send, LRU binder first, or false when no
//  work or no credit. The identity and work stay owned by the pool; the
//  work is now in flight.
bool cache_work_next (cache_work_t *self, zframe_t **identity_p, Basalt__V1__Work **work_p,
                      int64_t now_ms);

//  The name a binder gave in its Ready (--binder-id), "" if none or unknown.
const char *cache_work_binder_id (cache_work_t *self, zframe_t *identity);

//  A result arrived: returns the work item (taken by the caller), or NULL
//  if it was not in flight (a duplicate after re-issue). Returns a credit.
Basalt__V1__Work *cache_work_done (cache_work_t *self, zframe_t *identity, uint64_t work_id);

//  Put a sent item back at the front of the queue (the send failed).
void cache_work_unsend (cache_work_t *self, uint64_t work_id);

//  Forget binders silent for binder_timeout_ms and re-queue the work of
//  lost binders once its lease has run out (BAS_WORK_TTL_MS after it was
//  sent, and CACHE_WORK_REISSUE_MARGIN_MS); call it every so often, as the
//  lease of an item may run out after its binder was lost. Work in flight
//  on a binder that is still heard from is never re-queued, however long
//  it takes. Returns the number of items re-queued. The
//  caller judges silence on its own clock after reading what the binders
//  sent (a busy reactor must not mistake its own delay for their silence).
int cache_work_expire (cache_work_t *self, int64_t now_ms, int binder_timeout_ms);

//  A binder's heartbeat says the highest work id it received and the ids it
//  holds. Work sent to it that it received and no longer holds, but whose
//  result never arrived (results and heartbeats share one ordered
//  connection: it was lost when a connection dropped), and work it never
//  received, sent more than grace_ms ago (and more than grace_ms after the
//  last cache_work_forgive), is re-queued. Held work never is.
//  Returns the number of items re-queued.
int cache_work_reconcile (cache_work_t *self, zframe_t *identity, uint64_t last_work_id,
                          const uint64_t *held, size_t nheld, int64_t now_ms, int grace_ms);

//  The caller could not hear anyone until now (its reactor was held): every
//  binder counts as heard from now, so silence is measured from here, and
//  so is the grace of work a binder has not yet said it received.
void cache_work_forgive (cache_work_t *self, int64_t now_ms);

//  Status items merged into a waiting one for the same pod group so far.
unsigned long cache_work_coalesced (cache_work_t *self);

//  Binders declared lost so far.
unsigned long cache_work_lost (cache_work_t *self);

size_t cache_work_queued (cache_work_t *self);
size_t cache_work_in_flight (cache_work_t *self);
size_t cache_work_binders (cache_work_t *self);
unsigned long cache_work_reissued (cache_work_t *self);

#endif
