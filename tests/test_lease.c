/*  test_lease: bas_lease, leader election on a coordination.k8s.io/v1
    Lease, against the API simulator, in process on one zloop.

    - A candidate creates the missing Lease and leads.
    - Its renewal meets 409 because the Lease changed under it while still
      naming it (what a renewal applied with its answer lost looks like):
      it reads, finds itself, renews, and keeps leading.
    - The Lease written with another holder: leadership ends at once (at
      the next renewal), told once, with the reason.
    - A second candidate waits while the Lease is held and renewed, and
      takes it when it is no longer renewed, after the lease duration on
      its own clock.
    - Durations that cannot work together are refused with a message.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bas_lease.h"
#include "bas_msg.h"
#include "util_basalt.h"
#include "util_proc.h"

#define S_PATH "/apis/coordination.k8s.io/v1/namespaces/default/leases/test-lease"
#define S_WAIT_MS 20000

typedef struct {
    int leading; // times told leading
    int lost;    // times told not leading
    char reason[128];
} s_told_t;

static void
s_on_lease (void *arg, bool leading, const char *reason)
{
    s_told_t *t = arg;
    if (leading)
        t->leading++;
    else {
        t->lost++;
        snprintf (t->reason, sizeof t->reason, "%s", reason);
    }
}

static bool
s_run_until (zloop_t *loop, util_pred_fn *cond, void *arg, int timeout_ms)
{
    return util_loop_until (loop, cond, arg, timeout_ms);
}

static bool
s_is_leading (void *arg)
{
    return ((s_told_t *)arg)->leading == 1;
}

static bool
s_is_lost (void *arg)
{
    return ((s_told_t *)arg)->lost == 1;
}

//  The Lease as the API has it.
static cJSON *
s_get (util_basalt_t *env)
{
    return util_basalt_get (env, S_PATH);
}

static const char *
s_spec_str (const cJSON *lease, const char *field)
{
    return cJSON_GetStringValue (
        cJSON_GetObjectItemCaseSensitive (cJSON_GetObjectItemCaseSensitive (lease, "spec"), field));
}

//  PUT the Lease back with `holder` (NULL: unchanged) and a label, so that
//  its resourceVersion moves on.
static void
s_rewrite (util_basalt_t *env, const char *holder)
{
    cJSON *lease = s_get (env);
    assert_non_null (lease);
    cJSON *meta = cJSON_GetObjectItemCaseSensitive (lease, "metadata");
    cJSON *labels = cJSON_GetObjectItemCaseSensitive (meta, "labels");
    if (!labels)
        labels = cJSON_AddObjectToObject (meta, "labels");
    cJSON_DeleteItemFromObjectCaseSensitive (labels, "touched");
    cJSON_AddStringToObject (labels, "touched", holder ? holder : "same");
    if (holder) {
        cJSON *spec = cJSON_GetObjectItemCaseSensitive (lease, "spec");
        cJSON_DeleteItemFromObjectCaseSensitive (spec, "holderIdentity");
        cJSON_AddStringToObject (spec, "holderIdentity", holder);
    }
    char *body = cJSON_PrintUnformatted (lease);
    assert_int_equal (util_http_request (env->port, "PUT", S_PATH, "application/json", body, NULL),
                      200);
    free (body);
    cJSON_Delete (lease);
}

typedef struct {
    util_basalt_t *env;
    char renew[64]; // renewTime when the wait started
} s_renew_arg_t;

//  Renewed since: the renewTime moved on, by "me".
static bool
s_renewed (void *arg)
{
    s_renew_arg_t *a = arg;
    cJSON *lease = s_get (a->env);
    const char *renew = s_spec_str (lease, "renewTime");
    const char *holder = s_spec_str (lease, "holderIdentity");
    bool yes = renew && holder && strcmp (holder, "me") == 0 && strcmp (renew, a->renew) != 0;
    cJSON_Delete (lease);
    return yes;
}

static bool
s_past (void *arg)
{
    return bas_mono_ms () >= *(int64_t *)arg;
}

static bas_lease_config_t
s_config (const char *identity)
{
    return (bas_lease_config_t){"default", "test-lease", identity, 3000, 2000, 200};
}

static void
test_lease (void **state)
{
    (void)state;
    util_basalt_t *env = util_basalt_new ("lease");
    assert_true (util_basalt_start_apisim (env, NULL, NULL));
    zloop_t *loop = zloop_new ();
    bas_kube_config_t kcfg = {0};
    kcfg.server = env->master;
    bas_kube_t *kube = bas_kube_new (loop, &kcfg);
    assert_non_null (kube);

    //  Created and led.
    s_told_t me = {0};
    bas_lease_config_t cfg = s_config ("me");
    bas_lease_t *lease = bas_lease_new (loop, kube, &cfg, s_on_lease, &me);
    assert_true (s_run_until (loop, s_is_leading, &me, S_WAIT_MS));
    assert_true (bas_lease_leading (lease));
    cJSON *obj = s_get (env);
    assert_string_equal (s_spec_str (obj, "holderIdentity"), "me");
    cJSON_Delete (obj);

    //  Changed under it, still naming it: 409, read, renewed, still leading.
    s_renew_arg_t since = {env, ""};
    s_rewrite (env, NULL);
    obj = s_get (env);
    snprintf (since.renew, sizeof since.renew, "%s", s_spec_str (obj, "renewTime"));
    cJSON_Delete (obj);
    assert_true (s_run_until (loop, s_renewed, &since, S_WAIT_MS));
    assert_int_equal (me.lost, 0);
    assert_true (bas_lease_leading (lease));

    //  A second candidate waits while it is renewed.
    s_told_t other = {0};
    bas_lease_config_t cfg2 = s_config ("other");
    bas_lease_t *lease2 = bas_lease_new (loop, kube, &cfg2, s_on_lease, &other);
    int64_t until = bas_mono_ms () + 3500; // longer than the lease duration
    assert_true (s_run_until (loop, s_past, &until, S_WAIT_MS));
    assert_int_equal (other.leading, 0);
    assert_true (bas_lease_leading (lease));

    //  Written with another holder: leadership ends, once, with the reason;
    //  and "intruder" stops renewing, so "other" takes it after the lease
    //  duration.
    s_rewrite (env, "intruder");
    assert_true (s_run_until (loop, s_is_lost, &me, S_WAIT_MS));
    assert_false (bas_lease_leading (lease));
    assert_non_null (strstr (me.reason, "another holder"));
    int64_t written = bas_mono_ms ();
    assert_true (s_run_until (loop, s_is_leading, &other, S_WAIT_MS));
    int64_t waited = bas_mono_ms () - written;
    printf ("the second candidate took the lease %lld ms after the last write (duration 3000 "
            "ms)\n",
            (long long)waited);
    assert_true (waited >= 3000 - 300); // its own clock: at least the duration (one poll early)
    obj = s_get (env);
    assert_string_equal (s_spec_str (obj, "holderIdentity"), "other");
    cJSON_Delete (obj);
    assert_int_equal (me.lost, 1);
    assert_int_equal (me.leading, 1);

    bas_kube_destroy (&kube);
    bas_lease_destroy (&lease);
    bas_lease_destroy (&lease2);
    zloop_destroy (&loop);
    assert_true (util_basalt_destroy (&env));
}

static void
test_bad_durations (void **state)
{
    (void)state;
    char err[256];
    bas_lease_config_t ok = s_config ("x");
    assert_int_equal (bas_lease_config_check (&ok, err, sizeof err), 0);
    bas_lease_config_t c = ok;
    c.renew_deadline_ms = c.lease_duration_ms;
    assert_int_equal (bas_lease_config_check (&c, err, sizeof err), -1);
    assert_non_null (strstr (err, "greater than the renew deadline"));
    c = ok;
    c.retry_period_ms = c.renew_deadline_ms;
    assert_int_equal (bas_lease_config_check (&c, err, sizeof err), -1);
    assert_non_null (strstr (err, "1.2 x the retry period"));
    c = ok;
    c.name = "";
    assert_int_equal (bas_lease_config_check (&c, err, sizeof err), -1);
    c = ok;
    c.retry_period_ms = 0;
    assert_int_equal (bas_lease_config_check (&c, err, sizeof err), -1);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_lease),
        cmocka_unit_test (test_bad_durations),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
