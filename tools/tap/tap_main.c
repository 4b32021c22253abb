/*  basalt-tap: prints the messages Basalt's services send and receive.

    Every service started with `--tap ENDPOINT` mirrors each message it
    sends or receives to an XPUB socket as [type][info][header][body], where
    info is "svc=… epoch=… dir=in|out peer=… time_us=… tap_seq=…" (bas_svc.h).
    This tool subscribes to one or more such endpoints and decodes every
    message generically from the protobuf-c descriptors (bas_pbjson), so no
    message type needs code here.

        basalt-tap [--json] [--type GLOB] [--name NAME] [--service SVC]
                   [--stats] [--record FILE] [--read FILE]
                   [--curve-cert FILE --curve-server FILE] ENDPOINT...

    A tap on tcp:// is a CURVE server that lets in only the certificates in
    its service's --curve-clients DIR: this tool then connects with its own
    certificate (--curve-cert, whose public part is in DIR) and the
    service's public one (--curve-server), and refuses a tcp:// endpoint
    without them. ipc:// needs neither.

    --name follows one object: the messages naming it and, from the first
    on, those carrying its uid (Commit, CommitResult, Work, WorkResult).
    An endpoint silent for 5 s gets one warning on stderr.

    --stats prints, every second, the count and rate of each message type on
    each link (service, direction, peer), and the messages each service's
    tap dropped (gaps in tap_seq). --record writes a capture
    (length-prefixed frames) that --read replays to the same printers; with
    --read, rates are computed over the capture's own time span.
*/
#include "bas_log.h"
#include "bas_util.h"
#include "bas_msg.h"
#include "bas_pbjson.h"
#include "bas_sock.h"

#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
    bool json;
    const char *type_glob;
    const char *name;
    const char *service;
    bool stats;
    const char *record;
    const char *read;
    const char *curve_cert;   // own CURVE certificate (tcp:// endpoints)
    const char *curve_server; // the service's public CURVE certificate (tcp:// endpoints)
} s_opts_t;

//  Counts of one message type on one link.
typedef struct {
    char link[160];  // "svc dir peer"
    char type[64];   // the message's short name
    unsigned long n; // in the current interval
    unsigned long total;
    int64_t first_us; // time_us of the first and last message seen
    int64_t last_us;
} s_stat_t;

//  Tap sequence of one service process, to see its drops.
typedef struct {
    char svc[96];       // "svc epoch"
    uint64_t last_seq;  // last tap_seq seen (0: none yet)
    unsigned long gaps; // messages it dropped, as seen from here
} s_seq_t;

//  One endpoint subscribed to.
typedef struct {
    const char *endpoint;
    zsock_t *sock;
    bool heard;  // a message came from it
    bool warned; // its silence was reported
} s_end_t;

typedef struct {
    s_opts_t opts;
    FILE *record;
    zhashx_t *names;    // --name: the name, and the uids and session ids learnt with it
    zhashx_t *work_ids; // --name: work_id of each Work that mentions them, until its result
    bool names_full;    // stopped learning (S_NAMES_MAX)
    zhashx_t *stats;    // "link type" -> s_stat_t
    zhashx_t *seqs;     // "svc epoch" -> s_seq_t
    unsigned long seen;
    unsigned long bad;
} tap_t;

#define S_NAMES_MAX 100000 // uids and session ids learnt for --name, at most
#define S_SILENT_MS 5000   // an endpoint silent this long gets a warning

// ------------------------------------------------------------ --name

//  --name NAME matches the messages that mention NAME, and from the first
//  of them on, those that mention what it carries with it: the object's
//  uid (a Commit's placements, a CommitResult's rejections and the binder
//  work name pods by uid), the session_id of a Commit that mentions it (so
//  its CommitResult), and the work_id of a Work that mentions it (so its
//  WorkResult).
typedef struct {
    tap_t *self;
    bool hit;
    const ProtobufCMessage *owners[64]; // messages holding a matched string
    int nowners;
} s_scan_t;

static void
s_scan_string (void *arg, const ProtobufCMessage *owner, const char *field, const char *value)
{
    (void)field;
    s_scan_t *sc = arg;
    if (!zhashx_lookup (sc->self->names, value))
        return;
    sc->hit = true;
    if (sc->nowners < (int)(sizeof sc->owners / sizeof sc->owners[0]))
        sc->owners[sc->nowners++] = owner;
}

