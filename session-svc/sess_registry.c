/*  sess_registry: the const tables of scheduler actions and plugins.

    Design note: a command table in the Redis manner — one const array per
    kind, looked up by name. Every name Volcano knows is listed, so a
    configuration written for Volcano parses; entries Basalt does not
    implement yet have NULL entry points, and a configuration naming one
    is refused unless it marks the entry optional (sess_conf.c). Adding a
    plugin is its file (sess_plugin_NAME.c), its open and close in
    sess_session.h, and one line here.
*/
#include "sess_session.h"

#include <string.h>

static const sess_action_def_t s_actions[] = {
    {"enqueue", sess_enqueue_execute, NULL},
    {"allocate", sess_allocate_execute, NULL},
    {"backfill", sess_backfill_execute, NULL},
    {"preempt", sess_preempt_execute, NULL},
    {"reclaim", sess_reclaim_execute, NULL},
    {"gangpreempt", sess_gangpreempt_execute, sess_gang_check_args},
    {"gangreclaim", sess_gangreclaim_execute, sess_gang_check_args},
    {"shuffle", NULL, NULL},
};

//  The arguments each plugin reads (sess_plugin_*.c); Volcano's others,
//  such as predicate.GPUSharingEnable or capacity.DynamicResourceAllocationEnable,
//  are warned about when given, as unimplemented plugins are.
static const char *const s_no_args[] = {NULL};
static const char *const s_predicates_args[] = {
    "predicate.NodeAffinityEnable",      "predicate.TaintTolerationEnable",
    "predicate.PodAffinityEnable",       "predicate.NodePortsEnable",
    "predicate.PodTopologySpreadEnable", NULL};
static const char *const s_nodeorder_args[] = {
    "leastrequested.weight",    "mostrequested.weight",   "balancedresource.weight",
    "nodeaffinity.weight",      "tainttoleration.weight", "podaffinity.weight",
    "podtopologyspread.weight", "imagelocality.weight",   NULL};
static const char *const s_binpack_args[] = {"binpack.weight",     "binpack.cpu",
                                             "binpack.memory",     "binpack.resources",
                                             "binpack.resources.", NULL};
static const char *const s_capacity_args[] = {"ancestorReclaimLevel", NULL};
static const char *const s_overcommit_args[] = {"overcommit-factor", NULL};
static const char *const s_sla_args[] = {"sla-waiting-time", NULL};
static const char *const s_nodegroup_args[] = {"strict", "enablePreferredOrder", NULL};
static const char *const s_task_topology_args[] = {"task-topology.weight", NULL};
static const char *const s_network_topology_args[] = {"weight",
                                                      "hypernode.binpack.cpu",
                                                      "hypernode.binpack.memory",
                                                      "hypernode.binpack.resources",
                                                      "hypernode.binpack.resources.",
                                                      "hypernode.binpack.normal-pod.enable",
                                                      "hypernode.binpack.normal-pod.fading",
                                                      "hypernode.gradient.evict.max-hypernodes",
                                                      NULL};

static const sess_plugin_def_t s_plugins[] = {
    {"priority", sess_priority_open, sess_priority_close, s_no_args, NULL},
    {"gang", sess_gang_open, sess_gang_close, s_no_args, NULL},
    {"conformance", sess_conformance_open, sess_conformance_close, s_no_args, NULL},
    {"predicates", sess_predicates_open, sess_predicates_close, s_predicates_args, NULL},
    {"nodeorder", sess_nodeorder_open, sess_nodeorder_close, s_nodeorder_args, NULL},
    {"binpack", sess_binpack_open, sess_binpack_close, s_binpack_args, NULL},
    {"drf", sess_drf_open, sess_drf_close, s_no_args, NULL},
    {"proportion", sess_proportion_open, sess_proportion_close, s_no_args, NULL},
    {"capacity", sess_capacity_open, sess_capacity_close, s_capacity_args, NULL},
    {"overcommit", sess_overcommit_open, sess_overcommit_close, s_overcommit_args, NULL},
    {"nodegroup", sess_nodegroup_open, sess_nodegroup_close, s_nodegroup_args, NULL},
    {"sla", sess_sla_open, sess_sla_close, s_sla_args, sess_sla_check_args},
    {"resourcequota", sess_resourcequota_open, sess_resourcequota_close, s_no_args, NULL},
    {"pdb", sess_pdb_open, sess_pdb_close, s_no_args, NULL},
    {"network-topology-aware", sess_network_topology_open, sess_network_topology_close,
     s_network_topology_args, NULL},
    {"task-topology", sess_task_topology_open, sess_task_topology_close, s_task_topology_args,
     NULL},
    //  Volcano plugins not implemented yet: a configuration naming one is
    //  refused unless the entry says optional: true (sess_conf.c).
    {"deviceshare", NULL, NULL, NULL, NULL},
    {"resource-strategy-fit", NULL, NULL, NULL, NULL},
    {"tdm", NULL, NULL, NULL, NULL},
    {"numa-aware", NULL, NULL, NULL, NULL},
    {"cdp", NULL, NULL, NULL, NULL},
    {"rescheduling", NULL, NULL, NULL, NULL},
    {"usage", NULL, NULL, NULL, NULL},
    {"extender", NULL, NULL, NULL, NULL},
};

const sess_action_def_t *
sess_registry_action (const char *name)
{
    for (size_t i = 0; i < sizeof s_actions / sizeof s_actions[0]; i++)
        if (strcmp (s_actions[i].name, name) == 0)
            return &s_actions[i];
    return NULL;
}

const sess_plugin_def_t *
sess_registry_plugin (const char *name, bool *known)
{
    for (size_t i = 0; i < sizeof s_plugins / sizeof s_plugins[0]; i++)
        if (strcmp (s_plugins[i].name, name) == 0) {
            if (known)
                *known = true;
            return s_plugins[i].on_session_open ? &s_plugins[i] : NULL;
        }
    if (known)
        *known = false;
    return NULL;
}
