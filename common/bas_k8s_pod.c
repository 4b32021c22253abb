/*  bas_k8s_pod: the Pod decoder: requests, affinity, spread,
    tolerations, annotations, images, and what Basalt refuses.

    Each decoder reads one JSON object in a single pass with the readers of
    bas_k8s_json.h and builds its message as protobuf-c's unpacker would
    (bas_k8s_json.c's design note); NULL with err naming the object and field.
*/
#include "bas_k8s_pod.h"

#include "bas_k8s_ann.h"
#include "bas_k8s_json.h"
#include "bas_quantity.h"
#include "bas_resource.h"
#include "bas_util.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  Annotation and label prefixes whose entries a pod carries along.
#define S_PREFIX_VOLCANO "volcano.sh/"
#define S_PREFIX_SCHEDULING_VOLCANO "scheduling.volcano.sh/"

// ------------------------------------------------------------ pods

//  Keys of the annotations a pod carries along (volcano.sh/...).
static bool
s_is_volcano_key (const char *key)
{
    return strncmp (key, S_PREFIX_VOLCANO, sizeof S_PREFIX_VOLCANO - 1) == 0 ||
           strncmp (key, S_PREFIX_SCHEDULING_VOLCANO, sizeof S_PREFIX_SCHEDULING_VOLCANO - 1) == 0;
}

//  r = max(r, a) in every dimension.
static int
s_res_max (bas_k8s_json_t *ctx, bas_res_t *r, const bas_res_t *a)
{
    if (a->milli_cpu > r->milli_cpu)
        r->milli_cpu = a->milli_cpu;
    if (a->memory > r->memory)
        r->memory = a->memory;
    if (a->pods > r->pods)
        r->pods = a->pods;
    for (int i = 0; i < a->nscalars; i++)
        if (a->scalars[i].value > bas_res_scalar_get (r, a->scalars[i].name) &&
            bas_res_scalar_set (r, a->scalars[i].name, a->scalars[i].value) != BAS_RES_OK) {
            bas_k8s_json_fail (ctx, "too many scalar resources (at most %d)", BAS_RES_MAX_SCALARS);
            return -1;
        }
    return 0;
}

//  r += a, failing on overflow or too many scalars.
static int
s_res_add (bas_k8s_json_t *ctx, bas_res_t *r, const bas_res_t *a)
{
    int rc = bas_res_add (r, a);
    if (rc == BAS_RES_EOVERFLOW) {
        bas_k8s_json_fail (ctx, "requests overflow int64");
        return -1;
    }
    if (rc == BAS_RES_ETOOMANY) {
        bas_k8s_json_fail (ctx, "too many scalar resources (at most %d)", BAS_RES_MAX_SCALARS);
        return -1;
    }
    return 0;
}

//  One container's request: its requests, with limits standing in for
//  resources it has limits but no requests for (the API server's default).
//  *sidecar is set for an init container with restartPolicy Always.
static int
s_container (bas_k8s_json_t *ctx, const cJSON *c, const char *list, size_t index, bas_res_t *out,
             bool *sidecar)
{
    bas_res_zero (out);
    *sidecar = false;
    char path[96];
    snprintf (path, sizeof path, "spec.%s[%zu]", list, index);
    if (!cJSON_IsObject (c)) {
        bas_k8s_json_fail (ctx, "%s: expected an object, got %s", path, bas_k8s_json_type_name (c));
        return -1;
    }
    const cJSON *name = NULL, *resources = NULL, *policy = NULL;
    for (const cJSON *m = c->child; m; m = m->next) {
        const char *k = m->string ? m->string : "";
        if (strcmp (k, "name") == 0)
            name = m;
        else if (strcmp (k, "resources") == 0)
            resources = m;
        else if (strcmp (k, "restartPolicy") == 0)
            policy = m;
    }
    const char *cname, *restart;
    if (bas_k8s_json_peek_str (ctx, name, path, &cname) != 0 ||
        bas_k8s_json_peek_str (ctx, policy, path, &restart) != 0)
        return -1;
    *sidecar = restart && strcmp (restart, "Always") == 0;
    const cJSON *res;
    if (bas_k8s_json_object (ctx, resources, path, &res) != 0)
        return -1;
    if (!res)
        return 0;
    const cJSON *requests, *limits;
    if (bas_k8s_json_object (ctx, bas_k8s_json_get (res, "requests"), path, &requests) != 0 ||
        bas_k8s_json_object (ctx, bas_k8s_json_get (res, "limits"), path, &limits) != 0)
        return -1;

    char qc[BAS_K8S_QUOTE_MAX * 4 + 8];
    bas_quote (cname ? cname : "(no name)", qc, sizeof qc);
    const char *kind = strcmp (list, "containers") == 0 ? "container" : "init container";
    char where[1200], msg[2400];
    snprintf (where, sizeof where, "%s %s %s requests", ctx->what, kind, qc);
    if (bas_res_from_json (out, requests, where, msg, sizeof msg) != 0) {
        bas_k8s_json_fail_raw (ctx, msg);
        return -1;
    }
    if (!limits)
        return 0;
    bas_res_t lim;
    snprintf (where, sizeof where, "%s %s %s limits", ctx->what, kind, qc);
    if (bas_res_from_json (&lim, limits, where, msg, sizeof msg) != 0) {
        bas_k8s_json_fail_raw (ctx, msg);
        return -1;
    }
    if (!bas_k8s_json_get (requests, "cpu"))
        out->milli_cpu = lim.milli_cpu;
    if (!bas_k8s_json_get (requests, "memory"))
        out->memory = lim.memory;
    for (int i = 0; i < lim.nscalars; i++)
        if (!bas_k8s_json_get (requests, lim.scalars[i].name) &&
            bas_res_scalar_set (out, lim.scalars[i].name, lim.scalars[i].value) != BAS_RES_OK) {
            bas_k8s_json_fail (ctx, "%s: too many scalar resources (at most %d)", path,
                               BAS_RES_MAX_SCALARS);
            return -1;
        }
    return 0;
}

