/*  sim_api_watch: the watch verb (sim_api_watch.c): replay from a
    resourceVersion or the initial events, then the live stream of the hub,
    with bookmarks. Internal to the API, under the router (sim_api.c).
*/
#ifndef SIM_API_WATCH_H
#define SIM_API_WATCH_H

#include "sim_api_impl.h"

void sim_api_watch (sim_ctx_t *ctx);

#endif
