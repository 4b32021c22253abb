/*  sim_openapi: the OpenAPI documents real kubectl asks for, with the
    schemas of the custom resources.

    kubectl apply/create (validation "strict", the default since 1.25)
    first asks the server whether it validates fields itself: it reads
    /openapi/v3, then the document of the object's group/version, and looks
    for the PATCH operation of that kind (x-kubernetes-group-version-kind)
    with a `fieldValidation` query parameter. When it is there, kubectl
    validates nothing itself and sends fieldValidation=Strict with the
    request. (Without them kubectl falls back to downloading the v2
    protobuf schema and fails with "failed to download openapi".)

    Schemas: the documents carry the openAPIV3Schema of every CRD served
    (sim_crd.h), under kube-apiserver's definition name for it (the
    group reversed, the version, the kind:
    sh.volcano.scheduling.v1beta1.PodGroup) with its
    x-kubernetes-group-version-kind, which is how clients find a kind's
    schema: `kubectl explain podgroup.spec.minMember` prints the CRD's
    own description of the field. The v3 group-version document has the
    schema as the CRD gives it; /openapi/v2 has the v2 form the
    apiextensions server publishes (ToStructuralOpenAPIV2: no
    allOf/anyOf/oneOf/not; a nullable or x-kubernetes-preserve-unknown-
    fields node loses its type or sub-schemas; an array without items
    loses its type). Built-in kinds have no schemas here: clients that
    look one up find none and, like kubectl's validation and its
    strategic-merge patch computation, fall back to skipping validation
    and to their compiled-in types. Older kubectl (1.20, Debian 12's
    kubernetes-client) validates on the client from the v2 protobuf
    document, so it refuses an invalid PodGroup itself, with the CRD
    schema's types, as it does against a real cluster.

    Content negotiation is kube-openapi's (pkg/handler, pkg/handler3): the
    Accept clauses in order of preference; the first one that matches a
    type we serve wins; none matching is 406. A client asking for the
    deprecated protobuf type `…spec.v2@v1.0+protobuf` gets its data with
    the Content-Type `…spec.v2.v1.0+protobuf`: the '@' is not legal in a
    media type, and Go's mime.ParseMediaType, which kubectl 1.20 applies to
    every response's Content-Type, rejects it ("mime: unexpected content
    after media subtype"). v3 documents are served as JSON only (no client
    we know asks for v3 protobuf; asking only for it gets 406).

    The simulator accepts fieldValidation and ignores it: unknown fields are
    kept, as they are with fieldValidation=Ignore.
*/
#include "sim_api_impl.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim_status.h"

//  Version of the documents (part of serverRelativeURL, for clients that
//  cache by URL): bump when the documents change.
#define S_OPENAPI_HASH "basalt-apisim-3"
//  info.title and info.version of every document (the version is the one
//  /version reports, sim_api.c).
#define S_OPENAPI_TITLE "Kubernetes"
#define S_OPENAPI_VERSION "v1.31.0"
//  What a v2 protobuf document is served as, whichever of the two protobuf
//  names the client asked for.
#define S_MIME_V2_PB "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
//  Accept clauses looked at; the rest of a longer header is ignored.
#define S_MAX_CLAUSES 16

typedef enum { S_AS_NONE, S_AS_JSON, S_AS_PROTOBUF } s_as_t;

//  A media type a document can be served as, as an Accept clause names it.
typedef struct {
    const char *type;    // "application"
    const char *subtype; // "json", …
    s_as_t as;           // the encoding served for it
} s_offer_t;

//  kube-openapi's handler order: JSON, then both protobuf names.
static const s_offer_t s_v2_offers[] = {
    {"application", "json", S_AS_JSON},
    {"application", "com.github.proto-openapi.spec.v2@v1.0+protobuf", S_AS_PROTOBUF},
    {"application", "com.github.proto-openapi.spec.v2.v1.0+protobuf", S_AS_PROTOBUF},
};
static const s_offer_t s_v3_offers[] = {
    {"application", "json", S_AS_JSON},
};

//  One clause of an Accept header.
typedef struct {
    char type[64];     // "application", or "*"
    char subtype[128]; // "json", or "*"
    double q;          // quality, 0 < q <= 1
} s_clause_t;

