/*  util_prom: a validator of the Prometheus text exposition format
    (version 0.0.4) for tests, written from the format's specification.

    Copied from tests/test_metrics.c (whose own tests show it rejects what
    Prometheus rejects) so that integration tests can check a service's
    /metrics: every sample line is `name{labels} value`, names match
    [a-zA-Z_:][a-zA-Z0-9_:]*, label values are quoted with \\ \" \n
    escapes, values are floats or +Inf/-Inf/NaN, each family's HELP and
    TYPE come before its samples and once, and histogram buckets are
    cumulative and end at le="+Inf", which equals _count.
*/
#include "util_prom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ------------------------------------------------------------ the validator

#define V_MAX_FAMILIES 256
#define V_MAX_SERIES 1024

typedef struct {
    char name[128];
    char type[16];
    bool help, typed, sampled;
} v_family_t;

//  Bucket state of one histogram series (labels without le).
typedef struct {
    char family[128];
    char labels[512];
    double last_le;
    double last_count;
    bool saw_inf;
    double inf_count;
    bool has_count;
    double count;
} v_hist_t;

typedef struct {
    v_family_t families[V_MAX_FAMILIES];
    int nfamilies;
    v_hist_t hists[V_MAX_SERIES];
    int nhists;
    char error[512];
    int samples;
} v_state_t;

static bool
v_fail (v_state_t *v, int lineno, const char *line, const char *what)
{
    snprintf (v->error, sizeof v->error, "line %d: %s: %s", lineno, what, line);
    return false;
}

static bool
v_name_start (char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}

static bool
v_name_char (char c)
{
    return v_name_start (c) || (c >= '0' && c <= '9');
}

//  Length of a metric name at p (0 if none).
static size_t
v_metric_name (const char *p)
{
    if (!v_name_start (*p))
        return 0;
    size_t n = 1;
    while (v_name_char (p[n]))
        n++;
    return n;
}

//  Length of a label name at p (no ':' allowed).
static size_t
v_label_name (const char *p)
{
    if (!v_name_start (*p) || *p == ':')
        return 0;
    size_t n = 1;
    while (v_name_char (p[n]) && p[n] != ':')
        n++;
    return n;
}

//  A sample value: a float or +Inf/-Inf/NaN, the whole string.
static bool
v_value (const char *s, double *out)
{
    if (strcmp (s, "+Inf") == 0) {
        *out = INFINITY;
        return true;
    }
    if (strcmp (s, "-Inf") == 0) {
        *out = -INFINITY;
        return true;
    }
    if (strcmp (s, "NaN") == 0) {
        *out = NAN;
        return true;
    }
    if (!*s || strchr (s, 'n') || strchr (s, 'N') || strchr (s, 'x') || strchr (s, 'X'))
        return false; // "inf", "nan", hex: not Prometheus spellings
    char *end;
    *out = strtod (s, &end);
    return *end == 0;
}

static v_family_t *
v_family (v_state_t *v, const char *name, size_t len)
{
    for (int i = 0; i < v->nfamilies; i++)
        if (strlen (v->families[i].name) == len && strncmp (v->families[i].name, name, len) == 0)
            return &v->families[i];
    return NULL;
}

static v_hist_t *
v_hist (v_state_t *v, const char *family, const char *labels)
{
    for (int i = 0; i < v->nhists; i++)
        if (strcmp (v->hists[i].family, family) == 0 && strcmp (v->hists[i].labels, labels) == 0)
            return &v->hists[i];
    if (v->nhists >= V_MAX_SERIES)
        return NULL;
    v_hist_t *h = &v->hists[v->nhists++];
    memset (h, 0, sizeof *h);
    snprintf (h->family, sizeof h->family, "%s", family);
    snprintf (h->labels, sizeof h->labels, "%s", labels);
    h->last_le = -INFINITY;
    return h;
}

