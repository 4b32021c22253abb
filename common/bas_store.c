/*  bas_store: see bas_store.h.

    Five zhashx tables, one per kind, hold Basalt__V1__Object wrappers. A
    sixth maps "namespace/name" of pod groups to their uid, because pods
    name their group, and a name can outlive a uid (delete and re-create).
*/
#include "bas_store.h"

#include <stdlib.h>
#include <string.h>

#define S_KINDS 6

struct _bas_store_t {
    zhashx_t *tables[S_KINDS];  // kind -> (key -> Basalt__V1__Object*)
    zhashx_t *group_names;      // "ns/name" -> pod group uid (strdup'd)
};

static void
s_object_destroy (void **item_p)
{
    if (*item_p) {
        protobuf_c_message_free_unpacked ((ProtobufCMessage *) *item_p, NULL);
        *item_p = NULL;
    }
}

bas_store_t *
bas_store_new (void)
{
    bas_store_t *self = calloc (1, sizeof *self);
    if (!self)
        abort ();
    for (int k = 1; k < S_KINDS; k++) {
        self->tables[k] = zhashx_new ();
        zhashx_set_destructor (self->tables[k], s_object_destroy);
    }
    self->group_names = zhashx_new ();
    zhashx_set_duplicator (self->group_names, (zhashx_duplicator_fn *) strdup);
    zhashx_set_destructor (self->group_names, (zhashx_destructor_fn *) zstr_free);
    return self;
}

void
bas_store_destroy (bas_store_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    bas_store_t *self = *self_p;
    for (int k = 1; k < S_KINDS; k++)
        zhashx_destroy (&self->tables[k]);
    zhashx_destroy (&self->group_names);
    free (self);
    *self_p = NULL;
}

void
bas_store_clear (bas_store_t *self)
{
    for (int k = 1; k < S_KINDS; k++)
        zhashx_purge (self->tables[k]);
    zhashx_purge (self->group_names);
}

static Basalt__V1__ObjectKind
s_kind (const Basalt__V1__Object *obj)
{
    switch (obj->kind_case) {
    case BASALT__V1__OBJECT__KIND_NODE:
        return obj->node ? BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE : 0;
    case BASALT__V1__OBJECT__KIND_POD:
        return obj->pod ? BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD : 0;
    case BASALT__V1__OBJECT__KIND_POD_GROUP:
        return obj->pod_group ? BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP : 0;
    case BASALT__V1__OBJECT__KIND_QUEUE:
        return obj->queue ? BASALT__V1__OBJECT_KIND__OBJECT_KIND_QUEUE : 0;
    case BASALT__V1__OBJECT__KIND_PRIORITY_CLASS:
        return obj->priority_class ? BASALT__V1__OBJECT_KIND__OBJECT_KIND_PRIORITY_CLASS : 0;
    default:
        return 0;
    }
}

static bool
s_nonempty (const char *s)
{
    return s && *s;
}

const char *
bas_store_key (const Basalt__V1__Object *obj)
{
    const char *key = NULL;
    switch (s_kind (obj)) {
    case BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE:
        key = obj->node->name;
        break;
    case BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD:
        key = obj->pod->uid;
        break;
    case BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP:
        key = obj->pod_group->uid;
        break;
    case BASALT__V1__OBJECT_KIND__OBJECT_KIND_QUEUE:
        key = obj->queue->name;
        break;
    case BASALT__V1__OBJECT_KIND__OBJECT_KIND_PRIORITY_CLASS:
        key = obj->priority_class->name;
        break;
    default:
        break;
    }
    return s_nonempty (key) ? key : NULL;
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
    if (s_kind (obj) != BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP)
        return;
    char name[512];
    s_group_name (obj->pod_group, name, sizeof name);
    const char *uid = zhashx_lookup (self->group_names, name);
    if (uid && obj->pod_group->uid && strcmp (uid, obj->pod_group->uid) == 0)
        zhashx_delete (self->group_names, name);
}

