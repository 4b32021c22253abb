/*  sess_volumes: a pending pod's PersistentVolumeClaims, decided as
    kube-scheduler's VolumeBinding plugin decides them (Volcano calls that
    plugin from its predicates plugin).

    At session open (sess_volumes_task), for each claim of the pod, in
    spec.volumes order, the first of these holds the pod with the words
    kube-scheduler's PreFilter uses:
      - no such claim: `persistentvolumeclaim "x" not found` (for a
        generic ephemeral volume: `waiting for ephemeral volume controller
        to create the persistentvolumeclaim "x"`);
      - status.phase Lost: `persistentvolumeclaim "x" bound to
        non-existent persistentvolume "y"`;
      - being deleted: `persistentvolumeclaim "x" is being deleted`;
      - an ephemeral volume's claim the pod does not own: `PVC ns/x was
        not created for pod ns/p (pod is not owner)`.
    Then the claims are sorted as the binder sorts them: fully bound
    (spec.volumeName set and the PV controller's bind-completed
    annotation), unbound with delayed binding (its class is
    WaitForFirstConsumer and no volumeName yet), and the rest, which
    should have been bound already ("immediate"). Any immediate one holds
    the pod: "pod has unbound immediate PersistentVolumeClaims" (the PV
    controller binds it, and a later session sees it bound). A claim
    whose class does not exist is immediate, as the helpers decide.

    A delayed-binding claim is decided per node by the filter, as
    VolumeBinding's FindPodVolumes decides it: a claim whose selected-node
    annotation names another node refuses the node, one naming this node
    is provisioned there; the others, by increasing request, each take the
    smallest fitting PV of their class (FindMatchingVolume: a PV whose
    claimRef names the claim if its nodeAffinity admits the node, else
    none; otherwise an Available PV with no claimRef, large enough, of the
    claim's volume mode, not being deleted, selected by the claim's
    selector, admitting the node and offering each of the claim's access
    modes), each PV once; a claim with no PV is provisioned, which needs a
    class provisioner (not kubernetes.io/no-provisioner) and
    allowedTopologies admitting the node. Otherwise "node(s) didn't find
    available persistent volumes to bind", unresolvable. Basalt reads no
    CSIStorageCapacity: provisioning is not checked against capacity.
    When the pod is placed (sess_volumes_placed) the session records that
    decision for its node and offers the PVs chosen to no other claim; a
    claim two pending pods share is decided by the first placed and binds
    the other to that decision; taking the pod off its node (a discarded
    gang) gives them back. The commit lists the decisions of each bound
    placement (Placement.claims: the PV, or none for provisioning); the
    cache writes them (the PV's claimRef, or the claim's selected-node)
    and binds the pod once its claims are bound.

    Then VolumeZone's PreFilter: the PV of a bound persistentVolumeClaim
    volume must exist (`persistentvolume "y" not found`).

    VolumeRestrictions' ReadWriteOncePod rule: a pod using a
    ReadWriteOncePod claim fits no node while another pod on a node uses
    that claim ("node has pod using PersistentVolumeClaim with the same
    name and ReadWriteOncePod access mode"), a resolvable failure: evicting
    the user frees the claim. The users are counted once per session for
    the claims pending pods ask for, then kept as the session places pods
    and takes them off nodes (the predicates plugin's event handlers call
    sess_volumes_placed), so two pods of one session never both take it.
    Every pod's claims are decoded for this, a bound pod's too.

    The per-node filter (sess_volumes_check) is that rule; then
    NodeVolumeLimits for CSI volumes: where the node's CSINode gives a
    driver an allocatable.count, the volumes of that driver attached there
    (each once, however many counted pods use it; a counted pod's claim
    with no volume yet, or a missing one, counts as one volume of its
    class's provisioner) plus the pod's new ones (its delayed claims
    counted the same way) must stay within it
    ("node(s) exceed max volume count", resolvable; a negative count,
    which the API server refuses, makes the node refuse such pods saying
    so); then VolumeBinding's Filter for the bound claims: the claim's PV
    must exist ("node(s) unavailable due to one or more pvc(s) bound to
    non-existent pv(s)": only an ephemeral volume's claim gets this far
    without one) and its nodeAffinity must admit the node ("node(s) had
    volume node affinity conflict"); then the delayed claims, as above;
    then VolumeZone's: each PV's topology labels (failure-domain.beta...
    and topology.kubernetes.io zone and region; a value may list zones
    joined by "__") must name the node's value of that label, unless the
    node has none of them ("node(s) had no available volume zone"). All
    are unresolvable: evicting pods does not help.

    Design note: the claim index is built only in a session that has a
    pending pod with claims, and the PVs are indexed by class only for the
    classes of pending pods' delayed claims, so the common case pays one
    pointer test per pending pod. Every message and array is the session's
    and is freed at close (sess_volumes_destroy); the objects are borrowed
    from the replica.
*/
#include "sess_session.h"
#include "bas_k8s.h"
#include "bas_util.h"
#include "bas_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  A node's CSI volumes for NodeVolumeLimits: each attached volume
//  ("driver/handle") with the number of counted pods using it, each
//  driver's number of attached volumes, and its CSINode's limits.
typedef struct {
    const Basalt__V1__CSINode *csi_node; // borrowed, NULL: no limit on this node
    zhashx_t *volumes;                   // "driver/handle" -> int * (pods using it)
    zhashx_t *drivers;                   // driver -> int * (volumes attached)
} s_node_vols_t;

//  One CSI volume of a pod: its driver and its unique name.
typedef struct {
    const char *driver; // borrowed from the PV
    char *unique;       // "driver/handle", in the session's owned list
} s_csi_t;

typedef struct _s_claim_t s_claim_t;

//  A PV of a class that a pending pod's delayed claim asks for, and the
//  claim of this session it is chosen for while a pod using that claim is
//  placed (VolumeBinding's assume: no other claim is offered it).
typedef struct {
    const Basalt__V1__PersistentVolume *pv; // borrowed from the replica
    const s_claim_t *taken;                 // the claim it is chosen for, or NULL
    bool available;                         // phase Available, no claimRef: any claim's
} s_pv_t;

//  A PV of a list: its capacity and position in its class's PVs.
typedef struct {
    int64_t bytes;
    size_t at;
} s_pv_ref_t;

//  PVs of a class by increasing capacity, then name: the first that fits
//  a claim is the one FindMatchingVolume takes among them.
typedef struct {
    s_pv_ref_t *at; // owned
    size_t n, cap;
} s_pv_list_t;

//  The PVs of one class, by name, and the same indexed for matching: those
//  pinned to one host (a local volume: one nodeAffinity term, one
//  requirement, kubernetes.io/hostname In [one name]) by that host, the
//  others apart, and those whose claimRef names a claim. A node's candidates
//  are the loose ones and its host's, not every PV of the class.
typedef struct {
    s_pv_t *v; // owned
    size_t n, cap;
    zhashx_t *by_host;     // hostname -> s_pv_list_t * (owned)
    s_pv_list_t **on_node; // per session node index: its host's list in by_host, or NULL
    s_pv_list_t loose;     // the PVs not pinned to one host
    s_pv_list_t claimed;   // the PVs with a claimRef (pre-bound or bound)
    int nnodes;            // entries in on_node
} s_class_pvs_t;

