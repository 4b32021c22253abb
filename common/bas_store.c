/*  bas_store: see bas_store.h.

    Five bas_hash tables (they grow without an O(n) insert), one per kind,
    map a key to an entry: the Basalt__V1__Object and its slot. A sixth
    maps "namespace/name" of pod groups to their uid, because pods name
    their group, and a name can outlive a uid (delete and re-create).

    Design note (DESIGN: no reactor turn over 50 ms): each kind also keeps
    its entries in a slot array (a freed slot is reused first), so that a
    cursor is a kind and a slot number: made in O(1), where copying 150,000
    keys took 15-40 ms in one turn, and walked in slices by whoever holds
    it. An object keeps its slot while it is replaced, so a walk meets every
    object present when it began exactly once; one created meanwhile may or
    may not be met (its callback or delta says so anyway).
*/
#include "bas_store.h"
#include "bas_hash.h"
#include "bas_k8s.h"
#include "bas_util.h"

#include <stdlib.h>
#include <string.h>

//  Tables and slot arrays are indexed by ObjectKind value; a kind without
//  a row in the kind table (bas_k8s.h) has none and holds nothing.
#define S_KINDS BAS_KIND_LIMIT

//  One object and where it sits in its kind's slot array.
typedef struct {
    Basalt__V1__Object *obj;
    uint32_t slot;
} s_entry_t;

//  The slot array of one kind.
typedef struct {
    s_entry_t **at; // [cap]; NULL at a freed slot
    uint32_t n;     // slots handed out (high water)
    uint32_t cap;
    uint32_t *freed; // freed slots, reused last in first out
    uint32_t nfreed, freed_cap;
} s_slots_t;

struct _bas_store_t {
    bas_hash_t *tables[S_KINDS]; // kind -> (key -> s_entry_t*)
    s_slots_t slots[S_KINDS];
    bas_hash_t *group_names;     // "ns/name" -> pod group uid (strdup'd)
    bool drop_scheduling_fields; // pods kept without labels, placement, images and claims,
                                 // nodes without images
    //  The change log (bas_store_changes_take): kept once a taker has
    //  taken from it, for that taker.
    const void *taker;           // who took last; NULL: nobody, nothing is logged
    bas_store_change_t *changes; // [nchanges] since the last take
    size_t nchanges, changes_cap;
    bool changes_reset; // everything changed (cleared, or the log overflowed)
};

//  A log longer than the store (and than this floor) is dropped for
//  "everything changed": the taker then rebuilds, which costs what a walk
//  of the store costs anyway. So a taker that stops taking (a standby
//  session-svc) leaves a log no bigger than its store.
#define S_CHANGES_FLOOR ((size_t)1 << 16)

static size_t
s_objects (bas_store_t *self)
{
    size_t n = 0;
    for (int k = 1; k < S_KINDS; k++)
        if (self->tables[k])
            n += bas_hash_size (self->tables[k]);
    return n;
}

static void
s_changes_drop (bas_store_t *self)
{
    for (size_t i = 0; i < self->nchanges; i++)
        free (self->changes[i].key);
    self->nchanges = 0;
}

static void
s_changed (bas_store_t *self, Basalt__V1__ObjectKind kind, const char *key)
{
    if (!self->taker || self->changes_reset)
        return;
    if (self->nchanges >= S_CHANGES_FLOOR && self->nchanges >= s_objects (self)) {
        s_changes_drop (self);
        self->changes_reset = true;
        return;
    }
    if (self->nchanges == self->changes_cap) {
        self->changes_cap = self->changes_cap ? self->changes_cap * 2 : 256;
        self->changes = bas_realloc (self->changes, self->changes_cap * sizeof *self->changes);
    }
    self->changes[self->nchanges].kind = kind;
    self->changes[self->nchanges++].key = bas_strdup (key);
}

bool
bas_store_changes_take (bas_store_t *self, const void *taker, bas_store_change_t **changes_p,
                        size_t *n_p)
{
    bool reset = self->changes_reset || taker != self->taker;
    if (reset) {
        s_changes_drop (self);
        free (self->changes);
        self->changes = NULL;
    }
    *changes_p = self->changes;
    *n_p = self->nchanges;
    self->changes = NULL;
    self->nchanges = self->changes_cap = 0;
    self->taker = taker;
    self->changes_reset = false;
    return reset;
}

void
bas_store_changes_free (bas_store_change_t **changes_p, size_t n)
{
    if (!changes_p || !*changes_p)
        return;
    for (size_t i = 0; i < n; i++)
        free ((*changes_p)[i].key);
    free (*changes_p);
    *changes_p = NULL;
}