static bool
v_sample (v_state_t *v, int lineno, const char *line, v_family_t *current)
{
    const char *p = line;
    size_t nlen = v_metric_name (p);
    if (!nlen)
        return v_fail (v, lineno, line, "bad metric name");
    char name[128];
    snprintf (name, sizeof name, "%.*s", (int)nlen, p);
    p += nlen;
    //  Labels: name="value" pairs; the le label is split off for histograms.
    char labels[512] = "";
    char le[256] = "";
    bool has_le = false;
    if (*p == '{') {
        p++;
        while (*p != '}') {
            size_t llen = v_label_name (p);
            if (!llen)
                return v_fail (v, lineno, line, "bad label name");
            char lname[64];
            snprintf (lname, sizeof lname, "%.*s", (int)llen, p);
            p += llen;
            if (*p++ != '=' || *p++ != '"')
                return v_fail (v, lineno, line, "label without =\"");
            char value[256];
            size_t vn = 0;
            while (*p && *p != '"') {
                if (*p == '\\') {
                    p++;
                    if (*p != '\\' && *p != '"' && *p != 'n')
                        return v_fail (v, lineno, line, "bad escape in label value");
                }
                if (vn + 1 < sizeof value)
                    value[vn++] = *p;
                p++;
            }
            value[vn] = 0;
            if (*p++ != '"')
                return v_fail (v, lineno, line, "unterminated label value");
            if (strcmp (lname, "le") == 0) {
                has_le = true;
                snprintf (le, sizeof le, "%s", value);
            } else {
                size_t l = strlen (labels);
                snprintf (labels + l, sizeof labels - l, "%s%s=%s", l ? "," : "", lname, value);
            }
            if (*p == ',')
                p++;
            else if (*p != '}')
                return v_fail (v, lineno, line, "expected , or }");
        }
        p++;
    }
    if (*p++ != ' ')
        return v_fail (v, lineno, line, "no space before the value");
    double value;
    if (!v_value (p, &value))
        return v_fail (v, lineno, line, "bad value");
    v->samples++;

    //  The sample belongs to the family whose HELP/TYPE came last.
    if (!current || !current->typed)
        return v_fail (v, lineno, line, "sample before its TYPE line");
    current->sampled = true;
    size_t flen = strlen (current->name);
    const char *suffix = strncmp (name, current->name, flen) == 0 ? name + flen : NULL;
    if (strcmp (current->type, "histogram") != 0) {
        if (!suffix || *suffix)
            return v_fail (v, lineno, line, "sample name is not its family's");
        if (has_le)
            return v_fail (v, lineno, line, "le label outside a histogram");
        return true;
    }
    if (!suffix)
        return v_fail (v, lineno, line, "sample name is not its family's");
    v_hist_t *h = v_hist (v, current->name, labels);
    if (!h)
        return v_fail (v, lineno, line, "too many histogram series for the validator");
    if (strcmp (suffix, "_bucket") == 0) {
        double bound;
        if (!has_le || !v_value (le, &bound) || isnan (bound))
            return v_fail (v, lineno, line, "bucket without a numeric le");
        if (h->saw_inf)
            return v_fail (v, lineno, line, "bucket after le=\"+Inf\"");
        if (!(bound > h->last_le))
            return v_fail (v, lineno, line, "le not ascending");
        if (value < h->last_count)
            return v_fail (v, lineno, line, "bucket counts not cumulative");
        h->last_le = bound;
        h->last_count = value;
        if (isinf (bound)) {
            h->saw_inf = true;
            h->inf_count = value;
        }
        return true;
    }
    if (has_le)
        return v_fail (v, lineno, line, "le label on _sum or _count");
    if (strcmp (suffix, "_sum") == 0)
        return true;
    if (strcmp (suffix, "_count") == 0) {
        if (!h->saw_inf)
            return v_fail (v, lineno, line, "_count before the le=\"+Inf\" bucket");
        if (value != h->inf_count)
            return v_fail (v, lineno, line, "_count differs from the +Inf bucket");
        h->has_count = true;
        h->count = value;
        return true;
    }
    return v_fail (v, lineno, line, "unknown histogram suffix");
}

