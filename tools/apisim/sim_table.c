/*  sim_table: see sim_table.h.

    Design note: one constant table of printers, {kind, columns, row
    function}, the way printers.go registers a TableHandler per kind. The
    columns and cells of each printer are those of kubernetes
    pkg/printers/internalversion/printers.go (printPod, printNode,
    printNamespace, printEvent, printDeployment, printReplicaSet,
    printLease, printSecret, printConfigMap, printServiceAccount); the
    long descriptions of the API's own field docs are cut to their first
    sentence (kubectl does not print them). A kind with no row here gets
    the generic store's default table; a custom resource gets its CRD's
    columns (apiextensions-apiserver pkg/registry/customresource/
    tableconvertor), evaluated as that convertor does for the simple
    JSONPaths CRDs use (`.status.phase`, `.spec.minMember`, `.a[0].b`).
*/
#include "sim_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

// ---------------------------------------------------------------------------
// Columns

typedef struct {
    const char *name;        // "Name", "Ready", … (kubectl upper-cases it)
    const char *type;        // "string", "integer", "date", …
    const char *format;      // "name" for the name column, else ""
    const char *description; // what the column shows
    int priority;            // 0: always shown; 1: only with -o wide
} s_column_t;

#define S_NAME_DOC                                                                                 \
    "Name must be unique within a namespace. Is required when creating resources, although some "  \
    "resources may allow a client to request the generation of an appropriate name "               \
    "automatically. Name is primarily intended for creation idempotence and configuration "        \
    "definition. Cannot be updated. More info: "                                                   \
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
#define S_CREATED_DOC                                                                              \
    "CreationTimestamp is a timestamp representing the server time when this object was "          \
    "created. It is not guaranteed to be set in happens-before order across separate "             \
    "operations. Clients may not set this value. It is represented in RFC3339 form and is in "     \
    "UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: "                      \
    "https://git.k8s.io/community/contributors/devel/sig-architecture/"                            \
    "api-conventions.md#metadata"

#define S_COL_NAME                                                                                 \
    {                                                                                              \
        "Name", "string", "name", S_NAME_DOC, 0                                                    \
    }
#define S_COL_AGE                                                                                  \
    {                                                                                              \
        "Age", "string", "", S_CREATED_DOC, 0                                                      \
    }
#define S_COL_END                                                                                  \
    {                                                                                              \
        NULL, NULL, NULL, NULL, 0                                                                  \
    }

static const s_column_t s_pod_columns[] = {
    S_COL_NAME,
    {"Ready", "string", "", "The aggregate readiness state of this pod for accepting traffic.", 0},
    {"Status", "string", "", "The aggregate status of the containers in this pod.", 0},
    {"Restarts", "string", "",
     "The number of times the containers in this pod have been restarted and when the last "
     "container in this pod has restarted.",
     0},
    S_COL_AGE,
    {"IP", "string", "", "podIP address allocated to the pod.", 1},
    {"Node", "string", "", "NodeName indicates in which node this pod is scheduled.", 1},
    {"Nominated Node", "string", "",
     "nominatedNodeName is set only when this pod preempts other pods on the node.", 1},
    {"Readiness Gates", "string", "", "If specified, all readiness gates will be evaluated.", 1},
    S_COL_END};

static const s_column_t s_node_columns[] = {
    S_COL_NAME,
    {"Status", "string", "", "The status of the node", 0},
    {"Roles", "string", "", "The roles of the node", 0},
    S_COL_AGE,
    {"Version", "string", "", "Kubelet Version reported by the node.", 0},
    {"Internal-IP", "string", "", "List of addresses reachable to the node.", 1},
    {"External-IP", "string", "", "List of addresses reachable to the node.", 1},
    {"OS-Image", "string", "", "OS Image reported by the node from /etc/os-release.", 1},
    {"Kernel-Version", "string", "", "Kernel Version reported by the node from 'uname -r'.", 1},
    {"Container-Runtime", "string", "",
     "ContainerRuntime Version reported by the node through runtime remote API.", 1},
    S_COL_END};

static const s_column_t s_namespace_columns[] = {
    S_COL_NAME, {"Status", "string", "", "The status of the namespace", 0}, S_COL_AGE, S_COL_END};

static const s_column_t s_event_columns[] = {
    {"Last Seen", "string", "",
     "The time at which the most recent occurrence of this event was recorded.", 0},
    {"Type", "string", "", "Type of this event (Normal, Warning), new types could be added.", 0},
    {"Reason", "string", "",
     "This should be a short, machine understandable string that gives the reason for the "
     "transition into the object's current status.",
     0},
    {"Object", "string", "", "The object that this event is about.", 0},
    {"Subobject", "string", "", "The field of the object the event is about, if any.", 1},
    {"Source", "string", "", "The component reporting this event.", 1},
    {"Message", "string", "", "A human-readable description of the status of this operation.", 0},
    {"First Seen", "string", "",
     "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)", 1},
    {"Count", "string", "", "The number of times this event has occurred.", 1},
    {"Name", "string", "name", S_NAME_DOC, 1},
    S_COL_END};

static const s_column_t s_deployment_columns[] = {
    S_COL_NAME,
    {"Ready", "string", "", "Number of the pod with ready state", 0},
    {"Up-to-date", "string", "",
     "Total number of non-terminated pods targeted by this deployment that have the desired "
     "template spec.",
     0},
    {"Available", "string", "",
     "Total number of available pods (ready for at least minReadySeconds) targeted by this "
     "deployment.",
     0},
    S_COL_AGE,
    {"Containers", "string", "", "Names of each container in the template.", 1},
    {"Images", "string", "", "Images referenced by each container in the template.", 1},
    {"Selector", "string", "", "Label selector for pods.", 1},
    S_COL_END};

static const s_column_t s_replicaset_columns[] = {
    S_COL_NAME,
    {"Desired", "integer", "", "Replicas is the number of desired replicas.", 0},
    {"Current", "integer", "", "Replicas is the most recently observed number of replicas.", 0},
    {"Ready", "integer", "", "The number of ready replicas for this replica set.", 0},
    S_COL_AGE,
    {"Containers", "string", "", "Names of each container in the template.", 1},
    {"Images", "string", "", "Images referenced by each container in the template.", 1},
    {"Selector", "string", "",
     "Selector is a label query over pods that should match the "
     "replica count.",
     1},
    S_COL_END};

static const s_column_t s_lease_columns[] = {
    S_COL_NAME,
    {"Holder", "string", "",
     "holderIdentity contains the identity of the holder of a current "
     "lease.",
     0},
    S_COL_AGE,
    S_COL_END};

static const s_column_t s_secret_columns[] = {
    S_COL_NAME,
    {"Type", "string", "", "Used to facilitate programmatic handling of secret data.", 0},
    {"Data", "string", "", "Data contains the secret data.", 0},
    S_COL_AGE,
    S_COL_END};

