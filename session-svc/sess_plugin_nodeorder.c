/*  sess_plugin_nodeorder: Volcano's nodeorder plugin — Kubernetes' node
    scores, weighted and summed.

    LeastAllocated (leastrequested.weight, 1): per resource
    (capacity - requested) * 100 / capacity, averaged over cpu and memory
    with equal weights, where requested counts the node's pods and this one
    with Kubernetes' non-zero defaults (100m, 200Mi) for pods that request
    nothing. MostAllocated (mostrequested.weight, 0): requested * 100 /
    capacity. BalancedAllocation (balancedresource.weight, 1): 100 * (1 -
    standard deviation of the cpu and memory utilisation fractions). All in
    integers as Kubernetes computes them. A plugin with weight 0 is not run.

    As Volcano combines them: NodeAffinity (nodeaffinity.weight, 2) per node
    and not normalised, the sum of the weights of the pod's preferred node
    affinity terms the node matches; and over the candidate nodes at once
    (Volcano's batch node order), each normalised to 0-100 before its
    weight: TaintToleration (tainttoleration.weight, 3), fewer untolerated
    PreferNoSchedule taints scoring higher (reversed, the most-tainted
    candidate 0); InterPodAffinity (podaffinity.weight, 2), the pod's
    preferred affinity and anti-affinity terms against the placed pods and
    theirs against it (sess_interpod.c), between the smallest and largest.

    Design note: the resource scores depend only on the node's accounting
    and the request, so they are registered pure (memoised per node); the
    others depend on the pod and are registered only when some pod of the
    session or some node gives them something to say (a preferred term, a
    PreferNoSchedule taint): otherwise every candidate would get the same
    score from them, which changes no choice.
    PodTopologySpread (podtopologyspread.weight, 2), the pod's
    ScheduleAnyway constraints: per constraint, the selected pods in the
    candidate's domain times log(domains among the candidates + 2), plus
    maxSkew - 1; fewer is better, normalised as Kubernetes does
    (sess_interpod.c).

    ImageLocality (imagelocality.weight, 1) per node and not normalised,
    as kube-scheduler computes it: for each container of the pod (init
    containers too) whose image the node lists in its status.images, the
    image's size times its spread (the session's nodes listing it / all
    the session's nodes, truncated to an integer); the sum clamped to
    [23 MiB, 1000 MiB x the pod's containers] and scaled to 0-100, times
    the weight. An image's size is what the first node in name order that
    lists the name says (kube-scheduler keeps one size per name too, from
    whichever node it heard of first).

    Design note (ImageLocality): the name -> (size, nodes) table is built
    once, at open, for the names the Pending tasks' pods use, and only
    when some node lists an image and some Pending pod has one (a session
    without image data costs a scan of the nodes); when no node lists any
    of those names it is dropped and nothing is registered (every node
    would score 0). Each name keeps its scaled size and the nodes that
    list it: their indices, ascending (a binary search), or, when more
    than 1 node in 32 lists it, a bit per node (less memory, one look).
    The score depends on the node (fixed for the session) and the pod's
    images, not on the rest of the pod: it is registered pure with images
    (sess_add_node_order_fn_pure_images), so the framework keeps
    memoising the node scores, keyed by the request and the images (two
    pods of one request but different images never share a score). The
    one pod whose images were last looked up is remembered, as the
    framework scores one task over many nodes in a row.
    Not yet: Kubernetes' system default spreading for pods without
    constraints (it selects by the pod's Services and ReplicaSets, which
    the session does not have).
*/
#include "sess_session.h"
#include "bas_hash.h"
#include "bas_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

//  The largest image size taken from a node (2^53, what the decoder
//  accepts): a larger one from the wire is taken as this, which keeps every
//  sum below well within int64.
#define S_IMAGE_SIZE_MAX (1LL << 53)

//  One image name the Pending pods use, as the session's nodes list it.
typedef struct {
    int64_t size;   // sizeBytes, from the first node (in name order) listing it
    int64_t scaled; // size x spread (nodes listing it / all nodes), truncated
    int *nodes;     // indices of the nodes listing it, ascending, owned; NULL once bits
    int nnodes;     // nodes listing it
    int cap;        // room in nodes
    uint64_t *bits; // when it is on many nodes: bit i set = node i lists it, owned
} s_image_t;