static void
s_learn (tap_t *self, const char *value)
{
    if (zhashx_lookup (self->names, value))
        return;
    if (zhashx_size (self->names) >= S_NAMES_MAX) {
        if (!self->names_full)
            fprintf (stderr, "basalt-tap: --name: %d uids learnt; no more are followed\n",
                     S_NAMES_MAX);
        self->names_full = true;
        return;
    }
    zhashx_insert (self->names, value, (void *)"");
}

static void
s_learn_string (void *arg, const ProtobufCMessage *owner, const char *field, const char *value)
{
    s_scan_t *sc = arg;
    if (!*value)
        return;
    for (int i = 0; i < sc->nowners; i++)
        if (sc->owners[i] == owner &&
            (!strcmp (field, "uid") || !strcmp (field, "pod_uid") || !strcmp (field, "job_uid"))) {
            s_learn (sc->self, value);
            return;
        }
}

//  A top-level uint64 field of m by name, if set.
static bool
s_uint64 (const ProtobufCMessage *m, const char *name, uint64_t *v)
{
    const ProtobufCFieldDescriptor *f =
        protobuf_c_message_descriptor_get_field_by_name (m->descriptor, name);
    if (!f || f->type != PROTOBUF_C_TYPE_UINT64 || f->label == PROTOBUF_C_LABEL_REPEATED)
        return false;
    *v = *(const uint64_t *)((const char *)m + f->offset);
    return *v != 0;
}

//  A top-level string field of m by name, if set and not empty.
static const char *
s_string (const ProtobufCMessage *m, const char *name)
{
    const ProtobufCFieldDescriptor *f =
        protobuf_c_message_descriptor_get_field_by_name (m->descriptor, name);
    if (!f || f->type != PROTOBUF_C_TYPE_STRING || f->label == PROTOBUF_C_LABEL_REPEATED)
        return NULL;
    const char *v = *(const char *const *)((const char *)m + f->offset);
    return v && *v ? v : NULL;
}

static bool
s_name_matches (tap_t *self, const ProtobufCMessage *m)
{
    char key[32];
    uint64_t id;
    bool result = strcmp (m->descriptor->short_name, "WorkResult") == 0;
    if (result && s_uint64 (m, "work_id", &id)) {
        snprintf (key, sizeof key, "%llu", (unsigned long long)id);
        if (zhashx_lookup (self->work_ids, key))
            return true; // kept: the result is mirrored by binder and cache
    }
    s_scan_t sc = {.self = self};
    bas_pbjson_strings (m, s_scan_string, &sc);
    if (!sc.hit)
        return false;
    bas_pbjson_strings (m, s_learn_string, &sc);
    const char *session = s_string (m, "session_id");
    if (session && strcmp (m->descriptor->short_name, "Commit") == 0)
        s_learn (self, session);
    if (strcmp (m->descriptor->short_name, "Work") == 0 && s_uint64 (m, "work_id", &id) &&
        zhashx_size (self->work_ids) < S_NAMES_MAX) {
        snprintf (key, sizeof key, "%llu", (unsigned long long)id);
        zhashx_update (self->work_ids, key, (void *)"");
    }
    return true;
}

// ------------------------------------------------------------ messages

static void
s_info_field (const char *info, const char *key, char *out, size_t len)
{
    out[0] = 0;
    char pat[32];
    snprintf (pat, sizeof pat, "%s=", key);
    const char *p = strstr (info, pat);
    if (!p)
        return;
    p += strlen (pat);
    size_t n = strcspn (p, " ");
    snprintf (out, len, "%.*s", (int)(n < len ? n : len - 1), p);
}

static void s_track_seq (tap_t *self, const char *svc, const char *epoch, uint64_t seq);

//  An integer from the tap's info frame as a JSON integer, exactly (cJSON
//  would print 1795460285300840 as 1.79546028530084e+15); text that is
//  not a decimal integer stays a string.
static void
s_add_int (cJSON *out, const char *key, const char *text)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll (text, &end, 10);
    if (!*text || *end || errno) {
        cJSON_AddStringToObject (out, key, text);
        return;
    }
    char buf[32];
    snprintf (buf, sizeof buf, "%lld", v);
    cJSON_AddRawToObject (out, key, buf);
}