//  A claim that waits for its first consumer, once per session however
//  many pending pods use it, and what the session decided for it while a
//  placed pod holds it: the PV chosen, or provisioning on the node.
struct _s_claim_t {
    const Basalt__V1__PersistentVolumeClaim *pvc; // borrowed
    const Basalt__V1__StorageClass *cls;          // its class, which exists (borrowed)
    s_class_pvs_t *pvs;                           // its class's PVs (in sess_volumes_t.classes)
    int holders;                                  // placed pods holding the decision
    s_pv_t *pv;                                   // the PV chosen; NULL: provisioned on node
    const sess_node_t *node;                      // the node it was decided for, when holders
};

//  One of a pending pod's delayed claims.
typedef struct {
    s_claim_t *claim; // in sess_volumes_t.delayed
    bool holds;       // the pod is placed and holds the claim's decision
} s_delayed_t;

struct _sess_volumes_t {
    zhashx_t *claims;     // "ns/name" -> const Basalt__V1__PersistentVolumeClaim * (borrowed)
    zhashx_t *delayed;    // "ns/name" -> s_claim_t * (owned): the delayed claims pending pods
                          // use, NULL until one is seen
    zhashx_t *classes;    // class -> s_class_pvs_t * (owned): the classes they ask for
    bool pvs_indexed;     // classes hold their PVs (sess_volumes_open_users)
    zlistx_t *owned;      // messages and per-task arrays, freed at close
    zhashx_t *rwop;       // "ns/name" of a ReadWriteOncePod claim a pending pod uses -> int *
                          // (pods on nodes using it), NULL until one is seen
    bool rwop_counted;    // the counts are taken (sess_volumes_open_users)
    bool any_csi;         // a pending pod has a CSI volume (NodeVolumeLimits has work)
    s_node_vols_t *nodes; // per node index, when some node has a CSI limit; else NULL
    int nnodes;
    bool any_zones;               // a pending pod's volume has a zone label
    const char *(*node_zones)[4]; // per node index: its values of s_zone_keys (borrowed),
                                  // when any_zones; else NULL
};

//  One zone constraint of a bound PV (VolumeZone): its label key and value
//  (a zone, or zones joined by "__"), borrowed from the PV.
typedef struct {
    int key_index;     // in s_zone_keys
    const char *value; // borrowed from the PV
} s_zone_t;

//  What a pod's bound claims lead to, for the filter.
struct _sess_task_volumes_t {
    int n;                                   // bound claims
    const Basalt__V1__PersistentVolume **pv; // each claim's PV, NULL when it does not exist
    int nzones;
    s_zone_t *zones; // the PVs' topology labels (persistentVolumeClaim volumes only)
    int nrwop;
    const int **rwop; // users of each ReadWriteOncePod claim it uses (in sess_volumes_t.rwop)
    int ncsi;
    s_csi_t *csi; // its bound claims' CSI volumes, and one per delayed claim whose class
                  // names a provisioner (NodeVolumeLimits)
    int ndelayed;
    s_delayed_t *delayed; // its delayed claims, by increasing request (stable)
    s_pv_t **picks;       // scratch: each delayed claim's PV (NULL: provision) on a node
    const sess_volumes_t *owner;
};

//  The labels VolumeZone reads, beta ones first, as kube-scheduler lists them.
static const char *const s_zone_keys[] = {
    "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone", "topology.kubernetes.io/region"};

//  Whether `value` ("a", "a__b") names `zone`; a list with an empty entry
//  names nothing (kube-scheduler ignores such a label: s_zone_ok).
static bool
s_zone_has (const char *value, const char *zone)
{
    size_t zl = strlen (zone);
    for (const char *p = value;;) {
        const char *end = strstr (p, "__");
        size_t len = end ? (size_t)(end - p) : strlen (p);
        //  Entries are trimmed of spaces, as LabelZonesToSet trims them.
        const char *a = p, *b = p + len;
        while (a < b && (*a == ' ' || *a == '\t'))
            a++;
        while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
            b--;
        if ((size_t)(b - a) == zl && strncmp (a, zone, zl) == 0)
            return true;
        if (!end)
            return false;
        p = end + 2;
    }
}

//  A zone label value kube-scheduler can read: no empty entry.
static bool
s_zone_ok (const char *value)
{
    for (const char *p = value;;) {
        const char *end = strstr (p, "__");
        size_t len = end ? (size_t)(end - p) : strlen (p);
        bool blank = true;
        for (size_t i = 0; i < len && blank; i++)
            blank = p[i] == ' ' || p[i] == '\t';
        if (blank)
            return false;
        if (!end)
            return true;
        p = end + 2;
    }
}

static const char *
s_str (const char *s)
{
    return s ? s : "";
}

//  The claim index's key: "<namespace>/<name>" into key (len bytes).
static const char *
s_claim_key (char *key, size_t len, const char *ns, const char *name)
{
    snprintf (key, len, "%s/%s", s_str (ns), s_str (name));
    return key;
}

static void
s_collect_claim (void *arg, const Basalt__V1__Object *obj)
{
    const Basalt__V1__PersistentVolumeClaim *pvc = obj->persistent_volume_claim;
    char key[512];
    s_claim_key (key, sizeof key, pvc->namespace_, pvc->name);
    zhashx_insert (arg, key, (void *)pvc);
}

static sess_volumes_t *
s_volumes (sess_session_t *ssn)
{
    if (!ssn->volumes) {
        sess_volumes_t *self = bas_alloc (sizeof *self);
        self->claims = zhashx_new ();
        self->owned = zlistx_new ();
        zlistx_set_destructor (self->owned, (zlistx_destructor_fn *)zstr_free);
        bas_store_foreach (ssn->replica,
                           BASALT__V1__OBJECT_KIND__OBJECT_KIND_PERSISTENT_VOLUME_CLAIM,
                           s_collect_claim, self->claims);
        ssn->volumes = self;
    }
    return ssn->volumes;
}

