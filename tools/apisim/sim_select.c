/*  sim_select: see sim_select.h.

    Design note: one representation for both kinds of selector, a list of
    requirements {key, operator, values}. A label requirement looks the key
    up in metadata.labels; a field requirement walks the dotted path in the
    object. Parsing is a hand-written scanner over the comma-separated terms
    (commas inside `in (…)` do not split).
*/
#include "sim_select.h"
#include "bas_util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_obj.h"

//  A field a selector may name for a kind, and where its value is: the
//  dotted path in the object, or, when that is empty, a second one.
typedef struct {
    const char *field;    // the selector's name for it
    const char *path;     // dotted path of the value (NULL: same as field)
    const char *fallback; // path read when path gives "", or NULL
} s_field_t;

typedef enum { S_OP_EQ, S_OP_NEQ, S_OP_EXISTS, S_OP_NOT_EXISTS, S_OP_IN, S_OP_NOTIN } s_op_t;

typedef struct {
    char *key;              // label key or field name
    const s_field_t *field; // a field selector's field (static row), else NULL
    s_op_t op;              // operator
    char **values;          // operands (one for EQ/NEQ)
    size_t nvalues;         // how many
} s_req_t;

struct _sim_selector_t {
    bool fields;   // field selector (key is a path) rather than labels
    s_req_t *reqs; // requirements, all must hold
    size_t nreqs;  // how many
};

static const s_field_t s_common_fields[] = {
    {"metadata.name", NULL, NULL}, {"metadata.namespace", NULL, NULL}, {NULL, NULL, NULL}};
static const s_field_t s_pod_fields[] = {{"spec.nodeName", NULL, NULL},
                                         {"spec.restartPolicy", NULL, NULL},
                                         {"spec.schedulerName", NULL, NULL},
                                         {"spec.serviceAccountName", NULL, NULL},
                                         {"spec.hostNetwork", NULL, NULL},
                                         {"status.phase", NULL, NULL},
                                         {"status.podIP", NULL, NULL},
                                         {"status.nominatedNodeName", NULL, NULL},
                                         {NULL, NULL, NULL}};
static const s_field_t s_node_fields[] = {{"spec.unschedulable", NULL, NULL}, {NULL, NULL, NULL}};
static const s_field_t s_namespace_fields[] = {{"status.phase", NULL, NULL}, {NULL, NULL, NULL}};
//  The event registry's selectable fields (kubectl describe finds a
//  pod's events with involvedObject.name/namespace/uid/kind); "source" is
//  the source component, or the reporting controller when there is none.
static const s_field_t s_event_fields[] = {{"involvedObject.kind", NULL, NULL},
                                           {"involvedObject.namespace", NULL, NULL},
                                           {"involvedObject.name", NULL, NULL},
                                           {"involvedObject.uid", NULL, NULL},
                                           {"involvedObject.apiVersion", NULL, NULL},
                                           {"involvedObject.resourceVersion", NULL, NULL},
                                           {"involvedObject.fieldPath", NULL, NULL},
                                           {"reason", NULL, NULL},
                                           {"reportingComponent", NULL, NULL},
                                           {"source", "source.component", "reportingComponent"},
                                           {"type", NULL, NULL},
                                           {NULL, NULL, NULL}};

static const s_field_t *
s_in (const s_field_t *list, const char *word)
{
    for (; list->field; list++)
        if (strcmp (list->field, word) == 0)
            return list;
    return NULL;
}

//  The field's row for the kind, or NULL when the server does not support
//  selecting on it.
static const s_field_t *
s_field_supported (const sim_kind_t *kind, const char *field)
{
    const s_field_t *f = s_in (s_common_fields, field);
    if (f)
        return f;
    switch (kind->id) {
    case SIM_KIND_PODS:
        return s_in (s_pod_fields, field);
    case SIM_KIND_NODES:
        return s_in (s_node_fields, field);
    case SIM_KIND_NAMESPACES:
        return s_in (s_namespace_fields, field);
    case SIM_KIND_EVENTS:
        return s_in (s_event_fields, field);
    default:
        return NULL;
    }
}

