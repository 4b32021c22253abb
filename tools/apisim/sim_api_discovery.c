/*  sim_api_discovery: discovery documents (see the header).
 */
#include "sim_api_discovery.h"

#include "bas_util.h"
#include "sim_status.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const s_verbs[] = {"create", "delete", "deletecollection", "get",
                                      "list",   "patch",  "update",           "watch"};

static cJSON *
s_resource_entry (const char *name, const char *singular, bool namespaced, const char *kind,
                  const char *const *verbs, size_t nverbs, const char *short_names)
{
    cJSON *r = cJSON_CreateObject ();
    cJSON_AddStringToObject (r, "name", name);
    cJSON_AddStringToObject (r, "singularName", singular);
    cJSON_AddBoolToObject (r, "namespaced", namespaced);
    cJSON_AddStringToObject (r, "kind", kind);
    cJSON *v = cJSON_AddArrayToObject (r, "verbs");
    for (size_t i = 0; i < nverbs; i++)
        cJSON_AddItemToArray (v, cJSON_CreateString (verbs[i]));
    if (short_names && *short_names) {
        cJSON *s = cJSON_AddArrayToObject (r, "shortNames");
        char copy[128];
        snprintf (copy, sizeof copy, "%s", short_names);
        char *save = NULL;
        for (char *t = strtok_r (copy, ",", &save); t; t = strtok_r (NULL, ",", &save))
            cJSON_AddItemToArray (s, cJSON_CreateString (t));
    }
    return r;
}

void
sim_api_discovery_resources (sim_ctx_t *ctx, const char *group, const char *version)
{
    cJSON *list = cJSON_CreateObject ();
    cJSON_AddStringToObject (list, "kind", "APIResourceList");
    cJSON_AddStringToObject (list, "apiVersion", "v1");
    char gv[128];
    if (*group)
        snprintf (gv, sizeof gv, "%s/%s", group, version);
    else
        snprintf (gv, sizeof gv, "%s", version);
    cJSON_AddStringToObject (list, "groupVersion", gv);
    cJSON *res = cJSON_AddArrayToObject (list, "resources");
    static const char *const status_verbs[] = {"get", "patch", "update"};
    static const char *const create_verb[] = {"create"};
    bool any = false;
    for (int i = 0; i < SIM_KIND_COUNT; i++) {
        const sim_kind_t *k = sim_kind_get ((sim_kind_id_t)i);
        if (strcmp (k->group, group) != 0 || strcmp (k->version, version) != 0)
            continue;
        any = true;
        cJSON_AddItemToArray (res, s_resource_entry (k->resource, k->singular, k->namespaced,
                                                     k->kind, s_verbs, 8, k->short_names));
        char sub[96];
        if (k->id == SIM_KIND_PODS) {
            cJSON_AddItemToArray (res, s_resource_entry ("bindings", "binding", true, "Binding",
                                                         create_verb, 1, NULL));
            cJSON_AddItemToArray (
                res, s_resource_entry ("pods/binding", "", true, "Binding", create_verb, 1, NULL));
            cJSON *ev =
                s_resource_entry ("pods/eviction", "", true, "Eviction", create_verb, 1, NULL);
            cJSON_AddStringToObject (ev, "group", "policy");
            cJSON_AddStringToObject (ev, "version", "v1");
            cJSON_AddItemToArray (res, ev);
        }
        if (k->status_subresource) {
            snprintf (sub, sizeof sub, "%s/status", k->resource);
            cJSON_AddItemToArray (
                res, s_resource_entry (sub, "", k->namespaced, k->kind, status_verbs, 3, NULL));
        }
        if (k->id == SIM_KIND_DEPLOYMENTS || k->id == SIM_KIND_REPLICASETS) {
            snprintf (sub, sizeof sub, "%s/scale", k->resource);
            cJSON *sc = s_resource_entry (sub, "", true, "Scale", status_verbs, 3, NULL);
            cJSON_AddStringToObject (sc, "group", "autoscaling");
            cJSON_AddStringToObject (sc, "version", "v1");
            cJSON_AddItemToArray (res, sc);
        }
    }
    if (!any) {
        cJSON_Delete (list);
        sim_status_t st = {.code = 404,
                           .reason = "NotFound",
                           .message = "the server could not find the requested resource",
                           .details = true};
        sim_ctx_reply_status (ctx, &st);
        return;
    }
    sim_ctx_reply_json (ctx, list);
}

