/*  sess_metrics: session-svc's metrics (the reactor's registry).

    Volcano's scheduler series under Volcano's own names
    (volcano_e2e_scheduling_latency_milliseconds, action and plugin
    latency, schedule attempts, unscheduled tasks per job, the queue
    gauges) so that dashboards built for Volcano work unchanged, and
    Basalt's own. The queue gauges and PodGroup phase counts are
    recomputed from the replica (bas_usage) by the session worker into a
    registry of its own (sess_metrics_gauges_new), whose series the
    reactor takes over (sess_metrics_take_gauges).
*/
#include "sess_metrics.h"

#include <math.h>
#include <stdio.h>

//  Volcano's bucket layouts (volcano-semantics.md §7): n buckets from
//  `start` to `end`, computed as client_golang's ExponentialBucketsRange
//  does (start * factor^i), so that the le labels are the very same.
static void
s_describe_histogram (bas_metrics_t *m, const char *name, const char *help, double start,
                      double end, size_t n)
{
    double buckets[32];
    double factor = pow (end / start, 1.0 / (double)(n - 1));
    for (size_t i = 0; i < n && i < 32; i++)
        buckets[i] = start * pow (factor, (double)i);
    bas_metrics_describe (m, name, BAS_METRIC_HISTOGRAM, help, buckets, n);
}

//  Volcano's session families, after its latency histograms and before the
//  queue gauges (the order is the exposition's).
static const bas_metric_desc_t s_volcano_families[] = {
    {"volcano_schedule_attempts_total", BAS_METRIC_COUNTER,
     "Number of attempts to schedule pods, by the result: 'unschedulable' "
     "means a pod could not be scheduled in a session"},
    {"volcano_unschedule_task_count", BAS_METRIC_GAUGE,
     "Number of tasks of a job (job_id namespace/name) not scheduled"},
    {"volcano_unschedule_job_count", BAS_METRIC_GAUGE,
     "Number of jobs that could not be scheduled"},
    {"volcano_pod_preemption_victims", BAS_METRIC_GAUGE,
     "Number of selected preemption victims in the last session"},
    {"volcano_total_preemption_attempts", BAS_METRIC_COUNTER,
     "Total preemption attempts in the cluster till now"},
    {NULL, 0, NULL},
};

//  After the queue gauges: the queue weight and Basalt's own session and
//  replica families.
static const bas_metric_desc_t s_basalt_families[] = {
    {"volcano_queue_weight", BAS_METRIC_GAUGE, "Weight of the queue"},
    {"basalt_podgroups", BAS_METRIC_GAUGE,
     "PodGroups by queue and phase, as the session's replica has them"},
    {"basalt_session_base_total", BAS_METRIC_COUNTER,
     "Sessions by how their kept base of pods and PodGroups was brought up to date: from the "
     "replica's changes, rebuilt from the whole replica, or (with --session-check-base) found "
     "different from a rebuilt one"},
    {"basalt_sessions_total", BAS_METRIC_COUNTER,
     "Scheduling sessions run, by outcome (commit: proposals sent)"},
    {"basalt_session_pods", BAS_METRIC_GAUGE,
     "Pods of the last session by outcome (placed, pending, pipelined, evicted)"},
    {"basalt_session_pods_held", BAS_METRIC_GAUGE,
     "Pods the last session held back, never placed, by the field that "
     "holds them (scheduling gates, or one Basalt does not implement)"},
    {"basalt_commit_items_total", BAS_METRIC_COUNTER, "Proposals answered by the cache, by result"},
    {"basalt_replica_seq", BAS_METRIC_GAUGE,
     "Sequence number of the last delta applied to the replica"},
    {NULL, 0, NULL},
};

void
sess_metrics_describe (bas_metrics_t *m)
{
    s_describe_histogram (m, "volcano_e2e_scheduling_latency_milliseconds",
                          "E2e scheduling latency in milliseconds (scheduling algorithm + binding)",
                          1, 5000, 20);
    s_describe_histogram (m, "volcano_action_scheduling_latency_milliseconds",
                          "Action scheduling latency in milliseconds", 1, 2000, 20);
    s_describe_histogram (m, "volcano_plugin_scheduling_latency_milliseconds",
                          "Plugin scheduling latency in milliseconds", 0.1, 100, 15);
    bas_metrics_describe_table (m, s_volcano_families);
    static const char *const kinds[] = {"allocated", "request", "deserved", "capacity", "inqueue"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        char name[96], help[160];
        snprintf (name, sizeof name, "volcano_queue_%s_milli_cpu", kinds[i]);
        snprintf (help, sizeof help, "%s CPU of the queue, in milli-cores", kinds[i]);
        bas_metrics_describe (m, name, BAS_METRIC_GAUGE, help, NULL, 0);
        snprintf (name, sizeof name, "volcano_queue_%s_memory_bytes", kinds[i]);
        snprintf (help, sizeof help, "%s memory of the queue, in bytes", kinds[i]);
        bas_metrics_describe (m, name, BAS_METRIC_GAUGE, help, NULL, 0);
        snprintf (name, sizeof name, "volcano_queue_%s_scalar_resources", kinds[i]);
        snprintf (help, sizeof help, "%s scalar resources of the queue, in milli-units", kinds[i]);
        bas_metrics_describe (m, name, BAS_METRIC_GAUGE, help, NULL, 0);
    }
    bas_metrics_describe_table (m, s_basalt_families);
}

