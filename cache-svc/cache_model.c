/*  cache_model: see cache_model.h.

    Design note: changes are coalesced by key until the next flush, so a pod
    modified five times in one batching window is published once, in its
    latest form; a key that was changed and then deleted is published as a
    delete. Node accounting is incremental: each kept pod has a "charge"
    (the node and request it was counted with) that is taken back before the
    pod's new state is counted.
*/
#include "cache_model.h"
#include "bas_util.h"
#include "cache_model_private.h"

#include "bas_hash.h"

#include "bas_k8s.h"
#include "bas_kube.h"
#include "bas_log.h"
#include "bas_msg.h"

#include <string.h>

//  What one pod is counted for, compactly: a bas_res_t is 608 bytes (eight
//  scalar slots with their names inline) and the cache holds one charge per
//  placed pod (150,000 at the restart benchmark's size: ~130 MB as it was).
typedef struct {
    int64_t milli_cpu; // what was counted (pods = 1)
    int64_t memory;
    int64_t pods;
    int nscalars;
    bas_scalar_t *scalars; // nscalars of them, or NULL
    char node[];           // node the pod is counted on
} s_charge_t;

static void
s_charge_free (void *item)
{
    s_charge_t *c = item;
    if (c) {
        free (c->scalars);
        free (c);
    }
}

static void
s_charge_res (const s_charge_t *c, bas_res_t *r)
{
    memset (r, 0, sizeof *r);
    r->milli_cpu = c->milli_cpu;
    r->memory = c->memory;
    r->pods = c->pods;
    r->nscalars = c->nscalars;
    if (c->nscalars)
        memcpy (r->scalars, c->scalars, (size_t)c->nscalars * sizeof *c->scalars);
}

typedef struct {
    bas_res_t used;   // sum of charges on the node
    bool out_of_sync; // accounted idle is negative
} s_acct_t;

typedef struct {
    Basalt__V1__ObjectKind kind;
    char *key;
} s_dirty_t;

static void
s_dirty_free (void *item)
{
    s_dirty_t *d = item;
    free (d->key);
    free (d);
}

static void
s_chunk_free (void *item)
{
    zchunk_t *chunk = (zchunk_t *)item;
    zchunk_destroy (&chunk);
}

static zlistx_t *
s_split (const char *list)
{
    zlistx_t *out = zlistx_new ();
    zlistx_set_destructor (out, (zlistx_destructor_fn *)zstr_free);
    char *copy = strdup (list ? list : "");
    char *save = NULL;
    for (char *tok = strtok_r (copy, ",", &save); tok; tok = strtok_r (NULL, ",", &save)) {
        while (*tok == ' ')
            tok++;
        if (*tok)
            zlistx_add_end (out, strdup (tok));
    }
    free (copy);
    return out;
}

cache_model_t *
cache_model_new (uint64_t epoch, const char *scheduler_names)
{
    cache_model_t *self = bas_alloc (sizeof *self);
    self->epoch = epoch;
    self->store = bas_store_new ();
    self->scheduler_names = s_split (scheduler_names);
    self->ignored_devices = s_split ("");
    self->charges = bas_hash_new (s_charge_free);
    self->accounts = zhashx_new ();
    zhashx_set_destructor (self->accounts, (zhashx_destructor_fn *)zstr_free);
    self->dirty = bas_hash_new (s_dirty_free);
    self->node_state_dirty = zhashx_new ();
    self->status_previous = bas_hash_new (s_chunk_free);
    self->evicting = zhashx_new ();
    self->nominated = zhashx_new ();
    zhashx_set_destructor (self->nominated, (zhashx_destructor_fn *)zstr_free);
    cache_claims_init (self);
    return self;
}

void
cache_model_destroy (cache_model_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    cache_model_t *self = *self_p;
    free (self->flush_upserts);
    free (self->flush_deletes);
    free (self->flush_refs);
    bas_store_destroy (&self->store);
    zlistx_destroy (&self->scheduler_names);
    zlistx_destroy (&self->ignored_devices);
    bas_hash_destroy (&self->charges);
    zhashx_destroy (&self->accounts);
    bas_hash_destroy (&self->dirty);
    zhashx_destroy (&self->node_state_dirty);
    bas_hash_destroy (&self->status_previous);
    zhashx_destroy (&self->evicting);
    zhashx_destroy (&self->nominated);
    cache_claims_fini (self);
    free (self);
    *self_p = NULL;
}