static char *
s_trim (char *text)
{
    while (*text == ' ' || *text == '\t')
        text++;
    size_t n = strlen (text);
    while (n && (text[n - 1] == ' ' || text[n - 1] == '\t'))
        text[--n] = 0;
    return text;
}

//  True when clause a is preferred to clause b: higher quality, then the
//  more specific range (as goautoneg sorts them).
static bool
s_clause_before (const s_clause_t *a, const s_clause_t *b)
{
    if (a->q != b->q)
        return a->q > b->q;
    bool a_any = !strcmp (a->type, "*"), b_any = !strcmp (b->type, "*");
    if (a_any != b_any)
        return b_any;
    a_any = !strcmp (a->subtype, "*");
    b_any = !strcmp (b->subtype, "*");
    return !a_any && b_any;
}

//  Parse an Accept header (NULL or empty: any type) into clauses, most
//  preferred first; clauses with q=0 (not acceptable), a malformed q or
//  names too long for us are left out. Returns how many.
static int
s_parse_accept (const char *accept, s_clause_t *clauses, int max)
{
    char copy[1024];
    snprintf (copy, sizeof copy, "%s", accept && *accept ? accept : "*/*");
    int n = 0;
    char *save = NULL;
    for (char *part = strtok_r (copy, ",", &save); part && n < max;
         part = strtok_r (NULL, ",", &save)) {
        char *params = strchr (part, ';');
        if (params)
            *params++ = 0;
        char *range = s_trim (part);
        if (!*range)
            continue;
        s_clause_t c = {.q = 1.0};
        char *slash = strchr (range, '/');
        if (slash)
            *slash = 0;
        const char *subtype = slash ? s_trim (slash + 1) : !strcmp (range, "*") ? "*" : "";
        if (strlen (range) >= sizeof c.type || strlen (subtype) >= sizeof c.subtype)
            continue;
        snprintf (c.type, sizeof c.type, "%s", s_trim (range));
        snprintf (c.subtype, sizeof c.subtype, "%s", subtype);
        char *psave = NULL;
        for (char *p = params ? strtok_r (params, ";", &psave) : NULL; p;
             p = strtok_r (NULL, ";", &psave)) {
            p = s_trim (p);
            if ((p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
                char *end = NULL;
                c.q = strtod (p + 2, &end);
                if (end == p + 2 || *s_trim (end))
                    c.q = 0;
            }
        }
        if (c.q <= 0)
            continue;
        //  Insertion keeps equal clauses in the order the client gave them.
        int at = n;
        while (at > 0 && s_clause_before (&c, &clauses[at - 1])) {
            clauses[at] = clauses[at - 1];
            at--;
        }
        clauses[at] = c;
        n++;
    }
    return n;
}

//  The encoding to serve for this Accept header, or S_AS_NONE (406): the
//  first offer that the most preferred clause matches.
static s_as_t
s_negotiate (const char *accept, const s_offer_t *offers, size_t noffers)
{
    s_clause_t clauses[S_MAX_CLAUSES];
    int n = s_parse_accept (accept, clauses, S_MAX_CLAUSES);
    for (int i = 0; i < n; i++)
        for (size_t j = 0; j < noffers; j++) {
            const s_clause_t *c = &clauses[i];
            if ((strcmp (c->type, "*") && strcasecmp (c->type, offers[j].type)) ||
                (strcmp (c->subtype, "*") && strcasecmp (c->subtype, offers[j].subtype)))
                continue;
            return offers[j].as;
        }
    return S_AS_NONE;
}

//  kube-openapi answers an Accept it cannot serve with a bare 406.
static void
s_not_acceptable (sim_ctx_t *ctx)
{
    free (ctx->resp->body);
    ctx->resp->code = 406;
    ctx->resp->content_type = "text/plain; charset=utf-8";
    ctx->resp->body = strdup ("");
    ctx->resp->body_len = 0;
}

//  Protobuf wire format, the little the v2 document needs: a varint, and a
//  length-delimited field (a string or an embedded message).
static void
s_pb_varint (sim_buf_t *buf, uint64_t v)
{
    char bytes[10];
    size_t n = 0;
    do {
        bytes[n++] = (char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    sim_buf_append (buf, bytes, n);
}

static void
s_pb_bytes (sim_buf_t *buf, unsigned field, const char *data, size_t len)
{
    s_pb_varint (buf, (uint64_t)field << 3 | 2);
    s_pb_varint (buf, len);
    sim_buf_append (buf, data, len);
}

static void
s_pb_string (sim_buf_t *buf, unsigned field, const char *text)
{
    s_pb_bytes (buf, field, text, strlen (text));
}

//  An embedded message: its bytes, then the buffer is emptied.
static void
s_pb_message (sim_buf_t *buf, unsigned field, sim_buf_t *msg)
{
    s_pb_bytes (buf, field, msg->data ? msg->data : "", msg->len);
    sim_buf_clear (msg);
}

static void
s_pb_uint (sim_buf_t *buf, unsigned field, uint64_t v)
{
    s_pb_varint (buf, (uint64_t)field << 3);
    s_pb_varint (buf, v);
}

static void
s_pb_double (sim_buf_t *buf, unsigned field, double v)
{
    uint64_t bits;
    memcpy (&bits, &v, sizeof bits);
    char bytes[8];
    for (int i = 0; i < 8; i++)
        bytes[i] = (char)((bits >> (8 * i)) & 0xff);
    s_pb_varint (buf, (uint64_t)field << 3 | 1);
    sim_buf_append (buf, bytes, 8);
}

//  openapi_v2.Any {yaml = 2}: a value as YAML text (its JSON is YAML).
static void
s_pb_any (sim_buf_t *buf, unsigned field, const cJSON *value)
{
    char *text = cJSON_PrintUnformatted (value);
    sim_buf_t any = {0};
    s_pb_string (&any, 2, text ? text : "null");
    free (text);
    s_pb_message (buf, field, &any);
}

static void s_pb_schema (sim_buf_t *out, const cJSON *schema);

// ---------------------------------------------------------------------------
// Schemas of the custom resources

//  kube-apiserver's definition name of a kind: the group reversed, the
//  version, the kind ("sh.volcano.scheduling.v1beta1.PodGroup"), into buf.
static const char *
s_definition_name (const sim_kind_t *k, char *buf, size_t len)
{
    char group[128];
    snprintf (group, sizeof group, "%s", k->group);
    size_t n = 0;
    buf[0] = 0;
    //  Labels from the last one back.
    for (char *dot = strrchr (group, '.');; dot = strrchr (group, '.')) {
        const char *label = dot ? dot + 1 : group;
        n += (size_t)snprintf (buf + n, n < len ? len - n : 0, "%s.", label);
        if (!dot)
            break;
        *dot = 0;
    }
    snprintf (buf + (n < len ? n : len - 1), n < len ? len - n : 1, "%s.%s", k->version, k->kind);
    return buf;
}

//  A CRD's schema as a document carries it: with the kind's
//  x-kubernetes-group-version-kind (owned).
static cJSON *
s_published_schema (const sim_kind_t *k, const cJSON *schema)
{
    cJSON *copy = cJSON_Duplicate (schema, true);
    cJSON *gvks = cJSON_AddArrayToObject (copy, "x-kubernetes-group-version-kind");
    cJSON *gvk = cJSON_CreateObject ();
    cJSON_AddStringToObject (gvk, "group", k->group);
    cJSON_AddStringToObject (gvk, "kind", k->kind);
    cJSON_AddStringToObject (gvk, "version", k->version);
    cJSON_AddItemToArray (gvks, gvk);
    return copy;
}

//  The v2 form of a structural schema, changed in place (apiextensions'
//  ToStructuralOpenAPIV2; see the file comment).
static void
s_to_v2 (cJSON *s)
{
    if (!cJSON_IsObject (s))
        return;
    static const char *const junctors[] = {"allOf", "anyOf", "oneOf", "not", NULL};
    for (int i = 0; junctors[i]; i++)
        cJSON_DeleteItemFromObjectCaseSensitive (s, junctors[i]);
    if (cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (s, "nullable"))) {
        cJSON_DeleteItemFromObjectCaseSensitive (s, "type");
        cJSON_DeleteItemFromObjectCaseSensitive (s, "nullable");
        cJSON_DeleteItemFromObjectCaseSensitive (s, "items");
        cJSON_DeleteItemFromObjectCaseSensitive (s, "properties");
    }
    if (cJSON_IsTrue (
            cJSON_GetObjectItemCaseSensitive (s, "x-kubernetes-preserve-unknown-fields"))) {
        cJSON_DeleteItemFromObjectCaseSensitive (s, "items");
        cJSON_DeleteItemFromObjectCaseSensitive (s, "properties");
    }
    const cJSON *type = cJSON_GetObjectItemCaseSensitive (s, "type");
    if (cJSON_IsString (type) && !strcmp (type->valuestring, "array") &&
        !cJSON_GetObjectItemCaseSensitive (s, "items"))
        cJSON_DeleteItemFromObjectCaseSensitive (s, "type");
    //  A nullable property is not required in v2.
    cJSON *props = cJSON_GetObjectItemCaseSensitive (s, "properties");
    cJSON *required = cJSON_GetObjectItemCaseSensitive (s, "required");
    for (cJSON *r = cJSON_IsArray (required) ? required->child : NULL; r;) {
        cJSON *next = r->next;
        const cJSON *p =
            cJSON_IsString (r) ? cJSON_GetObjectItemCaseSensitive (props, r->valuestring) : NULL;
        if (cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (p, "nullable")))
            cJSON_Delete (cJSON_DetachItemViaPointer (required, r));
        r = next;
    }
    cJSON *addl = cJSON_GetObjectItemCaseSensitive (s, "additionalProperties");
    if (cJSON_IsObject (addl))
        cJSON_DeleteItemFromObjectCaseSensitive (addl, "nullable");
    cJSON *p;
    cJSON_ArrayForEach (p, props)
    {
        s_to_v2 (p);
    }
    s_to_v2 (cJSON_GetObjectItemCaseSensitive (s, "items"));
    s_to_v2 (addl);
}

//  The v2 definitions of every CRD served (owned object).
static cJSON *
s_v2_definitions (sim_ctx_t *ctx)
{
    cJSON *defs = cJSON_CreateObject ();
    for (int i = 0; i < SIM_KIND_COUNT; i++) {
        const sim_kind_t *k = sim_kind_get ((sim_kind_id_t)i);
        const cJSON *schema = sim_crds_schema (ctx->api->crds, k);
        if (!schema)
            continue;
        char name[256];
        cJSON *v2 = s_published_schema (k, schema);
        s_to_v2 (v2);
        cJSON_AddItemToObject (defs, s_definition_name (k, name, sizeof name), v2);
    }
    return defs;
}

//  A schema member by name, in OpenAPIv2.proto's Schema field numbers:
//  format 2, title 3, description 4, default 5, multipleOf 6, maximum 7,
//  exclusiveMaximum 8, minimum 9, exclusiveMinimum 10, maxLength 11,
//  minLength 12, pattern 13, maxItems 14, minItems 15, uniqueItems 16,
//  maxProperties 17, minProperties 18, required 19, enum 20,
//  additionalProperties 21 {schema 1 | boolean 2}, type 22 {value 1},
//  items 23 {schema 1}, properties 25 {NamedSchema 1 {name 1, value 2}},
//  vendor extensions 31 {NamedAny {name 1, value 2}}.
static void
s_pb_schema_member (sim_buf_t *out, const cJSON *m)
{
    static const struct {
        const char *name; // JSON member
        unsigned field;   // Schema field
        char wire;        // 's' string, 'd' double, 'b' bool, 'i' int64, 'a' Any
    } scalars[] = {
        {"format", 2, 's'},           {"title", 3, 's'},         {"description", 4, 's'},
        {"default", 5, 'a'},          {"multipleOf", 6, 'd'},    {"maximum", 7, 'd'},
        {"exclusiveMaximum", 8, 'b'}, {"minimum", 9, 'd'},       {"exclusiveMinimum", 10, 'b'},
        {"maxLength", 11, 'i'},       {"minLength", 12, 'i'},    {"pattern", 13, 's'},
        {"maxItems", 14, 'i'},        {"minItems", 15, 'i'},     {"uniqueItems", 16, 'b'},
        {"maxProperties", 17, 'i'},   {"minProperties", 18, 'i'}};
    for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
        if (strcmp (m->string, scalars[i].name) != 0)
            continue;
        unsigned f = scalars[i].field;
        if (scalars[i].wire == 's' && cJSON_IsString (m))
            s_pb_string (out, f, m->valuestring);
        else if (scalars[i].wire == 'd' && cJSON_IsNumber (m))
            s_pb_double (out, f, m->valuedouble);
        else if (scalars[i].wire == 'b' && cJSON_IsBool (m))
            s_pb_uint (out, f, cJSON_IsTrue (m) ? 1 : 0);
        else if (scalars[i].wire == 'i' && cJSON_IsNumber (m) && m->valuedouble >= 0)
            s_pb_uint (out, f, (uint64_t)m->valuedouble);
        else if (scalars[i].wire == 'a')
            s_pb_any (out, f, m);
        return;
    }
    const cJSON *v;
    sim_buf_t sub = {0}, inner = {0};
    if (!strcmp (m->string, "required")) {
        cJSON_ArrayForEach (v, m)
        {
            if (cJSON_IsString (v))
                s_pb_string (out, 19, v->valuestring);
        }
    } else if (!strcmp (m->string, "enum")) {
        cJSON_ArrayForEach (v, m)
        {
            s_pb_any (out, 20, v);
        }
    } else if (!strcmp (m->string, "additionalProperties")) {
        if (cJSON_IsBool (m))
            s_pb_uint (&sub, 2, cJSON_IsTrue (m) ? 1 : 0);
        else if (cJSON_IsObject (m)) {
            s_pb_schema (&inner, m);
            s_pb_message (&sub, 1, &inner);
        }
        s_pb_message (out, 21, &sub);
    } else if (!strcmp (m->string, "type") && cJSON_IsString (m)) {
        s_pb_string (&sub, 1, m->valuestring);
        s_pb_message (out, 22, &sub);
    } else if (!strcmp (m->string, "items") && cJSON_IsObject (m)) {
        s_pb_schema (&inner, m);
        s_pb_message (&sub, 1, &inner);
        s_pb_message (out, 23, &sub);
    } else if (!strcmp (m->string, "properties") && cJSON_IsObject (m)) {
        cJSON_ArrayForEach (v, m)
        {
            sim_buf_t named = {0};
            s_pb_string (&named, 1, v->string);
            s_pb_schema (&inner, v);
            s_pb_message (&named, 2, &inner);
            s_pb_message (&sub, 1, &named);
        }
        s_pb_message (out, 25, &sub);
    } else if (!strncmp (m->string, "x-", 2)) {
        s_pb_string (&sub, 1, m->string);
        s_pb_any (&sub, 2, m);
        s_pb_message (out, 31, &sub);
    }
    sim_buf_clear (&sub);
    sim_buf_clear (&inner);
}