static const s_column_t s_configmap_columns[] = {
    S_COL_NAME,
    {"Data", "string", "", "Data contains the configuration data.", 0},
    S_COL_AGE,
    S_COL_END};

static const s_column_t s_serviceaccount_columns[] = {
    S_COL_NAME,
    {"Secrets", "string", "",
     "Secrets is a list of the secrets in the same namespace that pods running using this "
     "ServiceAccount are allowed to use.",
     0},
    S_COL_AGE,
    S_COL_END};

//  The storage kinds (printers.go: printPersistentVolume, …Claim,
//  printStorageClass, printCSINode, printCSIDriver).
static const s_column_t s_pv_columns[] = {
    S_COL_NAME,
    {"Capacity", "string", "",
     "capacity is the description of the persistent volume's resources "
     "and capacity.",
     0},
    {"Access Modes", "string", "", "accessModes contains all ways the volume can be mounted.", 0},
    {"Reclaim Policy", "string", "",
     "persistentVolumeReclaimPolicy defines what happens to a "
     "persistent volume when released from its claim.",
     0},
    {"Status", "string", "",
     "phase indicates if a volume is available, bound to a claim, or "
     "released by a claim.",
     0},
    {"Claim", "string", "",
     "claimRef is part of a bi-directional binding between "
     "PersistentVolume and PersistentVolumeClaim.",
     0},
    {"StorageClass", "string", "",
     "storageClassName is the name of StorageClass to which this "
     "persistent volume belongs.",
     0},
    {"VolumeAttributesClass", "string", "",
     "Name of VolumeAttributesClass to which this "
     "persistent volume belongs.",
     0},
    {"Reason", "string", "",
     "reason is a brief CamelCase string that describes any failure and "
     "is meant for machine parsing and tidy display in the CLI.",
     0},
    S_COL_AGE,
    {"VolumeMode", "string", "",
     "volumeMode defines if a volume is intended to be used with a "
     "formatted filesystem or to remain in raw block state.",
     1},
    S_COL_END};

static const s_column_t s_pvc_columns[] = {
    S_COL_NAME,
    {"Status", "string", "", "phase represents the current phase of PersistentVolumeClaim.", 0},
    {"Volume", "string", "",
     "volumeName is the binding reference to the PersistentVolume "
     "backing this claim.",
     0},
    {"Capacity", "string", "",
     "capacity represents the actual resources of the underlying "
     "volume.",
     0},
    {"Access Modes", "string", "",
     "accessModes contains the actual access modes the volume "
     "backing the PVC has.",
     0},
    {"StorageClass", "string", "",
     "storageClassName is the name of the StorageClass required by "
     "the claim.",
     0},
    {"VolumeAttributesClass", "string", "",
     "volumeAttributesClassName may be used to set the "
     "VolumeAttributesClass used by this claim.",
     0},
    S_COL_AGE,
    {"VolumeMode", "string", "",
     "volumeMode defines what type of volume is required by the "
     "claim.",
     1},
    S_COL_END};

static const s_column_t s_storageclass_columns[] = {
    S_COL_NAME,
    {"Provisioner", "string", "", "provisioner indicates the type of the provisioner.", 0},
    {"ReclaimPolicy", "string", "",
     "reclaimPolicy controls the reclaimPolicy for dynamically "
     "provisioned PersistentVolumes of this storage class.",
     0},
    {"VolumeBindingMode", "string", "",
     "volumeBindingMode indicates how PersistentVolumeClaims "
     "should be provisioned and bound.",
     0},
    {"AllowVolumeExpansion", "string", "",
     "allowVolumeExpansion shows whether the storage class "
     "allow volume expand.",
     0},
    S_COL_AGE,
    S_COL_END};

static const s_column_t s_csinode_columns[] = {
    S_COL_NAME,
    {"Drivers", "integer", "",
     "Drivers indicates the number of CSI drivers registered on the "
     "node",
     0},
    S_COL_AGE,
    S_COL_END};

static const s_column_t s_csidriver_columns[] = {
    S_COL_NAME,
    {"AttachRequired", "boolean", "",
     "attachRequired indicates this CSI volume driver requires "
     "an attach operation.",
     0},
    {"PodInfoOnMount", "boolean", "",
     "podInfoOnMount indicates this CSI volume driver requires "
     "additional pod information during mount operations.",
     0},
    {"StorageCapacity", "boolean", "",
     "storageCapacity indicates that the CSI volume driver "
     "wants pod scheduling to consider the storage capacity.",
     0},
    {"TokenRequests", "string", "",
     "tokenRequests indicates the CSI driver needs pods' service "
     "account tokens it is mounting volume for to do necessary "
     "authentication.",
     0},
    {"RequiresRepublish", "boolean", "",
     "requiresRepublish indicates the CSI driver wants "
     "NodePublishVolume being periodically called.",
     0},
    {"Modes", "string", "",
     "volumeLifecycleModes defines what kind of volumes this CSI volume "
     "driver supports.",
     0},
    S_COL_AGE,
    S_COL_END};

//  apiserver pkg/registry/rest/table.go defaultTableConvertor: what a kind
//  without a printer gets.
static const s_column_t s_default_columns[] = {
    S_COL_NAME, {"Created At", "date", "", S_CREATED_DOC, 0}, S_COL_END};

// ---------------------------------------------------------------------------
// Helpers on objects

static const cJSON *
s_at (const cJSON *obj, const char *path)
{
    char part[128];
    const cJSON *node = obj;
    while (node && *path) {
        size_t n = strcspn (path, ".");
        snprintf (part, sizeof part, "%.*s", (int)n, path);
        node = cJSON_GetObjectItemCaseSensitive (node, part);
        path += n + (path[n] == '.');
    }
    return node;
}

static const char *
s_str (const cJSON *obj, const char *path)
{
    const cJSON *v = s_at (obj, path);
    return cJSON_IsString (v) ? v->valuestring : NULL;
}

static long long
s_int (const cJSON *obj, const char *path)
{
    const cJSON *v = s_at (obj, path);
    return cJSON_IsNumber (v) ? (long long)v->valuedouble : 0;
}

static bool
s_nonempty (const char *s)
{
    return s && *s;
}

//  Seconds since the epoch of an RFC 3339 time, or -1 when absent or not one.
static time_t
s_time (const char *text)
{
    struct tm tm;
    memset (&tm, 0, sizeof tm);
    if (!text || !strptime (text, "%Y-%m-%dT%H:%M:%S", &tm))
        return (time_t)-1;
    return timegm (&tm);
}

