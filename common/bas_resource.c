/*  bas_resource: resource vectors and arithmetic that never aborts.

    Design note: a bas_res_t is a plain value (no heap), so it can be copied,
    compared and kept in arrays of 150,000 pods without any ownership to
    track. Scalars are kept canonical: sorted by name, and a scalar whose
    value is zero is not stored at all, because an absent dimension and a
    zero one mean the same thing. That keeps the few slots free for
    resources that matter and makes equality a field-by-field question.

    Every operation is total. Arithmetic saturates at INT64_MIN/INT64_MAX
    and says so (BAS_RES_EOVERFLOW); a negative result is a result, reported
    as BAS_RES_NEGATIVE so that the caller (the cache) can mark a node out of
    sync instead of dying (DESIGN problem 4).
*/
#include "bas_resource.h"
#include "bas_util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bas_quantity.h"

//  Saturating a + b; sets *ovf when the true sum does not fit.
static int64_t
s_add (int64_t a, int64_t b, bool *ovf)
{
    if (b > 0 && a > INT64_MAX - b) {
        *ovf = true;
        return INT64_MAX;
    }
    if (b < 0 && a < INT64_MIN - b) {
        *ovf = true;
        return INT64_MIN;
    }
    return a + b;
}

//  Saturating a - b.
static int64_t
s_sub (int64_t a, int64_t b, bool *ovf)
{
    if (b < 0 && a > INT64_MAX + b) {
        *ovf = true;
        return INT64_MAX;
    }
    if (b > 0 && a < INT64_MIN + b) {
        *ovf = true;
        return INT64_MIN;
    }
    return a - b;
}

//  Number of scalar slots in use, trusted only up to the array size.
static int
s_nscalars (const bas_res_t *r)
{
    if (r->nscalars < 0)
        return 0;
    return r->nscalars > BAS_RES_MAX_SCALARS ? BAS_RES_MAX_SCALARS : r->nscalars;
}

//  Index of scalar `name` in r, or -1.
static int
s_find (const bas_res_t *r, const char *name)
{
    int n = s_nscalars (r);
    for (int i = 0; i < n; i++)
        if (strcmp (r->scalars[i].name, name) == 0)
            return i;
    return -1;
}

void
bas_res_zero (bas_res_t *r)
{
    memset (r, 0, sizeof *r);
}

int64_t
bas_res_scalar_get (const bas_res_t *r, const char *name)
{
    if (!name)
        return 0;
    int i = s_find (r, name);
    return i < 0 ? 0 : r->scalars[i].value;
}

int
bas_res_scalar_set (bas_res_t *r, const char *name, int64_t value)
{
    if (!name || *name == '\0')
        return BAS_RES_ENAME;
    size_t len = strlen (name);
    if (len >= BAS_RES_NAME_MAX)
        return BAS_RES_ENAME;
    int n = s_nscalars (r);
    //  Sorted position: the first entry whose name is >= name.
    int pos = 0;
    while (pos < n && strcmp (r->scalars[pos].name, name) < 0)
        pos++;
    bool present = pos < n && strcmp (r->scalars[pos].name, name) == 0;
    if (present) {
        if (value != 0)
            r->scalars[pos].value = value;
        else {
            memmove (&r->scalars[pos], &r->scalars[pos + 1],
                     (size_t)(n - pos - 1) * sizeof r->scalars[0]);
            r->nscalars = n - 1;
        }
        return BAS_RES_OK;
    }
    if (value == 0)
        return BAS_RES_OK;
    if (n >= BAS_RES_MAX_SCALARS)
        return BAS_RES_ETOOMANY;
    memmove (&r->scalars[pos + 1], &r->scalars[pos], (size_t)(n - pos) * sizeof r->scalars[0]);
    memcpy (r->scalars[pos].name, name, len + 1);
    r->scalars[pos].value = value;
    r->nscalars = n + 1;
    return BAS_RES_OK;
}

