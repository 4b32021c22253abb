/*  sim_valid_storage: see sim_valid_storage.h. The order of the checks is
    the API server's, so that a message listing several errors lists them
    as the real one does.
*/
#include "sim_valid_storage.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bas_quantity.h"
#include "sim_obj.h"
#include "sim_valid.h"

#define S_ACCESS_MODES                                                                             \
    "supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", "                   \
    "\"ReadWriteOncePod\""
#define S_QUALIFIED_NAME_MSG                                                                       \
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "  \
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for " \
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
#define S_LABEL_VALUE_MSG                                                                          \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "    \
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "             \
    "'my_value',  or '12345', regex used for validation is "                                       \
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
#define S_IMMUTABLE "field is immutable"
//  A CSINode driver's nodeID may be this long (validateNodeIDLength).
#define S_NODE_ID_MAX 192
//  A CSI driver's name may be this long (csiDriverNameMaxLength).
#define S_CSI_DRIVER_MAX 63

//  The volume sources of a PersistentVolumeSpec, in the order
//  ValidatePersistentVolumeSpec counts them (the first one present is the
//  volume's; each later one is refused).
static const char *const s_pv_sources[] = {"hostPath",
                                           "gcePersistentDisk",
                                           "awsElasticBlockStore",
                                           "glusterfs",
                                           "flocker",
                                           "nfs",
                                           "rbd",
                                           "quobyte",
                                           "cephfs",
                                           "iscsi",
                                           "cinder",
                                           "fc",
                                           "flexVolume",
                                           "azureFile",
                                           "vsphereVolume",
                                           "photonPersistentDisk",
                                           "portworxVolume",
                                           "azureDisk",
                                           "scaleIO",
                                           "local",
                                           "storageos",
                                           "csi",
                                           NULL};

bool
sim_valid_storage_kind (const sim_kind_t *kind)
{
    switch (kind->id) {
    case SIM_KIND_PERSISTENTVOLUMES:
    case SIM_KIND_PERSISTENTVOLUMECLAIMS:
    case SIM_KIND_STORAGECLASSES:
    case SIM_KIND_CSINODES:
    case SIM_KIND_CSIDRIVERS:
        return true;
    default:
        return false;
    }
}

// ---------------------------------------------------------------------------
// Shared pieces

static void
s_path (char *buf, size_t len, const char *fmt, const char *base, int i)
{
    snprintf (buf, len, fmt, base, i);
}

//  Two values are the same (both absent counts; cJSON_Compare says no).
static bool
s_same (const cJSON *a, const cJSON *b, bool case_sensitive)
{
    if (!a || !b)
        return a == b;
    return cJSON_Compare (a, b, case_sensitive);
}

static bool
s_one_of (const char *value, const char *const *allowed)
{
    for (int i = 0; allowed[i]; i++)
        if (!strcmp (value, allowed[i]))
            return true;
    return false;
}

//  A string member that is present must be one of `allowed`; `supported`
//  is the "supported values: …" text.
static void
s_check_enum (const cJSON *obj, const char *name, const char *field, const char *const *allowed,
              const char *supported, sim_field_errors_t *errs)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive (obj, name);
    if (!v)
        return;
    if (!cJSON_IsString (v) || !s_one_of (v->valuestring, allowed))
        sim_field_errors_add (errs, SIM_FIELD_NOT_SUPPORTED, field, v, supported);
}

