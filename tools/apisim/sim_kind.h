/*  sim_kind: the constant table of resources the simulator serves.

    One row per resource (pods, nodes, podgroups, …) with what the URL
    router, discovery and the error messages need: group, version, plural
    and Kind names, scope, whether it has a /status subresource, and whether
    it is a built-in type (built-ins accept strategic merge patches and
    unconditional updates; CRDs do not), which of spec and status a
    built-in always serialises, and how its names are validated. Rows are
    static and never change.

    Kinds without a controller here (StatefulSets, Jobs, Events, the
    deploy kinds: ServiceAccounts, ConfigMaps, Secrets, Services, RBAC,
    PodDisruptionBudgets, HorizontalPodAutoscalers, Leases) are stored
    only: the generic verbs (create, get, list, watch, update, patch,
    delete, deletecollection) with the API's optimistic concurrency,
    resourceVersions and watch events are all they get.

    The storage kinds (PersistentVolumes, PersistentVolumeClaims,
    StorageClasses, CSINodes, CSIDrivers) are validated (sim_valid.h) and
    have a controller: sim_pvctrl.h binds claims to volumes and provisions
    volumes for dynamic classes.
*/
#ifndef SIM_KIND_H
#define SIM_KIND_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    SIM_KIND_NAMESPACES = 0,
    SIM_KIND_NODES,
    SIM_KIND_PODS,
    SIM_KIND_PRIORITYCLASSES,
    SIM_KIND_PODGROUPS,
    SIM_KIND_QUEUES,
    SIM_KIND_DEPLOYMENTS,
    SIM_KIND_REPLICASETS,
    SIM_KIND_STATEFULSETS,
    SIM_KIND_JOBS,
    SIM_KIND_EVENTS,
    SIM_KIND_RESOURCEQUOTAS,
    SIM_KIND_LEASES,
    SIM_KIND_SERVICEACCOUNTS,
    SIM_KIND_CONFIGMAPS,
    SIM_KIND_SECRETS,
    SIM_KIND_SERVICES,
    SIM_KIND_CLUSTERROLES,
    SIM_KIND_CLUSTERROLEBINDINGS,
    SIM_KIND_ROLES,
    SIM_KIND_ROLEBINDINGS,
    SIM_KIND_PODDISRUPTIONBUDGETS,
    SIM_KIND_HORIZONTALPODAUTOSCALERS,
    SIM_KIND_HYPERNODES,
    SIM_KIND_PERSISTENTVOLUMES,
    SIM_KIND_PERSISTENTVOLUMECLAIMS,
    SIM_KIND_STORAGECLASSES,
    SIM_KIND_CSINODES,
    SIM_KIND_CSIDRIVERS,
    SIM_KIND_COUNT
} sim_kind_id_t;

//  How metadata.name is validated on create (apimachinery's name
//  validators as each kind's registry picks them).
typedef enum {
    SIM_NAME_SUBDOMAIN = 0, // DNS-1123 subdomain: most kinds
    SIM_NAME_LABEL,         // DNS-1123 label: Namespaces
    SIM_NAME_DNS1035,       // DNS-1035 label (starts with a letter): Services
    SIM_NAME_PATH_SEGMENT,  // any path segment ("system:foo"): the RBAC kinds
} sim_name_rule_t;

typedef struct {
    sim_kind_id_t id;          // index in the table
    const char *resource;      // plural resource name ("pods")
    const char *singular;      // "pod"
    const char *kind;          // "Pod"
    const char *list_kind;     // "PodList"
    const char *group;         // "" for core
    const char *version;       // "v1"
    const char *api_version;   // "v1" or "group/version"
    const char *short_names;   // comma-separated short names, or ""
    bool namespaced;           // objects live in a namespace
    bool status_subresource;   // has /status (PUT/PATCH there keep only status)
    bool builtin;              // built-in type, not a CRD
    bool has_generation;       // metadata.generation is kept and bumped on spec change
    bool has_spec;             // built-in whose spec is serialised even when empty ("spec":{})
    bool has_status;           // built-in whose status is serialised even when empty
    sim_name_rule_t name_rule; // metadata.name validation
} sim_kind_t;

//  The row for an id; NULL if out of range.
const sim_kind_t *sim_kind_get (sim_kind_id_t id);

//  Find by group, version and plural resource; NULL if not served.
const sim_kind_t *sim_kind_by_resource (const char *group, const char *version,
                                        const char *resource);

//  Find by apiVersion ("v1", "apps/v1") and Kind ("Pod"); NULL if not served.
const sim_kind_t *sim_kind_by_kind (const char *api_version, const char *kind);

//  "pods" for core, "podgroups.scheduling.volcano.sh" otherwise, as in API
//  error messages. Written into buf; returns buf.
const char *sim_kind_group_resource (const sim_kind_t *kind, char *buf, size_t len);

#endif