static void
s_entry_destroy (void *item)
{
    s_entry_t *e = item;
    if (e->obj)
        protobuf_c_message_free_unpacked (&e->obj->base, NULL);
    free (e);
}

static uint32_t
s_slot_take (s_slots_t *sl, s_entry_t *e)
{
    uint32_t i;
    if (sl->nfreed)
        i = sl->freed[--sl->nfreed];
    else {
        if (sl->n == sl->cap) {
            sl->cap = sl->cap ? sl->cap * 2 : 64;
            sl->at = bas_realloc (sl->at, sl->cap * sizeof *sl->at);
        }
        i = sl->n++;
    }
    sl->at[i] = e;
    return i;
}

static void
s_slot_free (s_slots_t *sl, uint32_t i)
{
    sl->at[i] = NULL;
    if (sl->nfreed == sl->freed_cap) {
        sl->freed_cap = sl->freed_cap ? sl->freed_cap * 2 : 64;
        sl->freed = bas_realloc (sl->freed, sl->freed_cap * sizeof *sl->freed);
    }
    sl->freed[sl->nfreed++] = i;
}

static void
s_slots_clear (s_slots_t *sl)
{
    free (sl->at);
    free (sl->freed);
    memset (sl, 0, sizeof *sl);
}

bas_store_t *
bas_store_new (void)
{
    bas_store_t *self = bas_alloc (sizeof *self);
    for (size_t i = 0; i < bas_kind_count (); i++)
        self->tables[bas_kind_at (i)->kind] = bas_hash_new (s_entry_destroy);
    self->group_names = bas_hash_new (free);
    return self;
}

void
bas_store_destroy (bas_store_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    bas_store_t *self = *self_p;
    for (int k = 1; k < S_KINDS; k++) {
        bas_hash_destroy (&self->tables[k]);
        s_slots_clear (&self->slots[k]);
    }
    bas_hash_destroy (&self->group_names);
    s_changes_drop (self);
    free (self->changes);
    free (self);
    *self_p = NULL;
}

void
bas_store_clear (bas_store_t *self)
{
    for (int k = 1; k < S_KINDS; k++) {
        if (self->tables[k])
            bas_hash_purge (self->tables[k]);
        s_slots_clear (&self->slots[k]);
    }
    bas_hash_purge (self->group_names);
    s_changes_drop (self);
    self->changes_reset = true;
}

Basalt__V1__ObjectKind
bas_store_kind (const Basalt__V1__Object *obj)
{
    const bas_kind_t *k = bas_kind_of_object (obj);
    return k ? k->kind : 0;
}

const char *
bas_store_key (const Basalt__V1__Object *obj)
{
    return bas_kind_key (obj);
}

//  The kind has a table (a row in the kind table).
static bool
s_known (const bas_store_t *self, Basalt__V1__ObjectKind kind)
{
    return kind > 0 && kind < S_KINDS && self->tables[kind];
}

static void
s_group_name (const Basalt__V1__PodGroup *pg, char *buf, size_t len)
{
    snprintf (buf, len, "%s/%s", pg->namespace_ ? pg->namespace_ : "", pg->name ? pg->name : "");
}

//  Removes the name index entry of a pod group if it still points at `uid`.
static void
s_group_unindex (bas_store_t *self, const Basalt__V1__Object *obj)
{
    if (bas_store_kind (obj) != BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP)
        return;
    char name[512];
    s_group_name (obj->pod_group, name, sizeof name);
    const char *uid = bas_hash_lookup (self->group_names, name);
    if (uid && obj->pod_group->uid && strcmp (uid, obj->pod_group->uid) == 0)
        bas_hash_delete (self->group_names, name);
}

