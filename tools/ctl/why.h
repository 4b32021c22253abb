/*  why: `basalt-ctl why NAMESPACE/NAME`, why a pod or a PodGroup waits.

        basalt-ctl why NAMESPACE/NAME [--server URL] [--kubeconfig FILE]
                                      [--cache URL]

    Reads the API (the pod or PodGroup, its group's conditions, the Events
    about both, the queue's jobs) and cache-svc's /debug/state (--cache,
    default http://127.0.0.1:8481: the queues' deserved, allocated and
    capability, and every node's idle resources as the scheduler accounts
    them) and prints:
    - what the object is and where it stands (phase, pods bound of
      minMember);
    - the reasons: the Unschedulable condition (the sessions' words), the
      pod's PodScheduled condition, the last Events;
    - the queue: state, weight, deserved / allocated / capability, and the
      job's position among the queue's waiting jobs in Volcano's job order
      (priority, then creation time);
    - the nodes that came closest to one pod of it, with what each lacks
      (the request minus the node's idle, per resource), or which fit.
    Without cache-svc (no --cache answer) the last two are left out, said so.
*/
#ifndef WHY_H
#define WHY_H

#include "bas_kube.h"

//  `target` is NAMESPACE/NAME; `cache_url` cache-svc's --http URL.
//  Returns the exit status (0 found and explained, 1 not found or no
//  answer).
int why_run (const bas_kube_config_t *cfg, const char *target, const char *cache_url);

#endif