static bool
s_alnum_any (char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

//  ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] over text[0..len).
static bool
s_is_name_part (const char *text, size_t len)
{
    if (len == 0 || !s_alnum_any (text[0]) || !s_alnum_any (text[len - 1]))
        return false;
    for (size_t i = 0; i < len; i++)
        if (!s_alnum_any (text[i]) && text[i] != '-' && text[i] != '_' && text[i] != '.')
            return false;
    return true;
}

//  apimachinery's IsQualifiedName: an optional DNS subdomain prefix and
//  '/', then a name part of at most 63 characters. One Invalid error per
//  problem on `field`.
static void
s_check_qualified_as (const char *value, const char *shown, const char *field,
                      sim_field_errors_t *errs)
{
    const char *slash = strchr (value, '/');
    const char *name = value;
    if (slash) {
        char prefix[300];
        snprintf (prefix, sizeof prefix, "%.*s", (int)(slash - value), value);
        name = slash + 1;
        if (!*prefix)
            sim_field_errors_add_str (errs, SIM_FIELD_INVALID, field, shown,
                                      "prefix part must be non-empty");
        else if (!sim_valid_is_subdomain (prefix))
            sim_field_errors_add_str (errs, SIM_FIELD_INVALID, field, shown,
                                      "prefix part " SIM_VALID_SUBDOMAIN_MSG);
        if (strchr (name, '/')) {
            sim_field_errors_add_str (
                errs, SIM_FIELD_INVALID, field, shown,
                "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and "
                "must start and end with an alphanumeric character (e.g. 'MyName',  or "
                "'my.name',  or '123-abc', regex used for validation is "
                "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain "
                "prefix and '/' (e.g. 'example.com/MyName')");
            return;
        }
    }
    size_t len = strlen (name);
    if (len == 0) {
        sim_field_errors_add_str (errs, SIM_FIELD_INVALID, field, shown,
                                  "name part must be non-empty");
        return;
    }
    if (len > 63)
        sim_field_errors_add_str (errs, SIM_FIELD_INVALID, field, shown,
                                  "name part must be no more than 63 characters");
    if (!s_is_name_part (name, len))
        sim_field_errors_add_str (errs, SIM_FIELD_INVALID, field, shown, S_QUALIFIED_NAME_MSG);
}

static void
s_check_qualified (const char *value, const char *field, sim_field_errors_t *errs)
{
    s_check_qualified_as (value, value, field, errs);
}

//  IsValidLabelValue: empty, or at most 63 characters of the name-part
//  form.
static void
s_check_label_value (const cJSON *v, const char *field, sim_field_errors_t *errs)
{
    if (!cJSON_IsString (v)) {
        sim_field_errors_add (errs, SIM_FIELD_INVALID, field, v, "must be a string");
        return;
    }
    size_t len = strlen (v->valuestring);
    if (len > 63)
        sim_field_errors_add (errs, SIM_FIELD_INVALID, field, v,
                              "must be no more than 63 characters");
    if (len && !s_is_name_part (v->valuestring, len))
        sim_field_errors_add (errs, SIM_FIELD_INVALID, field, v, S_LABEL_VALUE_MSG);
}

//  A storage quantity at `field` (a string or a number), greater than
//  zero (ValidatePositiveQuantityValue); a volume's capacity is also
//  refused when negative on its own (validateBasicResource, which comes
//  first and shows the value as a number). The real server refuses an
//  unparsable quantity while decoding (400); here it is a 422 on the
//  field.
static void
s_check_storage_qty (const cJSON *v, const char *field, bool basic, sim_field_errors_t *errs)
{
    char text[64], err[200];
    if (cJSON_IsNumber (v))
        snprintf (text, sizeof text, "%.0f", v->valuedouble);
    else if (cJSON_IsString (v))
        snprintf (text, sizeof text, "%s", v->valuestring);
    else {
        sim_field_errors_add (errs, SIM_FIELD_TYPE_INVALID, field, v, "must be a quantity");
        return;
    }
    int64_t bytes = 0;
    if (bas_quantity_parse_value (text, &bytes, err, sizeof err) == BAS_QTY_EINVALID) {
        sim_field_errors_add (errs, SIM_FIELD_INVALID, field, v, err);
        return;
    }
    if (basic && bytes < 0) {
        cJSON *n = cJSON_CreateNumber ((double)bytes);
        sim_field_errors_add (errs, SIM_FIELD_INVALID, field, n,
                              "must be a valid resource quantity");
        cJSON_Delete (n);
    }
    if (bytes <= 0)
        sim_field_errors_add_str (errs, SIM_FIELD_INVALID, field, text,
                                  "must be greater than zero");
}

//  Access modes (ValidatePersistentVolumeSpec / ...ClaimSpec): at least
//  one (`required` is the detail of the error when there is none), each a
//  known mode, ReadWriteOncePod alone.
static void
s_check_access_modes (const cJSON *spec, const char *required, sim_field_errors_t *errs)
{
    static const char *const modes[] = {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany",
                                        "ReadWriteOncePod", NULL};
    const cJSON *list = cJSON_GetObjectItemCaseSensitive (spec, "accessModes");
    if (!cJSON_IsArray (list) || cJSON_GetArraySize (list) == 0) {
        sim_field_errors_add (errs, SIM_FIELD_REQUIRED, "spec.accessModes", NULL, required);
        return;
    }
    bool rwop = false;
    const cJSON *m;
    cJSON_ArrayForEach (m, list)
    {
        if (!cJSON_IsString (m) || !s_one_of (m->valuestring, modes))
            sim_field_errors_add (errs, SIM_FIELD_NOT_SUPPORTED, "spec.accessModes", m,
                                  S_ACCESS_MODES);
        else if (!strcmp (m->valuestring, "ReadWriteOncePod"))
            rwop = true;
    }
    if (rwop && cJSON_GetArraySize (list) > 1)
        sim_field_errors_add (errs, SIM_FIELD_FORBIDDEN, "spec.accessModes", NULL,
                              "may not use ReadWriteOncePod with other access modes");
}

//  A storageClassName, when set, is a DNS subdomain.
static void
s_check_class_name (const cJSON *spec, sim_field_errors_t *errs)
{
    const char *sc = sim_json_str (spec, "storageClassName");
    if (sc && *sc && !sim_valid_is_subdomain (sc))
        sim_field_errors_add_str (errs, SIM_FIELD_INVALID, "spec.storageClassName", sc,
                                  SIM_VALID_SUBDOMAIN_MSG);
}

//  The values of a requirement with `op`, at `base` (…matchExpressions[i]).
//  `gt_lt` allows the node selector's Gt and Lt.
static void
s_check_requirement (const cJSON *req, const char *base, bool gt_lt, sim_field_errors_t *errs)
{
    char field[480];
    const char *op = sim_json_str (req, "operator");
    const cJSON *values = cJSON_GetObjectItemCaseSensitive (req, "values");
    int n = cJSON_IsArray (values) ? cJSON_GetArraySize (values) : 0;
    snprintf (field, sizeof field, "%s.values", base);
    if (op && (!strcmp (op, "In") || !strcmp (op, "NotIn"))) {
        if (n == 0)
            sim_field_errors_add (errs, SIM_FIELD_REQUIRED, field, NULL,
                                  "must be specified when `operator` is 'In' or 'NotIn'");
    } else if (op && (!strcmp (op, "Exists") || !strcmp (op, "DoesNotExist"))) {
        if (n > 0)
            sim_field_errors_add (errs, SIM_FIELD_FORBIDDEN, field, NULL,
                                  "may not be specified when `operator` is 'Exists' or "
                                  "'DoesNotExist'");
    } else if (gt_lt && op && (!strcmp (op, "Gt") || !strcmp (op, "Lt"))) {
        if (n != 1)
            sim_field_errors_add (errs, SIM_FIELD_REQUIRED, field, NULL,
                                  "must be specified single value when `operator` is 'Lt' or "
                                  "'Gt'");
    } else {
        snprintf (field, sizeof field, "%s.operator", base);
        sim_field_errors_add (errs, SIM_FIELD_INVALID, field,
                              cJSON_GetObjectItemCaseSensitive (req, "operator"),
                              "not a valid selector operator");
    }
    //  Then the key (ValidateLabelName) and each value (IsValidLabelValue).
    const char *key = sim_json_str (req, "key");
    snprintf (field, sizeof field, "%s.key", base);
    s_check_qualified (key ? key : "", field, errs);
    int i = 0;
    const cJSON *v;
    cJSON_ArrayForEach (v, values)
    {
        snprintf (field, sizeof field, "%s.values[%d]", base, i++);
        s_check_label_value (v, field, errs);
    }
}

//  A node selector term's matchFields requirement
//  (ValidateNodeFieldSelectorRequirement): In or NotIn with exactly one
//  value, on the key metadata.name only, the value a node name.
static void
s_check_field_requirement (const cJSON *req, const char *base, sim_field_errors_t *errs)
{
    char field[480];
    const char *op = sim_json_str (req, "operator");
    const cJSON *values = cJSON_GetObjectItemCaseSensitive (req, "values");
    if (op && (!strcmp (op, "In") || !strcmp (op, "NotIn"))) {
        if (cJSON_GetArraySize (values) != 1) {
            snprintf (field, sizeof field, "%s.values", base);
            sim_field_errors_add (errs, SIM_FIELD_REQUIRED, field, NULL,
                                  "must be only one value when `operator` is 'In' or 'NotIn' for "
                                  "node field selector");
        }
    } else {
        snprintf (field, sizeof field, "%s.operator", base);
        sim_field_errors_add (errs, SIM_FIELD_INVALID, field,
                              cJSON_GetObjectItemCaseSensitive (req, "operator"),
                              "not a valid selector operator");
    }
    const char *key = sim_json_str (req, "key");
    if (!key || strcmp (key, "metadata.name") != 0) {
        snprintf (field, sizeof field, "%s.key", base);
        sim_field_errors_add_str (errs, SIM_FIELD_INVALID, field, key ? key : "",
                                  "not a valid field selector key");
        return;
    }
    int i = 0;
    const cJSON *v;
    cJSON_ArrayForEach (v, values)
    {
        snprintf (field, sizeof field, "%s.values[%d]", base, i++);
        if (!cJSON_IsString (v) || !sim_valid_is_subdomain (v->valuestring))
            sim_field_errors_add (errs, SIM_FIELD_INVALID, field, v, SIM_VALID_SUBDOMAIN_MSG);
    }
}

//  A required node selector (ValidateNodeSelector): at least one term,
//  each term's requirements valid. `path` names the selector.
static void
s_check_node_selector (const cJSON *sel, const char *path, sim_field_errors_t *errs)
{
    char field[200], base[400];
    const cJSON *terms = cJSON_GetObjectItemCaseSensitive (sel, "nodeSelectorTerms");
    snprintf (field, sizeof field, "%.150s.nodeSelectorTerms", path);
    if (!cJSON_IsArray (terms) || cJSON_GetArraySize (terms) == 0) {
        sim_field_errors_add (errs, SIM_FIELD_REQUIRED, field, NULL,
                              "must have at least one node selector term");
        return;
    }
    int t = 0;
    const cJSON *term;
    cJSON_ArrayForEach (term, terms)
    {
        int r = 0;
        const cJSON *req;
        cJSON_ArrayForEach (req, cJSON_GetObjectItemCaseSensitive (term, "matchExpressions"))
        {
            snprintf (base, sizeof base, "%s[%d].matchExpressions[%d]", field, t, r++);
            s_check_requirement (req, base, true, errs);
        }
        r = 0;
        cJSON_ArrayForEach (req, cJSON_GetObjectItemCaseSensitive (term, "matchFields"))
        {
            snprintf (base, sizeof base, "%s[%d].matchFields[%d]", field, t, r++);
            s_check_field_requirement (req, base, errs);
        }
        t++;
    }
}

//  A claim's label selector (ValidateLabelSelector): matchLabels keys are
//  qualified names, matchExpressions valid.
static void
s_check_label_selector (const cJSON *sel, const char *path, sim_field_errors_t *errs)
{
    char field[400];
    const cJSON *l;
    cJSON_ArrayForEach (l, cJSON_GetObjectItemCaseSensitive (sel, "matchLabels"))
    {
        snprintf (field, sizeof field, "%s.matchLabels", path);
        if (l->string)
            s_check_qualified (l->string, field, errs);
        s_check_label_value (l, field, errs);
    }
    int r = 0;
    const cJSON *req;
    cJSON_ArrayForEach (req, cJSON_GetObjectItemCaseSensitive (sel, "matchExpressions"))
    {
        snprintf (field, sizeof field, "%s.matchExpressions[%d]", path, r++);
        s_check_requirement (req, field, false, errs);
    }
}

//  ValidateCSIDriverName: required, at most 63 bytes, and a DNS-1123
//  subdomain once lower-cased (the error shows the name as given).
static void
s_check_csi_driver_name (const char *name, const char *field, sim_field_errors_t *errs)
{
    if (!name || !*name) {
        sim_field_errors_add (errs, SIM_FIELD_REQUIRED, field, NULL, NULL);
        return;
    }
    size_t len = strlen (name);
    if (len > S_CSI_DRIVER_MAX)
        sim_field_errors_add (errs, SIM_FIELD_TOO_LONG, field, NULL,
                              "may not be more than 63 bytes");
    char lower[300];
    size_t i = 0;
    for (; name[i] && i + 1 < sizeof lower; i++)
        lower[i] = (name[i] >= 'A' && name[i] <= 'Z') ? (char)(name[i] - 'A' + 'a') : name[i];
    lower[i] = 0;
    if (len > 253)
        sim_field_errors_add_str (errs, SIM_FIELD_INVALID, field, name,
                                  "must be no more than 253 characters");
    if (!sim_valid_is_subdomain (lower))
        sim_field_errors_add_str (errs, SIM_FIELD_INVALID, field, name, SIM_VALID_SUBDOMAIN_MSG);
}

// ---------------------------------------------------------------------------
// PersistentVolume

//  The required fields of the sources the simulator's users write.
static void
s_check_pv_source (const cJSON *spec, const char *source, sim_field_errors_t *errs)
{
    static const struct {
        const char *source; // PersistentVolumeSource member
        const char *field;  // a field it requires
    } required[] = {
        {"hostPath", "path"}, {"local", "path"},       {"nfs", "server"},
        {"nfs", "path"},      {"csi", "volumeHandle"}, {"iscsi", "targetPortal"},
        {"iscsi", "iqn"},     {"rbd", "image"},        {NULL, NULL},
    };
    const cJSON *src = cJSON_GetObjectItemCaseSensitive (spec, source);
    if (!strcmp (source, "csi"))
        s_check_csi_driver_name (sim_json_str (src, "driver"), "spec.csi.driver", errs);
    for (int i = 0; required[i].source; i++) {
        if (strcmp (required[i].source, source) != 0)
            continue;
        const char *v = sim_json_str (src, required[i].field);
        if (!v || !*v) {
            char field[200];
            snprintf (field, sizeof field, "spec.%s.%s", source, required[i].field);
            sim_field_errors_add (errs, SIM_FIELD_REQUIRED, field, NULL, NULL);
        }
    }
}

static void
s_pv_create (const cJSON *obj, sim_field_errors_t *errs)
{
    static const char *const policies[] = {"Delete", "Recycle", "Retain", NULL};
    static const char *const volume_modes[] = {"Block", "Filesystem", NULL};
    const cJSON *spec = sim_json_at (obj, "spec");
    s_check_access_modes (spec, NULL, errs);
    const cJSON *cap = cJSON_GetObjectItemCaseSensitive (spec, "capacity");
    int ncap = cJSON_IsObject (cap) ? cJSON_GetArraySize (cap) : 0;
    if (ncap == 0)
        sim_field_errors_add (errs, SIM_FIELD_REQUIRED, "spec.capacity", NULL, NULL);
    const cJSON *storage = cJSON_GetObjectItemCaseSensitive (cap, "storage");
    if (!storage || ncap > 1)
        sim_field_errors_add (errs, SIM_FIELD_NOT_SUPPORTED, "spec.capacity", cap,
                              "supported values: \"storage\"");
    const cJSON *q;
    cJSON_ArrayForEach (q, cap)
    {
        char field[300];
        snprintf (field, sizeof field, "spec.capacity[%.200s]", q->string ? q->string : "");
        s_check_storage_qty (q, field, true, errs);
    }
    s_check_enum (spec, "persistentVolumeReclaimPolicy", "spec.persistentVolumeReclaimPolicy",
                  policies, "supported values: \"Delete\", \"Recycle\", \"Retain\"", errs);
    const cJSON *affinity = cJSON_GetObjectItemCaseSensitive (spec, "nodeAffinity");
    if (affinity) {
        const cJSON *req = cJSON_GetObjectItemCaseSensitive (affinity, "required");
        if (!cJSON_IsObject (req))
            sim_field_errors_add (errs, SIM_FIELD_REQUIRED, "spec.nodeAffinity.required", NULL,
                                  "must specify required node constraints");
        else
            s_check_node_selector (req, "spec.nodeAffinity.required", errs);
    }
    //  Exactly one volume source.
    const char *first = NULL;
    for (int i = 0; s_pv_sources[i]; i++) {
        const char *source = s_pv_sources[i];
        if (!cJSON_GetObjectItemCaseSensitive (spec, source))
            continue;
        if (!first) {
            first = source;
            s_check_pv_source (spec, first, errs);
            if (!strcmp (first, "local") && !affinity)
                sim_field_errors_add (errs, SIM_FIELD_REQUIRED, "spec.nodeAffinity", NULL,
                                      "Local volume requires node affinity");
        } else {
            //  The real server names cephfs "cephFS" in this one message.
            char field[200];
            snprintf (field, sizeof field, "spec.%s",
                      !strcmp (source, "cephfs") ? "cephFS" : source);
            sim_field_errors_add (errs, SIM_FIELD_FORBIDDEN, field, NULL,
                                  "may not specify more than 1 volume type");
        }
    }
    if (!first)
        sim_field_errors_add (errs, SIM_FIELD_REQUIRED, "spec", NULL, "must specify a volume type");
    s_check_class_name (spec, errs);
    s_check_enum (spec, "volumeMode", "spec.volumeMode", volume_modes,
                  "supported values: \"Block\", \"Filesystem\"", errs);
}

static void
s_pv_update (const cJSON *old, const cJSON *obj, sim_field_errors_t *errs)
{
    const cJSON *a = sim_json_at (old, "spec"), *b = sim_json_at (obj, "spec");
    for (int i = 0; s_pv_sources[i]; i++)
        if (!s_same (cJSON_GetObjectItemCaseSensitive (a, s_pv_sources[i]),
                     cJSON_GetObjectItemCaseSensitive (b, s_pv_sources[i]), true)) {
            sim_field_errors_add (errs, SIM_FIELD_FORBIDDEN, "spec.persistentvolumesource", NULL,
                                  "spec.persistentvolumesource is immutable after creation");
            break;
        }
    //  The real path here is "volumeMode", not "spec.volumeMode".
    const cJSON *mode = cJSON_GetObjectItemCaseSensitive (b, "volumeMode");
    if (!s_same (cJSON_GetObjectItemCaseSensitive (a, "volumeMode"), mode, true))
        sim_field_errors_add (errs, SIM_FIELD_INVALID, "volumeMode", mode, S_IMMUTABLE);
    //  Node affinity may be set once when it was not.
    const cJSON *was = cJSON_GetObjectItemCaseSensitive (a, "nodeAffinity");
    const cJSON *now = cJSON_GetObjectItemCaseSensitive (b, "nodeAffinity");
    if (was && !s_same (was, now, true))
        sim_field_errors_add (errs, SIM_FIELD_INVALID, "nodeAffinity", now, S_IMMUTABLE);
}

// ---------------------------------------------------------------------------
// PersistentVolumeClaim

static void
s_pvc_create (const cJSON *obj, sim_field_errors_t *errs)
{
    static const char *const volume_modes[] = {"Block", "Filesystem", NULL};
    const cJSON *spec = sim_json_at (obj, "spec");
    s_check_access_modes (spec, "at least 1 access mode is required", errs);
    const cJSON *sel = cJSON_GetObjectItemCaseSensitive (spec, "selector");
    if (sel)
        s_check_label_selector (sel, "spec.selector", errs);
    const cJSON *storage = sim_json_at (spec, "resources.requests.storage");
    if (!storage)
        sim_field_errors_add (errs, SIM_FIELD_REQUIRED, "spec.resources[storage]", NULL, NULL);
    else
        s_check_storage_qty (storage, "spec.resources[storage]", false, errs);
    s_check_class_name (spec, errs);
    s_check_enum (spec, "volumeMode", "spec.volumeMode", volume_modes,
                  "supported values: \"Block\", \"Filesystem\"", errs);
}

static int64_t
s_bytes (const cJSON *v)
{
    int64_t bytes = -1;
    if (cJSON_IsString (v))
        bas_quantity_parse_value (v->valuestring, &bytes, NULL, 0);
    else if (cJSON_IsNumber (v))
        bytes = (int64_t)v->valuedouble;
    return bytes;
}

//  ValidatePersistentVolumeClaimUpdate: the spec as it was, but for a
//  volumeName set where there was none and, on a bound claim, the storage
//  request; a request that shrinks is refused on its own.
static void
s_pvc_update (const cJSON *old, const cJSON *obj, sim_field_errors_t *errs)
{
    cJSON *a = cJSON_Duplicate (sim_json_at (old, "spec"), true);
    cJSON *b = cJSON_Duplicate (sim_json_at (obj, "spec"), true);
    if (!a)
        a = cJSON_CreateObject ();
    if (!b)
        b = cJSON_CreateObject ();
    const char *vn = sim_json_str (a, "volumeName");
    if (!vn || !*vn) {
        cJSON_DeleteItemFromObjectCaseSensitive (a, "volumeName");
        cJSON_DeleteItemFromObjectCaseSensitive (b, "volumeName");
    }
    const char *phase = sim_json_str (obj, "status.phase");
    bool bound = phase && !strcmp (phase, "Bound");
    const cJSON *was = sim_json_at (old, "spec.resources.requests.storage");
    const cJSON *now = sim_json_at (obj, "spec.resources.requests.storage");
    if (bound && was && now) {
        cJSON *req = sim_json_at (b, "resources.requests");
        sim_json_set (req, "storage", cJSON_Duplicate (was, true));
    }
    if (!s_same (a, b, true))
        sim_field_errors_add (errs, SIM_FIELD_FORBIDDEN, "spec", NULL,
                              "spec is immutable after creation except resources.requests and "
                              "volumeAttributesClassName for bound claims");
    //  A smaller request is refused whether or not the claim is bound
    //  (the message of servers without RecoverVolumeExpansionFailure).
    if (was && now && s_bytes (now) >= 0 && s_bytes (now) < s_bytes (was))
        sim_field_errors_add (errs, SIM_FIELD_FORBIDDEN, "spec.resources.requests.storage", NULL,
                              "field can not be less than previous value");
    //  The real path here is "volumeMode", not "spec.volumeMode".
    const cJSON *mode = sim_json_at (obj, "spec.volumeMode");
    if (!s_same (sim_json_at (old, "spec.volumeMode"), mode, true))
        sim_field_errors_add (errs, SIM_FIELD_INVALID, "volumeMode", mode, S_IMMUTABLE);
    cJSON_Delete (a);
    cJSON_Delete (b);
}

// ---------------------------------------------------------------------------
// StorageClass

static void
s_sc_create (const cJSON *obj, sim_field_errors_t *errs)
{
    static const char *const policies[] = {"Delete", "Retain", NULL};
    static const char *const modes[] = {"Immediate", "WaitForFirstConsumer", NULL};
    const char *prov = sim_json_str (obj, "provisioner");
    if (!prov || !*prov)
        sim_field_errors_add (errs, SIM_FIELD_REQUIRED, "provisioner", NULL, NULL);
    else {
        //  IsQualifiedName of the lower-cased name; the errors show it as given.
        char lower[300];
        size_t i = 0;
        for (; prov[i] && i + 1 < sizeof lower; i++)
            lower[i] = (prov[i] >= 'A' && prov[i] <= 'Z') ? (char)(prov[i] - 'A' + 'a') : prov[i];
        lower[i] = 0;
        s_check_qualified_as (lower, prov, "provisioner", errs);
    }
    //  validateParameters: no empty key.
    const cJSON *p;
    cJSON_ArrayForEach (p, cJSON_GetObjectItemCaseSensitive (obj, "parameters"))
    {
        if (p->string && !*p->string)
            sim_field_errors_add_str (errs, SIM_FIELD_INVALID, "parameters", "",
                                      "field can not be empty.");
    }
    s_check_enum (obj, "reclaimPolicy", "reclaimPolicy", policies,
                  "supported values: \"Delete\", \"Retain\"", errs);
    const cJSON *mode = cJSON_GetObjectItemCaseSensitive (obj, "volumeBindingMode");
    if (!mode)
        sim_field_errors_add (errs, SIM_FIELD_REQUIRED, "volumeBindingMode", NULL, NULL);
    else
        s_check_enum (obj, "volumeBindingMode", "volumeBindingMode", modes,
                      "supported values: \"Immediate\", \"WaitForFirstConsumer\"", errs);
    int t = 0;
    const cJSON *term;
    cJSON_ArrayForEach (term, cJSON_GetObjectItemCaseSensitive (obj, "allowedTopologies"))
    {
        char field[200], vf[240];
        const cJSON *exprs = cJSON_GetObjectItemCaseSensitive (term, "matchLabelExpressions");
        snprintf (field, sizeof field, "allowedTopologies[%d].matchLabelExpressions", t++);
        if (!cJSON_IsArray (exprs) || cJSON_GetArraySize (exprs) == 0) {
            sim_field_errors_add (errs, SIM_FIELD_REQUIRED, field, NULL,
                                  "must contain at least one requirement");
            continue;
        }
        int r = 0;
        const cJSON *e;
        cJSON_ArrayForEach (e, exprs)
        {
            const char *key = sim_json_str (e, "key");
            s_path (vf, sizeof vf, "%s[%d].key", field, r);
            if (!key || !*key)
                sim_field_errors_add (errs, SIM_FIELD_REQUIRED, vf, NULL, NULL);
            else
                s_check_qualified (key, vf, errs);
            const cJSON *values = cJSON_GetObjectItemCaseSensitive (e, "values");
            s_path (vf, sizeof vf, "%s[%d].values", field, r++);
            if (!cJSON_IsArray (values) || cJSON_GetArraySize (values) == 0)
                sim_field_errors_add (errs, SIM_FIELD_REQUIRED, vf, NULL,
                                      "must specify as least one value");
        }
    }
}

static void
s_sc_update (const cJSON *old, const cJSON *obj, sim_field_errors_t *errs)
{
    static const char *const forbidden[] = {"parameters", "provisioner", "reclaimPolicy", NULL};
    for (int i = 0; forbidden[i]; i++)
        if (!s_same (cJSON_GetObjectItemCaseSensitive (old, forbidden[i]),
                     cJSON_GetObjectItemCaseSensitive (obj, forbidden[i]), true)) {
            char detail[80];
            snprintf (detail, sizeof detail, "updates to %s are forbidden.", forbidden[i]);
            sim_field_errors_add (errs, SIM_FIELD_FORBIDDEN, forbidden[i], NULL, detail);
        }
    const cJSON *mode = cJSON_GetObjectItemCaseSensitive (obj, "volumeBindingMode");
    if (!s_same (cJSON_GetObjectItemCaseSensitive (old, "volumeBindingMode"), mode, true))
        sim_field_errors_add (errs, SIM_FIELD_INVALID, "volumeBindingMode", mode, S_IMMUTABLE);
}

// ---------------------------------------------------------------------------
// CSINode and CSIDriver

//  validateCSINodeDriver: the name, the nodeID, allocatable.count, the
//  name unique in the list, then each topology key (whose errors name the
//  driver, not the key).
static void
s_csinode_create (const cJSON *obj, sim_field_errors_t *errs)
{
    const cJSON *drivers = sim_json_at (obj, "spec.drivers");
    int i = 0;
    const cJSON *d;
    cJSON_ArrayForEach (d, drivers)
    {
        char base[64], field[160];
        snprintf (base, sizeof base, "spec.drivers[%d]", i);
        const char *name = sim_json_str (d, "name");
        snprintf (field, sizeof field, "%s.name", base);
        s_check_csi_driver_name (name, field, errs);
        const char *node_id = sim_json_str (d, "nodeID");
        char idf[160];
        snprintf (idf, sizeof idf, "%s.nodeID", base);
        if (!node_id || !*node_id)
            sim_field_errors_add (errs, SIM_FIELD_REQUIRED, idf, NULL, NULL);
        else if (strlen (node_id) > S_NODE_ID_MAX) {
            char detail[64];
            snprintf (detail, sizeof detail, "must be %d characters or less", S_NODE_ID_MAX);
            sim_field_errors_add_str (errs, SIM_FIELD_INVALID, idf, node_id, detail);
        }
        const cJSON *count = sim_json_at (d, "allocatable.count");
        char cf[160];
        snprintf (cf, sizeof cf, "%s.allocatable.count", base);
        if (count && (!cJSON_IsNumber (count) || count->valuedouble < 0))
            sim_field_errors_add (errs, SIM_FIELD_INVALID, cf, count,
                                  "must be greater than or equal to 0");
        bool dup = false;
        const cJSON *e = drivers->child;
        for (int j = 0; j < i && e; j++, e = e->next) {
            const char *other = sim_json_str (e, "name");
            dup = dup || (name && other && !strcmp (name, other));
        }
        if (dup)
            sim_field_errors_add_str (errs, SIM_FIELD_DUPLICATE, field, name, NULL);
        const cJSON *keys = cJSON_GetObjectItemCaseSensitive (d, "topologyKeys");
        int k = 0;
        const cJSON *key;
        cJSON_ArrayForEach (key, keys)
        {
            const char *text = cJSON_IsString (key) ? key->valuestring : "";
            if (!*text)
                sim_field_errors_add_str (errs, SIM_FIELD_REQUIRED, base, text, NULL);
            bool seen = false;
            const cJSON *o = keys->child;
            for (int j = 0; j < k && o; j++, o = o->next)
                seen = seen || (cJSON_IsString (o) && !strcmp (o->valuestring, text));
            if (seen)
                sim_field_errors_add_str (errs, SIM_FIELD_DUPLICATE, base, text, NULL);
            s_check_qualified (text, base, errs);
            k++;
        }
        i++;
    }
}

//  ValidateCSINodeUpdate: a driver the old object had (by name) may not
//  change but for allocatable (the MutableCSINodeAllocatableCount rule);
//  the error is on spec.drivers and shows the new driver.
static void
s_csinode_update (const cJSON *old, const cJSON *obj, sim_field_errors_t *errs)
{
    const cJSON *o;
    cJSON_ArrayForEach (o, sim_json_at (old, "spec.drivers"))
    {
        const char *was = sim_json_str (o, "name");
        const cJSON *d;
        cJSON_ArrayForEach (d, sim_json_at (obj, "spec.drivers"))
        {
            const char *name = sim_json_str (d, "name");
            if (!name || !was || strcmp (name, was) != 0)
                continue;
            cJSON *a = cJSON_Duplicate (o, true), *b = cJSON_Duplicate (d, true);
            cJSON_DeleteItemFromObjectCaseSensitive (a, "allocatable");
            cJSON_DeleteItemFromObjectCaseSensitive (b, "allocatable");
            if (!s_same (a, b, true))
                sim_field_errors_add (errs, SIM_FIELD_INVALID, "spec.drivers", d, S_IMMUTABLE);
            cJSON_Delete (a);
            cJSON_Delete (b);
        }
    }
}

//  validateCSIDriverSpec: the defaulted booleans present, fsGroupPolicy
//  and volumeLifecycleModes known values. (metadata.name is a plain DNS
//  subdomain for this kind, checked with every kind's name.)
static void
s_csidriver_create (const cJSON *obj, sim_field_errors_t *errs)
{
    static const char *const policies[] = {"File", "None", "ReadWriteOnceWithFSType", NULL};
    static const char *const modes[] = {"Ephemeral", "Persistent", NULL};
    const cJSON *spec = sim_json_at (obj, "spec");
    //  The real path of attachRequired is spelled "attachedRequired".
    if (!cJSON_IsBool (cJSON_GetObjectItemCaseSensitive (spec, "attachRequired")))
        sim_field_errors_add (errs, SIM_FIELD_REQUIRED, "spec.attachedRequired", NULL, NULL);
    if (!cJSON_IsBool (cJSON_GetObjectItemCaseSensitive (spec, "podInfoOnMount")))
        sim_field_errors_add (errs, SIM_FIELD_REQUIRED, "spec.podInfoOnMount", NULL, NULL);
    if (!cJSON_IsBool (cJSON_GetObjectItemCaseSensitive (spec, "storageCapacity")))
        sim_field_errors_add (errs, SIM_FIELD_REQUIRED, "spec.storageCapacity", NULL, NULL);
    s_check_enum (spec, "fsGroupPolicy", "spec.fsGroupPolicy", policies,
                  "supported values: \"File\", \"None\", \"ReadWriteOnceWithFSType\"", errs);
    const cJSON *m;
    cJSON_ArrayForEach (m, cJSON_GetObjectItemCaseSensitive (spec, "volumeLifecycleModes"))
    {
        if (!cJSON_IsString (m) || !s_one_of (m->valuestring, modes))
            sim_field_errors_add (errs, SIM_FIELD_NOT_SUPPORTED, "spec.volumeLifecycleModes", m,
                                  "supported values: \"Persistent\", \"Ephemeral\"");
    }
}

//  ValidateCSIDriverUpdate: attachRequired and volumeLifecycleModes stay.
static void
s_csidriver_update (const cJSON *old, const cJSON *obj, sim_field_errors_t *errs)
{
    static const struct {
        const char *name;  // spec member
        const char *field; // the path the real error names
    } fixed[] = {{"attachRequired", "spec.attachedRequired"},
                 {"volumeLifecycleModes", "spec.volumeLifecycleModes"},
                 {NULL, NULL}};
    for (int i = 0; fixed[i].name; i++) {
        const cJSON *v = sim_json_at (obj, "spec");
        v = cJSON_GetObjectItemCaseSensitive (v, fixed[i].name);
        const cJSON *was =
            cJSON_GetObjectItemCaseSensitive (sim_json_at (old, "spec"), fixed[i].name);
        if (!s_same (was, v, true))
            sim_field_errors_add (errs, SIM_FIELD_INVALID, fixed[i].field, v, S_IMMUTABLE);
    }
}

// ---------------------------------------------------------------------------

void
sim_valid_storage_create (const sim_kind_t *kind, const cJSON *obj, sim_field_errors_t *errs)
{
    switch (kind->id) {
    case SIM_KIND_PERSISTENTVOLUMES:
        s_pv_create (obj, errs);
        break;
    case SIM_KIND_PERSISTENTVOLUMECLAIMS:
        s_pvc_create (obj, errs);
        break;
    case SIM_KIND_STORAGECLASSES:
        s_sc_create (obj, errs);
        break;
    case SIM_KIND_CSINODES:
        s_csinode_create (obj, errs);
        break;
    case SIM_KIND_CSIDRIVERS:
        s_csidriver_create (obj, errs);
        break;
    default:
        break;
    }
}

void
sim_valid_storage_update (const sim_kind_t *kind, const cJSON *old, const cJSON *obj,
                          sim_field_errors_t *errs)
{
    if (!sim_valid_storage_kind (kind))
        return;
    //  Update validation begins with the whole object's (the registries'
    //  ValidateUpdate call the create validation first).
    sim_valid_storage_create (kind, obj, errs);
    switch (kind->id) {
    case SIM_KIND_PERSISTENTVOLUMES:
        s_pv_update (old, obj, errs);
        break;
    case SIM_KIND_PERSISTENTVOLUMECLAIMS:
        s_pvc_update (old, obj, errs);
        break;
    case SIM_KIND_STORAGECLASSES:
        s_sc_update (old, obj, errs);
        break;
    case SIM_KIND_CSINODES:
        s_csinode_update (old, obj, errs);
        break;
    case SIM_KIND_CSIDRIVERS:
        s_csidriver_update (old, obj, errs);
        break;
    default:
        break;
    }
}
