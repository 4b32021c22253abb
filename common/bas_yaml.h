/*  bas_yaml: YAML text to cJSON trees, with libyaml's event parser.

    Used for everything Basalt reads that a person writes: Kubernetes
    manifests (the API simulator's --load), the scheduler configuration and
    scenario files. The result is the JSON a Kubernetes client would send for
    the same document, so YAML and JSON inputs go through one code path.

    Scalar resolution follows the YAML 1.2 core schema, which is what
    Kubernetes manifests assume in practice:
      - only PLAIN (unquoted) scalars are resolved; quoted, literal (|) and
        folded (>) scalars always stay strings, so "4" and '4' are strings;
      - `null`, `Null`, `NULL`, `~` and the empty scalar are JSON null;
      - `true`/`True`/`TRUE`/`false`/`False`/`FALSE` are booleans (YAML 1.1's
        yes/no/on/off are NOT booleans: they stay strings);
      - decimal integers, 0x hex, 0o octal and decimal floats (1.5, 1e3, .5)
        become numbers; `.inf`/`.nan` stay strings since JSON has no such
        values;
      - explicit tags !!str, !!int, !!float, !!bool, !!null are honoured;
        other tags are an error.
    Anchors and aliases are supported (an alias is a deep copy of its
    anchor's node), as is the `<<` merge key. Keys must be scalars and may
    not repeat within one mapping.

    Bounds: what is written in the text costs memory in proportion to the
    text; only aliases multiply it. So each anchor's size (in nodes, its
    own aliases included) is counted once when the anchor is complete, and
    an alias is refused BEFORE it is copied when the copies of the
    document would pass BAS_YAML_ALIAS_NODES_FREE + BAS_YAML_ALIAS_NODES_PER_NODE
    times the nodes written so far. An alias bomb (9 levels of 10 aliases)
    fails after about 50,000 copied nodes (~6 MB, ~10 ms) instead of
    expanding to ~10^9 nodes; a 150,000-pod manifest that `<<`-merges a template
    into every pod stays far inside the budget. Kubernetes' own YAML reader
    (go-yaml) bounds aliases by a similar ratio.

    Errors are written to `err` as "line L column C: problem" (1-based).
    bas_yaml does not know the input's name: callers prefix it.
*/
#ifndef BAS_YAML_H
#define BAS_YAML_H

#include <stddef.h>

#include <cjson/cJSON.h>

//  Nesting deeper than this is refused (protects the stack of the caller's
//  recursive walkers as much as ours).
#define BAS_YAML_MAX_DEPTH 256
//  Upper bound of nodes in one document, counting alias copies.
#define BAS_YAML_MAX_NODES 20000000
//  Nodes that aliases may copy into one document whatever its size...
#define BAS_YAML_ALIAS_NODES_FREE 50000
//  ...plus this many per node written in it (before the alias).
#define BAS_YAML_ALIAS_NODES_PER_NODE 10

//  Convert the single YAML document in text[0..len) to a new cJSON tree
//  owned by the caller (free with cJSON_Delete). An empty stream (nothing
//  but comments or whitespace) gives a JSON null. Returns NULL on error with
//  the reason in err; a second document in the stream is an error.
cJSON *bas_yaml_to_json (const char *text, size_t len, char *err, size_t errlen);

//  Called once per non-empty document of a stream, in order. fn may take
//  the document (*doc_p, set it to NULL); whatever is left in *doc_p is
//  freed when fn returns. Taking it saves a deep copy per document, which
//  is most of a large load's cost after parsing. `index` is the 0-based
//  position of the document in the stream, counting empty documents too.
//  Return 0 to go on, -1 to stop the load (bas_yaml_load_documents then
//  returns -1; write your reason yourself).
typedef int (bas_yaml_doc_fn) (void *arg, cJSON **doc_p, int index);

//  Parse a multi-document stream ("---" separated) and call fn for every
//  document that is not empty (a document that is only `---` or comments
//  is skipped, as kubectl does). Returns 0, or -1 on a parse error (reason in
//  err as "document N: line L column C: problem", N 0-based), or -1 when fn
//  returned non-zero (err then holds "document N: rejected by caller"; fn
//  keeps its own, better reason for the caller to report).
int bas_yaml_load_documents (const char *text, size_t len, bas_yaml_doc_fn *fn, void *arg,
                             char *err, size_t errlen);

#endif