static void
s_pb_schema (sim_buf_t *out, const cJSON *schema)
{
    const cJSON *m;
    cJSON_ArrayForEach (m, schema)
    {
        if (m->string)
            s_pb_schema_member (out, m);
    }
}

static cJSON *s_v2_definitions (sim_ctx_t *ctx);

//  The v2 document as gnostic's openapi_v2.Document (OpenAPIv2.proto:
//  swagger = 1, info = 2 {title = 1, version = 2}, paths = 8,
//  definitions = 9 {NamedSchema 1 {name 1, value 2}}), the same content
//  as the JSON form below.
static void
s_v2_protobuf (sim_ctx_t *ctx)
{
    sim_buf_t info = {0}, doc = {0}, defs = {0};
    s_pb_bytes (&info, 1, S_OPENAPI_TITLE, strlen (S_OPENAPI_TITLE));
    s_pb_bytes (&info, 2, S_OPENAPI_VERSION, strlen (S_OPENAPI_VERSION));
    s_pb_bytes (&doc, 1, "2.0", 3);
    s_pb_bytes (&doc, 2, info.data, info.len);
    s_pb_bytes (&doc, 8, "", 0);
    cJSON *definitions = s_v2_definitions (ctx);
    const cJSON *d;
    cJSON_ArrayForEach (d, definitions)
    {
        sim_buf_t named = {0}, schema = {0};
        s_pb_string (&named, 1, d->string);
        s_pb_schema (&schema, d);
        s_pb_message (&named, 2, &schema);
        s_pb_message (&defs, 1, &named);
    }
    cJSON_Delete (definitions);
    s_pb_message (&doc, 9, &defs);
    sim_buf_clear (&info);
    free (ctx->resp->body);
    ctx->resp->code = 200;
    ctx->resp->content_type = S_MIME_V2_PB;
    ctx->resp->body = sim_buf_detach (&doc, &ctx->resp->body_len);
}

