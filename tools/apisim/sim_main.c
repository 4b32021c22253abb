/*  basalt-apisim: a simulated Kubernetes API server, the embedded default
    cluster and the test bed of Basalt. Flags only; everything else is in
    sim_server.c and the files it uses.
*/
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bas_log.h"
#include "sim_server.h"

static void
s_usage (FILE *out)
{
    fprintf (out,
             "usage: basalt-apisim [options]\n"
             "\n"
             "A simulated Kubernetes API server (nodes, pods, Volcano podgroups and queues,\n"
             "priority classes, namespaces, deployments and replicasets with their\n"
             "controllers; persistent volumes and claims, storage classes, CSI nodes and\n"
             "drivers, with a volume binder and provisioner; statefulsets, jobs, events,\n"
             "resource quotas, leases, service accounts, config maps, secrets, services,\n"
             "RBAC roles and bindings, pod disruption budgets and horizontal pod\n"
             "autoscalers stored only) with list, watch, create, update, patch, delete,\n"
             "binding and eviction.\n"
             "\n"
             "  --port N               listen port (default 8080; 0 = pick one and print it)\n"
             "  --bind ADDR            listen address (default 127.0.0.1)\n"
             "  --load PATH            load objects from a YAML/JSON file, or every\n"
             "                         *.yaml/*.yml/*.json in a directory (repeatable)\n"
             "  --run-delay-ms N       a bound pod becomes Running N ms after binding\n"
             "                         (default 100; -1 disables)\n"
             "  --stop-delay-ms N      a gracefully deleted pod stops and is deleted N ms\n"
             "                         after the delete, or at the end of its grace period\n"
             "                         if sooner (default 100; -1: the whole grace period)\n"
             "  --tls-cert PATH        serve HTTPS with this PEM certificate (and --tls-key)\n"
             "  --tls-key PATH         the certificate's PEM private key\n"
             "  --token-auth-file PATH accept only these bearer tokens (CSV token,user,uid;\n"
             "                         re-read when it changes); others get 401\n"
             "  --fault RULE           inject errors: verb:resource:rate:code[:retryAfterS],\n"
             "                         e.g. list:pods:0.5:503 or '*:*:0.1:429:1' (repeatable;\n"
             "                         verbs get list watch create update patch delete\n"
             "                         deletecollection *; 429 is APF's plain-text answer)\n"
             "  --fault-latency-ms N   add N ms to every API request\n"
             "                         (all faults can be changed at run time: POST, GET or\n"
             "                         DELETE /admin/faults; see tools/apisim/sim_fault.h)\n"
             "  GET /admin/audit counts the bindings accepted and those refused because the\n"
             "  pod was already on a node (the same node or another), for soak checkers.\n"
             "\n"
             "  Pods annotated basalt.dev/complete-after-ms: \"N\" finish N ms after they\n"
             "  start (exit code from basalt.dev/exit-code, default 0 = Succeeded).\n"
             "  --watch-window N       watch events kept per resource (default 10000)\n"
             "  --bookmark-interval-ms N  BOOKMARK period for watches that ask (default 1000)\n"
             "  --min-request-timeout N   watch length in s without timeoutSeconds (default 1800)\n"
             "  --rv-wait-ms N         a list, get or initial-events watch of a resourceVersion\n"
             "                         not reached yet waits N ms for it, then gets 504 \"Too\n"
             "                         large resource version\" (default 3000, kube-apiserver's)\n"
             "  --ready-file PATH      write \"port\\n\" to PATH once listening\n"
             "  --log-format text|json log line format (default text)\n"
             "  --v N                  log verbosity (2 logs every request)\n"
             "  --help                 this text\n"
             "  --version              print the version\n");
}

//  Parse a whole decimal integer within [min, max]; -1 on anything else.
static int
s_int (const char *text, long min, long max, long *value)
{
    char *end = NULL;
    long v = strtol (text, &end, 10);
    if (!*text || *end || v < min || v > max)
        return -1;
    *value = v;
    return 0;
}