//  r += a (sign 1) or r -= a (sign -1), the body of add and sub.
static int
s_combine (bas_res_t *r, const bas_res_t *a, int sign)
{
    bas_res_t copy;
    if (r == a) {
        copy = *a;
        a = &copy;
    }
    bool ovf = false;
    int rc = BAS_RES_OK;
    if (sign > 0) {
        r->milli_cpu = s_add (r->milli_cpu, a->milli_cpu, &ovf);
        r->memory = s_add (r->memory, a->memory, &ovf);
        r->pods = s_add (r->pods, a->pods, &ovf);
    } else {
        r->milli_cpu = s_sub (r->milli_cpu, a->milli_cpu, &ovf);
        r->memory = s_sub (r->memory, a->memory, &ovf);
        r->pods = s_sub (r->pods, a->pods, &ovf);
    }
    int n = s_nscalars (a);
    for (int i = 0; i < n; i++) {
        const bas_scalar_t *s = &a->scalars[i];
        int64_t cur = bas_res_scalar_get (r, s->name);
        int64_t v = sign > 0 ? s_add (cur, s->value, &ovf) : s_sub (cur, s->value, &ovf);
        int src = bas_res_scalar_set (r, s->name, v);
        if (src != BAS_RES_OK && rc == BAS_RES_OK)
            rc = src;
    }
    if (rc != BAS_RES_OK)
        return rc;
    if (ovf)
        return BAS_RES_EOVERFLOW;
    return bas_res_is_negative (r, NULL) ? BAS_RES_NEGATIVE : BAS_RES_OK;
}

int
bas_res_add (bas_res_t *r, const bas_res_t *a)
{
    return s_combine (r, a, 1);
}

int
bas_res_sub (bas_res_t *r, const bas_res_t *a)
{
    return s_combine (r, a, -1);
}

//  Collect the dimensions where req > avail into names (up to max); with
//  max == 0 it only answers whether there is one. Returns the count found
//  (which may exceed what was stored), stopping early when stop_at_first.
static int
s_short (const bas_res_t *req, const bas_res_t *avail, const char **names, int max,
         bool stop_at_first)
{
    int found = 0;
#define S_SHORT(cond, name)                                                                        \
    do {                                                                                           \
        if (cond) {                                                                                \
            if (names && found < max)                                                              \
                names[found] = (name);                                                             \
            found++;                                                                               \
            if (stop_at_first)                                                                     \
                return found;                                                                      \
        }                                                                                          \
    } while (0)

    S_SHORT (req->milli_cpu > avail->milli_cpu, "cpu");
    S_SHORT (req->memory > avail->memory, "memory");
    S_SHORT (req->pods > 0 && req->pods > avail->pods, "pods");
    int n = s_nscalars (req);
    for (int i = 0; i < n; i++)
        S_SHORT (req->scalars[i].value > bas_res_scalar_get (avail, req->scalars[i].name),
                 req->scalars[i].name);
    //  A scalar only avail has is 0 in req: short only if avail is negative.
    n = s_nscalars (avail);
    for (int i = 0; i < n; i++)
        S_SHORT (avail->scalars[i].value < 0 && s_find (req, avail->scalars[i].name) < 0,
                 avail->scalars[i].name);
#undef S_SHORT
    return found;
}

bool
bas_res_fits (const bas_res_t *req, const bas_res_t *avail)
{
    return s_short (req, avail, NULL, 0, true) == 0;
}

int
bas_res_insufficient (const bas_res_t *req, const bas_res_t *avail, const char **names, int max)
{
    if (max < 0)
        max = 0;
    int found = s_short (req, avail, names, max, false);
    return found < max ? found : max;
}

bool
bas_res_is_negative (const bas_res_t *r, const char **which)
{
    const char *name = NULL;
    if (r->milli_cpu < 0)
        name = "cpu";
    else if (r->memory < 0)
        name = "memory";
    else if (r->pods < 0)
        name = "pods";
    else {
        int n = s_nscalars (r);
        for (int i = 0; i < n && !name; i++)
            if (r->scalars[i].value < 0)
                name = r->scalars[i].name;
    }
    if (which)
        *which = name;
    return name != NULL;
}

bool
bas_res_is_empty (const bas_res_t *r)
{
    if (r->milli_cpu != 0 || r->memory != 0)
        return false;
    int n = s_nscalars (r);
    for (int i = 0; i < n; i++)
        if (r->scalars[i].value != 0)
            return false;
    return true;
}