//  After each session: Volcano's session series and our own.
void
sess_metrics_session (bas_metrics_t *m, const sess_params_t *params, bool proposed, double ms)
{
    bas_metrics_observe (m, "volcano_e2e_scheduling_latency_milliseconds", NULL, ms);
    for (int i = 0; i < params->n_action_times && i < SESS_MAX_ACTION_TIMES; i++) {
        char labels[96];
        snprintf (labels, sizeof labels, "action=\"%s\"", params->action_times[i].name);
        bas_metrics_observe (m, "volcano_action_scheduling_latency_milliseconds", labels,
                             params->action_times[i].ms);
    }
    for (int i = 0; i < params->n_plugin_times && i < SESS_MAX_PLUGIN_TIMES; i++) {
        char labels[128];
        snprintf (labels, sizeof labels, "plugin=\"%s\",OnSession=\"%s\"",
                  params->plugin_times[i].plugin, params->plugin_times[i].phase);
        bas_metrics_observe (m, "volcano_plugin_scheduling_latency_milliseconds", labels,
                             params->plugin_times[i].ms);
    }
    bas_metrics_add (m, "volcano_schedule_attempts_total", "result=\"scheduled\"",
                     params->pods_placed);
    bas_metrics_add (m, "volcano_schedule_attempts_total", "result=\"unschedulable\"",
                     params->pods_pending);
    bas_metrics_set (m, "volcano_pod_preemption_victims", NULL, params->pods_evicted);
    if (params->pods_evicted > 0)
        bas_metrics_add (m, "volcano_total_preemption_attempts", NULL, 1);
    bas_metrics_set (m, "basalt_session_pods", "outcome=\"placed\"", params->pods_placed);
    bas_metrics_set (m, "basalt_session_pods", "outcome=\"pending\"", params->pods_pending);
    bas_metrics_set (m, "basalt_session_pods", "outcome=\"pipelined\"", params->pods_pipelined);
    bas_metrics_set (m, "basalt_session_pods", "outcome=\"evicted\"", params->pods_evicted);
    //  Pods held back at the last session, by the field that holds them:
    //  scheduling gates, or something Basalt does not implement.
    for (int k = 0; k < SESS_HELD_NKINDS; k++) {
        char labels[64];
        snprintf (labels, sizeof labels, "field=\"%s\"", sess_held_names[k]);
        bas_metrics_set (m, "basalt_session_pods_held", labels, params->pods_held[k]);
    }
    bas_metrics_add (m, "basalt_sessions_total",
                     proposed ? "outcome=\"commit\"" : "outcome=\"nothing\"", 1);
    bas_metrics_add (m, "basalt_session_base_total",
                     params->base_rebuilt ? "update=\"rebuilt\"" : "update=\"changes\"", 1);
    if (params->base_mismatches)
        bas_metrics_add (m, "basalt_session_base_total", "update=\"mismatch\"",
                         params->base_mismatches);
}

//  One queue's resources as Volcano's three gauges of a kind.
static void
s_queue_res (bas_metrics_t *m, const char *kind, const char *qlabel, const bas_res_t *r)
{
    char name[96], labels[256];
    snprintf (name, sizeof name, "volcano_queue_%s_milli_cpu", kind);
    snprintf (labels, sizeof labels, "queue_name=\"%s\"", qlabel);
    bas_metrics_set (m, name, labels, (double)r->milli_cpu);
    snprintf (name, sizeof name, "volcano_queue_%s_memory_bytes", kind);
    bas_metrics_set (m, name, labels, (double)r->memory);
    snprintf (name, sizeof name, "volcano_queue_%s_scalar_resources", kind);
    for (int i = 0; i < r->nscalars; i++) {
        char esc[96];
        snprintf (labels, sizeof labels, "queue_name=\"%s\",resource=\"%s\"", qlabel,
                  bas_metrics_escape (esc, sizeof esc, r->scalars[i].name));
        //  Volcano counts scalar resources in milli-units (a GPU is 1000).
        bas_metrics_set (m, name, labels, (double)r->scalars[i].value * 1000.0);
    }
}