bas_store_t *
cache_model_store (cache_model_t *self)
{
    return self->store;
}

uint64_t
cache_model_seq (cache_model_t *self)
{
    return self->seq;
}

uint64_t
cache_model_epoch (cache_model_t *self)
{
    return self->epoch;
}

void
cache_model_set_ignored_devices (cache_model_t *self, const char *comma_list)
{
    zlistx_destroy (&self->ignored_devices);
    self->ignored_devices = s_split (comma_list);
}

void
cache_model_set_synced (cache_model_t *self, bool synced)
{
    if (self->synced != synced) {
        self->synced = synced;
        self->synced_dirty = true;
    }
}

bool
cache_model_synced (cache_model_t *self)
{
    return self->synced;
}

void
cache_model_set_standby (cache_model_t *self, bool standby)
{
    if (self->standby != standby) {
        self->standby = standby;
        self->standby_dirty = true;
    }
}

bool
cache_model_standby (cache_model_t *self)
{
    return self->standby;
}

void
cache_model_mark (cache_model_t *self, Basalt__V1__ObjectKind kind, const char *key)
{
    char k[512];
    snprintf (k, sizeof k, "%d/%s", (int)kind, key);
    if (bas_hash_lookup (self->dirty, k))
        return;
    s_dirty_t *d = bas_malloc (sizeof *d);
    d->kind = kind;
    d->key = strdup (key);
    bas_hash_insert (self->dirty, k, d);
}

// ------------------------------------------------------------ accounting

//  Zero the scalar resources of the ignored-devices list in r. The cache
//  counts them as the sessions do (sess_model.c): neither in a node's
//  allocatable nor in a pod's request. Otherwise a placement a session
//  made with the device ignored is refused here ("insufficient"), and a
//  pod bound anyway would push its node's accounted idle negative.
void
cache_model_drop_ignored (cache_model_t *self, bas_res_t *r)
{
    if (r->nscalars == 0)
        return;
    for (const char *name = zlistx_first (self->ignored_devices); name;
         name = zlistx_next (self->ignored_devices))
        bas_res_scalar_set (r, name, 0);
}

static s_acct_t *
s_account (cache_model_t *self, const char *node)
{
    s_acct_t *a = zhashx_lookup (self->accounts, node);
    if (!a) {
        a = bas_alloc (sizeof *a);
        zhashx_insert (self->accounts, node, a);
    }
    return a;
}

//  Recompute a node's sync state from its allocatable and accounted use.
static void
s_check_node (cache_model_t *self, const char *name)
{
    s_acct_t *a = zhashx_lookup (self->accounts, name);
    const Basalt__V1__Node *node = bas_store_node (self->store, name);
    bool out = false;
    const char *which = NULL;
    bas_res_t idle;
    bas_res_zero (&idle);
    if (a && node) {
        char err[256];
        if (bas_res_from_proto (&idle, node->allocatable, err, sizeof err) != 0)
            bas_warn ("node_allocatable_bad", "node=%s msg=\"%s\"", name, err);
        cache_model_drop_ignored (self, &idle);
        bas_res_t used = a->used;
        if (idle.pods == 0)
            used.pods = 0; // a node that states no pod limit has none
        out = bas_res_sub (&idle, &used) == BAS_RES_NEGATIVE;
        if (out)
            bas_res_is_negative (&idle, &which);
    }
    if (!a || a->out_of_sync == out)
        return;
    a->out_of_sync = out;
    zhashx_update (self->node_state_dirty, name, out ? "1" : "0");
    if (out) {
        char used_s[256], alloc_s[256];
        bas_res_t alloc;
        bas_res_zero (&alloc);
        bas_res_from_proto (&alloc, node->allocatable, NULL, 0);
        bas_res_format (&a->used, used_s, sizeof used_s);
        bas_res_format (&alloc, alloc_s, sizeof alloc_s);
        self->stats.out_of_sync_events++;
        bas_warn ("node_out_of_sync", "node=%s resource=%s used=\"%s\" allocatable=\"%s\"", name,
                  which ? which : "?", used_s, alloc_s);
    } else
        bas_info ("node_in_sync", "node=%s", name);
}

