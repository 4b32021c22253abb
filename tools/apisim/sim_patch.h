/*  sim_patch: the PATCH mechanisms of the API server on cJSON trees.

    - JSON merge patch (RFC 7386, application/merge-patch+json);
    - JSON patch (RFC 6902, application/json-patch+json): add, remove,
      replace, move, copy, test, with RFC 6901 pointers (~0 ~1 escapes, "-"
      to append);
    - strategic merge patch, approximated: the merge patch of the same body
      with its `$`-directives ($patch, $retainKeys, $setElementOrder/…,
      $deleteFromPrimitiveList/…) removed. Lists are replaced, not merged
      by key; a later issue can teach it patchMergeKey.
*/
#ifndef SIM_PATCH_H
#define SIM_PATCH_H

#include <stddef.h>

#include <cjson/cJSON.h>

//  Apply a merge patch to *target_p (owned by the caller; may be replaced,
//  e.g. when the patch is not an object). Never fails.
void sim_patch_merge (cJSON **target_p, const cJSON *patch);

//  Apply a merge patch after dropping strategic-merge directives.
void sim_patch_strategic (cJSON **target_p, const cJSON *patch);

//  Apply a JSON patch (an array of operations) to *doc_p. Returns 0, or -1
//  with a message in err; on error *doc_p may be partly patched (callers
//  patch a copy).
int sim_patch_json (cJSON **doc_p, const cJSON *ops, char *err, size_t errlen);

#endif
