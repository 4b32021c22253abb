/*  bas_yaml: see bas_yaml.h.

    Design note: libyaml's event parser drives a small stack machine. Each
    open mapping or sequence is a frame holding its cJSON node (not yet
    attached to its parent) and, for a mapping, the key waiting for its
    value. A finished node is attached to the frame below it when its END
    event arrives, so duplicate keys and merge keys are handled in one place
    (s_attach). Anchors are remembered by name with a pointer to their node;
    an alias deep-copies the node, which must be complete by then (an alias
    inside its own anchor would be a cycle).

    Costs: every node made is counted (keys included). An anchor's size is
    the count its node added, taken once when the node ends, so an alias is
    charged before anything is copied and a bomb stops at the first alias
    over the budget (bas_yaml.h) instead of after building the copies.
    Mappings that grow past S_KEYSET_MIN keys get a hash index of their
    keys: the duplicate-key check by list scan was quadratic (a 40,000-key
    mapping took 10 s). Merge sources (`<<`) are copied from and then kept
    until the document ends, never freed early: an anchor may point at one
    or into one (`<<: &base {...}` aliased later read freed memory).
*/
#include "bas_yaml.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define S_TAG_PREFIX "tag:yaml.org,2002:"
//  A mapping with this many keys gets a hash index of them (below it a
//  scan of the list is cheaper than building one).
#define S_KEYSET_MIN 16

//  Hash index of a mapping's keys: open addressing with linear probing over
//  the mapping's items (borrowed; the key is item->string).
typedef struct {
    const cJSON **slots; // cap entries, NULL = free
    size_t cap;          // a power of two, 0 until the index is built
    size_t used;         // entries in use
} s_keyset_t;

typedef struct {
    cJSON *node;            // the container being filled (owned until attached)
    char *key;              // mapping only: the key waiting for its value, or NULL
    bool key_is_merge;      // mapping only: the pending key is a plain `<<`
    yaml_mark_t key_mark;   // where the pending key was, for errors
    int anchor;             // index in anchors of this node's anchor, or -1
    yaml_mark_t start_mark; // where the node started
    cJSON *merges;          // mapping only: `<<` sources, merged at the end (owned)
    size_t nodes_at_start;  // the reader's node count before this node
    size_t nkeys;           // mapping only: keys attached so far
    s_keyset_t keys;        // mapping only: index of the keys once nkeys >= S_KEYSET_MIN
} s_frame_t;

typedef struct {
    char *name;    // anchor name
    cJSON *node;   // a container inside the document tree (borrowed), or a
                   // scalar's own copy (owned: the scalar may be used as a key)
    bool owned;    // node is owned by this entry
    bool complete; // false while the anchored container is still open
    size_t size;   // nodes the anchored node counted (what an alias of it costs)
} s_anchor_t;

typedef struct {
    yaml_parser_t parser; // libyaml state
    s_frame_t *stack;     // open containers, [0] is the outermost
    size_t depth;         // frames in use
    s_anchor_t *anchors;  // anchors of the current document
    size_t anchor_count;  // anchors in use
    size_t anchor_cap;    // anchors allocated
    cJSON *root;          // the finished document, or NULL
    size_t nodes;         // nodes made in this document (alias copies included)
    size_t copied;        // of those, nodes charged to aliases
    size_t merged;        // of those, nodes copied by merge keys (<<)
    cJSON *parked;        // merge sources, kept until the document ends (owned)
    char *err;            // caller's error buffer
    size_t errlen;        // its size
} s_reader_t;

