/*  cache_claims: the claims a gang's pods need written before they are
    bound (kube-scheduler's VolumeBinding Reserve and PreBind, as Volcano
    runs them in its bind phase), kept by cache-svc.

    A session places a pod whose claims wait for their first consumer and
    says, per claim, which PV it chose or that the claim is to be
    provisioned on the pod's node (Placement.claims). When the cache
    accepts the gang (cache_commit.c), it opens one gate for it:
      - every claim of the gang is assumed: no other placement may take the
        claim, or the PV chosen for it, until the gate closes
        (cache_claims_check refuses such a gang);
      - each claim that still needs it gets one write (VolumeClaimWork):
        the PV's claimRef for a static binding, the claim's selected-node
        annotation for provisioning. A claim the API already shows that way
        (the PV's claimRef names the claim, the claim names the node: what
        a cache killed after the write left behind) gets none;
      - the gang's pods are assumed on their nodes as any placement is, but
        their binds are held by the gate.
    The gate opens (the binds go to the binders) once every write has
    succeeded and the watch shows every claim bound: spec.volumeName set
    (to the chosen PV, for a static binding) and phase Bound, as
    kube-scheduler's checkBindings waits for. It fails, and the gang's
    pods are pending again with nothing bound, when a write fails, a claim
    is deleted or bound to another PV, provisioning is given up (the
    provisioner removed the selected-node annotation), or the gate outlives
    its timeout (cache_claims_expire; kube-scheduler's bind timeout is
    10 minutes, CACHE_VOLUME_BIND_TIMEOUT_MS). What was already written
    stays written, as in kube-scheduler: a claim bound to a PV is bound for
    good, and the next session places the pod where that PV is.

    A write sent stays in flight until its result comes, whether its gate
    is still open or not: until then the claim, and the PV of a static
    binding, are refused to every gang. A gate given up while a claimRef
    write is on its way would otherwise let the next session bind the
    claim to another PV, and leave the first one pre-bound to a claim that
    is bound elsewhere.

    Kill-safety: the gates live only in this process. A cache killed while
    a gate waits leaves the writes done so far; the next cache and session
    see them (a claim naming its node, a PV naming its claim) and decide
    the same way, and no write is repeated (see above). A write re-issued
    after a binder was lost carries the resourceVersion the cache decided
    on, so the API refuses it if the first attempt landed; and before it
    is sent, cache_claims_moot settles it when the watch shows it done.

    Design note: the gates are the model's (cache_model_private.h), keyed
    by claim uid; binds a gate releases wait in `ready` until the service
    hands them to the work queue (cache_model_take_ready), since a gate
    opens on a watch event, where no work callback is at hand.
*/
#include "cache_model.h"
#include "cache_model_private.h"

#include "bas_log.h"
#include "bas_msg.h"
#include "bas_util.h"
#include "bas_work.h"
#include "cache_defaults.h"

#include <stdio.h>
#include <string.h>

//  One claim of a gate.
typedef struct {
    char *uid;    // the claim's uid
    char *key;    // "ns/name", for logs
    char *pv;     // the PV chosen, or NULL: provisioned on node
    char *node;   // the pod's node
    bool writing; // a write is out, its result not yet in
    bool bound;   // the watch shows it bound as chosen
} s_claim_t;

struct _cache_gate_t {
    char *job_uid;     // the gang's PodGroup uid (logs)
    zlistx_t *claims;  // s_claim_t *
    zlistx_t *binds;   // Basalt__V1__Work * (bind work held)
    int64_t opened_ms; // for the timeout
};

static void
s_claim_free (void **item_p)
{
    s_claim_t *c = *item_p;
    if (c) {
        free (c->uid);
        free (c->key);
        free (c->pv);
        free (c->node);
        free (c);
    }
    *item_p = NULL;
}

static void
s_work_free (void **item_p)
{
    if (*item_p)
        basalt__v1__work__free_unpacked (*item_p, NULL);
    *item_p = NULL;
}

static void
s_gate_free (void **item_p)
{
    cache_gate_t *g = *item_p;
    if (g) {
        free (g->job_uid);
        zlistx_destroy (&g->claims);
        zlistx_destroy (&g->binds);
        free (g);
    }
    *item_p = NULL;
}