//  The pod's effective request, computed as Kubernetes does
//  (k8s.io/component-helpers resource.PodRequests): the sum of the
//  containers; each init container on top of the sidecars (restartable init
//  containers) started before it; sidecars also add to the running sum; the
//  larger of the two; plus spec.overhead; and one pod slot.
static int
s_pod_requests (bas_k8s_json_t *ctx, const cJSON *containers, const cJSON *inits,
                const cJSON *overhead, Basalt__V1__Resources **out)
{
    bas_res_t sum, one;
    bas_res_zero (&sum);
    size_t i = 0;
    bool sidecar;
    for (const cJSON *c = containers ? containers->child : NULL; c; c = c->next, i++)
        if (s_container (ctx, c, "containers", i, &one, &sidecar) != 0 ||
            s_res_add (ctx, &sum, &one) != 0)
            return -1;
    bas_res_t sidecars, init_max;
    bas_res_zero (&sidecars);
    bas_res_zero (&init_max);
    i = 0;
    for (const cJSON *c = inits ? inits->child : NULL; c; c = c->next, i++) {
        if (s_container (ctx, c, "initContainers", i, &one, &sidecar) != 0)
            return -1;
        if (sidecar) {
            if (s_res_add (ctx, &sum, &one) != 0 || s_res_add (ctx, &sidecars, &one) != 0)
                return -1;
            one = sidecars;
        } else if (s_res_add (ctx, &one, &sidecars) != 0)
            return -1;
        if (s_res_max (ctx, &init_max, &one) != 0)
            return -1;
    }
    if (s_res_max (ctx, &sum, &init_max) != 0)
        return -1;
    if (overhead) {
        char where[800], msg[2400];
        snprintf (where, sizeof where, "%s spec.overhead", ctx->what);
        if (bas_res_from_json (&one, overhead, where, msg, sizeof msg) != 0) {
            bas_k8s_json_fail_raw (ctx, msg);
            return -1;
        }
        if (s_res_add (ctx, &sum, &one) != 0)
            return -1;
    }
    sum.pods = 1;
    *out = bas_res_to_proto (&sum);
    if (!*out) {
        bas_k8s_json_fail (ctx, "out of memory");
        return -1;
    }
    return 0;
}

//  spec.tolerations to Toleration messages.
static int
s_tolerations (bas_k8s_json_t *ctx, const cJSON *list, Basalt__V1__Pod *pod)
{
    size_t n = bas_k8s_json_count (list);
    if (n == 0)
        return 0;
    pod->tolerations = bas_k8s_json_alloc_array (ctx, n, sizeof *pod->tolerations);
    if (!pod->tolerations)
        return -1;
    size_t i = 0;
    for (const cJSON *t = list->child; t; t = t->next, i++) {
        char path[64];
        snprintf (path, sizeof path, "spec.tolerations[%zu]", i);
        if (!cJSON_IsObject (t)) {
            bas_k8s_json_fail (ctx, "%s: expected an object, got %s", path,
                               bas_k8s_json_type_name (t));
            return -1;
        }
        Basalt__V1__Toleration *tol = bas_k8s_json_alloc (ctx, sizeof *tol);
        if (!tol)
            return -1;
        basalt__v1__toleration__init (tol);
        pod->tolerations[pod->n_tolerations++] = tol;
        for (const cJSON *m = t->child; m; m = m->next) {
            const char *k = m->string ? m->string : "";
            int rc = 0;
            if (strcmp (k, "key") == 0)
                rc = bas_k8s_json_str (ctx, m, path, &tol->key);
            else if (strcmp (k, "operator") == 0)
                rc = bas_k8s_json_str (ctx, m, path, &tol->operator_);
            else if (strcmp (k, "value") == 0)
                rc = bas_k8s_json_str (ctx, m, path, &tol->value);
            else if (strcmp (k, "effect") == 0)
                rc = bas_k8s_json_str (ctx, m, path, &tol->effect);
            if (rc != 0)
                return -1;
        }
    }
    return 0;
}

//  One PodAffinityTerm object to a message.
static int
s_pod_term (bas_k8s_json_t *ctx, const cJSON *t, const char *path,
            Basalt__V1__PodAffinityTerm **out)
{
    if (!cJSON_IsObject (t)) {
        bas_k8s_json_fail (ctx, "%s: expected an object, got %s", path, bas_k8s_json_type_name (t));
        return -1;
    }
    Basalt__V1__PodAffinityTerm *term = bas_k8s_json_alloc (ctx, sizeof *term);
    if (!term)
        return -1;
    basalt__v1__pod_affinity_term__init (term);
    *out = term;
    const cJSON *namespaces;
    if (bas_k8s_json_label_selector (ctx, bas_k8s_json_get (t, "labelSelector"), path,
                                     &term->label_selector) != 0 ||
        bas_k8s_json_label_selector (ctx, bas_k8s_json_get (t, "namespaceSelector"), path,
                                     &term->namespace_selector) != 0 ||
        bas_k8s_json_str (ctx, bas_k8s_json_get (t, "topologyKey"), path, &term->topology_key) !=
            0 ||
        bas_k8s_json_array (ctx, bas_k8s_json_get (t, "namespaces"), path, &namespaces) != 0 ||
        bas_k8s_json_str_list (ctx, namespaces, path, &term->namespaces, &term->n_namespaces) != 0)
        return -1;
    if (!term->topology_key || !*term->topology_key) {
        bas_k8s_json_fail (ctx, "%s: topologyKey: required", path);
        return -1;
    }
    return 0;
}