bool
cache_model_terminal (const char *phase)
{
    return phase && (strcmp (phase, "Succeeded") == 0 || strcmp (phase, "Failed") == 0);
}

static const char *
s_pod_node (const Basalt__V1__Pod *pod)
{
    if (pod->node_name && *pod->node_name)
        return pod->node_name;
    if (pod->assumed_node && *pod->assumed_node)
        return pod->assumed_node;
    return NULL;
}

void
cache_model_uncharge (cache_model_t *self, const char *uid)
{
    s_charge_t *c = bas_hash_lookup (self->charges, uid);
    if (!c)
        return;
    s_acct_t *a = s_account (self, c->node);
    bas_res_t req;
    s_charge_res (c, &req);
    bas_res_sub (&a->used, &req);
    char node[256];
    snprintf (node, sizeof node, "%s", c->node);
    bas_hash_delete (self->charges, uid);
    s_check_node (self, node);
}

void
cache_model_charge (cache_model_t *self, const Basalt__V1__Pod *pod)
{
    if (pod->uid)
        cache_model_uncharge (self, pod->uid); // a pod counts once, on one node
    const char *node = s_pod_node (pod);
    if (!node || cache_model_terminal (pod->phase) || !pod->uid)
        return;
    bas_res_t req;
    char err[256];
    if (bas_res_from_proto (&req, pod->requests, err, sizeof err) != 0)
        bas_warn ("pod_requests_bad", "pod=%s/%s msg=\"%s\"", pod->namespace_, pod->name, err);
    cache_model_drop_ignored (self, &req);
    req.pods = 1;
    size_t nlen = strlen (node) + 1;
    s_charge_t *c = bas_malloc (sizeof *c + nlen);
    memcpy (c->node, node, nlen);
    c->milli_cpu = req.milli_cpu;
    c->memory = req.memory;
    c->pods = req.pods;
    c->nscalars = req.nscalars;
    c->scalars = NULL;
    if (req.nscalars) {
        c->scalars = bas_malloc ((size_t)req.nscalars * sizeof *c->scalars);
        memcpy (c->scalars, req.scalars, (size_t)req.nscalars * sizeof *c->scalars);
    }
    s_acct_t *a = s_account (self, node);
    bas_res_add (&a->used, &req);
    bas_hash_update (self->charges, pod->uid, c);
    s_check_node (self, node);
}

const bas_res_t *
cache_model_node_used (cache_model_t *self, const char *node)
{
    s_acct_t *a = zhashx_lookup (self->accounts, node);
    return a ? &a->used : NULL;
}

bool
cache_model_node_out_of_sync (cache_model_t *self, const char *node)
{
    s_acct_t *a = zhashx_lookup (self->accounts, node);
    return a && a->out_of_sync;
}

size_t
cache_model_nodes_out_of_sync (cache_model_t *self)
{
    size_t n = 0;
    for (s_acct_t *a = zhashx_first (self->accounts); a; a = zhashx_next (self->accounts))
        n += a->out_of_sync;
    return n;
}

// ------------------------------------------------------------ changes

static bool
s_ours (cache_model_t *self, const Basalt__V1__Pod *pod)
{
    if (pod->node_name && *pod->node_name)
        return true; // counts against its node whoever placed it
    for (const char *n = zlistx_first (self->scheduler_names); n;
         n = zlistx_next (self->scheduler_names))
        if (pod->scheduler_name && strcmp (n, pod->scheduler_name) == 0)
            return true;
    return false;
}