static void
s_reply (sim_ctx_t *ctx, cJSON *json)
{
    char *text = cJSON_PrintUnformatted (json);
    cJSON_Delete (json);
    sim_buf_t buf = {0};
    sim_buf_puts (&buf, text ? text : "{}");
    free (text);
    sim_ctx_reply_buf (ctx, 200, &buf);
}

static void
s_v2_json (sim_ctx_t *ctx)
{
    cJSON *doc = cJSON_CreateObject ();
    cJSON_AddStringToObject (doc, "swagger", "2.0");
    cJSON *info = cJSON_AddObjectToObject (doc, "info");
    cJSON_AddStringToObject (info, "title", S_OPENAPI_TITLE);
    cJSON_AddStringToObject (info, "version", S_OPENAPI_VERSION);
    cJSON_AddObjectToObject (doc, "paths");
    cJSON_AddItemToObject (doc, "definitions", s_v2_definitions (ctx));
    s_reply (ctx, doc);
}

static void
s_not_found (sim_ctx_t *ctx)
{
    sim_status_t st = {.code = 404,
                       .reason = "NotFound",
                       .message = "the server could not find the requested resource",
                       .details = true};
    sim_buf_t buf = {0};
    sim_status_append (&buf, &st);
    sim_ctx_reply_buf (ctx, 404, &buf);
}

