/*  test_yaml: bas_yaml, YAML text to cJSON, as example usage.

    Covers scalar resolution (the core schema: quoted stays string), nested
    collections, multi-document streams, anchors/aliases and merge keys
    (an alias bomb refused before it is copied; aliases in a large document
    accepted), mappings with many keys,
    the real fixture manifests (YAML and its JSON conversion must agree),
    and malformed input (an error naming the line, never a crash).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bas_yaml.h"
#include "util_proc.h"

static cJSON *
s_parse (const char *text)
{
    char err[256] = "";
    cJSON *doc = bas_yaml_to_json (text, strlen (text), err, sizeof err);
    if (!doc)
        fail_msg ("parse failed: %s", err);
    return doc;
}

//  Parse and compare with the JSON text expected.
static void
s_expect (const char *yaml, const char *json)
{
    cJSON *doc = s_parse (yaml);
    cJSON *want = cJSON_Parse (json);
    assert_non_null (want);
    if (!cJSON_Compare (doc, want, true)) {
        char *got = cJSON_PrintUnformatted (doc);
        fail_msg ("yaml %s\n  got  %s\n  want %s", yaml, got, json);
    }
    cJSON_Delete (doc);
    cJSON_Delete (want);
}

static void
s_expect_error (const char *yaml, const char *needle)
{
    char err[256] = "";
    cJSON *doc = bas_yaml_to_json (yaml, strlen (yaml), err, sizeof err);
    if (doc) {
        char *got = cJSON_PrintUnformatted (doc);
        fail_msg ("expected an error for %s, got %s", yaml, got);
    }
    if (!strstr (err, needle))
        fail_msg ("error \"%s\" does not contain \"%s\"", err, needle);
}

static void
test_scalars (void **state)
{
    (void)state;
    s_expect ("a: 1\nb: -17\nc: 1.5\nd: 1e3\ne: .5\nf: +3",
              "{\"a\":1,\"b\":-17,\"c\":1.5,\"d\":1000,\"e\":0.5,\"f\":3}");
    s_expect ("a: 0x1F\nb: 0o17", "{\"a\":31,\"b\":15}");
    s_expect ("a: true\nb: False\nc: TRUE\nd: false",
              "{\"a\":true,\"b\":false,\"c\":true,\"d\":false}");
    s_expect ("a: null\nb: ~\nc:\nd: Null", "{\"a\":null,\"b\":null,\"c\":null,\"d\":null}");
    //  Quoted scalars never resolve: "4" is the string a Kubernetes quantity needs.
    s_expect ("a: \"4\"\nb: '4'\nc: \"true\"\nd: 'null'",
              "{\"a\":\"4\",\"b\":\"4\",\"c\":\"true\",\"d\":\"null\"}");
    //  YAML 1.1 words are plain strings in the core schema.
    s_expect ("a: yes\nb: no\nc: on\nd: off",
              "{\"a\":\"yes\",\"b\":\"no\",\"c\":\"on\",\"d\":\"off\"}");
    //  Things that look a bit like numbers but are not.
    s_expect ("a: 1Gi\nb: 500m\nc: 1.2.3\nd: 0x\ne: -x\nf: .inf\ng: 1e",
              "{\"a\":\"1Gi\",\"b\":\"500m\",\"c\":\"1.2.3\",\"d\":\"0x\",\"e\":\"-x\","
              "\"f\":\".inf\",\"g\":\"1e\"}");
    s_expect ("a: !!str 12\nb: !!int \"12\"\nc: !!float '2.5'\nd: !!bool \"true\"",
              "{\"a\":\"12\",\"b\":12,\"c\":2.5,\"d\":true}");
    s_expect ("text: |\n  line one\n  line two\nfolded: >\n  a\n  b\n",
              "{\"text\":\"line one\\nline two\\n\",\"folded\":\"a b\\n\"}");
    s_expect ("priority: 2000001000\nbig: 17179869184",
              "{\"priority\":2000001000,\"big\":17179869184}");
}

static void
test_collections (void **state)
{
    (void)state;
    s_expect ("spec:\n  containers:\n  - name: a\n    ports: [1, 2]\n  - name: b\n    env: {}\n",
              "{\"spec\":{\"containers\":[{\"name\":\"a\",\"ports\":[1,2]},{\"name\":\"b\","
              "\"env\":{}}]}}");
    s_expect ("[1, [2, 3], {a: b}]", "[1,[2,3],{\"a\":\"b\"}]");
    s_expect ("just a string", "\"just a string\"");
    s_expect ("- a\n- - b\n  - c\n", "[\"a\",[\"b\",\"c\"]]");
    //  Key order is kept.
    cJSON *doc = s_parse ("z: 1\na: 2\nm: 3\n");
    assert_string_equal (doc->child->string, "z");
    assert_string_equal (doc->child->next->string, "a");
    assert_string_equal (doc->child->next->next->string, "m");
    cJSON_Delete (doc);
}

static void
test_empty (void **state)
{
    (void)state;
    cJSON *doc = s_parse ("");
    assert_true (cJSON_IsNull (doc));
    cJSON_Delete (doc);
    doc = s_parse ("# only a comment\n\n");
    assert_true (cJSON_IsNull (doc));
    cJSON_Delete (doc);
    //  NULL text with length 0 is an empty stream too.
    char err[64];
    doc = bas_yaml_to_json (NULL, 0, err, sizeof err);
    assert_true (cJSON_IsNull (doc));
    cJSON_Delete (doc);
}

static void
test_anchors (void **state)
{
    (void)state;
    s_expect ("base: &b {cpu: 1, memory: 2Gi}\ncopy: *b\n",
              "{\"base\":{\"cpu\":1,\"memory\":\"2Gi\"},\"copy\":{\"cpu\":1,\"memory\":\"2Gi\"}}");
    s_expect ("defaults: &d {a: 1, b: 2}\nthing:\n  <<: *d\n  b: 3\n",
              "{\"defaults\":{\"a\":1,\"b\":2},\"thing\":{\"b\":3,\"a\":1}}");
    s_expect ("x: &n 5\ny: *n\n", "{\"x\":5,\"y\":5}");
    s_expect ("k: &k name\n*k : v\n", "{\"k\":\"name\",\"name\":\"v\"}");
    //  Anchors on merge sources and inside them outlive the merge (they
    //  used to point at freed memory): the source, a list of sources, and
    //  a value the mapping's own key overrides.
    s_expect ("x: {<<: &m {a: 1}, b: 2}\ny: *m\n", "{\"x\":{\"b\":2,\"a\":1},\"y\":{\"a\":1}}");
    s_expect ("x: {<<: &s [{a: 1}, {c: 3}]}\ny: *s\n",
              "{\"x\":{\"a\":1,\"c\":3},\"y\":[{\"a\":1},{\"c\":3}]}");
    s_expect ("x: {b: 2, <<: {b: &n [1]}}\ny: *n\n", "{\"x\":{\"b\":2},\"y\":[1]}");
    s_expect_error ("a: *nope\n", "unknown anchor \"nope\"");
    s_expect_error ("a: &x [1, *x]\n", "refers to a node that contains it");
    //  An alias bomb is refused at the first alias over the budget, before
    //  it is copied: line 5 is the fourth level (10^4 nodes per alias), so
    //  at most some 50,000 nodes were ever made (not 10^9).
    const char *bomb = "a: &a [x,x,x,x,x,x,x,x,x,x]\n"
                       "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
                       "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
                       "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
                       "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
                       "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
                       "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
                       "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
                       "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h,*h]\n";
    s_expect_error (bomb, "line 5 column ");
    s_expect_error (bomb, "alias *d would copy 11111 nodes");
    s_expect_error (bomb, "alias bomb?");
}

//  Aliases used many times in a large document are fine: the alias budget
//  grows with what is written (10 copied nodes per written node), so a
//  list whose every item merges a template loads even when the copies pass
//  the fixed part of the budget (BAS_YAML_ALIAS_NODES_FREE).
static void
test_aliases_in_large_document (void **state)
{
    (void)state;
    const int items = 4000;
    size_t cap = 4096 + (size_t)items * 64;
    char *text = malloc (cap);
    assert_non_null (text);
    size_t n = (size_t)snprintf (text, cap, "template: &t {");
    for (int k = 0; k < 20; k++)
        n += (size_t)snprintf (text + n, cap - n, "%sk%02d: v%d", k ? ", " : "", k, k);
    n += (size_t)snprintf (text + n, cap - n, "}\nitems:\n");
    for (int i = 0; i < items; i++)
        n += (size_t)snprintf (text + n, cap - n, "- {<<: *t, name: item-%05d, k00: own}\n", i);
    assert_true (n < cap);
    //  20 keys and 20 values per copy: 41 counted nodes, 164,000 in all.
    assert_true ((size_t)items * 41 > BAS_YAML_ALIAS_NODES_FREE);
    char err[256] = "";
    cJSON *doc = bas_yaml_to_json (text, n, err, sizeof err);
    if (!doc)
        fail_msg ("parse failed: %s", err);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive (doc, "items");
    assert_int_equal (cJSON_GetArraySize (list), items);
    const cJSON *last = cJSON_GetArrayItem (list, items - 1);
    assert_string_equal (cJSON_GetObjectItemCaseSensitive (last, "name")->valuestring,
                         "item-03999");
    //  The item's own k00 wins over the template's; the rest come from it.
    assert_string_equal (cJSON_GetObjectItemCaseSensitive (last, "k00")->valuestring, "own");
    assert_string_equal (cJSON_GetObjectItemCaseSensitive (last, "k19")->valuestring, "v19");
    assert_int_equal (cJSON_GetArraySize (last), 21);
    cJSON_Delete (doc);
    free (text);
}

//  A mapping with many keys (indexed past S_KEYSET_MIN): every key found,
//  a repeated one refused with its line, merges into it checked the same.
static void
test_wide_mapping (void **state)
{
    (void)state;
    const int keys = 20000;
    size_t cap = (size_t)keys * 32 + 256;
    char *text = malloc (cap);
    assert_non_null (text);
    size_t n = 0;
    for (int i = 0; i < keys; i++)
        n += (size_t)snprintf (text + n, cap - n, "key%06d: %d\n", i, i);
    char err[256] = "";
    cJSON *doc = bas_yaml_to_json (text, n, err, sizeof err);
    if (!doc)
        fail_msg ("parse failed: %s", err);
    assert_int_equal (cJSON_GetArraySize (doc), keys);
    assert_int_equal (cJSON_GetObjectItemCaseSensitive (doc, "key019999")->valueint, 19999);
    cJSON_Delete (doc);
    //  The same key again at the end: named by its line.
    size_t dup = n + (size_t)snprintf (text + n, cap - n, "key000007: again\n");
    doc = bas_yaml_to_json (text, dup, err, sizeof err);
    assert_null (doc);
    assert_non_null (strstr (err, "line 20001 column 1: duplicate key \"key000007\""));
    //  A merge into the wide mapping adds only the keys it lacks.
    size_t merged = n + (size_t)snprintf (text + n, cap - n, "<<: {key000003: other, extra: 1}\n");
    doc = bas_yaml_to_json (text, merged, err, sizeof err);
    if (!doc)
        fail_msg ("parse failed: %s", err);
    assert_int_equal (cJSON_GetArraySize (doc), keys + 1);
    assert_int_equal (cJSON_GetObjectItemCaseSensitive (doc, "key000003")->valueint, 3);
    assert_int_equal (cJSON_GetObjectItemCaseSensitive (doc, "extra")->valueint, 1);
    cJSON_Delete (doc);
    free (text);
}

static void
test_errors_name_the_line (void **state)
{
    (void)state;
    //  A mapping value where none is allowed, on line 3.
    s_expect_error ("a: 1\nb: 2\nc: d: e\n", "line 3");
    //  An unclosed flow sequence.
    s_expect_error ("a: [1, 2\nb: 3\n", "line ");
    //  Tabs are not indentation.
    s_expect_error ("a:\n\tb: 1\n", "line 2");
    //  A repeated key names the line of the second one.
    s_expect_error ("a: 1\nb: 2\na: 3\n", "line 3 column 1: duplicate key \"a\"");
    //  Complex keys are refused.
    s_expect_error ("? [a, b]\n: c\n", "mapping keys must be scalars");
    s_expect_error ("a: !!int abc\n", "invalid !!int value \"abc\"");
    s_expect_error ("a: !custom x\n", "unsupported tag");
    s_expect_error ("a: 1\n---\nb: 2\n", "expected a single document");
    //  A deep nesting is refused, not a stack overflow.
    char deep[2 * BAS_YAML_MAX_DEPTH + 8];
    size_t n = 0;
    for (int i = 0; i < BAS_YAML_MAX_DEPTH + 2; i++)
        deep[n++] = '[';
    deep[n] = 0;
    s_expect_error (deep, "nesting deeper than");
}

typedef struct {
    int calls;
    int indexes[8];
    char names[8][32];
    int stop_at;
} s_docs_t;

static int
s_collect (void *arg, cJSON **doc_p, int index)
{
    s_docs_t *d = arg;
    if (d->calls == d->stop_at)
        return -1;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive (*doc_p, "name");
    snprintf (d->names[d->calls], sizeof d->names[0], "%s",
              cJSON_IsString (name) ? name->valuestring : "?");
    d->indexes[d->calls++] = index;
    return 0;
}

//  Takes every document into the array arg.
static int
s_take (void *arg, cJSON **doc_p, int index)
{
    (void)index;
    cJSON_AddItemToArray ((cJSON *)arg, *doc_p);
    *doc_p = NULL;
    return 0;
}

static void
test_multi_document (void **state)
{
    (void)state;
    const char *text = "---\nname: one\n---\n# empty\n---\nname: two\n...\n---\nname: three\n---\n";
    s_docs_t d = {.stop_at = -1};
    char err[256] = "";
    assert_int_equal (bas_yaml_load_documents (text, strlen (text), s_collect, &d, err, sizeof err),
                      0);
    assert_int_equal (d.calls, 3);
    assert_string_equal (d.names[0], "one");
    assert_string_equal (d.names[1], "two");
    assert_string_equal (d.names[2], "three");
    //  Indexes count the empty documents too.
    assert_int_equal (d.indexes[0], 0);
    assert_int_equal (d.indexes[1], 2);
    assert_int_equal (d.indexes[2], 3);

    //  The callback can stop the load.
    s_docs_t stop = {.stop_at = 1};
    assert_int_equal (
        bas_yaml_load_documents (text, strlen (text), s_collect, &stop, err, sizeof err), -1);
    assert_int_equal (stop.calls, 1);
    assert_non_null (strstr (err, "document 2: rejected by caller"));

    //  The callback may take a document: it is then not freed for it.
    cJSON *taken = cJSON_CreateArray ();
    assert_int_equal (bas_yaml_load_documents (text, strlen (text), s_take, taken, err, sizeof err),
                      0);
    assert_int_equal (cJSON_GetArraySize (taken), 3);
    assert_string_equal (cJSON_GetObjectItem (cJSON_GetArrayItem (taken, 2), "name")->valuestring,
                         "three");
    cJSON_Delete (taken);

    //  A broken second document: the first was delivered, the error names
    //  document 1 and its line in the stream.
    const char *broken = "name: ok\n---\nname: [unclosed\n";
    s_docs_t b = {.stop_at = -1};
    assert_int_equal (
        bas_yaml_load_documents (broken, strlen (broken), s_collect, &b, err, sizeof err), -1);
    assert_int_equal (b.calls, 1);
    assert_non_null (strstr (err, "document 1: line "));
}

//  The YAML fixtures and their JSON conversions must agree.
static void
s_same_as_json (const char *yaml_file, const char *json_file)
{
    size_t ylen = 0;
    char *yaml = util_read_file (yaml_file, &ylen);
    char *json = util_read_file (json_file, NULL);
    assert_non_null (yaml);
    assert_non_null (json);
    char err[256] = "";
    cJSON *a = bas_yaml_to_json (yaml, ylen, err, sizeof err);
    if (!a)
        fail_msg ("%s: %s", yaml_file, err);
    cJSON *b = cJSON_Parse (json);
    assert_non_null (b);
    assert_true (cJSON_Compare (a, b, true));
    cJSON_Delete (a);
    cJSON_Delete (b);
    free (yaml);
    free (json);
}

static void
test_fixtures (void **state)
{
    (void)state;
    s_same_as_json (BASALT_SHARED_DIR "/k8s-fixtures/objects/podgroup.yaml",
                    BASALT_SHARED_DIR "/k8s-fixtures/objects/podgroup.json");
    s_same_as_json (BASALT_SHARED_DIR "/k8s-fixtures/objects/queue.yaml",
                    BASALT_SHARED_DIR "/k8s-fixtures/objects/queue.json");
    //  The CRDs parse, and a scheduler config holds its tiers.
    size_t len = 0;
    char *text = util_read_file (
        BASALT_SHARED_DIR "/k8s-fixtures/crds/scheduling.volcano.sh_queues.yaml", &len);
    assert_non_null (text);
    char err[256];
    cJSON *crd = bas_yaml_to_json (text, len, err, sizeof err);
    assert_non_null (crd);
    assert_string_equal (cJSON_GetObjectItem (crd, "kind")->valuestring,
                         "CustomResourceDefinition");
    cJSON_Delete (crd);
    free (text);
    text =
        util_read_file (BASALT_SHARED_DIR "/k8s-fixtures/crds/volcano-scheduler.conf.yaml", &len);
    assert_non_null (text);
    cJSON *conf = bas_yaml_to_json (text, len, err, sizeof err);
    assert_non_null (conf);
    assert_true (cJSON_IsArray (cJSON_GetObjectItem (conf, "tiers")));
    cJSON_Delete (conf);
    free (text);
}

//  Garbage never crashes: every prefix of a real file, and random bytes.
static void
test_garbage (void **state)
{
    (void)state;
    size_t len = 0;
    char *text = util_read_file (BASALT_SHARED_DIR "/k8s-fixtures/objects/podgroup.yaml", &len);
    assert_non_null (text);
    char err[256];
    for (size_t n = 0; n <= len; n++) {
        cJSON *doc = bas_yaml_to_json (text, n, err, sizeof err);
        cJSON_Delete (doc);
    }
    free (text);
    unsigned int seed = 12345;
    char buf[256];
    for (int round = 0; round < 2000; round++) {
        size_t n = (size_t)(rand_r (&seed) % (int)sizeof buf);
        for (size_t i = 0; i < n; i++) {
            static const char alphabet[] = "ab:- \n\t[]{},&*!|>'\"#?%@`0.~";
            buf[i] = alphabet[rand_r (&seed) % (int)(sizeof alphabet - 1)];
        }
        cJSON *doc = bas_yaml_to_json (buf, n, err, sizeof err);
        if (!doc)
            assert_non_null (strstr (err, "line "));
        cJSON_Delete (doc);
    }
}

int
main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_scalars),
        cmocka_unit_test (test_collections),
        cmocka_unit_test (test_empty),
        cmocka_unit_test (test_anchors),
        cmocka_unit_test (test_aliases_in_large_document),
        cmocka_unit_test (test_wide_mapping),
        cmocka_unit_test (test_errors_name_the_line),
        cmocka_unit_test (test_multi_document),
        cmocka_unit_test (test_fixtures),
        cmocka_unit_test (test_garbage),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