void
cache_model_upsert (cache_model_t *self, Basalt__V1__Object **obj_p)
{
    Basalt__V1__Object *obj = *obj_p;
    const char *key = obj ? bas_store_key (obj) : NULL;
    if (!key) {
        if (obj)
            protobuf_c_message_free_unpacked (&obj->base, NULL);
        *obj_p = NULL;
        return;
    }
    char *keycopy = strdup (key);
    if (obj->kind_case == BASALT__V1__OBJECT__KIND_POD) {
        Basalt__V1__Pod *pod = obj->pod;
        const Basalt__V1__Pod *old = bas_store_pod (self->store, keycopy);
        //  An assumed pod stays assumed until the API shows it bound, the
        //  bind fails, or it is deleted (Volcano's Binding status).
        if (old && old->assumed_node && *old->assumed_node &&
            !(pod->node_name && *pod->node_name) && !pod->deleting) {
            free (pod->assumed_node);
            pod->assumed_node = strdup (old->assumed_node);
        }
        //  Likewise an accepted eviction: the pod is Releasing from then on
        //  (Volcano's cache does the same), so the next session does not
        //  evict more for the same preemptor before the API's delete comes.
        if (zhashx_lookup (self->evicting, keycopy)) {
            if (pod->deleting)
                zhashx_update (self->evicting, keycopy, (void *)"api"); // the API says so itself
            else {
                pod->has_deleting = 1;
                pod->deleting = 1;
            }
        }
        if (!s_ours (self, pod)) {
            protobuf_c_message_free_unpacked (&obj->base, NULL);
            *obj_p = NULL;
            cache_model_delete (self, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, keycopy);
            free (keycopy);
            return;
        }
        cache_model_uncharge (self, keycopy);
        bas_store_upsert (self->store, obj_p);
        cache_model_charge (self, bas_store_pod (self->store, keycopy));
        cache_model_mark (self, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, keycopy);
    } else {
        //  Known: bas_store_key found its key above.
        Basalt__V1__ObjectKind kind = bas_store_kind (obj);
        bas_store_upsert (self->store, obj_p);
        cache_model_mark (self, kind, keycopy);
        //  The API's status now stands; a failed write must not roll back over it.
        if (kind == BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP)
            bas_hash_delete (self->status_previous, keycopy);
        if (kind == BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE) {
            s_account (self, keycopy);
            s_check_node (self, keycopy);
        }
        if (kind == BASALT__V1__OBJECT_KIND__OBJECT_KIND_PERSISTENT_VOLUME_CLAIM)
            cache_claims_on_claim (self, keycopy);
    }
    free (keycopy);
}

void
cache_model_delete (cache_model_t *self, Basalt__V1__ObjectKind kind, const char *key)
{
    if (!key)
        return;
    if (kind == BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD) {
        cache_model_uncharge (self, key);
        zhashx_delete (self->evicting, key);
        zhashx_delete (self->nominated, key);
    }
    if (bas_store_delete (self->store, kind, key) == 0)
        cache_model_mark (self, kind, key);
    if (kind == BASALT__V1__OBJECT_KIND__OBJECT_KIND_PERSISTENT_VOLUME_CLAIM)
        cache_claims_on_claim (self, key);
    if (kind == BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP)
        bas_hash_delete (self->status_previous, key);
    if (kind == BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE) {
        s_acct_t *a = zhashx_lookup (self->accounts, key);
        if (a && a->out_of_sync)
            zhashx_update (self->node_state_dirty, key, "0");
        //  Pods still charged to a deleted node keep their account.
        if (a && a->used.pods == 0)
            zhashx_delete (self->accounts, key);
    }
}

static const char *
s_json_str (const cJSON *obj, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive (obj, a);
    x = x ? cJSON_GetObjectItemCaseSensitive (x, b) : NULL;
    return cJSON_IsString (x) ? x->valuestring : NULL;
}