//  Handle one tapped message: 4 frames. Returns 0, or -1 when malformed.
static int
s_handle (tap_t *self, zmsg_t *msg)
{
    if (zmsg_size (msg) != 4) {
        self->bad++;
        return -1;
    }
    zframe_t *type = zmsg_first (msg);
    zframe_t *info = zmsg_next (msg);
    zframe_t *header = zmsg_next (msg);
    zframe_t *body = zmsg_next (msg);
    const ProtobufCMessageDescriptor *desc =
        bas_msgtype_lookup ((const char *)zframe_data (type), zframe_size (type));
    char infostr[512];
    snprintf (infostr, sizeof infostr, "%.*s", (int)zframe_size (info),
              (const char *)zframe_data (info));
    char svc[64], dir[8], peer[64], when[32], epoch[32], seq[32];
    s_info_field (infostr, "svc", svc, sizeof svc);
    s_info_field (infostr, "dir", dir, sizeof dir);
    s_info_field (infostr, "peer", peer, sizeof peer);
    s_info_field (infostr, "time_us", when, sizeof when);
    s_info_field (infostr, "epoch", epoch, sizeof epoch);
    s_info_field (infostr, "tap_seq", seq, sizeof seq);
    s_track_seq (self, svc, epoch, strtoull (seq, NULL, 10));
    if (!desc) {
        self->bad++;
        fprintf (stderr, "basalt-tap: unknown message type \"%.*s\" from %s\n",
                 (int)zframe_size (type), (const char *)zframe_data (type), svc);
        return -1;
    }
    if (self->opts.type_glob && fnmatch (self->opts.type_glob, desc->name, 0) != 0 &&
        fnmatch (self->opts.type_glob, desc->short_name, 0) != 0)
        return 0;
    if (self->opts.service && strcmp (self->opts.service, svc) != 0)
        return 0;
    Basalt__V1__Header *h =
        basalt__v1__header__unpack (NULL, zframe_size (header), zframe_data (header));
    ProtobufCMessage *m =
        protobuf_c_message_unpack (desc, NULL, zframe_size (body), zframe_data (body));
    if (!h || !m) {
        self->bad++;
        fprintf (stderr, "basalt-tap: %s from %s does not decode\n", desc->name, svc);
        if (h)
            basalt__v1__header__free_unpacked (h, NULL);
        if (m)
            protobuf_c_message_free_unpacked (m, NULL);
        return -1;
    }
    if (self->opts.name && !s_name_matches (self, m)) {
        basalt__v1__header__free_unpacked (h, NULL);
        protobuf_c_message_free_unpacked (m, NULL);
        return 0;
    }
    self->seen++;
    if (self->record) {
        for (zframe_t *f = zmsg_first (msg); f; f = zmsg_next (msg)) {
            uint32_t n = (uint32_t)zframe_size (f);
            fwrite (&n, sizeof n, 1, self->record);
            fwrite (zframe_data (f), 1, n, self->record);
        }
        fflush (self->record);
    }
    if (self->opts.stats) {
        char link[160], key[256];
        snprintf (link, sizeof link, "%s %s %s", svc, dir, peer);
        snprintf (key, sizeof key, "%s %s", link, desc->short_name);
        s_stat_t *s = zhashx_lookup (self->stats, key);
        if (!s) {
            s = bas_alloc (sizeof *s);
            snprintf (s->link, sizeof s->link, "%s", link);
            snprintf (s->type, sizeof s->type, "%s", desc->short_name);
            s->first_us = atoll (when);
            zhashx_insert (self->stats, key, s);
        }
        s->n++;
        s->total++;
        s->last_us = atoll (when);
    } else {
        cJSON *out = cJSON_CreateObject ();
        s_add_int (out, "time_us", when);
        cJSON_AddStringToObject (out, "svc", svc);
        cJSON_AddStringToObject (out, "dir", dir);
        cJSON_AddStringToObject (out, "peer", peer);
        s_add_int (out, "tap_seq", seq);
        cJSON_AddStringToObject (out, "type", desc->name);
        cJSON_AddItemToObject (out, "header", bas_pbjson_from_message (&h->base));
        cJSON *bodyjson = bas_pbjson_from_message (m);
        if (self->opts.json) {
            cJSON_AddItemToObject (out, "body", bodyjson);
            char *line = cJSON_PrintUnformatted (out);
            printf ("%s\n", line);
            free (line);
        } else {
            char *b = cJSON_PrintUnformatted (bodyjson);
            size_t blen = strlen (b);
            printf ("%s %-14s %-3s %-14s %-26s seq=%llu %.*s%s\n", when, svc, dir, peer,
                    desc->short_name, (unsigned long long)h->seq, (int)(blen > 160 ? 160 : blen), b,
                    blen > 160 ? "…" : "");
            free (b);
            cJSON_Delete (bodyjson);
        }
        cJSON_Delete (out);
        fflush (stdout);
    }
    basalt__v1__header__free_unpacked (h, NULL);
    protobuf_c_message_free_unpacked (m, NULL);
    return 0;
}

