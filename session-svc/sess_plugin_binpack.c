/*  sess_plugin_binpack: Volcano's binpack plugin — prefer the fullest node
    that still fits.

    For each resource the task requests that has a weight (binpack.cpu,
    binpack.memory, and the names in binpack.resources with
    binpack.resources.<name>): (used + request) * weight / allocatable; if
    used + request exceeds allocatable on any of them the whole score is 0.
    score = Σ resource scores / Σ weights * 100 * binpack.weight. Uses the
    node's Used, as Volcano does (volcano-semantics.md §6).
*/
#include "sess_session.h"
#include "bas_util.h"

#include <stdlib.h>
#include <string.h>

#define S_MAX_RES 8

typedef struct {
    int weight;                              // binpack.weight
    int cpu, memory;                         // binpack.cpu, binpack.memory
    int nres;                                // extra resources
    char names[S_MAX_RES][BAS_RES_NAME_MAX]; // their names
    int weights[S_MAX_RES];                  // their weights
} s_self_t;

//  Adds one resource's share; returns false when it does not fit.
static bool
s_one (int64_t request, int64_t used, int64_t allocatable, int weight, double *score, int *wsum)
{
    if (request <= 0 || weight == 0)
        return true;
    if (allocatable <= 0) {
        *wsum += weight;
        return true;
    }
    int64_t final = used + request;
    if (final > allocatable)
        return false;
    *score += (double) final * weight / (double)allocatable;
    *wsum += weight;
    return true;
}

static double
s_score (void *self_, const sess_task_t *task, const sess_node_t *node)
{
    const s_self_t *self = self_;
    double score = 0;
    int wsum = 0;
    if (!s_one (task->resreq->milli_cpu, node->used.milli_cpu, node->allocatable.milli_cpu,
                self->cpu, &score, &wsum) ||
        !s_one (task->resreq->memory, node->used.memory, node->allocatable.memory, self->memory,
                &score, &wsum))
        return 0;
    for (int i = 0; i < self->nres; i++)
        if (!s_one (bas_res_scalar_get (task->resreq, self->names[i]),
                    bas_res_scalar_get (&node->used, self->names[i]),
                    bas_res_scalar_get (&node->allocatable, self->names[i]), self->weights[i],
                    &score, &wsum))
            return 0;
    if (wsum > 0)
        score /= wsum;
    return score * 100 * self->weight;
}

int
sess_binpack_open (sess_session_t *ssn, const sess_plugin_conf_t *conf, void **self_p)
{
    s_self_t *self = bas_alloc (sizeof *self);
    self->weight = sess_arg_int (conf, "binpack.weight", 1);
    self->cpu = sess_arg_int (conf, "binpack.cpu", 1);
    self->memory = sess_arg_int (conf, "binpack.memory", 1);
    if (self->cpu < 0)
        self->cpu = 1;
    if (self->memory < 0)
        self->memory = 1;
    const char *list = sess_arg_string (conf, "binpack.resources");
    if (list) {
        char *copy = bas_strdup (list), *save = NULL;
        for (char *tok = strtok_r (copy, ", ", &save); tok && self->nres < S_MAX_RES;
             tok = strtok_r (NULL, ", ", &save)) {
            if (!*tok)
                continue;
            snprintf (self->names[self->nres], BAS_RES_NAME_MAX, "%s", tok);
            char key[BAS_RES_NAME_MAX + 32];
            snprintf (key, sizeof key, "binpack.resources.%s", tok);
            int w = sess_arg_int (conf, key, 1);
            self->weights[self->nres++] = w < 0 ? 1 : w;
        }
        free (copy);
    }
    *self_p = self;
    if (self->weight != 0)
        sess_add_node_order_fn_pure (ssn, self, s_score);
    return 0;
}

void
sess_binpack_close (sess_session_t *ssn, void *self)
{
    (void)ssn;
    free (self);
}