const char *
sim_table_human_duration (long long seconds, char *buf, size_t len)
{
    //  apimachinery pkg/util/duration HumanDuration, on whole seconds.
    long long minutes = seconds / 60, hours = seconds / 3600;
    if (seconds < -1)
        snprintf (buf, len, "<invalid>");
    else if (seconds < 0)
        snprintf (buf, len, "0s");
    else if (seconds < 60 * 2)
        snprintf (buf, len, "%llds", seconds);
    else if (minutes < 10)
        snprintf (buf, len, seconds % 60 ? "%lldm%llds" : "%lldm", minutes, seconds % 60);
    else if (minutes < 60 * 3)
        snprintf (buf, len, "%lldm", minutes);
    else if (hours < 8)
        snprintf (buf, len, minutes % 60 ? "%lldh%lldm" : "%lldh", hours, minutes % 60);
    else if (hours < 48)
        snprintf (buf, len, "%lldh", hours);
    else if (hours < 24 * 8)
        snprintf (buf, len, hours % 24 ? "%lldd%lldh" : "%lldd", hours / 24, hours % 24);
    else if (hours < 24 * 365 * 2)
        snprintf (buf, len, "%lldd", hours / 24);
    else if (hours < 24 * 365 * 8)
        snprintf (buf, len, (hours / 24) % 365 ? "%lldy%lldd" : "%lldy", hours / 24 / 365,
                  (hours / 24) % 365);
    else
        snprintf (buf, len, "%lldy", hours / 24 / 365);
    return buf;
}

//  translateTimestampSince: "<unknown>" for no time, else the age.
static cJSON *
s_age (const char *timestamp, time_t now)
{
    time_t at = s_time (timestamp);
    if (at == (time_t)-1)
        return cJSON_CreateString ("<unknown>");
    char buf[32];
    return cJSON_CreateString (sim_table_human_duration ((long long)(now - at), buf, sizeof buf));
}

static void
s_add_str (cJSON *cells, const char *text)
{
    cJSON_AddItemToArray (cells, cJSON_CreateString (text ? text : ""));
}

static void
s_add_int (cJSON *cells, long long v)
{
    cJSON_AddItemToArray (cells, cJSON_CreateNumber ((double)v));
}

static void
s_add_age (cJSON *cells, const cJSON *obj, time_t now)
{
    cJSON_AddItemToArray (cells, s_age (s_str (obj, "metadata.creationTimestamp"), now));
}

//  layoutContainerCells: container names and images, comma-separated.
static void
s_add_containers (cJSON *cells, const cJSON *containers)
{
    sim_buf_t names = {0}, images = {0};
    const cJSON *c;
    bool first = true;
    cJSON_ArrayForEach (c, containers)
    {
        sim_buf_printf (&names, "%s%s", first ? "" : ",",
                        s_str (c, "name") ? s_str (c, "name") : "");
        sim_buf_printf (&images, "%s%s", first ? "" : ",",
                        s_str (c, "image") ? s_str (c, "image") : "");
        first = false;
    }
    s_add_str (cells, names.data);
    s_add_str (cells, images.data);
    sim_buf_clear (&names);
    sim_buf_clear (&images);
}

//  A label selector as labels.Selector.String() writes it: requirements
//  sorted by key, `k=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`.
static void
s_add_selector (cJSON *cells, const cJSON *sel)
{
    typedef struct {
        char text[512];
        const char *key;
    } s_req_t;
    s_req_t reqs[64];
    int n = 0;
    const cJSON *c;
    cJSON_ArrayForEach (c, cJSON_GetObjectItemCaseSensitive (sel, "matchLabels"))
    {
        if (n < 64 && cJSON_IsString (c)) {
            snprintf (reqs[n].text, sizeof reqs[n].text, "%s=%s", c->string, c->valuestring);
            reqs[n++].key = c->string;
        }
    }
    cJSON_ArrayForEach (c, cJSON_GetObjectItemCaseSensitive (sel, "matchExpressions"))
    {
        const char *key = s_str (c, "key"), *op = s_str (c, "operator");
        if (n == 64 || !key || !op)
            continue;
        s_req_t *r = &reqs[n++];
        r->key = key;
        if (!strcmp (op, "Exists"))
            snprintf (r->text, sizeof r->text, "%s", key);
        else if (!strcmp (op, "DoesNotExist"))
            snprintf (r->text, sizeof r->text, "!%s", key);
        else {
            size_t at = (size_t)snprintf (r->text, sizeof r->text, "%s %s (", key,
                                          !strcmp (op, "In") ? "in" : "notin");
            const cJSON *v;
            bool first = true;
            cJSON_ArrayForEach (v, cJSON_GetObjectItemCaseSensitive (c, "values"))
            {
                if (cJSON_IsString (v) && at < sizeof r->text)
                    at += (size_t)snprintf (r->text + at, sizeof r->text - at, "%s%s",
                                            first ? "" : ",", v->valuestring);
                first = false;
            }
            if (at < sizeof r->text)
                snprintf (r->text + at, sizeof r->text - at, ")");
        }
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && strcmp (reqs[j - 1].key, reqs[j].key) > 0; j--) {
            s_req_t t = reqs[j];
            reqs[j] = reqs[j - 1];
            reqs[j - 1] = t;
        }
    sim_buf_t out = {0};
    for (int i = 0; i < n; i++)
        sim_buf_printf (&out, "%s%s", i ? "," : "", reqs[i].text);
    //  An empty selector selects everything: labels.Everything() prints "".
    s_add_str (cells, out.data);
    sim_buf_clear (&out);
}

// ---------------------------------------------------------------------------
// Printers

typedef void (s_row_fn) (const cJSON *obj, time_t now, cJSON *cells);

static const cJSON *
s_condition (const cJSON *obj, const char *path, const char *type)
{
    const cJSON *c;
    cJSON_ArrayForEach (c, s_at (obj, path))
    {
        const char *t = s_str (c, "type");
        if (t && !strcmp (t, type))
            return c;
    }
    return NULL;
}

static bool
s_restartable_init (const cJSON *pod, const char *name)
{
    const cJSON *c;
    cJSON_ArrayForEach (c, s_at (pod, "spec.initContainers"))
    {
        const char *n = s_str (c, "name");
        const char *policy = s_str (c, "restartPolicy");
        if (n && name && !strcmp (n, name))
            return policy && !strcmp (policy, "Always");
    }
    return false;
}

//  The later of *last and a container status's lastState.terminated.finishedAt.
static void
s_last_restart (const cJSON *status, time_t *last)
{
    time_t t = s_time (s_str (status, "lastState.terminated.finishedAt"));
    if (t != (time_t)-1 && t > *last)
        *last = t;
}

