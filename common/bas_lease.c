/*  bas_lease: see bas_lease.h.

    One request at a time: a tick that finds one still out does nothing but
    check the deadline. A leader's tick PUTs its renewal straight away with
    the resourceVersion its last write returned (no GET first); a
    candidate's tick GETs, then creates or PUTs when the Lease is free.
*/
#include "bas_lease.h"
#include "bas_util.h"
#include "bas_log.h"
#include "bas_msg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

//  A held lease is looked at this long after it expires on our clock.
#define S_EXPIRY_SLACK_MS 50

typedef enum { S_OP_GET, S_OP_CREATE, S_OP_TAKE, S_OP_RENEW, S_OP_RELEASE } s_op_t;

struct _bas_lease_t {
    zloop_t *loop;
    bas_kube_t *kube;
    bas_lease_config_t cfg; // strings owned
    bas_lease_fn *fn;
    void *arg;
    int timer;
    int expiry_timer;          // one-shot at a held lease's expiry, or -1
    char item_path[1024];      // .../namespaces/NS/leases/NAME
    char collection_path[512]; // .../namespaces/NS/leases
    bool leading;
    bool ended;         // leadership was lost or given up: never again
    bool in_flight;     // a request is out
    s_op_t op;          // the one out
    int64_t sent_ms;    // when it was sent
    int64_t renewed_ms; // when the last successful take or renewal was sent
    //  The record as last read or written.
    char *rv;
    char *holder;
    char *renew_time;
    char *acquire_time;
    int duration_s;
    int transitions;
    int64_t observed_ms; // when (our clock) the record last changed
    bas_lease_released_fn *released;
    void *released_arg;
    bas_lease_stats_t stats;
};