void
cache_claims_init (cache_model_t *self)
{
    self->gates = zlistx_new ();
    zlistx_set_destructor (self->gates, s_gate_free);
    self->gate_of_claim = zhashx_new ();
    self->pv_taken = zhashx_new ();
    self->inflight = zhashx_new ();
    self->pv_inflight = zhashx_new ();
    self->ready = zlistx_new ();
    zlistx_set_destructor (self->ready, s_work_free);
    self->volume_bind_timeout_ms = CACHE_VOLUME_BIND_TIMEOUT_MS;
}

void
cache_claims_fini (cache_model_t *self)
{
    zhashx_destroy (&self->gate_of_claim);
    zhashx_destroy (&self->pv_taken);
    zhashx_destroy (&self->inflight);
    zhashx_destroy (&self->pv_inflight);
    zlistx_destroy (&self->gates);
    zlistx_destroy (&self->ready);
}

static const Basalt__V1__PersistentVolumeClaim *
s_pvc (cache_model_t *self, const char *uid)
{
    const Basalt__V1__Object *o =
        uid ? bas_store_get (self->store,
                             BASALT__V1__OBJECT_KIND__OBJECT_KIND_PERSISTENT_VOLUME_CLAIM, uid)
            : NULL;
    return o ? o->persistent_volume_claim : NULL;
}

static const Basalt__V1__PersistentVolume *
s_pv (cache_model_t *self, const char *name)
{
    const Basalt__V1__Object *o =
        name ? bas_store_get (self->store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_PERSISTENT_VOLUME,
                              name)
             : NULL;
    return o ? o->persistent_volume : NULL;
}

static bool
s_set (const char *s)
{
    return s && *s;
}

//  The PV's claimRef names this claim (its uid, when the ref has one).
static bool
s_pv_names (const Basalt__V1__PersistentVolume *pv, const Basalt__V1__PersistentVolumeClaim *pvc)
{
    return bas_streq (pv->claim_name, pvc->name) &&
           bas_streq (pv->claim_namespace, pvc->namespace_) &&
           (!s_set (pv->claim_uid) || bas_streq (pv->claim_uid, pvc->uid));
}

const char *
cache_claims_check (cache_model_t *self, const Basalt__V1__Placement *pl, zhashx_t *gang_taken,
                    char *buf, size_t len)
{
    for (size_t i = 0; i < pl->n_claims; i++) {
        const Basalt__V1__ClaimBinding *cb = pl->claims[i];
        const char *name = cb->name ? cb->name : "?";
        const Basalt__V1__PersistentVolumeClaim *pvc = s_pvc (self, cb->claim_uid);
        if (!pvc || pvc->deleting) {
            snprintf (buf, len, "persistentvolumeclaim \"%s\" %s", name,
                      pvc ? "is being deleted" : "no longer exists");
            return buf;
        }
        if (zhashx_lookup (self->gate_of_claim, pvc->uid) ||
            zhashx_lookup (self->inflight, pvc->uid)) {
            snprintf (buf, len, "persistentvolumeclaim \"%s\" is being bound for another pod",
                      name);
            return buf;
        }
        //  Pods of the gang sharing a claim must agree on it (the session
        //  decides a shared claim once): the later ones add nothing.
        char decision[600];
        snprintf (decision, sizeof decision, "%s%s", s_set (cb->volume_name) ? "pv:" : "node:",
                  s_set (cb->volume_name) ? cb->volume_name : (pl->node ? pl->node : ""));
        const char *same = zhashx_lookup (gang_taken, pvc->uid);
        if (same) {
            if (strcmp (same, decision) != 0) {
                snprintf (buf, len,
                          "persistentvolumeclaim \"%s\" is decided twice in one gang, differently",
                          name);
                return buf;
            }
            continue;
        }
        zhashx_insert (gang_taken, pvc->uid, bas_strdup (decision));
        if (s_set (pvc->volume_name) &&
            !(s_set (cb->volume_name) && bas_streq (cb->volume_name, pvc->volume_name))) {
            snprintf (buf, len,
                      "persistentvolumeclaim \"%s\" was bound to volume \"%s\" since the "
                      "session's snapshot",
                      name, pvc->volume_name);
            return buf;
        }
        if (!s_set (cb->volume_name)) {
            //  Provisioning on the pod's node: a claim already given to
            //  another node is the provisioner's now.
            if (s_set (pvc->selected_node) && !bas_streq (pvc->selected_node, pl->node)) {
                snprintf (buf, len,
                          "persistentvolumeclaim \"%s\" is already being provisioned on node %s",
                          name, pvc->selected_node);
                return buf;
            }
            continue;
        }
        const Basalt__V1__PersistentVolume *pv = s_pv (self, cb->volume_name);
        if (!pv || pv->deleting) {
            snprintf (buf, len, "persistentvolume \"%s\" %s", cb->volume_name,
                      pv ? "is being deleted" : "no longer exists");
            return buf;
        }
        bool prebound = s_pv_names (pv, pvc);
        const char *taker = zhashx_lookup (self->pv_taken, pv->name);
        if ((s_set (pv->claim_name) && !prebound) || (taker && !bas_streq (taker, pvc->uid)) ||
            zhashx_lookup (self->pv_inflight, pv->name) ||
            (!prebound && !bas_streq (pv->phase, "Available")) ||
            zhashx_insert (gang_taken, pv->name, bas_strdup ("pv")) != 0) {
            snprintf (buf, len, "persistentvolume \"%s\" is no longer available", pv->name);
            return buf;
        }
    }
    return NULL;
}