//  A message the session owns (it outlives the call, as task->held must).
static const char *s_say (sess_volumes_t *self, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static const char *
s_say (sess_volumes_t *self, const char *fmt, ...)
{
    char buf[768];
    va_list args;
    va_start (args, fmt);
    vsnprintf (buf, sizeof buf, fmt, args);
    va_end (args);
    char *text = bas_strdup (buf);
    zlistx_add_end (self->owned, text);
    return text;
}

//  The claim's class when the claim waits for its first consumer: a class
//  that exists and says WaitForFirstConsumer; else NULL.
static const Basalt__V1__StorageClass *
s_delayed_class (sess_session_t *ssn, const Basalt__V1__PersistentVolumeClaim *pvc)
{
    if (!pvc->storage_class || !*pvc->storage_class)
        return NULL;
    const Basalt__V1__Object *obj = bas_store_get (
        ssn->replica, BASALT__V1__OBJECT_KIND__OBJECT_KIND_STORAGE_CLASS, pvc->storage_class);
    return obj && bas_streq (obj->storage_class->volume_binding_mode, "WaitForFirstConsumer")
               ? obj->storage_class
               : NULL;
}

static bool
s_has_mode (const Basalt__V1__PersistentVolumeClaim *pvc, const char *mode)
{
    for (size_t i = 0; i < pvc->n_access_modes; i++)
        if (bas_streq (pvc->access_modes[i], mode))
            return true;
    return false;
}

//  The users counter of a ReadWriteOncePod claim, made on first sight.
static const int *
s_rwop_counter (sess_volumes_t *self, const char *key)
{
    if (!self->rwop) {
        self->rwop = zhashx_new ();
        zhashx_set_destructor (self->rwop, (zhashx_destructor_fn *)zstr_free);
    }
    int *users = zhashx_lookup (self->rwop, key);
    if (!users) {
        users = bas_alloc (sizeof *users);
        zhashx_insert (self->rwop, key, users);
    }
    return users;
}

// ------------------------------------------------------------ delayed binding

static void
s_pv_list_destroy (void **item)
{
    s_pv_list_t *l = *item;
    if (l) {
        free (l->at);
        free (l);
    }
    *item = NULL;
}

static void
s_pv_list_add (s_pv_list_t *l, const s_pv_t *v, size_t at)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 8;
        l->at = bas_realloc (l->at, l->cap * sizeof *l->at);
    }
    const Basalt__V1__PersistentVolume *pv = v[at].pv;
    l->at[l->n++] = (s_pv_ref_t){pv->has_capacity_bytes ? pv->capacity_bytes : 0, at};
}

static int
s_pv_ref_cmp (const void *a, const void *b)
{
    const s_pv_ref_t *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

static void
s_pv_list_sort (s_pv_list_t *l)
{
    if (l->n > 1)
        qsort (l->at, l->n, sizeof *l->at, s_pv_ref_cmp);
}

static void
s_class_pvs_destroy (void **item)
{
    s_class_pvs_t *c = *item;
    if (c) {
        free (c->v);
        free (c->on_node);
        zhashx_destroy (&c->by_host);
        free (c->loose.at);
        free (c->claimed.at);
        free (c);
    }
    *item = NULL;
}

//  The one host a PV is pinned to, or NULL.
static const char *
s_pv_host (const Basalt__V1__PersistentVolume *pv)
{
    if (!pv->has_node_affinity || pv->n_node_affinity != 1)
        return NULL;
    const Basalt__V1__NodeSelectorTerm *t = pv->node_affinity[0];
    if (t->n_match_fields != 0 || t->n_match_expressions != 1)
        return NULL;
    const Basalt__V1__NodeSelectorRequirement *r = t->match_expressions[0];
    return bas_streq (r->key, "kubernetes.io/hostname") && bas_streq (r->operator_, "In") &&
                   r->n_values == 1
               ? r->values[0]
               : NULL;
}

//  The session's record of a delayed claim, made on first sight (with an
//  entry for its class in the PV index).
static s_claim_t *
s_claim_for (sess_volumes_t *self, const char *key, const Basalt__V1__PersistentVolumeClaim *pvc,
             const Basalt__V1__StorageClass *cls)
{
    if (!self->delayed) {
        self->delayed = zhashx_new ();
        zhashx_set_destructor (self->delayed, (zhashx_destructor_fn *)zstr_free);
        self->classes = zhashx_new ();
        zhashx_set_destructor (self->classes, s_class_pvs_destroy);
    }
    s_claim_t *c = zhashx_lookup (self->delayed, key);
    if (c)
        return c;
    c = bas_alloc (sizeof *c);
    c->pvc = pvc;
    c->cls = cls;
    c->pvs = zhashx_lookup (self->classes, pvc->storage_class);
    if (!c->pvs) {
        c->pvs = bas_alloc (sizeof *c->pvs);
        zhashx_insert (self->classes, pvc->storage_class, c->pvs);
    }
    zhashx_insert (self->delayed, key, c);
    return c;
}

static bool s_has_claim_ref (const Basalt__V1__PersistentVolume *pv);

static void
s_collect_pv (void *arg, const Basalt__V1__Object *obj)
{
    const Basalt__V1__PersistentVolume *pv = obj->persistent_volume;
    if (!pv->storage_class || !*pv->storage_class)
        return;
    s_class_pvs_t *c = zhashx_lookup (arg, pv->storage_class);
    if (!c)
        return;
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 8;
        c->v = bas_realloc (c->v, c->cap * sizeof *c->v);
    }
    c->v[c->n++] = (s_pv_t){pv, NULL, bas_streq (pv->phase, "Available") && !s_has_claim_ref (pv)};
}

static int
s_pv_name_cmp (const void *a, const void *b)
{
    return strcmp (s_str (((const s_pv_t *)a)->pv->name), s_str (((const s_pv_t *)b)->pv->name));
}

//  The PVs of each class a delayed claim asks for, by name (the ties of
//  "smallest fitting" go to the first name).
static void
s_index_pvs (sess_session_t *ssn)
{
    sess_volumes_t *self = ssn->volumes;
    if (!self->classes || self->pvs_indexed)
        return;
    self->pvs_indexed = true;
    bas_store_foreach (ssn->replica, BASALT__V1__OBJECT_KIND__OBJECT_KIND_PERSISTENT_VOLUME,
                       s_collect_pv, self->classes);
    for (s_class_pvs_t *c = zhashx_first (self->classes); c; c = zhashx_next (self->classes)) {
        if (c->n > 1)
            qsort (c->v, c->n, sizeof *c->v, s_pv_name_cmp);
        c->by_host = zhashx_new ();
        zhashx_set_destructor (c->by_host, s_pv_list_destroy);
        for (size_t i = 0; i < c->n; i++) {
            const Basalt__V1__PersistentVolume *pv = c->v[i].pv;
            if (s_has_claim_ref (pv)) {
                s_pv_list_add (&c->claimed, c->v, i); // by name: the first pre-bound wins
                continue;
            }
            if (!c->v[i].available)
                continue; // no claim may take it
            const char *host = s_pv_host (pv);
            if (!host) {
                s_pv_list_add (&c->loose, c->v, i);
                continue;
            }
            s_pv_list_t *l = zhashx_lookup (c->by_host, host);
            if (!l) {
                l = bas_alloc (sizeof *l);
                zhashx_insert (c->by_host, host, l);
            }
            s_pv_list_add (l, c->v, i);
        }
        s_pv_list_sort (&c->loose);
        for (s_pv_list_t *l = zhashx_first (c->by_host); l; l = zhashx_next (c->by_host))
            s_pv_list_sort (l);
        //  Each node's list, looked up once (the filter runs per node and pod).
        c->on_node = bas_alloc (sizeof *c->on_node * ((size_t)ssn->nnodes + 1));
        for (int n = 0; n < ssn->nnodes && zhashx_size (c->by_host); n++) {
            const char *host = sess_node_label (&ssn->nodes[n], "kubernetes.io/hostname");
            c->on_node[n] = host ? zhashx_lookup (c->by_host, host) : NULL;
        }
        c->nnodes = ssn->nnodes;
    }
}