//  A weight of a preferred term: 1-100.
static int
s_weight (bas_k8s_json_t *ctx, const cJSON *item, const char *path, int32_t *out)
{
    protobuf_c_boolean has = 0;
    if (bas_k8s_json_int32 (ctx, item, path, out, &has) != 0)
        return -1;
    if (!has || *out < 1 || *out > 100) {
        bas_k8s_json_fail (ctx, "%s: weight: must be from 1 to 100", path);
        return -1;
    }
    return 0;
}

//  spec.affinity.<which>.requiredDuringSchedulingIgnoredDuringExecution (a
//  list of PodAffinityTerms) and .preferredDuringScheduling... (weighted
//  ones) to messages.
static int
s_pod_terms (bas_k8s_json_t *ctx, const cJSON *affinity, const char *which,
             Basalt__V1__PodAffinityTerm ***out, size_t *n_out,
             Basalt__V1__WeightedPodAffinityTerm ***pref, size_t *n_pref)
{
    char path[128];
    snprintf (path, sizeof path, "spec.affinity.%s.requiredDuringSchedulingIgnoredDuringExecution",
              which);
    const cJSON *pa, *terms, *preferred;
    if (bas_k8s_json_object (ctx, bas_k8s_json_get (affinity, which), path, &pa) != 0 ||
        bas_k8s_json_array (ctx,
                            bas_k8s_json_get (pa, "requiredDuringSchedulingIgnoredDuringExecution"),
                            path, &terms) != 0)
        return -1;
    size_t n = bas_k8s_json_count (terms);
    if (n) {
        *out = bas_k8s_json_alloc_array (ctx, n, sizeof **out);
        if (!*out)
            return -1;
        for (const cJSON *t = terms->child; t; t = t->next)
            if (s_pod_term (ctx, t, path, &(*out)[(*n_out)++]) != 0)
                return -1;
    }
    snprintf (path, sizeof path, "spec.affinity.%s.preferredDuringSchedulingIgnoredDuringExecution",
              which);
    if (bas_k8s_json_array (
            ctx, bas_k8s_json_get (pa, "preferredDuringSchedulingIgnoredDuringExecution"), path,
            &preferred) != 0)
        return -1;
    n = bas_k8s_json_count (preferred);
    if (n == 0)
        return 0;
    *pref = bas_k8s_json_alloc_array (ctx, n, sizeof **pref);
    if (!*pref)
        return -1;
    for (const cJSON *t = preferred->child; t; t = t->next) {
        if (!cJSON_IsObject (t)) {
            bas_k8s_json_fail (ctx, "%s: expected an object, got %s", path,
                               bas_k8s_json_type_name (t));
            return -1;
        }
        Basalt__V1__WeightedPodAffinityTerm *w = bas_k8s_json_alloc (ctx, sizeof *w);
        if (!w)
            return -1;
        basalt__v1__weighted_pod_affinity_term__init (w);
        (*pref)[(*n_pref)++] = w;
        w->has_weight = 1;
        if (s_weight (ctx, bas_k8s_json_get (t, "weight"), path, &w->weight) != 0 ||
            s_pod_term (ctx, bas_k8s_json_get (t, "podAffinityTerm"), path, &w->term) != 0)
            return -1;
    }
    return 0;
}

//  spec.topologySpreadConstraints to messages.
static int
s_spread (bas_k8s_json_t *ctx, const cJSON *list, Basalt__V1__Pod *pod)
{
    size_t n = bas_k8s_json_count (list);
    if (n == 0)
        return 0;
    pod->placement->topology_spread =
        bas_k8s_json_alloc_array (ctx, n, sizeof *pod->placement->topology_spread);
    if (!pod->placement->topology_spread)
        return -1;
    size_t i = 0;
    for (const cJSON *e = list->child; e; e = e->next, i++) {
        char path[64];
        snprintf (path, sizeof path, "spec.topologySpreadConstraints[%zu]", i);
        if (!cJSON_IsObject (e)) {
            bas_k8s_json_fail (ctx, "%s: expected an object, got %s", path,
                               bas_k8s_json_type_name (e));
            return -1;
        }
        Basalt__V1__TopologySpreadConstraint *c = bas_k8s_json_alloc (ctx, sizeof *c);
        if (!c)
            return -1;
        basalt__v1__topology_spread_constraint__init (c);
        pod->placement->topology_spread[pod->placement->n_topology_spread++] = c;
        const cJSON *keys;
        if (bas_k8s_json_int32 (ctx, bas_k8s_json_get (e, "maxSkew"), path, &c->max_skew,
                                &c->has_max_skew) != 0 ||
            bas_k8s_json_str (ctx, bas_k8s_json_get (e, "topologyKey"), path, &c->topology_key) !=
                0 ||
            bas_k8s_json_str (ctx, bas_k8s_json_get (e, "whenUnsatisfiable"), path,
                              &c->when_unsatisfiable) != 0 ||
            bas_k8s_json_label_selector (ctx, bas_k8s_json_get (e, "labelSelector"), path,
                                         &c->label_selector) != 0 ||
            bas_k8s_json_int32 (ctx, bas_k8s_json_get (e, "minDomains"), path, &c->min_domains,
                                &c->has_min_domains) != 0 ||
            bas_k8s_json_str (ctx, bas_k8s_json_get (e, "nodeAffinityPolicy"), path,
                              &c->node_affinity_policy) != 0 ||
            bas_k8s_json_str (ctx, bas_k8s_json_get (e, "nodeTaintsPolicy"), path,
                              &c->node_taints_policy) != 0 ||
            bas_k8s_json_array (ctx, bas_k8s_json_get (e, "matchLabelKeys"), path, &keys) != 0 ||
            bas_k8s_json_str_list (ctx, keys, path, &c->match_label_keys, &c->n_match_label_keys) !=
                0)
            return -1;
        if (!c->topology_key || !*c->topology_key) {
            bas_k8s_json_fail (ctx, "%s: topologyKey: required", path);
            return -1;
        }
        if (!c->has_max_skew || c->max_skew < 1) {
            bas_k8s_json_fail (ctx, "%s: maxSkew: must be at least 1", path);
            return -1;
        }
        if (c->has_min_domains && c->min_domains < 1) {
            bas_k8s_json_fail (ctx, "%s: minDomains: must be at least 1", path);
            return -1;
        }
    }
    return 0;
}

