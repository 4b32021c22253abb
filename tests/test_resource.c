/*  test_resource: resource vector arithmetic that never aborts.

    DESIGN problem 4: Volcano asserted when a subtraction went negative and
    killed the scheduler. Here a negative result is a result (with
    BAS_RES_NEGATIVE), overflow saturates, and outside data gets a message.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bas_resource.h"

//  A vector from a JSON ResourceList text; fails the test on error.
static bas_res_t
s_res (const char *json)
{
    cJSON *list = cJSON_Parse (json);
    assert_non_null (list);
    bas_res_t r;
    char err[256] = "";
    int rc = bas_res_from_json (&r, list, "test", err, sizeof err);
    if (rc != 0)
        print_error ("%s: %s\n", json, err);
    assert_int_equal (rc, 0);
    cJSON_Delete (list);
    return r;
}

static void
test_add_sub (void **state)
{
    (void)state;
    bas_res_t r = s_res ("{\"cpu\":\"1500m\",\"memory\":\"2Gi\",\"pods\":\"10\"}");
    bas_res_t a = s_res ("{\"cpu\":\"500m\",\"memory\":\"1Gi\",\"pods\":\"1\"}");
    assert_int_equal (bas_res_add (&r, &a), BAS_RES_OK);
    assert_int_equal (r.milli_cpu, 2000);
    assert_true (r.memory == 3LL << 30);
    assert_int_equal (r.pods, 11);
    assert_int_equal (bas_res_sub (&r, &a), BAS_RES_OK);
    assert_int_equal (bas_res_sub (&r, &a), BAS_RES_OK);
    assert_int_equal (r.milli_cpu, 1000);
    assert_true (r.memory == 1LL << 30);
    assert_int_equal (r.pods, 9);
    //  r += r doubles.
    assert_int_equal (bas_res_add (&r, &r), BAS_RES_OK);
    assert_int_equal (r.milli_cpu, 2000);
    assert_int_equal (r.pods, 18);
}

//  DESIGN problem 4: idle going negative is reported, not fatal.
static void
test_negative (void **state)
{
    (void)state;
    bas_res_t idle = s_res ("{\"cpu\":\"1\",\"memory\":\"1Gi\",\"nvidia.com/gpu\":\"1\"}");
    bas_res_t pod = s_res ("{\"cpu\":\"2\",\"memory\":\"512Mi\",\"nvidia.com/gpu\":\"2\"}");
    assert_int_equal (bas_res_sub (&idle, &pod), BAS_RES_NEGATIVE);
    assert_int_equal (idle.milli_cpu, -1000);
    assert_int_equal (idle.memory, 512 << 20);
    assert_int_equal (bas_res_scalar_get (&idle, "nvidia.com/gpu"), -1);
    const char *which = NULL;
    assert_true (bas_res_is_negative (&idle, &which));
    assert_string_equal (which, "cpu");
    //  A negative node fits nothing, not even an empty request.
    bas_res_t empty;
    bas_res_zero (&empty);
    assert_false (bas_res_fits (&empty, &idle));
    //  Adding back makes it whole again.
    assert_int_equal (bas_res_add (&idle, &pod), BAS_RES_OK);
    assert_false (bas_res_is_negative (&idle, &which));
    assert_null (which);
    assert_int_equal (idle.milli_cpu, 1000);
    assert_int_equal (bas_res_scalar_get (&idle, "nvidia.com/gpu"), 1);
    //  A scalar only in the subtrahend becomes a negative scalar.
    bas_res_t r = s_res ("{\"cpu\":\"1\"}");
    bas_res_t gpu = s_res ("{\"example.com/fpga\":\"3\"}");
    assert_int_equal (bas_res_sub (&r, &gpu), BAS_RES_NEGATIVE);
    assert_int_equal (bas_res_scalar_get (&r, "example.com/fpga"), -3);
    assert_true (bas_res_is_negative (&r, &which));
    assert_string_equal (which, "example.com/fpga");
}

static void
test_overflow (void **state)
{
    (void)state;
    bas_res_t r, a;
    bas_res_zero (&r);
    bas_res_zero (&a);
    r.milli_cpu = INT64_MAX - 1;
    a.milli_cpu = 10;
    r.memory = 5;
    a.memory = 7;
    assert_int_equal (bas_res_add (&r, &a), BAS_RES_EOVERFLOW);
    assert_true (r.milli_cpu == INT64_MAX);
    assert_int_equal (r.memory, 12); // other dimensions still added
    //  Subtraction saturates at INT64_MIN and still reports the overflow,
    //  even though the result is also negative.
    bas_res_zero (&r);
    r.memory = INT64_MIN + 5;
    bas_res_zero (&a);
    a.memory = 100;
    assert_int_equal (bas_res_sub (&r, &a), BAS_RES_EOVERFLOW);
    assert_true (r.memory == INT64_MIN);
    //  r - INT64_MIN overflows upwards.
    bas_res_zero (&r);
    r.pods = 1;
    bas_res_zero (&a);
    a.pods = INT64_MIN;
    assert_int_equal (bas_res_sub (&r, &a), BAS_RES_EOVERFLOW);
    assert_true (r.pods == INT64_MAX);
    //  Scalars saturate too.
    bas_res_zero (&r);
    bas_res_zero (&a);
    assert_int_equal (bas_res_scalar_set (&r, "x.io/y", INT64_MAX), BAS_RES_OK);
    assert_int_equal (bas_res_scalar_set (&a, "x.io/y", 1), BAS_RES_OK);
    assert_int_equal (bas_res_add (&r, &a), BAS_RES_EOVERFLOW);
    assert_true (bas_res_scalar_get (&r, "x.io/y") == INT64_MAX);
}

static void
test_scalars (void **state)
{
    (void)state;
    bas_res_t r;
    bas_res_zero (&r);
    //  Inserted out of order, kept sorted by name.
    assert_int_equal (bas_res_scalar_set (&r, "nvidia.com/gpu", 2), BAS_RES_OK);
    assert_int_equal (bas_res_scalar_set (&r, "amd.com/gpu", 1), BAS_RES_OK);
    assert_int_equal (bas_res_scalar_set (&r, "hugepages-2Mi", 4194304), BAS_RES_OK);
    assert_int_equal (r.nscalars, 3);
    assert_string_equal (r.scalars[0].name, "amd.com/gpu");
    assert_string_equal (r.scalars[1].name, "hugepages-2Mi");
    assert_string_equal (r.scalars[2].name, "nvidia.com/gpu");
    //  Overwrite in place.
    assert_int_equal (bas_res_scalar_set (&r, "hugepages-2Mi", 8), BAS_RES_OK);
    assert_int_equal (r.nscalars, 3);
    assert_int_equal (bas_res_scalar_get (&r, "hugepages-2Mi"), 8);
    assert_int_equal (bas_res_scalar_get (&r, "absent.io/x"), 0);
    //  Up to BAS_RES_MAX_SCALARS fit; one more does not and leaves r unchanged.
    for (int i = r.nscalars; i < BAS_RES_MAX_SCALARS; i++) {
        char name[32];
        snprintf (name, sizeof name, "zz.io/last-%d", i);
        assert_int_equal (bas_res_scalar_set (&r, name, 1), BAS_RES_OK);
    }
    bas_res_t before = r;
    assert_int_equal (bas_res_scalar_set (&r, "b.io/fifth", 1), BAS_RES_ETOOMANY);
    assert_true (bas_res_equal (&r, &before));
    assert_int_equal (r.nscalars, BAS_RES_MAX_SCALARS);
    //  Zero removes, and frees a slot.
    assert_int_equal (bas_res_scalar_set (&r, "amd.com/gpu", 0), BAS_RES_OK);
    assert_int_equal (r.nscalars, BAS_RES_MAX_SCALARS - 1);
    assert_string_equal (r.scalars[0].name, "hugepages-2Mi");
    assert_int_equal (bas_res_scalar_set (&r, "b.io/fifth", 1), BAS_RES_OK);
    assert_string_equal (r.scalars[0].name, "b.io/fifth");
    //  Names: empty or too long.
    assert_int_equal (bas_res_scalar_set (&r, "", 1), BAS_RES_ENAME);
    char longname[BAS_RES_NAME_MAX + 1];
    memset (longname, 'a', BAS_RES_NAME_MAX);
    longname[BAS_RES_NAME_MAX] = '\0';
    assert_int_equal (bas_res_scalar_set (&r, longname, 1), BAS_RES_ENAME);
    longname[BAS_RES_NAME_MAX - 1] = '\0'; // 63 characters: fits
    assert_int_equal (bas_res_scalar_set (&r, "b.io/fifth", 0), BAS_RES_OK);
    assert_int_equal (bas_res_scalar_set (&r, longname, 1), BAS_RES_OK);

    //  Adding a vector with a fifth distinct scalar: ETOOMANY, the rest added.
    bas_res_t full, extra;
    bas_res_zero (&full);
    bas_res_zero (&extra);
    for (int i = 1; i <= BAS_RES_MAX_SCALARS; i++) {
        char name[16];
        snprintf (name, sizeof name, "a.io/%d", i);
        bas_res_scalar_set (&full, name, 1);
    }
    bas_res_scalar_set (&extra, "a.io/1", 5);
    bas_res_scalar_set (&extra, "a.io/9", 5);
    extra.milli_cpu = 100;
    assert_int_equal (bas_res_add (&full, &extra), BAS_RES_ETOOMANY);
    assert_int_equal (bas_res_scalar_get (&full, "a.io/1"), 6);
    assert_int_equal (bas_res_scalar_get (&full, "a.io/9"), 0);
    assert_int_equal (full.milli_cpu, 100);
    //  Subtracting to zero removes the scalar.
    bas_res_t one;
    bas_res_zero (&one);
    bas_res_scalar_set (&one, "a.io/2", 1);
    assert_int_equal (bas_res_sub (&full, &one), BAS_RES_OK);
    assert_int_equal (full.nscalars, BAS_RES_MAX_SCALARS - 1);
    assert_int_equal (bas_res_scalar_set (&full, "a.io/9", 5), BAS_RES_OK);
}

static void
test_fits (void **state)
{
    (void)state;
    bas_res_t node = s_res ("{\"cpu\":\"2\",\"memory\":\"4Gi\",\"pods\":\"2\","
                            "\"nvidia.com/gpu\":\"1\"}");
    bas_res_t req = s_res ("{\"cpu\":\"1\",\"memory\":\"1Gi\",\"pods\":\"1\"}");
    assert_true (bas_res_fits (&req, &node));
    const char *names[8];
    assert_int_equal (bas_res_insufficient (&req, &node, names, 8), 0);

    req = s_res ("{\"cpu\":\"3\",\"memory\":\"8Gi\",\"pods\":\"3\",\"nvidia.com/gpu\":\"2\","
                 "\"example.com/foo\":\"1\"}");
    assert_false (bas_res_fits (&req, &node));
    int n = bas_res_insufficient (&req, &node, names, 8);
    assert_int_equal (n, 5);
    assert_string_equal (names[0], "cpu");
    assert_string_equal (names[1], "memory");
    assert_string_equal (names[2], "pods");
    assert_string_equal (names[3], "example.com/foo");
    assert_string_equal (names[4], "nvidia.com/gpu");
    //  At most max names.
    assert_int_equal (bas_res_insufficient (&req, &node, names, 2), 2);
    assert_int_equal (bas_res_insufficient (&req, &node, NULL, 0), 0);
    //  Pods are compared only when requested.
    bas_res_t full = node;
    full.pods = 0;
    req = s_res ("{\"cpu\":\"1\"}");
    assert_true (bas_res_fits (&req, &full));
    req.pods = 1;
    assert_false (bas_res_fits (&req, &full));
    assert_int_equal (bas_res_insufficient (&req, &full, names, 8), 1);
    assert_string_equal (names[0], "pods");
    //  Equal is enough.
    assert_true (bas_res_fits (&node, &node));
}

static void
test_empty_equal_format (void **state)
{
    (void)state;
    bas_res_t r;
    bas_res_zero (&r);
    assert_true (bas_res_is_empty (&r));
    r.pods = 1; // a best-effort pod still takes a slot, but is empty
    assert_true (bas_res_is_empty (&r));
    bas_res_scalar_set (&r, "nvidia.com/gpu", 1);
    assert_false (bas_res_is_empty (&r));
    bas_res_scalar_set (&r, "nvidia.com/gpu", 0);
    r.memory = 1;
    assert_false (bas_res_is_empty (&r));

    bas_res_t a = s_res ("{\"cpu\":\"1\",\"nvidia.com/gpu\":\"1\"}");
    bas_res_t b = s_res ("{\"cpu\":\"1000m\",\"nvidia.com/gpu\":\"1\"}");
    assert_true (bas_res_equal (&a, &b));
    b.pods = 1;
    assert_false (bas_res_equal (&a, &b));
    b.pods = 0;
    bas_res_scalar_set (&b, "nvidia.com/gpu", 2);
    assert_false (bas_res_equal (&a, &b));
    //  A stored zero equals an absence (struct built by hand).
    bas_res_t z1, z2;
    bas_res_zero (&z1);
    bas_res_zero (&z2);
    z1.nscalars = 1;
    strcpy (z1.scalars[0].name, "x.io/y");
    assert_true (bas_res_equal (&z1, &z2));
    assert_true (bas_res_equal (&z2, &z1));

    char buf[256];
    bas_res_t f = s_res ("{\"cpu\":\"1500m\",\"memory\":\"2Gi\",\"pods\":\"3\","
                         "\"nvidia.com/gpu\":\"1\",\"hugepages-2Mi\":\"4Mi\"}");
    int n = bas_res_format (&f, buf, sizeof buf);
    assert_string_equal (buf, "cpu=1500m memory=2Gi pods=3 hugepages-2Mi=4Mi nvidia.com/gpu=1");
    assert_int_equal (n, (int)strlen (buf));
    char small[10];
    assert_int_equal (bas_res_format (&f, small, sizeof small), n);
    assert_string_equal (small, "cpu=1500m");
}

static void
test_from_json (void **state)
{
    (void)state;
    bas_res_t r = s_res ("{\"cpu\":\"7500m\",\"ephemeral-storage\":\"37087380622\","
                         "\"hugepages-1Gi\":\"0\",\"hugepages-2Mi\":\"0\","
                         "\"memory\":\"15258956Ki\",\"pods\":\"250\",\"storage\":\"1Ti\","
                         "\"nvidia.com/gpu\":\"1\"}");
    assert_int_equal (r.milli_cpu, 7500);
    assert_true (r.memory == 15258956LL * 1024);
    assert_int_equal (r.pods, 250);
    assert_int_equal (r.nscalars, 2); // zero hugepages and "storage" not stored
    assert_true (bas_res_scalar_get (&r, "ephemeral-storage") == 37087380622LL);
    assert_int_equal (bas_res_scalar_get (&r, "nvidia.com/gpu"), 1);
    assert_int_equal (bas_res_scalar_get (&r, "storage"), 0);
    //  Fractions round up; numbers are accepted like Quantity does.
    r = s_res ("{\"cpu\":0.1,\"memory\":1.5,\"nvidia.com/gpu\":\"0.5\",\"pods\":3}");
    assert_int_equal (r.milli_cpu, 100);
    assert_int_equal (r.memory, 2);
    assert_int_equal (r.pods, 3);
    assert_int_equal (bas_res_scalar_get (&r, "nvidia.com/gpu"), 1);
    //  NULL and null are empty.
    bas_res_t e;
    assert_int_equal (bas_res_from_json (&e, NULL, "x", NULL, 0), 0);
    assert_true (bas_res_is_empty (&e));
}

static void
test_from_json_errors (void **state)
{
    (void)state;
    static const struct {
        const char *json;    // the ResourceList
        const char *message; // the whole expected message
    } cases[] = {
        {"{\"cpu\":\"12Qi\"}", "pod default/p1 container main requests: cpu \"12Qi\": unknown "
                               "suffix \"Qi\""},
        {"{\"memory\":\"1 Gi\"}",
         "pod default/p1 container main requests: memory \"1 Gi\": unexpected ' ' (a space) "
         "at offset 1"},
        {"{\"nvidia.com/gpu\":\"-1\"}",
         "pod default/p1 container main requests: nvidia.com/gpu \"-1\": must not be negative"},
        {"{\"cpu\":true}",
         "pod default/p1 container main requests: cpu: expected a quantity string, got a "
         "boolean"},
        {"{\"memory\":\"9Ei\"}", "pod default/p1 container main requests: memory \"9Ei\": out "
                                 "of range: above 9223372036854775807 units"},
        {"[1]", "pod default/p1 container main requests: expected an object of quantities"},
        {"{\"a.io/1\":\"1\",\"a.io/2\":\"1\",\"a.io/3\":\"1\",\"a.io/4\":\"1\",\"a.io/5\":\"1\","
         "\"a.io/6\":\"1\",\"a.io/7\":\"1\",\"a.io/8\":\"1\",\"a.io/9\":\"1\"}",
         "pod default/p1 container main requests: a.io/9: too many scalar resources (at most 8 "
         "non-zero ones)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cJSON *list = cJSON_Parse (cases[i].json);
        assert_non_null (list);
        bas_res_t r;
        char err[512] = "";
        assert_int_equal (
            bas_res_from_json (&r, list, "pod default/p1 container main requests", err, sizeof err),
            -1);
        if (strncmp (err, cases[i].message, strlen (cases[i].message)) != 0)
            print_error ("%s:\n got  %s\n want %s\n", cases[i].json, err, cases[i].message);
        assert_int_equal (strncmp (err, cases[i].message, strlen (cases[i].message)), 0);
        cJSON_Delete (list);
    }
}

static void
test_proto_round_trip (void **state)
{
    (void)state;
    bas_res_t r = s_res ("{\"cpu\":\"3\",\"memory\":\"2048Mi\",\"pods\":\"7\","
                         "\"nvidia.com/gpu\":\"4\",\"hugepages-2Mi\":\"2Mi\"}");
    r.milli_cpu = -5; // negatives travel too
    Basalt__V1__Resources *p = bas_res_to_proto (&r);
    assert_non_null (p);
    assert_true (p->has_milli_cpu && p->has_memory && p->has_pods);
    assert_int_equal (p->n_scalars, 2);
    assert_string_equal (p->scalars[0]->name, "hugepages-2Mi");
    //  Through the wire and back.
    size_t len = basalt__v1__resources__get_packed_size (p);
    uint8_t *buf = malloc (len);
    assert_non_null (buf);
    basalt__v1__resources__pack (p, buf);
    protobuf_c_message_free_unpacked (&p->base, NULL);
    Basalt__V1__Resources *q = basalt__v1__resources__unpack (NULL, len, buf);
    free (buf);
    assert_non_null (q);
    bas_res_t back;
    char err[256];
    assert_int_equal (bas_res_from_proto (&back, q, err, sizeof err), 0);
    assert_true (bas_res_equal (&r, &back));
    assert_int_equal (back.milli_cpu, -5);
    assert_int_equal (bas_res_scalar_get (&back, "nvidia.com/gpu"), 4);
    protobuf_c_message_free_unpacked (&q->base, NULL);

    //  NULL is all zero.
    assert_int_equal (bas_res_from_proto (&back, NULL, err, sizeof err), 0);
    assert_true (bas_res_is_empty (&back));

    //  Bad wire data: a scalar without a name, a duplicate, too many.
    Basalt__V1__Resources bad = BASALT__V1__RESOURCES__INIT;
    Basalt__V1__Scalar s[BAS_RES_MAX_SCALARS + 1];
    Basalt__V1__Scalar *sp[BAS_RES_MAX_SCALARS + 1];
    for (int i = 0; i < BAS_RES_MAX_SCALARS + 1; i++) {
        basalt__v1__scalar__init (&s[i]);
        s[i].has_value = 1;
        s[i].value = 1;
        sp[i] = &s[i];
    }
    bad.scalars = sp;
    bad.n_scalars = 1;
    assert_int_equal (bas_res_from_proto (&back, &bad, err, sizeof err), -1);
    assert_non_null (strstr (err, "no name"));
    char names[BAS_RES_MAX_SCALARS + 1][16];
    for (int i = 0; i < BAS_RES_MAX_SCALARS + 1; i++) {
        snprintf (names[i], sizeof names[i], "a.io/%d", i + 1);
        s[i].name = names[i];
    }
    bad.n_scalars = BAS_RES_MAX_SCALARS + 1;
    assert_int_equal (bas_res_from_proto (&back, &bad, err, sizeof err), -1);
    assert_non_null (strstr (err, "too many"));
    char last[16];
    snprintf (last, sizeof last, "a.io/%d", BAS_RES_MAX_SCALARS + 1);
    assert_non_null (strstr (err, last));
    s[1].name = names[0];
    bad.n_scalars = 2;
    assert_int_equal (bas_res_from_proto (&back, &bad, err, sizeof err), -1);
    assert_non_null (strstr (err, "twice"));
}

//  Resource names as Volcano's NewResource reads them (Kubernetes'
//  IsScalarResourceName, IsExtendedResourceName and the quota forms).
static void
test_name_kind (void **state)
{
    (void)state;
    static const struct {
        const char *name;
        bas_res_name_kind_t kind;
    } cases[] = {
        {"cpu", BAS_RES_NAME_NATIVE},
        {"memory", BAS_RES_NAME_NATIVE},
        {"pods", BAS_RES_NAME_NATIVE},
        {"ephemeral-storage", BAS_RES_NAME_NATIVE},
        {"nvidia.com/gpu", BAS_RES_NAME_SCALAR},
        {"hugepages-2Mi", BAS_RES_NAME_SCALAR},
        {"attachable-volumes-aws-ebs", BAS_RES_NAME_SCALAR},
        {"kubernetes.io/batch-cpu", BAS_RES_NAME_SCALAR},
        //  limits.<extended> is itself an extended name to Kubernetes.
        {"limits.nvidia.com/gpu", BAS_RES_NAME_SCALAR},
        {"count/pods", BAS_RES_NAME_QUOTA},
        {"count/jobs.batch", BAS_RES_NAME_QUOTA},
        {"requests.cpu", BAS_RES_NAME_QUOTA},
        {"requests.memory", BAS_RES_NAME_QUOTA},
        {"limits.cpu", BAS_RES_NAME_QUOTA},
        {"limits.memory", BAS_RES_NAME_QUOTA},
        {"requests.nvidia.com/gpu", BAS_RES_NAME_QUOTA},
        {"requests.hugepages-2Mi", BAS_RES_NAME_QUOTA},
        {"storage", BAS_RES_NAME_UNKNOWN},
        {"gpu", BAS_RES_NAME_UNKNOWN},
        {"", BAS_RES_NAME_UNKNOWN},
        //  Not a qualified name: upper case in the prefix, two slashes,
        //  an empty name part.
        {"Example.com/gpu", BAS_RES_NAME_UNKNOWN},
        {"a/b/c", BAS_RES_NAME_UNKNOWN},
        {"example.com/", BAS_RES_NAME_UNKNOWN},
        {"example.com/-x", BAS_RES_NAME_UNKNOWN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (bas_res_name_kind (cases[i].name) != cases[i].kind)
            print_error ("%s: got %d want %d\n", cases[i].name, bas_res_name_kind (cases[i].name),
                         cases[i].kind);
        assert_int_equal (bas_res_name_kind (cases[i].name), cases[i].kind);
    }
    assert_int_equal (bas_res_name_kind (NULL), BAS_RES_NAME_UNKNOWN);
    //  A ResourceList keeps what the scheduler schedules on, nothing else.
    cJSON *list = cJSON_Parse ("{\"pods\":\"3\",\"count/pods\":\"3\",\"cpu\":\"3\","
                               "\"requests.cpu\":\"3\",\"limits.cpu\":\"9\",\"storage\":\"1Gi\","
                               "\"nvidia.com/gpu\":\"1\",\"requests.nvidia.com/gpu\":\"1\"}");
    bas_res_t r;
    char err[256];
    assert_int_equal (bas_res_from_json (&r, list, "x", err, sizeof err), 0);
    assert_int_equal (r.milli_cpu, 3000);
    assert_int_equal (r.pods, 3);
    assert_int_equal (r.nscalars, 1);
    assert_string_equal (r.scalars[0].name, "nvidia.com/gpu");
    cJSON_Delete (list);
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_add_sub),
        cmocka_unit_test (test_name_kind),
        cmocka_unit_test (test_negative),
        cmocka_unit_test (test_overflow),
        cmocka_unit_test (test_scalars),
        cmocka_unit_test (test_fits),
        cmocka_unit_test (test_empty_equal_format),
        cmocka_unit_test (test_from_json),
        cmocka_unit_test (test_from_json_errors),
        cmocka_unit_test (test_proto_round_trip),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