//  The PV's nodeAffinity admits the node (none: any node; required with
//  no term, or a term that does not parse: none).
static bool
s_pv_admits (const Basalt__V1__PersistentVolume *pv, const sess_node_t *node)
{
    if (!pv->has_node_affinity)
        return true;
    for (size_t t = 0; t < pv->n_node_affinity; t++)
        if (sess_node_term_match (pv->node_affinity[t], node))
            return true;
    return false;
}

static const char *
s_pv_label (const Basalt__V1__PersistentVolume *pv, const char *key)
{
    for (size_t i = 0; i < pv->n_labels; i++)
        if (bas_streq (pv->labels[i]->key, key))
            return s_str (pv->labels[i]->value);
    return NULL;
}

//  The claim's spec.selector selects the PV's labels (all ANDed; an In or
//  NotIn with no value, which the API refuses, selects nothing).
static bool
s_pv_selected (const Basalt__V1__LabelSelector *sel, const Basalt__V1__PersistentVolume *pv)
{
    for (size_t i = 0; i < sel->n_match_labels; i++) {
        const char *v = s_pv_label (pv, s_str (sel->match_labels[i]->key));
        if (!v || !bas_streq (v, s_str (sel->match_labels[i]->value)))
            return false;
    }
    for (size_t i = 0; i < sel->n_match_expressions; i++) {
        const Basalt__V1__NodeSelectorRequirement *req = sel->match_expressions[i];
        const char *op = s_str (req->operator_);
        if ((bas_streq (op, "In") || bas_streq (op, "NotIn")) && req->n_values == 0)
            return false;
        if (!sess_requirement_match (req, s_pv_label (pv, s_str (req->key))))
            return false;
    }
    return true;
}

//  Every access mode of the claim is one of the PV's.
static bool
s_modes_ok (const Basalt__V1__PersistentVolumeClaim *pvc, const Basalt__V1__PersistentVolume *pv)
{
    for (size_t i = 0; i < pvc->n_access_modes; i++) {
        bool found = false;
        for (size_t j = 0; j < pv->n_access_modes && !found; j++)
            found = bas_streq (pvc->access_modes[i], pv->access_modes[j]);
        if (!found)
            return false;
    }
    return true;
}

static const char *
s_volume_mode (const char *mode)
{
    return mode && *mode ? mode : "Filesystem";
}

//  The PV's claimRef names some claim / names this one (the uid only
//  when the claimRef has one), as IsVolumeBoundToClaim reads it.
static bool
s_has_claim_ref (const Basalt__V1__PersistentVolume *pv)
{
    return (pv->claim_name && *pv->claim_name) || (pv->claim_namespace && *pv->claim_namespace) ||
           (pv->claim_uid && *pv->claim_uid);
}

static bool
s_claim_ref_is (const Basalt__V1__PersistentVolume *pv,
                const Basalt__V1__PersistentVolumeClaim *pvc)
{
    return bas_streq (s_str (pv->claim_name), s_str (pvc->name)) &&
           bas_streq (s_str (pv->claim_namespace), s_str (pvc->namespace_)) &&
           (!pv->claim_uid || !*pv->claim_uid || bas_streq (pv->claim_uid, s_str (pvc->uid)));
}

//  Whether p is open to claim c on this pod: not taken by another claim of
//  the session, not chosen for an earlier claim of the pod
//  (chosen[0..nchosen)), large enough, of the claim's volume mode, not
//  being deleted.
static bool
s_pv_open (const s_claim_t *c, s_pv_t *p, s_pv_t *const *chosen, int nchosen)
{
    if (p->taken && p->taken != c)
        return false;
    for (int k = 0; k < nchosen; k++)
        if (chosen[k] == p)
            return false;
    const Basalt__V1__PersistentVolume *pv = p->pv;
    const Basalt__V1__PersistentVolumeClaim *pvc = c->pvc;
    int64_t want = pvc->has_request_bytes ? pvc->request_bytes : 0;
    int64_t have = pv->has_capacity_bytes ? pv->capacity_bytes : 0;
    return have >= want && !pv->deleting &&
           ((!pv->volume_mode && !pvc->volume_mode) ||
            bas_streq (s_volume_mode (pv->volume_mode), s_volume_mode (pvc->volume_mode)));
}

//  The best of `list` (Available PVs without a claimRef, by capacity and
//  name) for a claim that has no pre-bound PV: the first that is open to
//  it, selected by its selector, admitting the node (known for a list
//  `pinned` to the node's host) and offering every access mode of the
//  claim. *best is the best so far (smallest, then first name).
static void
s_best_of (const s_claim_t *c, const s_pv_list_t *list, bool pinned, const sess_node_t *node,
           s_pv_t *const *chosen, int nchosen, s_pv_t **best)
{
    const Basalt__V1__PersistentVolumeClaim *pvc = c->pvc;
    int64_t want = pvc->has_request_bytes ? pvc->request_bytes : 0;
    for (size_t k = 0; list && k < list->n; k++) {
        if (list->at[k].bytes < want)
            continue;
        s_pv_t *p = &c->pvs->v[list->at[k].at];
        if (p->taken && p->taken != c)
            continue; // the common refusal, before the call
        const Basalt__V1__PersistentVolume *pv = p->pv;
        if (!s_pv_open (c, p, chosen, nchosen) ||
            (pvc->selector && !s_pv_selected (pvc->selector, pv)) ||
            (!pinned && !s_pv_admits (pv, node)) || !s_modes_ok (pvc, pv))
            continue;
        int64_t was = *best && (*best)->pv->has_capacity_bytes ? (*best)->pv->capacity_bytes : 0;
        if (!*best || list->at[k].bytes < was || (list->at[k].bytes == was && p < *best))
            *best = p;
        return; // the rest of the list is larger, or later by name
    }
}

//  FindMatchingVolume for the claim on node: a PV pre-bound to the claim
//  (its claimRef names it) if its nodeAffinity admits the node, else none
//  at all; otherwise the smallest Available PV of the class that is free
//  (not in chosen[0..nchosen), not taken by another claim of the session),
//  large enough, of the claim's volume mode, not being deleted, selected by
//  the claim's selector, admitting the node and offering every access mode
//  of the claim. NULL: no match. Only the class's PVs with a claimRef, the
//  loose ones and those pinned to the node's host are looked at: a PV
//  pinned to another host cannot admit the node.
static s_pv_t *
s_find_pv (const s_claim_t *c, const sess_node_t *node, s_pv_t *const *chosen, int nchosen)
{
    if (!c->pvs || c->pvs->n == 0)
        return NULL;
    const s_class_pvs_t *cp = c->pvs;
    for (size_t k = 0; k < cp->claimed.n; k++) {
        s_pv_t *p = &cp->v[cp->claimed.at[k].at];
        if (s_claim_ref_is (p->pv, c->pvc) && s_pv_open (c, p, chosen, nchosen))
            return s_pv_admits (p->pv, node) ? p : NULL;
    }
    s_pv_t *best = NULL;
    s_best_of (c, &cp->loose, false, node, chosen, nchosen, &best);
    if (cp->on_node && node->index < cp->nnodes)
        s_best_of (c, cp->on_node[node->index], true, node, chosen, nchosen, &best);
    return best;
}

