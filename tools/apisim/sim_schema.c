/*  sim_schema: see sim_schema.h.

    Design note: validation walks schema and value together, one function
    per kind of check, in kube-openapi's validator order (type, the
    junctors allOf/anyOf/oneOf/not, string, format, enum, array, number,
    object). Like kube-openapi, a check applies to a value of its own JSON
    kind whatever the schema's type, and a failed check does not stop the
    others: a string where an integer is declared is one type error, and
    an enum that the value also misses adds its own. Messages carry the
    value's path the way kube-openapi names it: properties joined by ".",
    array elements as "[i]".
*/
#include "sim_schema.h"
#include "bas_util.h"

#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bas_log.h"
#include "sim_buf.h"

typedef struct {
    char *pattern; // the schema's pattern text
    regex_t re;    // compiled, when ok
    bool ok;       // it compiled
} s_pattern_t;

struct _sim_schema_t {
    s_pattern_t *patterns; // compiled patterns, in first-use order
    size_t npatterns;      // how many
};

sim_schema_t *
sim_schema_new (void)
{
    return calloc (1, sizeof (sim_schema_t));
}

void
sim_schema_destroy (sim_schema_t **self_p)
{
    sim_schema_t *self = *self_p;
    if (!self)
        return;
    *self_p = NULL;
    for (size_t i = 0; i < self->npatterns; i++) {
        if (self->patterns[i].ok)
            regfree (&self->patterns[i].re);
        free (self->patterns[i].pattern);
    }
    free (self->patterns);
    free (self);
}

static const cJSON *
s_get (const cJSON *schema, const char *name)
{
    return cJSON_IsObject (schema) ? cJSON_GetObjectItemCaseSensitive (schema, name) : NULL;
}

static bool
s_flag (const cJSON *schema, const char *name)
{
    return cJSON_IsTrue (s_get (schema, name));
}

// ---------------------------------------------------------------------------
// Prune and default

//  The schema of member `name` of an object described by `schema`: its
//  property, else the additionalProperties schema, else NULL. *keep is set
//  when an undeclared member stays (additionalProperties: true, or
//  x-kubernetes-preserve-unknown-fields).
static const cJSON *
s_member_schema (const cJSON *schema, const char *name, bool *keep)
{
    const cJSON *props = s_get (schema, "properties");
    const cJSON *p = cJSON_IsObject (props) ? cJSON_GetObjectItemCaseSensitive (props, name) : NULL;
    *keep = false;
    if (p)
        return p;
    const cJSON *addl = s_get (schema, "additionalProperties");
    if (cJSON_IsObject (addl))
        return addl;
    *keep = cJSON_IsTrue (addl) || s_flag (schema, "x-kubernetes-preserve-unknown-fields");
    return NULL;
}

void
sim_schema_prune (const cJSON *schema, cJSON *value, bool resource)
{
    if (!cJSON_IsObject (schema))
        return;
    if (cJSON_IsArray (value)) {
        cJSON *item;
        cJSON_ArrayForEach (item, value)
        {
            sim_schema_prune (s_get (schema, "items"), item, false);
        }
        return;
    }
    if (!cJSON_IsObject (value))
        return;
    for (cJSON *m = value->child; m;) {
        cJSON *next = m->next;
        if (resource && m->string &&
            (!strcmp (m->string, "apiVersion") || !strcmp (m->string, "kind") ||
             !strcmp (m->string, "metadata"))) {
            m = next;
            continue;
        }
        bool keep = false;
        const cJSON *sub = m->string ? s_member_schema (schema, m->string, &keep) : NULL;
        bool drop = !sub && !keep;
        //  A null the schema does not allow goes, unless a default will
        //  replace it.
        if (sub && cJSON_IsNull (m) && !s_flag (sub, "nullable") && !s_get (sub, "default"))
            drop = true;
        if (drop)
            cJSON_Delete (cJSON_DetachItemViaPointer (value, m));
        else if (sub)
            sim_schema_prune (sub, m, false);
        m = next;
    }
}

