/*  whatif: `basalt-ctl simulate`, scheduling decisions on a copy of a real
    cluster, in process, written nowhere.

        basalt-ctl simulate --from DUMP [--conf FILE] [--conf-b FILE]
                            [--sessions N] [--schedulers NAMES] [--all]

    DUMP is what `kubectl get nodes,pods,podgroups,queues,priorityclasses
    -A -o yaml` prints (a List; several YAML documents or a JSON List do
    too), from any cluster. The objects go through cache-svc's model and N
    sessions run on it with the configuration given (Volcano's default
    without --conf), exactly as the scenario runner's in-process mode runs
    them (tools/scenario/scn_run.h): binds, evictions and status writes are
    carried out on the copy only. Pods of the scheduler names without a
    PodGroup get the one Volcano's controller (and controller-svc) would
    make; a missing `default` queue is added as Volcano's installation
    does.

    The report: the pods that were pending and are now bound (where),
    those still pending with the reason counts, and each queue's share of
    the cluster's allocatable CPU and memory before and after. With
    --conf-b, both runs and the difference job by job.
*/
#ifndef WHATIF_H
#define WHATIF_H

//  The subcommand: argv[0] is "simulate". Returns the exit status.
int whatif_main (int argc, char **argv);

#endif
