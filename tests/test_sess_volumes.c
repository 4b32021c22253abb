/*  test_sess_volumes: claims that wait for their first consumer, as a
    session decides them (session-svc/sess_volumes.c) — example usage: a
    model with a WaitForFirstConsumer class, PVs and claims, one session,
    and the commit's placements with the claims each carries.

    The models are files in tests/sess-volumes/ (the scenario format,
    loaded as test_sess_sched loads the shared scenarios); their
    descriptions say what each pod should get and why. The assertions are
    on Placement.claims, which the scenario format cannot see.
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
#include "scn_run.h"
#include "util_model.h"

typedef struct {
    bas_store_t *store;         // the model (owned)
    sess_conf_t *conf;          // the file's scheduler configuration (owned)
    zhashx_t *out_of_sync;      // nodes out of sync, or NULL (owned)
    sess_params_t params;       // the session's parameters and counts
    Basalt__V1__Commit *commit; // the session's commit (owned)
} s_run_t;

//  Load tests/sess-volumes/<file> as session-svc would see it and run
//  one session.
static void
s_load (s_run_t *run, const char *file)
{
    memset (run, 0, sizeof *run);
    char path[1024], err[2048] = "";
    snprintf (path, sizeof path, "%s/tests/sess-volumes/%s", BASALT_SOURCE_DIR, file);
    scn_spec_t *spec = scn_spec_load (path, err, sizeof err);
    if (!spec)
        fail_msg ("%s", err);
    if (scn_spec_conf (spec, &run->conf, err, sizeof err) != 0)
        fail_msg ("%s", err);
    run->store = scn_inproc_store (spec, &run->out_of_sync, err, sizeof err);
    if (!run->store)
        fail_msg ("%s: %s", path, err);
    scn_spec_destroy (&spec);
    run->params.session_id = "session-1";
    run->params.now_ms = 1700000000000LL;
    run->params.out_of_sync_nodes = run->out_of_sync;
    run->commit = sess_run (run->store, run->conf, &run->params);
    assert_non_null (run->commit);
}

static void
s_done (s_run_t *run)
{
    if (run->commit)
        protobuf_c_message_free_unpacked (&run->commit->base, NULL);
    sess_conf_destroy (&run->conf);
    zhashx_destroy (&run->out_of_sync);
    bas_store_destroy (&run->store);
}

//  The commit's placement of pod `name` (in namespace default), or NULL.
static const Basalt__V1__Placement *
s_placement (s_run_t *run, const char *name)
{
    const Basalt__V1__Pod *pod = util_model_find_pod (run->store, name);
    assert_non_null (pod);
    for (size_t i = 0; i < run->commit->n_placements; i++)
        if (strcmp (run->commit->placements[i]->pod_uid, pod->uid) == 0)
            return run->commit->placements[i];
    return NULL;
}

//  Assert that pod `name` is placed (bound, not pipelined) on `node` with
//  its one claim `claim` bound to PV `pv` (NULL: to be provisioned).
static void
s_expect_claim (s_run_t *run, const char *name, const char *node, const char *claim, const char *pv)
{
    const Basalt__V1__Placement *p = s_placement (run, name);
    if (!p)
        fail_msg ("%s: not placed", name);
    assert_string_equal (p->node, node);
    assert_false (p->pipelined);
    assert_int_equal (p->n_claims, 1);
    const Basalt__V1__ClaimBinding *cb = p->claims[0];
    assert_string_equal (cb->namespace_, "default");
    assert_string_equal (cb->name, claim);
    assert_non_null (cb->claim_uid);
    assert_true (cb->claim_uid[0] != 0);
    if (pv) {
        if (!cb->volume_name)
            fail_msg ("%s: claim %s to be provisioned, expected PV %s", name, claim, pv);
        assert_string_equal (cb->volume_name, pv);
    } else if (cb->volume_name)
        fail_msg ("%s: claim %s bound to %s, expected provisioning", name, claim, cb->volume_name);
}

static const char *
s_pg_message (s_run_t *run, const char *pg)
{
    const Basalt__V1__PodGroupStatusChange *ch = util_model_status (run->store, run->commit, pg);
    if (!ch || !ch->status)
        return "";
    for (size_t i = 0; i < ch->status->n_conditions; i++)
        if (strcmp (ch->status->conditions[i]->type, "Unschedulable") == 0)
            return ch->status->conditions[i]->message ? ch->status->conditions[i]->message : "";
    return "";
}

// ------------------------------------------------------------ tests

//  The smallest PV that fits, skipping those too small, of other access or
//  volume modes, pre-bound elsewhere, not Available or being deleted; two
//  pods never the same PV; a PV pre-bound to the claim wins where its
//  affinity allows; a claim's selector.
static void
test_choose_pv (void **state)
{
    (void)state;
    s_run_t run;
    s_load (&run, "choose-pv.yaml");
    s_expect_claim (&run, "pair-0", "n1", "data-0", "pv-a");
    s_expect_claim (&run, "pair-1", "n1", "data-1", "pv-b");
    s_expect_claim (&run, "pre-0", "n2", "data-pre", "pv-pre");
    s_expect_claim (&run, "sel-0", "n1", "data-sel", "pv-fast");
    assert_int_equal (run.commit->n_placements, 4);
    s_done (&run);
}

//  A node's PVs pinned to its host and the others are one choice: the
//  smallest that fits, ties to the first name, the others' affinity
//  checked.
static void
test_loose_and_pinned (void **state)
{
    (void)state;
    s_run_t run;
    s_load (&run, "loose-and-pinned.yaml");
    s_expect_claim (&run, "tie-0", "n1", "data-t0", "a-loose");
    s_expect_claim (&run, "tie-1", "n1", "data-t1", "b-pinned");
    s_expect_claim (&run, "small-0", "n1", "data-s", "c-pinned");
    assert_int_equal (run.commit->n_placements, 3);
    s_done (&run);
}

//  A gang of 4 where the fourth claim has no PV and cannot be provisioned:
//  nothing placed, and the PVs the first three had are free again.
static void
test_gang_all_or_nothing (void **state)
{
    (void)state;
    s_run_t run;
    s_load (&run, "gang.yaml");
    for (int i = 0; i < 4; i++) {
        char name[16];
        snprintf (name, sizeof name, "gang-%d", i);
        assert_null (s_placement (&run, name));
    }
    assert_int_equal (util_model_placed_count (run.store, run.commit, "gang"), 0);
    assert_non_null (strstr (s_pg_message (&run, "gang"),
                             "node(s) didn't find available persistent volumes to bind"));
    s_expect_claim (&run, "solo-0", "n1", "data-solo", "pv-0");
    assert_int_equal (run.commit->n_placements, 1);
    s_done (&run);
}

//  Provisioning: a class with a provisioner and allowedTopologies; a
//  claim whose selected-node names the node, or another node; a class
//  that cannot provision.
static void
test_provision (void **state)
{
    (void)state;
    s_run_t run;
    s_load (&run, "provision.yaml");
    s_expect_claim (&run, "fast-0", "n1", "data-fast", NULL);
    s_expect_claim (&run, "picked-0", "n1", "data-picked", NULL);
    assert_null (s_placement (&run, "elsewhere-0"));
    assert_null (s_placement (&run, "none-0"));
    assert_non_null (
        strstr (s_pg_message (&run, "elsewhere"),
                "0/2 nodes are available: 2 node(s) didn't find available persistent volumes "
                "to bind"));
    assert_non_null (
        strstr (s_pg_message (&run, "none"),
                "0/2 nodes are available: 2 node(s) didn't find available persistent volumes "
                "to bind"));
    //  The busy pod is bound already: no placement of its own.
    assert_int_equal (run.commit->n_placements, 2);
    s_done (&run);
}

//  A claim two pods share follows the first placed pod's decision (the
//  PV, or the node it is provisioned on); a claim with no volume counts
//  against the node's CSI limit.
static void
test_shared_and_limits (void **state)
{
    (void)state;
    s_run_t run;
    s_load (&run, "shared-and-limits.yaml");
    s_expect_claim (&run, "first-0", "n2", "data-shared", "pv-s");
    s_expect_claim (&run, "second-0", "n2", "data-shared", "pv-s");
    s_expect_claim (&run, "lim-0", "n2", "data-lim", NULL);
    s_expect_claim (&run, "prov-a-0", "n1", "data-prov", NULL);
    s_expect_claim (&run, "prov-b-0", "n1", "data-prov", NULL);
    s_done (&run);
}

int
main (void)
{
    bas_log_init ("test", BAS_LOG_WARN, BAS_LOG_FORMAT_TEXT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_choose_pv),           cmocka_unit_test (test_loose_and_pinned),
        cmocka_unit_test (test_gang_all_or_nothing), cmocka_unit_test (test_provision),
        cmocka_unit_test (test_shared_and_limits),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