void
sim_schema_default (const cJSON *schema, cJSON *value)
{
    if (!cJSON_IsObject (schema))
        return;
    if (cJSON_IsArray (value)) {
        cJSON *item;
        cJSON_ArrayForEach (item, value)
        {
            sim_schema_default (s_get (schema, "items"), item);
        }
        return;
    }
    if (!cJSON_IsObject (value))
        return;
    const cJSON *props = s_get (schema, "properties");
    const cJSON *p;
    cJSON_ArrayForEach (p, props)
    {
        cJSON *member = cJSON_GetObjectItemCaseSensitive (value, p->string);
        const cJSON *dflt = s_get (p, "default");
        if (dflt && (!member || (cJSON_IsNull (member) && !s_flag (p, "nullable")))) {
            cJSON *copy = cJSON_Duplicate (dflt, true);
            if (member)
                cJSON_ReplaceItemViaPointer (value, member, copy);
            else
                cJSON_AddItemToObject (value, p->string, copy);
            member = copy;
        }
        if (member)
            sim_schema_default (p, member);
    }
    const cJSON *addl = s_get (schema, "additionalProperties");
    if (cJSON_IsObject (addl)) {
        cJSON *m;
        cJSON_ArrayForEach (m, value)
        {
            if (!m->string ||
                !(cJSON_IsObject (props) && cJSON_GetObjectItemCaseSensitive (props, m->string)))
                sim_schema_default (addl, m);
        }
    }
}

// ---------------------------------------------------------------------------
// Validation

//  The JSON type of a value as kube-openapi names it when decoded from
//  JSON: whole numbers within float64's exact range are integers.
static const char *
s_type_of (const cJSON *v)
{
    if (cJSON_IsString (v))
        return "string";
    if (cJSON_IsBool (v))
        return "boolean";
    if (cJSON_IsNumber (v)) {
        double d = v->valuedouble;
        return d == floor (d) && fabs (d) <= 9007199254740992.0 ? "integer" : "number";
    }
    if (cJSON_IsArray (v))
        return "array";
    if (cJSON_IsObject (v))
        return "object";
    return "null";
}

//  "path.name" (or "name" at the root), into buf.
static const char *
s_child (const char *path, const char *name, char *buf, size_t len)
{
    if (path && *path)
        snprintf (buf, len, "%s.%s", path, name);
    else
        snprintf (buf, len, "%s", name);
    return buf;
}

//  Add an error whose detail is printf-formatted.
static void s_fail (sim_field_errors_t *errs, sim_field_type_t type, const char *path,
                    const cJSON *value, const char *fmt, ...)
    __attribute__ ((format (printf, 5, 6)));

static void
s_fail (sim_field_errors_t *errs, sim_field_type_t type, const char *path, const cJSON *value,
        const char *fmt, ...)
{
    char detail[2048];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (detail, sizeof detail, fmt, ap);
    va_end (ap);
    sim_field_errors_add (errs, type, path, value, detail);
}

//  A bound (minimum, multipleOf, …) as Go's %v prints a float64.
static const char *
s_num_text (double v, char *buf, size_t len)
{
    cJSON *n = cJSON_CreateNumber (v);
    sim_buf_t b = {0};
    sim_field_value_text (n, &b);
    snprintf (buf, len, "%s", b.data ? b.data : "");
    sim_buf_clear (&b);
    cJSON_Delete (n);
    return buf;
}

//  The type check. Returns true when the value's type is allowed.
static bool
s_check_type (const cJSON *schema, const cJSON *value, const char *path, sim_field_errors_t *errs)
{
    const char *have = s_type_of (value);
    const char *want[2] = {NULL, NULL};
    int nwant = 0;
    if (s_flag (schema, "x-kubernetes-int-or-string")) {
        want[nwant++] = "integer";
        want[nwant++] = "string";
    } else {
        const cJSON *t = s_get (schema, "type");
        if (cJSON_IsString (t) && *t->valuestring)
            want[nwant++] = t->valuestring;
    }
    if (nwant == 0)
        return true;
    if (!strcmp (have, "null") && s_flag (schema, "nullable"))
        return true;
    for (int i = 0; i < nwant; i++) {
        if (!strcmp (want[i], have))
            return true;
        //  An integer is a number too.
        if (!strcmp (want[i], "number") && !strcmp (have, "integer"))
            return true;
    }
    char types[64];
    snprintf (types, sizeof types, "%s%s%s", want[0], nwant > 1 ? "," : "",
              nwant > 1 ? want[1] : "");
    cJSON *name = cJSON_CreateString (have);
    s_fail (errs, SIM_FIELD_TYPE_INVALID, path, name, "%s in body must be of type %s: \"%s\"", path,
            types, have);
    cJSON_Delete (name);
    return false;
}

