/*  bas_hash: a string-keyed hash table that grows a little at a time.

    zhashx doubles by rehashing every item inside the one insert that
    crosses its load factor: 23 ms at 98,000 items, 49 ms at 196,000, and a
    process whose tables of pods grow together (the store, the cache's
    charges and dirty sets) spent 100 ms in one reactor turn while listing
    150,000 pods (DESIGN: no turn over 50 ms). This table keeps two bucket
    arrays while it grows and moves a few buckets on every insert and
    delete, as Redis's dict does, so no single call does O(n) work.

    Keys are copied (into the item itself: one allocation per item); values
    are borrowed, and freed by the destructor, if set, when replaced,
    deleted or purged. Iteration (first/next/cursor) is like zhashx's: the
    table must not change while it runs. Lookups never move buckets.
*/
#ifndef BAS_HASH_H
#define BAS_HASH_H

#include <stdbool.h>
#include <stddef.h>

typedef struct _bas_hash_t bas_hash_t;
typedef void (bas_hash_free_fn) (void *value);

bas_hash_t *bas_hash_new (bas_hash_free_fn *destructor);
void bas_hash_destroy (bas_hash_t **self_p);

//  Insert; -1 (and nothing changes) when the key is there already.
int bas_hash_insert (bas_hash_t *self, const char *key, void *value);
//  Insert or replace (the old value goes to the destructor).
void bas_hash_update (bas_hash_t *self, const char *key, void *value);
void *bas_hash_lookup (const bas_hash_t *self, const char *key);
//  Delete (the value goes to the destructor); -1 when the key is absent.
int bas_hash_delete (bas_hash_t *self, const char *key);
size_t bas_hash_size (const bas_hash_t *self);
//  Delete everything.
void bas_hash_purge (bas_hash_t *self);

//  Iteration: the first value, the next one (NULL at the end), and the key
//  of the value last returned.
void *bas_hash_first (bas_hash_t *self);
void *bas_hash_next (bas_hash_t *self);
const char *bas_hash_cursor (const bas_hash_t *self);

#endif