int
bas_store_upsert (bas_store_t *self, Basalt__V1__Object **obj_p)
{
    Basalt__V1__Object *obj = *obj_p;
    *obj_p = NULL;
    Basalt__V1__ObjectKind kind = obj ? s_kind (obj) : 0;
    const char *key = obj ? bas_store_key (obj) : NULL;
    if (!kind || !key) {
        if (obj)
            protobuf_c_message_free_unpacked (&obj->base, NULL);
        return -1;
    }
    const Basalt__V1__Object *old = zhashx_lookup (self->tables[kind], key);
    if (old)
        s_group_unindex (self, old);
    //  zhashx_update frees the old value through the destructor.
    zhashx_update (self->tables[kind], key, obj);
    if (kind == BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD_GROUP) {
        char name[512];
        s_group_name (obj->pod_group, name, sizeof name);
        zhashx_update (self->group_names, name, (void *) key);
    }
    return 0;
}

ProtobufCMessage *
bas_msg_dup (const ProtobufCMessage *msg)
{
    size_t len = protobuf_c_message_get_packed_size (msg);
    uint8_t stackbuf[4096];
    uint8_t *buf = len <= sizeof stackbuf ? stackbuf : malloc (len);
    if (!buf)
        abort ();
    protobuf_c_message_pack (msg, buf);
    ProtobufCMessage *copy = protobuf_c_message_unpack (msg->descriptor, NULL, len, buf);
    if (buf != stackbuf)
        free (buf);
    return copy;
}

int
bas_store_upsert_copy (bas_store_t *self, const Basalt__V1__Object *obj)
{
    Basalt__V1__Object *copy = (Basalt__V1__Object *) bas_msg_dup (&obj->base);
    if (!copy)
        return -1;
    return bas_store_upsert (self, &copy);
}

int
bas_store_delete (bas_store_t *self, Basalt__V1__ObjectKind kind, const char *key)
{
    if (kind <= 0 || kind >= S_KINDS || !key)
        return -1;
    const Basalt__V1__Object *old = zhashx_lookup (self->tables[kind], key);
    if (!old)
        return -1;
    s_group_unindex (self, old);
    zhashx_delete (self->tables[kind], key);
    return 0;
}

const Basalt__V1__Object *
bas_store_get (bas_store_t *self, Basalt__V1__ObjectKind kind, const char *key)
{
    if (kind <= 0 || kind >= S_KINDS || !key)
        return NULL;
    return zhashx_lookup (self->tables[kind], key);
}

const Basalt__V1__Node *
bas_store_node (bas_store_t *self, const char *name)
{
    const Basalt__V1__Object *o = bas_store_get (self, BASALT__V1__OBJECT_KIND__OBJECT_KIND_NODE, name);
    return o ? o->node : NULL;
}

const Basalt__V1__Pod *
bas_store_pod (bas_store_t *self, const char *uid)
{
    const Basalt__V1__Object *o = bas_store_get (self, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, uid);
    return o ? o->pod : NULL;
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
    const char *uid = zhashx_lookup (self->group_names, key);
    return uid ? bas_store_pod_group (self, uid) : NULL;
}

size_t
bas_store_size (bas_store_t *self, Basalt__V1__ObjectKind kind)
{
    if (kind <= 0 || kind >= S_KINDS)
        return 0;
    return zhashx_size (self->tables[kind]);
}

void
bas_store_foreach (bas_store_t *self, Basalt__V1__ObjectKind kind, bas_store_fn *fn, void *arg)
{
    if (kind <= 0 || kind >= S_KINDS)
        return;
    //  zhashx's cursor is part of the table; a nested foreach on the same
    //  kind is not allowed (documented: the callback must not change it).
    for (const Basalt__V1__Object *o = zhashx_first (self->tables[kind]); o;
         o = zhashx_next (self->tables[kind]))
        fn (arg, o);
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
        total += zhashx_size (self->tables[k]);
    //  Borrow the store's objects for packing; nothing is copied.
    Basalt__V1__Object **objects = calloc (total ? total : 1, sizeof *objects);
    if (!objects)
        abort ();
    size_t n = 0;
    for (int k = 1; k < S_KINDS; k++)
        for (Basalt__V1__Object *o = zhashx_first (self->tables[k]); o;
             o = zhashx_next (self->tables[k]))
            objects[n++] = o;
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
    size_t n;                       // objects listed
    size_t next;                    // the next one to pack
    uint32_t part;                  // the next part's number
    Basalt__V1__ObjectKind *kinds;  // [n]
    size_t *offsets;                // [n], of each key in text
    char *text;                     // every key, NUL-terminated, one allocation
};