//  "api/v1" or "apis/<group>/<version>" of a kind, into buf.
static const char *
s_gv_path (const sim_kind_t *k, char *buf, size_t len)
{
    if (*k->group)
        snprintf (buf, len, "apis/%s/%s", k->group, k->version);
    else
        snprintf (buf, len, "api/%s", k->version);
    return buf;
}

static cJSON *
s_param (const char *name, const char *in)
{
    cJSON *p = cJSON_CreateObject ();
    cJSON_AddStringToObject (p, "name", name);
    cJSON_AddStringToObject (p, "in", in);
    if (!strcmp (in, "path"))
        cJSON_AddTrueToObject (p, "required");
    cJSON *schema = cJSON_AddObjectToObject (p, "schema");
    cJSON_AddStringToObject (schema, "type", "string");
    cJSON_AddBoolToObject (schema, "uniqueItems", true);
    return p;
}

//  One operation of `k` with the query parameters kubectl looks for.
static cJSON *
s_operation (const sim_kind_t *k, const char *verb, const char *action, bool write)
{
    cJSON *op = cJSON_CreateObject ();
    char id[160];
    snprintf (id, sizeof id, "%s%s%s", verb, k->namespaced ? "Namespaced" : "", k->kind);
    cJSON_AddStringToObject (op, "operationId", id);
    cJSON *params = cJSON_AddArrayToObject (op, "parameters");
    if (write) {
        cJSON_AddItemToArray (params, s_param ("dryRun", "query"));
        cJSON_AddItemToArray (params, s_param ("fieldManager", "query"));
        cJSON_AddItemToArray (params, s_param ("fieldValidation", "query"));
    }
    cJSON *responses = cJSON_AddObjectToObject (op, "responses");
    cJSON *ok = cJSON_AddObjectToObject (responses, "200");
    cJSON_AddStringToObject (ok, "description", "OK");
    cJSON_AddStringToObject (op, "x-kubernetes-action", action);
    cJSON *gvk = cJSON_AddObjectToObject (op, "x-kubernetes-group-version-kind");
    cJSON_AddStringToObject (gvk, "group", k->group);
    cJSON_AddStringToObject (gvk, "version", k->version);
    cJSON_AddStringToObject (gvk, "kind", k->kind);
    return op;
}

