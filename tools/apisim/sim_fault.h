/*  sim_fault: injected failures, so that the reliability of every client
    can be tested against the simulator.

    What can be injected:
    - error responses by verb and resource with a probability: 500
      (InternalError), 503 (ServiceUnavailable) or any other 5xx as a real
      Status body, or 429 as API Priority and Fairness sends it (plain text
      "Too many requests, please try again later." and Retry-After);
    - added latency on every request (the connection is parked, the loop
      goes on serving others);
    - watch streams dropped: each store event aborts the watches of its
      resource with a probability (the connection closes without the end
      of the chunked body, the last line cut in half), or all watches at
      once on request;
    - forced 410: the next N watch requests, or every open watch at once,
      get an ERROR event with a 410 Expired Status.

    A rule is written `verb:resource:rate:code[:retryAfterSeconds]` on the
    command line (`--fault list:pods:0.5:503`), or as JSON through the
    admin endpoint (see sim_fault_configure). verb is one of get, list,
    watch, create, update, patch, delete, deletecollection or `*`;
    resource is a plural resource with an optional subresource
    (`pods/binding`) or `*`.

    The state is plain data owned by the API; the API performs the
    one-shot actions (drop, expire) because it owns the watches.
*/
#ifndef SIM_FAULT_H
#define SIM_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "sim_rand.h"

#define SIM_FAULT_MAX_RULES 32

typedef struct {
    char verb[24];      // verb or "*"
    char resource[96];  // resource[/subresource] or "*"
    double rate;        // probability in [0, 1]
    int code;           // 429 or 500..599
    int retry_after_s;  // Retry-After of a 429 (seconds, >= 0)
    unsigned long hits; // times the rule fired
} sim_fault_rule_t;

typedef struct {
    sim_fault_rule_t rules[SIM_FAULT_MAX_RULES]; // error rules, first match that fires wins
    int nrules;                                  // how many
    int64_t latency_ms;                          // added to every API request
    double watch_drop_rate;                      // per event: abort that resource's watches
    int expire_next_watches;                     // next watch requests answered with 410
    unsigned long watches_dropped;               // watch streams aborted so far
    unsigned long watches_expired;               // watches given a forced 410 so far
} sim_fault_t;

//  Empty configuration (nothing injected).
void sim_fault_init (sim_fault_t *self);

//  Add a rule from `verb:resource:rate:code[:retryAfter]`. Returns 0, or -1
//  with a message naming the bad part.
int sim_fault_add_spec (sim_fault_t *self, const char *spec, char *err, size_t errlen);

//  Replace the configuration by a JSON document (borrowed):
//    {"rules":[{"verb":"list","resource":"pods","rate":0.5,"code":503,
//               "retryAfterSeconds":1}],
//     "latencyMs":50, "watchDropRate":0.01, "expireNextWatches":2}
//  Members left out are reset. One-shot actions ("dropWatches",
//  "expireWatches") are the caller's. Returns 0, or -1 with a message
//  naming the member; on error nothing changes.
int sim_fault_configure (sim_fault_t *self, const cJSON *json, char *err, size_t errlen);

//  The configuration and counters as JSON (owned by the caller).
cJSON *sim_fault_describe (const sim_fault_t *self);

//  The rule that fires for this request, or NULL.
sim_fault_rule_t *sim_fault_pick (sim_fault_t *self, sim_rand_t *rand, const char *verb,
                                  const char *resource);

//  True with probability p.
bool sim_fault_chance (sim_rand_t *rand, double p);

#endif