bool
bas_res_equal (const bas_res_t *a, const bas_res_t *b)
{
    if (a->milli_cpu != b->milli_cpu || a->memory != b->memory || a->pods != b->pods)
        return false;
    //  Compare over the union of names, so a stored zero equals an absence.
    int n = s_nscalars (a);
    for (int i = 0; i < n; i++)
        if (a->scalars[i].value != bas_res_scalar_get (b, a->scalars[i].name))
            return false;
    n = s_nscalars (b);
    for (int i = 0; i < n; i++)
        if (b->scalars[i].value != bas_res_scalar_get (a, b->scalars[i].name))
            return false;
    return true;
}

//  True for scalars counted in bytes, printed with a binary suffix.
static bool
s_is_bytes (const char *name)
{
    return strcmp (name, "ephemeral-storage") == 0 || strncmp (name, "hugepages-", 10) == 0;
}

int
bas_res_format (const bas_res_t *r, char *buf, size_t len)
{
    char cpu[32], mem[32];
    bas_quantity_format_milli (r->milli_cpu, cpu, sizeof cpu);
    bas_quantity_format_bytes (r->memory, mem, sizeof mem);
    size_t total = 0;
    int n = snprintf (buf, len, "cpu=%s memory=%s pods=%" PRId64, cpu, mem, r->pods);
    total += n > 0 ? (size_t)n : 0;
    int ns = s_nscalars (r);
    for (int i = 0; i < ns; i++) {
        char value[32];
        if (s_is_bytes (r->scalars[i].name))
            bas_quantity_format_bytes (r->scalars[i].value, value, sizeof value);
        else
            snprintf (value, sizeof value, "%" PRId64, r->scalars[i].value);
        n = snprintf (total < len ? buf + total : NULL, total < len ? len - total : 0, " %s=%s",
                      r->scalars[i].name, value);
        total += n > 0 ? (size_t)n : 0;
    }
    return (int)total;
}

int
bas_res_from_proto (bas_res_t *r, const Basalt__V1__Resources *p, char *err, size_t errlen)
{
    bas_res_zero (r);
    if (!p)
        return 0;
    r->milli_cpu = p->has_milli_cpu ? p->milli_cpu : 0;
    r->memory = p->has_memory ? p->memory : 0;
    r->pods = p->has_pods ? p->pods : 0;
    for (size_t i = 0; i < p->n_scalars; i++) {
        const Basalt__V1__Scalar *s = p->scalars[i];
        if (!s || !s->name || !*s->name) {
            bas_set_err (err, errlen, "resources: scalar %zu has no name", i);
            return -1;
        }
        char q[BAS_QUOTE_MAX * 4 + 8];
        bas_quote (s->name, q, sizeof q);
        if (s_find (r, s->name) >= 0) {
            bas_set_err (err, errlen, "resources: scalar \"%s\" appears twice", q);
            return -1;
        }
        int rc = bas_res_scalar_set (r, s->name, s->has_value ? s->value : 0);
        if (rc == BAS_RES_ENAME) {
            bas_set_err (err, errlen, "resources: scalar name \"%s\" is longer than %d bytes", q,
                         BAS_RES_NAME_MAX - 1);
            return -1;
        }
        if (rc == BAS_RES_ETOOMANY) {
            bas_set_err (err, errlen, "resources: too many scalars (at most %d): \"%s\"",
                         BAS_RES_MAX_SCALARS, q);
            return -1;
        }
    }
    return 0;
}

Basalt__V1__Resources *
bas_res_to_proto (const bas_res_t *r)
{
    Basalt__V1__Resources *p = malloc (sizeof *p);
    if (!p)
        return NULL;
    basalt__v1__resources__init (p);
    p->has_milli_cpu = 1;
    p->milli_cpu = r->milli_cpu;
    p->has_memory = 1;
    p->memory = r->memory;
    p->has_pods = 1;
    p->pods = r->pods;
    int n = s_nscalars (r);
    if (n == 0)
        return p;
    p->scalars = calloc ((size_t)n, sizeof *p->scalars);
    if (!p->scalars)
        goto error;
    for (int i = 0; i < n; i++) {
        if (r->scalars[i].value == 0)
            continue;
        Basalt__V1__Scalar *s = malloc (sizeof *s);
        if (!s)
            goto error;
        basalt__v1__scalar__init (s);
        p->scalars[p->n_scalars++] = s;
        s->name = strdup (r->scalars[i].name);
        if (!s->name)
            goto error;
        s->has_value = 1;
        s->value = r->scalars[i].value;
    }
    return p;
error:
    protobuf_c_message_free_unpacked (&p->base, NULL);
    return NULL;
}