int
bas_store_upsert (bas_store_t *self, Basalt__V1__Object **obj_p)
{
    Basalt__V1__Object *obj = *obj_p;
    *obj_p = NULL;
    Basalt__V1__ObjectKind kind = obj ? bas_store_kind (obj) : 0;
    const char *key = obj ? bas_store_key (obj) : NULL;
    if (!kind || !key) {
        if (obj)
            protobuf_c_message_free_unpacked (&obj->base, NULL);
        return -1;
    }
    if (self->drop_scheduling_fields && kind == BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD) {
        Basalt__V1__Pod *pod = obj->pod;
        free (pod->labels);
        pod->labels = NULL;
        if (pod->placement)
            protobuf_c_message_free_unpacked (&pod->placement->base, NULL);
        pod->placement = NULL;
        for (size_t i = 0; i < pod->n_images; i++)
            free (pod->images[i]);
        free (pod->images);
        pod->images = NULL;
        pod->n_images = 0;
        for (size_t i = 0; i < pod->n_claims; i++)
            protobuf_c_message_free_unpacked (&pod->claims[i]->base, NULL);
        free (pod->claims);
        pod->claims = NULL;
        pod->n_claims = 0;
    }
    if (self->drop_scheduling_fields && kind == BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE) {
        Basalt__V1__Node *node = obj->node;
        for (size_t i = 0; i < node->n_images; i++)
            protobuf_c_message_free_unpacked (&node->images[i]->base, NULL);
        free (node->images);
        node->images = NULL;
        node->n_images = 0;
    }
    s_entry_t *e = bas_hash_lookup (self->tables[kind], key);
    if (e) {
        //  Replaced in place: the entry keeps its slot.
        s_group_unindex (self, e->obj);
        protobuf_c_message_free_unpacked (&e->obj->base, NULL);
        e->obj = obj;
    } else {
        e = bas_alloc (sizeof *e);
        e->obj = obj;
        e->slot = s_slot_take (&self->slots[kind], e);
        bas_hash_insert (self->tables[kind], key, e);
    }
    if (kind == BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP) {
        char name[512];
        s_group_name (obj->pod_group, name, sizeof name);
        char *uid = bas_strdup (key);
        bas_hash_update (self->group_names, name, uid);
    }
    s_changed (self, kind, key);
    return 0;
}

ProtobufCMessage *
bas_msg_dup (const ProtobufCMessage *msg)
{
    size_t len = protobuf_c_message_get_packed_size (msg);
    uint8_t stackbuf[4096];
    uint8_t *buf = len <= sizeof stackbuf ? stackbuf : bas_malloc (len);
    protobuf_c_message_pack (msg, buf);
    ProtobufCMessage *copy = protobuf_c_message_unpack (msg->descriptor, NULL, len, buf);
    if (buf != stackbuf)
        free (buf);
    return copy;
}

void
bas_store_drop_scheduling_fields (bas_store_t *self, bool drop)
{
    self->drop_scheduling_fields = drop;
}

int
bas_store_upsert_copy (bas_store_t *self, const Basalt__V1__Object *obj)
{
    Basalt__V1__Object *copy = (Basalt__V1__Object *)bas_msg_dup (&obj->base);
    if (!copy)
        return -1;
    return bas_store_upsert (self, &copy);
}

int
bas_store_delete (bas_store_t *self, Basalt__V1__ObjectKind kind, const char *key)
{
    if (!s_known (self, kind) || !key)
        return -1;
    s_entry_t *e = bas_hash_lookup (self->tables[kind], key);
    if (!e)
        return -1;
    s_changed (self, kind, key);
    s_group_unindex (self, e->obj);
    s_slot_free (&self->slots[kind], e->slot);
    bas_hash_delete (self->tables[kind], key);
    return 0;
}

const Basalt__V1__Object *
bas_store_get (bas_store_t *self, Basalt__V1__ObjectKind kind, const char *key)
{
    if (!s_known (self, kind) || !key)
        return NULL;
    const s_entry_t *e = bas_hash_lookup (self->tables[kind], key);
    return e ? e->obj : NULL;
}

const Basalt__V1__Node *
bas_store_node (bas_store_t *self, const char *name)
{
    const Basalt__V1__Object *o =
        bas_store_get (self, BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE, name);
    return o ? o->node : NULL;
}

const Basalt__V1__Pod *
bas_store_pod (bas_store_t *self, const char *uid)
{
    const Basalt__V1__Object *o =
        bas_store_get (self, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, uid);
    return o ? o->pod : NULL;
}

//  The stored object itself (not a copy), or NULL.
static Basalt__V1__Object *
s_stored (bas_store_t *self, Basalt__V1__ObjectKind kind, const char *key)
{
    if (!s_known (self, kind) || !key)
        return NULL;
    s_entry_t *e = bas_hash_lookup (self->tables[kind], key);
    return e ? e->obj : NULL;
}

Basalt__V1__Object *
bas_store_lend (bas_store_t *self, Basalt__V1__ObjectKind kind, const char *key)
{
    return s_stored (self, kind, key);
}

int
bas_store_pod_set_assumed (bas_store_t *self, const char *uid, const char *node)
{
    Basalt__V1__Object *o = s_stored (self, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, uid);
    if (!o)
        return -1;
    free (o->pod->assumed_node);
    o->pod->assumed_node = node ? bas_strdup (node) : NULL;
    s_changed (self, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, uid);
    return 0;
}