//  Does the value pass the schema? (Errors are collected and dropped.)
static bool
s_passes (sim_schema_t *self, const cJSON *schema, const cJSON *value, const char *path,
          sim_field_errors_t **errs_p)
{
    sim_field_errors_t *errs = sim_field_errors_new ();
    sim_schema_validate (self, schema, value, path, errs);
    bool ok = sim_field_errors_count (errs) == 0;
    if (errs_p && !ok)
        *errs_p = errs;
    else
        sim_field_errors_destroy (&errs);
    return ok;
}

static void
s_check_junctors (sim_schema_t *self, const cJSON *schema, const cJSON *value, const char *path,
                  sim_field_errors_t *errs)
{
    const cJSON *sub;
    cJSON_ArrayForEach (sub, s_get (schema, "allOf"))
    {
        sim_schema_validate (self, sub, value, path, errs);
    }
    const cJSON *any = s_get (schema, "anyOf");
    if (cJSON_IsArray (any) && any->child) {
        bool ok = false;
        sim_field_errors_t *first = NULL;
        cJSON_ArrayForEach (sub, any)
        {
            sim_field_errors_t *e = NULL;
            if (s_passes (self, sub, value, path, &e)) {
                ok = true;
                break;
            }
            if (!first)
                first = e;
            else
                sim_field_errors_destroy (&e);
        }
        if (!ok) {
            //  kube-openapi's composite error names no field: the path is
            //  in its text only.
            char detail[600];
            snprintf (detail, sizeof detail, "\"%s\" must validate at least one schema (anyOf)",
                      path);
            sim_field_errors_add_str (errs, SIM_FIELD_INVALID, "", "", detail);
            if (first)
                sim_field_errors_extend (errs, first);
        }
        sim_field_errors_destroy (&first);
    }
    const cJSON *one = s_get (schema, "oneOf");
    if (cJSON_IsArray (one) && one->child) {
        int passed = 0;
        cJSON_ArrayForEach (sub, one)
        {
            passed += s_passes (self, sub, value, path, NULL);
        }
        if (passed != 1) {
            char detail[600];
            snprintf (detail, sizeof detail, "\"%s\" must validate one and only one schema (oneOf)",
                      path);
            sim_field_errors_add_str (errs, SIM_FIELD_INVALID, "", "", detail);
        }
    }
    const cJSON *not = s_get (schema, "not");
    if (cJSON_IsObject (not ) && s_passes (self, not, value, path, NULL)) {
        char detail[600];
        snprintf (detail, sizeof detail, "\"%s\" must not validate the schema (not)", path);
        sim_field_errors_add_str (errs, SIM_FIELD_INVALID, "", "", detail);
    }
}

//  The compiled form of a pattern, or NULL when it does not compile.
static const regex_t *
s_regex (sim_schema_t *self, const char *pattern)
{
    for (size_t i = 0; i < self->npatterns; i++)
        if (!strcmp (self->patterns[i].pattern, pattern))
            return self->patterns[i].ok ? &self->patterns[i].re : NULL;
    s_pattern_t *grown = bas_realloc (self->patterns, (self->npatterns + 1) * sizeof *grown);
    char *copy = bas_strdup (pattern);
    self->patterns = grown;
    s_pattern_t *p = &self->patterns[self->npatterns++];
    p->pattern = copy;
    p->ok = regcomp (&p->re, pattern, REG_EXTENDED | REG_NOSUB) == 0;
    if (!p->ok)
        bas_warn ("schema_pattern_unsupported", "pattern=\"%s\" action=not_checked", pattern);
    return p->ok ? &p->re : NULL;
}