//  Which field of bas_res_t a ResourceList entry goes to.
typedef enum { S_DIM_IGNORE, S_DIM_CPU, S_DIM_MEMORY, S_DIM_PODS, S_DIM_SCALAR } s_dim_t;

//  True when `s` (len bytes) is a DNS-1123 subdomain: at most 253
//  characters, dot-separated labels of lower-case letters, digits and '-'
//  that start and end with a letter or digit.
static bool
s_dns_subdomain (const char *s, size_t len)
{
    if (len == 0 || len > 253)
        return false;
    size_t label = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (c == '.') {
            if (label == 0 || s[i - 1] == '-')
                return false;
            label = 0;
        } else if (alnum || c == '-') {
            if (label == 0 && c == '-')
                return false;
            label++;
        } else
            return false;
    }
    return s[len - 1] != '-' && s[len - 1] != '.';
}

//  True when `s` is a qualified name's name part: 1 to 63 letters, digits,
//  '-', '_' or '.', starting and ending with a letter or digit.
static bool
s_qualified_part (const char *s, size_t len)
{
    if (len == 0 || len > 63)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && !((c == '-' || c == '_' || c == '.') && i > 0 && i + 1 < len))
            return false;
    }
    return true;
}

//  Kubernetes' IsQualifiedName: [prefix/]name, the prefix a DNS subdomain.
static bool
s_qualified_name (const char *s)
{
    const char *slash = strchr (s, '/');
    if (!slash)
        return s_qualified_part (s, strlen (s));
    if (strchr (slash + 1, '/'))
        return false;
    return s_dns_subdomain (s, (size_t)(slash - s)) &&
           s_qualified_part (slash + 1, strlen (slash + 1));
}

bas_res_name_kind_t
bas_res_name_kind (const char *name)
{
    if (!name || !*name)
        return BAS_RES_NAME_UNKNOWN;
    if (strcmp (name, "cpu") == 0 || strcmp (name, "memory") == 0 || strcmp (name, "pods") == 0 ||
        strcmp (name, "ephemeral-storage") == 0)
        return BAS_RES_NAME_NATIVE;
    //  Object-count quotas (count/pods, count/jobs.batch) count objects,
    //  not resources: Volcano skips them by their prefix.
    if (strncmp (name, "count/", 6) == 0)
        return BAS_RES_NAME_QUOTA;
    //  Kubernetes' IsScalarResourceName: hugepages, attachable volume
    //  limits, names under kubernetes.io/, and extended resources.
    if (strncmp (name, "hugepages-", 10) == 0 || strncmp (name, "attachable-volumes-", 19) == 0 ||
        strstr (name, "kubernetes.io/"))
        return BAS_RES_NAME_SCALAR;
    //  Extended: has a '/', is not under requests. (the quota form of an
    //  extended resource), and "requests." + name is a qualified name.
    //  So "limits.nvidia.com/gpu" passes, as it does in Volcano.
    if (strchr (name, '/')) {
        if (strncmp (name, "requests.", 9) == 0)
            return BAS_RES_NAME_QUOTA;
        char quota[BAS_RES_NAME_MAX + 16];
        int n = snprintf (quota, sizeof quota, "requests.%s", name);
        if (n > 0 && (size_t)n < sizeof quota && s_qualified_name (quota))
            return BAS_RES_NAME_SCALAR;
        return BAS_RES_NAME_UNKNOWN;
    }
    //  The quota forms of native resources: requests.cpu, limits.memory...
    if (strncmp (name, "requests.", 9) == 0 || strncmp (name, "limits.", 7) == 0)
        return BAS_RES_NAME_QUOTA;
    return BAS_RES_NAME_UNKNOWN;
}