typedef struct {
    sess_session_t *ssn;
    int least;                   // leastrequested.weight
    int most;                    // mostrequested.weight
    int balanced;                // balancedresource.weight
    int node_affinity;           // nodeaffinity.weight
    int taint;                   // tainttoleration.weight
    int pod_affinity;            // podaffinity.weight
    int spread;                  // podtopologyspread.weight
    int image_locality;          // imagelocality.weight
    bas_hash_t *images;          // image name -> s_image_t (owned), NULL when not scored
    const sess_task_t *resolved; // the task whose images resolved_images holds, or NULL
    s_image_t **resolved_images; // its pod's images' entries (NULL: no node lists it), owned
    size_t resolved_cap;         // room in resolved_images
} s_self_t;

static int64_t
s_least (int64_t requested, int64_t capacity)
{
    if (capacity <= 0 || requested > capacity)
        return 0;
    return (capacity - requested) * 100 / capacity;
}

static int64_t
s_most (int64_t requested, int64_t capacity)
{
    if (capacity <= 0)
        return 0;
    if (requested > capacity)
        requested = capacity;
    return requested * 100 / capacity;
}

static int64_t
s_nz (int64_t v, int64_t dflt)
{
    return v > 0 ? v : dflt;
}

static double
s_fraction (int64_t requested, int64_t capacity)
{
    if (capacity <= 0)
        return 1.0;
    double f = (double)requested / (double)capacity;
    return f > 1.0 ? 1.0 : f;
}

static double
s_score (void *self_, const sess_task_t *task, const sess_node_t *node)
{
    const s_self_t *self = self_;
    int64_t cpu = node->nz_milli_cpu + s_nz (task->resreq->milli_cpu, SESS_NONZERO_MILLI_CPU);
    int64_t mem = node->nz_memory + s_nz (task->resreq->memory, SESS_NONZERO_MEMORY);
    double score = 0;
    if (self->least)
        score += (double)((s_least (cpu, node->allocatable.milli_cpu) +
                           s_least (mem, node->allocatable.memory)) /
                          2) *
                 self->least;
    if (self->most)
        score += (double)((s_most (cpu, node->allocatable.milli_cpu) +
                           s_most (mem, node->allocatable.memory)) /
                          2) *
                 self->most;
    if (self->balanced) {
        double fc = s_fraction (node->used.milli_cpu + task->resreq->milli_cpu,
                                node->allocatable.milli_cpu);
        double fm = s_fraction (node->used.memory + task->resreq->memory, node->allocatable.memory);
        double std = fabs (fc - fm) / 2;
        score += (double)(int64_t)((1 - std) * 100) * self->balanced;
    }
    return score;
}

//  NodeAffinity: Σ weights of the preferred terms the node matches, times
//  the weight (Volcano does not normalise it).
static double
s_node_affinity (void *self_, const sess_task_t *task, const sess_node_t *node)
{
    const s_self_t *self = self_;
    const Basalt__V1__Pod *pod = task->pod;
    int64_t sum = 0;
    const Basalt__V1__PodPlacement *pl = sess_placement (pod);
    for (size_t i = 0; i < pl->n_preferred_node_affinity; i++) {
        const Basalt__V1__PreferredSchedulingTerm *t = pl->preferred_node_affinity[i];
        if (t->preference && sess_node_term_match (t->preference, node))
            sum += t->weight;
    }
    return (double)(sum * self->node_affinity);
}

//  TaintToleration: untolerated PreferNoSchedule taints per candidate,
//  normalised reversed (Kubernetes' DefaultNormalizeScore: 100 - 100 *
//  count / max, all 100 when no candidate has one), times the weight.
static void
s_taint_batch (void *self_, const sess_task_t *task, sess_node_t *const *nodes, int n,
               double *scores)
{
    const s_self_t *self = self_;
    int64_t max = 0;
    int64_t *count = bas_alloc (sizeof *count * (size_t)(n ? n : 1));
    for (int k = 0; k < n; k++) {
        const Basalt__V1__Node *node = nodes[k]->node;
        for (size_t i = 0; i < node->n_taints; i++) {
            const Basalt__V1__Taint *t = node->taints[i];
            //  Only tolerations of effect PreferNoSchedule or none count.
            if (t->effect && strcmp (t->effect, "PreferNoSchedule") == 0 &&
                !sess_pod_tolerates (task->pod, t->key ? t->key : "", t->value ? t->value : "",
                                     "PreferNoSchedule"))
                count[k]++;
        }
        if (count[k] > max)
            max = count[k];
    }
    for (int k = 0; k < n; k++) {
        int64_t score = max ? 100 - 100 * count[k] / max : 100;
        scores[k] += (double)(score * self->taint);
    }
    free (count);
}