cache_gate_t *
cache_claims_gate_new (cache_model_t *self, const char *job_uid)
{
    cache_gate_t *g = bas_alloc (sizeof *g);
    g->job_uid = bas_strdup (job_uid ? job_uid : "");
    g->claims = zlistx_new ();
    zlistx_set_destructor (g->claims, s_claim_free);
    g->binds = zlistx_new ();
    zlistx_set_destructor (g->binds, s_work_free);
    g->opened_ms = bas_mono_ms ();
    zlistx_add_end (self->gates, g);
    return g;
}

//  Bound as the gate wants it: a volume named (the chosen one, for a
//  static binding) and phase Bound.
static bool
s_bound (const s_claim_t *c, const Basalt__V1__PersistentVolumeClaim *pvc)
{
    return s_set (pvc->volume_name) && bas_streq (pvc->phase, "Bound") &&
           (!c->pv || bas_streq (c->pv, pvc->volume_name));
}

void
cache_claims_add (cache_model_t *self, cache_gate_t *g, const Basalt__V1__Placement *pl,
                  cache_work_fn *fn, void *arg)
{
    for (size_t i = 0; i < pl->n_claims; i++) {
        const Basalt__V1__ClaimBinding *cb = pl->claims[i];
        const Basalt__V1__PersistentVolumeClaim *pvc = s_pvc (self, cb->claim_uid);
        //  Checked just before: it exists; a claim an earlier pod of the
        //  gang shares is in the gate already.
        if (!pvc || zhashx_lookup (self->gate_of_claim, pvc->uid) == g)
            continue;
        s_claim_t *c = bas_alloc (sizeof *c);
        c->uid = bas_strdup (pvc->uid);
        char key[512];
        snprintf (key, sizeof key, "%s/%s", pvc->namespace_ ? pvc->namespace_ : "",
                  pvc->name ? pvc->name : "");
        c->key = bas_strdup (key);
        c->pv = s_set (cb->volume_name) ? bas_strdup (cb->volume_name) : NULL;
        c->node = bas_strdup (pl->node ? pl->node : "");
        zlistx_add_end (g->claims, c);
        zhashx_update (self->gate_of_claim, c->uid, g);
        const Basalt__V1__PersistentVolume *pv = c->pv ? s_pv (self, c->pv) : NULL;
        if (c->pv)
            zhashx_update (self->pv_taken, c->pv, c->uid);
        c->bound = s_bound (c, pvc);
        //  Written already (by a cache before this one): not again.
        bool done =
            c->bound || (pv ? s_pv_names (pv, pvc) : bas_streq (pvc->selected_node, c->node));
        if (done)
            continue;
        Basalt__V1__VolumeClaimWork *w = bas_alloc (sizeof *w);
        basalt__v1__volume_claim_work__init (w);
        w->namespace_ = bas_strdup (pvc->namespace_ ? pvc->namespace_ : "default");
        w->claim_name = bas_strdup (pvc->name ? pvc->name : "");
        w->claim_uid = bas_strdup (pvc->uid);
        w->node = bas_strdup (c->node);
        w->pod_uid = bas_strdup (pl->pod_uid ? pl->pod_uid : "");
        if (pv) {
            w->volume_name = bas_strdup (pv->name);
            w->volume_uid = bas_strdup_or_null (pv->uid);
            w->resource_version = bas_strdup_or_null (pv->resource_version);
        } else
            w->resource_version = bas_strdup_or_null (pvc->resource_version);
        c->writing = true;
        zhashx_update (self->inflight, c->uid, (void *)"1");
        if (pv)
            zhashx_update (self->pv_inflight, pv->name, (void *)"1");
        self->stats.claim_writes++;
        Basalt__V1__Work *work = bas_work_new (BASALT__V1__WORK__ITEM_CLAIM, &w->base);
        fn (arg, &work);
    }
}

