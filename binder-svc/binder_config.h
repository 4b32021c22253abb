/*  binder_config: binder-svc's flags and their defaults (binder_defaults.h). */
#ifndef BINDER_CONFIG_H
#define BINDER_CONFIG_H

#include "bas_kube.h"
#include "bas_sock.h"
#include "bas_svc.h"

typedef struct {
    bas_svc_flags_t common;    // the flags every service has
    const char *work_endpoint; // cache-svc's work ROUTER
    int concurrency;           // API writes in flight at once (credits)
    const char *binder_id;     // name in the cache's logs; NULL: host-pid
    bas_kube_flags_t kube;     // the API client's
    const char *curve_server;  // cache-svc's public CURVE certificate
} binder_config_t;

//  The flags table, for bas_svc_new; ends with {NULL}.
extern const bas_flag_t binder_flags[];

//  Set every field of cfg to its default.
void binder_config_init (binder_config_t *cfg);

//  0, or -1 (logged, naming the flag) when a value cannot work.
int binder_config_check (const binder_config_t *cfg);

//  The options of the DEALER to cache-svc: CURVE from the flags, the ZMTP
//  heartbeat timeout and reconnect interval of binder_defaults.h.
bas_sock_opts_t binder_config_sock_opts (const binder_config_t *cfg);

#endif
