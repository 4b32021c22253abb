/*  scn_file: one scenario file from its path to its verdict (scn_run.h),
    the loop basalt-scenario runs for each file and the in-process tests
    run for each file of a directory: scn_spec_load, the file's
    configuration, one of the two runs, scn_outcome_check.
*/
#include "scn_run.h"

#include "scn_outcome.h"
#include "scn_spec.h"

#include <czmq.h>
#include <stdio.h>

int
scn_run_file (const char *file, bool e2e, const scn_opts_t *opts, FILE *out)
{
    const char *mode = e2e ? "e2e" : "in-process";
    char err[2048] = "";
    sess_conf_t *conf = NULL;
    scn_spec_t *spec = scn_spec_load (file, err, sizeof err);
    if (!spec || scn_spec_conf (spec, &conf, err, sizeof err) != 0) {
        fflush (out);
        fprintf (stderr, "basalt-scenario: %s\n", err);
        fprintf (out, "ERROR %s (%s): the file is not a valid scenario\n", file, mode);
        scn_spec_destroy (&spec);
        fflush (out);
        return -1;
    }
    scn_outcome_t *outcome = scn_outcome_new ();
    int64_t started = zclock_mono ();
    int rc = e2e ? scn_e2e_run (spec, opts, outcome, err, sizeof err)
                 : scn_inproc_run (spec, conf, outcome, err, sizeof err);
    if (rc != 0) {
        fprintf (out, "ERROR %s (%s): %s\n", spec->name, mode, err);
        rc = -1;
    } else {
        rc = scn_outcome_check (outcome, spec->expect, spec->name, mode, out);
        fprintf (out, "%s %s (%s) %s %.1f s\n", rc == 0 ? "PASS" : "FAIL", spec->name, mode, file,
                 (double)(zclock_mono () - started) / 1000.0);
    }
    fflush (out);
    scn_outcome_destroy (&outcome);
    sess_conf_destroy (&conf);
    scn_spec_destroy (&spec);
    return rc;
}