void
cache_claims_hold (cache_gate_t *g, Basalt__V1__Work **work_p)
{
    zlistx_add_end (g->binds, *work_p);
    *work_p = NULL;
}

//  Close a gate: its claims are no longer assumed, and it is freed.
static void
s_close (cache_model_t *self, cache_gate_t *g)
{
    for (s_claim_t *c = zlistx_first (g->claims); c; c = zlistx_next (g->claims)) {
        if (zhashx_lookup (self->gate_of_claim, c->uid) == g)
            zhashx_delete (self->gate_of_claim, c->uid);
        if (c->pv && bas_streq (zhashx_lookup (self->pv_taken, c->pv), c->uid))
            zhashx_delete (self->pv_taken, c->pv);
    }
    void *handle = zlistx_find (self->gates, g);
    if (handle)
        zlistx_delete (self->gates, handle);
}

//  Every claim written and bound: the gang's binds go out.
static void
s_check (cache_model_t *self, cache_gate_t *g)
{
    for (s_claim_t *c = zlistx_first (g->claims); c; c = zlistx_next (g->claims))
        if (c->writing || !c->bound)
            return;
    bas_debug ("claims_bound", "job=%s claims=%zu pods=%zu", g->job_uid, zlistx_size (g->claims),
               zlistx_size (g->binds));
    Basalt__V1__Work *w;
    while ((w = zlistx_detach (g->binds, NULL)))
        zlistx_add_end (self->ready, w);
    s_close (self, g);
}

//  The gang's binds are given up: its pods are pending again.
static void
s_fail (cache_model_t *self, cache_gate_t *g, const char *claim, const char *why)
{
    self->stats.claim_gates_failed++;
    bas_warn ("claims_failed", "job=%s claim=%s pods=%zu reason=\"%s\"", g->job_uid, claim,
              zlistx_size (g->binds), why);
    for (Basalt__V1__Work *w = zlistx_first (g->binds); w; w = zlistx_next (g->binds))
        cache_model_release (self, w->bind);
    s_close (self, g);
}

//  The gate's claim of this uid, or NULL.
static s_claim_t *
s_gate_claim (cache_gate_t *g, const char *uid)
{
    s_claim_t *c = zlistx_first (g->claims);
    while (c && strcmp (c->uid, uid) != 0)
        c = zlistx_next (g->claims);
    return c;
}

void
cache_claims_opened (cache_model_t *self, cache_gate_t *g)
{
    s_check (self, g);
}

