/*  sim_patch: the PATCH mechanisms of the API server on cJSON trees.

    - JSON merge patch (RFC 7386, application/merge-patch+json);
    - JSON patch (RFC 6902, application/json-patch+json): add, remove,
      replace, move, copy, test, with RFC 6901 pointers (~0 ~1 escapes, "-"
      to append);
    - strategic merge patch: maps merge as in a merge patch; the lists the
      Kubernetes types mark patchStrategy=merge merge by their
      patchMergeKey (containers and env by name, containers' ports by
      containerPort and a Service's spec.ports by port, volumeMounts by
      mountPath, conditions by type, ownerReferences by uid, a
      ServiceAccount's secrets by name, …; finalizers as a set), other
      lists are replaced; the directives $patch (merge/replace/delete, in
      maps and list elements), $retainKeys, $setElementOrder/<list> and
      $deleteFromPrimitiveList/<list> are honoured. Merge keys are looked
      up by field name and the name of the field holding the list, which
      is exact for the kinds the simulator serves.
*/
#ifndef SIM_PATCH_H
#define SIM_PATCH_H

#include <stddef.h>

#include <cjson/cJSON.h>

//  Apply a merge patch to *target_p (owned by the caller; may be replaced,
//  e.g. when the patch is not an object). Never fails.
void sim_patch_merge (cJSON **target_p, const cJSON *patch);

//  Apply a strategic merge patch (see above).
void sim_patch_strategic (cJSON **target_p, const cJSON *patch);

//  Apply a JSON patch (an array of operations) to *doc_p. Returns 0, or -1
//  with a message in err; on error *doc_p may be partly patched (callers
//  patch a copy).
int sim_patch_json (cJSON **doc_p, const cJSON *ops, char *err, size_t errlen);

#endif
