/*  cache_metrics: cache-svc's metrics: the series it describes, and those
    set from the model and the binder work queue on each heartbeat.
*/
#include "cache_metrics.h"
#include "bas_k8s.h"

#include <stdio.h>

//  The families cache-svc describes, in the order they render.
static const bas_metric_desc_t s_families[] = {
    {"basalt_cache_seq", BAS_METRIC_GAUGE, "Last published delta sequence number"},
    {"basalt_snapshots_dropped_total", BAS_METRIC_COUNTER,
     "Snapshots ended early: a part could not be sent (the reader left, "
     "or takes no more)"},
    {"basalt_binder_work_in_flight", BAS_METRIC_GAUGE,
     "Work items sent to binders without a result"},
    {"basalt_binder_work_queued", BAS_METRIC_GAUGE, "Work items waiting for a binder"},
    {"basalt_binders", BAS_METRIC_GAUGE, "Binders connected"},
    {"basalt_work_results_total", BAS_METRIC_COUNTER, "Work results by kind and outcome"},
    {"basalt_work_results_by_binder_total", BAS_METRIC_COUNTER,
     "Work results by the binder that sent them (its --binder-id)"},
    {"basalt_work_coalesced_total", BAS_METRIC_COUNTER,
     "PodGroup status writes merged into a newer one before a binder took them"},
    {"basalt_binders_lost_total", BAS_METRIC_COUNTER,
     "Binders declared lost (silent past the binder timeout) and their work re-issued"},
    {"basalt_commit_placements_total", BAS_METRIC_COUNTER,
     "Placements accepted from session commits"},
    {"basalt_commit_rejections_total", BAS_METRIC_COUNTER,
     "Placements rejected as stale or not fitting"},
    {"basalt_commit_statuses_total", BAS_METRIC_COUNTER,
     "PodGroup status changes from session commits, by result"},
    {"basalt_commit_evictions_total", BAS_METRIC_COUNTER,
     "Evictions from session commits, by result"},
    {"basalt_api_decode_errors_total", BAS_METRIC_COUNTER, "API objects that did not decode"},
    {"basalt_nodes_out_of_sync", BAS_METRIC_GAUGE, "Nodes whose accounted idle is negative"},
    {"basalt_node_out_of_sync_events_total", BAS_METRIC_COUNTER, "Times a node went out of sync"},
    {"basalt_bind_failures_total", BAS_METRIC_COUNTER, "Binds that failed and were released"},
    {"basalt_claim_writes_total", BAS_METRIC_COUNTER,
     "Claims written before their pods' binds (a PV's claimRef, a claim's selected node)"},
    {"basalt_claim_gates_failed_total", BAS_METRIC_COUNTER,
     "Gangs whose claims failed to be written or bound: their pods pending again, none bound"},
    {"basalt_claim_gates", BAS_METRIC_GAUGE, "Gangs whose binds wait for their claims"},
    {"basalt_work_settled_total", BAS_METRIC_COUNTER,
     "Binds settled without an API write: the watch showed the pod bound "
     "already, or gone, when the work's turn came (a re-issued item)"},
    {"basalt_work_reissued_total", BAS_METRIC_COUNTER,
     "Work items re-issued after a binder went silent or a result was overdue"},
    {"basalt_leader", BAS_METRIC_GAUGE,
     "1 while this cache-svc leads (always 1 without --leader-elect)"},
    {"basalt_cache_synced", BAS_METRIC_GAUGE, "1 once every informer has listed"},
    {"basalt_cache_objects", BAS_METRIC_GAUGE, "Objects in the model, by kind"},
    {NULL, 0, NULL},
};

void
cache_metrics_describe (bas_metrics_t *m)
{
    bas_metrics_describe_table (m, s_families);
}

void
cache_metrics_update (bas_metrics_t *m, cache_model_t *model, bas_workq_dispatcher_t *work)
{
    cache_model_stats_t st;
    cache_model_stats (model, &st);
    bas_metrics_set (m, "basalt_nodes_out_of_sync", NULL,
                     (double)cache_model_nodes_out_of_sync (model));
    bas_metrics_set_total (m, "basalt_node_out_of_sync_events_total", NULL,
                           (double)st.out_of_sync_events);
    bas_metrics_set_total (m, "basalt_bind_failures_total", NULL, (double)st.bind_failures);
    bas_metrics_set_total (m, "basalt_claim_writes_total", NULL, (double)st.claim_writes);
    bas_metrics_set_total (m, "basalt_claim_gates_failed_total", NULL,
                           (double)st.claim_gates_failed);
    bas_metrics_set (m, "basalt_claim_gates", NULL, (double)cache_model_claim_gates (model));
    bas_metrics_set_total (m, "basalt_commit_statuses_total", "result=\"accepted\"",
                           (double)st.statuses_accepted);
    bas_metrics_set_total (m, "basalt_commit_statuses_total", "result=\"rejected\"",
                           (double)st.statuses_rejected);
    bas_metrics_set_total (m, "basalt_commit_evictions_total", "result=\"accepted\"",
                           (double)st.evictions_accepted);
    bas_metrics_set_total (m, "basalt_commit_evictions_total", "result=\"rejected\"",
                           (double)st.evictions_rejected);
    bas_metrics_set_total (m, "basalt_work_reissued_total", NULL,
                           (double)bas_workq_dispatcher_reissued (work));
    bas_metrics_set_total (m, "basalt_binders_lost_total", NULL,
                           (double)bas_workq_dispatcher_lost (work));
    bas_metrics_set_total (m, "basalt_work_coalesced_total", NULL,
                           (double)bas_workq_dispatcher_coalesced (work));
    bas_metrics_set (m, "basalt_cache_synced", NULL, cache_model_synced (model) ? 1 : 0);
    for (size_t i = 0; i < bas_kind_count (); i++) {
        const bas_kind_t *k = bas_kind_at (i);
        char label[64];
        snprintf (label, sizeof label, "kind=\"%s\"", k->label);
        bas_metrics_set (m, "basalt_cache_objects", label,
                         (double)bas_store_size (cache_model_store (model), k->kind));
    }
}