static void
s_pod_affinity_batch (void *self_, const sess_task_t *task, sess_node_t *const *nodes, int n,
                      double *scores)
{
    const s_self_t *self = self_;
    sess_interpod_score (self->ssn->interpod, task, nodes, n, self->pod_affinity, scores);
}

static void
s_spread_batch (void *self_, const sess_task_t *task, sess_node_t *const *nodes, int n,
                double *scores)
{
    const s_self_t *self = self_;
    sess_spread_score (self->ssn->interpod, task, nodes, n, self->spread, scores);
}

// ------------------------------------------------------------ ImageLocality

static void
s_image_free (void *item)
{
    s_image_t *image = item;
    free (image->nodes);
    free (image->bits);
    free (image);
}

//  Does the node at index `node` list the image? (A bit, or a binary
//  search.)
static bool
s_image_on (const s_image_t *image, int node)
{
    if (image->bits)
        return (image->bits[node / 64] >> (node % 64)) & 1;
    int lo = 0, hi = image->nnodes;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (image->nodes[mid] < node)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < image->nnodes && image->nodes[lo] == node;
}

//  kube-scheduler's calculatePriority: the sum of the scaled image sizes
//  clamped to the thresholds and scaled to 0-100.
static int64_t
s_image_priority (int64_t sum, int64_t containers)
{
    int64_t max = SESS_IMAGE_MAX_CONTAINER_THRESHOLD * containers;
    if (sum < SESS_IMAGE_MIN_THRESHOLD)
        sum = SESS_IMAGE_MIN_THRESHOLD;
    else if (sum > max)
        sum = max;
    return SESS_MAX_NODE_SCORE * (sum - SESS_IMAGE_MIN_THRESHOLD) /
           (max - SESS_IMAGE_MIN_THRESHOLD);
}

//  ImageLocality: see the file's comment.
static double
s_image_locality (void *self_, const sess_task_t *task, const sess_node_t *node)
{
    s_self_t *self = self_;
    const Basalt__V1__Pod *pod = task->pod;
    if (pod->n_images == 0)
        return 0;
    if (self->resolved != task) {
        if (pod->n_images > self->resolved_cap) {
            self->resolved_cap = pod->n_images;
            self->resolved_images = bas_realloc (
                self->resolved_images, self->resolved_cap * sizeof *self->resolved_images);
        }
        for (size_t i = 0; i < pod->n_images; i++)
            self->resolved_images[i] = bas_hash_lookup (self->images, pod->images[i]);
        self->resolved = task;
    }
    int64_t containers = pod->n_images < SESS_IMAGE_MAX_CONTAINERS ? (int64_t)pod->n_images
                                                                   : SESS_IMAGE_MAX_CONTAINERS;
    int64_t max = SESS_IMAGE_MAX_CONTAINER_THRESHOLD * containers;
    int64_t sum = 0;
    //  Each term is at most S_IMAGE_SIZE_MAX and the sum stops growing once
    //  past the maximum, so it cannot overflow.
    for (size_t i = 0; i < pod->n_images && sum <= max; i++) {
        const s_image_t *image = self->resolved_images[i];
        if (image && s_image_on (image, node->index))
            sum += image->scaled;
    }
    if (sum < SESS_IMAGE_MIN_THRESHOLD)
        return 0; // the common case: none of its images, or small ones
    return (double)(s_image_priority (sum, containers) * self->image_locality);
}