//  The OpenAPI v3 document of one group/version.
static cJSON *
s_gv_document (sim_ctx_t *ctx, const char *gv)
{
    cJSON *doc = cJSON_CreateObject ();
    cJSON_AddStringToObject (doc, "openapi", "3.0.0");
    cJSON *info = cJSON_AddObjectToObject (doc, "info");
    cJSON_AddStringToObject (info, "title", S_OPENAPI_TITLE);
    cJSON_AddStringToObject (info, "version", S_OPENAPI_VERSION);
    cJSON *paths = cJSON_AddObjectToObject (doc, "paths");
    for (int i = 0; i < SIM_KIND_COUNT; i++) {
        const sim_kind_t *k = sim_kind_get ((sim_kind_id_t)i);
        char kgv[160], coll[400], item[440];
        if (strcmp (s_gv_path (k, kgv, sizeof kgv), gv) != 0)
            continue;
        if (k->namespaced)
            snprintf (coll, sizeof coll, "/%s/namespaces/{namespace}/%s", gv, k->resource);
        else
            snprintf (coll, sizeof coll, "/%s/%s", gv, k->resource);
        snprintf (item, sizeof item, "%s/{name}", coll);
        cJSON *c = cJSON_AddObjectToObject (paths, coll);
        cJSON_AddItemToObject (c, "get", s_operation (k, "list", "list", false));
        cJSON_AddItemToObject (c, "post", s_operation (k, "create", "post", true));
        cJSON *o = cJSON_AddObjectToObject (paths, item);
        cJSON_AddItemToObject (o, "get", s_operation (k, "read", "get", false));
        cJSON_AddItemToObject (o, "put", s_operation (k, "replace", "put", true));
        cJSON_AddItemToObject (o, "patch", s_operation (k, "patch", "patch", true));
        cJSON_AddItemToObject (o, "delete", s_operation (k, "delete", "delete", false));
        cJSON *params = cJSON_AddArrayToObject (o, "parameters");
        cJSON_AddItemToArray (params, s_param ("name", "path"));
        if (k->namespaced)
            cJSON_AddItemToArray (params, s_param ("namespace", "path"));
    }
    cJSON *schemas =
        cJSON_AddObjectToObject (cJSON_AddObjectToObject (doc, "components"), "schemas");
    for (int i = 0; i < SIM_KIND_COUNT; i++) {
        const sim_kind_t *k = sim_kind_get ((sim_kind_id_t)i);
        const cJSON *schema = sim_crds_schema (ctx->api->crds, k);
        char kgv[160], name[256];
        if (schema && !strcmp (s_gv_path (k, kgv, sizeof kgv), gv))
            cJSON_AddItemToObject (schemas, s_definition_name (k, name, sizeof name),
                                   s_published_schema (k, schema));
    }
    return doc;
}

