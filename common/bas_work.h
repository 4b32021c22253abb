/*  bas_work: the kinds of binder work, one constant row each.

    A Work item is one API write cache-svc decided and a binder-svc makes
    (DESIGN.md: the binder is a stateless worker). Each member of Work's
    oneof (proto/basalt.proto) has one row here: its name (the `kind` label
    of every work metric, in cache-svc and binder-svc alike), its message,
    how a binder turns it into one API request, and which non-2xx answer
    still means it is done. cache-svc's side of a kind (building it from a
    commit's items, applying its result to the model) is in
    cache-svc/cache_commit.c, whose result table is keyed by the same
    oneof. test_binder_work and test_cache_model walk Work's oneof: a member
    without a row here or there fails them.

    Adding a work kind: its message in Work's oneof (proto), one row with
    its request here, and cache-svc's builder and result row.
*/
#ifndef BAS_WORK_H
#define BAS_WORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include "basalt.pb-c.h"

//  One API request: the method, the path, the body's content type (NULL:
//  application/json) and the body (malloc'd JSON, owned by the caller).
typedef struct {
    char method[8];
    char path[768];
    const char *content_type;
    char *body;
} bas_work_request_t;

typedef struct {
    Basalt__V1__Work__ItemCase item;              // Work's oneof member
    const char *name;                             // metric label: "bind"
    const ProtobufCMessageDescriptor *descriptor; // the member's message
    //  Fill the request's method, path and content type and the body for
    //  `msg` (of `descriptor`); -1 with err when it lacks what the request
    //  needs (names, the object written). `id` names the work in err.
    int (*request) (const ProtobufCMessage *msg, uint64_t id, bas_work_request_t *req, cJSON *body,
                    char *err, size_t errlen);
    //  A non-2xx answer that still means done; NULL: none does.
    bool (*done_anyway) (const ProtobufCMessage *msg, long code, const char *message);
} bas_work_kind_t;

size_t bas_work_kind_count (void);
const bas_work_kind_t *bas_work_kind_at (size_t i);
//  The row of a Work's set member; NULL when none is set, the member is
//  NULL, or the kind has no row.
const bas_work_kind_t *bas_work_kind_of (const Basalt__V1__Work *work);
//  Its metric label; "none" when bas_work_kind_of gives NULL.
const char *bas_work_name (const Basalt__V1__Work *work);
//  The set member of a Work, or NULL.
const ProtobufCMessage *bas_work_item (const Basalt__V1__Work *work);
//  A new Work holding `msg` (taken) as its `item` member; work_id unset.
Basalt__V1__Work *bas_work_new (Basalt__V1__Work__ItemCase item, ProtobufCMessage *msg);

//  The API request for `work`: 0, or -1 with err when the item is
//  malformed or of no known kind.
int bas_work_request (const Basalt__V1__Work *work, bas_work_request_t *req, char *err,
                      size_t errlen);
//  Whether the API's answer (code, its Status message) means `work` is done.
bool bas_work_done (const Basalt__V1__Work *work, long code, const char *message);

#endif