int
cache_model_api_event (cache_model_t *self, Basalt__V1__ObjectKind kind, int event,
                       const cJSON *object)
{
    if (event == BAS_KUBE_DELETED) {
        const bas_kind_t *k = bas_kind_of (kind);
        const char *key =
            k ? s_json_str (object, "metadata", k->key == BAS_KIND_KEY_UID ? "uid" : "name") : NULL;
        if (!key) {
            self->stats.decode_errors++;
            bas_warn ("api_delete_without_key", "kind=%d", (int)kind);
            return -1;
        }
        cache_model_delete (self, kind, key);
        return 0;
    }
    char err[512] = "";
    Basalt__V1__Object *obj = bas_k8s_object_from_json (kind, object, err, sizeof err);
    if (!obj) {
        self->stats.decode_errors++;
        const char *ns = s_json_str (object, "metadata", "namespace");
        const char *name = s_json_str (object, "metadata", "name");
        bas_warn ("api_object_invalid", "kind=%d object=%s%s%s msg=\"%s\"", (int)kind, ns ? ns : "",
                  ns ? "/" : "", name ? name : "?", err);
        return -1;
    }
    cache_model_upsert (self, &obj);
    return 0;
}

// ------------------------------------------------------------ deltas

bool
cache_model_dirty (cache_model_t *self)
{
    return bas_hash_size (self->dirty) || zhashx_size (self->node_state_dirty) ||
           self->synced_dirty || self->standby_dirty;
}

size_t
cache_model_dirty_count (cache_model_t *self)
{
    return bas_hash_size (self->dirty);
}

static Basalt__V1__NodeSyncState **
s_node_states (cache_model_t *self, zhashx_t *source, size_t *n_p, bool only_out)
{
    size_t cap = zhashx_size (source), n = 0;
    Basalt__V1__NodeSyncState **states = bas_alloc ((cap ? cap : 1) * sizeof *states);
    (void)self;
    for (void *v = zhashx_first (source); v; v = zhashx_next (source)) {
        const char *name = zhashx_cursor (source);
        bool out = only_out ? ((s_acct_t *)v)->out_of_sync : strcmp ((char *)v, "1") == 0;
        if (only_out && !out)
            continue;
        Basalt__V1__NodeSyncState *s = bas_malloc (sizeof *s);
        basalt__v1__node_sync_state__init (s);
        s->node = (char *)name;
        s->has_out_of_sync = 1;
        s->out_of_sync = out;
        s->reason = out ? "accounted idle is negative" : NULL;
        states[n++] = s;
    }
    *n_p = n;
    return states;
}

static void
s_free_states (Basalt__V1__NodeSyncState **states, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free (states[i]);
    free (states);
}

zframe_t *
cache_model_flush (cache_model_t *self, uint64_t *seq_p)
{
    if (!cache_model_dirty (self))
        return NULL;
    Basalt__V1__Delta delta = BASALT__V1__DELTA__INIT;
    size_t n = bas_hash_size (self->dirty);
    //  Objects are borrowed from the store for packing; nothing is copied.
    if (n > self->flush_cap) {
        self->flush_cap = n * 2;
        free (self->flush_upserts);
        free (self->flush_deletes);
        free (self->flush_refs);
        self->flush_upserts = bas_malloc (self->flush_cap * sizeof *self->flush_upserts);
        self->flush_deletes = bas_malloc (self->flush_cap * sizeof *self->flush_deletes);
        self->flush_refs = bas_malloc (self->flush_cap * sizeof *self->flush_refs);
    }
    Basalt__V1__Object **upserts = self->flush_upserts;
    Basalt__V1__ObjectRef **deletes = self->flush_deletes;
    Basalt__V1__ObjectRef *refs = self->flush_refs;
    for (s_dirty_t *d = bas_hash_first (self->dirty); d; d = bas_hash_next (self->dirty)) {
        Basalt__V1__Object *obj = bas_store_lend (self->store, d->kind, d->key);
        if (obj)
            upserts[delta.n_upserts++] = obj;
        else {
            Basalt__V1__ObjectRef *ref = &refs[delta.n_deletes];
            basalt__v1__object_ref__init (ref);
            ref->has_kind = 1;
            ref->kind = d->kind;
            ref->key = d->key;
            deletes[delta.n_deletes++] = ref;
        }
    }
    delta.upserts = upserts;
    delta.deletes = deletes;
    delta.has_epoch = 1;
    delta.epoch = self->epoch;
    delta.has_seq = 1;
    delta.seq = ++self->seq;
    if (self->synced_dirty) {
        delta.has_synced = 1;
        delta.synced = self->synced;
    }
    if (self->standby_dirty) {
        delta.has_standby = 1;
        delta.standby = self->standby;
    }
    delta.node_states = s_node_states (self, self->node_state_dirty, &delta.n_node_states, false);
    size_t len = basalt__v1__delta__get_packed_size (&delta);
    zframe_t *frame = zframe_new (NULL, len);
    basalt__v1__delta__pack (&delta, zframe_data (frame));
    s_free_states (delta.node_states, delta.n_node_states);
    bas_hash_purge (self->dirty);
    zhashx_purge (self->node_state_dirty);
    self->synced_dirty = false;
    self->standby_dirty = false;
    if (seq_p)
        *seq_p = delta.seq;
    return frame;
}