static int s_fail (s_reader_t *self, yaml_mark_t mark, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static int
s_fail (s_reader_t *self, yaml_mark_t mark, const char *fmt, ...)
{
    if (!self->err || self->errlen == 0)
        return -1;
    int n =
        snprintf (self->err, self->errlen, "line %zu column %zu: ", mark.line + 1, mark.column + 1);
    if (n < 0 || (size_t)n >= self->errlen)
        return -1;
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (self->err + n, self->errlen - (size_t)n, fmt, ap);
    va_end (ap);
    return -1;
}

//  Report libyaml's own error (scanner or parser) with its marks.
static int
s_fail_parser (s_reader_t *self)
{
    yaml_parser_t *p = &self->parser;
    const char *problem = p->problem ? p->problem : "malformed YAML";
    if (p->error == YAML_MEMORY_ERROR)
        problem = "out of memory";
    if (p->context)
        return s_fail (self, p->problem_mark, "%s (%s, started at line %zu column %zu)", problem,
                       p->context, p->context_mark.line + 1, p->context_mark.column + 1);
    return s_fail (self, p->problem_mark, "%s", problem);
}

static size_t
s_hash (const char *key)
{
    //  FNV-1a: good enough spread for keys that differ in a few characters.
    uint64_t h = 14695981039346656037ull;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return (size_t)h;
}

static void
s_keyset_free (s_keyset_t *set)
{
    free (set->slots);
    *set = (s_keyset_t){NULL, 0, 0};
}

static const cJSON *
s_keyset_find (const s_keyset_t *set, const char *key)
{
    size_t mask = set->cap - 1;
    for (size_t i = s_hash (key) & mask; set->slots[i]; i = (i + 1) & mask)
        if (strcmp (set->slots[i]->string, key) == 0)
            return set->slots[i];
    return NULL;
}

//  Index item (its key not yet in the set). Returns 0 or -1 (out of memory).
static int
s_keyset_add (s_keyset_t *set, const cJSON *item)
{
    if ((set->used + 1) * 2 > set->cap) {
        //  Grow at half full so probe runs stay short.
        size_t cap = set->cap ? set->cap * 2 : 4 * S_KEYSET_MIN;
        const cJSON **slots = calloc (cap, sizeof *slots);
        if (!slots)
            return -1;
        for (size_t i = 0; i < set->cap; i++)
            if (set->slots[i]) {
                size_t j = s_hash (set->slots[i]->string) & (cap - 1);
                while (slots[j])
                    j = (j + 1) & (cap - 1);
                slots[j] = set->slots[i];
            }
        free (set->slots);
        set->slots = slots;
        set->cap = cap;
    }
    size_t mask = set->cap - 1;
    size_t i = s_hash (item->string) & mask;
    while (set->slots[i])
        i = (i + 1) & mask;
    set->slots[i] = item;
    set->used++;
    return 0;
}

//  The item under key in the frame's mapping, or NULL.
static const cJSON *
s_map_find (const s_frame_t *frame, const char *key)
{
    if (frame->keys.cap)
        return s_keyset_find (&frame->keys, key);
    return cJSON_GetObjectItemCaseSensitive (frame->node, key);
}

//  Add node (owned) under key, which the mapping does not hold yet.
//  Returns 0, or -1 when out of memory (node is freed if not attached).
static int
s_map_add (s_frame_t *frame, const char *key, cJSON *node)
{
    if (!cJSON_AddItemToObject (frame->node, key, node)) {
        cJSON_Delete (node);
        return -1;
    }
    frame->nkeys++;
    if (frame->keys.cap)
        return s_keyset_add (&frame->keys, node);
    if (frame->nkeys < S_KEYSET_MIN)
        return 0;
    for (const cJSON *c = frame->node->child; c; c = c->next)
        if (s_keyset_add (&frame->keys, c) != 0)
            return -1;
    return 0;
}

static void
s_anchors_clear (s_reader_t *self)
{
    for (size_t i = 0; i < self->anchor_count; i++) {
        free (self->anchors[i].name);
        if (self->anchors[i].owned)
            cJSON_Delete (self->anchors[i].node);
    }
    self->anchor_count = 0;
}

//  Forget what belongs to the document that ended (or failed).
static void
s_document_clear (s_reader_t *self)
{
    s_anchors_clear (self);
    cJSON_Delete (self->parked);
    self->parked = NULL;
    self->nodes = 0;
    self->copied = 0;
    self->merged = 0;
}

static void
s_reset_document (s_reader_t *self)
{
    for (size_t i = 0; i < self->depth; i++) {
        cJSON_Delete (self->stack[i].node);
        cJSON_Delete (self->stack[i].merges);
        free (self->stack[i].key);
        s_keyset_free (&self->stack[i].keys);
    }
    self->depth = 0;
    s_document_clear (self);
    cJSON_Delete (self->root);
    self->root = NULL;
}

static int
s_count_node (s_reader_t *self, size_t n, yaml_mark_t mark)
{
    self->nodes += n;
    if (self->nodes > BAS_YAML_MAX_NODES)
        return s_fail (self, mark, "document too large (more than %d nodes, alias bomb?)",
                       BAS_YAML_MAX_NODES);
    return 0;
}

//  Charge an alias of anchor (cost: its size) before it is copied. The
//  budget grows with what the text itself holds, so that memory stays
//  proportional to the input (bas_yaml.h).
static int
s_count_alias (s_reader_t *self, const s_anchor_t *anchor, yaml_mark_t mark)
{
    size_t written = self->nodes - self->copied - self->merged;
    size_t budget = BAS_YAML_ALIAS_NODES_FREE + BAS_YAML_ALIAS_NODES_PER_NODE * written;
    if (anchor->size > budget - self->copied)
        return s_fail (self, mark,
                       "alias *%s would copy %zu nodes; aliases may copy %zu more in this "
                       "document (%d + %d per node written, %zu copied so far): alias bomb?",
                       anchor->name, anchor->size, budget - self->copied, BAS_YAML_ALIAS_NODES_FREE,
                       BAS_YAML_ALIAS_NODES_PER_NODE, self->copied);
    if (s_count_node (self, anchor->size, mark) != 0)
        return -1;
    self->copied += anchor->size;
    return 0;
}

//  Remember `name` for `node`. Redefining an anchor is allowed by YAML: the
//  newest definition wins, so search from the end. Returns the index or -1.
static int
s_anchor_add (s_reader_t *self, const char *name, cJSON *node, bool owned, bool complete,
              yaml_mark_t mark)
{
    if (self->anchor_count == self->anchor_cap) {
        size_t cap = self->anchor_cap ? self->anchor_cap * 2 : 8;
        s_anchor_t *grown = realloc (self->anchors, cap * sizeof *grown);
        if (!grown)
            return s_fail (self, mark, "out of memory");
        self->anchors = grown;
        self->anchor_cap = cap;
    }
    char *copy = strdup (name);
    if (!copy)
        return s_fail (self, mark, "out of memory");
    self->anchors[self->anchor_count] = (s_anchor_t){copy, node, owned, complete, 1};
    return (int)self->anchor_count++;
}

static s_anchor_t *
s_anchor_find (s_reader_t *self, const char *name)
{
    for (size_t i = self->anchor_count; i > 0; i--)
        if (strcmp (self->anchors[i - 1].name, name) == 0)
            return &self->anchors[i - 1];
    return NULL;
}

static size_t
s_tree_size (const cJSON *node)
{
    size_t n = 1;
    for (const cJSON *c = node->child; c; c = c->next)
        n += s_tree_size (c);
    return n;
}

//  Copy the keys of `src` (a mapping) into the frame's mapping where it
//  lacks them (`<<` never overrides keys of the mapping itself). Copied,
//  not moved: an anchor may point at src or inside it. Each source is
//  merged once, so the copies are at most the size of what was written or
//  aliased: counted (the document cap), but not against the alias budget,
//  and not as written either, which would let merges grow that budget.
static int
s_merge_mapping (s_reader_t *self, s_frame_t *frame, const cJSON *src, yaml_mark_t mark)
{
    for (const cJSON *c = src->child; c; c = c->next) {
        if (s_map_find (frame, c->string))
            continue;
        size_t size = s_tree_size (c);
        if (s_count_node (self, size, mark) != 0)
            return -1;
        self->merged += size;
        cJSON *copy = cJSON_Duplicate (c, true);
        if (!copy || s_map_add (frame, c->string, copy) != 0)
            return s_fail (self, mark, "out of memory");
    }
    return 0;
}

//  Keep a node (owned) until the document ends: anchors may point into it.
static int
s_park (s_reader_t *self, cJSON *node, yaml_mark_t mark)
{
    if (!self->parked)
        self->parked = cJSON_CreateArray ();
    if (!self->parked) {
        cJSON_Delete (node);
        return s_fail (self, mark, "out of memory");
    }
    cJSON_AddItemToArray (self->parked, node);
    return 0;
}

//  Attach a finished node (taking ownership) to the innermost open
//  container, or make it the document root. `is_key_candidate` is true for
//  scalars (and scalar aliases) that may serve as a mapping key; `plain_merge`
//  marks a plain `<<`; `key_text` is the scalar's text when it is a key.
static int
s_attach (s_reader_t *self, cJSON *node, const char *key_text, bool plain_merge, yaml_mark_t mark)
{
    if (self->depth == 0) {
        if (self->root) {
            cJSON_Delete (node);
            return s_fail (self, mark, "more than one root node");
        }
        self->root = node;
        return 0;
    }
    s_frame_t *top = &self->stack[self->depth - 1];
    if (cJSON_IsArray (top->node)) {
        cJSON_AddItemToArray (top->node, node);
        return 0;
    }
    //  A mapping: either this node is the key, or the value for the key.
    if (!top->key) {
        if (!key_text) {
            cJSON_Delete (node);
            return s_fail (self, mark, "mapping keys must be scalars");
        }
        top->key = strdup (key_text);
        cJSON_Delete (node);
        if (!top->key)
            return s_fail (self, mark, "out of memory");
        top->key_is_merge = plain_merge;
        top->key_mark = mark;
        return 0;
    }
    char *key = top->key;
    top->key = NULL;
    int rc = 0;
    if (top->key_is_merge) {
        //  `<<: *base` or `<<: [*a, *b]`. Keys written in the mapping itself
        //  win whatever their position, so sources are merged when the
        //  mapping ends (s_pop); earlier sources win over later ones.
        if (!top->merges)
            top->merges = cJSON_CreateArray ();
        if (!top->merges) {
            cJSON_Delete (node);
            rc = s_fail (self, mark, "out of memory");
        } else if (cJSON_IsObject (node))
            cJSON_AddItemToArray (top->merges, node);
        else if (cJSON_IsArray (node)) {
            for (cJSON *c = node->child; c && rc == 0; c = c->next)
                if (!cJSON_IsObject (c))
                    rc = s_fail (self, mark, "merge key << needs mappings");
            //  Kept whole, not taken apart: it may be anchored (`<<: &s [...]`).
            if (rc == 0)
                cJSON_AddItemToArray (top->merges, node);
            else
                cJSON_Delete (node);
        } else {
            cJSON_Delete (node);
            rc = s_fail (self, mark, "merge key << needs a mapping or a list of mappings");
        }
    } else if (s_map_find (top, key)) {
        cJSON_Delete (node);
        rc = s_fail (self, top->key_mark, "duplicate key \"%s\"", key);
    } else if (s_map_add (top, key, node) != 0)
        rc = s_fail (self, mark, "out of memory");
    free (key);
    return rc;
}

//  True if text (NUL-terminated) matches one of the words.
static bool
s_is_word (const char *text, const char *const *words)
{
    for (; *words; words++)
        if (strcmp (text, *words) == 0)
            return true;
    return false;
}

static bool
s_is_decimal_int (const char *s)
{
    if (*s == '-' || *s == '+')
        s++;
    if (!*s)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

//  YAML 1.2 core float: [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
static bool
s_is_decimal_float (const char *s)
{
    if (*s == '-' || *s == '+')
        s++;
    size_t int_digits = 0, frac_digits = 0;
    while (*s >= '0' && *s <= '9') {
        s++;
        int_digits++;
    }
    if (*s == '.') {
        s++;
        while (*s >= '0' && *s <= '9') {
            s++;
            frac_digits++;
        }
    }
    if (int_digits == 0 && frac_digits == 0)
        return false;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '-' || *s == '+')
            s++;
        if (!(*s >= '0' && *s <= '9'))
            return false;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == 0;
}

//  0x1F or 0o17, with an optional sign. Sets *value.
static bool
s_is_radix_int (const char *s, double *value)
{
    bool neg = false;
    if (*s == '-' || *s == '+')
        neg = *s++ == '-';
    int base = 0;
    if (s[0] == '0' && s[1] == 'x')
        base = 16;
    else if (s[0] == '0' && s[1] == 'o')
        base = 8;
    if (!base || !s[2])
        return false;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull (s + 2, &end, base);
    if (errno != 0 || *end != 0 || s[2] == '-' || s[2] == '+' || s[2] == ' ')
        return false;
    *value = neg ? -(double)v : (double)v;
    return true;
}

static const char *const s_null_words[] = {"", "~", "null", "Null", "NULL", NULL};
static const char *const s_true_words[] = {"true", "True", "TRUE", NULL};
static const char *const s_false_words[] = {"false", "False", "FALSE", NULL};

//  Resolve a plain scalar by the core schema.
static cJSON *
s_resolve_plain (const char *text)
{
    //  Most plain scalars of a manifest are names. Every null, boolean and
    //  number starts with one of these characters (strchr also finds the
    //  terminator, so the empty scalar goes on to be null).
    if (!strchr ("~nNtTfF0123456789+-.", text[0]))
        return cJSON_CreateString (text);
    double value;
    if (s_is_word (text, s_null_words))
        return cJSON_CreateNull ();
    if (s_is_word (text, s_true_words))
        return cJSON_CreateTrue ();
    if (s_is_word (text, s_false_words))
        return cJSON_CreateFalse ();
    if (s_is_decimal_int (text) || s_is_decimal_float (text))
        return cJSON_CreateNumber (strtod (text, NULL));
    if (s_is_radix_int (text, &value))
        return cJSON_CreateNumber (value);
    return cJSON_CreateString (text);
}

//  Build the node for a scalar event. Returns NULL after s_fail.
static cJSON *
s_scalar_node (s_reader_t *self, yaml_event_t *event)
{
    const char *text = (const char *)event->data.scalar.value;
    const char *tag = (const char *)event->data.scalar.tag;
    yaml_mark_t mark = event->start_mark;
    if (strlen (text) != event->data.scalar.length) {
        s_fail (self, mark, "scalar contains a NUL character");
        return NULL;
    }
    cJSON *node = NULL;
    if (tag && strcmp (tag, "!") != 0) {
        if (strncmp (tag, S_TAG_PREFIX, strlen (S_TAG_PREFIX)) != 0) {
            s_fail (self, mark, "unsupported tag %s", tag);
            return NULL;
        }
        const char *t = tag + strlen (S_TAG_PREFIX);
        double value;
        if (strcmp (t, "str") == 0)
            node = cJSON_CreateString (text);
        else if (strcmp (t, "null") == 0)
            node = cJSON_CreateNull ();
        else if (strcmp (t, "bool") == 0) {
            if (s_is_word (text, s_true_words))
                node = cJSON_CreateTrue ();
            else if (s_is_word (text, s_false_words))
                node = cJSON_CreateFalse ();
            else {
                s_fail (self, mark, "invalid !!bool value \"%s\"", text);
                return NULL;
            }
        } else if (strcmp (t, "int") == 0 || strcmp (t, "float") == 0) {
            if (s_is_decimal_int (text) || s_is_decimal_float (text))
                node = cJSON_CreateNumber (strtod (text, NULL));
            else if (s_is_radix_int (text, &value))
                node = cJSON_CreateNumber (value);
            else {
                s_fail (self, mark, "invalid !!%s value \"%s\"", t, text);
                return NULL;
            }
        } else {
            s_fail (self, mark, "unsupported tag !!%s", t);
            return NULL;
        }
    } else if (event->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !tag)
        node = s_resolve_plain (text);
    else
        node = cJSON_CreateString (text);
    if (!node)
        s_fail (self, mark, "out of memory");
    return node;
}

static int
s_push (s_reader_t *self, cJSON *node, const char *anchor, yaml_mark_t mark)
{
    if (!node)
        return s_fail (self, mark, "out of memory");
    if (self->depth >= BAS_YAML_MAX_DEPTH) {
        cJSON_Delete (node);
        return s_fail (self, mark, "nesting deeper than %d levels", BAS_YAML_MAX_DEPTH);
    }
    //  A container cannot be a mapping key: catch it here, where the mark
    //  points at the key rather than at its end.
    if (self->depth > 0) {
        s_frame_t *top = &self->stack[self->depth - 1];
        if (cJSON_IsObject (top->node) && !top->key) {
            cJSON_Delete (node);
            return s_fail (self, mark, "mapping keys must be scalars");
        }
    }
    size_t nodes_at_start = self->nodes;
    if (s_count_node (self, 1, mark) != 0) {
        cJSON_Delete (node);
        return -1;
    }
    int index = -1;
    if (anchor) {
        index = s_anchor_add (self, anchor, node, false, false, mark);
        if (index < 0) {
            cJSON_Delete (node);
            return -1;
        }
    }
    self->stack[self->depth++] = (s_frame_t){.node = node,
                                             .key_mark = mark,
                                             .anchor = index,
                                             .start_mark = mark,
                                             .nodes_at_start = nodes_at_start};
    return 0;
}

static int
s_pop (s_reader_t *self, yaml_mark_t mark)
{
    if (self->depth == 0)
        return s_fail (self, mark, "unbalanced end of collection");
    s_frame_t frame = self->stack[--self->depth];
    if (frame.key) {
        //  libyaml gives an empty value for "key:" so this is only a guard.
        free (frame.key);
        cJSON_Delete (frame.node);
        cJSON_Delete (frame.merges);
        s_keyset_free (&frame.keys);
        return s_fail (self, frame.key_mark, "mapping key without a value");
    }
    int rc = 0;
    if (frame.merges) {
        //  Each source is a mapping or a list of mappings (s_attach).
        for (const cJSON *src = frame.merges->child; src && rc == 0; src = src->next) {
            if (cJSON_IsObject (src))
                rc = s_merge_mapping (self, &frame, src, frame.start_mark);
            for (const cJSON *m = cJSON_IsArray (src) ? src->child : NULL; m && rc == 0;
                 m = m->next)
                rc = s_merge_mapping (self, &frame, m, frame.start_mark);
        }
        int parked = s_park (self, frame.merges, frame.start_mark);
        rc = rc ? rc : parked;
    }
    s_keyset_free (&frame.keys);
    if (rc != 0) {
        cJSON_Delete (frame.node);
        return -1;
    }
    if (frame.anchor >= 0) {
        self->anchors[frame.anchor].complete = true;
        self->anchors[frame.anchor].size = self->nodes - frame.nodes_at_start;
    }
    return s_attach (self, frame.node, NULL, false, frame.start_mark);
}

//  Handle one event of a document body. Returns 0 or -1.
static int
s_event (s_reader_t *self, yaml_event_t *event)
{
    yaml_mark_t mark = event->start_mark;
    switch (event->type) {
    case YAML_SCALAR_EVENT: {
        cJSON *node = s_scalar_node (self, event);
        if (!node)
            return -1;
        if (s_count_node (self, 1, mark) != 0) {
            cJSON_Delete (node);
            return -1;
        }
        const char *anchor = (const char *)event->data.scalar.anchor;
        if (anchor) {
            cJSON *copy = cJSON_Duplicate (node, false);
            if (!copy || s_anchor_add (self, anchor, copy, true, true, mark) < 0) {
                cJSON_Delete (copy);
                cJSON_Delete (node);
                return copy ? -1 : s_fail (self, mark, "out of memory");
            }
        }
        const char *text = (const char *)event->data.scalar.value;
        bool merge = event->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
                     !event->data.scalar.tag && strcmp (text, "<<") == 0;
        return s_attach (self, node, text, merge, mark);
    }
    case YAML_ALIAS_EVENT: {
        const char *name = (const char *)event->data.alias.anchor;
        s_anchor_t *anchor = s_anchor_find (self, name);
        if (!anchor)
            return s_fail (self, mark, "unknown anchor \"%s\"", name);
        if (!anchor->complete)
            return s_fail (self, mark, "alias \"%s\" refers to a node that contains it", name);
        if (s_count_alias (self, anchor, mark) != 0)
            return -1;
        cJSON *copy = cJSON_Duplicate (anchor->node, true);
        if (!copy)
            return s_fail (self, mark, "out of memory");
        //  An alias of a scalar can serve as a key: use its text.
        const char *key_text = cJSON_IsString (copy) ? copy->valuestring : NULL;
        char numbuf[64];
        if (cJSON_IsNumber (copy)) {
            snprintf (numbuf, sizeof numbuf, "%.17g", copy->valuedouble);
            key_text = numbuf;
        }
        return s_attach (self, copy, key_text, false, mark);
    }
    case YAML_SEQUENCE_START_EVENT:
        return s_push (self, cJSON_CreateArray (), (const char *)event->data.sequence_start.anchor,
                       mark);
    case YAML_MAPPING_START_EVENT:
        return s_push (self, cJSON_CreateObject (), (const char *)event->data.mapping_start.anchor,
                       mark);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        return s_pop (self, mark);
    default:
        return s_fail (self, mark, "unexpected YAML event %d", (int)event->type);
    }
}

//  Read the next document. Returns 1 with *doc_p (owned by the caller, a
//  JSON null for an empty document), 0 at the end of the stream, -1 on error.
static int
s_next_document (s_reader_t *self, cJSON **doc_p)
{
    *doc_p = NULL;
    bool in_document = false;
    while (true) {
        yaml_event_t event;
        if (!yaml_parser_parse (&self->parser, &event))
            return s_fail_parser (self);
        int rc = 0;
        bool done = false;
        switch (event.type) {
        case YAML_STREAM_START_EVENT:
            break;
        case YAML_STREAM_END_EVENT:
            done = true;
            break;
        case YAML_DOCUMENT_START_EVENT:
            in_document = true;
            break;
        case YAML_DOCUMENT_END_EVENT:
            *doc_p = self->root ? self->root : cJSON_CreateNull ();
            self->root = NULL;
            s_document_clear (self);
            rc = *doc_p ? 1 : s_fail (self, event.start_mark, "out of memory");
            done = true;
            break;
        default:
            rc = in_document ? s_event (self, &event)
                             : s_fail (self, event.start_mark, "content outside a document");
            break;
        }
        yaml_event_delete (&event);
        if (rc < 0) {
            s_reset_document (self);
            return -1;
        }
        if (done)
            return rc;
    }
}

static int
s_reader_init (s_reader_t *self, const char *text, size_t len, char *err, size_t errlen)
{
    memset (self, 0, sizeof *self);
    self->err = err;
    self->errlen = errlen;
    if (err && errlen)
        err[0] = 0;
    self->stack = calloc (BAS_YAML_MAX_DEPTH, sizeof *self->stack);
    if (!self->stack || !yaml_parser_initialize (&self->parser)) {
        free (self->stack);
        if (err && errlen)
            snprintf (err, errlen, "out of memory");
        return -1;
    }
    yaml_parser_set_input_string (&self->parser, (const unsigned char *)(text ? text : ""),
                                  text ? len : 0);
    return 0;
}

static void
s_reader_fini (s_reader_t *self)
{
    s_reset_document (self);
    free (self->anchors);
    free (self->stack);
    yaml_parser_delete (&self->parser);
}

cJSON *
bas_yaml_to_json (const char *text, size_t len, char *err, size_t errlen)
{
    s_reader_t reader;
    if (s_reader_init (&reader, text, len, err, errlen) != 0)
        return NULL;
    cJSON *doc = NULL;
    int rc = s_next_document (&reader, &doc);
    if (rc == 0)
        doc = cJSON_CreateNull ();
    else if (rc == 1) {
        cJSON *extra = NULL;
        int more = s_next_document (&reader, &extra);
        if (more != 0) {
            if (more == 1)
                s_fail (&reader, reader.parser.mark,
                        "expected a single document, found another one");
            cJSON_Delete (extra);
            cJSON_Delete (doc);
            doc = NULL;
        }
    }
    s_reader_fini (&reader);
    return doc;
}

int
bas_yaml_load_documents (const char *text, size_t len, bas_yaml_doc_fn *fn, void *arg, char *err,
                         size_t errlen)
{
    s_reader_t reader;
    if (s_reader_init (&reader, text, len, err, errlen) != 0)
        return -1;
    int index = 0;
    int rc = 0;
    while (true) {
        cJSON *doc = NULL;
        int got = s_next_document (&reader, &doc);
        if (got == 0)
            break;
        if (got < 0) {
            if (err && errlen) {
                char inner[512];
                snprintf (inner, sizeof inner, "%s", err);
                snprintf (err, errlen, "document %d: %s", index, inner);
            }
            rc = -1;
            break;
        }
        int stop = 0;
        if (!cJSON_IsNull (doc))
            stop = fn (arg, &doc, index);
        cJSON_Delete (doc);
        if (stop != 0) {
            if (err && errlen)
                snprintf (err, errlen, "document %d: rejected by caller", index);
            rc = -1;
            break;
        }
        index++;
    }
    s_reader_fini (&reader);
    return rc;
}
