/*  bench_e2e_cluster: the benchmark's cluster as one JSON `List` file, the
    form `basalt-apisim --load` reads (kubectl get -o json output).

    N nodes (32 CPU, 256Gi, 110 pods, Ready), one Queue, M PodGroups
    (scheduling.volcano.sh/v1beta1, minMember G, the queue, minResources)
    and their G pods each (schedulerName basalt, the group-name annotation,
    500m / 1Gi requests). The first K gangs are already placed: their pods
    carry spec.nodeName and no status, which the simulator turns into a
    Running pod as a kubelet would, and their PodGroup is Running with the
    Scheduled condition the gang plugin writes when it places a gang.

    Design note: written with fprintf, not built as one cJSON tree: the
    restart case has 150,000 pods and the tree would cost more memory than
    the benchmark's subjects.
*/
#include "bench_e2e.h"

#include <stdio.h>

void
bench_pod_name (long gang, long member, char *buf, size_t len)
{
    snprintf (buf, len, "g%06ld-%ld", gang, member);
}

void
bench_gang_name (long gang, char *buf, size_t len)
{
    snprintf (buf, len, "g%06ld", gang);
}

void
bench_node_name (long node, char *buf, size_t len)
{
    snprintf (buf, len, "node-%05ld", node);
}

long
bench_node_of (const bench_scale_t *scale, long index)
{
    return index % scale->nodes;
}

static void
s_write_node (FILE *f, long i)
{
    char name[32];
    bench_node_name (i, name, sizeof name);
    fprintf (f,
             ",\n{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\","
             "\"labels\":{\"kubernetes.io/hostname\":\"%s\",\"kubernetes.io/os\":\"linux\","
             "\"topology.kubernetes.io/zone\":\"zone-%c\",\"type\":\"kwok\"}},"
             "\"status\":{\"allocatable\":{\"cpu\":\"%s\",\"memory\":\"%s\",\"pods\":\"%s\"},"
             "\"capacity\":{\"cpu\":\"%s\",\"memory\":\"%s\",\"pods\":\"%s\"},"
             "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":"
             "\"KubeletReady\"}]}}",
             name, name, (char)('a' + i % 3), BENCH_NODE_CPU, BENCH_NODE_MEMORY, BENCH_NODE_PODS,
             BENCH_NODE_CPU, BENCH_NODE_MEMORY, BENCH_NODE_PODS);
}

void
bench_gang_write (FILE *f, const char *gang, long gang_size, bool running)
{
    long cpu = BENCH_POD_CPU_MILLI * gang_size;
    long mem = BENCH_POD_MEMORY_MI * gang_size;
    fprintf (f,
             "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\","
             "\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\"},"
             "\"spec\":{\"minMember\":%ld,\"queue\":\"%s\","
             "\"minResources\":{\"cpu\":\"%ldm\",\"memory\":\"%ldMi\"}},",
             gang, BENCH_NAMESPACE, gang_size, BENCH_QUEUE, cpu, mem);
    if (running)
        //  As Volcano's (and Basalt's) gang plugin left it when the gang
        //  was placed: Running, with its Scheduled condition.
        fprintf (f,
                 "\"status\":{\"phase\":\"Running\",\"running\":%ld,\"conditions\":[{"
                 "\"type\":\"Scheduled\",\"status\":\"True\",\"transitionID\":\"bench\","
                 "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\","
                 "\"reason\":\"tasks in gang are ready to be scheduled\"}]}}",
                 gang_size);
    else
        fprintf (f, "\"status\":{\"phase\":\"Pending\"}}");
}

void
bench_pod_write (FILE *f, const char *pod, const char *gang, const char *node)
{
    fprintf (f,
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"%s\",\"labels\":{\"app\":\"bench\",\"gang\":\"%s\"},"
             "\"annotations\":{\"scheduling.k8s.io/group-name\":\"%s\"}},"
             "\"spec\":{\"schedulerName\":\"basalt\",",
             pod, BENCH_NAMESPACE, gang, gang);
    if (node)
        fprintf (f, "\"nodeName\":\"%s\",", node);
    fprintf (f,
             "\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"main\","
             "\"image\":\"busybox:1.36\",\"command\":[\"sleep\",\"infinity\"],"
             "\"resources\":{\"requests\":{\"cpu\":\"%dm\",\"memory\":\"%dMi\"},"
             "\"limits\":{\"cpu\":\"%dm\",\"memory\":\"%dMi\"}}}]}}",
             BENCH_POD_CPU_MILLI, BENCH_POD_MEMORY_MI, BENCH_POD_CPU_MILLI, BENCH_POD_MEMORY_MI);
}

static void
s_write_gang (FILE *f, const bench_scale_t *scale, long g)
{
    bool running = g < scale->running;
    char gang[32];
    bench_gang_name (g, gang, sizeof gang);
    fprintf (f, ",\n");
    bench_gang_write (f, gang, scale->gang_size, running);
    for (long m = 0; m < scale->gang_size; m++) {
        char pod[48], node[32];
        bench_pod_name (g, m, pod, sizeof pod);
        if (running)
            bench_node_name (bench_node_of (scale, g * scale->gang_size + m), node, sizeof node);
        fprintf (f, ",\n");
        bench_pod_write (f, pod, gang, running ? node : NULL);
    }
}

int
bench_cluster_write (const bench_scale_t *scale, const char *path)
{
    FILE *f = fopen (path, "w");
    if (!f) {
        fprintf (stderr, "basalt-bench-e2e: %s: cannot create\n", path);
        return -1;
    }
    //  The Queue opens the list so that every later item starts with ",".
    fprintf (f,
             "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[\n"
             "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"Queue\","
             "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"weight\":1,\"reclaimable\":true},"
             "\"status\":{\"state\":\"Open\"}}",
             BENCH_QUEUE);
    for (long i = 0; i < scale->nodes; i++)
        s_write_node (f, i);
    for (long g = 0; g < scale->gangs; g++)
        s_write_gang (f, scale, g);
    fprintf (f, "\n]}\n");
    if (ferror (f) | (fclose (f) != 0)) {
        fprintf (stderr, "basalt-bench-e2e: %s: write failed\n", path);
        return -1;
    }
    return 0;
}