//  checkVolumeProvisions for one claim: its class names a provisioner
//  (not kubernetes.io/no-provisioner) and its allowedTopologies admit the
//  node (no term: any node). CSIStorageCapacity is not read.
static bool
s_can_provision (const s_claim_t *c, const sess_node_t *node)
{
    const char *prov = c->cls->provisioner;
    if (!prov || !*prov || bas_streq (prov, "kubernetes.io/no-provisioner"))
        return false;
    if (c->cls->n_allowed_topologies == 0)
        return true;
    for (size_t t = 0; t < c->cls->n_allowed_topologies; t++)
        if (sess_node_term_match (c->cls->allowed_topologies[t], node))
            return true;
    return false;
}

//  FindPodVolumes for the pod's delayed claims on node: true when each has
//  a PV or can be provisioned there, with picks[i] the PV of claim i (NULL:
//  provision). A claim another placed pod of the session holds keeps that
//  pod's decision (its PV must admit the node, or its node must be this
//  one), as the claim's written selected-node or the PV's claimRef would
//  make it; a claim whose selected-node names another node refuses the
//  node, one naming this node is provisioned; the others are matched by
//  increasing request, each PV chosen once, and one with no match is
//  provisioned.
static bool
s_delayed_fit (const sess_task_volumes_t *tv, const sess_node_t *node, s_pv_t **picks)
{
    for (int i = 0; i < tv->ndelayed; i++)
        picks[i] = NULL;
    for (int i = 0; i < tv->ndelayed; i++) {
        const s_delayed_t *e = &tv->delayed[i];
        const s_claim_t *c = e->claim;
        if (c->holders > (e->holds ? 1 : 0)) {
            picks[i] = c->pv;
            if (c->pv ? !s_pv_admits (c->pv->pv, node) : c->node != node)
                return false;
        } else if (c->pvc->selected_node && *c->pvc->selected_node &&
                   !bas_streq (c->pvc->selected_node, node->name))
            return false;
    }
    for (int i = 0; i < tv->ndelayed; i++) {
        const s_delayed_t *e = &tv->delayed[i];
        const s_claim_t *c = e->claim;
        if (c->holders > (e->holds ? 1 : 0) || (c->pvc->selected_node && *c->pvc->selected_node))
            continue;
        picks[i] = s_find_pv (c, node, picks, i);
        if (!picks[i] && !s_can_provision (c, node))
            return false;
    }
    for (int i = 0; i < tv->ndelayed; i++) {
        const s_delayed_t *e = &tv->delayed[i];
        const s_claim_t *c = e->claim;
        if (c->holders <= (e->holds ? 1 : 0) && c->pvc->selected_node && *c->pvc->selected_node &&
            !s_can_provision (c, node))
            return false;
    }
    return true;
}

//  A placed pod takes (hold) or gives back its delayed claims' decisions.
//  The first holder of a claim decides it for the node it is placed on.
static void
s_hold (const sess_task_t *task, bool hold)
{
    const sess_task_volumes_t *tv = task->volumes;
    if (hold) {
        if (!task->node || tv->delayed[0].holds)
            return;
        if (!s_delayed_fit (tv, task->node, tv->picks))
            bas_warn ("sched_volumes_unfit",
                      "pod=%s/%s node=%s reason=\"placed where its "
                      "delayed claims do not fit; the rest are provisioned\"",
                      s_str (task->pod->namespace_), s_str (task->pod->name), task->node->name);
        for (int i = 0; i < tv->ndelayed; i++) {
            s_delayed_t *e = &tv->delayed[i];
            s_claim_t *c = e->claim;
            if (c->holders++ == 0) {
                c->pv = tv->picks[i];
                c->node = task->node;
                if (c->pv)
                    c->pv->taken = c;
            }
            e->holds = true;
        }
        return;
    }
    for (int i = 0; i < tv->ndelayed; i++) {
        s_delayed_t *e = &tv->delayed[i];
        s_claim_t *c = e->claim;
        if (!e->holds)
            continue;
        e->holds = false;
        if (--c->holders == 0) {
            if (c->pv)
                c->pv->taken = NULL;
            c->pv = NULL;
            c->node = NULL;
        }
    }
}

void
sess_volumes_placement (const sess_task_t *task, Basalt__V1__Placement *p)
{
    const sess_task_volumes_t *tv = task->volumes;
    if (!tv || tv->ndelayed == 0)
        return;
    p->claims = bas_alloc ((size_t)tv->ndelayed * sizeof *p->claims);
    for (int i = 0; i < tv->ndelayed; i++) {
        const s_delayed_t *e = &tv->delayed[i];
        if (!e->holds)
            continue;
        const Basalt__V1__PersistentVolumeClaim *pvc = e->claim->pvc;
        Basalt__V1__ClaimBinding *cb = bas_alloc (sizeof *cb);
        basalt__v1__claim_binding__init (cb);
        cb->claim_uid = bas_strdup (s_str (pvc->uid));
        cb->namespace_ = bas_strdup (s_str (pvc->namespace_));
        cb->name = bas_strdup (s_str (pvc->name));
        if (e->claim->pv)
            cb->volume_name = bas_strdup (s_str (e->claim->pv->pv->name));
        p->claims[p->n_claims++] = cb;
    }
}

// ------------------------------------------------------------ open

