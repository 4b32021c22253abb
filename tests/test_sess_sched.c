/*  test_sess_sched: the scheduling core (session-svc/sess_sched.h) as
    example usage — one session over a model, and what it proposes.

    The shared scenarios (shared/scenarios/ files) are reproduced in process
    with their expectations asserted here; the seed problems of DESIGN.md
    each have a test that fails on the buggy behaviour.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bas_log.h"
#include "sess_sched.h"
#include "bas_resource.h"
#include "scn_run.h"
#include "util_model.h"

typedef struct {
    bas_store_t *store;         // the model the sessions run on (owned)
    sess_conf_t *conf;          // the scheduler configuration, NULL for the default (owned)
    zhashx_t *out_of_sync;      // nodes the cache reports out of sync, or NULL (owned)
    sess_params_t params;       // the last session's parameters and counts
    Basalt__V1__Commit *commit; // the last session's commit (owned)
} s_run_t;

static void
s_free_commit (Basalt__V1__Commit **commit_p)
{
    if (*commit_p)
        protobuf_c_message_free_unpacked (&(*commit_p)->base, NULL);
    *commit_p = NULL;
}

static void
s_session (s_run_t *run, const char *id)
{
    s_free_commit (&run->commit);
    memset (&run->params, 0, sizeof run->params);
    run->params.session_id = id;
    run->params.now_ms = 1700000000000LL;
    run->params.out_of_sync_nodes = run->out_of_sync;
    run->commit = sess_run (run->store, run->conf, &run->params);
    assert_non_null (run->commit);
}

//  Load a scenario (a file of shared/scenarios by name, or a path) the
//  way session-svc would see it (scn_inproc_store: the file's objects
//  through cache-svc's model, then its snapshot) and run its first session.
static void
s_scenario (s_run_t *run, const char *file)
{
    memset (run, 0, sizeof *run);
    char path[1024], err[2048] = "";
    snprintf (path, sizeof path, "%s%s%s", file[0] == '/' ? "" : BASALT_SHARED_DIR,
              file[0] == '/' ? "" : "/scenarios/", file);
    scn_spec_t *spec = scn_spec_load (path, err, sizeof err);
    if (!spec)
        fail_msg ("%s", err);
    if (scn_spec_conf (spec, &run->conf, err, sizeof err) != 0)
        fail_msg ("%s", err);
    run->store = scn_inproc_store (spec, &run->out_of_sync, err, sizeof err);
    if (!run->store)
        fail_msg ("%s: %s", path, err);
    scn_spec_destroy (&spec);
    s_session (run, "session-1");
}

static void
s_done (s_run_t *run)
{
    s_free_commit (&run->commit);
    sess_conf_destroy (&run->conf);
    zhashx_destroy (&run->out_of_sync);
    bas_store_destroy (&run->store);
}

static const Basalt__V1__PodGroupCondition *
s_condition (const Basalt__V1__PodGroupStatus *status, const char *type)
{
    for (size_t i = 0; status && i < status->n_conditions; i++)
        if (strcmp (status->conditions[i]->type, type) == 0)
            return status->conditions[i];
    return NULL;
}

static const Basalt__V1__PodCondition *
s_pod_condition (const Basalt__V1__Commit *commit, const char *pod_uid)
{
    for (size_t i = 0; i < commit->n_pod_conditions; i++)
        if (strcmp (commit->pod_conditions[i]->pod_uid, pod_uid) == 0)
            return commit->pod_conditions[i];
    return NULL;
}

// ------------------------------------------------------------ shared scenarios

static void
test_gang_all_or_nothing (void **state)
{
    (void)state;
    s_run_t run;
    s_scenario (&run, "gang-all-or-nothing.yaml");
    assert_int_equal (util_model_placed_count (run.store, run.commit, "big"), 0);
    assert_int_equal (util_model_placed_count (run.store, run.commit, "small"), 2);
    const Basalt__V1__PodGroupStatusChange *big = util_model_status (run.store, run.commit, "big");
    assert_non_null (big);
    const Basalt__V1__PodGroupCondition *c = s_condition (big->status, "Unschedulable");
    assert_non_null (c);
    assert_string_equal (c->status, "True");
    assert_string_equal (c->reason, "NotEnoughResources");
    assert_string_equal (c->transition_id, "session-1");
    //  2 of big's tasks were placed and rolled back; the third fit nowhere.
    assert_non_null (strstr (c->message, "2/4 tasks in gang unschedulable"));
    assert_non_null (strstr (c->message, "0/2 nodes are available: 2 Insufficient cpu."));
    assert_string_equal (big->status->phase, "Inqueue");
    //  Pending pods of the unschedulable gang get PodScheduled=False.
    const Basalt__V1__PodCondition *pc =
        s_pod_condition (run.commit, util_model_find_pod (run.store, "big-0")->uid);
    assert_non_null (pc);
    assert_string_equal (pc->type, "PodScheduled");
    assert_string_equal (pc->status, "False");
    assert_string_equal (pc->reason, "Unschedulable");
    assert_null (s_pod_condition (run.commit, util_model_find_pod (run.store, "small-0")->uid));
    //  small became ready: Scheduled condition, still Inqueue until bound.
    const Basalt__V1__PodGroupStatusChange *small =
        util_model_status (run.store, run.commit, "small");
    assert_non_null (small);
    assert_non_null (s_condition (small->status, "Scheduled"));
    assert_int_equal (run.params.pods_placed, 2);
    assert_int_equal (run.params.jobs_ready, 1);
    //  Placements carry the PodGroup uid and the pod version seen.
    const char *small_uid = util_model_find_pg (run.store, "small")->uid;
    for (size_t i = 0; i < run.commit->n_placements; i++) {
        const Basalt__V1__Placement *pl = run.commit->placements[i];
        const Basalt__V1__Pod *pod = bas_store_pod (run.store, pl->pod_uid);
        assert_non_null (pod);
        assert_string_equal (pl->job_uid, small_uid);
        assert_non_null (pod->resource_version);
        assert_string_equal (pl->pod_resource_version, pod->resource_version);
    }
    s_done (&run);
}

static void
test_gang_min_member_elastic (void **state)
{
    (void)state;
    s_run_t run;
    s_scenario (&run, "gang-min-member-elastic.yaml");
    assert_int_equal (util_model_placed_count (run.store, run.commit, "elastic"), 3);
    assert_int_equal (run.params.pods_pending, 1);
    s_done (&run);
}

static void
test_priority_higher_first (void **state)
{
    (void)state;
    s_run_t run;
    s_scenario (&run, "priority-higher-first.yaml");
    assert_string_equal (util_model_placed (run.store, run.commit, "b-0"), "n1");
    assert_null (util_model_placed (run.store, run.commit, "a-0"));
    const Basalt__V1__PodGroupStatusChange *a = util_model_status (run.store, run.commit, "job-a");
    assert_non_null (a);
    assert_non_null (s_condition (a->status, "Unschedulable"));
    s_done (&run);
}

static void
test_predicates_selector_taints (void **state)
{
    (void)state;
    s_run_t run;
    s_scenario (&run, "predicates-node-selector-taints.yaml");
    assert_string_equal (util_model_placed (run.store, run.commit, "zone-pod"), "n3");
    assert_string_equal (util_model_placed (run.store, run.commit, "tol-pod"), "n1");
    assert_null (util_model_placed (run.store, run.commit, "nozone-pod"));
    assert_null (util_model_placed (run.store, run.commit, "untol-pod"));
    const Basalt__V1__PodGroupStatusChange *nz =
        util_model_status (run.store, run.commit, "nozone-job");
    const Basalt__V1__PodGroupStatusChange *ut =
        util_model_status (run.store, run.commit, "untol-job");
    assert_non_null (nz);
    assert_non_null (ut);
    const Basalt__V1__PodGroupCondition *c = s_condition (nz->status, "Unschedulable");
    assert_non_null (c);
    assert_non_null (strstr (c->message, "3 node(s) didn't match Pod's node affinity/selector"));
    c = s_condition (ut->status, "Unschedulable");
    assert_non_null (c);
    assert_non_null (strstr (c->message, "1 node(s) had untolerated taint {dedicated: gpu}"));
    assert_non_null (strstr (c->message, "2 node(s) didn't match Pod's node affinity/selector"));
    s_done (&run);
}

static void
test_backfill_besteffort (void **state)
{
    (void)state;
    s_run_t run;
    s_scenario (&run, "backfill-besteffort.yaml");
    assert_string_equal (util_model_placed (run.store, run.commit, "be-0"), "n1");
    assert_null (util_model_placed (run.store, run.commit, "sized-0"));
    assert_int_equal (util_model_placed_count (run.store, run.commit, "sized"), 0);
    s_done (&run);
}

static void
test_binpack_fills_one_node (void **state)
{
    (void)state;
    s_run_t run;
    s_scenario (&run, "binpack-fills-one-node.yaml");
    assert_string_equal (util_model_placed (run.store, run.commit, "pack-0"), "n1");
    assert_string_equal (util_model_placed (run.store, run.commit, "pack-1"), "n1");
    assert_string_equal (util_model_placed (run.store, run.commit, "pack-2"), "n1");
    s_done (&run);
}

static void
test_drf_fair_share (void **state)
{
    (void)state;
    s_run_t run;
    s_scenario (&run, "drf-fair-share-two-queues.yaml");
    assert_string_equal (util_model_placed (run.store, run.commit, "a2-0"), "n1");
    assert_null (util_model_placed (run.store, run.commit, "a1-1"));
    assert_int_equal (util_model_placed_count (run.store, run.commit, "b1"), 2);
    s_done (&run);
}

// ------------------------------------------------------------ seed problems

//  DESIGN problem 2: a PodGroup with no tasks (being deleted, its pods went
//  first) gets no condition and no status write; only a Pending one created
//  before its pods is admitted and written Inqueue, without a condition.
static void
test_seed_empty_job_no_status (void **state)
{
    (void)state;
    s_run_t run;
    s_scenario (&run, "seed-empty-job-no-status.yaml");
    assert_null (util_model_status (run.store, run.commit, "vanished"));
    assert_int_equal (util_model_placed_count (run.store, run.commit, "train"), 2);
    s_done (&run);

    //  A Pending empty group (created before its pods) is admitted: one
    //  write, Inqueue, no condition; the Running empty one ("gone", being
    //  deleted) gets nothing, and no pod condition is written.
    bas_store_t *store = bas_store_new ();
    util_model_node (store, "n1", "4", "8Gi", 110);
    util_model_pod_group (store, NULL, "fresh", "default", 2);
    Basalt__V1__PodGroup *pg = util_model_pod_group (store, NULL, "gone", "default", 3);
    util_model_phase (pg, "Running");
    sess_params_t params = {.session_id = "s", .now_ms = 1};
    Basalt__V1__Commit *commit = sess_run (store, NULL, &params);
    assert_int_equal (commit->n_statuses, 1);
    const Basalt__V1__PodGroupStatusChange *fresh = util_model_status (store, commit, "fresh");
    assert_non_null (fresh);
    assert_string_equal (fresh->status->phase, "Inqueue");
    assert_int_equal (fresh->status->n_conditions, 0);
    assert_null (util_model_status (store, commit, "gone"));
    assert_int_equal (commit->n_pod_conditions, 0);
    assert_int_equal (params.jobs_total, 2);
    //  Written back, it is not written again.
    util_model_feed_back (store, commit, false);
    s_free_commit (&commit);
    sess_params_t again = {.session_id = "s2", .now_ms = 2};
    commit = sess_run (store, NULL, &again);
    assert_int_equal (commit->n_statuses, 0);
    s_free_commit (&commit);
    bas_store_destroy (&store);
}

//  Storage kept between sessions (sess_keep_t, as session-svc's worker
//  keeps it) changes nothing: sessions over different models, larger and
//  smaller in turn, give byte for byte the commit a session with storage
//  of its own gives.
static void
test_keep_between_sessions (void **state)
{
    (void)state;
    static const char *const files[] = {
        "drf-fair-share-two-queues.yaml",        "seed-negative-idle-node.yaml",
        "predicates-node-selector-taints.yaml",  "backfill-besteffort.yaml",
        "seed-hierarchical-queue-ancestor.yaml", "drf-fair-share-two-queues.yaml",
        "gang-min-member-elastic.yaml",          "binpack-fills-one-node.yaml"};
    sess_keep_t *keep = sess_keep_new ();
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        s_run_t run;
        s_scenario (&run, files[f]); // its first session: storage of its own
        sess_params_t params = {0};
        params.session_id = "session-1";
        params.now_ms = 1700000000000LL;
        params.out_of_sync_nodes = run.out_of_sync;
        params.keep = keep;
        Basalt__V1__Commit *kept = sess_run (run.store, run.conf, &params);
        assert_non_null (kept);
        size_t n1 = protobuf_c_message_get_packed_size (&run.commit->base);
        size_t n2 = protobuf_c_message_get_packed_size (&kept->base);
        assert_int_equal (n1, n2);
        uint8_t *b1 = malloc (n1 + 1), *b2 = malloc (n2 + 1);
        protobuf_c_message_pack (&run.commit->base, b1);
        protobuf_c_message_pack (&kept->base, b2);
        if (memcmp (b1, b2, n1) != 0)
            fail_msg ("%s: the commit differs with kept storage", files[f]);
        assert_int_equal (params.jobs_total, run.params.jobs_total);
        assert_int_equal (params.nodes_out_of_sync, run.params.nodes_out_of_sync);
        free (b1);
        free (b2);
        s_free_commit (&kept);
        s_done (&run);
    }
    sess_keep_destroy (&keep);
    sess_keep_destroy (&keep); // NULL-safe
}

//  DESIGN problem 3: enqueue checks and reserves at every ancestor.
static void
test_seed_hierarchical_queue (void **state)
{
    (void)state;
    s_run_t run;
    s_scenario (&run, "seed-hierarchical-queue-ancestor.yaml");
    assert_string_equal (util_model_placed (run.store, run.commit, "job-1-pod"), "n1");
    assert_null (util_model_placed (run.store, run.commit, "job-2-pod"));
    const Basalt__V1__PodGroupStatusChange *j2 = util_model_status (run.store, run.commit, "job-2");
    assert_non_null (j2);
    assert_string_equal (j2->status->phase, "Pending");
    assert_non_null (s_condition (j2->status, "Unschedulable"));
    const Basalt__V1__PodGroupStatusChange *j1 = util_model_status (run.store, run.commit, "job-1");
    assert_non_null (j1);
    assert_string_equal (j1->status->phase, "Inqueue");

    //  The next session (job-1 bound and Running): job-2 still refused,
    //  because test-root's allocation is counted at every level.
    util_model_feed_back (run.store, run.commit, true);
    s_session (&run, "session-2");
    assert_null (util_model_placed (run.store, run.commit, "job-2-pod"));
    s_done (&run);
}

//  The rollback of DESIGN problem 3: a job refused at one level of the
//  hierarchy must leave nothing reserved at the levels it passed, or a
//  later job that fits is refused for room nobody holds. Two trees, one
//  for each direction a level-by-level check could run in:
//  - tree 1 (root > top1 > mid1 > leaf1, top1 full but for 1 cpu): b1 fits
//    leaf1 and mid1 and is refused by top1, its grandparent; c1 then fits
//    everywhere only if leaf1 holds no reservation for b1 (1 + 2 > 2);
//  - tree 2 (root > top2 > mid2 > leaf2): b2 is refused by leaf2 itself;
//    c2 then fits only if top2 and mid2 hold no reservation for b2
//    (2 + 3 > 4).
//  Jobs in one leaf go in creation order, so b is always tried before c.
static void
test_hierarchy_rollback (void **state)
{
    (void)state;
    const char *conf_text = "actions: \"enqueue, allocate\"\n"
                            "tiers:\n"
                            "- plugins:\n"
                            "  - name: priority\n"
                            "  - name: gang\n"
                            "- plugins:\n"
                            "  - name: predicates\n"
                            "  - name: capacity\n"
                            "    enableHierarchy: true\n";
    char err[256];
    sess_conf_t *conf = sess_conf_parse (conf_text, strlen (conf_text), err, sizeof err);
    assert_non_null (conf);
    bas_store_t *store = bas_store_new ();
    util_model_node (store, "n1", "16", "32Gi", 110);
    //  Tree 1: top1 (4 cpu) already runs a1 (3 cpu) in its leaf other1.
    Basalt__V1__Queue *top1 = util_model_queue (store, "top1", "root", 1);
    top1->capability = util_model_resources ("4", "16Gi", 0);
    util_model_queue (store, "other1", "top1", 1);
    util_model_queue (store, "mid1", "top1", 1);
    Basalt__V1__Queue *leaf1 = util_model_queue (store, "leaf1", "mid1", 1);
    leaf1->capability = util_model_resources ("2", NULL, 0);
    Basalt__V1__PodGroup *a1 = util_model_pod_group (store, NULL, "a1", "other1", 1);
    a1->min_resources = util_model_resources ("3", "1Gi", 0);
    util_model_phase (a1, "Running");
    util_model_bind (util_model_pod (store, NULL, "a1-0", "a1", "3", "1Gi"), "n1", "Running");
    Basalt__V1__PodGroup *b1 = util_model_pod_group (store, NULL, "b1", "leaf1", 1);
    b1->min_resources = util_model_resources ("2", "1Gi", 0);
    util_model_pod (store, NULL, "b1-0", "b1", "2", "1Gi");
    Basalt__V1__PodGroup *c1 = util_model_pod_group (store, NULL, "c1", "leaf1", 1);
    c1->min_resources = util_model_resources ("1", "1Gi", 0);
    util_model_pod (store, NULL, "c1-0", "c1", "1", "1Gi");
    //  Tree 2: top2 (4 cpu) > mid2 > leaf2 (2 cpu), nothing running.
    Basalt__V1__Queue *top2 = util_model_queue (store, "top2", "root", 1);
    top2->capability = util_model_resources ("4", "16Gi", 0);
    util_model_queue (store, "mid2", "top2", 1);
    Basalt__V1__Queue *leaf2 = util_model_queue (store, "leaf2", "mid2", 1);
    leaf2->capability = util_model_resources ("2", NULL, 0);
    Basalt__V1__PodGroup *b2 = util_model_pod_group (store, NULL, "b2", "leaf2", 1);
    b2->min_resources = util_model_resources ("3", "1Gi", 0);
    util_model_pod (store, NULL, "b2-0", "b2", "3", "1Gi");
    Basalt__V1__PodGroup *c2 = util_model_pod_group (store, NULL, "c2", "leaf2", 1);
    c2->min_resources = util_model_resources ("2", "1Gi", 0);
    util_model_pod (store, NULL, "c2-0", "c2", "2", "1Gi");

    sess_params_t params = {.session_id = "s", .now_ms = 1};
    Basalt__V1__Commit *commit = sess_run (store, conf, &params);
    //  The refused jobs stay Pending; the ones that fit are admitted and
    //  placed in the same session.
    assert_null (util_model_placed (store, commit, "b1-0"));
    assert_string_equal (util_model_status (store, commit, "b1")->status->phase, "Pending");
    assert_null (util_model_placed (store, commit, "b2-0"));
    assert_string_equal (util_model_status (store, commit, "b2")->status->phase, "Pending");
    if (!util_model_placed (store, commit, "c1-0"))
        fail_msg ("c1 (1 cpu) not placed: a reservation of refused b1 stayed in leaf1");
    assert_string_equal (util_model_status (store, commit, "c1")->status->phase, "Inqueue");
    if (!util_model_placed (store, commit, "c2-0"))
        fail_msg ("c2 (2 cpu) not placed: a reservation of refused b2 stayed in mid2/top2");
    assert_string_equal (util_model_status (store, commit, "c2")->status->phase, "Inqueue");
    s_free_commit (&commit);
    bas_store_destroy (&store);
    sess_conf_destroy (&conf);
}

//  DESIGN problem 4: a node with negative idle is skipped, nothing aborts.
static void
test_seed_negative_idle (void **state)
{
    (void)state;
    s_run_t run;
    s_scenario (&run, "seed-negative-idle-node.yaml");
    assert_string_equal (util_model_placed (run.store, run.commit, "work-0"), "n2");
    assert_int_equal (run.params.nodes_out_of_sync, 1);
    s_done (&run);

    //  A best-effort pod could go anywhere, but never to the negative node;
    //  and nodes the cache reports out of sync are skipped too.
    bas_store_t *store = bas_store_new ();
    util_model_node (store, "n1", "1", "1Gi", 110);
    util_model_node (store, "n2", "4", "8Gi", 110);
    util_model_node (store, "n3", "4", "8Gi", 110);
    Basalt__V1__Pod *hog = util_model_pod (store, NULL, "hog", NULL, "3", "1Gi");
    util_model_bind (hog, "n1", "Running");
    util_model_pod_group (store, NULL, "be", "default", 1);
    util_model_pod (store, NULL, "be-0", "be", NULL, NULL);
    zhashx_t *oos = zhashx_new ();
    zhashx_insert (oos, "n2", (void *)"yes");
    //  No node scoring: equal candidates go by name, so n1 would be chosen
    //  first if it were kept (backfill checks no resources).
    const char *conf_text = "actions: \"enqueue, allocate, backfill\"\n"
                            "tiers:\n"
                            "- plugins:\n"
                            "  - name: priority\n"
                            "  - name: gang\n"
                            "- plugins:\n"
                            "  - name: predicates\n"
                            "  - name: proportion\n";
    char err[256];
    sess_conf_t *conf = sess_conf_parse (conf_text, strlen (conf_text), err, sizeof err);
    assert_non_null (conf);
    sess_params_t params = {.session_id = "s", .now_ms = 1, .out_of_sync_nodes = oos};
    Basalt__V1__Commit *commit = sess_run (store, conf, &params);
    assert_string_equal (util_model_placed (store, commit, "be-0"), "n3");
    assert_int_equal (params.nodes_out_of_sync, 2);
    s_free_commit (&commit);

    //  It recovers by itself: once the pod placed by name is gone (and the
    //  cache no longer reports n2), n1 is whole again and first by name.
    bas_store_delete (store, BASALT__V1__OBJECT_KIND__OBJECT_KIND_POD, "pod:default/hog");
    zhashx_purge (oos);
    sess_params_t again = {.session_id = "s2", .now_ms = 2, .out_of_sync_nodes = oos};
    commit = sess_run (store, conf, &again);
    assert_string_equal (util_model_placed (store, commit, "be-0"), "n1");
    assert_int_equal (again.nodes_out_of_sync, 0);
    s_free_commit (&commit);
    sess_conf_destroy (&conf);
    zhashx_destroy (&oos);
    bas_store_destroy (&store);
}

// ------------------------------------------------------------ behaviour

//  Statuses are proposed only when they change: feeding a session's
//  statuses back, the next session proposes none.
static void
test_status_only_on_change (void **state)
{
    (void)state;
    s_run_t run;
    s_scenario (&run, "gang-all-or-nothing.yaml");
    assert_true (run.commit->n_statuses > 0);
    util_model_feed_back (run.store, run.commit, false);
    s_session (&run, "session-2");
    assert_int_equal (run.commit->n_statuses, 0);
    //  Pods still pending: the same placements are proposed again.
    assert_int_equal (util_model_placed_count (run.store, run.commit, "small"), 2);

    //  Now bind them: small turns Running, then quiet again.
    util_model_feed_back (run.store, run.commit, true);
    s_session (&run, "session-3");
    //  small turned Running; big's reason changed too (its queue's share
    //  is now what stops it, not the nodes), which is a real change.
    assert_int_equal (run.commit->n_statuses, 2);
    const Basalt__V1__PodGroupStatusChange *small =
        util_model_status (run.store, run.commit, "small");
    assert_non_null (small);
    assert_string_equal (small->status->phase, "Running");
    assert_int_equal (small->status->running, 2);
    //  The Scheduled condition is unchanged: it keeps its first stamp.
    const Basalt__V1__PodGroupCondition *c = s_condition (small->status, "Scheduled");
    assert_non_null (c);
    assert_string_equal (c->transition_id, "session-1");
    util_model_feed_back (run.store, run.commit, true);
    s_session (&run, "session-4");
    assert_int_equal (run.commit->n_statuses, 0);
    assert_int_equal (run.commit->n_placements, 0);
    s_done (&run);
}

//  A Running gang whose members start one by one is written once when the
//  gang is up (running reaches minMember), not once per member: the counts
//  alone are no reason for an API write. Without that rule each pod of a
//  gang going Running costs a PodGroup PATCH (the scale issue: 3-5 per gang).
static void
test_status_counts_written_at_min_member (void **state)
{
    (void)state;
    bas_store_t *store = bas_store_new ();
    util_model_node (store, "n1", "8", "8Gi", 110);
    Basalt__V1__PodGroup *pg = util_model_pod_group (store, NULL, "g", "default", 3);
    util_model_phase (pg, "Inqueue");
    Basalt__V1__Pod *pods[3];
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf (name, sizeof name, "g-%d", i);
        pods[i] = util_model_pod (store, NULL, name, "g", "1", "1Gi");
        util_model_bind (pods[i], "n1", "Pending"); // bound, not yet started
    }
    //  The first session writes the gang's status (Running, 0 running, its
    //  Scheduled condition) as the API then holds it.
    sess_params_t first = {.session_id = "s0", .now_ms = 0};
    Basalt__V1__Commit *commit0 = sess_run (store, NULL, &first);
    assert_non_null (util_model_status (store, commit0, "g"));
    util_model_feed_back (store, commit0, false);
    s_free_commit (&commit0);
    for (int started = 1; started <= 3; started++) {
        util_model_bind (pods[started - 1], "n1", "Running");
        char id[16];
        snprintf (id, sizeof id, "s%d", started);
        sess_params_t params = {.session_id = id, .now_ms = started};
        Basalt__V1__Commit *commit = sess_run (store, NULL, &params);
        const Basalt__V1__PodGroupStatusChange *ch = util_model_status (store, commit, "g");
        if (started < 3) {
            if (ch)
                print_error ("started=%d: status proposed: phase=%s running=%d conditions=%zu\n",
                             started, ch->status->phase, ch->status->running,
                             ch->status->n_conditions);
            assert_null (ch); // 1 or 2 of 3 running: nothing to write
        } else {
            assert_non_null (ch);
            assert_string_equal (ch->status->phase, "Running");
            assert_int_equal (ch->status->running, 3);
        }
        util_model_feed_back (store, commit, false);
        s_free_commit (&commit);
    }
    //  Up and written: quiet after that.
    sess_params_t params = {.session_id = "s4", .now_ms = 4};
    Basalt__V1__Commit *commit = sess_run (store, NULL, &params);
    assert_int_equal (commit->n_statuses, 0);
    s_free_commit (&commit);
    bas_store_destroy (&store);
}

//  A discarded gang leaves no trace: "pair" needs both nodes entirely,
//  and is tried after "big" made (and rolled back) tentative placements.
static void
test_discard_leaves_no_trace (void **state)
{
    (void)state;
    bas_store_t *store = bas_store_new ();
    util_model_node (store, "n1", "3", "8Gi", 110);
    util_model_node (store, "n2", "3", "8Gi", 110);
    util_model_pod_group (store, NULL, "big", "default", 4);
    util_model_pod_group (store, NULL, "pair", "default", 2);
    for (int i = 0; i < 4; i++) {
        char name[32];
        snprintf (name, sizeof name, "big-%d", i);
        util_model_pod (store, NULL, name, "big", "2", "1Gi");
    }
    util_model_pod (store, NULL, "pair-0", "pair", "3", "1Gi");
    util_model_pod (store, NULL, "pair-1", "pair", "3", "1Gi");
    sess_params_t params = {.session_id = "s", .now_ms = 1};
    Basalt__V1__Commit *commit = sess_run (store, NULL, &params);
    assert_int_equal (util_model_placed_count (store, commit, "big"), 0);
    assert_int_equal (util_model_placed_count (store, commit, "pair"), 2);
    assert_string_not_equal (util_model_placed (store, commit, "pair-0"),
                             util_model_placed (store, commit, "pair-1"));
    s_free_commit (&commit);
    bas_store_destroy (&store);
}

//  Equal nodes are told apart by name: always the same answer.
static void
test_deterministic_ties (void **state)
{
    (void)state;
    for (int round = 0; round < 3; round++) {
        bas_store_t *store = bas_store_new ();
        util_model_node (store, "n3", "4", "8Gi", 110);
        util_model_node (store, "n1", "4", "8Gi", 110);
        util_model_node (store, "n2", "4", "8Gi", 110);
        util_model_pod_group (store, NULL, "j", "default", 1);
        util_model_pod (store, NULL, "j-0", "j", "1", "1Gi");
        Basalt__V1__Commit *commit = sess_run (store, NULL, NULL);
        assert_string_equal (util_model_placed (store, commit, "j-0"), "n1");
        s_free_commit (&commit);
        bas_store_destroy (&store);
    }
}

//  Node affinity operators, NoExecute taints, Exists tolerations,
//  unschedulable nodes and the pod limit.
static void
test_predicates_detail (void **state)
{
    (void)state;
    bas_store_t *store = bas_store_new ();
    Basalt__V1__Node *n1 = util_model_node (store, "n1", "8", "16Gi", 110);
    util_model_label (n1, "gen", "5");
    util_model_label (n1, "zone", "a");
    util_model_taint (n1, "maint", "soon", "NoExecute");
    Basalt__V1__Node *n2 = util_model_node (store, "n2", "8", "16Gi", 110);
    util_model_label (n2, "gen", "3");
    util_model_label (n2, "zone", "b");
    Basalt__V1__Node *n3 = util_model_node (store, "n3", "8", "16Gi", 1);
    util_model_label (n3, "gen", "9");
    Basalt__V1__Pod *resident = util_model_pod (store, NULL, "resident", NULL, "1", "1Gi");
    util_model_bind (resident, "n3", "Running");
    Basalt__V1__Node *n4 = util_model_node (store, "n4", "8", "16Gi", 110);
    util_model_label (n4, "gen", "7");
    n4->has_unschedulable = true;
    n4->unschedulable = true;

    //  gen > 4: n1 (tainted NoExecute), n3 (full), n4 (unschedulable) ->
    //  with an Exists toleration for maint, n1.
    util_model_pod_group (store, NULL, "g1", "default", 1);
    Basalt__V1__Pod *p1 = util_model_pod (store, NULL, "p1", "g1", "1", "1Gi");
    p1->n_affinity_terms = 1;
    p1->affinity_terms = calloc (1, sizeof *p1->affinity_terms);
    Basalt__V1__NodeSelectorTerm *term = calloc (1, sizeof *term);
    basalt__v1__node_selector_term__init (term);
    Basalt__V1__NodeSelectorRequirement *req = calloc (1, sizeof *req);
    basalt__v1__node_selector_requirement__init (req);
    req->key = strdup ("gen");
    req->operator_ = strdup ("Gt");
    req->n_values = 1;
    req->values = calloc (1, sizeof *req->values);
    req->values[0] = strdup ("4");
    term->n_match_expressions = 1;
    term->match_expressions = calloc (1, sizeof *term->match_expressions);
    term->match_expressions[0] = req;
    p1->affinity_terms[0] = term;
    util_model_toleration (p1, "maint", "Exists", NULL, NULL);

    //  Same affinity, no toleration: nowhere to go, three reasons.
    util_model_pod_group (store, NULL, "g2", "default", 1);
    Basalt__V1__Pod *p2 = util_model_pod (store, NULL, "p2", "g2", "1", "1Gi");
    p2->n_affinity_terms = 1;
    p2->affinity_terms = calloc (1, sizeof *p2->affinity_terms);
    p2->affinity_terms[0] =
        (Basalt__V1__NodeSelectorTerm *)bas_msg_dup (&p1->affinity_terms[0]->base);

    //  zone NotIn [a] (absent label counts as not in): n2 or n3/n4; n2 wins.
    util_model_pod_group (store, NULL, "g3", "default", 1);
    Basalt__V1__Pod *p3 = util_model_pod (store, NULL, "p3", "g3", "1", "1Gi");
    p3->n_affinity_terms = 1;
    p3->affinity_terms = calloc (1, sizeof *p3->affinity_terms);
    p3->affinity_terms[0] =
        (Basalt__V1__NodeSelectorTerm *)bas_msg_dup (&p1->affinity_terms[0]->base);
    Basalt__V1__NodeSelectorRequirement *r3 = p3->affinity_terms[0]->match_expressions[0];
    free (r3->key);
    r3->key = strdup ("zone");
    free (r3->operator_);
    r3->operator_ = strdup ("NotIn");
    free (r3->values[0]);
    r3->values[0] = strdup ("a");

    sess_params_t params = {.session_id = "s", .now_ms = 1};
    Basalt__V1__Commit *commit = sess_run (store, NULL, &params);
    assert_string_equal (util_model_placed (store, commit, "p1"), "n1");
    assert_null (util_model_placed (store, commit, "p2"));
    assert_string_equal (util_model_placed (store, commit, "p3"), "n2");
    const Basalt__V1__PodGroupStatusChange *g2 = util_model_status (store, commit, "g2");
    assert_non_null (g2);
    const Basalt__V1__PodGroupCondition *c = s_condition (g2->status, "Unschedulable");
    assert_non_null (c);
    assert_non_null (strstr (c->message, "0/4 nodes are available: "));
    assert_non_null (strstr (c->message, "1 node(s) didn't match Pod's node affinity/selector"));
    assert_non_null (strstr (c->message, "1 node(s) had untolerated taint {maint: soon}"));
    assert_non_null (strstr (c->message, "1 Insufficient pods"));
    assert_non_null (strstr (c->message, "1 node(s) were unschedulable"));
    s_free_commit (&commit);
    bas_store_destroy (&store);
}

//  Enqueue: overcommit refuses what the (inflated) cluster cannot hold.
static void
test_enqueue_overcommit (void **state)
{
    (void)state;
    bas_store_t *store = bas_store_new ();
    util_model_node (store, "n1", "4", "8Gi", 110);
    Basalt__V1__PodGroup *huge = util_model_pod_group (store, NULL, "huge", "default", 1);
    huge->min_resources = util_model_resources ("5", "1Gi", 0); // 5 > 4 * 1.2
    Basalt__V1__PodGroup *fits = util_model_pod_group (store, NULL, "fits", "default", 1);
    fits->min_resources = util_model_resources ("4", "1Gi", 0);
    util_model_pod (store, NULL, "huge-0", "huge", "1", "1Gi");
    util_model_pod (store, NULL, "fits-0", "fits", "1", "1Gi");
    sess_params_t params = {.session_id = "s", .now_ms = 1};
    Basalt__V1__Commit *commit = sess_run (store, NULL, &params);
    assert_null (util_model_placed (store, commit, "huge-0"));
    assert_non_null (util_model_placed (store, commit, "fits-0"));
    assert_string_equal (util_model_status (store, commit, "huge")->status->phase, "Pending");
    s_free_commit (&commit);
    bas_store_destroy (&store);
}

//  Resources being released are reserved (pipelined), never bound.
static void
test_pipelined_not_bound (void **state)
{
    (void)state;
    bas_store_t *store = bas_store_new ();
    util_model_node (store, "n1", "2", "4Gi", 110);
    Basalt__V1__Pod *old = util_model_pod (store, NULL, "old", NULL, "2", "2Gi");
    util_model_bind (old, "n1", "Running");
    old->deleting = true;
    util_model_pod_group (store, NULL, "next", "default", 1);
    util_model_pod (store, NULL, "next-0", "next", "2", "2Gi");
    sess_params_t params = {.session_id = "s", .now_ms = 1, .want_pipelined = true};
    Basalt__V1__Commit *commit = sess_run (store, NULL, &params);
    //  One placement, flagged pipelined: the cache reserves, never binds.
    assert_int_equal (commit->n_placements, 1);
    assert_true (commit->placements[0]->has_pipelined && commit->placements[0]->pipelined);
    assert_string_equal (commit->placements[0]->node, "n1");
    assert_null (util_model_placed (store, commit, "next-0"));
    assert_int_equal (params.pods_placed, 0);
    assert_int_equal (params.pods_pipelined, 1);
    assert_int_equal (params.n_pipelined, 1);
    assert_string_equal (params.pipelined[0].pod_uid, "pod:default/next-0");
    assert_string_equal (params.pipelined[0].node, "n1");
    free (params.pipelined);
    s_free_commit (&commit);
    bas_store_destroy (&store);
}

//  Garbage in the model (no names, unknown queue, odd phases) never aborts.
static void
test_odd_model (void **state)
{
    (void)state;
    bas_store_t *store = bas_store_new ();
    util_model_node (store, "n1", "2", "4Gi", 0); // no pod limit known
    util_model_pod_group (store, NULL, "lost", "no-such-queue", 1);
    util_model_pod (store, NULL, "lost-0", "lost", "1", "1Gi");
    util_model_pod_group (store, NULL, "zero", "default", 0);
    Basalt__V1__Pod *weird = util_model_pod (store, NULL, "zero-0", "zero", "1", "1Gi");
    free (weird->phase);
    weird->phase = strdup ("Exploded");
    util_model_pod (store, NULL, "orphan", "no-such-group", "1", "1Gi");
    Basalt__V1__Commit *commit = sess_run (store, NULL, NULL);
    assert_non_null (commit);
    assert_int_equal (commit->n_placements, 0);
    s_free_commit (&commit);
    commit = sess_run (NULL, NULL, NULL);
    assert_non_null (commit);
    s_free_commit (&commit);
    bas_store_destroy (&store);
}

//  DESIGN problem 1: the ignored-devices list comes from cache-svc with the
//  snapshot and is only read here. A pod asking for 2 FPGAs on a node that
//  states 1 does not fit; with the resource ignored it does, on either side
//  of the comparison (node allocatable and task request).
static void
test_ignored_devices (void **state)
{
    (void)state;
    for (int ignore = 0; ignore < 2; ignore++) {
        s_run_t run;
        memset (&run, 0, sizeof run);
        run.store = bas_store_new ();
        Basalt__V1__Node *n1 = util_model_node (run.store, "n1", "4", "8Gi", 110);
        bas_res_t alloc;
        bas_res_from_proto (&alloc, n1->allocatable, NULL, 0);
        bas_res_scalar_set (&alloc, "example.com/fpga", 1);
        protobuf_c_message_free_unpacked (&n1->allocatable->base, NULL);
        n1->allocatable = bas_res_to_proto (&alloc);
        util_model_pod_group (run.store, "default", "fpga", "default", 1);
        Basalt__V1__Pod *pod = util_model_pod (run.store, "default", "fpga-0", "fpga", "1", "1Gi");
        bas_res_t req;
        bas_res_from_proto (&req, pod->requests, NULL, 0);
        bas_res_scalar_set (&req, "example.com/fpga", 2);
        protobuf_c_message_free_unpacked (&pod->requests->base, NULL);
        pod->requests = bas_res_to_proto (&req);
        zlistx_t *ignored = zlistx_new ();
        if (ignore)
            zlistx_add_end (ignored, "example.com/fpga");
        s_free_commit (&run.commit);
        memset (&run.params, 0, sizeof run.params);
        run.params.session_id = "session-1";
        run.params.now_ms = 1700000000000LL;
        run.params.ignored_devices = ignored;
        run.commit = sess_run (run.store, run.conf, &run.params);
        assert_non_null (run.commit);
        assert_int_equal (util_model_placed_count (run.store, run.commit, "fpga"), ignore ? 1 : 0);
        zlistx_destroy (&ignored);
        s_done (&run);
    }
}

//  resourcequota refuses "over" with Volcano's Event words, naming the
//  resource, what the job asks, what is in use and the limit; the group
//  refused for a queue's room keeps the old words (no Event for the others).
static void
test_resourcequota_event (void **state)
{
    (void)state;
    s_run_t run;
    s_scenario (&run, BASALT_SOURCE_DIR "/tests/scenarios/resourcequota-refuses-over-quota.yaml");
    //  "over" gets both Events Volcano writes for it: the Normal one of the
    //  refusal, and the Warning one of its gang's Unschedulable condition.
    const Basalt__V1__PodGroupEvent *ev = NULL, *warning = NULL;
    const char *over_uid = util_model_find_pg (run.store, "team/over")->uid;
    for (size_t i = 0; i < run.commit->n_group_events; i++) {
        const Basalt__V1__PodGroupEvent *e = run.commit->group_events[i];
        assert_string_equal (e->uid, over_uid); // only "over" was refused
        if (strcmp (e->type, "Normal") == 0)
            ev = e;
        else
            warning = e;
    }
    assert_non_null (ev);
    assert_string_equal (ev->reason, "Unschedulable");
    assert_string_equal (ev->message, "resource quota insufficient, requested: cpu=2, used: cpu=1, "
                                      "limited: cpu=4");
    assert_non_null (warning);
    assert_string_equal (warning->type, "Warning");
    assert_string_equal (warning->reason, "Unschedulable");
    assert_non_null (strstr (warning->message, "tasks in gang unschedulable"));
    s_done (&run);
}

//  A minResources key nothing reads ("gpu") is read past, and said: the
//  PodGroup gets a Warning Event InvalidMinResources naming it, while the
//  group is enqueued and its pod placed on its cpu alone.
static void
test_unknown_min_resources_key_event (void **state)
{
    (void)state;
    s_run_t run;
    s_scenario (&run, BASALT_SOURCE_DIR "/tests/scenarios/enqueue-unknown-min-resources-key.yaml");
    assert_int_equal (util_model_placed_count (run.store, run.commit, "typo"), 1);
    const Basalt__V1__PodGroupEvent *ev = NULL;
    for (size_t i = 0; i < run.commit->n_group_events; i++)
        if (strcmp (run.commit->group_events[i]->reason, "InvalidMinResources") == 0)
            ev = run.commit->group_events[i];
    assert_non_null (ev);
    assert_string_equal (ev->type, "Warning");
    assert_string_equal (ev->uid, util_model_find_pg (run.store, "typo")->uid);
    assert_non_null (strstr (ev->message, "spec.minResources: \"gpu\": not a resource"));
    s_done (&run);
}

int
main (void)
{
    bas_log_init ("test", BAS_LOG_WARN, BAS_LOG_FORMAT_TEXT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_gang_all_or_nothing),
        cmocka_unit_test (test_keep_between_sessions),
        cmocka_unit_test (test_ignored_devices),
        cmocka_unit_test (test_gang_min_member_elastic),
        cmocka_unit_test (test_priority_higher_first),
        cmocka_unit_test (test_predicates_selector_taints),
        cmocka_unit_test (test_backfill_besteffort),
        cmocka_unit_test (test_binpack_fills_one_node),
        cmocka_unit_test (test_drf_fair_share),
        cmocka_unit_test (test_seed_empty_job_no_status),
        cmocka_unit_test (test_seed_hierarchical_queue),
        cmocka_unit_test (test_hierarchy_rollback),
        cmocka_unit_test (test_seed_negative_idle),
        cmocka_unit_test (test_status_only_on_change),
        cmocka_unit_test (test_status_counts_written_at_min_member),
        cmocka_unit_test (test_discard_leaves_no_trace),
        cmocka_unit_test (test_deterministic_ties),
        cmocka_unit_test (test_predicates_detail),
        cmocka_unit_test (test_enqueue_overcommit),
        cmocka_unit_test (test_pipelined_not_bound),
        cmocka_unit_test (test_odd_model),
        cmocka_unit_test (test_resourcequota_event),
        cmocka_unit_test (test_unknown_min_resources_key_event),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
