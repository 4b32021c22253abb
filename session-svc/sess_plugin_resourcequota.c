/*  sess_plugin_resourcequota: Volcano's resourcequota plugin — a job is not
    enqueued when its minResources would take its namespace over a
    ResourceQuota.

    JobEnqueueable: a job without minResources is permitted. Otherwise, for
    every ResourceQuota of the job's namespace, the job's minResources
    restricted to the names the quota limits (by the quota's own names:
    "cpu", "memory", "pods", an extended resource, or "requests.cpu" when
    the PodGroup's minResources says so) are added to the quota's
    status.used and to what jobs of that namespace enqueued earlier in this
    session asked; if any name then exceeds spec.hard the job is rejected,
    and its PodGroup gets the Event "resource quota insufficient,
    requested: ..., used: ..., limited: ..." (Volcano's words, quantities
    written as Kubernetes writes them). JobEnqueued: the job's
    minResources count as asked in its namespace for the rest of the
    session. Quota scopes are not supported, as in Volcano.

    Design note: minResources arrive as Basalt's resources (cpu, memory,
    pods, scalars by name); they are named here as a ResourceList would
    name them, in milli-units, to compare with the quota's items.
*/
#include "sess_session.h"
#include "bas_util.h"

#include "bas_quantity.h"

#include <stdlib.h>
#include <string.h>

#define S_MAX_ITEMS (3 + BAS_RES_MAX_SCALARS)

typedef struct {
    const char *name;
    int64_t milli;
} s_item_t;

typedef struct {
    sess_session_t *ssn;
    zhashx_t *asked; // "namespace\x1fname" -> int64_t* asked this session (owned)
} s_self_t;

//  A job's minResources as named items (zero ones left out).
static int
s_items (const sess_job_t *job, s_item_t *out)
{
    int n = 0;
    const bas_res_t *r = job->min_resources;
    if (r->milli_cpu)
        out[n++] = (s_item_t){"cpu", r->milli_cpu};
    if (r->memory)
        out[n++] = (s_item_t){"memory", r->memory * 1000};
    if (r->pods)
        out[n++] = (s_item_t){"pods", r->pods * 1000};
    for (int i = 0; i < r->nscalars; i++)
        if (r->scalars[i].value)
            out[n++] = (s_item_t){r->scalars[i].name, r->scalars[i].value * 1000};
    return n;
}

static const Basalt__V1__QuotaItem *
s_find (Basalt__V1__QuotaItem **items, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (items[i]->name && strcmp (items[i]->name, name) == 0)
            return items[i];
    return NULL;
}

static int64_t
s_asked (const s_self_t *self, const char *ns, const char *name)
{
    char key[512];
    snprintf (key, sizeof key, "%s\x1f%s", ns, name);
    const int64_t *v = zhashx_lookup (self->asked, key);
    return v ? *v : 0;
}

static void
s_append (char *buf, size_t len, const char *name, int64_t milli)
{
    char q[64];
    bas_quantity_format_milli (milli, q, sizeof q);
    size_t at = strlen (buf);
    snprintf (buf + at, len - at, "%s%s=%s", at && buf[at - 1] != ' ' ? "," : "", name, q);
}

typedef struct {
    s_self_t *self;
    const sess_job_t *job;
    int verdict; // 1 permit, -1 reject
} s_check_t;

static void
s_check_quota (void *arg, const Basalt__V1__Object *obj)
{
    s_check_t *c = arg;
    const Basalt__V1__ResourceQuota *q = obj->resource_quota;
    const char *ns = c->job->pg->namespace_ ? c->job->pg->namespace_ : "";
    if (c->verdict < 0 || !q->namespace_ || strcmp (q->namespace_, ns) != 0)
        return;
    s_item_t items[S_MAX_ITEMS];
    int n = s_items (c->job, items);
    char requested[256] = "", used[256] = "", limited[256] = "";
    bool over = false;
    for (int i = 0; i < n; i++) {
        const Basalt__V1__QuotaItem *hard = s_find (q->hard, q->n_hard, items[i].name);
        if (!hard)
            continue; // a name the quota does not limit
        const Basalt__V1__QuotaItem *u = s_find (q->used, q->n_used, items[i].name);
        int64_t now = (u ? u->milli_value : 0) + s_asked (c->self, ns, items[i].name);
        if (now + items[i].milli <= hard->milli_value)
            continue;
        over = true;
        s_append (requested, sizeof requested, items[i].name, items[i].milli);
        s_append (used, sizeof used, items[i].name, u ? u->milli_value : 0);
        s_append (limited, sizeof limited, items[i].name, hard->milli_value);
    }
    if (!over)
        return;
    char msg[900];
    snprintf (msg, sizeof msg, "resource quota insufficient, requested: %s, used: %s, limited: %s",
              requested, used, limited);
    sess_job_note_refusal (c->self->ssn, c->job, SESS_REFUSE_NAMESPACE_QUOTA, msg);
    bas_debug ("sched_quota_refused", "job=%s quota=%s/%s msg=\"%s\"", c->job->uid, ns,
               q->name ? q->name : "", msg);
    c->verdict = -1;
}

static int
s_enqueueable (void *self_, const sess_job_t *job)
{
    s_self_t *self = self_;
    if (!job->has_min_resources)
        return 1;
    s_check_t c = {self, job, 1};
    bas_store_foreach (self->ssn->replica, BASALT__V1__OBJECT_KIND__OBJECT_KIND_RESOURCE_QUOTA,
                       s_check_quota, &c);
    return c.verdict;
}

static void
s_enqueued (void *self_, sess_job_t *job)
{
    s_self_t *self = self_;
    if (!job->has_min_resources)
        return;
    const char *ns = job->pg->namespace_ ? job->pg->namespace_ : "";
    s_item_t items[S_MAX_ITEMS];
    int n = s_items (job, items);
    for (int i = 0; i < n; i++) {
        char key[512];
        snprintf (key, sizeof key, "%s\x1f%s", ns, items[i].name);
        int64_t *v = zhashx_lookup (self->asked, key);
        if (!v) {
            v = bas_alloc (sizeof *v);
            zhashx_insert (self->asked, key, v);
        }
        *v += items[i].milli;
    }
}

static void
s_free_item (void **item)
{
    free (*item);
    *item = NULL;
}

int
sess_resourcequota_open (sess_session_t *ssn, const sess_plugin_conf_t *conf, void **self_p)
{
    (void)conf;
    s_self_t *self = bas_alloc (sizeof *self);
    self->ssn = ssn;
    self->asked = zhashx_new ();
    zhashx_set_destructor (self->asked, s_free_item);
    *self_p = self;
    sess_add_job_enqueueable_fn (ssn, self, s_enqueueable);
    sess_add_job_enqueued_fn (ssn, self, s_enqueued);
    return 0;
}

void
sess_resourcequota_close (sess_session_t *ssn, void *self_)
{
    (void)ssn;
    s_self_t *self = self_;
    if (self)
        zhashx_destroy (&self->asked);
    free (self);
}