//  RFC 3339 date-time (as strfmt's DateTime parses it) or full-date.
static bool
s_valid_format (const char *format, const char *text)
{
    struct tm tm;
    memset (&tm, 0, sizeof tm);
    if (!strcmp (format, "date")) {
        const char *end = strptime (text, "%Y-%m-%d", &tm);
        return end && !*end;
    }
    if (!strcmp (format, "date-time")) {
        const char *end = strptime (text, "%Y-%m-%dT%H:%M:%S", &tm);
        if (!end)
            return false;
        if (*end == '.') {
            end++;
            if (*end < '0' || *end > '9')
                return false;
            while (*end >= '0' && *end <= '9')
                end++;
        }
        if (*end == 'Z' || *end == 'z')
            return end[1] == 0;
        if ((*end == '+' || *end == '-') && strlen (end) == 6 && end[3] == ':')
            return true;
        return false;
    }
    return true; // formats the server does not check for strings
}

static void
s_check_string (sim_schema_t *self, const cJSON *schema, const cJSON *value, const char *path,
                sim_field_errors_t *errs)
{
    const char *s = value->valuestring;
    size_t len = strlen (s);
    const cJSON *max = s_get (schema, "maxLength");
    const cJSON *min = s_get (schema, "minLength");
    const cJSON *pattern = s_get (schema, "pattern");
    if (cJSON_IsNumber (max) && (double)len > max->valuedouble)
        s_fail (errs, SIM_FIELD_TOO_LONG, path, NULL, "may not be more than %lld bytes",
                (long long)max->valuedouble);
    if (cJSON_IsNumber (min) && (double)len < min->valuedouble)
        s_fail (errs, SIM_FIELD_INVALID, path, value,
                "%s in body should be at least %lld chars long", path, (long long)min->valuedouble);
    if (cJSON_IsString (pattern)) {
        const regex_t *re = s_regex (self, pattern->valuestring);
        if (re && regexec (re, s, 0, NULL, 0) != 0)
            s_fail (errs, SIM_FIELD_INVALID, path, value, "%s in body should match '%s'", path,
                    pattern->valuestring);
    }
    const cJSON *format = s_get (schema, "format");
    if (cJSON_IsString (format) && !s_valid_format (format->valuestring, s)) {
        sim_buf_t quoted = {0};
        sim_field_quote (s, &quoted);
        s_fail (errs, SIM_FIELD_TYPE_INVALID, path, value, "%s in body must be of type %s: %s",
                path, format->valuestring, quoted.data);
        sim_buf_clear (&quoted);
    }
}

static void
s_check_enum (const cJSON *schema, const cJSON *value, const char *path, sim_field_errors_t *errs)
{
    const cJSON *values = s_get (schema, "enum");
    if (!cJSON_IsArray (values) || !values->child)
        return;
    const cJSON *v;
    cJSON_ArrayForEach (v, values)
    {
        if (cJSON_Compare (v, value, true))
            return;
    }
    //  field.NotSupported quotes every allowed value's text.
    sim_buf_t detail = {0};
    sim_buf_puts (&detail, "supported values: ");
    bool first = true;
    cJSON_ArrayForEach (v, values)
    {
        if (!first)
            sim_buf_puts (&detail, ", ");
        first = false;
        if (cJSON_IsString (v))
            sim_field_quote (v->valuestring, &detail);
        else {
            char *text = cJSON_PrintUnformatted (v);
            sim_field_quote (text ? text : "", &detail);
            free (text);
        }
    }
    sim_field_errors_add (errs, SIM_FIELD_NOT_SUPPORTED, path, value, detail.data);
    sim_buf_clear (&detail);
}

