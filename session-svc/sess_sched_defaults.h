/*  sess_sched_defaults: the tunables of the scheduling core, in one place
    (the process's own tunables are in sess_defaults.h).

    Each value is Volcano's default (volcano-semantics.md §2), so a cluster
    moving from Volcano sees the same behaviour.
*/
#ifndef SESS_SCHED_DEFAULTS_H
#define SESS_SCHED_DEFAULTS_H

//  Queue used by a PodGroup whose spec.queue is empty (--default-queue).
#define SESS_DEFAULT_QUEUE "default"
//  The top of the queue hierarchy; always present.
#define SESS_ROOT_QUEUE "root"

//  Predicate scan size (§5.7): scan all nodes up to this many; otherwise
//  stop once this many (at least) feasible nodes were found.
#define SESS_MIN_FEASIBLE_NODES 100
//  Floor of the adaptive percentage of nodes to find.
#define SESS_MIN_PERCENTAGE_NODES 5
//  Configured percentage of nodes to find; <= 0 means adaptive (50 - n/125).
#define SESS_PERCENTAGE_NODES 0

//  overcommit plugin: cluster capacity is multiplied by this for enqueue.
#define SESS_OVERCOMMIT_FACTOR 1.2

//  Priority of a task whose pod has no priority and no class.
#define SESS_TASK_DEFAULT_PRIORITY 1

//  Maximum tiers / plugins per tier / actions in a configuration.
#define SESS_MAX_TIERS 8
#define SESS_MAX_PLUGINS 32
#define SESS_MAX_ACTIONS 16

//  Distinct fit-error reasons remembered per failed task; more are folded
//  into the last slot.
#define SESS_FIT_MAX_REASONS 12

//  Water-filling rounds of the proportion plugin before giving up (Volcano
//  loops until nothing changes; integer rounding makes a cap prudent).
#define SESS_PROPORTION_MAX_ROUNDS 64

//  drf with enableHierarchy: the deepest volcano.sh/hierarchy path read
//  (levels past it stay in the last one's name).
#define SESS_HDRF_MAX_DEPTH 16

//  kube-scheduler's InterPodAffinity hardPodAffinityWeight: how much a
//  placed pod's required affinity term that selects the incoming pod adds
//  to its domain's score. Volcano's nodeorder builds the plugin with empty
//  arguments (InterPodAffinityArgs{}), so it is 0 there, not Kubernetes'
//  default 1; Basalt does as Volcano.
#define SESS_HARD_POD_AFFINITY_WEIGHT 0

//  gangpreempt / gangreclaim (Volcano's arguments and defaults): HyperNode
//  domains tried per preemptor gang, and whether a victim job may lose all
//  of its running pods (a whole bundle).
#define SESS_GANG_MAX_DOMAINS 8
#define SESS_GANG_ALLOW_WHOLE_BUNDLE true
//  Basalt's own: placement simulations a preemptor gang may spend making
//  its plan smaller once one is found (giving victims back, exchanging
//  one for a cheaper one); the search stops with the plan it has then.
#define SESS_GANG_MAX_TRIALS 64

//  task-topology plugin: its task-topology.weight when not given, and the
//  top of a node score (Kubernetes' MaxNodeScore) its bucket score is
//  scaled to.
#define SESS_TASK_TOPOLOGY_WEIGHT 1
#define SESS_MAX_NODE_SCORE 100

//  kube-scheduler's ImageLocality bounds: a node whose images of the pod
//  add up (scaled by their spread) to the minimum or less scores 0, to the
//  maximum (per container of the pod) or more scores 100. The cap on the
//  containers counted keeps 100 * maximum within int64 whatever a pod
//  says (no pod holds that many).
#define SESS_IMAGE_MIN_THRESHOLD (23LL * 1024 * 1024)
#define SESS_IMAGE_MAX_CONTAINER_THRESHOLD (1000LL * 1024 * 1024)
#define SESS_IMAGE_MAX_CONTAINERS 65536

//  Kubernetes' non-zero request defaults used in scoring (100m CPU, 200Mi).
#define SESS_NONZERO_MILLI_CPU 100
#define SESS_NONZERO_MEMORY (200LL * 1024 * 1024)

#endif
