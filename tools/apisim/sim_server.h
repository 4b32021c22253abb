/*  sim_server: one basalt-apisim process: the API, its HTTP server and the
    single loop that drives both (poll on MHD's epoll descriptor and a
    signalfd for SIGTERM/SIGINT, with the nearest timer as the timeout).
*/
#ifndef SIM_SERVER_H
#define SIM_SERVER_H

#include "sim_api.h"

#define SIM_MAX_LOADS 64

typedef struct {
    int port;                          // listen port, 0 = any
    const char *bind_addr;             // listen address
    const char *loads[SIM_MAX_LOADS];  // --load paths, in order
    int nloads;                        // how many
    const char *ready_file;            // written with "port\n" once listening, or NULL
    const char *tls_cert;              // PEM certificate file: serve HTTPS, or NULL
    const char *tls_key;               // PEM private key file (with tls_cert)
    const char *token_file;            // --token-auth-file, or NULL
    const char *faults[SIM_MAX_LOADS]; // --fault rules, in order
    int nfaults;                       // how many
    int64_t fault_latency_ms;          // --fault-latency-ms
    sim_api_config_t api;              // API tunables
} sim_options_t;

//  Fill defaults (sim_defaults.h).
void sim_options_defaults (sim_options_t *opts);

//  Run until SIGTERM or SIGINT. Returns the process exit code: 0 on a clean
//  stop, 1 when loading or listening fails.
int sim_server_run (const sim_options_t *opts);

#endif