//  The gauge families recomputed from the replica.
static const char *const s_gauge_families[] = {
    "volcano_queue_allocated_milli_cpu",
    "volcano_queue_allocated_memory_bytes",
    "volcano_queue_allocated_scalar_resources",
    "volcano_queue_request_milli_cpu",
    "volcano_queue_request_memory_bytes",
    "volcano_queue_request_scalar_resources",
    "volcano_queue_deserved_milli_cpu",
    "volcano_queue_deserved_memory_bytes",
    "volcano_queue_deserved_scalar_resources",
    "volcano_queue_capacity_milli_cpu",
    "volcano_queue_capacity_memory_bytes",
    "volcano_queue_capacity_scalar_resources",
    "volcano_queue_inqueue_milli_cpu",
    "volcano_queue_inqueue_memory_bytes",
    "volcano_queue_inqueue_scalar_resources",
    "volcano_queue_weight",
    "basalt_podgroups",
    "volcano_unschedule_task_count",
    "volcano_unschedule_job_count",
};
#define S_GAUGE_FAMILIES (sizeof s_gauge_families / sizeof s_gauge_families[0])

//  Queue gauges, unscheduled tasks per job and PodGroup phases: fill `m`,
//  a registry of the gauge families only, from the usage.
static void
s_apply_gauges (bas_metrics_t *m, bas_usage_t *usage)
{
    for (size_t i = 0; i < bas_usage_queue_count (usage); i++) {
        const bas_usage_queue_t *q = bas_usage_queue (usage, i);
        char qlabel[160], labels[256];
        bas_metrics_escape (qlabel, sizeof qlabel, q->name);
        s_queue_res (m, "allocated", qlabel, &q->allocated);
        s_queue_res (m, "request", qlabel, &q->request);
        s_queue_res (m, "inqueue", qlabel, &q->inqueue);
        if (q->has_deserved)
            s_queue_res (m, "deserved", qlabel, &q->deserved);
        if (q->has_capability)
            s_queue_res (m, "capacity", qlabel, &q->capability);
        if (q->queue) {
            snprintf (labels, sizeof labels, "queue_name=\"%s\"", qlabel);
            bas_metrics_set (m, "volcano_queue_weight", labels,
                             q->queue->has_weight ? q->queue->weight : 1);
        }
        for (size_t p = 0; p < BAS_USAGE_PHASES; p++) {
            snprintf (labels, sizeof labels, "queue=\"%s\",phase=\"%s\"", qlabel,
                      bas_usage_phase_names[p]);
            bas_metrics_set (m, "basalt_podgroups", labels, (double)q->phases[p]);
        }
    }
    size_t unscheduled_jobs = 0;
    for (size_t i = 0; i < bas_usage_job_count (usage); i++) {
        const bas_usage_job_t *j = bas_usage_job (usage, i);
        if (j->pending == 0)
            continue;
        unscheduled_jobs++;
        char id[256], esc[300], labels[320];
        snprintf (id, sizeof id, "%s/%s", j->group->namespace_ ? j->group->namespace_ : "",
                  j->group->name ? j->group->name : "");
        snprintf (labels, sizeof labels, "job_id=\"%s\"", bas_metrics_escape (esc, sizeof esc, id));
        bas_metrics_set (m, "volcano_unschedule_task_count", labels, (double)j->pending);
    }
    bas_metrics_set (m, "volcano_unschedule_job_count", NULL, (double)unscheduled_jobs);
}

bas_metrics_t *
sess_metrics_gauges_new (bas_usage_t *usage)
{
    bas_metrics_t *gauges = bas_metrics_new ();
    for (size_t i = 0; i < S_GAUGE_FAMILIES; i++)
        bas_metrics_describe (gauges, s_gauge_families[i], BAS_METRIC_GAUGE, "", NULL, 0);
    s_apply_gauges (gauges, usage);
    return gauges;
}

void
sess_metrics_take_gauges (bas_metrics_t *m, bas_metrics_t *gauges)
{
    //  Series of queues and jobs that left are dropped, as Volcano deletes
    //  them: each family is replaced whole.
    for (size_t i = 0; i < S_GAUGE_FAMILIES; i++)
        bas_metrics_take_series (m, gauges, s_gauge_families[i]);
}