//  Groups other than core, in table order, without repeats.
static int
s_groups (const sim_kind_t **out)
{
    int n = 0;
    for (int i = 0; i < SIM_KIND_COUNT; i++) {
        const sim_kind_t *k = sim_kind_get ((sim_kind_id_t)i);
        if (!k->group[0])
            continue;
        bool seen = false;
        for (int j = 0; j < n; j++)
            if (strcmp (out[j]->group, k->group) == 0)
                seen = true;
        if (!seen)
            out[n++] = k;
    }
    return n;
}

static cJSON *
s_group_entry (const sim_kind_t *k)
{
    cJSON *g = cJSON_CreateObject ();
    cJSON_AddStringToObject (g, "name", k->group);
    cJSON *versions = cJSON_AddArrayToObject (g, "versions");
    cJSON *v = cJSON_CreateObject ();
    cJSON_AddStringToObject (v, "groupVersion", k->api_version);
    cJSON_AddStringToObject (v, "version", k->version);
    cJSON_AddItemToArray (versions, v);
    cJSON *pref = cJSON_AddObjectToObject (g, "preferredVersion");
    cJSON_AddStringToObject (pref, "groupVersion", k->api_version);
    cJSON_AddStringToObject (pref, "version", k->version);
    return g;
}

void
sim_api_discovery (sim_ctx_t *ctx, char **seg, int nseg)
{
    if (nseg == 1 && strcmp (seg[0], "api") == 0) {
        cJSON *v = cJSON_CreateObject ();
        cJSON_AddStringToObject (v, "kind", "APIVersions");
        cJSON *versions = cJSON_AddArrayToObject (v, "versions");
        cJSON_AddItemToArray (versions, cJSON_CreateString ("v1"));
        cJSON *addrs = cJSON_AddArrayToObject (v, "serverAddressByClientCIDRs");
        cJSON *a = cJSON_CreateObject ();
        char addr[64];
        snprintf (addr, sizeof addr, "127.0.0.1:%d", ctx->api->port);
        cJSON_AddStringToObject (a, "clientCIDR", "0.0.0.0/0");
        cJSON_AddStringToObject (a, "serverAddress", addr);
        cJSON_AddItemToArray (addrs, a);
        sim_ctx_reply_json (ctx, v);
        return;
    }
    const sim_kind_t *groups[SIM_KIND_COUNT];
    int ngroups = s_groups (groups);
    if (nseg == 1) {
        cJSON *list = cJSON_CreateObject ();
        cJSON_AddStringToObject (list, "kind", "APIGroupList");
        cJSON_AddStringToObject (list, "apiVersion", "v1");
        cJSON *arr = cJSON_AddArrayToObject (list, "groups");
        for (int i = 0; i < ngroups; i++)
            cJSON_AddItemToArray (arr, s_group_entry (groups[i]));
        sim_ctx_reply_json (ctx, list);
        return;
    }
    for (int i = 0; i < ngroups; i++)
        if (strcmp (groups[i]->group, seg[1]) == 0) {
            cJSON *g = s_group_entry (groups[i]);
            cJSON *out = cJSON_CreateObject ();
            cJSON_AddStringToObject (out, "kind", "APIGroup");
            cJSON_AddStringToObject (out, "apiVersion", "v1");
            for (cJSON *c = g->child; c;) {
                cJSON *next = c->next;
                cJSON_AddItemToObject (out, c->string, cJSON_DetachItemViaPointer (g, c));
                c = next;
            }
            cJSON_Delete (g);
            sim_ctx_reply_json (ctx, out);
            return;
        }
    sim_status_t st = {.code = 404,
                       .reason = "NotFound",
                       .message = "the server could not find the requested resource",
                       .details = true};
    sim_ctx_reply_status (ctx, &st);
}

void
sim_api_version (sim_ctx_t *ctx)
{
    cJSON *v = cJSON_CreateObject ();
    cJSON_AddStringToObject (v, "major", "1");
    cJSON_AddStringToObject (v, "minor", "31");
    cJSON_AddStringToObject (v, "gitVersion", "v1.31.0-basalt-apisim+" BASALT_VERSION);
    cJSON_AddStringToObject (v, "gitCommit", "0000000000000000000000000000000000000000");
    cJSON_AddStringToObject (v, "gitTreeState", "clean");
    cJSON_AddStringToObject (v, "buildDate", "2024-08-13T07:28:49Z");
    cJSON_AddStringToObject (v, "goVersion", "go1.22.5");
    cJSON_AddStringToObject (v, "compiler", "gc");
    cJSON_AddStringToObject (v, "platform", "linux/amd64");
    sim_ctx_reply_json (ctx, v);
}