//  Validate a whole exposition; on failure v->error says why.
static bool
v_check (v_state_t *v, const char *text)
{
    memset (v, 0, sizeof *v);
    if (*text && text[strlen (text) - 1] != '\n')
        return v_fail (v, 0, "", "text does not end with a newline");
    char *copy = strdup (text);
    char *save = NULL;
    int lineno = 0;
    v_family_t *current = NULL;
    bool ok = true;
    for (char *line = strtok_r (copy, "\n", &save); line && ok;
         line = strtok_r (NULL, "\n", &save)) {
        lineno++;
        if (line[0] == '#') {
            bool help = strncmp (line, "# HELP ", 7) == 0;
            bool type = strncmp (line, "# TYPE ", 7) == 0;
            if (!help && !type)
                continue; // a plain comment
            const char *p = line + 7;
            size_t nlen = v_metric_name (p);
            if (!nlen || (p[nlen] != ' ' && p[nlen] != 0)) {
                ok = v_fail (v, lineno, line, "bad name in HELP/TYPE");
                break;
            }
            v_family_t *f = v_family (v, p, nlen);
            if (!f) {
                if (v->nfamilies == V_MAX_FAMILIES) {
                    ok = v_fail (v, lineno, line, "too many families");
                    break;
                }
                f = &v->families[v->nfamilies++];
                snprintf (f->name, sizeof f->name, "%.*s", (int)nlen, p);
            } else if (f->sampled || (help && f->help) || (type && f->typed)) {
                ok = v_fail (v, lineno, line, "family described twice or after its samples");
                break;
            }
            if (help) {
                //  HELP text: only \\ and \n escapes.
                for (const char *h = p + nlen; *h; h++)
                    if (*h == '\\' && h[1] != '\\' && h[1] != 'n') {
                        ok = v_fail (v, lineno, line, "bad escape in HELP");
                        break;
                    } else if (*h == '\\')
                        h++;
                f->help = true;
            } else {
                const char *t = p + nlen + 1;
                if (strcmp (t, "counter") && strcmp (t, "gauge") && strcmp (t, "histogram") &&
                    strcmp (t, "summary") && strcmp (t, "untyped")) {
                    ok = v_fail (v, lineno, line, "unknown TYPE");
                    break;
                }
                snprintf (f->type, sizeof f->type, "%s", t);
                f->typed = true;
            }
            current = f;
            continue;
        }
        ok = v_sample (v, lineno, line, current);
    }
    free (copy);
    if (!ok)
        return false;
    for (int i = 0; i < v->nhists; i++)
        if (!v->hists[i].saw_inf || !v->hists[i].has_count)
            return v_fail (v, 0, v->hists[i].family, "histogram series without +Inf or _count");
    return true;
}

bool
util_prom_check (const char *text, char *err, size_t errlen)
{
    v_state_t *v = calloc (1, sizeof *v);
    if (!v)
        abort ();
    bool ok = v_check (v, text);
    if (!ok && err && errlen)
        snprintf (err, errlen, "%s", v->error);
    free (v);
    return ok;
}

double
util_prom_sample (const char *text, const char *series)
{
    size_t n = strlen (series);
    for (const char *p = text; p && *p; p = strchr (p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp (p, series, n) == 0 && p[n] == ' ') {
            double v;
            char value[64];
            const char *eol = strchr (p + n + 1, '\n');
            size_t len = eol ? (size_t)(eol - (p + n + 1)) : strlen (p + n + 1);
            snprintf (value, sizeof value, "%.*s", (int)len, p + n + 1);
            return v_value (value, &v) ? v : NAN;
        }
    return NAN;
}

double
util_prom_sum (const char *text, const char *name)
{
    size_t n = strlen (name);
    double sum = 0;
    bool any = false;
    for (const char *p = text; p && *p; p = strchr (p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp (p, name, n) != 0 || (p[n] != ' ' && p[n] != '{'))
            continue;
        const char *sp = p[n] == ' ' ? p + n : strstr (p + n, "} ");
        if (!sp)
            continue;
        sp += p[n] == ' ' ? 1 : 2;
        const char *eol = strchr (sp, '\n');
        char value[64];
        size_t len = eol ? (size_t)(eol - sp) : strlen (sp);
        snprintf (value, sizeof value, "%.*s", (int)len, sp);
        double v;
        if (v_value (value, &v)) {
            sum += v;
            any = true;
        }
    }
    return any ? sum : NAN;
}

bool
util_prom_has_family (const char *text, const char *name, const char *type)
{
    char want[256];
    snprintf (want, sizeof want, "# TYPE %s %s\n", name, type);
    return strstr (text, want) != NULL;
}
