/*  sim_table: the Table form of objects (meta.k8s.io/v1 Table), what
    `kubectl get` prints as columns.

    kubectl get without -o sends `Accept: application/json;as=Table;v=v1;
    g=meta.k8s.io,…,application/json` and prints the server's columns; a
    server that ignores the header gets only NAME and AGE printed. The
    real API server makes the Table from a printer per built-in kind
    (kubernetes pkg/printers/internalversion/printers.go), from a CRD's
    additionalPrinterColumns (apiextensions-apiserver tableconvertor), or,
    for a kind without either, from the generic store's default
    (apiserver pkg/registry/rest/table.go: Name and Created At).

    As the real server does, every column is sent, those of `-o wide`
    (priority 1) too; kubectl drops them unless asked. Age cells are
    strings already formatted the way kubectl's duration printer writes
    them ("45s", "3m12s", "5h2m", "2d"), computed from the wall clock when
    the Table is made; a CRD's `date` column is formatted the same way.
    Each row carries its object as the request's includeObject asks:
    Metadata (default: a PartialObjectMetadata with the object's
    metadata), Object (the whole object) or None.
*/
#ifndef SIM_TABLE_H
#define SIM_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "sim_buf.h"
#include "sim_kind.h"
#include "sim_obj.h"

//  What each row carries as its object (metav1.IncludeObjectPolicy).
typedef enum {
    SIM_TABLE_INCLUDE_METADATA = 0, // PartialObjectMetadata (the default)
    SIM_TABLE_INCLUDE_OBJECT,       // the whole object
    SIM_TABLE_INCLUDE_NONE,         // no object
} sim_table_include_t;

//  How a Table is made for one request. Pointers are borrowed; they must
//  outlive every use (the kind table and the API's CRDs do).
typedef struct {
    const sim_kind_t *kind;      // the kind of the objects
    const char *api_version;     // "meta.k8s.io/v1" or "meta.k8s.io/v1beta1"
    sim_table_include_t include; // the row objects
    const cJSON *crd_columns;    // the CRD version's additionalPrinterColumns, or NULL
} sim_table_opts_t;

//  The Table version an Accept header asks for before anything else the
//  simulator serves: "meta.k8s.io/v1" or "meta.k8s.io/v1beta1" (static
//  strings) for a clause `application/json;as=Table;g=meta.k8s.io;v=…`,
//  NULL when the first clause the simulator can serve is plain JSON (or
//  anything else: the object is answered as before).
const char *sim_table_accept (const char *accept);

//  Parse an includeObject query value (NULL or "" is Metadata). Returns 0,
//  or -1 for a value the API does not know.
int sim_table_include_parse (const char *value, sim_table_include_t *include_p);

//  Append the Table of objs[0..n) (borrowed) to out. list_meta is the
//  inside of the Table's ListMeta, e.g. `"resourceVersion":"12"` (it may
//  carry continue and remainingItemCount), borrowed.
void sim_table_append (const sim_table_opts_t *opts, sim_obj_t *const *objs, size_t n,
                       const char *list_meta, sim_buf_t *out);

//  The way kubectl's duration printer (apimachinery util/duration
//  HumanDuration) writes a duration of `seconds`, into buf. Returns buf.
const char *sim_table_human_duration (long long seconds, char *buf, size_t len);

#endif