bas_store_cursor_t *
bas_store_cursor_new (bas_store_t *self)
{
    return bas_store_cursor_new_kind (self, 0);
}

bas_store_cursor_t *
bas_store_cursor_new_kind (bas_store_t *self, Basalt__V1__ObjectKind kind)
{
    bas_store_cursor_t *c = calloc (1, sizeof *c);
    if (!c)
        abort ();
    int first = kind > 0 && kind < S_KINDS ? (int) kind : 1;
    int last = kind > 0 && kind < S_KINDS ? (int) kind + 1 : S_KINDS;
    for (int k = first; k < last; k++)
        c->n += zhashx_size (self->tables[k]);
    //  One walk of the tables: keys are copied end to end into one buffer
    //  (grown as needed, uids are 36 bytes) and found by their offsets.
    size_t cap = c->n * 40 + 64, at = 0, i = 0;
    c->kinds = malloc ((c->n ? c->n : 1) * sizeof *c->kinds);
    c->offsets = malloc ((c->n ? c->n : 1) * sizeof *c->offsets);
    c->text = malloc (cap);
    if (!c->kinds || !c->offsets || !c->text)
        abort ();
    for (int k = first; k < last; k++)
        for (void *o = zhashx_first (self->tables[k]); o && i < c->n;
             o = zhashx_next (self->tables[k])) {
            const char *key = zhashx_cursor (self->tables[k]);
            size_t klen = strlen (key) + 1;
            if (at + klen > cap) {
                cap = (at + klen) * 2;
                c->text = realloc (c->text, cap);
                if (!c->text)
                    abort ();
            }
            memcpy (c->text + at, key, klen);
            c->kinds[i] = (Basalt__V1__ObjectKind) k;
            c->offsets[i++] = at;
            at += klen;
        }
    c->n = i;
    return c;
}

void
bas_store_cursor_destroy (bas_store_cursor_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    bas_store_cursor_t *self = *self_p;
    free (self->kinds);
    free (self->offsets);
    free (self->text);
    free (self);
    *self_p = NULL;
}

const char *
bas_store_cursor_next (bas_store_cursor_t *self, Basalt__V1__ObjectKind *kind_p)
{
    if (self->next >= self->n)
        return NULL;
    if (kind_p)
        *kind_p = self->kinds[self->next];
    return self->text + self->offsets[self->next++];
}

size_t
bas_store_cursor_left (const bas_store_cursor_t *self)
{
    return self->n - self->next;
}

zframe_t *
bas_store_pack_part (bas_store_t *self, bas_store_cursor_t *cursor, size_t max,
                     const Basalt__V1__Snapshot *extra)
{
    Basalt__V1__Snapshot snap = *extra;
    size_t left = bas_store_cursor_left (cursor);
    size_t take = left < max ? left : max;
    //  Borrow the store's objects for packing; nothing is copied. Objects
    //  deleted since the cursor was made are skipped (a delta says so).
    Basalt__V1__Object **objects = calloc (take ? take : 1, sizeof *objects);
    if (!objects)
        abort ();
    size_t n = 0;
    for (size_t i = 0; i < take; i++) {
        size_t at = cursor->next + i;
        Basalt__V1__Object *o =
            zhashx_lookup (self->tables[cursor->kinds[at]], cursor->text + cursor->offsets[at]);
        if (o)
            objects[n++] = o;
    }
    cursor->next += take;
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