void
sim_selector_destroy (sim_selector_t **self_p)
{
    sim_selector_t *self = *self_p;
    if (!self)
        return;
    *self_p = NULL;
    for (size_t i = 0; i < self->nreqs; i++) {
        free (self->reqs[i].key);
        for (size_t j = 0; j < self->reqs[i].nvalues; j++)
            free (self->reqs[i].values[j]);
        free (self->reqs[i].values);
    }
    free (self->reqs);
    free (self);
}

static char *
s_trimmed (const char *start, const char *end)
{
    while (start < end && isspace ((unsigned char)*start))
        start++;
    while (end > start && isspace ((unsigned char)end[-1]))
        end--;
    size_t n = (size_t)(end - start);
    char *out = bas_malloc (n + 1);
    memcpy (out, start, n);
    out[n] = 0;
    return out;
}

static void
s_add_value (s_req_t *req, char *value)
{
    char **grown = bas_realloc (req->values, (req->nvalues + 1) * sizeof *grown);
    req->values = grown;
    req->values[req->nvalues++] = value;
}

//  Label keys and values: [A-Za-z0-9._/-] (a loose check of the real rules,
//  enough to refuse garbage such as spaces inside a key).
static bool
s_valid_token (const char *text, bool allow_empty)
{
    if (!*text)
        return allow_empty;
    for (const char *p = text; *p; p++)
        if (!isalnum ((unsigned char)*p) && !strchr ("._-/", *p))
            return false;
    return true;
}

//  Parse one term [start, end) into req. Returns 0 or -1 with err.
static int
s_parse_term (sim_selector_t *self, const char *start, const char *end, s_req_t *req, char *err,
              size_t errlen)
{
    char *term = s_trimmed (start, end);
    int rc = -1;
    char *op;
    if (!*term) {
        snprintf (err, errlen, "unable to parse requirement: empty requirement");
        goto done;
    }
    if ((op = strstr (term, "!=")) || (op = strstr (term, "==")) || (op = strchr (term, '='))) {
        size_t oplen = (op[0] == '=' && op[1] != '=') ? 1 : 2;
        req->op = op[0] == '!' ? S_OP_NEQ : S_OP_EQ;
        req->key = s_trimmed (term, op);
        s_add_value (req, s_trimmed (op + oplen, term + strlen (term)));
    } else if (!self->fields && (op = strstr (term, " notin "))) {
        req->op = S_OP_NOTIN;
        req->key = s_trimmed (term, op);
        op += 7;
    } else if (!self->fields && (op = strstr (term, " in "))) {
        req->op = S_OP_IN;
        req->key = s_trimmed (term, op);
        op += 4;
    } else if (!self->fields && term[0] == '!') {
        req->op = S_OP_NOT_EXISTS;
        req->key = s_trimmed (term + 1, term + strlen (term));
    } else if (!self->fields) {
        req->op = S_OP_EXISTS;
        req->key = s_trimmed (term, term + strlen (term));
    } else {
        snprintf (err, errlen, "invalid selector: '%s'; can't understand '%s'", term, term);
        goto done;
    }
    if (req->op == S_OP_IN || req->op == S_OP_NOTIN) {
        while (*op == ' ')
            op++;
        char *close = strrchr (op, ')');
        if (*op != '(' || !close || close[1] != 0) {
            snprintf (err, errlen, "unable to parse requirement: found '%s', expected: '('", op);
            goto done;
        }
        const char *p = op + 1;
        while (p <= close) {
            const char *comma = memchr (p, ',', (size_t)(close - p));
            const char *stop = comma ? comma : close;
            s_add_value (req, s_trimmed (p, stop));
            p = stop + 1;
        }
    }
    if (!req->key || !*req->key || (!self->fields && !s_valid_token (req->key, false))) {
        snprintf (err, errlen, "unable to parse requirement: invalid label key \"%s\"",
                  req->key ? req->key : "");
        goto done;
    }
    for (size_t i = 0; !self->fields && i < req->nvalues; i++)
        if (!s_valid_token (req->values[i], true)) {
            snprintf (err, errlen, "unable to parse requirement: invalid label value: \"%s\"",
                      req->values[i]);
            goto done;
        }
    rc = 0;
done:
    free (term);
    return rc;
}

