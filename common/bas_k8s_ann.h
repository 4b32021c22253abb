/*  bas_k8s_ann: the annotation names Basalt reads from pods and PodGroups
    and writes to them (Volcano's and Kubernetes'). Names only: a leaf
    header with no functions.
*/
#ifndef BAS_K8S_ANN_H
#define BAS_K8S_ANN_H

#define BAS_ANN_GROUP_NAME "scheduling.k8s.io/group-name"
#define BAS_ANN_QUEUE_NAME "scheduling.volcano.sh/queue-name"
#define BAS_ANN_MIN_MEMBER "scheduling.volcano.sh/group-min-member"
#define BAS_ANN_TASK_SPEC "volcano.sh/task-spec"
#define BAS_ANN_PREEMPTABLE "volcano.sh/preemptable"
//  The task-topology plugin's PodGroup annotations.
#define BAS_ANN_TOPO_AFFINITY "volcano.sh/task-topology-affinity"
#define BAS_ANN_TOPO_ANTI_AFFINITY "volcano.sh/task-topology-anti-affinity"
#define BAS_ANN_TOPO_TASK_ORDER "volcano.sh/task-topology-task-order"
//  The HyperNode a network-topology gang was placed in (PodGroup annotation).
#define BAS_ANN_ALLOCATED_HYPERNODE "volcano.sh/job-allocated-hypernode"

#endif
