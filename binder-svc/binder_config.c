/*  binder_config: see binder_config.h. */
#include "binder_config.h"
#include "binder_defaults.h"
#include "bas_log.h"

#include <stddef.h>
#include <string.h>

const bas_flag_t binder_flags[] = {
    BAS_SVC_FLAGS (binder_config_t),
    BAS_KUBE_FLAGS (binder_config_t),
    {"work-endpoint", BAS_FLAG_STRING, offsetof (binder_config_t, work_endpoint), "ENDPOINT",
     "cache-svc's work ROUTER (connected)"},
    {"concurrency", BAS_FLAG_INT, offsetof (binder_config_t, concurrency), "N",
     "API writes in flight at once (credits announced to the cache)"},
    {"binder-id", BAS_FLAG_STRING, offsetof (binder_config_t, binder_id), "NAME",
     "name shown in the cache's logs (default host-pid)"},
    {"curve-server", BAS_FLAG_STRING, offsetof (binder_config_t, curve_server), "FILE",
     "cache-svc's public CURVE certificate"},
    {NULL},
};

void
binder_config_init (binder_config_t *cfg)
{
    memset (cfg, 0, sizeof *cfg);
    cfg->common.http = BINDER_HTTP;
    cfg->work_endpoint = BINDER_WORK_ENDPOINT;
    cfg->concurrency = BINDER_CONCURRENCY;
    cfg->kube.qps = BINDER_KUBE_QPS;
    cfg->kube.burst = BINDER_KUBE_BURST;
}

int
binder_config_check (const binder_config_t *cfg)
{
    if (cfg->concurrency < 1) {
        bas_error ("bad_flag", "flag=--concurrency value=%d msg=\"must be at least 1\"",
                   cfg->concurrency);
        return -1;
    }
    return 0;
}

bas_sock_opts_t
binder_config_sock_opts (const binder_config_t *cfg)
{
    bas_sock_opts_t opts = bas_sock_opts_default ();
    opts.curve_cert = cfg->common.curve_cert;
    opts.curve_server = cfg->curve_server;
    opts.heartbeat_timeout_ms = BINDER_ZMTP_TIMEOUT_MS;
    opts.reconnect_ivl_max_ms = BINDER_RECONNECT_MAX_MS;
    return opts;
}
