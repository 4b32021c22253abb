/*  sim_api_read: the read verbs (get, list with selectors and paging from one
    snapshot, the Scale of a Deployment or ReplicaSet) and what a read
    checks before answering (resourceVersion freshness, the Table form,
    selectors), which watches share (sim_api_watch.c). Internal to the
    API: a layer over sim_api_impl.h, under the router (sim_api.c).
*/
#ifndef SIM_API_READ_H
#define SIM_API_READ_H

#include <stdint.h>

#include "sim_api_impl.h"
#include "sim_select.h"
#include "sim_table.h"

typedef enum { SIM_API_FRESH, SIM_API_WAIT, SIM_API_TOO_LARGE } sim_api_fresh_t;

//  Has the store reached resourceVersion `want`, which a read asked for
//  (resourceVersion=N, "not older than")? kube-apiserver's watch cache
//  waits up to 3 s (cfg.rv_wait_ms) for it and then fails the read with
//  504 "Too large resource version". While the wait lasts the request is
//  handed back to the HTTP layer to be asked again (resp->retry_ms), so
//  the reactor never blocks.
sim_api_fresh_t sim_api_fresh (sim_ctx_t *ctx, uint64_t want);

//  The Status of a read whose resourceVersion never came
//  (storage.NewTooLargeResourceVersionError: a Timeout with the cause
//  ResourceVersionTooLarge and a retry after 1 s), into buf.
void sim_api_too_large_status (sim_ctx_t *ctx, uint64_t want, sim_buf_t *buf);

//  Does the read want a Table (kubectl get's Accept header)? Returns 1
//  with *opts filled, 0 for the object itself, or -1 after replying 400 to
//  an includeObject the API does not know (checked only for a Table, as
//  the real server decodes TableOptions only then).
int sim_api_table_wanted (sim_ctx_t *ctx, sim_table_opts_t *opts);

void sim_api_get (sim_ctx_t *ctx);

void sim_api_get_scale (sim_ctx_t *ctx);

//  The selectors of a list or watch. Returns 0, or -1 after replying 400.
int sim_api_parse_selectors (sim_ctx_t *ctx, sim_selector_t **labels_p, sim_selector_t **fields_p);

void sim_api_list (sim_ctx_t *ctx);

void sim_api_snapshot_free (sim_snapshot_t *snap);

#endif