//  Follow one service process's tap_seq: a jump forward is messages its
//  tap dropped; a lower number is a restart of the numbering.
static void
s_track_seq (tap_t *self, const char *svc, const char *epoch, uint64_t seq)
{
    if (!seq)
        return; // a sender without tap_seq
    char key[96];
    snprintf (key, sizeof key, "%s %s", svc, epoch);
    s_seq_t *s = zhashx_lookup (self->seqs, key);
    if (!s) {
        s = bas_alloc (sizeof *s);
        snprintf (s->svc, sizeof s->svc, "%s", key);
        zhashx_insert (self->seqs, key, s);
    } else if (seq > s->last_seq + 1)
        s->gaps += seq - s->last_seq - 1;
    s->last_seq = seq;
}

static int
s_stat_cmp (const void *a, const void *b)
{
    const s_stat_t *x = *(const s_stat_t *const *)a, *y = *(const s_stat_t *const *)b;
    int c = strcmp (x->link, y->link);
    return c ? c : strcmp (x->type, y->type);
}

//  One table: link, type, count in the interval, its rate, and the total.
//  `seconds` <= 0 (a replay) computes each rate over its own first..last.
static void
s_print_stats (tap_t *self, double seconds)
{
    size_t n = zhashx_size (self->stats), i = 0;
    s_stat_t **rows = bas_alloc (sizeof *rows * (n ? n : 1));
    for (s_stat_t *s = zhashx_first (self->stats); s; s = zhashx_next (self->stats))
        rows[i++] = s;
    qsort (rows, n, sizeof *rows, s_stat_cmp);
    printf ("%-44s %-22s %10s %10s %10s\n", "link (svc dir peer)", "type", "count", "per_s",
            "total");
    for (i = 0; i < n; i++) {
        s_stat_t *s = rows[i];
        double span = seconds > 0 ? seconds : (double)(s->last_us - s->first_us) / 1e6;
        printf ("%-44s %-22s %10lu %10.1f %10lu\n", s->link, s->type, s->n,
                span > 0 ? (double)s->n / span : 0.0, s->total);
        s->n = 0;
    }
    for (s_seq_t *q = zhashx_first (self->seqs); q; q = zhashx_next (self->seqs))
        printf ("dropped %-36s %10lu\n", q->svc, q->gaps);
    printf ("\n");
    free (rows);
    fflush (stdout);
}

static int
s_replay (tap_t *self, const char *path)
{
    FILE *f = fopen (path, "rb");
    if (!f) {
        fprintf (stderr, "basalt-tap: cannot read %s\n", path);
        return 1;
    }
    int rc = 0;
    while (!feof (f)) {
        zmsg_t *msg = zmsg_new ();
        int frames = 0;
        for (; frames < 4; frames++) {
            uint32_t n;
            if (fread (&n, sizeof n, 1, f) != 1)
                break;
            if (n > (64u << 20)) {
                fprintf (stderr, "basalt-tap: %s: frame of %u bytes is not a capture\n", path, n);
                rc = 1;
                break;
            }
            zframe_t *fr = zframe_new (NULL, n);
            if (n && fread (zframe_data (fr), 1, n, f) != n) {
                zframe_destroy (&fr);
                fprintf (stderr, "basalt-tap: %s is truncated\n", path);
                rc = 1;
                break;
            }
            zmsg_append (msg, &fr);
        }
        if (frames == 4)
            s_handle (self, msg);
        zmsg_destroy (&msg);
        if (frames != 4)
            break;
    }
    fclose (f);
    if (self->opts.stats)
        s_print_stats (self, 0);
    return rc;
}

