/*  sim_server: see sim_server.h.

    Design note: the loop is the whole concurrency story. Each turn it asks
    the API for its next timer and MHD for its own, polls MHD's epoll
    descriptor and the signalfd until the nearest of them, runs due timers
    (pod starts, bookmarks, watch ends), then lets MHD do its network work.
    Store changes made by either step wake watch connections synchronously;
    MHD's inter-thread channel (which MHD_ALLOW_SUSPEND_RESUME adds to its
    epoll set) makes the next poll return at once for them.
*/
#include "sim_server.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "bas_log.h"
#include "sim_clock.h"
#include "sim_defaults.h"
#include "sim_http.h"
#include "sim_buf.h"
#include "sim_load.h"

void
sim_options_defaults (sim_options_t *opts)
{
    memset (opts, 0, sizeof *opts);
    opts->port = SIM_DEFAULT_PORT;
    opts->bind_addr = SIM_DEFAULT_BIND;
    sim_api_config_defaults (&opts->api);
}

//  Write "port\n" to path atomically (temp file + rename), so a reader
//  never sees a partial file.
static int
s_write_ready (const char *path, int port)
{
    size_t len = strlen (path) + 16;
    char *tmp = malloc (len);
    if (!tmp)
        return -1;
    snprintf (tmp, len, "%s.tmp", path);
    FILE *f = fopen (tmp, "w");
    int rc = -1;
    if (f) {
        fprintf (f, "%d\n", port);
        if (fclose (f) == 0 && rename (tmp, path) == 0)
            rc = 0;
    }
    if (rc != 0)
        unlink (tmp);
    free (tmp);
    return rc;
}

//  A whole text file (PEM), or NULL with err naming the file.
static char *
s_read_text (const char *path, char *err, size_t errlen)
{
    FILE *f = fopen (path, "rb");
    if (!f) {
        snprintf (err, errlen, "%s: %s", path, strerror (errno));
        return NULL;
    }
    sim_buf_t buf = {0};
    char chunk[4096];
    size_t n;
    while ((n = fread (chunk, 1, sizeof chunk, f)) > 0 && buf.len < 1024 * 1024)
        sim_buf_append (&buf, chunk, n);
    fclose (f);
    if (!buf.data || !strstr (buf.data, "-----BEGIN ")) {
        snprintf (err, errlen, "%s: not a PEM file", path);
        sim_buf_clear (&buf);
        return NULL;
    }
    return sim_buf_detach (&buf, NULL);
}

