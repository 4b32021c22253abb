/*  scn_outcome: see scn_outcome.h. */
#include "scn_outcome.h"
#include "bas_util.h"

#include "scn_spec.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void
s_pod_free (void **item_p)
{
    scn_pod_t *p = *item_p;
    if (p) {
        free (p->group);
        free (p->node);
        free (p->pipelined);
        free (p->phase);
        free (p);
        *item_p = NULL;
    }
}

static void
s_group_free (void **item_p)
{
    scn_group_t *g = *item_p;
    if (g) {
        free (g->phase);
        free (g->conditions);
        free (g->messages);
        free (g->write_note);
        free (g);
        *item_p = NULL;
    }
}

static void
s_claim_free (void **item_p)
{
    scn_claim_t *c = *item_p;
    if (c) {
        free (c->volume);
        free (c->selected);
        free (c->nodes);
        free (c);
        *item_p = NULL;
    }
}

scn_outcome_t *
scn_outcome_new (void)
{
    scn_outcome_t *self = bas_alloc (sizeof *self);
    self->claims = zhashx_new ();
    zhashx_set_destructor (self->claims, s_claim_free);
    self->pods = zhashx_new ();
    zhashx_set_destructor (self->pods, s_pod_free);
    self->groups = zhashx_new ();
    zhashx_set_destructor (self->groups, s_group_free);
    self->nodes = zhashx_new ();
    return self;
}

void
scn_outcome_destroy (scn_outcome_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    scn_outcome_t *self = *self_p;
    zhashx_destroy (&self->claims);
    zhashx_destroy (&self->pods);
    zhashx_destroy (&self->groups);
    zhashx_destroy (&self->nodes);
    free (self->error);
    free (self);
    *self_p = NULL;
}

void
scn_outcome_set (char **field, const char *value)
{
    free (*field);
    *field = value ? strdup (value) : NULL;
}

scn_pod_t *
scn_outcome_pod (scn_outcome_t *self, const char *key)
{
    scn_pod_t *p = zhashx_lookup (self->pods, key);
    if (!p) {
        p = bas_alloc (sizeof *p);
        zhashx_insert (self->pods, key, p);
    }
    return p;
}

scn_group_t *
scn_outcome_group (scn_outcome_t *self, const char *key)
{
    scn_group_t *g = zhashx_lookup (self->groups, key);
    if (!g) {
        g = bas_alloc (sizeof *g);
        g->conditions = strdup ("");
        g->messages = strdup ("");
        zhashx_insert (self->groups, key, g);
    }
    return g;
}

void
scn_outcome_node (scn_outcome_t *self, const char *name, bool out_of_sync)
{
    zhashx_update (self->nodes, name, out_of_sync ? "OutOfSync" : "Ready");
}

// ------------------------------------------------------------ checking

typedef struct {
    scn_outcome_t *o; // what happened
    const char *name; // scenario name
    const char *mode; // "in-process" or "e2e"
    FILE *out;        // where failure lines go (NULL: keep the first in `first`)
    int failed;       // failed expectations so far
    char *first;      // with out NULL: the first failure's message
    size_t first_len; // its buffer's size
} s_check_t;