//  printPod: READY n/m, STATUS (phase, or the reason the containers give,
//  Terminating while deleted), RESTARTS, AGE; wide IP, NODE, NOMINATED
//  NODE, READINESS GATES.
static void
s_row_pod (const cJSON *pod, time_t now, cJSON *cells)
{
    char reason[256];
    const char *phase = s_str (pod, "status.phase");
    snprintf (reason, sizeof reason, "%s",
              s_nonempty (s_str (pod, "status.reason")) ? s_str (pod, "status.reason")
              : phase                                   ? phase
                                                        : "");
    const cJSON *sched = s_condition (pod, "status.conditions", "PodScheduled");
    const char *sched_reason = s_str (sched, "reason");
    if (sched_reason && !strcmp (sched_reason, "SchedulingGated"))
        snprintf (reason, sizeof reason, "SchedulingGated");
    long long total = cJSON_GetArraySize (s_at (pod, "spec.containers"));
    const cJSON *c;
    cJSON_ArrayForEach (c, s_at (pod, "spec.initContainers"))
    {
        const char *policy = s_str (c, "restartPolicy");
        if (policy && !strcmp (policy, "Always"))
            total++;
    }
    long long ready = 0, restarts = 0, sidecar_restarts = 0;
    time_t last = 0, sidecar_last = 0;
    bool initializing = false;
    int ninit = cJSON_GetArraySize (s_at (pod, "spec.initContainers"));
    int i = 0;
    cJSON_ArrayForEach (c, s_at (pod, "status.initContainerStatuses"))
    {
        restarts += s_int (c, "restartCount");
        s_last_restart (c, &last);
        bool sidecar = s_restartable_init (pod, s_str (c, "name"));
        if (sidecar) {
            sidecar_restarts += s_int (c, "restartCount");
            s_last_restart (c, &sidecar_last);
        }
        const cJSON *term = s_at (c, "state.terminated");
        const char *waiting = s_str (c, "state.waiting.reason");
        if (term && s_int (term, "exitCode") == 0) {
            i++;
            continue;
        }
        if (sidecar && cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (c, "started"))) {
            ready += cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (c, "ready"));
            i++;
            continue;
        }
        if (term) {
            if (s_nonempty (s_str (term, "reason")))
                snprintf (reason, sizeof reason, "Init:%s", s_str (term, "reason"));
            else if (s_int (term, "signal"))
                snprintf (reason, sizeof reason, "Init:Signal:%lld", s_int (term, "signal"));
            else
                snprintf (reason, sizeof reason, "Init:ExitCode:%lld", s_int (term, "exitCode"));
        } else if (s_nonempty (waiting) && strcmp (waiting, "PodInitializing") != 0)
            snprintf (reason, sizeof reason, "Init:%s", waiting);
        else
            snprintf (reason, sizeof reason, "Init:%d/%d", i, ninit);
        initializing = true;
        break;
    }
    const cJSON *initialized = s_condition (pod, "status.conditions", "Initialized");
    const char *init_status = s_str (initialized, "status");
    if (!initializing || (init_status && !strcmp (init_status, "True"))) {
        restarts = sidecar_restarts;
        last = sidecar_last;
        bool running = false;
        const cJSON *statuses = s_at (pod, "status.containerStatuses");
        for (int k = cJSON_GetArraySize (statuses) - 1; k >= 0; k--) {
            const cJSON *st = cJSON_GetArrayItem (statuses, k);
            restarts += s_int (st, "restartCount");
            s_last_restart (st, &last);
            const char *waiting = s_str (st, "state.waiting.reason");
            const cJSON *term = s_at (st, "state.terminated");
            if (s_nonempty (waiting))
                snprintf (reason, sizeof reason, "%s", waiting);
            else if (term && s_nonempty (s_str (term, "reason")))
                snprintf (reason, sizeof reason, "%s", s_str (term, "reason"));
            else if (term && s_int (term, "signal"))
                snprintf (reason, sizeof reason, "Signal:%lld", s_int (term, "signal"));
            else if (term)
                snprintf (reason, sizeof reason, "ExitCode:%lld", s_int (term, "exitCode"));
            else if (cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (st, "ready")) &&
                     s_at (st, "state.running")) {
                running = true;
                ready++;
            }
        }
        if (!strcmp (reason, "Completed") && running) {
            const char *ready_status =
                s_str (s_condition (pod, "status.conditions", "Ready"), "status");
            snprintf (reason, sizeof reason, "%s",
                      ready_status && !strcmp (ready_status, "True") ? "Running" : "NotReady");
        }
    }
    bool terminal = phase && (!strcmp (phase, "Succeeded") || !strcmp (phase, "Failed"));
    const char *pod_reason = s_str (pod, "status.reason");
    if (s_at (pod, "metadata.deletionTimestamp") && pod_reason && !strcmp (pod_reason, "NodeLost"))
        snprintf (reason, sizeof reason, "Unknown");
    else if (s_at (pod, "metadata.deletionTimestamp") && !terminal)
        snprintf (reason, sizeof reason, "Terminating");
    char text[128];
    s_add_str (cells, s_str (pod, "metadata.name"));
    snprintf (text, sizeof text, "%lld/%lld", ready, total);
    s_add_str (cells, text);
    s_add_str (cells, reason);
    if (restarts && last) {
        char age[32];
        snprintf (text, sizeof text, "%lld (%s ago)", restarts,
                  sim_table_human_duration ((long long)(now - last), age, sizeof age));
    } else
        snprintf (text, sizeof text, "%lld", restarts);
    s_add_str (cells, text);
    s_add_age (cells, pod, now);
    const char *ip = s_str (cJSON_GetArrayItem (s_at (pod, "status.podIPs"), 0), "ip");
    const char *node = s_str (pod, "spec.nodeName");
    const char *nominated = s_str (pod, "status.nominatedNodeName");
    s_add_str (cells, s_nonempty (ip) ? ip : "<none>");
    s_add_str (cells, s_nonempty (node) ? node : "<none>");
    s_add_str (cells, s_nonempty (nominated) ? nominated : "<none>");
    const cJSON *gates = s_at (pod, "spec.readinessGates");
    if (cJSON_GetArraySize (gates) > 0) {
        int yes = 0;
        cJSON_ArrayForEach (c, gates)
        {
            const char *type = s_str (c, "conditionType");
            const char *st =
                type ? s_str (s_condition (pod, "status.conditions", type), "status") : NULL;
            yes += st && !strcmp (st, "True");
        }
        snprintf (text, sizeof text, "%d/%d", yes, cJSON_GetArraySize (gates));
        s_add_str (cells, text);
    } else
        s_add_str (cells, "<none>");
}

static const char *
s_node_address (const cJSON *node, const char *type)
{
    const cJSON *a;
    cJSON_ArrayForEach (a, s_at (node, "status.addresses"))
    {
        const char *t = s_str (a, "type");
        if (t && !strcmp (t, type) && s_str (a, "address"))
            return s_str (a, "address");
    }
    return "<none>";
}