//  MicroTime as the API writes it: 2026-11-25T22:20:17.123456Z.
static void
s_micro_time (char *buf, size_t len)
{
    int64_t us = bas_now_us ();
    time_t secs = (time_t)(us / 1000000);
    struct tm tm;
    gmtime_r (&secs, &tm);
    char date[32];
    strftime (date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf (buf, len, "%s.%06dZ", date, (int)(us % 1000000));
}

int
bas_lease_config_check (const bas_lease_config_t *cfg, char *err, size_t errlen)
{
    if (!cfg->name_space || !*cfg->name_space || !cfg->name || !*cfg->name) {
        snprintf (err, errlen, "the lease needs a namespace and a name");
        return -1;
    }
    if (cfg->retry_period_ms <= 0 || cfg->renew_deadline_ms <= 0 || cfg->lease_duration_ms <= 0) {
        snprintf (err, errlen, "lease duration, renew deadline and retry period must be > 0");
        return -1;
    }
    if (cfg->lease_duration_ms <= cfg->renew_deadline_ms) {
        snprintf (err, errlen,
                  "the lease duration (%lld ms) must be greater than the renew deadline (%lld ms)",
                  (long long)cfg->lease_duration_ms, (long long)cfg->renew_deadline_ms);
        return -1;
    }
    if (cfg->renew_deadline_ms * 10 <= cfg->retry_period_ms * 12) {
        snprintf (err, errlen,
                  "the renew deadline (%lld ms) must be greater than 1.2 x the retry period (%lld "
                  "ms)",
                  (long long)cfg->renew_deadline_ms, (long long)cfg->retry_period_ms);
        return -1;
    }
    return 0;
}

//  The end of leadership: told once, never taken back.
static void
s_end (bas_lease_t *self, const char *reason)
{
    if (!self->leading)
        return;
    self->leading = false;
    self->ended = true;
    bas_warn ("leader_lost", "lease=%s/%s identity=%s reason=\"%s\"", self->cfg.name_space,
              self->cfg.name, self->cfg.identity, reason);
    if (self->fn)
        self->fn (self->arg, false, reason);
}

//  True while the last renewal is recent enough; ends leadership if not.
static bool
s_check_deadline (bas_lease_t *self)
{
    if (!self->leading)
        return false;
    if (bas_mono_ms () - self->renewed_ms >= self->cfg.renew_deadline_ms) {
        s_end (self, "no renewal within the renew deadline");
        return false;
    }
    return true;
}

static void s_done (void *arg, const bas_kube_response_t *r);
static int s_on_expiry (zloop_t *loop, int timer_id, void *arg);

static void
s_send (bas_lease_t *self, s_op_t op, const char *method, const char *path, const char *body)
{
    self->op = op;
    self->sent_ms = bas_mono_ms ();
    self->stats.attempts++;
    if (bas_kube_request (self->kube, method, path, NULL, body, s_done, self) == 0)
        self->in_flight = true;
    else
        self->stats.failures++;
}

//  The Lease object with our record (or the empty one of a release).
static char *
s_body (bas_lease_t *self, s_op_t op)
{
    char now[64];
    s_micro_time (now, sizeof now);
    cJSON *o = cJSON_CreateObject ();
    cJSON_AddStringToObject (o, "apiVersion", "coordination.k8s.io/v1");
    cJSON_AddStringToObject (o, "kind", "Lease");
    cJSON *meta = cJSON_AddObjectToObject (o, "metadata");
    cJSON_AddStringToObject (meta, "name", self->cfg.name);
    cJSON_AddStringToObject (meta, "namespace", self->cfg.name_space);
    if (op != S_OP_CREATE && self->rv && *self->rv)
        cJSON_AddStringToObject (meta, "resourceVersion", self->rv);
    cJSON *spec = cJSON_AddObjectToObject (o, "spec");
    int duration_s = (int)((self->cfg.lease_duration_ms + 999) / 1000);
    int transitions = self->transitions;
    const char *acquired = now;
    if (op == S_OP_TAKE && self->holder && *self->holder)
        transitions++; // a new holder
    if (op == S_OP_RENEW && self->acquire_time && *self->acquire_time)
        acquired = self->acquire_time;
    if (op == S_OP_RELEASE) {
        duration_s = 1;
        acquired = now;
    } else
        cJSON_AddStringToObject (spec, "holderIdentity", self->cfg.identity);
    cJSON_AddNumberToObject (spec, "leaseDurationSeconds", duration_s);
    cJSON_AddStringToObject (spec, "acquireTime", acquired);
    cJSON_AddStringToObject (spec, "renewTime", now);
    cJSON_AddNumberToObject (spec, "leaseTransitions", transitions);
    char *text = cJSON_PrintUnformatted (o);
    cJSON_Delete (o);
    if (!text)
        abort ();
    return text;
}

static void
s_write (bas_lease_t *self, s_op_t op)
{
    char *body = s_body (self, op);
    if (op == S_OP_CREATE)
        s_send (self, op, "POST", self->collection_path, body);
    else
        s_send (self, op, "PUT", self->item_path, body);
    free (body);
}

//  Take in a Lease read or written: note when it changed.
static void
s_observe (bas_lease_t *self, const cJSON *lease)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive (lease, "metadata");
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive (lease, "spec");
    const char *rv =
        cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (meta, "resourceVersion"));
    const char *holder =
        cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (spec, "holderIdentity"));
    const char *renew = cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (spec, "renewTime"));
    const char *acquire =
        cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (spec, "acquireTime"));
    const cJSON *duration = cJSON_GetObjectItemCaseSensitive (spec, "leaseDurationSeconds");
    const cJSON *transitions = cJSON_GetObjectItemCaseSensitive (spec, "leaseTransitions");
    bool changed = !self->rv || strcmp (self->rv, rv ? rv : "") != 0 ||
                   strcmp (self->holder, holder ? holder : "") != 0 ||
                   strcmp (self->renew_time, renew ? renew : "") != 0;
    if (changed) {
        self->observed_ms = bas_mono_ms ();
        if (strcmp (self->holder ? self->holder : "", holder ? holder : "") != 0)
            bas_info ("lease_holder", "lease=%s/%s holder=%s", self->cfg.name_space, self->cfg.name,
                      holder && *holder ? holder : "-");
    }
    bas_set_str (&self->rv, rv);
    bas_set_str (&self->holder, holder);
    bas_set_str (&self->renew_time, renew);
    bas_set_str (&self->acquire_time, acquire);
    self->duration_s = cJSON_IsNumber (duration) ? duration->valueint : 0;
    self->transitions = cJSON_IsNumber (transitions) ? transitions->valueint : 0;
    self->stats.transitions = (unsigned long)self->transitions;
}