static void
s_destroy (tap_t *self)
{
    zhashx_destroy (&self->stats);
    zhashx_destroy (&self->seqs);
    zhashx_destroy (&self->names);
    zhashx_destroy (&self->work_ids);
}

static void
s_usage (FILE *out)
{
    fprintf (out, "Usage: basalt-tap [--json] [--type GLOB] [--name NAME] [--service SVC]\n"
                  "                  [--stats] [--record FILE] [--read FILE]\n"
                  "                  [--curve-cert FILE --curve-server FILE] ENDPOINT...\n"
                  "Watch the messages Basalt's services send and receive, from their --tap\n"
                  "endpoints (e.g. ipc:///tmp/basalt/cache.tap). A tap on tcp:// lets in only\n"
                  "the certificates in its service's --curve-clients DIR: connect to it with\n"
                  "--curve-cert and --curve-server.\n"
                  "\n"
                  "  --json          one JSON object per message: time_us, svc, dir, peer,\n"
                  "                  tap_seq, type, header and body (integers as integers)\n"
                  "  --type GLOB     only messages whose type matches (Commit, *Result)\n"
                  "  --name NAME     only messages that mention NAME (a pod, PodGroup, node or\n"
                  "                  queue name, or a uid), and from the first on, those that\n"
                  "                  carry its uid: the Commit placing a pod, that Commit's\n"
                  "                  CommitResult, the Work binding it and its WorkResult\n"
                  "  --service SVC   only messages mirrored by service SVC (cache-svc, ...)\n"
                  "  --stats         no messages: a count per link and type, and gaps in\n"
                  "                  tap_seq (messages the tap dropped), every second\n"
                  "  --record FILE   also write every message received to FILE\n"
                  "  --read FILE     replay a recorded FILE instead of connecting\n"
                  "  --curve-cert FILE\n"
                  "                  this tool's CURVE certificate, for tcp:// (FILE public,\n"
                  "                  FILE_secret secret); its public part must be in the\n"
                  "                  service's --curve-clients DIR\n"
                  "  --curve-server FILE\n"
                  "                  the service's public CURVE certificate (the public part\n"
                  "                  of its --curve-cert), for tcp://\n"
                  "  --help          this text\n"
                  "  --version       print the version and exit\n");
}