struct _cache_snapshot_t {
    bas_store_cursor_t *cursor;
    uint64_t seq; // deltas after this one follow the parts
    uint64_t request_id;
    bool synced;  // at the seq
    bool standby; // at the seq
    bool started; // part 0 is out
};

cache_snapshot_t *
cache_model_snapshot_begin (cache_model_t *self, uint64_t request_id)
{
    cache_snapshot_t *snap = bas_alloc (sizeof *snap);
    snap->cursor = bas_store_cursor_new (self->store);
    snap->seq = self->seq;
    snap->request_id = request_id;
    snap->synced = self->synced;
    snap->standby = self->standby;
    return snap;
}

void
cache_snapshot_destroy (cache_snapshot_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    bas_store_cursor_destroy (&(*self_p)->cursor);
    free (*self_p);
    *self_p = NULL;
}

zframe_t *
cache_model_snapshot_part (cache_model_t *self, cache_snapshot_t *snap, size_t max, bool *more)
{
    Basalt__V1__Snapshot extra = BASALT__V1__SNAPSHOT__INIT;
    extra.has_epoch = 1;
    extra.epoch = self->epoch;
    extra.has_seq = 1;
    extra.seq = snap->seq;
    extra.has_request_id = 1;
    extra.request_id = snap->request_id;
    extra.has_upto_seq = 1;
    extra.upto_seq = self->seq;
    //  What is not an object goes in part 0, as it is at the snapshot's
    //  seq; later changes to it travel in the deltas as they always do.
    char **ignored = NULL;
    if (!snap->started) {
        snap->started = true;
        extra.has_synced = 1;
        extra.synced = snap->synced;
        extra.has_standby = snap->standby;
        extra.standby = snap->standby;
        size_t nign = zlistx_size (self->ignored_devices), i = 0;
        ignored = bas_alloc ((nign ? nign : 1) * sizeof *ignored);
        for (char *s = zlistx_first (self->ignored_devices); s;
             s = zlistx_next (self->ignored_devices))
            ignored[i++] = s;
        extra.ignored_devices = ignored;
        extra.n_ignored_devices = nign;
        extra.node_states = s_node_states (self, self->accounts, &extra.n_node_states, true);
    }
    zframe_t *frame = bas_store_pack_part (self->store, snap->cursor, max, &extra);
    s_free_states (extra.node_states, extra.n_node_states);
    free (ignored);
    *more = bas_store_cursor_left (snap->cursor) > 0;
    return frame;
}

static void *
s_snap_begin (void *arg, uint64_t request_id)
{
    return cache_model_snapshot_begin (arg, request_id);
}

static zframe_t *
s_snap_part (void *arg, void *snap, size_t max, bool *more)
{
    return cache_model_snapshot_part (arg, snap, max, more);
}

static void
s_snap_end (void **snap_p)
{
    cache_snapshot_destroy ((cache_snapshot_t **)snap_p);
}

const bas_clone_source_t cache_model_clone_source = {s_snap_begin, s_snap_part, s_snap_end};

zframe_t *
cache_model_snapshot (cache_model_t *self)
{
    cache_snapshot_t *snap = cache_model_snapshot_begin (self, 0);
    bool more = false;
    zframe_t *frame = cache_model_snapshot_part (self, snap, SIZE_MAX, &more);
    cache_snapshot_destroy (&snap);
    return frame;
}

// ------------------------------------------------------------ commits

void
cache_model_stats (cache_model_t *self, cache_model_stats_t *stats)
{
    *stats = self->stats;
}