//  A candidate has read the Lease: take it if it is free.
static void
s_consider (bas_lease_t *self)
{
    if (self->ended)
        return;
    bool mine = strcmp (self->holder, self->cfg.identity) == 0;
    int64_t duration_ms =
        self->duration_s > 0 ? (int64_t)self->duration_s * 1000 : self->cfg.lease_duration_ms;
    bool valid = *self->holder && bas_mono_ms () < self->observed_ms + duration_ms;
    if (valid && !mine) {
        //  Held: look again when it expires, not up to a retry period
        //  later (a failover is then lease duration + one read, not + 2
        //  retry periods).
        int64_t left = self->observed_ms + duration_ms - bas_mono_ms ();
        if (left + S_EXPIRY_SLACK_MS < self->cfg.retry_period_ms) {
            if (self->expiry_timer >= 0)
                zloop_timer_end (self->loop, self->expiry_timer);
            self->expiry_timer =
                zloop_timer (self->loop, (size_t)(left + S_EXPIRY_SLACK_MS), 1, s_on_expiry, self);
        }
        return;
    }
    s_write (self, mine ? S_OP_RENEW : S_OP_TAKE);
}

static void
s_done (void *arg, const bas_kube_response_t *r)
{
    bas_lease_t *self = arg;
    self->in_flight = false;
    s_op_t op = self->op;
    cJSON *lease = r->code >= 200 && r->code < 300 && r->body ? cJSON_Parse (r->body) : NULL;
    if (lease)
        s_observe (self, lease);
    cJSON_Delete (lease);
    bool ok = lease != NULL;
    if (!ok && !(op == S_OP_GET && r->code == 404))
        self->stats.failures++;
    if (op == S_OP_RELEASE) {
        if (!ok)
            bas_warn ("lease_release_failed", "code=%ld reason=\"%s\"", r->code,
                      r->reason ? r->reason : "");
        if (self->released) {
            bas_lease_released_fn *done = self->released;
            self->released = NULL;
            done (self->released_arg);
        }
        return;
    }
    if (op == S_OP_GET) {
        if (self->leading) {
            //  A leader reads after a renewal met 409: its own renewal may
            //  have been applied with the answer lost (then the Lease is
            //  still ours, at a newer resourceVersion); anything else is
            //  someone else's.
            if (ok && strcmp (self->holder, self->cfg.identity) == 0)
                s_write (self, S_OP_RENEW);
            else if (ok || r->code == 404)
                s_end (self, "the lease was written by another holder");
            return;
        }
        if (r->code == 404)
            s_write (self, S_OP_CREATE);
        else if (ok)
            s_consider (self);
        return;
    }
    //  A create, take or renewal.
    if (ok && !self->ended) {
        self->renewed_ms = self->sent_ms;
        if (!self->leading) {
            self->leading = true;
            bas_info ("leader_elected", "lease=%s/%s identity=%s transitions=%d",
                      self->cfg.name_space, self->cfg.name, self->cfg.identity, self->transitions);
            if (self->fn)
                self->fn (self->arg, true, "acquired");
        }
        return;
    }
    if (self->leading && r->code == 409 && s_check_deadline (self))
        s_send (self, S_OP_GET, "GET", self->item_path, NULL);
    else if (self->leading)
        s_check_deadline (self);
}

static int s_on_tick (zloop_t *loop, int timer_id, void *arg);

//  The one-shot look at the moment a held lease expires.
static int
s_on_expiry (zloop_t *loop, int timer_id, void *arg)
{
    bas_lease_t *self = arg;
    self->expiry_timer = -1;
    return s_on_tick (loop, timer_id, arg);
}

static int
s_on_tick (zloop_t *loop, int timer_id, void *arg)
{
    (void)loop;
    (void)timer_id;
    bas_lease_t *self = arg;
    if (self->ended)
        return 0;
    bool leading = s_check_deadline (self);
    if (self->in_flight || self->released || self->ended)
        return 0;
    if (leading)
        s_write (self, S_OP_RENEW);
    else
        s_send (self, S_OP_GET, "GET", self->item_path, NULL);
    return 0;
}