void
sess_volumes_task (sess_session_t *ssn, sess_task_t *task)
{
    const Basalt__V1__Pod *pod = task->pod;
    task->volumes = NULL;
    if (pod->n_claims == 0)
        return;
    sess_volumes_t *self = s_volumes (ssn);
    const char *ns = s_str (pod->namespace_);
    const Basalt__V1__PersistentVolumeClaim **bound =
        bas_alloc (pod->n_claims * sizeof *bound); // freed below
    bool *bound_ephemeral = bas_alloc (pod->n_claims * sizeof *bound_ephemeral);
    int nbound = 0;
    const int **rwop = bas_alloc (pod->n_claims * sizeof *rwop);
    int nrwop = 0;
    //  The delayed claims, each once, with their classes.
    const Basalt__V1__PersistentVolumeClaim **dpvc = bas_alloc (pod->n_claims * sizeof *dpvc);
    const Basalt__V1__StorageClass **dcls = bas_alloc (pod->n_claims * sizeof *dcls);
    s_claim_t **dclaim = bas_alloc (pod->n_claims * sizeof *dclaim);
    int ndl = 0;
    const char *immediate = NULL;
    for (size_t i = 0; i < pod->n_claims; i++) {
        const Basalt__V1__PodClaim *c = pod->claims[i];
        const char *name = s_str (c->name);
        char key[512];
        s_claim_key (key, sizeof key, ns, name);
        const Basalt__V1__PersistentVolumeClaim *pvc = zhashx_lookup (self->claims, key);
        if (!pvc) {
            task->held = c->ephemeral
                             ? s_say (self,
                                      "waiting for ephemeral volume controller to "
                                      "create the persistentvolumeclaim \"%s\"",
                                      name)
                             : s_say (self, "persistentvolumeclaim \"%s\" not found", name);
            goto done;
        }
        if (bas_streq (pvc->phase, "Lost")) {
            task->held = s_say (self,
                                "persistentvolumeclaim \"%s\" bound to non-existent "
                                "persistentvolume \"%s\"",
                                name, s_str (pvc->volume_name));
            goto done;
        }
        if (pvc->deleting) {
            task->held = s_say (self, "persistentvolumeclaim \"%s\" is being deleted", name);
            goto done;
        }
        if (c->ephemeral && !bas_streq (pvc->owner_uid, pod->uid)) {
            task->held = s_say (self, "PVC %s/%s was not created for pod %s/%s (pod is not owner)",
                                ns, name, ns, s_str (pod->name));
            goto done;
        }
        //  VolumeRestrictions: a persistentVolumeClaim volume whose claim
        //  is ReadWriteOncePod (an ephemeral volume's claim is the pod's own).
        if (!c->ephemeral && s_has_mode (pvc, "ReadWriteOncePod"))
            rwop[nrwop++] = s_rwop_counter (self, key);
        bool fully_bound = pvc->volume_name && *pvc->volume_name && pvc->bind_completed;
        const Basalt__V1__StorageClass *cls = NULL;
        if (fully_bound) {
            bound_ephemeral[nbound] = c->ephemeral;
            bound[nbound++] = pvc;
        } else if (!(pvc->volume_name && *pvc->volume_name) && (cls = s_delayed_class (ssn, pvc))) {
            bool seen = false;
            for (int d = 0; d < ndl && !seen; d++)
                seen = dpvc[d] == pvc;
            if (!seen) {
                dcls[ndl] = cls;
                dpvc[ndl++] = pvc;
            }
        } else if (!immediate)
            immediate = name;
    }
    if (immediate) {
        task->held = "pod has unbound immediate PersistentVolumeClaims";
        goto done;
    }
    if (nbound == 0 && nrwop == 0 && ndl == 0)
        goto done;
    //  The delayed claims by increasing request, stable (the binder's
    //  byPVCSize order, in which each claim takes the smallest PV left).
    for (int d = 1; d < ndl; d++) {
        const Basalt__V1__PersistentVolumeClaim *pvc = dpvc[d];
        const Basalt__V1__StorageClass *cls = dcls[d];
        int64_t want = pvc->has_request_bytes ? pvc->request_bytes : 0;
        int k = d;
        for (; k > 0 && (dpvc[k - 1]->has_request_bytes ? dpvc[k - 1]->request_bytes : 0) > want;
             k--) {
            dpvc[k] = dpvc[k - 1];
            dcls[k] = dcls[k - 1];
        }
        dpvc[k] = pvc;
        dcls[k] = cls;
    }
    //  NodeVolumeLimits counts a claim with no volume yet as one volume of
    //  its class's provisioner (getCSIDriverInfoFromSC), as s_pod_csi does
    //  once the pod is placed.
    int ndl_csi = 0;
    for (int d = 0; d < ndl; d++) {
        char key[512];
        dclaim[d] =
            s_claim_for (self, s_claim_key (key, sizeof key, ns, dpvc[d]->name), dpvc[d], dcls[d]);
        ndl_csi += dcls[d]->provisioner && *dcls[d]->provisioner;
    }
    //  The PVs, and VolumeZone's PreFilter: a persistentVolumeClaim
    //  volume's PV must exist (its lister's NotFound words), and its
    //  topology labels are the pod's zone constraints.
    const Basalt__V1__PersistentVolume **pvs = bas_alloc ((size_t)nbound * sizeof *pvs);
    int nzones = 0;
    for (int i = 0; i < nbound; i++) {
        const Basalt__V1__Object *obj =
            bas_store_get (ssn->replica, BASALT__V1__OBJECT_KIND__OBJECT_KIND_PERSISTENT_VOLUME,
                           bound[i]->volume_name);
        pvs[i] = obj ? obj->persistent_volume : NULL;
        if (!pvs[i] && !bound_ephemeral[i]) {
            task->held =
                s_say (self, "persistentvolume \"%s\" not found", s_str (bound[i]->volume_name));
            free (pvs);
            goto done;
        }
        for (size_t l = 0; pvs[i] && !bound_ephemeral[i] && l < pvs[i]->n_labels; l++)
            for (size_t k = 0; k < sizeof s_zone_keys / sizeof s_zone_keys[0]; k++)
                nzones += bas_streq (pvs[i]->labels[l]->key, s_zone_keys[k]) &&
                          s_zone_ok (s_str (pvs[i]->labels[l]->value));
    }
    int ncsi = ndl_csi;
    for (int i = 0; i < nbound; i++)
        ncsi += pvs[i] && pvs[i]->csi_driver && *pvs[i]->csi_driver && pvs[i]->csi_volume_handle &&
                *pvs[i]->csi_volume_handle;
    //  One block: the struct, its PV pointers, its counters, its zones, its
    //  CSI volumes.
    char *block =
        bas_alloc (sizeof (sess_task_volumes_t) + (size_t)(nbound + nrwop) * sizeof (void *) +
                   (size_t)nzones * sizeof (s_zone_t) + (size_t)ncsi * sizeof (s_csi_t) +
                   (size_t)ndl * (sizeof (s_delayed_t) + sizeof (s_pv_t *)));
    sess_task_volumes_t *tv = (sess_task_volumes_t *)block;
    tv->pv = (const Basalt__V1__PersistentVolume **)(block + sizeof *tv);
    tv->rwop = (const int **)(block + sizeof *tv + (size_t)nbound * sizeof (void *));
    tv->zones = (s_zone_t *)(block + sizeof *tv + (size_t)(nbound + nrwop) * sizeof (void *));
    tv->csi = (s_csi_t *)((char *)tv->zones + (size_t)nzones * sizeof (s_zone_t));
    tv->delayed = (s_delayed_t *)((char *)tv->csi + (size_t)ncsi * sizeof (s_csi_t));
    tv->picks = (s_pv_t **)((char *)tv->delayed + (size_t)ndl * sizeof (s_delayed_t));
    tv->ndelayed = ndl;
    for (int d = 0; d < ndl; d++)
        tv->delayed[d] = (s_delayed_t){dclaim[d], false};
    tv->owner = self;
    tv->n = nbound;
    tv->nrwop = nrwop;
    memcpy (tv->rwop, rwop, (size_t)nrwop * sizeof *rwop);
    for (int i = 0; i < nbound; i++) {
        tv->pv[i] = pvs[i];
        for (size_t l = 0; pvs[i] && !bound_ephemeral[i] && l < pvs[i]->n_labels; l++)
            for (size_t k = 0; k < sizeof s_zone_keys / sizeof s_zone_keys[0]; k++)
                if (bas_streq (pvs[i]->labels[l]->key, s_zone_keys[k]) &&
                    s_zone_ok (s_str (pvs[i]->labels[l]->value)))
                    tv->zones[tv->nzones++] = (s_zone_t){(int)k, s_str (pvs[i]->labels[l]->value)};
    }
    for (int i = 0; i < nbound; i++)
        if (pvs[i] && pvs[i]->csi_driver && *pvs[i]->csi_driver && pvs[i]->csi_volume_handle &&
            *pvs[i]->csi_volume_handle) {
            s_csi_t *c = &tv->csi[tv->ncsi++];
            c->driver = pvs[i]->csi_driver;
            c->unique =
                (char *)s_say (self, "%s/%s", pvs[i]->csi_driver, pvs[i]->csi_volume_handle);
        }
    for (int d = 0; d < ndl; d++)
        if (dcls[d]->provisioner && *dcls[d]->provisioner) {
            char key[512];
            s_csi_t *c = &tv->csi[tv->ncsi++];
            c->driver = dcls[d]->provisioner;
            c->unique = (char *)s_say (self, "%s/ claim %s", dcls[d]->provisioner,
                                       s_claim_key (key, sizeof key, ns, dpvc[d]->name));
        }
    self->any_csi |= tv->ncsi > 0;
    self->any_zones |= tv->nzones > 0;
    free (pvs);
    zlistx_add_end (self->owned, block);
    task->volumes = tv;
done:
    free (bound);
    free (bound_ephemeral);
    free (rwop);
    free (dpvc);
    free (dcls);
    free (dclaim);
}

