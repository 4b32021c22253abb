/*  sim_kind: see sim_kind.h. The table order is the order of discovery
    output and of nothing else.
*/
#include "sim_kind.h"

#include <stdio.h>
#include <string.h>

//  Each row: id, resource, singular, Kind, list Kind, group, version,
//  apiVersion, short names; then the flags that are true (the others are
//  false, and name_rule is SIM_NAME_SUBDOMAIN).
//  Built-in types serialise their spec and status structs even when empty
//  ("spec":{}), so JSON patches can add below them; kinds with neither
//  (PriorityClass, Event, ConfigMap, …) are top-level fields only.
static const sim_kind_t s_kinds[SIM_KIND_COUNT] = {
    {SIM_KIND_NAMESPACES, "namespaces", "namespace", "Namespace", "NamespaceList", "", "v1", "v1",
     "ns", .status_subresource = true, .builtin = true, .has_spec = true, .has_status = true,
     .name_rule = SIM_NAME_LABEL},
    {SIM_KIND_NODES, "nodes", "node", "Node", "NodeList", "", "v1", "v1", "no",
     .status_subresource = true, .builtin = true, .has_spec = true, .has_status = true},
    {SIM_KIND_PODS, "pods", "pod", "Pod", "PodList", "", "v1", "v1", "po", .namespaced = true,
     .status_subresource = true, .builtin = true, .has_spec = true, .has_status = true},
    {SIM_KIND_PRIORITYCLASSES, "priorityclasses", "priorityclass", "PriorityClass",
     "PriorityClassList", "scheduling.k8s.io", "v1", "scheduling.k8s.io/v1", "pc", .builtin = true,
     .has_generation = true},
    {SIM_KIND_PODGROUPS, "podgroups", "podgroup", "PodGroup", "PodGroupList",
     "scheduling.volcano.sh", "v1beta1", "scheduling.volcano.sh/v1beta1", "pg,podgroup-v1beta1",
     .namespaced = true, .has_generation = true},
    {SIM_KIND_QUEUES, "queues", "queue", "Queue", "QueueList", "scheduling.volcano.sh", "v1beta1",
     "scheduling.volcano.sh/v1beta1", "q,queue-v1beta1", .status_subresource = true,
     .has_generation = true},
    {SIM_KIND_DEPLOYMENTS, "deployments", "deployment", "Deployment", "DeploymentList", "apps",
     "v1", "apps/v1", "deploy", .namespaced = true, .status_subresource = true, .builtin = true,
     .has_generation = true, .has_spec = true, .has_status = true},
    {SIM_KIND_REPLICASETS, "replicasets", "replicaset", "ReplicaSet", "ReplicaSetList", "apps",
     "v1", "apps/v1", "rs", .namespaced = true, .status_subresource = true, .builtin = true,
     .has_generation = true, .has_spec = true, .has_status = true},
    //  Stored only (no controller): owners the PodGroup controller reads,
    //  and the Events it writes.
    {SIM_KIND_STATEFULSETS, "statefulsets", "statefulset", "StatefulSet", "StatefulSetList", "apps",
     "v1", "apps/v1", "sts", .namespaced = true, .status_subresource = true, .builtin = true,
     .has_generation = true, .has_spec = true, .has_status = true},
    {SIM_KIND_JOBS, "jobs", "job", "Job", "JobList", "batch", "v1", "batch/v1", "",
     .namespaced = true, .status_subresource = true, .builtin = true, .has_generation = true,
     .has_spec = true, .has_status = true},
    {SIM_KIND_EVENTS, "events", "event", "Event", "EventList", "", "v1", "v1", "ev",
     .namespaced = true, .builtin = true},
    //  Stored only: status.used is what the file or the client says (there
    //  is no quota controller counting pods).
    {SIM_KIND_RESOURCEQUOTAS, "resourcequotas", "resourcequota", "ResourceQuota",
     "ResourceQuotaList", "", "v1", "v1", "quota", .namespaced = true, .status_subresource = true,
     .builtin = true, .has_spec = true, .has_status = true},
    //  Stored only: leader election's lock (client-go's leaselock: get,
    //  create, update with the read resourceVersion, watch). A Lease has a
    //  spec and no status.
    {SIM_KIND_LEASES, "leases", "lease", "Lease", "LeaseList", "coordination.k8s.io", "v1",
     "coordination.k8s.io/v1", "", .namespaced = true, .builtin = true, .has_spec = true},
    //  Stored only: what a deployment of Basalt (deploy/) is made of.
    //  ConfigMaps, Secrets, ServiceAccounts and the RBAC kinds have neither
    //  spec nor status; RBAC names are path segments ("system:basalt").
    {SIM_KIND_SERVICEACCOUNTS, "serviceaccounts", "serviceaccount", "ServiceAccount",
     "ServiceAccountList", "", "v1", "v1", "sa", .namespaced = true, .builtin = true},
    {SIM_KIND_CONFIGMAPS, "configmaps", "configmap", "ConfigMap", "ConfigMapList", "", "v1", "v1",
     "cm", .namespaced = true, .builtin = true},
    {SIM_KIND_SECRETS, "secrets", "secret", "Secret", "SecretList", "", "v1", "v1", "",
     .namespaced = true, .builtin = true},
    {SIM_KIND_SERVICES, "services", "service", "Service", "ServiceList", "", "v1", "v1", "svc",
     .namespaced = true, .status_subresource = true, .builtin = true, .has_spec = true,
     .has_status = true, .name_rule = SIM_NAME_DNS1035},
    {SIM_KIND_CLUSTERROLES, "clusterroles", "clusterrole", "ClusterRole", "ClusterRoleList",
     "rbac.authorization.k8s.io", "v1", "rbac.authorization.k8s.io/v1", "", .builtin = true,
     .name_rule = SIM_NAME_PATH_SEGMENT},
    {SIM_KIND_CLUSTERROLEBINDINGS, "clusterrolebindings", "clusterrolebinding",
     "ClusterRoleBinding", "ClusterRoleBindingList", "rbac.authorization.k8s.io", "v1",
     "rbac.authorization.k8s.io/v1", "", .builtin = true, .name_rule = SIM_NAME_PATH_SEGMENT},
    {SIM_KIND_ROLES, "roles", "role", "Role", "RoleList", "rbac.authorization.k8s.io", "v1",
     "rbac.authorization.k8s.io/v1", "", .namespaced = true, .builtin = true,
     .name_rule = SIM_NAME_PATH_SEGMENT},
    {SIM_KIND_ROLEBINDINGS, "rolebindings", "rolebinding", "RoleBinding", "RoleBindingList",
     "rbac.authorization.k8s.io", "v1", "rbac.authorization.k8s.io/v1", "", .namespaced = true,
     .builtin = true, .name_rule = SIM_NAME_PATH_SEGMENT},
    //  No disruption controller: status is what clients write (and the
    //  eviction subresource does not consult PDBs).
    {SIM_KIND_PODDISRUPTIONBUDGETS, "poddisruptionbudgets", "poddisruptionbudget",
     "PodDisruptionBudget", "PodDisruptionBudgetList", "policy", "v1", "policy/v1", "pdb",
     .namespaced = true, .status_subresource = true, .builtin = true, .has_generation = true,
     .has_spec = true, .has_status = true},
    //  No autoscaler: nothing scales the target. No metadata.generation
    //  (newer API servers keep one behind the HPAGeneration feature gate).
    {SIM_KIND_HORIZONTALPODAUTOSCALERS, "horizontalpodautoscalers", "horizontalpodautoscaler",
     "HorizontalPodAutoscaler", "HorizontalPodAutoscalerList", "autoscaling", "v2",
     "autoscaling/v2", "hpa", .namespaced = true, .status_subresource = true, .builtin = true,
     .has_spec = true, .has_status = true},
    //  Volcano's network topology CRD (cluster-scoped, a status
    //  subresource): stored only; no HyperNode controller fills status.
    {SIM_KIND_HYPERNODES, "hypernodes", "hypernode", "HyperNode", "HyperNodeList",
     "topology.volcano.sh", "v1alpha1", "topology.volcano.sh/v1alpha1", "hn",
     .status_subresource = true, .has_generation = true},
    //  Storage (issue 32): volumes and claims have a spec and a status
    //  subresource and no metadata.generation; a StorageClass is top-level
    //  fields only (provisioner, parameters, reclaimPolicy,
    //  volumeBindingMode, allowedTopologies); CSINodes and CSIDrivers have
    //  a spec and no status. CSINodes and CSIDrivers have no short names.
    {SIM_KIND_PERSISTENTVOLUMES, "persistentvolumes", "persistentvolume", "PersistentVolume",
     "PersistentVolumeList", "", "v1", "v1", "pv", .status_subresource = true, .builtin = true,
     .has_spec = true, .has_status = true},
    {SIM_KIND_PERSISTENTVOLUMECLAIMS, "persistentvolumeclaims", "persistentvolumeclaim",
     "PersistentVolumeClaim", "PersistentVolumeClaimList", "", "v1", "v1", "pvc",
     .namespaced = true, .status_subresource = true, .builtin = true, .has_spec = true,
     .has_status = true},
    {SIM_KIND_STORAGECLASSES, "storageclasses", "storageclass", "StorageClass", "StorageClassList",
     "storage.k8s.io", "v1", "storage.k8s.io/v1", "sc", .builtin = true},
    {SIM_KIND_CSINODES, "csinodes", "csinode", "CSINode", "CSINodeList", "storage.k8s.io", "v1",
     "storage.k8s.io/v1", "", .builtin = true, .has_spec = true},
    {SIM_KIND_CSIDRIVERS, "csidrivers", "csidriver", "CSIDriver", "CSIDriverList", "storage.k8s.io",
     "v1", "storage.k8s.io/v1", "", .builtin = true, .has_spec = true},
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