int
main (int argc, char **argv)
{
    tap_t self = {0};
    static const struct option options[] = {{"json", no_argument, NULL, 'j'},
                                            {"type", required_argument, NULL, 't'},
                                            {"name", required_argument, NULL, 'n'},
                                            {"service", required_argument, NULL, 's'},
                                            {"stats", no_argument, NULL, 'S'},
                                            {"record", required_argument, NULL, 'r'},
                                            {"read", required_argument, NULL, 'R'},
                                            {"help", no_argument, NULL, 'h'},
                                            {"version", no_argument, NULL, 'V'},
                                            {"curve-cert", required_argument, NULL, 'c'},
                                            {"curve-server", required_argument, NULL, 'C'},
                                            {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long (argc, argv, "", options, NULL)) != -1) {
        switch (c) {
        case 'j':
            self.opts.json = true;
            break;
        case 't':
            self.opts.type_glob = optarg;
            break;
        case 'n':
            self.opts.name = optarg;
            break;
        case 's':
            self.opts.service = optarg;
            break;
        case 'S':
            self.opts.stats = true;
            break;
        case 'r':
            self.opts.record = optarg;
            break;
        case 'R':
            self.opts.read = optarg;
            break;
        case 'c':
            self.opts.curve_cert = optarg;
            break;
        case 'C':
            self.opts.curve_server = optarg;
            break;
        case 'h':
            s_usage (stdout);
            return 0;
        case 'V':
            printf ("basalt-tap %s\n", BASALT_VERSION);
            return 0;
        default:
            s_usage (stderr);
            return 2;
        }
    }
    self.stats = zhashx_new ();
    zhashx_set_destructor (self.stats, (zhashx_destructor_fn *)zstr_free);
    self.seqs = zhashx_new ();
    zhashx_set_destructor (self.seqs, (zhashx_destructor_fn *)zstr_free);
    self.names = zhashx_new ();
    self.work_ids = zhashx_new ();
    if (self.opts.name)
        zhashx_insert (self.names, self.opts.name, (void *)"");
    if (self.opts.read) {
        int rc = s_replay (&self, self.opts.read);
        s_destroy (&self);
        return rc;
    }
    if (optind >= argc) {
        s_usage (stderr);
        return 2;
    }
    if (self.opts.record && !(self.record = fopen (self.opts.record, "wb"))) {
        fprintf (stderr, "basalt-tap: cannot write %s\n", self.opts.record);
        return 1;
    }
    zsys_set_logstream (NULL);
    zpoller_t *poller = zpoller_new (NULL);
    int nends = argc - optind;
    s_end_t *ends = bas_alloc (sizeof *ends * (size_t)nends);
    bas_sock_opts_t sock_opts = bas_sock_opts_default ();
    sock_opts.curve_cert = self.opts.curve_cert;
    sock_opts.curve_server = self.opts.curve_server;
    for (int i = 0; i < nends; i++) {
        char err[512];
        const char *endpoint = argv[optind + i];
        //  No plain tcp:// (DESIGN.md): the service refuses a client without
        //  a certificate it knows, so say what is missing instead of waiting.
        if (strncmp (endpoint, "tcp://", 6) == 0 &&
            !(self.opts.curve_cert && self.opts.curve_server)) {
            fprintf (stderr,
                     "basalt-tap: %s: a tap on tcp:// is CURVE-authenticated; give --curve-cert "
                     "FILE (this tool's certificate, its public part in the service's "
                     "--curve-clients DIR) and --curve-server FILE (the service's public "
                     "certificate)\n",
                     endpoint);
            return 1;
        }
        ends[i].endpoint = endpoint;
        ends[i].sock = bas_sock_new (ZMQ_SUB, endpoint, false, &sock_opts, err, sizeof err);
        if (!ends[i].sock) {
            fprintf (stderr, "basalt-tap: %s\n", err);
            return 1;
        }
        struct stat st;
        if (strncmp (endpoint, "ipc://", 6) == 0 && stat (endpoint + 6, &st) != 0)
            fprintf (stderr,
                     "basalt-tap: %s: no socket file there yet; waiting for a service "
                     "started with --tap %s\n",
                     endpoint, endpoint);
        zpoller_add (poller, ends[i].sock);
    }
    int64_t started = zclock_mono ();
    int64_t last = zclock_mono ();
    while (!zsys_interrupted) {
        zsock_t *which = zpoller_wait (poller, 1000);
        if (which) {
            zmsg_t *msg = zmsg_recv (which);
            if (msg)
                s_handle (&self, msg);
            zmsg_destroy (&msg);
            for (int i = 0; i < nends; i++)
                if (ends[i].sock == which)
                    ends[i].heard = true;
        } else if (zpoller_terminated (poller))
            break;
        //  Say once when an endpoint stays silent: nothing listening there
        //  looks the same as nothing to show.
        for (int i = 0; i < nends && zclock_mono () - started >= S_SILENT_MS; i++)
            if (!ends[i].heard && !ends[i].warned) {
                ends[i].warned = true;
                fprintf (stderr,
                         "basalt-tap: nothing received from %s in %d s: no service is tapping "
                         "there, or it is idle%s; still waiting\n",
                         ends[i].endpoint, S_SILENT_MS / 1000,
                         strncmp (ends[i].endpoint, "tcp://", 6) == 0
                             ? ", or it does not let this --curve-cert in (--curve-clients)"
                             : "");
            }
        if (self.opts.stats && zclock_mono () - last >= 1000) {
            s_print_stats (&self, (double)(zclock_mono () - last) / 1000.0);
            last = zclock_mono ();
        }
    }
    for (int i = 0; i < nends; i++)
        zsock_destroy (&ends[i].sock);
    free (ends);
    zpoller_destroy (&poller);
    s_destroy (&self);
    if (self.record)
        fclose (self.record);
    return 0;
}
