/*  sim_fault: see sim_fault.h. */
#include "sim_fault.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
sim_fault_init (sim_fault_t *self)
{
    memset (self, 0, sizeof *self);
}

static const char *const s_verbs[] = {
    "get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "*", NULL};

static bool
s_verb_ok (const char *verb)
{
    for (int i = 0; s_verbs[i]; i++)
        if (strcmp (s_verbs[i], verb) == 0)
            return true;
    return false;
}

//  Check and store one rule. Returns 0 or -1 with err.
static int
s_rule_set (sim_fault_rule_t *rule, const char *verb, const char *resource, double rate, int code,
            int retry_after, char *err, size_t errlen)
{
    if (!s_verb_ok (verb)) {
        snprintf (err, errlen,
                  "verb \"%s\" is not one of get, list, watch, create, update, patch, delete, "
                  "deletecollection, *",
                  verb);
        return -1;
    }
    if (!*resource || strlen (resource) >= sizeof rule->resource) {
        snprintf (err, errlen, "resource \"%s\" is empty or too long", resource);
        return -1;
    }
    if (!(rate >= 0.0 && rate <= 1.0)) {
        snprintf (err, errlen, "rate %g is not within [0, 1]", rate);
        return -1;
    }
    if (code != 429 && (code < 500 || code > 599)) {
        snprintf (err, errlen, "code %d is not 429 or 500..599", code);
        return -1;
    }
    if (retry_after < 0 || retry_after > 3600) {
        snprintf (err, errlen, "retry-after %d is not within [0, 3600] seconds", retry_after);
        return -1;
    }
    memset (rule, 0, sizeof *rule);
    snprintf (rule->verb, sizeof rule->verb, "%s", verb);
    snprintf (rule->resource, sizeof rule->resource, "%s", resource);
    rule->rate = rate;
    rule->code = code;
    rule->retry_after_s = retry_after;
    return 0;
}

int
sim_fault_add_spec (sim_fault_t *self, const char *spec, char *err, size_t errlen)
{
    if (self->nrules == SIM_FAULT_MAX_RULES) {
        snprintf (err, errlen, "more than %d fault rules", SIM_FAULT_MAX_RULES);
        return -1;
    }
    char copy[256];
    if (snprintf (copy, sizeof copy, "%s", spec) >= (int)sizeof copy) {
        snprintf (err, errlen, "fault rule too long");
        return -1;
    }
    char *part[6] = {0};
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r (copy, ":", &save); t && n < 6; t = strtok_r (NULL, ":", &save))
        part[n++] = t;
    if (n < 4 || n > 5) {
        snprintf (err, errlen,
                  "fault rule \"%s\" is not verb:resource:rate:code[:retryAfterSeconds]", spec);
        return -1;
    }
    char *end = NULL;
    double rate = strtod (part[2], &end);
    if (*end) {
        snprintf (err, errlen, "fault rule \"%s\": rate \"%s\" is not a number", spec, part[2]);
        return -1;
    }
    long code = strtol (part[3], &end, 10);
    if (*end) {
        snprintf (err, errlen, "fault rule \"%s\": code \"%s\" is not a number", spec, part[3]);
        return -1;
    }
    long after = 1;
    if (n == 5) {
        after = strtol (part[4], &end, 10);
        if (*end) {
            snprintf (err, errlen, "fault rule \"%s\": retry-after \"%s\" is not a number", spec,
                      part[4]);
            return -1;
        }
    }
    char inner[256];
    if (s_rule_set (&self->rules[self->nrules], part[0], part[1], rate, (int)code, (int)after,
                    inner, sizeof inner) != 0) {
        snprintf (err, errlen, "fault rule \"%s\": %s", spec, inner);
        return -1;
    }
    self->nrules++;
    return 0;
}

//  A number member: absent → dflt; present but not a number → -1.
static int
s_num (const cJSON *obj, const char *name, double dflt, double *out, char *err, size_t errlen,
       const char *where)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive (obj, name);
    if (!v || cJSON_IsNull (v)) {
        *out = dflt;
        return 0;
    }
    if (!cJSON_IsNumber (v)) {
        snprintf (err, errlen, "%s%s: not a number", where, name);
        return -1;
    }
    *out = v->valuedouble;
    return 0;
}