int
main (int argc, char *argv[])
{
    enum {
        OPT_PORT = 1,
        OPT_BIND,
        OPT_LOAD,
        OPT_RUN_DELAY,
        OPT_STOP_DELAY,
        OPT_TLS_CERT,
        OPT_TLS_KEY,
        OPT_TOKEN_FILE,
        OPT_FAULT,
        OPT_FAULT_LATENCY,
        OPT_WINDOW,
        OPT_BOOKMARK,
        OPT_MIN_TIMEOUT,
        OPT_RV_WAIT,
        OPT_READY,
        OPT_LOG_FORMAT,
        OPT_V,
        OPT_HELP,
        OPT_VERSION
    };
    static const struct option options[] = {
        {"port", required_argument, NULL, OPT_PORT},
        {"bind", required_argument, NULL, OPT_BIND},
        {"load", required_argument, NULL, OPT_LOAD},
        {"run-delay-ms", required_argument, NULL, OPT_RUN_DELAY},
        {"stop-delay-ms", required_argument, NULL, OPT_STOP_DELAY},
        {"tls-cert", required_argument, NULL, OPT_TLS_CERT},
        {"tls-key", required_argument, NULL, OPT_TLS_KEY},
        {"token-auth-file", required_argument, NULL, OPT_TOKEN_FILE},
        {"fault", required_argument, NULL, OPT_FAULT},
        {"fault-latency-ms", required_argument, NULL, OPT_FAULT_LATENCY},
        {"watch-window", required_argument, NULL, OPT_WINDOW},
        {"bookmark-interval-ms", required_argument, NULL, OPT_BOOKMARK},
        {"min-request-timeout", required_argument, NULL, OPT_MIN_TIMEOUT},
        {"rv-wait-ms", required_argument, NULL, OPT_RV_WAIT},
        {"ready-file", required_argument, NULL, OPT_READY},
        {"log-format", required_argument, NULL, OPT_LOG_FORMAT},
        {"v", required_argument, NULL, OPT_V},
        {"help", no_argument, NULL, OPT_HELP},
        {"version", no_argument, NULL, OPT_VERSION},
        {NULL, 0, NULL, 0},
    };
    sim_options_t opts;
    sim_options_defaults (&opts);
    bas_log_format_t format = BAS_LOG_FORMAT_TEXT;
    long verbosity = 0;
    long value = 0;
    int c;
    opterr = 0;
    while ((c = getopt_long (argc, argv, "", options, NULL)) != -1) {
        const char *bad = NULL;
        switch (c) {
        case OPT_PORT:
            if (s_int (optarg, 0, 65535, &value) != 0)
                bad = "--port needs a number from 0 to 65535";
            opts.port = (int)value;
            break;
        case OPT_BIND:
            opts.bind_addr = optarg;
            break;
        case OPT_LOAD:
            if (opts.nloads == SIM_MAX_LOADS)
                bad = "too many --load flags";
            else
                opts.loads[opts.nloads++] = optarg;
            break;
        case OPT_RUN_DELAY:
            if (s_int (optarg, -1, 86400000L, &value) != 0)
                bad = "--run-delay-ms needs a number of ms (-1 disables)";
            opts.api.run_delay_ms = value;
            break;
        case OPT_STOP_DELAY:
            if (s_int (optarg, -1, 86400000L, &value) != 0)
                bad = "--stop-delay-ms needs a number of ms (-1: the grace period)";
            opts.api.stop_delay_ms = value;
            break;
        case OPT_TLS_CERT:
            opts.tls_cert = optarg;
            break;
        case OPT_TLS_KEY:
            opts.tls_key = optarg;
            break;
        case OPT_TOKEN_FILE:
            opts.token_file = optarg;
            break;
        case OPT_FAULT:
            if (opts.nfaults == SIM_MAX_LOADS)
                bad = "too many --fault flags";
            else
                opts.faults[opts.nfaults++] = optarg;
            break;
        case OPT_FAULT_LATENCY:
            if (s_int (optarg, 0, 600000L, &value) != 0)
                bad = "--fault-latency-ms needs a number of ms from 0 to 600000";
            opts.fault_latency_ms = value;
            break;
        case OPT_WINDOW:
            if (s_int (optarg, 1, 100000000L, &value) != 0)
                bad = "--watch-window needs a positive number";
            opts.api.watch_window = (size_t)value;
            break;
        case OPT_BOOKMARK:
            if (s_int (optarg, 1, 86400000L, &value) != 0)
                bad = "--bookmark-interval-ms needs a positive number";
            opts.api.bookmark_interval_ms = value;
            break;
        case OPT_MIN_TIMEOUT:
            if (s_int (optarg, 1, 86400L, &value) != 0)
                bad = "--min-request-timeout needs a positive number of seconds";
            opts.api.min_request_timeout_s = (int)value;
            break;
        case OPT_RV_WAIT:
            if (s_int (optarg, 0, 600000L, &value) != 0)
                bad = "--rv-wait-ms needs a number of ms from 0 to 600000";
            opts.api.rv_wait_ms = value;
            break;
        case OPT_READY:
            opts.ready_file = optarg;
            break;
        case OPT_LOG_FORMAT:
            if (bas_log_format_parse (optarg, &format) != 0)
                bad = "--log-format must be text or json";
            break;
        case OPT_V:
            if (s_int (optarg, 0, 10, &verbosity) != 0)
                bad = "--v needs a number from 0 to 10";
            break;
        case OPT_HELP:
            s_usage (stdout);
            return 0;
        case OPT_VERSION:
            printf ("basalt-apisim %s\n", BASALT_VERSION);
            return 0;
        case ':':
            fprintf (stderr, "basalt-apisim: option %s needs a value\n", argv[optind - 1]);
            s_usage (stderr);
            return 2;
        default:
            fprintf (stderr, "basalt-apisim: unknown option %s\n", argv[optind - 1]);
            s_usage (stderr);
            return 2;
        }
        if (bad) {
            fprintf (stderr, "basalt-apisim: %s (got \"%s\")\n", bad, optarg);
            s_usage (stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf (stderr, "basalt-apisim: unexpected argument %s\n", argv[optind]);
        s_usage (stderr);
        return 2;
    }
    bas_log_init ("apisim", (int)verbosity, format);
    return sim_server_run (&opts);
}