static sim_selector_t *
s_parse (const char *text, bool fields, const sim_kind_t *kind, char *err, size_t errlen)
{
    sim_selector_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->fields = fields;
    if (!text)
        return self;
    const char *p = text;
    while (*p == ' ')
        p++;
    if (!*p)
        return self;
    const char *start = text;
    int depth = 0;
    for (p = text;; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')')
            depth--;
        if (*p == 0 || (*p == ',' && depth == 0)) {
            s_req_t *grown = realloc (self->reqs, (self->nreqs + 1) * sizeof *grown);
            if (!grown) {
                sim_selector_destroy (&self);
                return NULL;
            }
            self->reqs = grown;
            s_req_t *req = &self->reqs[self->nreqs++];
            memset (req, 0, sizeof *req);
            if (s_parse_term (self, start, p, req, err, errlen) != 0) {
                sim_selector_destroy (&self);
                return NULL;
            }
            if (fields && !(req->field = s_field_supported (kind, req->key))) {
                snprintf (err, errlen, "field label not supported: %s", req->key);
                sim_selector_destroy (&self);
                return NULL;
            }
            if (*p == 0)
                break;
            start = p + 1;
        }
    }
    return self;
}

sim_selector_t *
sim_selector_parse_labels (const char *text, char *err, size_t errlen)
{
    return s_parse (text, false, NULL, err, errlen);
}

sim_selector_t *
sim_selector_parse_fields (const char *text, const sim_kind_t *kind, char *err, size_t errlen)
{
    return s_parse (text, true, kind, err, errlen);
}

bool
sim_selector_empty (const sim_selector_t *self)
{
    return !self || self->nreqs == 0;
}

//  The value of a field as the server compares it: strings as is, booleans
//  as "true"/"false", numbers in decimal, missing as "".
static const char *
s_field_value (const cJSON *obj, const char *path, char *buf, size_t len)
{
    const cJSON *node = sim_json_at (obj, path);
    if (cJSON_IsString (node))
        return node->valuestring;
    if (cJSON_IsBool (node))
        return cJSON_IsTrue (node) ? "true" : "false";
    if (cJSON_IsNumber (node)) {
        snprintf (buf, len, "%.17g", node->valuedouble);
        return buf;
    }
    return "";
}

bool
sim_selector_match (const sim_selector_t *self, const cJSON *obj)
{
    if (!self)
        return true;
    const cJSON *labels = sim_json_at (obj, "metadata.labels");
    for (size_t i = 0; i < self->nreqs; i++) {
        const s_req_t *req = &self->reqs[i];
        const char *value;
        char buf[64];
        bool present = true;
        if (self->fields) {
            const s_field_t *f = req->field;
            value = s_field_value (obj, f && f->path ? f->path : req->key, buf, sizeof buf);
            if (!*value && f && f->fallback)
                value = s_field_value (obj, f->fallback, buf, sizeof buf);
        } else {
            const cJSON *label = cJSON_IsObject (labels)
                                     ? cJSON_GetObjectItemCaseSensitive (labels, req->key)
                                     : NULL;
            present = cJSON_IsString (label);
            value = present ? label->valuestring : "";
        }
        bool found = false;
        for (size_t j = 0; j < req->nvalues; j++)
            if (strcmp (req->values[j], value) == 0)
                found = true;
        bool ok;
        switch (req->op) {
        case S_OP_EQ:
            ok = present && found;
            break;
        case S_OP_NEQ:
            ok = !present || !found;
            break;
        case S_OP_EXISTS:
            ok = present;
            break;
        case S_OP_NOT_EXISTS:
            ok = !present;
            break;
        case S_OP_IN:
            ok = present && found;
            break;
        case S_OP_NOTIN:
        default:
            ok = !present || !found;
            break;
        }
        if (!ok)
            return false;
    }
    return true;
}