void
sim_api_openapi (sim_ctx_t *ctx, char **seg, int nseg)
{
    if (strcmp (ctx->req->method, "GET") != 0) {
        sim_ctx_fail (ctx, 405, "MethodNotAllowed", NULL, NULL,
                      "the server does not allow this method on the requested resource");
        return;
    }
    if (nseg == 2 && !strcmp (seg[1], "v2")) {
        s_as_t as =
            s_negotiate (ctx->req->accept, s_v2_offers, sizeof s_v2_offers / sizeof s_v2_offers[0]);
        if (as == S_AS_PROTOBUF)
            s_v2_protobuf (ctx);
        else if (as == S_AS_JSON)
            s_v2_json (ctx);
        else
            s_not_acceptable (ctx);
        return;
    }
    if (nseg < 2 || strcmp (seg[1], "v3") != 0) {
        s_not_found (ctx);
        return;
    }
    if (nseg == 2) {
        cJSON *root = cJSON_CreateObject ();
        cJSON *paths = cJSON_AddObjectToObject (root, "paths");
        for (int i = 0; i < SIM_KIND_COUNT; i++) {
            char gv[160], url[256];
            s_gv_path (sim_kind_get ((sim_kind_id_t)i), gv, sizeof gv);
            if (cJSON_GetObjectItemCaseSensitive (paths, gv))
                continue;
            snprintf (url, sizeof url, "/openapi/v3/%s?hash=%s", gv, S_OPENAPI_HASH);
            cJSON *entry = cJSON_AddObjectToObject (paths, gv);
            cJSON_AddStringToObject (entry, "serverRelativeURL", url);
        }
        s_reply (ctx, root);
        return;
    }
    char gv[256] = "";
    for (int i = 2; i < nseg; i++) {
        size_t n = strlen (gv);
        snprintf (gv + n, sizeof gv - n, "%s%s", i > 2 ? "/" : "", seg[i]);
    }
    for (int i = 0; i < SIM_KIND_COUNT; i++) {
        char kgv[160];
        if (!strcmp (s_gv_path (sim_kind_get ((sim_kind_id_t)i), kgv, sizeof kgv), gv)) {
            if (s_negotiate (ctx->req->accept, s_v3_offers,
                             sizeof s_v3_offers / sizeof s_v3_offers[0]) == S_AS_NONE)
                s_not_acceptable (ctx);
            else
                s_reply (ctx, s_gv_document (ctx, gv));
            return;
        }
    }
    s_not_found (ctx);
}