static void
s_check_number (const cJSON *schema, const cJSON *value, const char *path, sim_field_errors_t *errs)
{
    double v = value->valuedouble;
    char bound[64];
    const cJSON *mult = s_get (schema, "multipleOf");
    if (cJSON_IsNumber (mult) && mult->valuedouble > 0) {
        double q = v / mult->valuedouble;
        if (q != floor (q))
            s_fail (errs, SIM_FIELD_INVALID, path, value, "%s in body should be a multiple of %s",
                    path, s_num_text (mult->valuedouble, bound, sizeof bound));
    }
    const cJSON *max = s_get (schema, "maximum");
    if (cJSON_IsNumber (max)) {
        bool excl = s_flag (schema, "exclusiveMaximum");
        if (excl ? v >= max->valuedouble : v > max->valuedouble)
            s_fail (errs, SIM_FIELD_INVALID, path, value, "%s in body should be less than %s%s",
                    path, excl ? "" : "or equal to ",
                    s_num_text (max->valuedouble, bound, sizeof bound));
    }
    const cJSON *min = s_get (schema, "minimum");
    if (cJSON_IsNumber (min)) {
        bool excl = s_flag (schema, "exclusiveMinimum");
        if (excl ? v <= min->valuedouble : v < min->valuedouble)
            s_fail (errs, SIM_FIELD_INVALID, path, value, "%s in body should be greater than %s%s",
                    path, excl ? "" : "or equal to ",
                    s_num_text (min->valuedouble, bound, sizeof bound));
    }
}

static void
s_check_array (sim_schema_t *self, const cJSON *schema, const cJSON *value, const char *path,
               sim_field_errors_t *errs)
{
    int n = cJSON_GetArraySize (value);
    const cJSON *max = s_get (schema, "maxItems");
    const cJSON *min = s_get (schema, "minItems");
    if (cJSON_IsNumber (max) && n > max->valuedouble) {
        cJSON *count = cJSON_CreateNumber (n);
        s_fail (errs, SIM_FIELD_INVALID, path, count, "%s in body should have at most %lld items",
                path, (long long)max->valuedouble);
        cJSON_Delete (count);
    }
    if (cJSON_IsNumber (min) && n < min->valuedouble) {
        cJSON *count = cJSON_CreateNumber (n);
        s_fail (errs, SIM_FIELD_INVALID, path, count, "%s in body should have at least %lld items",
                path, (long long)min->valuedouble);
        cJSON_Delete (count);
    }
    const cJSON *items = s_get (schema, "items");
    if (!cJSON_IsObject (items))
        return;
    int i = 0;
    const cJSON *item;
    cJSON_ArrayForEach (item, value)
    {
        char sub[1024];
        snprintf (sub, sizeof sub, "%s[%d]", path, i++);
        sim_schema_validate (self, items, item, sub, errs);
    }
}

static void
s_check_object (sim_schema_t *self, const cJSON *schema, const cJSON *value, const char *path,
                sim_field_errors_t *errs)
{
    char sub[1024];
    const cJSON *req;
    cJSON_ArrayForEach (req, s_get (schema, "required"))
    {
        if (cJSON_IsString (req) && !cJSON_GetObjectItemCaseSensitive (value, req->valuestring))
            sim_field_errors_add (errs, SIM_FIELD_REQUIRED,
                                  s_child (path, req->valuestring, sub, sizeof sub), NULL, NULL);
    }
    const cJSON *m;
    cJSON_ArrayForEach (m, value)
    {
        bool keep = false;
        const cJSON *member = m->string ? s_member_schema (schema, m->string, &keep) : NULL;
        if (member)
            sim_schema_validate (self, member, m, s_child (path, m->string, sub, sizeof sub), errs);
    }
}

void
sim_schema_validate (sim_schema_t *self, const cJSON *schema, const cJSON *value, const char *path,
                     sim_field_errors_t *errs)
{
    if (!cJSON_IsObject (schema) || !value)
        return;
    if (cJSON_IsNull (value) && s_flag (schema, "nullable"))
        return;
    s_check_type (schema, value, path, errs);
    s_check_junctors (self, schema, value, path, errs);
    if (cJSON_IsString (value))
        s_check_string (self, schema, value, path, errs);
    s_check_enum (schema, value, path, errs);
    if (cJSON_IsArray (value))
        s_check_array (self, schema, value, path, errs);
    if (cJSON_IsNumber (value))
        s_check_number (schema, value, path, errs);
    if (cJSON_IsObject (value))
        s_check_object (self, schema, value, path, errs);
}