int
sim_fault_configure (sim_fault_t *self, const cJSON *json, char *err, size_t errlen)
{
    if (!cJSON_IsObject (json)) {
        snprintf (err, errlen, "the fault configuration must be a JSON object");
        return -1;
    }
    static const char *const known[] = {
        "rules",         "latencyMs", "watchDropRate", "expireNextWatches", "dropWatches",
        "expireWatches", NULL};
    for (const cJSON *m = json->child; m; m = m->next) {
        bool ok = false;
        for (int i = 0; known[i]; i++)
            if (m->string && strcmp (m->string, known[i]) == 0)
                ok = true;
        if (!ok) {
            snprintf (err, errlen,
                      "unknown member \"%s\" (known: rules, latencyMs, "
                      "watchDropRate, expireNextWatches, dropWatches, expireWatches)",
                      m->string ? m->string : "");
            return -1;
        }
    }
    sim_fault_t next;
    sim_fault_init (&next);
    next.watches_dropped = self->watches_dropped;
    next.watches_expired = self->watches_expired;
    const cJSON *rules = cJSON_GetObjectItemCaseSensitive (json, "rules");
    if (rules && !cJSON_IsArray (rules) && !cJSON_IsNull (rules)) {
        snprintf (err, errlen, "rules: not an array");
        return -1;
    }
    const cJSON *r;
    int i = 0;
    cJSON_ArrayForEach (r, rules)
    {
        char where[32];
        snprintf (where, sizeof where, "rules[%d].", i);
        if (next.nrules == SIM_FAULT_MAX_RULES) {
            snprintf (err, errlen, "rules: more than %d", SIM_FAULT_MAX_RULES);
            return -1;
        }
        const cJSON *verb = cJSON_GetObjectItemCaseSensitive (r, "verb");
        const cJSON *res = cJSON_GetObjectItemCaseSensitive (r, "resource");
        double rate, code, after;
        if (!cJSON_IsObject (r)) {
            snprintf (err, errlen, "rules[%d]: not an object", i);
            return -1;
        }
        if (s_num (r, "rate", 1.0, &rate, err, errlen, where) != 0 ||
            s_num (r, "code", 503, &code, err, errlen, where) != 0 ||
            s_num (r, "retryAfterSeconds", 1, &after, err, errlen, where) != 0)
            return -1;
        char inner[256];
        if (s_rule_set (&next.rules[next.nrules], cJSON_IsString (verb) ? verb->valuestring : "*",
                        cJSON_IsString (res) ? res->valuestring : "*", rate, (int)code, (int)after,
                        inner, sizeof inner) != 0) {
            snprintf (err, errlen, "rules[%d]: %s", i, inner);
            return -1;
        }
        next.nrules++;
        i++;
    }
    double latency, drop, expire;
    if (s_num (json, "latencyMs", 0, &latency, err, errlen, "") != 0 ||
        s_num (json, "watchDropRate", 0, &drop, err, errlen, "") != 0 ||
        s_num (json, "expireNextWatches", 0, &expire, err, errlen, ""))
        return -1;
    if (latency < 0 || latency > 600000) {
        snprintf (err, errlen, "latencyMs: %g is not within [0, 600000]", latency);
        return -1;
    }
    if (!(drop >= 0 && drop <= 1)) {
        snprintf (err, errlen, "watchDropRate: %g is not within [0, 1]", drop);
        return -1;
    }
    if (expire < 0 || expire > 1000000) {
        snprintf (err, errlen, "expireNextWatches: %g is not within [0, 1000000]", expire);
        return -1;
    }
    next.latency_ms = (int64_t)latency;
    next.watch_drop_rate = drop;
    next.expire_next_watches = (int)expire;
    *self = next;
    return 0;
}

cJSON *
sim_fault_describe (const sim_fault_t *self)
{
    cJSON *json = cJSON_CreateObject ();
    cJSON *rules = cJSON_AddArrayToObject (json, "rules");
    for (int i = 0; i < self->nrules; i++) {
        const sim_fault_rule_t *r = &self->rules[i];
        cJSON *o = cJSON_CreateObject ();
        cJSON_AddStringToObject (o, "verb", r->verb);
        cJSON_AddStringToObject (o, "resource", r->resource);
        cJSON_AddNumberToObject (o, "rate", r->rate);
        cJSON_AddNumberToObject (o, "code", r->code);
        cJSON_AddNumberToObject (o, "retryAfterSeconds", r->retry_after_s);
        cJSON_AddNumberToObject (o, "hits", (double)r->hits);
        cJSON_AddItemToArray (rules, o);
    }
    cJSON_AddNumberToObject (json, "latencyMs", (double)self->latency_ms);
    cJSON_AddNumberToObject (json, "watchDropRate", self->watch_drop_rate);
    cJSON_AddNumberToObject (json, "expireNextWatches", self->expire_next_watches);
    cJSON_AddNumberToObject (json, "watchesDropped", (double)self->watches_dropped);
    cJSON_AddNumberToObject (json, "watchesExpired", (double)self->watches_expired);
    return json;
}

bool
sim_fault_chance (sim_rand_t *rand, double p)
{
    if (p <= 0)
        return false;
    if (p >= 1)
        return true;
    return (double)(sim_rand_next (rand) >> 11) * (1.0 / 9007199254740992.0) < p;
}

static bool
s_match (const char *pattern, const char *value)
{
    return strcmp (pattern, "*") == 0 || strcmp (pattern, value) == 0;
}

sim_fault_rule_t *
sim_fault_pick (sim_fault_t *self, sim_rand_t *rand, const char *verb, const char *resource)
{
    for (int i = 0; i < self->nrules; i++) {
        sim_fault_rule_t *r = &self->rules[i];
        if (s_match (r->verb, verb) && s_match (r->resource, resource) &&
            sim_fault_chance (rand, r->rate)) {
            r->hits++;
            return r;
        }
    }
    return NULL;
}
