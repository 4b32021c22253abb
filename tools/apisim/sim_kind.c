/*  sim_kind: see sim_kind.h. The table order is the order of discovery
    output and of nothing else.
*/
#include "sim_kind.h"

#include <stdio.h>
#include <string.h>

static const sim_kind_t s_kinds[SIM_KIND_COUNT] = {
    {SIM_KIND_NAMESPACES, "namespaces", "namespace", "Namespace", "NamespaceList", "", "v1", "v1",
     "ns", false, true, true, false},
    {SIM_KIND_NODES, "nodes", "node", "Node", "NodeList", "", "v1", "v1", "no", false, true, true,
     false},
    {SIM_KIND_PODS, "pods", "pod", "Pod", "PodList", "", "v1", "v1", "po", true, true, true, false},
    {SIM_KIND_PRIORITYCLASSES, "priorityclasses", "priorityclass", "PriorityClass",
     "PriorityClassList", "scheduling.k8s.io", "v1", "scheduling.k8s.io/v1", "pc", false, false,
     true, true},
    {SIM_KIND_PODGROUPS, "podgroups", "podgroup", "PodGroup", "PodGroupList",
     "scheduling.volcano.sh", "v1beta1", "scheduling.volcano.sh/v1beta1", "pg,podgroup-v1beta1",
     true, false, false, true},
    {SIM_KIND_QUEUES, "queues", "queue", "Queue", "QueueList", "scheduling.volcano.sh", "v1beta1",
     "scheduling.volcano.sh/v1beta1", "q,queue-v1beta1", false, true, false, true},
    {SIM_KIND_DEPLOYMENTS, "deployments", "deployment", "Deployment", "DeploymentList", "apps",
     "v1", "apps/v1", "deploy", true, true, true, true},
    {SIM_KIND_REPLICASETS, "replicasets", "replicaset", "ReplicaSet", "ReplicaSetList", "apps",
     "v1", "apps/v1", "rs", true, true, true, true},
    //  Stored only (no controller): owners the PodGroup controller reads,
    //  and the Events it writes.
    {SIM_KIND_STATEFULSETS, "statefulsets", "statefulset", "StatefulSet", "StatefulSetList", "apps",
     "v1", "apps/v1", "sts", true, true, true, true},
    {SIM_KIND_JOBS, "jobs", "job", "Job", "JobList", "batch", "v1", "batch/v1", "", true, true,
     true, true},
    {SIM_KIND_EVENTS, "events", "event", "Event", "EventList", "", "v1", "v1", "ev", true, false,
     true, false},
    //  Stored only: status.used is what the file or the client says (there
    //  is no quota controller counting pods).
    {SIM_KIND_RESOURCEQUOTAS, "resourcequotas", "resourcequota", "ResourceQuota",
     "ResourceQuotaList", "", "v1", "v1", "quota", true, true, true, false},
};

const sim_kind_t *
sim_kind_get (sim_kind_id_t id)
{
    if ((int)id < 0 || id >= SIM_KIND_COUNT)
        return NULL;
    return &s_kinds[id];
}

const sim_kind_t *
sim_kind_by_resource (const char *group, const char *version, const char *resource)
{
    for (int i = 0; i < SIM_KIND_COUNT; i++) {
        const sim_kind_t *k = &s_kinds[i];
        if (strcmp (k->group, group) == 0 && strcmp (k->version, version) == 0 &&
            strcmp (k->resource, resource) == 0)
            return k;
    }
    return NULL;
}

const sim_kind_t *
sim_kind_by_kind (const char *api_version, const char *kind)
{
    if (!api_version || !kind)
        return NULL;
    for (int i = 0; i < SIM_KIND_COUNT; i++) {
        const sim_kind_t *k = &s_kinds[i];
        if (strcmp (k->api_version, api_version) == 0 && strcmp (k->kind, kind) == 0)
            return k;
    }
    return NULL;
}

const char *
sim_kind_group_resource (const sim_kind_t *kind, char *buf, size_t len)
{
    if (kind->group[0])
        snprintf (buf, len, "%s.%s", kind->resource, kind->group);
    else
        snprintf (buf, len, "%s", kind->resource);
    return buf;
}