//  Each CSI volume a pod's claims lead to, as NodeVolumeLimits counts an
//  existing pod's: claim -> PV -> spec.csi; a claim with no volume yet, or
//  whose volume does not exist, counts as one volume of its class's
//  provisioner (the volume it will get), named after the claim, as
//  kube-scheduler's getCSIDriverInfoFromSC does. A claim not found, or
//  with no class or a class not found, is not counted.
typedef void (s_csi_fn) (s_node_vols_t *nv, const char *driver, const char *unique, int delta);

static void
s_pod_csi (sess_session_t *ssn, const Basalt__V1__Pod *pod, s_node_vols_t *nv, int delta,
           s_csi_fn *fn)
{
    sess_volumes_t *self = ssn->volumes;
    for (size_t i = 0; i < pod->n_claims; i++) {
        char key[512];
        s_claim_key (key, sizeof key, pod->namespace_, pod->claims[i]->name);
        const Basalt__V1__PersistentVolumeClaim *pvc = zhashx_lookup (self->claims, key);
        if (!pvc)
            continue;
        const Basalt__V1__Object *obj =
            pvc->volume_name && *pvc->volume_name
                ? bas_store_get (ssn->replica,
                                 BASALT__V1__OBJECT_KIND__OBJECT_KIND_PERSISTENT_VOLUME,
                                 pvc->volume_name)
                : NULL;
        const Basalt__V1__PersistentVolume *pv = obj ? obj->persistent_volume : NULL;
        char unique[1024];
        if (!pv) {
            //  The volume to come: the class's provisioner. The name has
            //  a space, which keeps it apart from "driver/handle" of a PV
            //  whose handle happens to read "ns/claim".
            const Basalt__V1__Object *cls =
                pvc->storage_class && *pvc->storage_class
                    ? bas_store_get (ssn->replica,
                                     BASALT__V1__OBJECT_KIND__OBJECT_KIND_STORAGE_CLASS,
                                     pvc->storage_class)
                    : NULL;
            const char *prov = cls ? cls->storage_class->provisioner : NULL;
            if (!prov || !*prov)
                continue;
            snprintf (unique, sizeof unique, "%s/ claim %s", prov, key);
            fn (nv, prov, unique, delta);
            continue;
        }
        if (!pv->csi_driver || !*pv->csi_driver || !pv->csi_volume_handle ||
            !*pv->csi_volume_handle)
            continue;
        snprintf (unique, sizeof unique, "%s/%s", pv->csi_driver, pv->csi_volume_handle);
        fn (nv, pv->csi_driver, unique, delta);
    }
}

//  A pod using `unique` came onto (delta 1) or left (-1) the node.
static void
s_attach (s_node_vols_t *nv, const char *driver, const char *unique, int delta)
{
    int *users = zhashx_lookup (nv->volumes, unique);
    if (!users) {
        if (delta < 0)
            return;
        users = bas_alloc (sizeof *users);
        zhashx_insert (nv->volumes, unique, users);
    }
    int before = *users;
    *users += delta;
    if ((before > 0) == (*users > 0))
        return;
    int *attached = zhashx_lookup (nv->drivers, driver);
    if (!attached) {
        attached = bas_alloc (sizeof *attached);
        zhashx_insert (nv->drivers, driver, attached);
    }
    *attached += *users > 0 ? 1 : -1;
}

static void
s_collect_csinode (void *arg, const Basalt__V1__Object *obj)
{
    sess_session_t *ssn = arg;
    sess_node_t *node = sess_node_lookup (ssn, obj->csi_node->name);
    if (!node)
        return;
    for (size_t d = 0; d < obj->csi_node->n_drivers; d++)
        if (obj->csi_node->drivers[d]->has_count) {
            ssn->volumes->nodes[node->index].csi_node = obj->csi_node;
            return;
        }
}

//  NodeVolumeLimits' view: the nodes whose CSINode limits a driver, and
//  the CSI volumes the counted pods there use. Only when a pending pod has
//  a CSI volume.
static void
s_open_limits (sess_session_t *ssn)
{
    sess_volumes_t *self = ssn->volumes;
    if (!self->any_csi || self->nodes ||
        bas_store_size (ssn->replica, BASALT__V1__OBJECT_KIND__OBJECT_KIND_CSI_NODE) == 0)
        return;
    self->nnodes = ssn->nnodes;
    self->nodes = bas_alloc (sizeof *self->nodes * ((size_t)ssn->nnodes + 1));
    bas_store_foreach (ssn->replica, BASALT__V1__OBJECT_KIND__OBJECT_KIND_CSI_NODE,
                       s_collect_csinode, ssn);
    for (int n = 0; n < ssn->nnodes; n++)
        if (self->nodes[n].csi_node) {
            self->nodes[n].volumes = zhashx_new ();
            zhashx_set_destructor (self->nodes[n].volumes, (zhashx_destructor_fn *)zstr_free);
            self->nodes[n].drivers = zhashx_new ();
            zhashx_set_destructor (self->nodes[n].drivers, (zhashx_destructor_fn *)zstr_free);
        }
    for (int i = 0; i < ssn->ntasks; i++) {
        const sess_task_t *t = &ssn->tasks[i];
        if (t->node && !(t->status & SESS_COMPLETED_CLASS) && t->pod->n_claims &&
            t->node->index < self->nnodes && self->nodes[t->node->index].csi_node)
            s_pod_csi (ssn, t->pod, &self->nodes[t->node->index], 1, s_attach);
    }
}

