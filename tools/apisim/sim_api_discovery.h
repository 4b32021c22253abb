/*  sim_api_discovery: what kubectl asks before it acts
    (sim_api_discovery.c): /version, /api and /apis (the aggregated and the
    legacy forms), and each group version's resource list, built from the
    served kinds and CRDs. Internal to the API, under the router (sim_api.c).
*/
#ifndef SIM_API_DISCOVERY_H
#define SIM_API_DISCOVERY_H

#include "sim_api_impl.h"

void sim_api_discovery_resources (sim_ctx_t *ctx, const char *group, const char *version);

void sim_api_discovery (sim_ctx_t *ctx, char **seg, int nseg);

void sim_api_version (sim_ctx_t *ctx);

#endif