bas_lease_t *
bas_lease_new (zloop_t *loop, bas_kube_t *kube, const bas_lease_config_t *cfg, bas_lease_fn *fn,
               void *arg)
{
    bas_lease_t *self = bas_alloc (sizeof *self);
    self->loop = loop;
    self->kube = kube;
    self->fn = fn;
    self->arg = arg;
    self->cfg = *cfg;
    self->cfg.name_space = bas_strdup (cfg->name_space);
    self->cfg.name = bas_strdup (cfg->name);
    if (cfg->identity && *cfg->identity)
        self->cfg.identity = bas_strdup (cfg->identity);
    else {
        char host[256] = "";
        if (gethostname (host, sizeof host - 1) != 0)
            snprintf (host, sizeof host, "unknown");
        zuuid_t *uuid = zuuid_new ();
        char id[400];
        snprintf (id, sizeof id, "%s_%s", host, zuuid_str_canonical (uuid));
        zuuid_destroy (&uuid);
        self->cfg.identity = bas_strdup (id);
    }
    self->holder = bas_strdup ("");
    self->renew_time = bas_strdup ("");
    self->acquire_time = bas_strdup ("");
    snprintf (self->collection_path, sizeof self->collection_path,
              "/apis/coordination.k8s.io/v1/namespaces/%s/leases", self->cfg.name_space);
    snprintf (self->item_path, sizeof self->item_path, "%s/%s", self->collection_path,
              self->cfg.name);
    self->expiry_timer = -1;
    self->timer = zloop_timer (loop, (size_t)cfg->retry_period_ms, 0, s_on_tick, self);
    bas_info (
        "lease_candidate", "lease=%s/%s identity=%s duration_ms=%lld renew_ms=%lld retry_ms=%lld",
        self->cfg.name_space, self->cfg.name, self->cfg.identity, (long long)cfg->lease_duration_ms,
        (long long)cfg->renew_deadline_ms, (long long)cfg->retry_period_ms);
    s_on_tick (loop, self->timer, self);
    return self;
}

void
bas_lease_destroy (bas_lease_t **self_p)
{
    bas_lease_t *self = *self_p;
    if (!self)
        return;
    *self_p = NULL;
    if (self->timer >= 0)
        zloop_timer_end (self->loop, self->timer);
    if (self->expiry_timer >= 0)
        zloop_timer_end (self->loop, self->expiry_timer);
    free ((char *)self->cfg.name_space);
    free ((char *)self->cfg.name);
    free ((char *)self->cfg.identity);
    free (self->rv);
    free (self->holder);
    free (self->renew_time);
    free (self->acquire_time);
    free (self);
}

bool
bas_lease_leading (bas_lease_t *self)
{
    return s_check_deadline (self);
}

const char *
bas_lease_identity (bas_lease_t *self)
{
    return self->cfg.identity;
}

const char *
bas_lease_holder (bas_lease_t *self)
{
    return self->holder;
}

void
bas_lease_release (bas_lease_t *self, bas_lease_released_fn *done, void *arg)
{
    bool was = s_check_deadline (self);
    if (was) {
        self->leading = false;
        self->ended = true;
        bas_info ("leader_released", "lease=%s/%s identity=%s", self->cfg.name_space,
                  self->cfg.name, self->cfg.identity);
        if (self->fn)
            self->fn (self->arg, false, "released");
    }
    if (!was || self->in_flight) {
        //  Nothing held, or a request is out whose answer would race the
        //  release: the standby waits the lease out instead.
        if (done)
            done (arg);
        return;
    }
    self->released = done;
    self->released_arg = arg;
    char *body = s_body (self, S_OP_RELEASE);
    s_send (self, S_OP_RELEASE, "PUT", self->item_path, body);
    free (body);
    if (!self->in_flight && self->released) {
        self->released = NULL;
        if (done)
            done (arg);
    }
}

void
bas_lease_stats (bas_lease_t *self, bas_lease_stats_t *stats)
{
    *stats = self->stats;
}