int
bas_store_pod_set_deleting (bas_store_t *self, const char *uid, bool deleting)
{
    Basalt__V1__Object *o = s_stored (self, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, uid);
    if (!o)
        return -1;
    o->pod->has_deleting = 1;
    o->pod->deleting = deleting;
    s_changed (self, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, uid);
    return 0;
}

int
bas_store_pod_group_set_status (bas_store_t *self, const char *uid,
                                Basalt__V1__PodGroupStatus *status)
{
    Basalt__V1__Object *o = s_stored (self, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP, uid);
    if (!o) {
        if (status)
            basalt__v1__pod_group_status__free_unpacked (status, NULL);
        return -1;
    }
    if (o->pod_group->status)
        basalt__v1__pod_group_status__free_unpacked (o->pod_group->status, NULL);
    o->pod_group->status = status;
    s_changed (self, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP, uid);
    return 0;
}

const Basalt__V1__PodGroup *
bas_store_pod_group (bas_store_t *self, const char *uid)
{
    const Basalt__V1__Object *o =
        bas_store_get (self, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP, uid);
    return o ? o->pod_group : NULL;
}

const Basalt__V1__Queue *
bas_store_queue (bas_store_t *self, const char *name)
{
    const Basalt__V1__Object *o =
        bas_store_get (self, BASALT__V1__OBJECT_KIND__OBJECT_KIND_QUEUE, name);
    return o ? o->queue : NULL;
}

const Basalt__V1__PriorityClass *
bas_store_priority_class (bas_store_t *self, const char *name)
{
    const Basalt__V1__Object *o =
        bas_store_get (self, BASALT__V1__OBJECT_KIND__OBJECT_KIND_PRIORITY_CLASS, name);
    return o ? o->priority_class : NULL;
}

const Basalt__V1__PodGroup *
bas_store_pod_group_by_name (bas_store_t *self, const char *ns, const char *name)
{
    char key[512];
    snprintf (key, sizeof key, "%s/%s", ns ? ns : "", name ? name : "");
    const char *uid = bas_hash_lookup (self->group_names, key);
    return uid ? bas_store_pod_group (self, uid) : NULL;
}

size_t
bas_store_size (bas_store_t *self, Basalt__V1__ObjectKind kind)
{
    if (!s_known (self, kind))
        return 0;
    return bas_hash_size (self->tables[kind]);
}

void
bas_store_foreach (bas_store_t *self, Basalt__V1__ObjectKind kind, bas_store_fn *fn, void *arg)
{
    if (!s_known (self, kind))
        return;
    //  By slot: no iteration state in the table, so the callback may look
    //  objects up (it must not change the store).
    const s_slots_t *sl = &self->slots[kind];
    for (uint32_t i = 0; i < sl->n; i++)
        if (sl->at[i])
            fn (arg, sl->at[i]->obj);
}

void
bas_store_load_snapshot (bas_store_t *self, Basalt__V1__Snapshot *snap)
{
    bas_store_clear (self);
    bas_store_load_part (self, snap);
}

void
bas_store_load_part (bas_store_t *self, Basalt__V1__Snapshot *snap)
{
    if (!snap->has_part || snap->part == 0)
        bas_store_clear (self);
    for (size_t i = 0; i < snap->n_objects; i++) {
        Basalt__V1__Object *obj = snap->objects[i];
        snap->objects[i] = NULL;
        bas_store_upsert (self, &obj);
    }
    //  The array itself is freed with snap; its elements were moved out.
    snap->n_objects = 0;
}

void
bas_store_apply_delta (bas_store_t *self, Basalt__V1__Delta *delta)
{
    for (size_t i = 0; i < delta->n_upserts; i++) {
        Basalt__V1__Object *obj = delta->upserts[i];
        delta->upserts[i] = NULL;
        bas_store_upsert (self, &obj);
    }
    delta->n_upserts = 0;
    for (size_t i = 0; i < delta->n_deletes; i++) {
        const Basalt__V1__ObjectRef *ref = delta->deletes[i];
        if (ref->has_kind)
            bas_store_delete (self, ref->kind, ref->key);
    }
}

