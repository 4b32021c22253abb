/*  sim_valid: see sim_valid.h. Messages are apimachinery's
    (pkg/util/validation: IsDNS1123Subdomain, IsDNS1123Label, RegexError,
    MaxLenError) and kube-apiserver's pod validation field paths.
*/
#include "sim_valid.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "sim_obj.h"
#include "sim_valid_storage.h"

#define S_LABEL_FMT "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
#define S_LABEL_MAX 63
#define S_SUBDOMAIN_MAX 253
#define S_SUBDOMAIN_MSG SIM_VALID_SUBDOMAIN_MSG
#define S_LABEL_MSG                                                                                \
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "   \
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "     \
    "used for validation is '" S_LABEL_FMT "')"
#define S_DNS1035_FMT "[a-z]([-a-z0-9]*[a-z0-9])?"
#define S_DNS1035_MSG                                                                              \
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "   \
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "           \
    "'abc-123', regex used for validation is '" S_DNS1035_FMT "')"

static bool
s_alnum (char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

//  [a-z0-9]([-a-z0-9]*[a-z0-9])? over text[0..len).
static bool
s_is_label (const char *text, size_t len)
{
    if (len == 0 || !s_alnum (text[0]) || !s_alnum (text[len - 1]))
        return false;
    for (size_t i = 0; i < len; i++)
        if (!s_alnum (text[i]) && text[i] != '-')
            return false;
    return true;
}

//  Labels joined by '.'.
static bool
s_is_subdomain (const char *text)
{
    const char *start = text;
    for (const char *p = text;; p++) {
        if (*p == '.' || *p == 0) {
            if (!s_is_label (start, (size_t)(p - start)))
                return false;
            if (*p == 0)
                return true;
            start = p + 1;
        }
    }
}

bool
sim_valid_is_subdomain (const char *text)
{
    return s_is_subdomain (text);
}

//  The RBAC kinds' rule (path.IsValidPathSegmentName, or ...Prefix for a
//  generateName): anything that can be one segment of a URL path.
static void
s_check_path_segment (const char *name, bool prefix, const char *field, sim_field_errors_t *errs)
{
    if (!prefix && (!strcmp (name, ".") || !strcmp (name, ".."))) {
        sim_field_errors_add_str (errs, SIM_FIELD_INVALID, field, name,
                                  !strcmp (name, ".") ? "may not be '.'" : "may not be '..'");
        return;
    }
    if (strchr (name, '/'))
        sim_field_errors_add_str (errs, SIM_FIELD_INVALID, field, name, "may not contain '/'");
    if (strchr (name, '%'))
        sim_field_errors_add_str (errs, SIM_FIELD_INVALID, field, name, "may not contain '%'");
}

//  Add the errors of a name (or, with prefix, a generateName) on `field`,
//  by the kind's rule.
static void
s_check_name (const char *name, sim_name_rule_t rule, bool prefix, const char *field,
              sim_field_errors_t *errs)
{
    if (rule == SIM_NAME_PATH_SEGMENT) {
        s_check_path_segment (name, prefix, field, errs);
        return;
    }
    char masked[512];
    snprintf (masked, sizeof masked, "%s", name);
    size_t len = strlen (masked);
    //  A generateName may end in '-': it is checked as if the dash were a
    //  letter (maskTrailingDash).
    if (prefix && len > 1 && masked[len - 1] == '-')
        masked[len - 1] = 'a';
    size_t max = rule == SIM_NAME_SUBDOMAIN ? S_SUBDOMAIN_MAX : S_LABEL_MAX;
    if (strlen (name) > max) {
        char detail[64];
        snprintf (detail, sizeof detail, "must be no more than %zu characters", max);
        sim_field_errors_add_str (errs, SIM_FIELD_INVALID, field, name, detail);
    }
    if (rule == SIM_NAME_LABEL) {
        if (!s_is_label (masked, strlen (masked)))
            sim_field_errors_add_str (errs, SIM_FIELD_INVALID, field, name,
                                      s_is_subdomain (masked) ? "must not contain dots"
                                                              : S_LABEL_MSG);
    } else if (rule == SIM_NAME_DNS1035) {
        //  A DNS-1123 label that starts with a letter.
        if (!s_is_label (masked, strlen (masked)) || masked[0] < 'a' || masked[0] > 'z')
            sim_field_errors_add_str (errs, SIM_FIELD_INVALID, field, name, S_DNS1035_MSG);
    } else if (!s_is_subdomain (masked))
        sim_field_errors_add_str (errs, SIM_FIELD_INVALID, field, name, S_SUBDOMAIN_MSG);
}

void
sim_valid_meta (const sim_kind_t *kind, const cJSON *obj, sim_field_errors_t *errs)
{
    const char *gen = sim_json_str (obj, "metadata.generateName");
    if (gen && *gen)
        s_check_name (gen, kind->name_rule, true, "metadata.generateName", errs);
    const char *name = sim_json_str (obj, "metadata.name");
    if (!name || !*name)
        sim_field_errors_add (errs, SIM_FIELD_REQUIRED, "metadata.name", NULL,
                              "name or generateName is required");
    else
        s_check_name (name, kind->name_rule, false, "metadata.name", errs);
}

//  The containers of one list (spec.containers or spec.initContainers).
//  Names are unique across both lists: `seen` collects them.
static void
s_check_containers (const cJSON *list, const char *path, const char **seen, size_t *nseen,
                    size_t max_seen, sim_field_errors_t *errs)
{
    int i = 0;
    const cJSON *c;
    cJSON_ArrayForEach (c, list)
    {
        char field[256];
        const char *name = sim_json_str (c, "name");
        snprintf (field, sizeof field, "%s[%d].name", path, i);
        if (!name || !*name)
            sim_field_errors_add (errs, SIM_FIELD_REQUIRED, field, NULL, NULL);
        else {
            s_check_name (name, SIM_NAME_LABEL, false, field, errs);
            bool dup = false;
            for (size_t j = 0; j < *nseen && !dup; j++)
                dup = !strcmp (seen[j], name);
            if (dup)
                sim_field_errors_add_str (errs, SIM_FIELD_DUPLICATE, field, name, NULL);
            else if (*nseen < max_seen)
                seen[(*nseen)++] = name;
        }
        const char *image = sim_json_str (c, "image");
        if (!image || !*image) {
            snprintf (field, sizeof field, "%s[%d].image", path, i);
            sim_field_errors_add (errs, SIM_FIELD_REQUIRED, field, NULL, NULL);
        }
        i++;
    }
}

void
sim_valid_spec (const sim_kind_t *kind, const cJSON *obj, sim_field_errors_t *errs)
{
    if (sim_valid_storage_kind (kind)) {
        sim_valid_storage_create (kind, obj, errs);
        return;
    }
    if (kind->id != SIM_KIND_PODS)
        return;
    const char *seen[256];
    size_t nseen = 0;
    const cJSON *containers = sim_json_at (obj, "spec.containers");
    //  ValidatePodSpec's order: the containers (at least one), then the
    //  init containers, whose names may not repeat a container's.
    if (!cJSON_IsArray (containers) || cJSON_GetArraySize (containers) == 0)
        sim_field_errors_add (errs, SIM_FIELD_REQUIRED, "spec.containers", NULL, NULL);
    s_check_containers (containers, "spec.containers", seen, &nseen, 256, errs);
    s_check_containers (sim_json_at (obj, "spec.initContainers"), "spec.initContainers", seen,
                        &nseen, 256, errs);
    const cJSON *gates = sim_json_at (obj, "spec.schedulingGates");
    const char *node = sim_json_str (obj, "spec.nodeName");
    if (cJSON_GetArraySize (gates) > 0 && node && *node)
        sim_field_errors_add (errs, SIM_FIELD_FORBIDDEN, "spec.nodeName", NULL,
                              "cannot be set until all schedulingGates have been cleared");
}

void
sim_valid_update (const sim_kind_t *kind, const cJSON *old, const cJSON *obj, bool status_write,
                  sim_field_errors_t *errs)
{
    if (sim_valid_storage_kind (kind)) {
        if (!status_write)
            sim_valid_storage_update (kind, old, obj, errs);
        return;
    }
    if (kind->id != SIM_KIND_PODS)
        return;
    const cJSON *before = sim_json_at (old, "spec.schedulingGates");
    const cJSON *after = sim_json_at (obj, "spec.schedulingGates");
    int i = 0;
    for (const cJSON *g = cJSON_IsArray (after) ? after->child : NULL; g; g = g->next, i++) {
        const char *name = sim_json_str (g, "name");
        bool known = false;
        for (const cJSON *o = cJSON_IsArray (before) ? before->child : NULL; o && !known;
             o = o->next) {
            const char *was = sim_json_str (o, "name");
            known = name && was && strcmp (name, was) == 0;
        }
        if (known)
            continue;
        char field[64], detail[400];
        snprintf (field, sizeof field, "spec.schedulingGates[%d].name", i);
        snprintf (detail, sizeof detail,
                  "only deletion is allowed, but found new scheduling gate '%.300s'",
                  name ? name : "");
        sim_field_errors_add (errs, SIM_FIELD_FORBIDDEN, field, NULL, detail);
    }
}