static void s_failed (s_check_t *c, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

static void
s_failed (s_check_t *c, const char *fmt, ...)
{
    char msg[1024];
    va_list args;
    va_start (args, fmt);
    vsnprintf (msg, sizeof msg, fmt, args);
    va_end (args);
    if (c->out)
        fprintf (c->out, "scenario %s (%s): %s\n", c->name, c->mode, msg);
    else if (c->failed == 0 && c->first_len > 0)
        snprintf (c->first, c->first_len, "%s", msg);
    c->failed++;
}

//  How a pod ended, in words: "pending", "bound to n2", "evicted", ...
static const char *
s_pod_state (const scn_pod_t *p, char *buf, size_t len)
{
    if (!p)
        return "no such pod";
    if (p->evicted)
        return "evicted";
    if (p->node)
        snprintf (buf, len, "bound to %s", p->node);
    else if (p->pipelined)
        snprintf (buf, len, "pending (pipelined on %s)", p->pipelined);
    else
        snprintf (buf, len, "pending");
    return buf;
}

static const char *
s_text (const cJSON *v, char *buf, size_t len)
{
    if (cJSON_IsString (v))
        return v->valuestring;
    if (cJSON_IsNumber (v))
        snprintf (buf, len, "%lld", (long long)v->valuedouble);
    else if (cJSON_IsBool (v))
        snprintf (buf, len, "%s", cJSON_IsTrue (v) ? "true" : "false");
    else
        snprintf (buf, len, "?");
    return buf;
}

static scn_pod_t *
s_pod (s_check_t *c, const char *ref)
{
    char key[512];
    return zhashx_lookup (c->o->pods, scn_spec_ref (ref, key, sizeof key));
}

static void
s_bound (s_check_t *c, const cJSON *map)
{
    const cJSON *it;
    cJSON_ArrayForEach (it, map)
    {
        char vb[64], sb[300];
        const char *want = s_text (it, vb, sizeof vb);
        scn_pod_t *p = s_pod (c, it->string);
        if (!p || p->evicted || !p->node || strcmp (p->node, want) != 0)
            s_failed (c, "expected pod %s bound to %s, found %s", it->string, want,
                      s_pod_state (p, sb, sizeof sb));
    }
}

static void
s_pipelined (s_check_t *c, const cJSON *map)
{
    const cJSON *it;
    cJSON_ArrayForEach (it, map)
    {
        char vb[64], sb[300];
        const char *want = s_text (it, vb, sizeof vb);
        scn_pod_t *p = s_pod (c, it->string);
        if (!p || p->evicted || p->node || !p->pipelined || strcmp (p->pipelined, want) != 0)
            s_failed (c, "expected pod %s pipelined on %s, found %s", it->string, want,
                      s_pod_state (p, sb, sizeof sb));
    }
}

static void
s_pending (s_check_t *c, const cJSON *list)
{
    const cJSON *it;
    cJSON_ArrayForEach (it, list)
    {
        char vb[300], sb[300];
        const char *ref = s_text (it, vb, sizeof vb);
        scn_pod_t *p = s_pod (c, ref);
        if (!p || p->evicted || p->node)
            s_failed (c, "expected pod %s pending, found %s", ref, s_pod_state (p, sb, sizeof sb));
    }
}

//  podPhase (a Basalt extension): the pod's status.phase.
static void
s_pod_phase (s_check_t *c, const cJSON *map)
{
    const cJSON *it;
    cJSON_ArrayForEach (it, map)
    {
        char vb[64];
        const char *want = s_text (it, vb, sizeof vb);
        scn_pod_t *p = s_pod (c, it->string);
        if (!p || p->evicted || !p->phase || strcmp (p->phase, want) != 0)
            s_failed (c, "expected pod %s phase %s, found %s", it->string, want,
                      !p           ? "no such pod"
                      : p->evicted ? "evicted"
                      : p->phase   ? p->phase
                                   : "no phase");
    }
}

static int
s_count_bound (s_check_t *c, const char *group)
{
    int n = 0;
    for (scn_pod_t *p = zhashx_first (c->o->pods); p; p = zhashx_next (c->o->pods))
        if (p->node && !p->evicted && (!group || (p->group && strcmp (p->group, group) == 0)))
            n++;
    return n;
}

//  nodePods (a Basalt extension): pods bound on each node listed, those
//  placed before the run included.
static void
s_node_pods (s_check_t *c, const cJSON *map)
{
    const cJSON *it;
    cJSON_ArrayForEach (it, map)
    {
        int n = 0;
        for (scn_pod_t *p = zhashx_first (c->o->pods); p; p = zhashx_next (c->o->pods))
            if (p->node && !p->evicted && strcmp (p->node, it->string) == 0)
                n++;
        if (n != it->valueint)
            s_failed (c, "expected %d pods bound on node %s, found %d", it->valueint, it->string,
                      n);
    }
}

static bool
s_group_known (s_check_t *c, const char *group)
{
    if (zhashx_lookup (c->o->groups, group))
        return true;
    for (scn_pod_t *p = zhashx_first (c->o->pods); p; p = zhashx_next (c->o->pods))
        if (p->group && strcmp (p->group, group) == 0)
            return true;
    return false;
}

static void
s_bound_count (s_check_t *c, const cJSON *map)
{
    const cJSON *it;
    cJSON_ArrayForEach (it, map)
    {
        char key[512];
        scn_spec_ref (it->string, key, sizeof key);
        int want = it->valueint;
        if (!s_group_known (c, key)) {
            s_failed (c, "expected %d pods of group %s bound, found no such group", want,
                      it->string);
            continue;
        }
        int have = s_count_bound (c, key);
        if (have != want)
            s_failed (c, "expected %d pods of group %s bound, found %d", want, it->string, have);
    }
}

static void
s_evicted (s_check_t *c, const cJSON *list)
{
    zhashx_t *listed = zhashx_new ();
    const cJSON *it;
    cJSON_ArrayForEach (it, list)
    {
        char vb[300], sb[300], key[512];
        const char *ref = s_text (it, vb, sizeof vb);
        zhashx_update (listed, scn_spec_ref (ref, key, sizeof key), (void *)"1");
        scn_pod_t *p = s_pod (c, ref);
        if (!p || !p->evicted)
            s_failed (c, "expected pod %s evicted, found %s", ref, s_pod_state (p, sb, sizeof sb));
    }
    for (scn_pod_t *p = zhashx_first (c->o->pods); p; p = zhashx_next (c->o->pods)) {
        const char *key = zhashx_cursor (c->o->pods);
        if (p->evicted && !zhashx_lookup (listed, key))
            s_failed (c, "expected only the listed pods evicted, found %s evicted too", key);
    }
    zhashx_destroy (&listed);
}

static int
s_count_evicted (s_check_t *c)
{
    int n = 0;
    for (scn_pod_t *p = zhashx_first (c->o->pods); p; p = zhashx_next (c->o->pods))
        n += p->evicted;
    return n;
}

static scn_group_t *
s_group (s_check_t *c, const char *ref)
{
    char key[512];
    return zhashx_lookup (c->o->groups, scn_spec_ref (ref, key, sizeof key));
}

static void
s_phase (s_check_t *c, const cJSON *map)
{
    const cJSON *it;
    cJSON_ArrayForEach (it, map)
    {
        char vb[64];
        const char *want = s_text (it, vb, sizeof vb);
        scn_group_t *g = s_group (c, it->string);
        //  A PodGroup without status.phase (as controllers create them) is
        //  Pending, as Volcano and the controllers that wait for it read it.
        bool none = g && (!g->phase || !*g->phase);
        const char *have = none ? "Pending" : g ? g->phase : NULL;
        if (!g)
            s_failed (c, "expected podgroup %s phase %s, found no such podgroup", it->string, want);
        else if (strcmp (have, want) != 0)
            s_failed (c, "expected podgroup %s phase %s, found %s%s", it->string, want, have,
                      none ? " (no status.phase)" : "");
    }
}

static void
s_condition (s_check_t *c, const cJSON *map)
{
    const cJSON *it;
    cJSON_ArrayForEach (it, map)
    {
        char vb[64], want[128];
        snprintf (want, sizeof want, "%s=True", s_text (it, vb, sizeof vb));
        scn_group_t *g = s_group (c, it->string);
        if (!g) {
            s_failed (c, "expected podgroup %s condition %s, found no such podgroup", it->string,
                      vb);
            continue;
        }
        //  Exact match of one "Type=True" item in the comma list.
        bool found = false;
        const char *s = g->conditions;
        size_t wl = strlen (want);
        while (s && *s && !found) {
            const char *comma = strchr (s, ',');
            size_t n = comma ? (size_t)(comma - s) : strlen (s);
            found = n == wl && strncmp (s, want, wl) == 0;
            s = comma ? comma + 1 : NULL;
        }
        if (!found)
            s_failed (c, "expected podgroup %s condition %s, found %s%s%s", it->string,
                      s_text (it, vb, sizeof vb), *g->conditions ? "conditions [" : "no conditions",
                      g->conditions, *g->conditions ? "]" : "");
    }
}

//  podgroupMessage (a Basalt extension): some condition's message contains
//  the text (the reason a gang waits, as kubectl describe shows it).
static void
s_message (s_check_t *c, const cJSON *map)
{
    const cJSON *it;
    cJSON_ArrayForEach (it, map)
    {
        char vb[300];
        const char *want = s_text (it, vb, sizeof vb);
        scn_group_t *g = s_group (c, it->string);
        if (!g)
            s_failed (c, "expected podgroup %s message \"%s\", found no such podgroup", it->string,
                      want);
        else if (!strstr (g->messages, want))
            s_failed (c, "expected podgroup %s message containing \"%s\", found %s%s%s", it->string,
                      want, *g->messages ? "\"" : "no message", g->messages,
                      *g->messages ? "\"" : "");
    }
}

static void
s_no_status (s_check_t *c, const cJSON *list)
{
    const cJSON *it;
    cJSON_ArrayForEach (it, list)
    {
        char vb[300];
        const char *ref = s_text (it, vb, sizeof vb);
        scn_group_t *g = s_group (c, ref);
        if (!g)
            s_failed (c, "expected no status update for podgroup %s, found no such podgroup", ref);
        else if (g->status_writes > 0)
            s_failed (c,
                      "expected no status update for podgroup %s, found %d (now phase %s, "
                      "conditions [%s])%s%s",
                      ref, g->status_writes, g->phase ? g->phase : "none", g->conditions,
                      g->write_note ? ": " : "", g->write_note ? g->write_note : "");
    }
}

static void
s_node_state (s_check_t *c, const cJSON *map)
{
    const cJSON *it;
    cJSON_ArrayForEach (it, map)
    {
        char vb[64];
        const char *want = s_text (it, vb, sizeof vb);
        const char *have = zhashx_lookup (c->o->nodes, it->string);
        if (!have || strcmp (have, want) != 0)
            s_failed (c, "expected node %s %s, found %s", it->string, want,
                      have ? have : "no such node");
    }
}

static const char *
s_claim_state (const scn_claim_t *cl, char *buf, size_t len)
{
    if (!cl)
        snprintf (buf, len, "no such claim");
    else if (cl->volume)
        snprintf (buf, len, "bound to volume %s (node affinity to [%s])", cl->volume, cl->nodes);
    else if (cl->selected)
        snprintf (buf, len, "unbound, selected node %s", cl->selected);
    else
        snprintf (buf, len, "unbound");
    return buf;
}

//  claimNode (a Basalt extension): the claim is bound to a PV whose node
//  affinity names the node (kubernetes.io/hostname In [.. node ..]); a
//  value "pod:NAME" means the node pod NAME is bound to.
static void
s_claim_node (s_check_t *c, const cJSON *map)
{
    const cJSON *it;
    cJSON_ArrayForEach (it, map)
    {
        char vb[300], sb[600], key[512];
        const char *want = s_text (it, vb, sizeof vb);
        if (strncmp (want, "pod:", 4) == 0) {
            scn_pod_t *p = s_pod (c, want + 4);
            if (!p || !p->node) {
                char pb[300];
                s_failed (c, "expected claim %s on the node of pod %s, found the pod %s",
                          it->string, want + 4, s_pod_state (p, pb, sizeof pb));
                continue;
            }
            want = p->node;
        }
        scn_claim_t *cl = zhashx_lookup (c->o->claims, scn_spec_ref (it->string, key, sizeof key));
        bool ok = cl && cl->volume;
        if (ok) {
            ok = false;
            size_t wl = strlen (want);
            for (const char *s = cl->nodes; s && *s && !ok;) {
                const char *comma = strchr (s, ',');
                size_t n = comma ? (size_t)(comma - s) : strlen (s);
                ok = n == wl && strncmp (s, want, wl) == 0;
                s = comma ? comma + 1 : NULL;
            }
        }
        if (!ok)
            s_failed (c, "expected claim %s bound to a volume on node %s, found %s", it->string,
                      want, s_claim_state (cl, sb, sizeof sb));
    }
}

//  claimUnbound (a Basalt extension): no volume, and no node selected.
static void
s_claim_unbound (s_check_t *c, const cJSON *list)
{
    const cJSON *it;
    cJSON_ArrayForEach (it, list)
    {
        char vb[300], sb[600], key[512];
        const char *ref = s_text (it, vb, sizeof vb);
        scn_claim_t *cl = zhashx_lookup (c->o->claims, scn_spec_ref (ref, key, sizeof key));
        if (!cl || cl->volume || cl->selected)
            s_failed (c, "expected claim %s unbound with no node selected, found %s", ref,
                      s_claim_state (cl, sb, sizeof sb));
    }
}

static int s_check_all (s_check_t *c, const cJSON *expect);

int
scn_outcome_check (scn_outcome_t *self, const cJSON *expect, const char *name, const char *mode,
                   FILE *out)
{
    s_check_t c = {self, name, mode, out, 0, NULL, 0};
    if (self->error) {
        s_failed (&c, "run failed: %s", self->error);
        return c.failed;
    }
    return s_check_all (&c, expect);
}

int
scn_outcome_check_quiet (scn_outcome_t *self, const cJSON *expect, char *first, size_t len)
{
    if (len > 0)
        first[0] = 0;
    s_check_t c = {self, "", "", NULL, 0, first, len};
    return s_check_all (&c, expect);
}

//  Every expectation of `expect`, in the file's order.
static int
s_check_all (s_check_t *cp, const cJSON *expect)
{
    s_check_t c = *cp;
    const cJSON *it;
    cJSON_ArrayForEach (it, expect)
    {
        const char *k = it->string;
        if (strcmp (k, "bound") == 0)
            s_bound (&c, it);
        else if (strcmp (k, "boundCount") == 0)
            s_bound_count (&c, it);
        else if (strcmp (k, "boundTotal") == 0) {
            int have = s_count_bound (&c, NULL);
            if (have != it->valueint)
                s_failed (&c, "expected %d pods bound in all, found %d", it->valueint, have);
        } else if (strcmp (k, "pending") == 0)
            s_pending (&c, it);
        else if (strcmp (k, "podPhase") == 0)
            s_pod_phase (&c, it);
        else if (strcmp (k, "pipelined") == 0)
            s_pipelined (&c, it);
        else if (strcmp (k, "evicted") == 0)
            s_evicted (&c, it);
        else if (strcmp (k, "evictedCount") == 0) {
            int have = s_count_evicted (&c);
            if (have != it->valueint)
                s_failed (&c, "expected %d pods evicted, found %d", it->valueint, have);
        } else if (strcmp (k, "podgroupPhase") == 0)
            s_phase (&c, it);
        else if (strcmp (k, "podgroupCondition") == 0)
            s_condition (&c, it);
        else if (strcmp (k, "podgroupMessage") == 0)
            s_message (&c, it);
        else if (strcmp (k, "nodePods") == 0)
            s_node_pods (&c, it);
        else if (strcmp (k, "noStatusUpdate") == 0)
            s_no_status (&c, it);
        else if (strcmp (k, "nodeState") == 0)
            s_node_state (&c, it);
        else if (strcmp (k, "claimNode") == 0)
            s_claim_node (&c, it);
        else if (strcmp (k, "claimUnbound") == 0)
            s_claim_unbound (&c, it);
        else
            s_failed (&c, "unknown expectation %s", k); // scn_spec refuses these first
    }
    return c.failed;
}

// ------------------------------------------------------------ from API objects

static const char *
s_str (const cJSON *obj, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive (obj, a);
    if (b)
        x = cJSON_GetObjectItemCaseSensitive (x, b);
    return cJSON_GetStringValue (x);
}

static void
s_key_of (const cJSON *obj, char *buf, size_t len)
{
    const char *ns = s_str (obj, "metadata", "namespace");
    const char *name = s_str (obj, "metadata", "name");
    snprintf (buf, len, "%s/%s", ns ? ns : "default", name ? name : "?");
}

static bool
s_is_kind (const cJSON *obj, const char *kind)
{
    const char *k = s_str (obj, "kind", NULL);
    return k && strcmp (k, kind) == 0;
}

static void
s_pod_from_api (scn_outcome_t *self, const cJSON *pod, bool present)
{
    char key[512];
    s_key_of (pod, key, sizeof key);
    scn_pod_t *p = scn_outcome_pod (self, key);
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive (
        cJSON_GetObjectItemCaseSensitive (pod, "metadata"), "annotations");
    const char *group = cJSON_GetStringValue (
        cJSON_GetObjectItemCaseSensitive (ann, "scheduling.k8s.io/group-name"));
    const char *ns = s_str (pod, "metadata", "namespace");
    if (group) {
        char gkey[512];
        snprintf (gkey, sizeof gkey, "%s/%s", ns ? ns : "default", group);
        scn_outcome_set (&p->group, gkey);
    }
    if (!present) {
        p->evicted = true;
        return;
    }
    const char *node = s_str (pod, "spec", "nodeName");
    scn_outcome_set (&p->node, node && *node ? node : NULL);
    scn_outcome_set (&p->phase, s_str (pod, "status", "phase"));
    p->evicted = s_str (pod, "metadata", "deletionTimestamp") != NULL;
    const char *nominated = s_str (pod, "status", "nominatedNodeName");
    if (nominated && *nominated && !p->node)
        scn_outcome_set (&p->pipelined, nominated);
}

static void
s_group_from_api (scn_outcome_t *self, const cJSON *pg)
{
    char key[512];
    s_key_of (pg, key, sizeof key);
    scn_group_t *g = scn_outcome_group (self, key);
    scn_outcome_set (&g->phase, s_str (pg, "status", "phase"));
    char conds[1024] = "", msgs[4096] = "";
    size_t n = 0, nm = 0;
    const cJSON *c;
    cJSON_ArrayForEach (c, cJSON_GetObjectItemCaseSensitive (
                               cJSON_GetObjectItemCaseSensitive (pg, "status"), "conditions"))
    {
        const char *type = s_str (c, "type", NULL);
        const char *st = s_str (c, "status", NULL);
        if (n < sizeof conds)
            n += (size_t)snprintf (conds + n, sizeof conds - n, "%s%s=%s", n ? "," : "",
                                   type ? type : "?", st ? st : "?");
        const char *msg = s_str (c, "message", NULL);
        if (msg && *msg && nm < sizeof msgs)
            nm += (size_t)snprintf (msgs + nm, sizeof msgs - nm, "%s%s", nm ? "; " : "", msg);
    }
    scn_outcome_set (&g->conditions, conds);
    scn_outcome_set (&g->messages, msgs);
}

void
scn_outcome_from_api (scn_outcome_t *self, const cJSON *spec_objects, const cJSON *api_pods,
                      const cJSON *api_groups)
{
    zhashx_t *present = zhashx_new ();
    const cJSON *o;
    cJSON_ArrayForEach (o, api_pods)
    {
        char key[512];
        s_key_of (o, key, sizeof key);
        zhashx_update (present, key, (void *)o);
        s_pod_from_api (self, o, true);
    }
    cJSON_ArrayForEach (o, spec_objects)
    {
        char key[512];
        s_key_of (o, key, sizeof key);
        if (s_is_kind (o, "Pod") && !zhashx_lookup (present, key))
            s_pod_from_api (self, o, false);
    }
    cJSON_ArrayForEach (o, api_groups) s_group_from_api (self, o);
    zhashx_destroy (&present);
}

void
scn_outcome_claims_from_api (scn_outcome_t *self, const cJSON *claims, const cJSON *volumes)
{
    const cJSON *o;
    //  An item that says its kind must be of the one wanted (the in-process
    //  runner passes all its objects); list items say none.
    cJSON_ArrayForEach (o, claims)
    {
        if (s_str (o, "kind", NULL) && !s_is_kind (o, "PersistentVolumeClaim"))
            continue;
        char key[512];
        s_key_of (o, key, sizeof key);
        scn_claim_t *cl = bas_alloc (sizeof *cl);
        const char *vol = s_str (cJSON_GetObjectItemCaseSensitive (o, "spec"), "volumeName", NULL);
        const cJSON *ann = cJSON_GetObjectItemCaseSensitive (
            cJSON_GetObjectItemCaseSensitive (o, "metadata"), "annotations");
        const char *sel = s_str (ann, "volume.kubernetes.io/selected-node", NULL);
        cl->volume = vol && *vol ? strdup (vol) : NULL;
        cl->selected = sel && *sel ? strdup (sel) : NULL;
        char nodes[1024] = "";
        const cJSON *v;
        cJSON_ArrayForEach (v, volumes)
        {
            if ((s_str (v, "kind", NULL) && !s_is_kind (v, "PersistentVolume")) || !cl->volume ||
                !s_str (v, "metadata", "name") ||
                strcmp (s_str (v, "metadata", "name"), cl->volume) != 0)
                continue;
            const cJSON *terms = cJSON_GetObjectItemCaseSensitive (
                cJSON_GetObjectItemCaseSensitive (
                    cJSON_GetObjectItemCaseSensitive (cJSON_GetObjectItemCaseSensitive (v, "spec"),
                                                      "nodeAffinity"),
                    "required"),
                "nodeSelectorTerms");
            const cJSON *t, *e, *val;
            cJSON_ArrayForEach (t, terms)
            {
                cJSON_ArrayForEach (e, cJSON_GetObjectItemCaseSensitive (t, "matchExpressions"))
                {
                    const char *k = s_str (e, "key", NULL), *op = s_str (e, "operator", NULL);
                    if (!k || !op || strcmp (k, "kubernetes.io/hostname") != 0 ||
                        strcmp (op, "In") != 0)
                        continue;
                    cJSON_ArrayForEach (val, cJSON_GetObjectItemCaseSensitive (e, "values"))
                    {
                        if (!cJSON_IsString (val))
                            continue;
                        size_t used = strlen (nodes);
                        snprintf (nodes + used, sizeof nodes - used, "%s%s", used ? "," : "",
                                  val->valuestring);
                    }
                }
            }
        }
        cl->nodes = strdup (nodes);
        zhashx_update (self->claims, key, cl);
    }
}
