/*  cache_model: see cache_model.h.

    Design note: changes are coalesced by key until the next flush, so a pod
    modified five times in one batching window is published once, in its
    latest form; a key that was changed and then deleted is published as a
    delete. Node accounting is incremental: each kept pod has a "charge"
    (the node and request it was counted with) that is taken back before the
    pod's new state is counted.
*/
#include "cache_model.h"

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

struct _cache_model_t {
    //  cache_model_flush's arrays, kept between flushes: three large
    //  callocs per flush made glibc consolidate its fastbins each time,
    //  a tenth of the cache's CPU while it listed 150,000 pods.
    Basalt__V1__Object **flush_upserts;
    Basalt__V1__ObjectRef **flush_deletes;
    Basalt__V1__ObjectRef *flush_refs;
    size_t flush_cap;
    uint64_t epoch;              // this run of the cache
    uint64_t seq;                // last published delta
    bool synced;                 // every informer listed once
    bool synced_dirty;           // synced changed since the last flush
    bool standby;                // no leader lease: readers act on nothing
    bool standby_dirty;          // standby changed since the last flush
    bas_store_t *store;          // the model
    zlistx_t *scheduler_names;   // char*, pods of these schedulers are ours
    zlistx_t *ignored_devices;   // char*, immutable after start
    bas_hash_t *charges;         // pod uid -> s_charge_t (grows without an O(n) insert)
    zhashx_t *accounts;          // node name -> s_acct_t
    bas_hash_t *dirty;           // "kind/key" -> s_dirty_t, changes not yet published
    zhashx_t *node_state_dirty;  // node name -> "1"/"0": sync state changes not yet published
    bas_hash_t *status_previous; // pod group uid -> packed previous status (zchunk_t*)
    zhashx_t *evicting;          // pod uid -> "1" (marked Releasing by us) or "api" (by the API)
    zhashx_t *nominated;         // pod uid -> node written as status.nominatedNodeName
    cache_model_stats_t stats;
};

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
    cache_model_t *self = calloc (1, sizeof *self);
    if (!self)
        abort ();
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

