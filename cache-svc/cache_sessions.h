/*  cache_sessions: cache-svc's session ROUTER: snapshots, commits and
    queue shares (cache_sessions.c has the design note).
*/
#ifndef CACHE_SESSIONS_H
#define CACHE_SESSIONS_H

#include "bas_commit.h"
#include "bas_svc.h"
#include "cache_svc.h"

//  The ROUTER's handlers (SnapshotRequest, Commit), their `arg` the
//  cache_t: for bas_svc_dispatch.
extern const bas_handler_t cache_sessions_handlers[];

//  The model's side of the Commit conversation, its `arg` the cache_t:
//  for bas_commit_acceptor_new.
extern const bas_commit_apply_t cache_sessions_commit_apply;

//  The destructor of the queue shares table (self->shares).
void cache_sessions_share_free (void **item_p);

#endif
