/*  sim_load: see sim_load.h. */
#include "sim_load.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bas_log.h"
#include "bas_yaml.h"

typedef struct {
    sim_api_t *api;   // where objects go
    const char *file; // for messages
    char *err;        // caller's buffer
    size_t errlen;    // its size
    int loaded;       // documents loaded so far
} s_loader_t;

//  One document: the store takes it (bas_yaml_doc_fn).
static int
s_doc (void *arg, cJSON **doc_p, int index)
{
    s_loader_t *self = arg;
    char inner[512];
    if (sim_api_load (self->api, doc_p, inner, sizeof inner) != 0) {
        snprintf (self->err, self->errlen, "%s: document %d: %s", self->file, index, inner);
        return -1;
    }
    self->loaded++;
    return 0;
}

static bool
s_has_suffix (const char *name, const char *suffix)
{
    size_t n = strlen (name), s = strlen (suffix);
    return n > s && strcmp (name + n - s, suffix) == 0;
}

//  Line and column of byte offset `at` in text.
static void
s_position (const char *text, size_t at, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < at && text[i]; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else
            (*col)++;
    }
}

static int
s_load_file (sim_api_t *api, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen (path, "rb");
    if (!f) {
        snprintf (err, errlen, "%s: %s", path, strerror (errno));
        return -1;
    }
    sim_buf_t buf = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread (chunk, 1, sizeof chunk, f)) > 0)
        sim_buf_append (&buf, chunk, n);
    bool failed = ferror (f);
    fclose (f);
    if (failed) {
        sim_buf_clear (&buf);
        snprintf (err, errlen, "%s: read error", path);
        return -1;
    }
    s_loader_t loader = {api, path, err, errlen, 0};
    int rc = 0;
    if (s_has_suffix (path, ".json")) {
        const char *end = NULL;
        cJSON *doc = buf.data ? cJSON_ParseWithLengthOpts (buf.data, buf.len, &end, false) : NULL;
        if (!doc) {
            int line, col;
            s_position (buf.data ? buf.data : "", end && buf.data ? (size_t)(end - buf.data) : 0,
                        &line, &col);
            snprintf (err, errlen, "%s: document 0: line %d column %d: malformed JSON", path, line,
                      col);
            rc = -1;
        } else {
            rc = s_doc (&loader, &doc, 0);
            //  s_doc took the document; this only frees what it left.
            cJSON_Delete (doc);
        }
    } else {
        char yerr[512];
        if (bas_yaml_load_documents (buf.data ? buf.data : "", buf.len, s_doc, &loader, yerr,
                                     sizeof yerr) != 0) {
            //  s_doc already wrote a better message when it stopped the load.
            if (!strstr (yerr, "rejected by caller"))
                snprintf (err, errlen, "%s: %s", path, yerr);
            rc = -1;
        }
    }
    sim_buf_clear (&buf);
    if (rc == 0)
        bas_info ("loaded", "file=%s documents=%d", path, loader.loaded);
    return rc == 0 ? loader.loaded : -1;
}

static int
s_compare (const void *a, const void *b)
{
    return strcmp (*(char *const *)a, *(char *const *)b);
}

int
sim_load_path (sim_api_t *api, const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat (path, &st) != 0) {
        snprintf (err, errlen, "%s: %s", path, strerror (errno));
        return -1;
    }
    if (!S_ISDIR (st.st_mode))
        return s_load_file (api, path, err, errlen);
    DIR *dir = opendir (path);
    if (!dir) {
        snprintf (err, errlen, "%s: %s", path, strerror (errno));
        return -1;
    }
    char **names = NULL;
    size_t count = 0, cap = 0;
    struct dirent *ent;
    while ((ent = readdir (dir))) {
        const char *name = ent->d_name;
        if (name[0] == '.')
            continue;
        if (!s_has_suffix (name, ".yaml") && !s_has_suffix (name, ".yml") &&
            !s_has_suffix (name, ".json"))
            continue;
        if (count == cap) {
            cap = cap ? cap * 2 : 16;
            char **grown = realloc (names, cap * sizeof *grown);
            if (!grown)
                break;
            names = grown;
        }
        names[count] = strdup (name);
        if (names[count])
            count++;
    }
    closedir (dir);
    if (count)
        qsort (names, count, sizeof *names, s_compare);
    int total = 0;
    for (size_t i = 0; i < count && total >= 0; i++) {
        size_t len = strlen (path) + strlen (names[i]) + 2;
        char *full = malloc (len);
        if (!full) {
            total = -1;
            break;
        }
        snprintf (full, len, "%s/%s", path, names[i]);
        int n = stat (full, &st) == 0 && S_ISREG (st.st_mode) ? s_load_file (api, full, err, errlen)
                                                              : 0;
        total = n < 0 ? -1 : total + n;
        free (full);
    }
    for (size_t i = 0; i < count; i++)
        free (names[i]);
    free (names);
    return total;
}