//  Classify a resource name the way Volcano's NewResource does
//  (volcano-semantics.md §3.6): cpu, memory and pods have their fields;
//  ephemeral-storage and Kubernetes' scalar resource names are scalars;
//  quota forms (count/*, requests.*, limits.*) and anything else (e.g.
//  "storage") are not scheduled on and are dropped.
static s_dim_t
s_classify (const char *name)
{
    if (strcmp (name, "cpu") == 0)
        return S_DIM_CPU;
    if (strcmp (name, "memory") == 0)
        return S_DIM_MEMORY;
    if (strcmp (name, "pods") == 0)
        return S_DIM_PODS;
    if (strcmp (name, "ephemeral-storage") == 0)
        return S_DIM_SCALAR;
    return bas_res_name_kind (name) == BAS_RES_NAME_SCALAR ? S_DIM_SCALAR : S_DIM_IGNORE;
}

//  The text of a JSON number, the shortest that reads back to the same
//  double (what the writer most likely sent: 0.1 stays "0.1").
static void
s_number_text (double d, char *buf, size_t len)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf (buf, len, "%.*g", prec, d);
        if (strtod (buf, NULL) == d)
            return;
    }
}

int
bas_res_from_json (bas_res_t *r, const cJSON *list, const char *where, char *err, size_t errlen)
{
    bas_res_zero (r);
    if (!where)
        where = "resources";
    if (!list || cJSON_IsNull (list))
        return 0;
    if (!cJSON_IsObject (list)) {
        bas_set_err (err, errlen, "%s: expected an object of quantities", where);
        return -1;
    }
    for (const cJSON *item = list->child; item; item = item->next) {
        const char *name = item->string ? item->string : "";
        s_dim_t dim = s_classify (name);
        if (dim == S_DIM_IGNORE)
            continue;
        char qname[BAS_QUOTE_MAX * 4 + 8];
        bas_quote (name, qname, sizeof qname);
        char numtext[40];
        const char *text;
        if (cJSON_IsString (item) && item->valuestring)
            text = item->valuestring;
        else if (cJSON_IsNumber (item)) {
            //  Quantity also unmarshals from a bare JSON number.
            s_number_text (item->valuedouble, numtext, sizeof numtext);
            text = numtext;
        } else {
            bas_set_err (err, errlen, "%s: %s: expected a quantity string, got %s", where, qname,
                         cJSON_IsNull (item)    ? "null"
                         : cJSON_IsBool (item)  ? "a boolean"
                         : cJSON_IsArray (item) ? "an array"
                                                : "an object");
            return -1;
        }
        char qtext[BAS_QUOTE_MAX * 4 + 8];
        char problem[256];
        int64_t v = 0;
        if (bas_quantity_parse_scaled (text, dim == S_DIM_CPU ? -3 : 0, &v, problem,
                                       sizeof problem) != BAS_QTY_OK) {
            bas_quote (text, qtext, sizeof qtext);
            bas_set_err (err, errlen, "%s: %s \"%s\": %s", where, qname, qtext, problem);
            return -1;
        }
        if (v < 0) {
            bas_quote (text, qtext, sizeof qtext);
            bas_set_err (err, errlen, "%s: %s \"%s\": must not be negative", where, qname, qtext);
            return -1;
        }
        switch (dim) {
        case S_DIM_CPU:
            r->milli_cpu = v;
            break;
        case S_DIM_MEMORY:
            r->memory = v;
            break;
        case S_DIM_PODS:
            r->pods = v;
            break;
        default: {
            int rc = bas_res_scalar_set (r, name, v);
            if (rc == BAS_RES_ENAME) {
                bas_set_err (err, errlen, "%s: resource name \"%s\" is longer than %d bytes", where,
                             qname, BAS_RES_NAME_MAX - 1);
                return -1;
            }
            if (rc == BAS_RES_ETOOMANY) {
                bas_set_err (err, errlen,
                             "%s: %s: too many scalar resources (at most %d non-zero ones)", where,
                             qname, BAS_RES_MAX_SCALARS);
                return -1;
            }
        }
        }
    }
    return 0;
}