//  printNode: STATUS Ready/NotReady/Unknown (",SchedulingDisabled" when
//  cordoned), ROLES from the node-role labels, AGE, VERSION; wide the
//  addresses and node info.
static void
s_row_node (const cJSON *node, time_t now, cJSON *cells)
{
    sim_buf_t status = {0};
    const char *ready = s_str (s_condition (node, "status.conditions", "Ready"), "status");
    if (ready)
        sim_buf_puts (&status, !strcmp (ready, "True") ? "Ready" : "NotReady");
    else
        sim_buf_puts (&status, "Unknown");
    if (cJSON_IsTrue (s_at (node, "spec.unschedulable")))
        sim_buf_puts (&status, ",SchedulingDisabled");
    //  findNodeRoles: node-role.kubernetes.io/<role> keys and the value of
    //  kubernetes.io/role, as a sorted set.
    const char *roles[64];
    int n = 0;
    const cJSON *l;
    static const char prefix[] = "node-role.kubernetes.io/";
    cJSON_ArrayForEach (l, s_at (node, "metadata.labels"))
    {
        const char *role = NULL;
        if (!strncmp (l->string, prefix, sizeof prefix - 1) && l->string[sizeof prefix - 1])
            role = l->string + sizeof prefix - 1;
        else if (!strcmp (l->string, "kubernetes.io/role") && cJSON_IsString (l) && *l->valuestring)
            role = l->valuestring;
        bool dup = false;
        for (int i = 0; role && i < n; i++)
            dup = dup || !strcmp (roles[i], role);
        if (role && !dup && n < 64)
            roles[n++] = role;
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && strcmp (roles[j - 1], roles[j]) > 0; j--) {
            const char *t = roles[j];
            roles[j] = roles[j - 1];
            roles[j - 1] = t;
        }
    sim_buf_t role_text = {0};
    for (int i = 0; i < n; i++)
        sim_buf_printf (&role_text, "%s%s", i ? "," : "", roles[i]);
    s_add_str (cells, s_str (node, "metadata.name"));
    s_add_str (cells, status.data);
    s_add_str (cells, n ? role_text.data : "<none>");
    s_add_age (cells, node, now);
    s_add_str (cells, s_str (node, "status.nodeInfo.kubeletVersion"));
    s_add_str (cells, s_node_address (node, "InternalIP"));
    s_add_str (cells, s_node_address (node, "ExternalIP"));
    static const char *const info[] = {"osImage", "kernelVersion", "containerRuntimeVersion"};
    for (int i = 0; i < 3; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive (s_at (node, "status.nodeInfo"), info[i]);
        s_add_str (cells, cJSON_IsString (v) && *v->valuestring ? v->valuestring : "<unknown>");
    }
    sim_buf_clear (&status);
    sim_buf_clear (&role_text);
}

static void
s_row_namespace (const cJSON *ns, time_t now, cJSON *cells)
{
    s_add_str (cells, s_str (ns, "metadata.name"));
    s_add_str (cells, s_str (ns, "status.phase"));
    s_add_age (cells, ns, now);
}

//  printEvent (the server prints the wide form): LAST SEEN, TYPE, REASON,
//  OBJECT kind/name, SUBOBJECT, SOURCE, MESSAGE, FIRST SEEN, COUNT, NAME.
static void
s_row_event (const cJSON *ev, time_t now, cJSON *cells)
{
    const char *first_ts = s_str (ev, "firstTimestamp");
    if (s_time (first_ts) == (time_t)-1)
        first_ts = s_str (ev, "eventTime");
    const char *last_ts = s_str (ev, "lastTimestamp");
    if (s_time (last_ts) == (time_t)-1)
        last_ts = first_ts;
    long long count = s_int (ev, "count");
    if (s_at (ev, "series")) {
        last_ts = s_str (ev, "series.lastObservedTime");
        count = s_int (ev, "series.count");
    } else if (count == 0)
        count = 1;
    char target[600], lower[128];
    const char *kind = s_str (ev, "involvedObject.kind");
    snprintf (lower, sizeof lower, "%s", kind ? kind : "");
    for (char *p = lower; *p; p++)
        *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
    const char *name = s_str (ev, "involvedObject.name");
    if (s_nonempty (name))
        snprintf (target, sizeof target, "%s/%s", lower, name);
    else
        snprintf (target, sizeof target, "%s", lower);
    const char *component = s_str (ev, "source.component");
    if (!s_nonempty (component))
        component = s_str (ev, "reportingComponent");
    const char *host = s_str (ev, "source.host");
    if (!s_nonempty (host))
        host = s_str (ev, "reportingInstance");
    char source[512];
    if (!s_nonempty (component))
        snprintf (source, sizeof source, "<unknown>");
    else if (!s_nonempty (host))
        snprintf (source, sizeof source, "%s", component);
    else
        snprintf (source, sizeof source, "%s, %s", component, host);
    //  strings.TrimSpace of the message.
    const char *message = s_str (ev, "message");
    sim_buf_t msg = {0};
    if (message) {
        while (*message == ' ' || *message == '\n' || *message == '\t' || *message == '\r')
            message++;
        size_t len = strlen (message);
        while (len && strchr (" \n\t\r", message[len - 1]))
            len--;
        sim_buf_append (&msg, message, len);
    }
    cJSON_AddItemToArray (cells, s_age (last_ts, now));
    s_add_str (cells, s_str (ev, "type"));
    s_add_str (cells, s_str (ev, "reason"));
    s_add_str (cells, target);
    s_add_str (cells, s_str (ev, "involvedObject.fieldPath"));
    s_add_str (cells, source);
    s_add_str (cells, msg.data);
    cJSON_AddItemToArray (cells, s_age (first_ts, now));
    s_add_int (cells, count);
    s_add_str (cells, s_str (ev, "metadata.name"));
    sim_buf_clear (&msg);
}

static void
s_row_deployment (const cJSON *d, time_t now, cJSON *cells)
{
    char ready[64];
    const cJSON *replicas = s_at (d, "spec.replicas");
    snprintf (ready, sizeof ready, "%lld/%lld", s_int (d, "status.readyReplicas"),
              cJSON_IsNumber (replicas) ? (long long)replicas->valuedouble : 1);
    s_add_str (cells, s_str (d, "metadata.name"));
    s_add_str (cells, ready);
    s_add_int (cells, s_int (d, "status.updatedReplicas"));
    s_add_int (cells, s_int (d, "status.availableReplicas"));
    s_add_age (cells, d, now);
    s_add_containers (cells, s_at (d, "spec.template.spec.containers"));
    s_add_selector (cells, s_at (d, "spec.selector"));
}

static void
s_row_replicaset (const cJSON *rs, time_t now, cJSON *cells)
{
    const cJSON *replicas = s_at (rs, "spec.replicas");
    s_add_str (cells, s_str (rs, "metadata.name"));
    s_add_int (cells, cJSON_IsNumber (replicas) ? (long long)replicas->valuedouble : 1);
    s_add_int (cells, s_int (rs, "status.replicas"));
    s_add_int (cells, s_int (rs, "status.readyReplicas"));
    s_add_age (cells, rs, now);
    s_add_containers (cells, s_at (rs, "spec.template.spec.containers"));
    s_add_selector (cells, s_at (rs, "spec.selector"));
}

