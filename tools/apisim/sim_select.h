/*  sim_select: label and field selectors, as in ?labelSelector= and
    ?fieldSelector= on list and watch requests.

    Label selectors take the full apimachinery syntax: `a=b`, `a==b`,
    `a!=b`, `a` (exists), `!a` (does not exist), `a in (x,y)`,
    `a notin (x,y)`, comma-separated (all must hold). Field selectors take
    `f=v`, `f==v`, `f!=v` on the fields the real server supports for the
    kind (metadata.name and metadata.namespace everywhere; spec.nodeName,
    status.phase and a few more for pods; involvedObject.*, reason, source,
    type and reportingComponent for events); a missing field compares as
    "", so `spec.nodeName=` selects unscheduled pods.
*/
#ifndef SIM_SELECT_H
#define SIM_SELECT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "sim_kind.h"

typedef struct _sim_selector_t sim_selector_t;

//  Parse a label selector. NULL or "" selects everything. Returns a new
//  selector owned by the caller, or NULL with a message in err.
sim_selector_t *sim_selector_parse_labels (const char *text, char *err, size_t errlen);

//  Parse a field selector for objects of `kind`; unknown fields are an
//  error ("field label not supported: x"), as on a real server.
sim_selector_t *sim_selector_parse_fields (const char *text, const sim_kind_t *kind, char *err,
                                           size_t errlen);

void sim_selector_destroy (sim_selector_t **self_p);

//  True if the object (a stored tree, without kind/apiVersion) matches.
//  A NULL selector matches everything.
bool sim_selector_match (const sim_selector_t *self, const cJSON *obj);

//  True if the selector has no requirement (selects everything).
bool sim_selector_empty (const sim_selector_t *self);

#endif
