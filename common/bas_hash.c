/*  bas_hash: see bas_hash.h.

    Chained buckets, a power of two of them, indexed by a 64-bit FNV-1a
    hash kept in each item. When the items outnumber the buckets, a second
    array twice as large is made and every insert or delete then moves
    S_MOVE buckets of the old one into it (skipping empty ones, at most
    S_MOVE_EMPTY of those per call); meanwhile lookups look in both. The
    move ends before the new array can fill: it has half again as many
    buckets to go as inserts it can take before the next growth.
*/
#include "bas_hash.h"
#include "bas_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define S_MIN_BUCKETS 16
#define S_MOVE 4        // non-empty buckets moved per insert or delete
#define S_MOVE_EMPTY 64 // empty buckets passed over per call, at most

typedef struct _s_item_t {
    struct _s_item_t *next;
    uint64_t hash;
    void *value;
    char key[]; // NUL-terminated
} s_item_t;

typedef struct {
    s_item_t **b;
    size_t n;    // buckets (a power of two), 0 when unused
    size_t used; // items
} s_table_t;

struct _bas_hash_t {
    s_table_t t[2]; // t[1] is in use while growing
    size_t moved;   // buckets of t[0] moved so far, while growing
    bas_hash_free_fn *destructor;
    //  Iteration.
    int it_table;
    size_t it_bucket;
    s_item_t *it_item;
};

static uint64_t
s_hash (const char *key)
{
    uint64_t h = 1469598103934665603ULL;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
        h ^= *p;
        h *= 1099511628211ULL;
    }
    return h;
}

static bool
s_growing (const bas_hash_t *self)
{
    return self->t[1].n != 0;
}

static void
s_table_init (s_table_t *t, size_t n)
{
    t->b = bas_alloc (sizeof *t->b * n);
    t->n = n;
    t->used = 0;
}

bas_hash_t *
bas_hash_new (bas_hash_free_fn *destructor)
{
    bas_hash_t *self = bas_alloc (sizeof *self);
    self->destructor = destructor;
    s_table_init (&self->t[0], S_MIN_BUCKETS);
    return self;
}

static void
s_free_table (bas_hash_t *self, s_table_t *t)
{
    for (size_t i = 0; i < t->n; i++)
        for (s_item_t *it = t->b[i], *next; it; it = next) {
            next = it->next;
            if (self->destructor && it->value)
                self->destructor (it->value);
            free (it);
        }
    free (t->b);
    memset (t, 0, sizeof *t);
}

void
bas_hash_destroy (bas_hash_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    bas_hash_t *self = *self_p;
    s_free_table (self, &self->t[0]);
    s_free_table (self, &self->t[1]);
    free (self);
    *self_p = NULL;
}

void
bas_hash_purge (bas_hash_t *self)
{
    s_free_table (self, &self->t[0]);
    s_free_table (self, &self->t[1]);
    self->moved = 0;
    s_table_init (&self->t[0], S_MIN_BUCKETS);
}

//  Move some buckets of t[0] into t[1]; when none are left, t[1] becomes t[0].
static void
s_move_some (bas_hash_t *self)
{
    if (!s_growing (self))
        return;
    s_table_t *from = &self->t[0], *to = &self->t[1];
    int moved = 0, empty = 0;
    while (self->moved < from->n && moved < S_MOVE && empty < S_MOVE_EMPTY) {
        s_item_t *it = from->b[self->moved];
        if (!it) {
            empty++;
            self->moved++;
            continue;
        }
        while (it) {
            s_item_t *next = it->next;
            size_t i = (size_t)(it->hash & (to->n - 1));
            it->next = to->b[i];
            to->b[i] = it;
            from->used--;
            to->used++;
            it = next;
        }
        from->b[self->moved++] = NULL;
        moved++;
    }
    if (self->moved == from->n) {
        free (from->b);
        *from = *to;
        memset (to, 0, sizeof *to);
        self->moved = 0;
    }
}