static void
s_row_lease (const cJSON *lease, time_t now, cJSON *cells)
{
    s_add_str (cells, s_str (lease, "metadata.name"));
    s_add_str (cells, s_str (lease, "spec.holderIdentity"));
    s_add_age (cells, lease, now);
}

//  data and binary data entries together.
static long long
s_data_count (const cJSON *obj, const char *binary)
{
    long long n = cJSON_GetArraySize (s_at (obj, "data"));
    return binary ? n + cJSON_GetArraySize (s_at (obj, binary)) : n;
}

static void
s_row_secret (const cJSON *secret, time_t now, cJSON *cells)
{
    s_add_str (cells, s_str (secret, "metadata.name"));
    s_add_str (cells, s_str (secret, "type"));
    s_add_int (cells, s_data_count (secret, NULL));
    s_add_age (cells, secret, now);
}

static void
s_row_configmap (const cJSON *cm, time_t now, cJSON *cells)
{
    s_add_str (cells, s_str (cm, "metadata.name"));
    s_add_int (cells, s_data_count (cm, "binaryData"));
    s_add_age (cells, cm, now);
}

static void
s_row_serviceaccount (const cJSON *sa, time_t now, cJSON *cells)
{
    s_add_str (cells, s_str (sa, "metadata.name"));
    s_add_int (cells, cJSON_GetArraySize (s_at (sa, "secrets")));
    s_add_age (cells, sa, now);
}

//  Access modes as kubectl abbreviates them (GetAccessModesAsString):
//  RWO, ROX, RWX, RWOP, in that order, comma-separated.
static void
s_add_access_modes (cJSON *cells, const cJSON *modes)
{
    static const char *const order[][2] = {{"ReadWriteOnce", "RWO"},
                                           {"ReadOnlyMany", "ROX"},
                                           {"ReadWriteMany", "RWX"},
                                           {"ReadWriteOncePod", "RWOP"}};
    char text[64] = "";
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        bool have = false;
        const cJSON *m;
        cJSON_ArrayForEach (m, modes)
        {
            have = have || (cJSON_IsString (m) && !strcmp (m->valuestring, order[i][0]));
        }
        if (have) {
            size_t n = strlen (text);
            snprintf (text + n, sizeof text - n, "%s%s", n ? "," : "", order[i][1]);
        }
    }
    s_add_str (cells, text);
}

static void
s_add_bool (cJSON *cells, const cJSON *v)
{
    cJSON_AddItemToArray (cells, cJSON_CreateBool (cJSON_IsTrue (v)));
}

static void
s_row_pv (const cJSON *pv, time_t now, cJSON *cells)
{
    s_add_str (cells, s_str (pv, "metadata.name"));
    s_add_str (cells, s_str (pv, "spec.capacity.storage"));
    s_add_access_modes (cells, s_at (pv, "spec.accessModes"));
    s_add_str (cells, s_str (pv, "spec.persistentVolumeReclaimPolicy"));
    s_add_str (cells, s_str (pv, "status.phase"));
    char claim[600] = "";
    const char *ns = s_str (pv, "spec.claimRef.namespace");
    const char *name = s_str (pv, "spec.claimRef.name");
    if (name)
        snprintf (claim, sizeof claim, "%s/%s", ns ? ns : "", name);
    s_add_str (cells, claim);
    s_add_str (cells, s_str (pv, "spec.storageClassName"));
    const char *vac = s_str (pv, "spec.volumeAttributesClassName");
    s_add_str (cells, vac ? vac : "<unset>");
    s_add_str (cells, s_str (pv, "status.reason"));
    s_add_age (cells, pv, now);
    s_add_str (cells, s_str (pv, "spec.volumeMode"));
}

static void
s_row_pvc (const cJSON *pvc, time_t now, cJSON *cells)
{
    s_add_str (cells, s_str (pvc, "metadata.name"));
    const char *phase = s_str (pvc, "status.phase");
    s_add_str (cells, s_at (pvc, "metadata.deletionTimestamp") ? "Terminating" : phase);
    s_add_str (cells, s_str (pvc, "spec.volumeName"));
    //  Capacity and modes only once bound (the real printer's rule).
    const char *vn = s_str (pvc, "spec.volumeName");
    bool bound = vn && *vn;
    s_add_str (cells, bound ? s_str (pvc, "status.capacity.storage") : "");
    s_add_access_modes (cells, bound ? s_at (pvc, "status.accessModes") : NULL);
    s_add_str (cells, s_str (pvc, "spec.storageClassName"));
    const char *vac = s_str (pvc, "spec.volumeAttributesClassName");
    s_add_str (cells, vac ? vac : "<unset>");
    s_add_age (cells, pvc, now);
    s_add_str (cells, s_str (pvc, "spec.volumeMode"));
}

static void
s_row_storageclass (const cJSON *sc, time_t now, cJSON *cells)
{
    char name[600];
    const char *n = s_str (sc, "metadata.name");
    const cJSON *d = cJSON_GetObjectItemCaseSensitive (
        s_at (sc, "metadata.annotations"), "storageclass.kubernetes.io/is-default-class");
    const char *def = cJSON_IsString (d) ? d->valuestring : NULL;
    snprintf (name, sizeof name, "%s%s", n ? n : "",
              def && !strcmp (def, "true") ? " (default)" : "");
    s_add_str (cells, name);
    s_add_str (cells, s_str (sc, "provisioner"));
    s_add_str (cells, s_str (sc, "reclaimPolicy"));
    s_add_str (cells, s_str (sc, "volumeBindingMode"));
    s_add_bool (cells, s_at (sc, "allowVolumeExpansion"));
    s_add_age (cells, sc, now);
}

static void
s_row_csinode (const cJSON *node, time_t now, cJSON *cells)
{
    s_add_str (cells, s_str (node, "metadata.name"));
    s_add_int (cells, cJSON_GetArraySize (s_at (node, "spec.drivers")));
    s_add_age (cells, node, now);
}

static void
s_row_csidriver (const cJSON *drv, time_t now, cJSON *cells)
{
    s_add_str (cells, s_str (drv, "metadata.name"));
    s_add_bool (cells, s_at (drv, "spec.attachRequired"));
    s_add_bool (cells, s_at (drv, "spec.podInfoOnMount"));
    s_add_bool (cells, s_at (drv, "spec.storageCapacity"));
    //  The audiences of the token requests, or <unset>.
    char tokens[600] = "";
    const cJSON *t;
    cJSON_ArrayForEach (t, s_at (drv, "spec.tokenRequests"))
    {
        const char *aud = s_str (t, "audience");
        size_t len = strlen (tokens);
        snprintf (tokens + len, sizeof tokens - len, "%s%s", len ? "," : "", aud ? aud : "");
    }
    s_add_str (cells, *tokens ? tokens : "<unset>");
    s_add_bool (cells, s_at (drv, "spec.requiresRepublish"));
    char modes[200] = "";
    cJSON_ArrayForEach (t, s_at (drv, "spec.volumeLifecycleModes"))
    {
        size_t len = strlen (modes);
        if (cJSON_IsString (t))
            snprintf (modes + len, sizeof modes - len, "%s%s", len ? "," : "", t->valuestring);
    }
    s_add_str (cells, modes);
    s_add_age (cells, drv, now);
}

