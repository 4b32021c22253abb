/*  util_basalt: the Basalt processes of an end-to-end test.

    One private directory per test (ipc:// endpoints, logs), the API
    simulator on a free port, and the four services (two binders) started
    with the flags that wire them together, plus whatever a test adds. The
    teardown stops every service with SIGTERM and says whether all exited
    cleanly (exit 0: under the sanitizers, also no error or leak report).

    Every child's end is checked, not only the last one's: the simulator,
    every service, and every instance of a service that a test killed and
    started again. A test kills a service on purpose only through
    util_basalt_kill, which expects exactly the signal it sends; any other
    end (an exit code other than 0, another signal, a process already gone)
    is a failure, reported at once on stderr with a line naming the process
    and the end of its log, and makes util_basalt_destroy return false.
*/
#ifndef UTIL_BASALT_H
#define UTIL_BASALT_H

#include <stdbool.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#define UTIL_NSVC 5

//  The services, in this order everywhere.
enum { UTIL_CACHE, UTIL_SESSION, UTIL_BINDER1, UTIL_BINDER2, UTIL_CONTROLLER };

//  "cache-svc", "session-svc", "binder-1", "binder-2", "controller-svc".
extern const char *const util_basalt_names[UTIL_NSVC];

typedef struct {
    char *dir;                 // private directory (removed at the end)
    int port;                  // the simulator's port
    pid_t apisim;              // the simulator, or 0
    char apisim_log[384];      // its stdout+stderr
    char master[64];           // http://127.0.0.1:port
    char endpoints[3][320];    // snapshot, delta, work (ipc://)
    char taps[UTIL_NSVC][320]; // a tap endpoint per service (used if the test passes --tap)
    int http[UTIL_NSVC];       // each service's --http port, picked at each start
    pid_t pids[UTIL_NSVC];     // running services, or 0
    char logs[UTIL_NSVC][384]; // their stdout+stderr
    int instances[UTIL_NSVC];  // how many times each service was started
    int failures;              // children that ended other than as the test meant
} util_basalt_t;

//  A new environment in a fresh directory named after `tag`; nothing runs yet.
util_basalt_t *util_basalt_new (const char *tag);

//  Start the simulator on `load` (file or directory, may be NULL) with
//  extra flags (NULL-terminated, may be NULL) and wait until it answers.
//  Returns false if it does not within 10 s.
bool util_basalt_start_apisim (util_basalt_t *env, const char *load, const char *const *extra);

//  The same on `yaml` (a stream of API objects), written to cluster.yaml
//  in the environment's directory first.
bool util_basalt_start_apisim_yaml (util_basalt_t *env, const char *yaml, const char *const *extra);

//  Start service `which` with its wiring flags (--master, endpoints,
//  --binder-id, --http 127.0.0.1:<free port>) and `extra` (NULL-terminated,
//  may be NULL) after them. An instance still running in that slot is
//  stopped first (SIGTERM) and its end checked.
void util_basalt_start (util_basalt_t *env, int which, const char *const *extra);

//  Send `sig` to service `which` on purpose (a kill test: SIGKILL), wait up
//  to 10 s for it to end and reap it. Ended by `sig` is the expected end;
//  any other (it had already exited, or exited with a code) is a failure
//  (see above). Returns true when `sig` ended it. The slot is then empty.
bool util_basalt_kill (util_basalt_t *env, int which, int sig);

//  Wait up to timeout_ms for service `which` to exit by itself with exit
//  status `code` (a test that makes it stop on purpose: cache-svc exits 3
//  when it loses the leader lease) and reap it. Any other end, or none in
//  time (then it is killed), is a failure as above. True when it exited
//  with `code`. The slot is then empty.
bool util_basalt_wait_exit (util_basalt_t *env, int which, int code, int timeout_ms);

//  True while service `which` runs. A service that has ended is reaped,
//  its end checked (a failure: nothing asked it to stop), and false returned.
bool util_basalt_alive (util_basalt_t *env, int which);

//  Wait up to timeout_ms until service `which` answers 200 on /readyz.
//  False (with a line on stderr) when it does not, or when it ended.
bool util_basalt_wait_ready (util_basalt_t *env, int which, int timeout_ms);

//  Print the end of every service's log to stderr.
void util_basalt_dump_logs (util_basalt_t *env);

//  GET `path` from the simulator as JSON (owned by the caller), or NULL.
cJSON *util_basalt_get (util_basalt_t *env, const char *path);

//  Sum of every sample of metric `name` on service `which`'s /metrics
//  (util_prom_sum), or NAN when the service does not answer or has none.
double util_basalt_metric (util_basalt_t *env, int which, const char *name);

//  Pods of namespace `ns` that have a node (spec.nodeName), or -1 when the
//  simulator does not answer.
int util_basalt_bound_pods (util_basalt_t *env, const char *ns);

//  Wait up to timeout_ms until at least `want` pods of namespace `ns` have
//  a node. Returns the count last seen (>= want when it came in time).
int util_basalt_wait_bound (util_basalt_t *env, const char *ns, int want, int timeout_ms);

//  Create a PodGroup `name` (minMember `size`, queue "default") and its
//  `size` pods `name`-0.. in namespace default, each asking `cpu` and 64Mi,
//  with schedulerName `scheduler` ("basalt" when NULL). False (with a line
//  on stderr) when the simulator refuses one.
bool util_basalt_submit_gang (util_basalt_t *env, const char *name, int size, const char *cpu,
                              const char *scheduler);

//  The holderIdentity of the Lease at `path` (malloc'd; "" when none).
char *util_basalt_lease_holder (util_basalt_t *env, const char *path);

//  Stop every service (SIGTERM) and the simulator, dump the logs if a
//  service did not exit 0, remove the directory (kept with
//  BASALT_KEEP_LOGS set), free env. Returns true if every child of the
//  test ended cleanly: each one stopped here exited 0 on SIGTERM (the
//  simulator too), and no earlier failure was recorded.
bool util_basalt_destroy (util_basalt_t **env_p);

#endif