//  Start growing when the items outnumber the buckets.
static void
s_maybe_grow (bas_hash_t *self)
{
    if (s_growing (self) || self->t[0].used < self->t[0].n)
        return;
    s_table_init (&self->t[1], self->t[0].n * 2);
    self->moved = 0;
}

//  The link that points at the item with `key` in table t, or at the end of
//  its bucket's chain when there is none.
static s_item_t **
s_find (const s_table_t *t, const char *key, uint64_t hash)
{
    if (!t->n)
        return NULL;
    s_item_t **link = &t->b[hash & (t->n - 1)];
    while (*link && ((*link)->hash != hash || strcmp ((*link)->key, key) != 0))
        link = &(*link)->next;
    return link;
}

static s_item_t *
s_lookup (const bas_hash_t *self, const char *key, uint64_t hash)
{
    for (int k = 0; k < 2; k++) {
        s_item_t **link = s_find (&self->t[k], key, hash);
        if (link && *link)
            return *link;
    }
    return NULL;
}

static void
s_add (bas_hash_t *self, const char *key, uint64_t hash, void *value)
{
    size_t len = strlen (key) + 1;
    s_item_t *it = bas_malloc (sizeof *it + len);
    memcpy (it->key, key, len);
    it->hash = hash;
    it->value = value;
    s_table_t *t = s_growing (self) ? &self->t[1] : &self->t[0];
    size_t i = (size_t)(hash & (t->n - 1));
    it->next = t->b[i];
    t->b[i] = it;
    t->used++;
}

int
bas_hash_insert (bas_hash_t *self, const char *key, void *value)
{
    s_move_some (self);
    uint64_t hash = s_hash (key);
    if (s_lookup (self, key, hash))
        return -1;
    s_maybe_grow (self);
    s_add (self, key, hash, value);
    return 0;
}

void
bas_hash_update (bas_hash_t *self, const char *key, void *value)
{
    s_move_some (self);
    uint64_t hash = s_hash (key);
    s_item_t *it = s_lookup (self, key, hash);
    if (it) {
        if (self->destructor && it->value && it->value != value)
            self->destructor (it->value);
        it->value = value;
        return;
    }
    s_maybe_grow (self);
    s_add (self, key, hash, value);
}

void *
bas_hash_lookup (const bas_hash_t *self, const char *key)
{
    s_item_t *it = s_lookup (self, key, s_hash (key));
    return it ? it->value : NULL;
}

int
bas_hash_delete (bas_hash_t *self, const char *key)
{
    s_move_some (self);
    uint64_t hash = s_hash (key);
    for (int k = 0; k < 2; k++) {
        s_item_t **link = s_find (&self->t[k], key, hash);
        if (link && *link) {
            s_item_t *it = *link;
            *link = it->next;
            self->t[k].used--;
            if (self->destructor && it->value)
                self->destructor (it->value);
            free (it);
            return 0;
        }
    }
    return -1;
}

size_t
bas_hash_size (const bas_hash_t *self)
{
    return self->t[0].used + self->t[1].used;
}

//  The first item at or after (it_table, it_bucket).
static s_item_t *
s_scan (bas_hash_t *self)
{
    while (self->it_table < 2) {
        const s_table_t *t = &self->t[self->it_table];
        while (self->it_bucket < t->n) {
            s_item_t *it = t->b[self->it_bucket];
            if (it)
                return it;
            self->it_bucket++;
        }
        self->it_table++;
        self->it_bucket = 0;
    }
    return NULL;
}

void *
bas_hash_first (bas_hash_t *self)
{
    self->it_table = 0;
    self->it_bucket = 0;
    self->it_item = s_scan (self);
    return self->it_item ? self->it_item->value : NULL;
}

void *
bas_hash_next (bas_hash_t *self)
{
    if (!self->it_item)
        return NULL;
    if (self->it_item->next)
        self->it_item = self->it_item->next;
    else {
        self->it_bucket++;
        self->it_item = s_scan (self);
    }
    return self->it_item ? self->it_item->value : NULL;
}

const char *
bas_hash_cursor (const bas_hash_t *self)
{
    return self->it_item ? self->it_item->key : NULL;
}