void
cache_claims_on_claim (cache_model_t *self, const char *uid)
{
    cache_gate_t *g = uid ? zhashx_lookup (self->gate_of_claim, uid) : NULL;
    if (!g)
        return;
    s_claim_t *c = s_gate_claim (g, uid);
    if (!c)
        return;
    const Basalt__V1__PersistentVolumeClaim *pvc = s_pvc (self, uid);
    if (!pvc) {
        s_fail (self, g, c->key, "the claim was deleted");
        return;
    }
    if (s_set (pvc->volume_name) && c->pv && !bas_streq (pvc->volume_name, c->pv)) {
        char why[512];
        snprintf (why, sizeof why, "the claim was bound to volume %s, not %s", pvc->volume_name,
                  c->pv);
        s_fail (self, g, c->key, why);
        return;
    }
    //  The provisioner gives up by taking the node back (kube-scheduler's
    //  checkBindings reads it so).
    if (!c->pv && !c->writing && !s_set (pvc->volume_name) && !s_set (pvc->selected_node)) {
        s_fail (self, g, c->key, "provisioning failed: the selected-node annotation was removed");
        return;
    }
    c->bound = s_bound (c, pvc);
    s_check (self, g);
}

void
cache_claims_result (cache_model_t *self, const Basalt__V1__VolumeClaimWork *w, bool ok,
                     const char *message)
{
    //  Landed or not, it is no longer on its way.
    if (w->claim_uid)
        zhashx_delete (self->inflight, w->claim_uid);
    if (s_set (w->volume_name))
        zhashx_delete (self->pv_inflight, w->volume_name);
    cache_gate_t *g = w->claim_uid ? zhashx_lookup (self->gate_of_claim, w->claim_uid) : NULL;
    if (!g)
        return; // the gate failed or timed out meanwhile
    s_claim_t *c = s_gate_claim (g, w->claim_uid);
    if (!c)
        return;
    c->writing = false;
    if (!ok) {
        char why[768];
        snprintf (why, sizeof why, "writing the claim failed: %s", message ? message : "");
        s_fail (self, g, c->key, why);
        return;
    }
    //  The watch may have shown it bound before the result came.
    const Basalt__V1__PersistentVolumeClaim *pvc = s_pvc (self, c->uid);
    if (pvc)
        c->bound = s_bound (c, pvc);
    s_check (self, g);
}

int
cache_claims_moot (cache_model_t *self, const Basalt__V1__VolumeClaimWork *w)
{
    if (!w->claim_uid || !zhashx_lookup (self->gate_of_claim, w->claim_uid))
        return -1; // its gate is gone: nothing waits for it
    const Basalt__V1__PersistentVolumeClaim *pvc = s_pvc (self, w->claim_uid);
    if (!pvc)
        return -1;
    if (s_set (w->volume_name)) {
        const Basalt__V1__PersistentVolume *pv = s_pv (self, w->volume_name);
        if (!pv)
            return -1;
        return s_pv_names (pv, pvc) ? 1 : 0;
    }
    return bas_streq (pvc->selected_node, w->node) ? 1 : 0;
}

int
cache_claims_expire (cache_model_t *self, int64_t now_ms)
{
    int failed = 0;
    cache_gate_t *g = zlistx_first (self->gates);
    while (g) {
        cache_gate_t *next = zlistx_next (self->gates);
        if (now_ms - g->opened_ms > self->volume_bind_timeout_ms) {
            char why[128];
            snprintf (why, sizeof why, "the claims were not bound within %lld ms",
                      (long long)self->volume_bind_timeout_ms);
            s_claim_t *c = zlistx_first (g->claims);
            s_fail (self, g, c ? c->key : "-", why);
            failed++;
            //  s_fail removed g, which moved the cursor: start over.
            next = zlistx_first (self->gates);
        }
        g = next;
    }
    return failed;
}

void
cache_model_set_volume_bind_timeout (cache_model_t *self, int64_t ms)
{
    self->volume_bind_timeout_ms = ms;
}

size_t
cache_model_claim_gates (cache_model_t *self)
{
    return zlistx_size (self->gates);
}

bool
cache_model_has_ready (cache_model_t *self)
{
    return zlistx_size (self->ready) > 0;
}

void
cache_model_take_ready (cache_model_t *self, cache_work_fn *fn, void *arg)
{
    Basalt__V1__Work *w;
    while ((w = zlistx_detach (self->ready, NULL)))
        fn (arg, &w);
}
