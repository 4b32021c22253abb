/*  bas_resource: resource vectors and arithmetic that never aborts.

    A bas_res_t holds milli-CPU, memory bytes, pod slots and a few scalar
    resources (GPUs, hugepages, ephemeral storage...) in integer units, as
    they travel on the wire. Every operation is total: subtraction may go
    negative and says so (DESIGN problem 4: Volcano asserted here and died);
    overflow saturates and says so. Data from outside never reaches an assert.
*/
#ifndef BAS_RESOURCE_H
#define BAS_RESOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include "basalt.pb-c.h"

#define BAS_RES_MAX_SCALARS 8
#define BAS_RES_NAME_MAX 64

typedef struct {
    char name[BAS_RES_NAME_MAX]; // resource name, e.g. "nvidia.com/gpu"
    int64_t value;               // integer units
} bas_scalar_t;

typedef struct {
    int64_t milli_cpu; // CPU in millicores
    int64_t memory;    // bytes
    int64_t pods;      // pod slots
    int nscalars;      // used entries of scalars, sorted by name
    bas_scalar_t scalars[BAS_RES_MAX_SCALARS];
} bas_res_t;

//  Return codes of the arithmetic.
#define BAS_RES_OK 0
#define BAS_RES_NEGATIVE 1     // result has a negative dimension (not an error)
#define BAS_RES_EOVERFLOW (-1) // a dimension saturated at INT64_MAX/INT64_MIN
#define BAS_RES_ETOOMANY (-2)  // more distinct scalars than BAS_RES_MAX_SCALARS
#define BAS_RES_ENAME (-3)     // scalar name empty or longer than BAS_RES_NAME_MAX - 1

//  What a ResourceList key is to the scheduler, as Volcano reads it.
typedef enum {
    BAS_RES_NAME_NATIVE, // cpu, memory, pods, ephemeral-storage
    BAS_RES_NAME_SCALAR, // extended (vendor.com/x), hugepages-*, attachable-volumes-*,
                         // kubernetes.io/*: scheduled on as a scalar
    BAS_RES_NAME_QUOTA,  // a ResourceQuota form (count/*, requests.*, limits.cpu):
                         // read past, as Volcano does
    BAS_RES_NAME_UNKNOWN // anything else ("storage", "gpu"): dropped by Volcano too
} bas_res_name_kind_t;

//  The kind of a resource name (NULL or empty is UNKNOWN).
bas_res_name_kind_t bas_res_name_kind (const char *name);

void bas_res_zero (bas_res_t *r);

//  r += a. Returns BAS_RES_OK, BAS_RES_NEGATIVE if the result has a negative
//  dimension, or a negative error (the result is still as good as possible:
//  a saturated dimension, or a new scalar that found no slot left out). An
//  error wins over BAS_RES_NEGATIVE; r and a may be the same vector.
int bas_res_add (bas_res_t *r, const bas_res_t *a);

//  r -= a. Same return codes as bas_res_add. Never aborts.
int bas_res_sub (bas_res_t *r, const bas_res_t *a);

//  True when every dimension of req is <= the same dimension of avail
//  (dimensions absent in req count as 0; pods compared only if req->pods > 0).
//  So a negative dimension of avail fits nothing.
bool bas_res_fits (const bas_res_t *req, const bas_res_t *avail);

//  Names of dimensions where req > avail ("cpu", "memory", "pods", scalar
//  names), at most max of them, borrowed from req/avail or static. Returns count.
int bas_res_insufficient (const bas_res_t *req, const bas_res_t *avail, const char **names,
                          int max);

//  True if any dimension is negative; `which` (may be NULL) gets the first name.
bool bas_res_is_negative (const bas_res_t *r, const char **which);

//  True when cpu, memory and every scalar are zero (pods ignored: best effort).
bool bas_res_is_empty (const bas_res_t *r);

bool bas_res_equal (const bas_res_t *a, const bas_res_t *b);

//  Value of scalar `name`, 0 when absent.
int64_t bas_res_scalar_get (const bas_res_t *r, const char *name);

//  Set scalar `name` (copied), keeping the scalars sorted; value 0 removes
//  it (absent and zero are the same, so zeros are never stored). Returns
//  BAS_RES_OK, BAS_RES_ETOOMANY (r unchanged) or BAS_RES_ENAME.
int bas_res_scalar_set (bas_res_t *r, const char *name, int64_t value);

//  Human form: "cpu=1500m memory=2Gi pods=3 nvidia.com/gpu=1". Returns the
//  length of the whole text like snprintf (buf may be too short: cut).
int bas_res_format (const bas_res_t *r, char *buf, size_t len);

//  From the wire (p may be NULL: all zero). A scalar without a name, with a
//  name too long, twice, or one too many -> -1 with a message in err.
int bas_res_from_proto (bas_res_t *r, const Basalt__V1__Resources *p, char *err, size_t errlen);

//  To the wire: a newly allocated message (free with
//  protobuf_c_message_free_unpacked (&msg->base, NULL)), every has_* set;
//  NULL when out of memory.
Basalt__V1__Resources *bas_res_to_proto (const bas_res_t *r);

//  From a Kubernetes ResourceList JSON object {"cpu":"1","memory":"1Gi",...}.
//  `where` names the input in error messages ("pod ns/p container c requests").
//  Returns 0, or -1 with a message naming `where`, the resource and the value:
//  pod default/p1 container main requests: cpu "12Qi": unknown suffix "Qi"...
//  cpu is read in milli-units, memory, pods and scalars in whole units (all
//  rounded up). Scalars are "ephemeral-storage", "hugepages-*" and every
//  name with a '/' (extended resources); other names are ignored. Zero
//  scalars are not stored. A NULL or JSON null list is empty; a negative
//  quantity, a value that is not a string or number, or more than
//  BAS_RES_MAX_SCALARS non-zero scalars is an error. r is reset first.
int bas_res_from_json (bas_res_t *r, const cJSON *list, const char *where, char *err,
                       size_t errlen);

#endif
