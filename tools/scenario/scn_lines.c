/*  scn_lines: see scn_lines.h. A stack of open containers, each knowing its
    own path and, for a mapping, whether the next node is a key.
*/
#include "scn_lines.h"
#include "bas_util.h"

#include <czmq.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define S_MAX_DEPTH 64
#define S_PATH_MAX 512

typedef struct {
    bool is_map;           // mapping (else sequence)
    bool expect_key;       // mapping: the next node is a key
    int index;             // sequence: index of the next item
    char key[128];         // mapping: the key whose value comes next
    char path[S_PATH_MAX]; // this container's path ("" for the root)
} s_frame_t;

struct _scn_lines_t {
    zhashx_t *lines; // path -> line (stored as (void *) (intptr_t) line)
};

static void
s_record (scn_lines_t *self, const char *path, int line)
{
    if (!zhashx_lookup (self->lines, path))
        zhashx_insert (self->lines, path, (void *)(intptr_t)line);
}

//  Append src to the string in dst (size len), cutting what does not fit.
static void
s_append (char *dst, size_t len, const char *src)
{
    size_t have = strlen (dst);
    size_t n = strlen (src);
    if (have + n >= len)
        n = len - have - 1;
    memcpy (dst + have, src, n);
    dst[have + n] = 0;
}

static void
s_child_path (const s_frame_t *top, char *out, size_t len)
{
    out[0] = 0;
    if (!top)
        return;
    s_append (out, len, top->path);
    if (*top->path)
        s_append (out, len, "/");
    if (top->is_map)
        s_append (out, len, top->key);
    else {
        char num[16];
        snprintf (num, sizeof num, "%d", top->index);
        s_append (out, len, num);
    }
}

scn_lines_t *
scn_lines_new (const char *text, size_t len)
{
    scn_lines_t *self = bas_alloc (sizeof *self);
    self->lines = zhashx_new ();
    yaml_parser_t parser;
    yaml_parser_initialize (&parser);
    yaml_parser_set_input_string (&parser, (const unsigned char *)text, len);
    s_frame_t *stack = bas_alloc (sizeof *stack * S_MAX_DEPTH);
    int depth = 0;
    bool ok = true, done = false;
    while (!done) {
        yaml_event_t ev;
        if (!yaml_parser_parse (&parser, &ev)) {
            ok = false;
            break;
        }
        int line = (int)ev.start_mark.line + 1;
        s_frame_t *top = depth > 0 ? &stack[depth - 1] : NULL;
        bool is_node = ev.type == YAML_SCALAR_EVENT || ev.type == YAML_MAPPING_START_EVENT ||
                       ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_ALIAS_EVENT;
        if (is_node && top && top->is_map && top->expect_key) {
            //  A key: remember it and where it is; the value follows.
            top->expect_key = false;
            top->key[0] = 0;
            s_append (top->key, sizeof top->key,
                      ev.type == YAML_SCALAR_EVENT ? (const char *)ev.data.scalar.value : "?");
            char path[S_PATH_MAX];
            s_child_path (top, path, sizeof path);
            s_record (self, path, line);
            if (ev.type == YAML_MAPPING_START_EVENT || ev.type == YAML_SEQUENCE_START_EVENT) {
                ok = false; // complex keys: bas_yaml refuses them anyway
                done = true;
            }
        } else if (is_node) {
            char path[S_PATH_MAX];
            s_child_path (top, path, sizeof path);
            s_record (self, path, line);
            if (top && top->is_map)
                top->expect_key = true;
            else if (top)
                top->index++;
            if (ev.type == YAML_MAPPING_START_EVENT || ev.type == YAML_SEQUENCE_START_EVENT) {
                if (depth == S_MAX_DEPTH) {
                    ok = false;
                    done = true;
                } else {
                    s_frame_t *f = &stack[depth++];
                    memset (f, 0, sizeof *f);
                    f->is_map = ev.type == YAML_MAPPING_START_EVENT;
                    f->expect_key = f->is_map;
                    s_append (f->path, sizeof f->path, path);
                }
            }
        } else if (ev.type == YAML_MAPPING_END_EVENT || ev.type == YAML_SEQUENCE_END_EVENT) {
            if (depth > 0)
                depth--;
        } else if (ev.type == YAML_STREAM_END_EVENT || ev.type == YAML_DOCUMENT_END_EVENT)
            done = true;
        yaml_event_delete (&ev);
    }
    yaml_parser_delete (&parser);
    free (stack);
    if (!ok)
        scn_lines_destroy (&self);
    return self;
}

void
scn_lines_destroy (scn_lines_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    zhashx_destroy (&(*self_p)->lines);
    free (*self_p);
    *self_p = NULL;
}

int
scn_lines_get (scn_lines_t *self, const char *path)
{
    if (!self || !path)
        return 0;
    char buf[S_PATH_MAX];
    snprintf (buf, sizeof buf, "%s", path);
    for (;;) {
        void *v = zhashx_lookup (self->lines, buf);
        if (v)
            return (int)(intptr_t)v;
        char *slash = strrchr (buf, '/');
        if (!slash)
            return 0;
        *slash = 0;
    }
}