//  Count the pods on nodes using each ReadWriteOncePod claim a pending pod
//  asks for (kube-scheduler's IsPVCUsedByPods): the counted tasks, as for
//  host ports and the pod limit.
void
sess_volumes_open_users (sess_session_t *ssn)
{
    sess_volumes_t *self = ssn->volumes;
    if (!self)
        return;
    s_open_limits (ssn);
    s_index_pvs (ssn);
    //  Each node's zone labels, looked up once rather than per pod.
    if (self->any_zones && !self->node_zones) {
        self->node_zones = bas_alloc (sizeof *self->node_zones * ((size_t)ssn->nnodes + 1));
        for (int n = 0; n < ssn->nnodes; n++)
            for (int k = 0; k < 4; k++)
                self->node_zones[n][k] = sess_node_label (&ssn->nodes[n], s_zone_keys[k]);
        self->nnodes = ssn->nnodes;
    }
    if (!self->rwop || self->rwop_counted)
        return;
    self->rwop_counted = true;
    for (int i = 0; i < ssn->ntasks; i++) {
        const sess_task_t *t = &ssn->tasks[i];
        if (t->node && !(t->status & SESS_COMPLETED_CLASS))
            sess_volumes_placed (ssn, t, true);
    }
}

void
sess_volumes_placed (sess_session_t *ssn, const sess_task_t *task, bool counted)
{
    sess_volumes_t *self = ssn->volumes;
    const Basalt__V1__Pod *pod = task->pod;
    if (!self || pod->n_claims == 0)
        return;
    //  Only a pending pod with delayed claims has them (sess_volumes_task).
    if (task->volumes && task->volumes->ndelayed)
        s_hold (task, counted);
    if (self->nodes && task->node && task->node->index < self->nnodes &&
        self->nodes[task->node->index].csi_node)
        s_pod_csi (ssn, pod, &self->nodes[task->node->index], counted ? 1 : -1, s_attach);
    if (!self->rwop)
        return;
    for (size_t i = 0; i < pod->n_claims; i++) {
        if (pod->claims[i]->ephemeral)
            continue;
        char key[512];
        s_claim_key (key, sizeof key, pod->namespace_, pod->claims[i]->name);
        int *users = zhashx_lookup (self->rwop, key);
        if (users)
            *users += counted ? 1 : -1;
    }
}

int
sess_volumes_check (const sess_task_t *task, const sess_node_t *node, char *reason, size_t rlen)
{
    const sess_task_volumes_t *tv = task->volumes;
    if (!tv)
        return 0;
    //  VolumeRestrictions: a ReadWriteOncePod claim another pod on a node
    //  uses. Resolvable: evicting that pod frees the claim.
    for (int i = 0; i < tv->nrwop; i++)
        if (*tv->rwop[i] > 0) {
            snprintf (reason, rlen,
                      "node has pod using PersistentVolumeClaim with the same name "
                      "and ReadWriteOncePod access mode");
            return SESS_PRED_UNSCHEDULABLE;
        }
    //  NodeVolumeLimits: the pod's CSI volumes not yet attached to the
    //  node, added per driver to those attached, within the CSINode's
    //  allocatable.count of each driver that has one.
    const sess_volumes_t *self = tv->owner;
    if (tv->ncsi && self->nodes && node->index < self->nnodes &&
        self->nodes[node->index].csi_node) {
        const s_node_vols_t *nv = &self->nodes[node->index];
        for (int i = 0; i < tv->ncsi; i++) {
            const Basalt__V1__CSINodeDriver *drv = NULL;
            for (size_t d = 0; d < nv->csi_node->n_drivers && !drv; d++)
                if (bas_streq (nv->csi_node->drivers[d]->name, tv->csi[i].driver))
                    drv = nv->csi_node->drivers[d];
            if (!drv || !drv->has_count)
                continue;
            if (drv->count < 0) {
                snprintf (reason, rlen, "node(s) had a CSINode with a negative volume limit");
                return SESS_PRED_UNRESOLVABLE;
            }
            //  This pod's new volumes of the driver (each once).
            int add = 0;
            for (int j = 0; j < tv->ncsi; j++) {
                if (!bas_streq (tv->csi[j].driver, tv->csi[i].driver))
                    continue;
                const int *users = zhashx_lookup (nv->volumes, tv->csi[j].unique);
                bool seen = false;
                for (int k = 0; k < j && !seen; k++)
                    seen = bas_streq (tv->csi[k].unique, tv->csi[j].unique);
                add += !seen && !(users && *users > 0);
            }
            const int *attached = zhashx_lookup (nv->drivers, tv->csi[i].driver);
            if (add > 0 && (attached ? *attached : 0) + add > drv->count) {
                snprintf (reason, rlen, "node(s) exceed max volume count");
                return SESS_PRED_UNSCHEDULABLE;
            }
        }
    }
    for (int i = 0; i < tv->n; i++) {
        const Basalt__V1__PersistentVolume *pv = tv->pv[i];
        if (!pv) {
            snprintf (reason, rlen,
                      "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)");
            return SESS_PRED_UNRESOLVABLE;
        }
        if (!pv->has_node_affinity)
            continue;
        bool match = false;
        for (size_t t = 0; t < pv->n_node_affinity && !match; t++)
            match = sess_node_term_match (pv->node_affinity[t], node);
        if (!match) {
            snprintf (reason, rlen, "node(s) had volume node affinity conflict");
            return SESS_PRED_UNRESOLVABLE;
        }
    }
    //  Then its delayed claims: a PV for each, or provisioning there.
    if (tv->ndelayed && !s_delayed_fit (tv, node, tv->picks)) {
        snprintf (reason, rlen, "node(s) didn't find available persistent volumes to bind");
        return SESS_PRED_UNRESOLVABLE;
    }
    //  VolumeZone: a node with none of the topology labels takes any
    //  volume (a cluster without zones); else every constraint must name
    //  the node's value of its label, or of the GA label a beta one means.
    if (tv->nzones && self->node_zones && node->index < self->nnodes) {
        const char *const *nz = self->node_zones[node->index];
        if (nz[0] || nz[1] || nz[2] || nz[3])
            for (int z = 0; z < tv->nzones; z++) {
                int k = tv->zones[z].key_index;
                const char *v = nz[k] ? nz[k] : nz[k < 2 ? k + 2 : k]; // beta -> GA
                if (!v || !s_zone_has (tv->zones[z].value, v)) {
                    snprintf (reason, rlen, "node(s) had no available volume zone");
                    return SESS_PRED_UNRESOLVABLE;
                }
            }
    }
    return 0;
}

void
sess_volumes_destroy (sess_volumes_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sess_volumes_t *self = *self_p;
    zhashx_destroy (&self->claims);
    zhashx_destroy (&self->delayed);
    zhashx_destroy (&self->classes);
    zhashx_destroy (&self->rwop);
    for (int n = 0; self->nodes && n < self->nnodes; n++) {
        zhashx_destroy (&self->nodes[n].volumes);
        zhashx_destroy (&self->nodes[n].drivers);
    }
    free (self->nodes);
    free (self->node_zones);
    zlistx_destroy (&self->owned);
    free (self);
    *self_p = NULL;
}