//  The default convertor's Created At: the creation time in RFC 3339 UTC.
static void
s_row_default (const cJSON *obj, time_t now, cJSON *cells)
{
    (void)now;
    s_add_str (cells, s_str (obj, "metadata.name"));
    s_add_str (cells, s_str (obj, "metadata.creationTimestamp"));
}

typedef struct {
    sim_kind_id_t kind;        // the kind printed
    const s_column_t *columns; // its columns
    s_row_fn *row;             // its cells
} s_printer_t;

static const s_printer_t s_printers[] = {
    {SIM_KIND_PODS, s_pod_columns, s_row_pod},
    {SIM_KIND_NODES, s_node_columns, s_row_node},
    {SIM_KIND_NAMESPACES, s_namespace_columns, s_row_namespace},
    {SIM_KIND_EVENTS, s_event_columns, s_row_event},
    {SIM_KIND_DEPLOYMENTS, s_deployment_columns, s_row_deployment},
    {SIM_KIND_REPLICASETS, s_replicaset_columns, s_row_replicaset},
    {SIM_KIND_LEASES, s_lease_columns, s_row_lease},
    {SIM_KIND_SECRETS, s_secret_columns, s_row_secret},
    {SIM_KIND_CONFIGMAPS, s_configmap_columns, s_row_configmap},
    {SIM_KIND_SERVICEACCOUNTS, s_serviceaccount_columns, s_row_serviceaccount},
    {SIM_KIND_PERSISTENTVOLUMES, s_pv_columns, s_row_pv},
    {SIM_KIND_PERSISTENTVOLUMECLAIMS, s_pvc_columns, s_row_pvc},
    {SIM_KIND_STORAGECLASSES, s_storageclass_columns, s_row_storageclass},
    {SIM_KIND_CSINODES, s_csinode_columns, s_row_csinode},
    {SIM_KIND_CSIDRIVERS, s_csidriver_columns, s_row_csidriver},
};

static const s_printer_t s_default_printer = {SIM_KIND_COUNT, s_default_columns, s_row_default};

static const s_printer_t *
s_printer (const sim_kind_t *kind)
{
    for (size_t i = 0; i < sizeof s_printers / sizeof s_printers[0]; i++)
        if (s_printers[i].kind == kind->id)
            return &s_printers[i];
    return &s_default_printer;
}

// ---------------------------------------------------------------------------
// Custom resources: the CRD's additionalPrinterColumns

//  Evaluate a simple JSONPath (`.a.b`, `.a[0].b`, `{.a.b}`) on obj; NULL
//  when it finds nothing.
static const cJSON *
s_jsonpath (const cJSON *obj, const char *path)
{
    char copy[256];
    snprintf (copy, sizeof copy, "%s", path ? path : "");
    char *p = copy;
    if (*p == '{') {
        p++;
        char *end = strrchr (p, '}');
        if (end)
            *end = 0;
    }
    const cJSON *node = obj;
    while (node && *p) {
        if (*p == '.') {
            p++;
            size_t n = strcspn (p, ".[");
            char name[128];
            snprintf (name, sizeof name, "%.*s", (int)n, p);
            node = cJSON_IsObject (node) ? cJSON_GetObjectItemCaseSensitive (node, name) : NULL;
            p += n;
        } else if (*p == '[') {
            char *end = NULL;
            long i = strtol (p + 1, &end, 10);
            if (!end || *end != ']' || !cJSON_IsArray (node) || i < 0)
                return NULL;
            node = cJSON_GetArrayItem (node, (int)i);
            p = end + 1;
        } else
            return NULL;
    }
    return node;
}

//  One cell of a CRD column (tableconvertor: a string column prints the
//  value with the JSONPath printer; others go through cellForJSONValue).
static cJSON *
s_crd_cell (const cJSON *obj, const cJSON *column, time_t now)
{
    const cJSON *v = s_jsonpath (obj, sim_json_str (column, "jsonPath"));
    const char *type = sim_json_str (column, "type");
    if (!v || cJSON_IsNull (v) || !type)
        return cJSON_CreateNull ();
    if (!strcmp (type, "string")) {
        if (cJSON_IsString (v))
            return cJSON_CreateString (v->valuestring);
        char *text = cJSON_PrintUnformatted (v);
        cJSON *cell = cJSON_CreateString (text ? text : "");
        free (text);
        return cell;
    }
    if (!strcmp (type, "integer") && cJSON_IsNumber (v))
        return cJSON_CreateNumber ((double)(long long)v->valuedouble);
    if (!strcmp (type, "number") && cJSON_IsNumber (v))
        return cJSON_CreateNumber (v->valuedouble);
    if (!strcmp (type, "boolean") && cJSON_IsBool (v))
        return cJSON_CreateBool (cJSON_IsTrue (v));
    if (!strcmp (type, "date") && cJSON_IsString (v)) {
        if (s_time (v->valuestring) == (time_t)-1)
            return cJSON_CreateString ("<invalid>");
        return s_age (v->valuestring, now);
    }
    return cJSON_CreateNull ();
}

//  The Age column a CRD without additionalPrinterColumns is served with
//  (apiextensions-apiserver serveDefaultColumnsIfEmpty).
static cJSON *
s_crd_default_columns (void)
{
    cJSON *cols = cJSON_CreateArray ();
    cJSON *age = cJSON_CreateObject ();
    cJSON_AddStringToObject (age, "name", "Age");
    cJSON_AddStringToObject (age, "type", "date");
    cJSON_AddStringToObject (age, "description", S_CREATED_DOC);
    cJSON_AddStringToObject (age, "jsonPath", ".metadata.creationTimestamp");
    cJSON_AddItemToArray (cols, age);
    return cols;
}

// ---------------------------------------------------------------------------
// The Table