//  Whether a container of the list holds its ports while the pod runs:
//  every one of spec.containers, and of spec.initContainers the sidecars
//  (restartPolicy Always), which run beside them; an ordinary init
//  container has ended by then (kube-scheduler's NodePorts).
static bool
s_holds_ports (const cJSON *c, bool init)
{
    if (!init)
        return true;
    const cJSON *policy = bas_k8s_json_get (c, "restartPolicy");
    return cJSON_IsString (policy) && strcmp (policy->valuestring, "Always") == 0;
}

static size_t
s_count_host_ports (const cJSON *c)
{
    size_t n = 0;
    const cJSON *ports = bas_k8s_json_get (c, "ports");
    for (const cJSON *p = cJSON_IsArray (ports) ? ports->child : NULL; p; p = p->next)
        if (cJSON_IsNumber (bas_k8s_json_get (p, "hostPort")) &&
            bas_k8s_json_get (p, "hostPort")->valuedouble > 0)
            n++;
    return n;
}

//  The host ports of one container (of list `list`, for messages).
static int
s_add_host_ports (bas_k8s_json_t *ctx, const cJSON *c, const char *list, Basalt__V1__Pod *pod)
{
    char path[64];
    snprintf (path, sizeof path, "spec.%s[].ports[]", list);
    const cJSON *ports = bas_k8s_json_get (c, "ports");
    for (const cJSON *p = cJSON_IsArray (ports) ? ports->child : NULL; p; p = p->next) {
        const cJSON *hp = bas_k8s_json_get (p, "hostPort");
        if (!cJSON_IsNumber (hp) || hp->valuedouble <= 0)
            continue;
        if (hp->valuedouble > 65535) {
            bas_k8s_json_fail (ctx, "%s.hostPort: %g is not a port number", path, hp->valuedouble);
            return -1;
        }
        Basalt__V1__HostPort *port = bas_k8s_json_alloc (ctx, sizeof *port);
        if (!port)
            return -1;
        basalt__v1__host_port__init (port);
        pod->placement->host_ports[pod->placement->n_host_ports++] = port;
        port->has_port = 1;
        port->port = (int32_t)hp->valuedouble;
        char where[80];
        snprintf (where, sizeof where, "%s.protocol", path);
        if (bas_k8s_json_str (ctx, bas_k8s_json_get (p, "protocol"), where, &port->protocol) != 0)
            return -1;
        snprintf (where, sizeof where, "%s.hostIP", path);
        if (bas_k8s_json_str (ctx, bas_k8s_json_get (p, "hostIP"), where, &port->host_ip) != 0)
            return -1;
    }
    return 0;
}

//  The host ports the running pod holds: its containers' and its sidecars'
//  (s_holds_ports). pod->placement exists when there is one (the caller
//  made it for any such container with ports).
static int
s_host_ports (bas_k8s_json_t *ctx, const cJSON *containers, const cJSON *inits,
              Basalt__V1__Pod *pod)
{
    const cJSON *lists[2] = {containers, inits};
    const char *names[2] = {"containers", "initContainers"};
    size_t n = 0;
    for (int l = 0; l < 2; l++)
        for (const cJSON *c = lists[l] ? lists[l]->child : NULL; c; c = c->next)
            if (s_holds_ports (c, l == 1))
                n += s_count_host_ports (c);
    if (n == 0)
        return 0;
    pod->placement->host_ports =
        bas_k8s_json_alloc_array (ctx, n, sizeof *pod->placement->host_ports);
    if (!pod->placement->host_ports)
        return -1;
    for (int l = 0; l < 2; l++)
        for (const cJSON *c = lists[l] ? lists[l]->child : NULL; c; c = c->next)
            if (s_holds_ports (c, l == 1) && s_add_host_ports (ctx, c, names[l], pod) != 0)
                return -1;
    return 0;
}