//  Build self->images for the session (see the file's comment); true when
//  some node lists some image a Pending pod uses.
static bool
s_images_open (s_self_t *self)
{
    sess_session_t *ssn = self->ssn;
    bool listed = false;
    for (int i = 0; i < ssn->nnodes && !listed; i++)
        listed = ssn->nodes[i].node->n_images > 0;
    if (!listed)
        return false;
    bas_hash_t *images = NULL;
    for (int t = 0; t < ssn->ntasks; t++) {
        const sess_task_t *task = &ssn->tasks[t];
        if (task->status != SESS_TASK_PENDING)
            continue;
        for (size_t i = 0; i < task->pod->n_images; i++) {
            if (!images)
                images = bas_hash_new (s_image_free);
            if (!bas_hash_lookup (images, task->pod->images[i]))
                bas_hash_insert (images, task->pod->images[i], bas_alloc (sizeof (s_image_t)));
        }
    }
    if (!images)
        return false;
    bool found = false;
    for (int n = 0; n < ssn->nnodes; n++) {
        const Basalt__V1__Node *node = ssn->nodes[n].node;
        for (size_t i = 0; i < node->n_images; i++) {
            const Basalt__V1__NodeImage *listed_image = node->images[i];
            for (size_t k = 0; k < listed_image->n_names; k++) {
                s_image_t *image = bas_hash_lookup (images, listed_image->names[k]);
                //  A node counts once per name, whatever it lists twice.
                if (!image || (image->nnodes && image->nodes[image->nnodes - 1] == n))
                    continue;
                if (image->nnodes == 0) {
                    int64_t size = listed_image->size_bytes;
                    image->size = size < 0 ? 0 : size > S_IMAGE_SIZE_MAX ? S_IMAGE_SIZE_MAX : size;
                }
                if (image->nnodes == image->cap) {
                    image->cap = image->cap ? image->cap * 2 : 4;
                    image->nodes =
                        bas_realloc (image->nodes, (size_t)image->cap * sizeof *image->nodes);
                }
                image->nodes[image->nnodes++] = n;
                found = true;
            }
        }
    }
    if (!found) {
        bas_hash_destroy (&images);
        return false;
    }
    //  Each name's spread is known now; the names on many nodes keep them
    //  as bits (a bit per node costs less than an int per listing node
    //  once more than 1 node in 32 lists it).
    size_t words = ((size_t)ssn->nnodes + 63) / 64;
    for (s_image_t *image = bas_hash_first (images); image; image = bas_hash_next (images)) {
        image->scaled =
            (int64_t)((double)image->size * ((double)image->nnodes / (double)ssn->nnodes));
        if (image->nnodes && (size_t)image->nnodes * 32 >= (size_t)ssn->nnodes) {
            image->bits = bas_alloc (words * sizeof *image->bits);
            for (int i = 0; i < image->nnodes; i++)
                image->bits[image->nodes[i] / 64] |= 1ULL << (image->nodes[i] % 64);
            free (image->nodes);
            image->nodes = NULL;
        }
    }
    self->images = images;
    return true;
}

static bool
s_any_prefer_taint (const sess_session_t *ssn)
{
    for (int i = 0; i < ssn->nnodes; i++) {
        const Basalt__V1__Node *node = ssn->nodes[i].node;
        for (size_t t = 0; t < node->n_taints; t++)
            if (node->taints[t]->effect &&
                strcmp (node->taints[t]->effect, "PreferNoSchedule") == 0)
                return true;
    }
    return false;
}

int
sess_nodeorder_open (sess_session_t *ssn, const sess_plugin_conf_t *conf, void **self_p)
{
    s_self_t *self = bas_alloc (sizeof *self);
    self->least = sess_arg_int (conf, "leastrequested.weight", 1);
    self->most = sess_arg_int (conf, "mostrequested.weight", 0);
    self->balanced = sess_arg_int (conf, "balancedresource.weight", 1);
    self->node_affinity = sess_arg_int (conf, "nodeaffinity.weight", 2);
    self->taint = sess_arg_int (conf, "tainttoleration.weight", 3);
    self->pod_affinity = sess_arg_int (conf, "podaffinity.weight", 2);
    self->spread = sess_arg_int (conf, "podtopologyspread.weight", 2);
    self->image_locality = sess_arg_int (conf, "imagelocality.weight", 1);
    self->ssn = ssn;
    *self_p = self;
    if (self->least || self->most || self->balanced)
        sess_add_node_order_fn_pure (ssn, self, s_score);
    bool preferred = false;
    for (int i = 0; i < ssn->ntasks && !preferred; i++)
        preferred = sess_placement (ssn->tasks[i].pod)->n_preferred_node_affinity > 0;
    if (self->node_affinity && preferred)
        sess_add_node_order_fn (ssn, self, s_node_affinity);
    if (self->image_locality && s_images_open (self))
        sess_add_node_order_fn_pure_images (ssn, self, s_image_locality);
    if (self->taint && s_any_prefer_taint (ssn))
        sess_add_batch_node_order_fn (ssn, self, s_taint_batch);
    if (self->pod_affinity && ssn->interpod)
        sess_add_batch_node_order_fn (ssn, self, s_pod_affinity_batch);
    if (self->spread && ssn->interpod)
        sess_add_batch_node_order_fn (ssn, self, s_spread_batch);
    return 0;
}

void
sess_nodeorder_close (sess_session_t *ssn, void *self_)
{
    (void)ssn;
    s_self_t *self = self_;
    bas_hash_destroy (&self->images);
    free (self->resolved_images);
    free (self);
}
