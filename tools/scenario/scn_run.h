/*  scn_run: the two ways to run a scenario.

    In process (scn_inproc.c): cache-svc's model is built from the file's
    objects through the informer path, and each session runs the way the
    real processes run it: sess_run on a snapshot of the model, its Commit
    checked by cache_model_commit, the work it produces carried out as a
    binder and the API server would (a bind sets the pod's node, an
    eviction deletes the pod, a status write lands on the PodGroup), and
    the next session runs on a fresh snapshot.

    End to end (scn_e2e.c): the same objects are loaded into basalt-apisim
    and the four services run against it on ipc:// endpoints in a private
    directory until nothing changes any more; the outcome is read from the
    API server and cache-svc.

    Both run the file's steps first (wait until expectations hold, then
    create objects): in process by checking before each session, end to
    end by polling the API while a session-svc with the step's budget runs.

    Both fill an scn_outcome_t; neither judges it.
*/
#ifndef SCN_RUN_H
#define SCN_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "scn_outcome.h"
#include "scn_spec.h"
#include "sess_sched.h"

typedef struct {
    const char *bin_dir; // build directory holding the service binaries
    bool keep;           // keep the e2e directory (logs, manifests)
    int verbosity;       // log verbosity of the services (e2e) and the core (in process)
} scn_opts_t;

//  Run `spec` in process with `conf` (borrowed; NULL = Volcano's default).
//  Fills out. Returns 0, or -1 with err when the run could not start
//  (a file object the cache refuses).
int scn_inproc_run (const scn_spec_t *spec, const sess_conf_t *conf, scn_outcome_t *out, char *err,
                    size_t errlen);

//  The store the first session of `spec` would run on, as scn_inproc_run
//  makes it: the file's objects through cache-svc's model, its snapshot
//  unpacked into a new store (owned by the caller). Steps and sessions are
//  not run. *oos_p (may be NULL) gets a new hash (owned by the caller) of
//  the nodes the snapshot reports out of sync, for sess_params_t's
//  out_of_sync_nodes. Returns NULL with err when the cache refuses an
//  object of the file.
bas_store_t *scn_inproc_store (const scn_spec_t *spec, zhashx_t **oos_p, char *err, size_t errlen);

//  Run `spec` end to end. A failure of the run itself (a service that does
//  not start or dies, no settling) is recorded in out->error. Returns 0, or
//  -1 with err when the environment cannot be set up (binaries missing).
int scn_e2e_run (const scn_spec_t *spec, const scn_opts_t *opts, scn_outcome_t *out, char *err,
                 size_t errlen);

//  Load, run (in process, or end to end when `e2e`; opts may be NULL in
//  process) and check one scenario file. Writes one line per failed
//  expectation and the file's PASS/FAIL/ERROR line to out, the reason a
//  file is not a valid scenario to stderr. Returns the number of failed
//  expectations (0: every one holds; a run that failed counts as one), or
//  -1 when the file is not a valid scenario or the run could not start.
int scn_run_file (const char *file, bool e2e, const scn_opts_t *opts, FILE *out);

#endif