static void
s_mark (cache_model_t *self, Basalt__V1__ObjectKind kind, const char *key)
{
    char k[512];
    snprintf (k, sizeof k, "%d/%s", (int)kind, key);
    if (bas_hash_lookup (self->dirty, k))
        return;
    s_dirty_t *d = malloc (sizeof *d);
    if (!d)
        abort ();
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
static void
s_drop_ignored (cache_model_t *self, bas_res_t *r)
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
        a = calloc (1, sizeof *a);
        if (!a)
            abort ();
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
        s_drop_ignored (self, &idle);
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

static bool
s_terminal (const char *phase)
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

static void
s_uncharge (cache_model_t *self, const char *uid)
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

static void
s_charge (cache_model_t *self, const Basalt__V1__Pod *pod)
{
    if (pod->uid)
        s_uncharge (self, pod->uid); // a pod counts once, on one node
    const char *node = s_pod_node (pod);
    if (!node || s_terminal (pod->phase) || !pod->uid)
        return;
    bas_res_t req;
    char err[256];
    if (bas_res_from_proto (&req, pod->requests, err, sizeof err) != 0)
        bas_warn ("pod_requests_bad", "pod=%s/%s msg=\"%s\"", pod->namespace_, pod->name, err);
    s_drop_ignored (self, &req);
    req.pods = 1;
    size_t nlen = strlen (node) + 1;
    s_charge_t *c = malloc (sizeof *c + nlen);
    if (!c)
        abort ();
    memcpy (c->node, node, nlen);
    c->milli_cpu = req.milli_cpu;
    c->memory = req.memory;
    c->pods = req.pods;
    c->nscalars = req.nscalars;
    c->scalars = NULL;
    if (req.nscalars) {
        c->scalars = malloc ((size_t)req.nscalars * sizeof *c->scalars);
        if (!c->scalars)
            abort ();
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
        s_uncharge (self, keycopy);
        bas_store_upsert (self->store, obj_p);
        s_charge (self, bas_store_pod (self->store, keycopy));
        s_mark (self, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, keycopy);
    } else {
        //  Known: bas_store_key found its key above.
        Basalt__V1__ObjectKind kind = bas_store_kind (obj);
        bas_store_upsert (self->store, obj_p);
        s_mark (self, kind, keycopy);
        //  The API's status now stands; a failed write must not roll back over it.
        if (kind == BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP)
            bas_hash_delete (self->status_previous, keycopy);
        if (kind == BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE) {
            s_account (self, keycopy);
            s_check_node (self, keycopy);
        }
    }
    free (keycopy);
}

void
cache_model_delete (cache_model_t *self, Basalt__V1__ObjectKind kind, const char *key)
{
    if (!key)
        return;
    if (kind == BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD) {
        s_uncharge (self, key);
        zhashx_delete (self->evicting, key);
        zhashx_delete (self->nominated, key);
    }
    if (bas_store_delete (self->store, kind, key) == 0)
        s_mark (self, kind, key);
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
    Basalt__V1__NodeSyncState **states = calloc (cap ? cap : 1, sizeof *states);
    if (!states)
        abort ();
    (void)self;
    for (void *v = zhashx_first (source); v; v = zhashx_next (source)) {
        const char *name = zhashx_cursor (source);
        bool out = only_out ? ((s_acct_t *)v)->out_of_sync : strcmp ((char *)v, "1") == 0;
        if (only_out && !out)
            continue;
        Basalt__V1__NodeSyncState *s = malloc (sizeof *s);
        if (!s)
            abort ();
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
        self->flush_upserts = malloc (self->flush_cap * sizeof *self->flush_upserts);
        self->flush_deletes = malloc (self->flush_cap * sizeof *self->flush_deletes);
        self->flush_refs = malloc (self->flush_cap * sizeof *self->flush_refs);
        if (!self->flush_upserts || !self->flush_deletes || !self->flush_refs)
            abort ();
    }
    Basalt__V1__Object **upserts = self->flush_upserts;
    Basalt__V1__ObjectRef **deletes = self->flush_deletes;
    Basalt__V1__ObjectRef *refs = self->flush_refs;
    for (s_dirty_t *d = bas_hash_first (self->dirty); d; d = bas_hash_next (self->dirty)) {
        Basalt__V1__Object *obj =
            (Basalt__V1__Object *)bas_store_get (self->store, d->kind, d->key);
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
    cache_snapshot_t *snap = calloc (1, sizeof *snap);
    if (!snap)
        abort ();
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
        ignored = calloc (nign ? nign : 1, sizeof *ignored);
        if (!ignored)
            abort ();
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

static Basalt__V1__ItemResult *
s_item (const char *key, bool accepted, const char *reason)
{
    Basalt__V1__ItemResult *r = malloc (sizeof *r);
    if (!r)
        abort ();
    basalt__v1__item_result__init (r);
    r->key = strdup (key ? key : "");
    r->has_accepted = 1;
    r->accepted = accepted;
    r->reason = reason ? strdup (reason) : NULL;
    return r;
}

//  Why a placement cannot be accepted now, or NULL if it can. `extra` is
//  what this gang already placed on the node (tentatively, not yet charged).
static const char *
s_check_placement (cache_model_t *self, const Basalt__V1__Placement *pl, const bas_res_t *extra,
                   bas_res_t *req_out, char *buf, size_t len)
{
    const Basalt__V1__Pod *pod = pl->pod_uid ? bas_store_pod (self->store, pl->pod_uid) : NULL;
    if (!pod)
        return "pod no longer exists";
    if (pod->deleting)
        return "pod is being deleted";
    if ((pod->node_name && *pod->node_name) || (pod->assumed_node && *pod->assumed_node))
        return "pod is already placed";
    if (s_terminal (pod->phase))
        return "pod has finished";
    if (pl->pod_resource_version && pod->resource_version &&
        strcmp (pl->pod_resource_version, pod->resource_version) != 0)
        return "pod changed since the session's snapshot";
    const Basalt__V1__Node *node = pl->node ? bas_store_node (self->store, pl->node) : NULL;
    if (!node)
        return "node no longer exists";
    if (node->has_ready && !node->ready)
        return "node is not ready";
    if (node->unschedulable)
        return "node is unschedulable";
    if (cache_model_node_out_of_sync (self, pl->node))
        return "node is out of sync";
    bas_res_t idle, req;
    bas_res_zero (&idle);
    bas_res_zero (&req);
    bas_res_from_proto (&idle, node->allocatable, NULL, 0);
    bas_res_from_proto (&req, pod->requests, NULL, 0);
    s_drop_ignored (self, &idle);
    s_drop_ignored (self, &req);
    req.pods = idle.pods > 0 ? 1 : 0;
    const bas_res_t *used = cache_model_node_used (self, pl->node);
    if (used) {
        bas_res_t u = *used;
        if (idle.pods == 0)
            u.pods = 0;
        bas_res_sub (&idle, &u);
    }
    bas_res_sub (&idle, extra);
    if (!bas_res_fits (&req, &idle)) {
        const char *names[4];
        int n = bas_res_insufficient (&req, &idle, names, 4);
        snprintf (buf, len, "node %s has insufficient %s", pl->node,
                  n > 0 ? names[0] : "resources");
        return buf;
    }
    *req_out = req;
    return NULL;
}

static void
s_add_result (Basalt__V1__CommitResult *result, size_t *cap, Basalt__V1__ItemResult *item)
{
    if (result->n_results == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        result->results = realloc (result->results, *cap * sizeof *result->results);
        if (!result->results)
            abort ();
    }
    result->results[result->n_results++] = item;
}

//  Accepted proposals are counted, not listed.
static void
s_accept (Basalt__V1__CommitResult *result)
{
    result->has_accepted = 1;
    result->accepted++;
}

static Basalt__V1__Work *
s_work_new (void)
{
    Basalt__V1__Work *w = malloc (sizeof *w);
    if (!w)
        abort ();
    basalt__v1__work__init (w);
    return w;
}

//  A commit being applied in slices (cache_model_commit_begin/step/end).
struct _cache_commit_t {
    const Basalt__V1__Commit *commit; // borrowed: the caller keeps it until _end
    Basalt__V1__CommitResult *result; // borrowed: filled here
    size_t cap;                       // room in result->results
    size_t *order;                    // placement indices grouped by job (bas_msg_commit_gangs)
    size_t *start;                    // each job's range in order
    size_t jobs;                      // number of jobs
    size_t next_job, next_eviction, next_status, next_condition, next_event; // progress
    int accepted;              // placements accepted so far
    Basalt__V1__Commit *owned; // the same commit when its placements are freed
                               // as their gangs are applied (_consume), or NULL
};

//  One gang, all of its placements or none (the g-th job of the commit).
static void
s_commit_gang (cache_model_t *self, cache_commit_t *cc, size_t g, cache_work_fn *fn, void *arg)
{
    const Basalt__V1__Commit *commit = cc->commit;
    Basalt__V1__CommitResult *result = cc->result;
    const Basalt__V1__Placement *first = commit->placements[cc->order[cc->start[g]]];
    const char *reason = NULL;
    char buf[256];
    zhashx_t *tentative = zhashx_new (); // node -> bas_res_t for this job
    zhashx_set_destructor (tentative, (zhashx_destructor_fn *)zstr_free);
    zhashx_t *seen = zhashx_new (); // pod uids of this job so far
    for (size_t k = cc->start[g]; k < cc->start[g + 1] && !reason; k++) {
        const Basalt__V1__Placement *pl = commit->placements[cc->order[k]];
        if (pl->pipelined)
            continue;
        //  A pod proposed twice would be bound twice: refuse the gang.
        if (pl->pod_uid && zhashx_insert (seen, pl->pod_uid, (void *)"1") != 0) {
            reason = "pod proposed twice in one gang";
            break;
        }
        //  Gangs accepted earlier in this commit are already charged to
        //  their nodes (s_charge below): only this gang's own earlier
        //  placements are tentative here, or they would count twice.
        bas_res_t sum, req;
        bas_res_zero (&sum);
        const char *node = pl->node ? pl->node : "";
        bas_res_t *t = zhashx_lookup (tentative, node);
        if (t)
            bas_res_add (&sum, t);
        reason = s_check_placement (self, pl, &sum, &req, buf, sizeof buf);
        if (!reason) {
            if (!t) {
                t = calloc (1, sizeof *t);
                if (!t)
                    abort ();
                zhashx_insert (tentative, node, t);
            }
            bas_res_add (t, &req);
        }
    }
    for (size_t k = cc->start[g]; k < cc->start[g + 1]; k++) {
        const Basalt__V1__Placement *pl = commit->placements[cc->order[k]];
        if (pl->pipelined) {
            //  A reservation on resources being freed: nothing to bind
            //  and nothing to charge; the next session decides again.
            //  The pod is nominated to the node (status.nominatedNodeName),
            //  written only when the nomination changes.
            s_accept (result);
            const Basalt__V1__Pod *pod =
                pl->pod_uid ? bas_store_pod (self->store, pl->pod_uid) : NULL;
            const char *was = pod ? zhashx_lookup (self->nominated, pod->uid) : NULL;
            if (pod && pl->node && (!was || strcmp (was, pl->node) != 0)) {
                zhashx_update (self->nominated, pod->uid, strdup (pl->node));
                Basalt__V1__Work *w = s_work_new ();
                Basalt__V1__PodConditionWork *cw = malloc (sizeof *cw);
                if (!cw)
                    abort ();
                basalt__v1__pod_condition_work__init (cw);
                cw->namespace_ = strdup (pod->namespace_ ? pod->namespace_ : "default");
                cw->name = strdup (pod->name ? pod->name : "");
                cw->pod_uid = strdup (pod->uid);
                cw->nominated_node_name = strdup (pl->node);
                w->item_case = BASALT__V1__WORK__ITEM_POD_CONDITION;
                w->pod_condition = cw;
                fn (arg, &w);
            }
            continue;
        }
        if (reason) {
            self->stats.placements_rejected++;
            s_add_result (result, &cc->cap, s_item (pl->pod_uid, false, reason));
            continue;
        }
        Basalt__V1__Pod *pod = (Basalt__V1__Pod *)bas_store_pod (self->store, pl->pod_uid);
        free (pod->assumed_node);
        pod->assumed_node = strdup (pl->node);
        s_charge (self, pod);
        s_mark (self, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, pl->pod_uid);
        self->stats.placements_accepted++;
        cc->accepted++;
        s_accept (result);
        Basalt__V1__Work *w = s_work_new ();
        Basalt__V1__BindWork *b = malloc (sizeof *b);
        if (!b)
            abort ();
        basalt__v1__bind_work__init (b);
        b->pod_uid = strdup (pod->uid);
        b->namespace_ = strdup (pod->namespace_ ? pod->namespace_ : "default");
        b->name = strdup (pod->name ? pod->name : "");
        b->node = strdup (pl->node);
        w->item_case = BASALT__V1__WORK__ITEM_BIND;
        w->bind = b;
        fn (arg, &w);
    }
    if (reason)
        bas_debug ("gang_rejected", "job=%s reason=\"%s\"", first->job_uid ? first->job_uid : "-",
                   reason);
    zhashx_destroy (&tentative);
    zhashx_destroy (&seen);
}

static void
s_commit_eviction (cache_model_t *self, cache_commit_t *cc, size_t i, cache_work_fn *fn, void *arg)
{
    Basalt__V1__CommitResult *result = cc->result;
    const Basalt__V1__Eviction *ev = cc->commit->evictions[i];
    const Basalt__V1__Pod *pod = ev->pod_uid ? bas_store_pod (self->store, ev->pod_uid) : NULL;
    const char *why = NULL;
    if (!pod)
        why = "pod no longer exists";
    else if (zhashx_lookup (self->evicting, ev->pod_uid))
        why = "pod is already being evicted";
    else if (pod->deleting)
        why = "pod is already being deleted";
    else if (ev->pod_resource_version && pod->resource_version &&
             strcmp (ev->pod_resource_version, pod->resource_version) != 0)
        why = "pod changed since the session's snapshot";
    if (why) {
        self->stats.evictions_rejected++;
        s_add_result (result, &cc->cap, s_item (ev->pod_uid, false, why));
        return;
    }
    zhashx_insert (self->evicting, ev->pod_uid, (void *)"1");
    Basalt__V1__Pod *victim = (Basalt__V1__Pod *)pod;
    victim->has_deleting = 1;
    victim->deleting = 1;
    s_mark (self, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, victim->uid);
    self->stats.evictions_accepted++;
    s_accept (result);
    bas_debug ("evicting", "pod=%s/%s node=%s reason=\"%s\"", pod->namespace_, pod->name,
               pod->node_name ? pod->node_name : "-", ev->reason ? ev->reason : "");
    Basalt__V1__Work *w = s_work_new ();
    Basalt__V1__EvictWork *e = malloc (sizeof *e);
    if (!e)
        abort ();
    basalt__v1__evict_work__init (e);
    e->pod_uid = strdup (pod->uid);
    e->namespace_ = strdup (pod->namespace_ ? pod->namespace_ : "default");
    e->name = strdup (pod->name ? pod->name : "");
    e->reason = ev->reason ? strdup (ev->reason) : NULL;
    w->item_case = BASALT__V1__WORK__ITEM_EVICT;
    w->evict = e;
    fn (arg, &w);
}

static void
s_commit_status (cache_model_t *self, cache_commit_t *cc, size_t i, cache_work_fn *fn, void *arg)
{
    Basalt__V1__CommitResult *result = cc->result;
    const Basalt__V1__PodGroupStatusChange *ch = cc->commit->statuses[i];
    Basalt__V1__PodGroup *pg =
        ch->uid ? (Basalt__V1__PodGroup *)bas_store_pod_group (self->store, ch->uid) : NULL;
    if (!pg || !ch->status) {
        self->stats.statuses_rejected++;
        s_add_result (result, &cc->cap, s_item (ch->uid, false, "pod group no longer exists"));
        return;
    }
    //  Keep the status the API has, to restore it if the write fails;
    //  apply the proposal now so the next session does not propose it again.
    if (!bas_hash_lookup (self->status_previous, ch->uid) && pg->status) {
        size_t len = basalt__v1__pod_group_status__get_packed_size (pg->status);
        zchunk_t *chunk = zchunk_new (NULL, len);
        basalt__v1__pod_group_status__pack (pg->status, zchunk_data (chunk));
        zchunk_set (chunk, zchunk_data (chunk), len);
        bas_hash_insert (self->status_previous, ch->uid, chunk);
    }
    if (pg->status)
        basalt__v1__pod_group_status__free_unpacked (pg->status, NULL);
    pg->status = (Basalt__V1__PodGroupStatus *)bas_msg_dup (&ch->status->base);
    s_mark (self, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP, ch->uid);
    self->stats.statuses_accepted++;
    s_accept (result);
    Basalt__V1__Work *w = s_work_new ();
    Basalt__V1__StatusWork *sw = malloc (sizeof *sw);
    if (!sw)
        abort ();
    basalt__v1__status_work__init (sw);
    sw->uid = strdup (pg->uid);
    sw->namespace_ = strdup (pg->namespace_ ? pg->namespace_ : "default");
    sw->name = strdup (pg->name ? pg->name : "");
    sw->status = (Basalt__V1__PodGroupStatus *)bas_msg_dup (&ch->status->base);
    w->item_case = BASALT__V1__WORK__ITEM_STATUS;
    w->status = sw;
    fn (arg, &w);
}

static void
s_commit_condition (cache_model_t *self, cache_commit_t *cc, size_t i, cache_work_fn *fn, void *arg)
{
    const Basalt__V1__PodCondition *pc = cc->commit->pod_conditions[i];
    const Basalt__V1__Pod *pod = pc->pod_uid ? bas_store_pod (self->store, pc->pod_uid) : NULL;
    if (!pod)
        return;
    Basalt__V1__Work *w = s_work_new ();
    Basalt__V1__PodConditionWork *cw = malloc (sizeof *cw);
    if (!cw)
        abort ();
    basalt__v1__pod_condition_work__init (cw);
    cw->namespace_ = strdup (pod->namespace_ ? pod->namespace_ : "default");
    cw->name = strdup (pod->name ? pod->name : "");
    cw->pod_uid = strdup (pod->uid);
    cw->condition = (Basalt__V1__PodCondition *)bas_msg_dup (&pc->base);
    w->item_case = BASALT__V1__WORK__ITEM_POD_CONDITION;
    w->pod_condition = cw;
    fn (arg, &w);
    //  A pod that cannot be scheduled also gets the Warning event Volcano
    //  and kube-scheduler record each time the reason changes (sessions
    //  propose a condition only then): kubectl describe pod shows it.
    if (pc->status && strcmp (pc->status, "False") == 0 && pc->type &&
        strcmp (pc->type, "PodScheduled") == 0) {
        w = s_work_new ();
        Basalt__V1__EventWork *ev = malloc (sizeof *ev);
        if (!ev)
            abort ();
        basalt__v1__event_work__init (ev);
        ev->namespace_ = strdup (pod->namespace_ ? pod->namespace_ : "default");
        ev->kind = strdup ("Pod");
        ev->name = strdup (pod->name ? pod->name : "");
        ev->uid = strdup (pod->uid ? pod->uid : "");
        ev->api_version = strdup ("v1");
        ev->type = strdup ("Warning");
        ev->reason = strdup ("FailedScheduling");
        ev->message = strdup (pc->message ? pc->message : "");
        w->item_case = BASALT__V1__WORK__ITEM_EVENT;
        w->event = ev;
        fn (arg, &w);
    }
}

//  A PodGroup Event the session proposed, for a group the model holds.
static void
s_commit_group_event (cache_model_t *self, cache_commit_t *cc, size_t i, cache_work_fn *fn,
                      void *arg)
{
    const Basalt__V1__PodGroupEvent *ge = cc->commit->group_events[i];
    const Basalt__V1__PodGroup *pg = ge->uid ? bas_store_pod_group (self->store, ge->uid) : NULL;
    if (!pg || pg->deleting || !ge->reason || !ge->message)
        return;
    Basalt__V1__Work *w = s_work_new ();
    Basalt__V1__EventWork *ev = malloc (sizeof *ev);
    if (!ev)
        abort ();
    basalt__v1__event_work__init (ev);
    ev->namespace_ = strdup (pg->namespace_ ? pg->namespace_ : "default");
    ev->kind = strdup ("PodGroup");
    ev->name = strdup (pg->name ? pg->name : "");
    ev->uid = strdup (pg->uid);
    ev->api_version = strdup ("scheduling.volcano.sh/v1beta1");
    ev->type = strdup (ge->type && *ge->type ? ge->type : "Normal");
    ev->reason = strdup (ge->reason);
    ev->message = strdup (ge->message);
    w->item_case = BASALT__V1__WORK__ITEM_EVENT;
    w->event = ev;
    fn (arg, &w);
}

cache_commit_t *
cache_model_commit_begin (cache_model_t *self, const Basalt__V1__Commit *commit,
                          Basalt__V1__CommitResult *result)
{
    (void)self;
    cache_commit_t *cc = calloc (1, sizeof *cc);
    if (!cc)
        abort ();
    cc->commit = commit;
    cc->result = result;
    cc->jobs = bas_msg_commit_gangs (commit, &cc->order, &cc->start);
    return cc;
}

void
cache_model_commit_consume (cache_commit_t *cc, Basalt__V1__Commit *commit)
{
    if (commit == cc->commit)
        cc->owned = commit;
}

bool
cache_model_commit_step (cache_model_t *self, cache_commit_t *cc, size_t budget, cache_work_fn *fn,
                         void *arg)
{
    const Basalt__V1__Commit *commit = cc->commit;
    size_t done = 0;
    //  Placements are committed per gang: all of a job's or none of them;
    //  a slice ends between two gangs, never inside one.
    while (cc->next_job < cc->jobs && done < budget) {
        size_t g = cc->next_job++;
        s_commit_gang (self, cc, g, fn, arg);
        done += cc->start[g + 1] - cc->start[g];
        if (cc->owned)
            for (size_t k = cc->start[g]; k < cc->start[g + 1]; k++) {
                protobuf_c_message_free_unpacked (&cc->owned->placements[cc->order[k]]->base, NULL);
                cc->owned->placements[cc->order[k]] = NULL;
            }
    }
    while (cc->next_eviction < commit->n_evictions && done < budget) {
        s_commit_eviction (self, cc, cc->next_eviction++, fn, arg);
        done++;
    }
    while (cc->next_status < commit->n_statuses && done < budget) {
        s_commit_status (self, cc, cc->next_status++, fn, arg);
        done++;
    }
    while (cc->next_condition < commit->n_pod_conditions && done < budget) {
        s_commit_condition (self, cc, cc->next_condition++, fn, arg);
        done++;
    }
    while (cc->next_event < commit->n_group_events && done < budget) {
        s_commit_group_event (self, cc, cc->next_event++, fn, arg);
        done++;
    }
    bool finished = cc->next_job == cc->jobs && cc->next_eviction == commit->n_evictions &&
                    cc->next_status == commit->n_statuses &&
                    cc->next_condition == commit->n_pod_conditions &&
                    cc->next_event == commit->n_group_events;
    if (finished) {
        cc->result->has_epoch = 1;
        cc->result->epoch = self->epoch;
    }
    return finished;
}

int
cache_model_commit_end (cache_commit_t **cc_p)
{
    if (!cc_p || !*cc_p)
        return 0;
    cache_commit_t *cc = *cc_p;
    int accepted = cc->accepted;
    free (cc->order);
    free (cc->start);
    free (cc);
    *cc_p = NULL;
    return accepted;
}

int
cache_model_commit (cache_model_t *self, const Basalt__V1__Commit *commit,
                    Basalt__V1__CommitResult *result, cache_work_fn *fn, void *arg)
{
    cache_commit_t *cc = cache_model_commit_begin (self, commit, result);
    while (!cache_model_commit_step (self, cc, SIZE_MAX, fn, arg))
        ;
    return cache_model_commit_end (&cc);
}

int
cache_model_bind_moot (cache_model_t *self, const Basalt__V1__BindWork *bind)
{
    if (!bind->pod_uid)
        return 0;
    const Basalt__V1__Pod *pod = bas_store_pod (self->store, bind->pod_uid);
    if (!pod)
        return -1;
    if (!pod->node_name || !*pod->node_name)
        return 0;
    return bind->node && strcmp (pod->node_name, bind->node) == 0 ? 1 : -1;
}

int
cache_model_bind_result (cache_model_t *self, const Basalt__V1__BindWork *bind, bool ok,
                         const char *reason)
{
    if (ok || !bind->pod_uid)
        return 0;
    Basalt__V1__Pod *pod = (Basalt__V1__Pod *)bas_store_pod (self->store, bind->pod_uid);
    self->stats.bind_failures++;
    bas_warn ("bind_failed", "pod=%s/%s node=%s reason=\"%s\"", bind->namespace_, bind->name,
              bind->node, reason ? reason : "");
    if (!pod || !pod->assumed_node || strcmp (pod->assumed_node, bind->node ? bind->node : "") != 0)
        return 0;
    //  Release the assumption: the pod is pending again for the next session.
    s_uncharge (self, pod->uid);
    free (pod->assumed_node);
    pod->assumed_node = NULL;
    s_charge (self, pod);
    s_mark (self, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, pod->uid);
    return 0;
}

int
cache_model_evict_result (cache_model_t *self, const Basalt__V1__EvictWork *evict, bool ok)
{
    //  Done or failed, the pod may be proposed again: done pods go away with
    //  their delete event (which also forgets them); failed ones stay.
    const char *mark = evict->pod_uid ? zhashx_lookup (self->evicting, evict->pod_uid) : NULL;
    if (mark && !ok) {
        bool api = strcmp (mark, "api") == 0;
        zhashx_delete (self->evicting, evict->pod_uid);
        if (api)
            return 0; // the API itself is deleting it: that stands
        //  The eviction did not happen: the pod is not Releasing after all
        //  (if the API has deleted it meanwhile, its events say so).
        Basalt__V1__Pod *pod = (Basalt__V1__Pod *)bas_store_pod (self->store, evict->pod_uid);
        if (pod && pod->deleting) {
            pod->deleting = 0;
            s_mark (self, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, pod->uid);
        }
    }
    return 0;
}

int
cache_model_status_result (cache_model_t *self, const Basalt__V1__StatusWork *status, bool ok)
{
    if (!status->uid)
        return 0;
    zchunk_t *prev = bas_hash_lookup (self->status_previous, status->uid);
    if (!ok && prev) {
        Basalt__V1__PodGroup *pg =
            (Basalt__V1__PodGroup *)bas_store_pod_group (self->store, status->uid);
        if (pg) {
            if (pg->status)
                basalt__v1__pod_group_status__free_unpacked (pg->status, NULL);
            pg->status =
                basalt__v1__pod_group_status__unpack (NULL, zchunk_size (prev), zchunk_data (prev));
            s_mark (self, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP, status->uid);
        }
    }
    bas_hash_delete (self->status_previous, status->uid);
    return 0;
}

void
cache_model_stats (cache_model_t *self, cache_model_stats_t *stats)
{
    *stats = self->stats;
}