zframe_t *
bas_store_pack_snapshot (bas_store_t *self, const Basalt__V1__Snapshot *extra)
{
    Basalt__V1__Snapshot snap = *extra;
    size_t total = 0;
    for (int k = 1; k < S_KINDS; k++)
        total += self->tables[k] ? bas_hash_size (self->tables[k]) : 0;
    //  Borrow the store's objects for packing; nothing is copied.
    Basalt__V1__Object **objects = bas_alloc ((total ? total : 1) * sizeof *objects);
    size_t n = 0;
    for (int k = 1; k < S_KINDS; k++)
        for (uint32_t i = 0; i < self->slots[k].n; i++)
            if (self->slots[k].at[i])
                objects[n++] = self->slots[k].at[i]->obj;
    snap.objects = objects;
    snap.n_objects = n;
    size_t len = basalt__v1__snapshot__get_packed_size (&snap);
    zframe_t *frame = zframe_new (NULL, len);
    basalt__v1__snapshot__pack (&snap, zframe_data (frame));
    free (objects);
    return frame;
}

// ------------------------------------------------------------ snapshot parts

struct _bas_store_cursor_t {
    bas_store_t *store;
    int kind;              // the kind being walked
    int last;              // one past the last kind to walk
    uint32_t next;         // the next slot of that kind
    uint32_t end[S_KINDS]; // each kind's high water when the cursor was made
    uint32_t part;         // the next part's number
};

bas_store_cursor_t *
bas_store_cursor_new (bas_store_t *self)
{
    return bas_store_cursor_new_kind (self, 0);
}

bas_store_cursor_t *
bas_store_cursor_new_kind (bas_store_t *self, Basalt__V1__ObjectKind kind)
{
    bas_store_cursor_t *c = bas_alloc (sizeof *c);
    c->store = self;
    c->kind = kind > 0 && kind < S_KINDS ? (int)kind : 1;
    c->last = kind > 0 && kind < S_KINDS ? (int)kind + 1 : S_KINDS;
    for (int k = c->kind; k < c->last; k++)
        c->end[k] = self->slots[k].n;
    return c;
}

void
bas_store_cursor_destroy (bas_store_cursor_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free (*self_p);
    *self_p = NULL;
}

//  The entry at the cursor's next slot that holds one, the cursor moved
//  past it; NULL at the end. A store cleared meanwhile (its slots handed
//  out again from 0) ends the walk where its slots end.
static s_entry_t *
s_cursor_entry (bas_store_cursor_t *c)
{
    while (c->kind < c->last) {
        const s_slots_t *sl = &c->store->slots[c->kind];
        uint32_t end = c->end[c->kind] < sl->n ? c->end[c->kind] : sl->n;
        while (c->next < end) {
            s_entry_t *e = sl->at[c->next++];
            if (e)
                return e;
        }
        c->kind++;
        c->next = 0;
    }
    return NULL;
}

const char *
bas_store_cursor_next (bas_store_cursor_t *self, Basalt__V1__ObjectKind *kind_p)
{
    s_entry_t *e = s_cursor_entry (self);
    if (!e)
        return NULL;
    if (kind_p)
        *kind_p = (Basalt__V1__ObjectKind)self->kind; // still the entry's kind
    return bas_store_key (e->obj);
}

size_t
bas_store_cursor_left (const bas_store_cursor_t *self)
{
    size_t left = 0;
    for (int k = self->kind; k < self->last; k++) {
        uint32_t end =
            self->end[k] < self->store->slots[k].n ? self->end[k] : self->store->slots[k].n;
        uint32_t from = k == self->kind ? self->next : 0;
        left += end > from ? end - from : 0;
    }
    return left;
}

zframe_t *
bas_store_pack_part (bas_store_t *self, bas_store_cursor_t *cursor, size_t max,
                     const Basalt__V1__Snapshot *extra)
{
    (void)self;
    Basalt__V1__Snapshot snap = *extra;
    //  Borrow the store's objects for packing; nothing is copied. Objects
    //  deleted since the cursor was made are not met (a delta says so).
    size_t left = bas_store_cursor_left (cursor);
    size_t take = left < max ? left : max; // at most this many objects
    Basalt__V1__Object **objects = bas_alloc ((take ? take : 1) * sizeof *objects);
    size_t n = 0;
    for (s_entry_t *e; n < take && (e = s_cursor_entry (cursor));)
        objects[n++] = e->obj;
    snap.objects = objects;
    snap.n_objects = n;
    snap.has_part = 1;
    snap.part = cursor->part++;
    snap.has_more = 1;
    snap.more = bas_store_cursor_left (cursor) > 0;
    size_t len = basalt__v1__snapshot__get_packed_size (&snap);
    zframe_t *frame = zframe_new (NULL, len);
    basalt__v1__snapshot__pack (&snap, zframe_data (frame));
    free (objects);
    return frame;
}