int
sim_server_run (const sim_options_t *opts)
{
    int exit_code = 1;
    int sfd = -1;
    char *cert = NULL, *key = NULL;
    sim_http_t *http = NULL;
    char err[1024] = "";
    sim_api_t *api = sim_api_new (&opts->api);
    if (!api) {
        bas_error ("start_failed", "reason=\"the API could not be created (out of memory, or "
                                   "the embedded CRDs are unusable: see crds_invalid)\"");
        return 1;
    }
    for (int i = 0; i < opts->nloads; i++) {
        if (sim_load_path (api, opts->loads[i], err, sizeof err) < 0) {
            bas_error ("load_failed", "path=%s reason=\"%s\"", opts->loads[i], err);
            fprintf (stderr, "basalt-apisim: load failed: %s\n", err);
            goto done;
        }
    }
    //  Signals arrive on a descriptor the loop polls, not in a handler.
    sigset_t mask;
    sigemptyset (&mask);
    sigaddset (&mask, SIGTERM);
    sigaddset (&mask, SIGINT);
    sigprocmask (SIG_BLOCK, &mask, NULL);
    signal (SIGPIPE, SIG_IGN);
    sfd = signalfd (-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0) {
        bas_error ("start_failed", "reason=\"signalfd: %s\"", strerror (errno));
        goto done;
    }
    for (int i = 0; i < opts->nfaults; i++)
        if (sim_api_add_fault (api, opts->faults[i], err, sizeof err) != 0) {
            bas_error ("fault_rejected", "rule=\"%s\" reason=\"%s\"", opts->faults[i], err);
            fprintf (stderr, "basalt-apisim: --fault: %s\n", err);
            goto done;
        }
    if (opts->token_file && sim_api_set_token_file (api, opts->token_file, err, sizeof err) != 0) {
        bas_error ("token_file_failed", "reason=\"%s\"", err);
        fprintf (stderr, "basalt-apisim: --token-auth-file: %s\n", err);
        goto done;
    }
    if (opts->fault_latency_ms > 0)
        sim_api_set_latency (api, opts->fault_latency_ms);
    if (opts->tls_cert || opts->tls_key) {
        if (!opts->tls_cert || !opts->tls_key) {
            fprintf (stderr, "basalt-apisim: --tls-cert and --tls-key go together\n");
            goto done;
        }
        cert = s_read_text (opts->tls_cert, err, sizeof err);
        key = cert ? s_read_text (opts->tls_key, err, sizeof err) : NULL;
        if (!cert || !key) {
            bas_error ("tls_failed", "reason=\"%s\"", err);
            fprintf (stderr, "basalt-apisim: %s\n", err);
            goto done;
        }
    }
    http = sim_http_new (api, opts->bind_addr, opts->port, cert, key, err, sizeof err);
    if (!http) {
        bas_error ("listen_failed", "bind=%s port=%d reason=\"%s\"", opts->bind_addr, opts->port,
                   err);
        fprintf (stderr, "basalt-apisim: %s\n", err);
        goto done;
    }
    int port = sim_http_port (http);
    sim_api_set_port (api, port);
    if (opts->port == 0) {
        printf ("%d\n", port);
        fflush (stdout);
    }
    if (opts->ready_file && s_write_ready (opts->ready_file, port) != 0) {
        bas_error ("ready_file_failed", "path=%s reason=\"%s\"", opts->ready_file,
                   strerror (errno));
        goto done;
    }
    bas_info ("listening",
              "bind=%s port=%d tls=%s objects_rv=%llu run_delay_ms=%lld "
              "stop_delay_ms=%lld faults=%d",
              opts->bind_addr, port, cert ? "true" : "false",
              (unsigned long long)sim_store_rv (sim_api_store (api)),
              (long long)opts->api.run_delay_ms, (long long)opts->api.stop_delay_ms, opts->nfaults);

    struct pollfd fds[2] = {{.fd = sim_http_fd (http), .events = POLLIN},
                            {.fd = sfd, .events = POLLIN}};
    bool running = true;
    while (running) {
        int64_t now = sim_clock_mono_ms ();
        int64_t next = sim_api_tick (api, now);
        int64_t timeout = next == INT64_MAX ? -1 : next - now;
        if (timeout < 0 && next != INT64_MAX)
            timeout = 0;
        int64_t mhd = sim_http_timeout_ms (http);
        if (mhd >= 0 && (timeout < 0 || mhd < timeout))
            timeout = mhd;
        if (timeout > 60000 || timeout < 0)
            timeout = 60000;
        int rc = poll (fds, 2, (int)timeout);
        if (rc < 0 && errno != EINTR) {
            bas_error ("poll_failed", "reason=\"%s\"", strerror (errno));
            break;
        }
        if (rc > 0 && (fds[1].revents & POLLIN)) {
            struct signalfd_siginfo info;
            if (read (sfd, &info, sizeof info) == (ssize_t)sizeof info) {
                bas_info ("stopping", "signal=%u", info.ssi_signo);
                running = false;
            }
        }
        sim_api_tick (api, sim_clock_mono_ms ());
        sim_http_run (http);
    }
    exit_code = 0;
done:
    if (api)
        sim_api_finish_watches (api);
    sim_http_destroy (&http);
    sim_api_destroy (&api);
    if (sfd >= 0)
        close (sfd);
    free (cert);
    if (key)
        memset (key, 0, strlen (key));
    free (key);
    return exit_code;
}