//  spec.affinity: nodeAffinity's required nodeSelectorTerms to
//  NodeSelectorTerm messages, podAffinity's and podAntiAffinity's required
//  terms to PodAffinityTerms.
static int
s_affinity (bas_k8s_json_t *ctx, const cJSON *affinity, Basalt__V1__Pod *pod)
{
    if (s_pod_terms (ctx, affinity, "podAffinity", &pod->placement->pod_affinity,
                     &pod->placement->n_pod_affinity, &pod->placement->preferred_pod_affinity,
                     &pod->placement->n_preferred_pod_affinity) != 0 ||
        s_pod_terms (ctx, affinity, "podAntiAffinity", &pod->placement->pod_anti_affinity,
                     &pod->placement->n_pod_anti_affinity,
                     &pod->placement->preferred_pod_anti_affinity,
                     &pod->placement->n_preferred_pod_anti_affinity) != 0)
        return -1;
    static const char path[] = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
                               "Execution.nodeSelectorTerms";
    static const char ppath[] = "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnored"
                                "DuringExecution";
    const cJSON *na, *req, *terms, *preferred;
    if (bas_k8s_json_object (ctx, bas_k8s_json_get (affinity, "nodeAffinity"),
                             "spec.affinity.nodeAffinity", &na) != 0 ||
        bas_k8s_json_object (
            ctx, bas_k8s_json_get (na, "requiredDuringSchedulingIgnoredDuringExecution"), path,
            &req) != 0 ||
        bas_k8s_json_array (ctx, bas_k8s_json_get (req, "nodeSelectorTerms"), path, &terms) != 0 ||
        bas_k8s_json_array (
            ctx, bas_k8s_json_get (na, "preferredDuringSchedulingIgnoredDuringExecution"), ppath,
            &preferred) != 0)
        return -1;
    size_t n = bas_k8s_json_count (terms);
    if (n) {
        pod->affinity_terms = bas_k8s_json_alloc_array (ctx, n, sizeof *pod->affinity_terms);
        if (!pod->affinity_terms)
            return -1;
        for (const cJSON *t = terms->child; t; t = t->next)
            if (bas_k8s_json_node_term (ctx, t, path,
                                        &pod->affinity_terms[pod->n_affinity_terms++]) != 0)
                return -1;
    }
    n = bas_k8s_json_count (preferred);
    if (n == 0)
        return 0;
    pod->placement->preferred_node_affinity =
        bas_k8s_json_alloc_array (ctx, n, sizeof *pod->placement->preferred_node_affinity);
    if (!pod->placement->preferred_node_affinity)
        return -1;
    for (const cJSON *t = preferred->child; t; t = t->next) {
        if (!cJSON_IsObject (t)) {
            bas_k8s_json_fail (ctx, "%s: expected an object, got %s", ppath,
                               bas_k8s_json_type_name (t));
            return -1;
        }
        Basalt__V1__PreferredSchedulingTerm *p = bas_k8s_json_alloc (ctx, sizeof *p);
        if (!p)
            return -1;
        basalt__v1__preferred_scheduling_term__init (p);
        pod->placement->preferred_node_affinity[pod->placement->n_preferred_node_affinity++] = p;
        p->has_weight = 1;
        if (s_weight (ctx, bas_k8s_json_get (t, "weight"), ppath, &p->weight) != 0 ||
            bas_k8s_json_node_term (ctx, bas_k8s_json_get (t, "preference"), ppath,
                                    &p->preference) != 0)
            return -1;
    }
    return 0;
}