const char *
sim_table_accept (const char *accept)
{
    if (!accept)
        return NULL;
    char copy[1024];
    snprintf (copy, sizeof copy, "%s", accept);
    char *save = NULL;
    for (char *clause = strtok_r (copy, ",", &save); clause; clause = strtok_r (NULL, ",", &save)) {
        //  The media type, then its parameters.
        char *psave = NULL;
        char *type = strtok_r (clause, ";", &psave);
        while (type && *type == ' ')
            type++;
        if (!type)
            continue;
        size_t tl = strlen (type);
        while (tl && type[tl - 1] == ' ')
            type[--tl] = 0;
        bool json = !strcasecmp (type, "application/json");
        bool any = !strcmp (type, "*/*") || !strcasecmp (type, "application/*");
        if (!json && !any)
            continue; // protobuf, yaml, …: not served here; look further
        const char *as = NULL, *g = NULL, *v = NULL;
        for (char *p = strtok_r (NULL, ";", &psave); p; p = strtok_r (NULL, ";", &psave)) {
            while (*p == ' ')
                p++;
            char *eq = strchr (p, '=');
            if (!eq)
                continue;
            *eq = 0;
            char *val = eq + 1;
            size_t vl = strlen (val);
            while (vl && val[vl - 1] == ' ')
                val[--vl] = 0;
            if (!strcmp (p, "as"))
                as = val;
            else if (!strcmp (p, "g"))
                g = val;
            else if (!strcmp (p, "v"))
                v = val;
        }
        if (!as)
            return NULL; // the object itself
        if (json && !strcmp (as, "Table") && g && !strcmp (g, "meta.k8s.io") && v) {
            if (!strcmp (v, "v1"))
                return "meta.k8s.io/v1";
            if (!strcmp (v, "v1beta1"))
                return "meta.k8s.io/v1beta1";
        }
        //  Another transformation (PartialObjectMetadata, …): next clause.
    }
    return NULL;
}

int
sim_table_include_parse (const char *value, sim_table_include_t *include_p)
{
    if (!value || !*value || !strcmp (value, "Metadata"))
        *include_p = SIM_TABLE_INCLUDE_METADATA;
    else if (!strcmp (value, "Object"))
        *include_p = SIM_TABLE_INCLUDE_OBJECT;
    else if (!strcmp (value, "None"))
        *include_p = SIM_TABLE_INCLUDE_NONE;
    else
        return -1;
    return 0;
}

static void
s_append_column (sim_buf_t *out, const char *name, const char *type, const char *format,
                 const char *description, int priority)
{
    sim_buf_puts (out, "{\"name\":");
    sim_buf_json_string (out, name ? name : "");
    sim_buf_puts (out, ",\"type\":");
    sim_buf_json_string (out, type ? type : "");
    sim_buf_puts (out, ",\"format\":");
    sim_buf_json_string (out, format ? format : "");
    sim_buf_puts (out, ",\"description\":");
    sim_buf_json_string (out, description ? description : "");
    sim_buf_printf (out, ",\"priority\":%d}", priority);
}

//  A row's object, as includeObject asks.
static void
s_append_row_object (const sim_table_opts_t *opts, sim_obj_t *obj, sim_buf_t *out)
{
    if (opts->include == SIM_TABLE_INCLUDE_OBJECT) {
        sim_buf_puts (out, ",\"object\":");
        sim_obj_append_full (obj, out);
    } else if (opts->include == SIM_TABLE_INCLUDE_METADATA) {
        sim_buf_puts (out, ",\"object\":{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":");
        sim_buf_json_string (out, opts->api_version);
        char *meta =
            cJSON_PrintUnformatted (cJSON_GetObjectItemCaseSensitive (obj->json, "metadata"));
        sim_buf_puts (out, ",\"metadata\":");
        sim_buf_puts (out, meta ? meta : "{}");
        sim_buf_puts (out, "}");
        free (meta);
    }
}

void
sim_table_append (const sim_table_opts_t *opts, sim_obj_t *const *objs, size_t n,
                  const char *list_meta, sim_buf_t *out)
{
    time_t now = time (NULL);
    const s_printer_t *printer = s_printer (opts->kind);
    cJSON *crd_defaults = NULL;
    const cJSON *crd_columns = NULL;
    if (!opts->kind->builtin) {
        crd_columns = opts->crd_columns;
        if (cJSON_GetArraySize (crd_columns) == 0)
            crd_columns = crd_defaults = s_crd_default_columns ();
    }
    sim_buf_puts (out, "{\"kind\":\"Table\",\"apiVersion\":");
    sim_buf_json_string (out, opts->api_version);
    sim_buf_printf (out, ",\"metadata\":{%s},\"columnDefinitions\":[", list_meta ? list_meta : "");
    if (crd_columns) {
        s_append_column (out, "Name", "string", "name", S_NAME_DOC, 0);
        const cJSON *col;
        cJSON_ArrayForEach (col, crd_columns)
        {
            char desc[512];
            const char *d = sim_json_str (col, "description");
            if (!s_nonempty (d)) {
                snprintf (desc, sizeof desc,
                          "Custom resource definition column (in JSONPath format): %s",
                          sim_json_str (col, "jsonPath") ? sim_json_str (col, "jsonPath") : "");
                d = desc;
            }
            const cJSON *prio = cJSON_GetObjectItemCaseSensitive (col, "priority");
            sim_buf_puts (out, ",");
            s_append_column (out, sim_json_str (col, "name"), sim_json_str (col, "type"),
                             sim_json_str (col, "format"), d,
                             cJSON_IsNumber (prio) ? (int)prio->valuedouble : 0);
        }
    } else
        for (const s_column_t *c = printer->columns; c->name; c++) {
            if (c != printer->columns)
                sim_buf_puts (out, ",");
            s_append_column (out, c->name, c->type, c->format, c->description, c->priority);
        }
    sim_buf_puts (out, "],\"rows\":[");
    for (size_t i = 0; i < n; i++) {
        cJSON *cells = cJSON_CreateArray ();
        if (crd_columns) {
            s_add_str (cells, objs[i]->name);
            const cJSON *col;
            cJSON_ArrayForEach (col, crd_columns)
                cJSON_AddItemToArray (cells, s_crd_cell (objs[i]->json, col, now));
        } else
            printer->row (objs[i]->json, now, cells);
        char *text = cJSON_PrintUnformatted (cells);
        cJSON_Delete (cells);
        sim_buf_printf (out, "%s{\"cells\":%s", i ? "," : "", text ? text : "[]");
        free (text);
        //  printPod marks finished pods' rows Completed.
        const char *phase =
            opts->kind->id == SIM_KIND_PODS ? sim_json_str (objs[i]->json, "status.phase") : NULL;
        if (phase && !strcmp (phase, "Succeeded"))
            sim_buf_puts (out, ",\"conditions\":[{\"type\":\"Completed\",\"status\":\"True\","
                               "\"reason\":\"Succeeded\",\"message\":\"The pod has completed "
                               "successfully.\"}]");
        else if (phase && !strcmp (phase, "Failed"))
            sim_buf_puts (out, ",\"conditions\":[{\"type\":\"Completed\",\"status\":\"True\","
                               "\"reason\":\"Failed\",\"message\":\"The pod failed.\"}]");
        s_append_row_object (opts, objs[i], out);
        sim_buf_puts (out, "}");
    }
    sim_buf_puts (out, "]}");
    cJSON_Delete (crd_defaults);
}