static int
s_label_cmp (const void *a, const void *b)
{
    return strcmp ((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

//  metadata.labels to "key=value" lines sorted by key (see the Pod message).
//  A key with '=' or a line break, or a value with a line break, is not a
//  Kubernetes label and is refused.
static int
s_labels_packed (bas_k8s_json_t *ctx, const cJSON *map, char **out)
{
    size_t n = 0, len = 0;
    for (const cJSON *c = map ? map->child : NULL; c; c = c->next) {
        if (!c->string)
            continue;
        char q[BAS_K8S_QUOTE_MAX * 4 + 8];
        if (!cJSON_IsString (c) || !c->valuestring) {
            bas_quote (c->string, q, sizeof q);
            bas_k8s_json_fail (ctx, "metadata.labels[\"%s\"]: expected a string, got %s", q,
                               bas_k8s_json_type_name (c));
            return -1;
        }
        if (!*c->string || strpbrk (c->string, "=\n") || strchr (c->valuestring, '\n')) {
            bas_quote (c->string, q, sizeof q);
            bas_k8s_json_fail (ctx, "metadata.labels[\"%s\"]: not a valid label", q);
            return -1;
        }
        n++;
        len += strlen (c->string) + strlen (c->valuestring) + 2;
    }
    if (n == 0)
        return 0;
    const cJSON **items = malloc (n * sizeof *items);
    char *text = malloc (len);
    if (!items || !text) {
        free (items);
        free (text);
        bas_k8s_json_fail (ctx, "out of memory");
        return -1;
    }
    size_t i = 0;
    for (const cJSON *c = map->child; c; c = c->next)
        if (c->string)
            items[i++] = c;
    qsort (items, n, sizeof *items, s_label_cmp);
    char *at = text;
    for (i = 0; i < n; i++)
        at += sprintf (at, "%s%s=%s", i ? "\n" : "", items[i]->string, items[i]->valuestring);
    free (items);
    *out = text;
    return 0;
}

//  Fields taken from the pod's annotations (and labels, as fallbacks).
static int
s_pod_annotations (bas_k8s_json_t *ctx, const bas_k8s_meta_t *m, Basalt__V1__Pod *pod)
{
    const char *group, *task, *queue, *preempt, *min_member;
    if (bas_k8s_json_map_str (ctx, m->annotations, "metadata.annotations", BAS_ANN_GROUP_NAME,
                              &group) ||
        bas_k8s_json_map_str (ctx, m->annotations, "metadata.annotations", BAS_ANN_TASK_SPEC,
                              &task) ||
        bas_k8s_json_map_str (ctx, m->annotations, "metadata.annotations", BAS_ANN_QUEUE_NAME,
                              &queue) ||
        bas_k8s_json_map_str (ctx, m->annotations, "metadata.annotations", BAS_ANN_PREEMPTABLE,
                              &preempt) ||
        bas_k8s_json_map_str (ctx, m->annotations, "metadata.annotations", BAS_ANN_MIN_MEMBER,
                              &min_member))
        return -1;
    if (!task &&
        bas_k8s_json_map_str (ctx, m->labels, "metadata.labels", BAS_ANN_TASK_SPEC, &task) != 0)
        return -1;
    if (!preempt && bas_k8s_json_map_str (ctx, m->labels, "metadata.labels", BAS_ANN_PREEMPTABLE,
                                          &preempt) != 0)
        return -1;
    if (bas_k8s_json_set_str (ctx, &pod->group, group) ||
        bas_k8s_json_set_str (ctx, &pod->task_role, task) ||
        bas_k8s_json_set_str (ctx, &pod->queue_annotation, queue) ||
        bas_k8s_json_set_str (ctx, &pod->preemptable, preempt) ||
        bas_k8s_json_set_str (ctx, &pod->min_member_annotation, min_member))
        return -1;
    return bas_k8s_json_kv_list (ctx, m->annotations, "metadata.annotations", s_is_volcano_key,
                                 &pod->volcano_annotations, &pod->n_volcano_annotations);
}

//  The image of every container into pod->images, init containers first
//  (see the Pod message), normalised as kube-scheduler's ImageLocality
//  normalises it: a name whose last ':' does not come after its last '/'
//  has neither tag nor digest and gets ":latest" ("" too, as Kubernetes
//  does). The containers are objects (s_pod_requests checked them); an
//  image that is not a string is an error naming the container. Called
//  for pods not bound yet only: the score reads no other pod's images,
//  and bound pods are most of a cluster's.
static int
s_pod_images (bas_k8s_json_t *ctx, const cJSON *inits, const cJSON *containers,
              Basalt__V1__Pod *pod)
{
    size_t n = bas_k8s_json_count (inits) + bas_k8s_json_count (containers);
    if (n == 0)
        return 0;
    pod->images = bas_k8s_json_alloc_array (ctx, n, sizeof *pod->images);
    if (!pod->images)
        return -1;
    const cJSON *const lists[] = {inits, containers};
    const char *const list_names[] = {"initContainers", "containers"};
    for (size_t l = 0; l < 2; l++) {
        size_t i = 0;
        for (const cJSON *c = lists[l] ? lists[l]->child : NULL; c; c = c->next, i++) {
            const cJSON *item = bas_k8s_json_get (c, "image");
            const char *image = "";
            if (item && !cJSON_IsNull (item)) {
                if (!cJSON_IsString (item) || !item->valuestring) {
                    bas_k8s_json_fail (ctx, "spec.%s[%zu].image: expected a string, got %s",
                                       list_names[l], i, bas_k8s_json_type_name (item));
                    return -1;
                }
                image = item->valuestring;
            }
            const char *colon = strrchr (image, ':'), *slash = strrchr (image, '/');
            bool untagged = !colon || (slash && colon < slash);
            size_t len = strlen (image);
            char *copy = bas_k8s_json_alloc (ctx, len + (untagged ? sizeof ":latest" : 1));
            if (!copy)
                return -1;
            memcpy (copy, image, len);
            if (untagged)
                memcpy (copy + len, ":latest", sizeof ":latest");
            else
                copy[len] = '\0';
            pod->images[pod->n_images++] = copy;
        }
    }
    return 0;
}

//  spec.schedulingGates: each entry's name. A gate is an object with a
//  non-empty name (the API server's validation); anything else is an error.
static int
s_scheduling_gates (bas_k8s_json_t *ctx, const cJSON *list, Basalt__V1__Pod *pod)
{
    size_t n = bas_k8s_json_count (list);
    if (n == 0)
        return 0;
    pod->scheduling_gates = bas_k8s_json_alloc_array (ctx, n, sizeof *pod->scheduling_gates);
    if (!pod->scheduling_gates)
        return -1;
    size_t i = 0;
    for (const cJSON *g = list->child; g; g = g->next, i++) {
        char path[48];
        snprintf (path, sizeof path, "spec.schedulingGates[%zu]", i);
        const char *name;
        if (!cJSON_IsObject (g)) {
            bas_k8s_json_fail (ctx, "%s: expected an object, got %s", path,
                               bas_k8s_json_type_name (g));
            return -1;
        }
        if (bas_k8s_json_peek_str (ctx, bas_k8s_json_get (g, "name"), path, &name) != 0)
            return -1;
        if (!name || !*name) {
            bas_k8s_json_fail (ctx, "%s.name: required", path);
            return -1;
        }
        char *copy = bas_k8s_json_dup (ctx, name);
        if (!copy)
            return -1;
        pod->scheduling_gates[pod->n_scheduling_gates++] = copy;
    }
    return 0;
}

//  Volume sources whose placement kube-scheduler decides (VolumeZone,
//  VolumeRestrictions, NodeVolumeLimits) and Basalt does not yet: a pod
//  with one is held, not bound where its disk cannot follow. Claims
//  (persistentVolumeClaim, ephemeral) are read into pod->claims instead:
//  the session decides them as VolumeBinding does.
static const struct {
    const char *key;  // the volume source's member name
    const char *what; // what the scheduler would have to do with it
} s_held_volumes[] = {
    {"gcePersistentDisk", "a GCE persistent disk (volume restrictions are not implemented)"},
    {"awsElasticBlockStore", "an AWS EBS volume (volume restrictions are not implemented)"},
    {"azureDisk", "an Azure disk (node volume limits are not implemented)"},
    {"rbd", "an RBD volume (volume restrictions are not implemented)"},
    {"iscsi", "an iSCSI volume (volume restrictions are not implemented)"},
    {"cinder", "a Cinder volume (node volume limits are not implemented)"},
};

//  The claims of a pod's volumes, in order: a
//  persistentVolumeClaim's claimName, a generic ephemeral volume's
//  "<pod>-<volume>" (the name the ephemeral volume controller gives it).
static int
s_pod_claims (bas_k8s_json_t *ctx, const cJSON *volumes, Basalt__V1__Pod *pod)
{
    size_t n = 0;
    for (const cJSON *v = cJSON_IsArray (volumes) ? volumes->child : NULL; v; v = v->next)
        n += bas_k8s_json_get (v, "persistentVolumeClaim") || bas_k8s_json_get (v, "ephemeral");
    if (n == 0)
        return 0;
    pod->claims = bas_k8s_json_alloc_array (ctx, n, sizeof *pod->claims);
    if (!pod->claims)
        return -1;
    size_t i = 0;
    for (const cJSON *v = volumes->child; v; v = v->next, i++) {
        const cJSON *pvc = bas_k8s_json_get (v, "persistentVolumeClaim");
        const cJSON *eph = bas_k8s_json_get (v, "ephemeral");
        if (!pvc && !eph)
            continue;
        char path[96], name[512];
        const char *text;
        if (pvc) {
            snprintf (path, sizeof path, "spec.volumes[%zu].persistentVolumeClaim.claimName", i);
            if (bas_k8s_json_peek_str (ctx, bas_k8s_json_get (pvc, "claimName"), path, &text) != 0)
                return -1;
        } else {
            snprintf (path, sizeof path, "spec.volumes[%zu].name", i);
            if (bas_k8s_json_peek_str (ctx, bas_k8s_json_get (v, "name"), path, &text) != 0)
                return -1;
        }
        if (!text || !*text) {
            bas_k8s_json_fail (ctx, "%s: required", path);
            return -1;
        }
        if (eph && !pvc)
            snprintf (name, sizeof name, "%.200s-%.200s", pod->name ? pod->name : "", text);
        else
            snprintf (name, sizeof name, "%.500s", text);
        Basalt__V1__PodClaim *c = bas_k8s_json_alloc (ctx, sizeof *c);
        if (!c)
            return -1;
        basalt__v1__pod_claim__init (c);
        pod->claims[pod->n_claims++] = c;
        c->has_ephemeral = 1;
        c->ephemeral = eph && !pvc;
        if (bas_k8s_json_set_str (ctx, &c->name, name) != 0)
            return -1;
    }
    return 0;
}

//  The first thing of an unbound pod's spec that Basalt cannot honour and
//  that changes where the pod may run (README "Inputs Basalt refuses"),
//  written to pod->unsupported as "<path>: <what>"; nothing when none.
static int
s_pod_unsupported (bas_k8s_json_t *ctx, const cJSON *spec, Basalt__V1__Pod *pod)
{
    char text[512];
    const cJSON *claims = bas_k8s_json_get (spec, "resourceClaims");
    if (cJSON_IsArray (claims) && cJSON_GetArraySize (claims) > 0) {
        snprintf (text, sizeof text,
                  "spec.resourceClaims: Dynamic Resource Allocation is not implemented");
        return bas_k8s_json_set_str (ctx, &pod->unsupported, text);
    }
    const cJSON *res = bas_k8s_json_get (spec, "resources");
    if (cJSON_IsObject (res) && (cJSON_GetArraySize (bas_k8s_json_get (res, "requests")) > 0 ||
                                 cJSON_GetArraySize (bas_k8s_json_get (res, "limits")) > 0)) {
        snprintf (text, sizeof text,
                  "spec.resources: pod-level resources are not implemented (the request would "
                  "not be the containers' sum)");
        return bas_k8s_json_set_str (ctx, &pod->unsupported, text);
    }
    const cJSON *volumes = bas_k8s_json_get (spec, "volumes");
    size_t i = 0;
    for (const cJSON *v = cJSON_IsArray (volumes) ? volumes->child : NULL; v; v = v->next, i++)
        for (size_t k = 0; k < sizeof s_held_volumes / sizeof s_held_volumes[0]; k++) {
            if (!cJSON_IsObject (bas_k8s_json_get (v, s_held_volumes[k].key)))
                continue;
            const cJSON *name = bas_k8s_json_get (v, "name");
            snprintf (text, sizeof text, "spec.volumes[%zu].%s (volume \"%.64s\"): %s", i,
                      s_held_volumes[k].key,
                      cJSON_IsString (name) && name->valuestring ? name->valuestring : "",
                      s_held_volumes[k].what);
            return bas_k8s_json_set_str (ctx, &pod->unsupported, text);
        }
    return 0;
}

Basalt__V1__Pod *
bas_k8s_pod_from_json (const cJSON *obj, char *err, size_t errlen)
{
    bas_k8s_json_t ctx;
    bas_k8s_json_init (&ctx, err, errlen, "pod");
    bas_k8s_meta_t m;
    if (bas_k8s_json_meta (&ctx, obj, "pod", &m) != 0)
        return NULL;
    Basalt__V1__Pod *pod = bas_k8s_json_alloc (&ctx, sizeof *pod);
    if (!pod)
        return NULL;
    basalt__v1__pod__init (pod);
    if (bas_k8s_json_set_str (&ctx, &pod->uid, m.uid) ||
        bas_k8s_json_set_str (&ctx, &pod->namespace_, m.ns) ||
        bas_k8s_json_set_str (&ctx, &pod->name, m.name) ||
        bas_k8s_json_set_str (&ctx, &pod->resource_version, m.rv))
        goto error;
    pod->has_creation_time_ms = m.has_created;
    pod->creation_time_ms = m.created_ms;
    pod->has_deleting = 1;
    pod->deleting = m.deleting;
    if (s_pod_annotations (&ctx, &m, pod) != 0 ||
        bas_k8s_json_controller_owner (&ctx, m.owners, &pod->owner) ||
        s_labels_packed (&ctx, m.labels, &pod->labels))
        goto error;
    const cJSON *spec, *status;
    if (bas_k8s_json_object (&ctx, bas_k8s_json_get (obj, "spec"), "spec", &spec) != 0 ||
        bas_k8s_json_object (&ctx, bas_k8s_json_get (obj, "status"), "status", &status) != 0)
        goto error;
    //  The placement message only for pods that may fill it (affinity,
    //  spread, a container with ports); the decoders below write into it.
    bool placement =
        bas_k8s_json_get (spec, "affinity") || bas_k8s_json_get (spec, "topologySpreadConstraints");
    const cJSON *cs = bas_k8s_json_get (spec, "containers");
    for (const cJSON *c = cJSON_IsArray (cs) ? cs->child : NULL; c && !placement; c = c->next)
        placement = cJSON_GetArraySize (bas_k8s_json_get (c, "ports")) > 0;
    const cJSON *ics = bas_k8s_json_get (spec, "initContainers");
    for (const cJSON *c = cJSON_IsArray (ics) ? ics->child : NULL; c && !placement; c = c->next)
        placement =
            s_holds_ports (c, true) && cJSON_GetArraySize (bas_k8s_json_get (c, "ports")) > 0;
    if (placement) {
        pod->placement = bas_k8s_json_alloc (&ctx, sizeof *pod->placement);
        if (!pod->placement)
            goto error;
        basalt__v1__pod_placement__init (pod->placement);
    }
    const cJSON *containers = NULL, *inits = NULL, *overhead = NULL;
    for (const cJSON *c = spec ? spec->child : NULL; c; c = c->next) {
        const char *k = c->string ? c->string : "";
        int rc = 0;
        const cJSON *sub;
        if (strcmp (k, "nodeName") == 0)
            rc = bas_k8s_json_str (&ctx, c, "spec.nodeName", &pod->node_name);
        else if (strcmp (k, "schedulerName") == 0)
            rc = bas_k8s_json_str (&ctx, c, "spec.schedulerName", &pod->scheduler_name);
        else if (strcmp (k, "priority") == 0)
            rc = bas_k8s_json_int32 (&ctx, c, "spec.priority", &pod->priority, &pod->has_priority);
        else if (strcmp (k, "priorityClassName") == 0)
            rc = bas_k8s_json_str (&ctx, c, "spec.priorityClassName", &pod->priority_class_name);
        else if (strcmp (k, "preemptionPolicy") == 0)
            rc = bas_k8s_json_str (&ctx, c, "spec.preemptionPolicy", &pod->preemption_policy);
        else if (strcmp (k, "nodeSelector") == 0)
            rc = bas_k8s_json_object (&ctx, c, "spec.nodeSelector", &sub) ||
                 bas_k8s_json_kv_list (&ctx, sub, "spec.nodeSelector", NULL, &pod->node_selector,
                                       &pod->n_node_selector);
        else if (strcmp (k, "tolerations") == 0)
            rc = bas_k8s_json_array (&ctx, c, "spec.tolerations", &sub) ||
                 s_tolerations (&ctx, sub, pod);
        else if (strcmp (k, "affinity") == 0)
            rc = bas_k8s_json_object (&ctx, c, "spec.affinity", &sub) ||
                 (sub && s_affinity (&ctx, sub, pod));
        else if (strcmp (k, "topologySpreadConstraints") == 0)
            rc = bas_k8s_json_array (&ctx, c, "spec.topologySpreadConstraints", &sub) ||
                 s_spread (&ctx, sub, pod);
        else if (strcmp (k, "containers") == 0)
            rc = bas_k8s_json_array (&ctx, c, "spec.containers", &containers);
        else if (strcmp (k, "initContainers") == 0)
            rc = bas_k8s_json_array (&ctx, c, "spec.initContainers", &inits);
        else if (strcmp (k, "overhead") == 0)
            rc = bas_k8s_json_object (&ctx, c, "spec.overhead", &overhead);
        else if (strcmp (k, "schedulingGates") == 0)
            rc = bas_k8s_json_array (&ctx, c, "spec.schedulingGates", &sub) ||
                 s_scheduling_gates (&ctx, sub, pod);
        if (rc != 0)
            goto error;
    }
    if ((!pod->node_name || !*pod->node_name) && s_pod_unsupported (&ctx, spec, pod) != 0)
        goto error;
    //  Every pod's claims: a bound pod's count against ReadWriteOncePod
    //  claims and the node's volume limits.
    if (s_pod_claims (&ctx, bas_k8s_json_get (spec, "volumes"), pod) != 0)
        goto error;
    if (s_pod_requests (&ctx, containers, inits, overhead, &pod->requests) != 0 ||
        ((!pod->node_name || !*pod->node_name) &&
         s_pod_images (&ctx, inits, containers, pod) != 0) ||
        s_host_ports (&ctx, containers, inits, pod) != 0 ||
        bas_k8s_json_str (&ctx, bas_k8s_json_get (status, "phase"), "status.phase", &pod->phase) !=
            0)
        goto error;
    const Basalt__V1__PodPlacement *pl = pod->placement;
    if (pl && !pl->n_pod_affinity && !pl->n_pod_anti_affinity && !pl->n_host_ports &&
        !pl->n_topology_spread && !pl->n_preferred_node_affinity && !pl->n_preferred_pod_affinity &&
        !pl->n_preferred_pod_anti_affinity) {
        protobuf_c_message_free_unpacked (&pod->placement->base, NULL);
        pod->placement = NULL; // most pods: nothing to carry
    }
    return pod;
error:
    protobuf_c_message_free_unpacked (&pod->base, NULL);
    return NULL;
}

// ------------------------------------------------------------ tolerations

static const char *
s_or_empty (const char *s)
{
    return s ? s : "";
}

//  One toleration against one taint: an empty effect tolerates every
//  effect, an empty key (with Exists) every key; Exists ignores the value,
//  Equal (or no operator) wants it equal. Any other operator (Gt and Lt
//  need an alpha gate) tolerates nothing.
static bool
s_tolerates (const Basalt__V1__Toleration *tol, const char *key, const char *value,
             const char *effect)
{
    const char *teffect = s_or_empty (tol->effect);
    if (teffect[0] && strcmp (teffect, effect) != 0)
        return false;
    const char *tkey = s_or_empty (tol->key);
    if (tkey[0] && strcmp (tkey, key) != 0)
        return false;
    const char *op = s_or_empty (tol->operator_);
    if (strcmp (op, "Exists") == 0)
        return true;
    if (op[0] == 0 || strcmp (op, "Equal") == 0)
        return strcmp (s_or_empty (tol->value), value) == 0;
    return false;
}

bool
bas_k8s_pod_tolerates (const Basalt__V1__Pod *pod, const char *key, const char *value,
                       const char *effect)
{
    for (size_t i = 0; i < pod->n_tolerations; i++)
        if (s_tolerates (pod->tolerations[i], key, value, effect))
            return true;
    return false;
}
