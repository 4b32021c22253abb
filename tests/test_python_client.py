"""test_python_client: the official Kubernetes Python client (Debian's
python3-kubernetes 22.6), a client nobody here wrote, against basalt-apisim.

Run by tests/test_python_client.c with the simulator's port:
    python3 test_python_client.py PORT
The simulator runs with --bookmark-interval-ms 100 and --watch-window 8 so
that bookmarks come soon and an old resourceVersion expires after a few
changes. Each case prints what it checked; the first failure ends the run
with a message and exit status 1.

Cases: list; watch.Watch().stream (ADDED, MODIFIED, DELETED in order, from a
resourceVersion; bookmarks; 410 Gone on an expired resourceVersion);
create_namespaced_binding; CustomObjectsApi on PodGroups and Queues (create,
get, list, patch of the status, and the CRD schema's 422).
"""
import json
import sys

from kubernetes import client, watch
from kubernetes.client.rest import ApiException

GROUP, VERSION = "scheduling.volcano.sh", "v1beta1"
NS = "default"


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)
    print("ok: " + what)


def body_text(e):
    """An ApiException's body as text (bytes when the call did not preload)."""
    return e.body.decode() if isinstance(e.body, bytes) else (e.body or "")


def pod(name, node=None):
    spec = client.V1PodSpec(containers=[client.V1Container(name="c", image="busybox")],
                            node_name=node)
    return client.V1Pod(metadata=client.V1ObjectMeta(name=name), spec=spec)


def case_list(v1):
    v1.create_node(client.V1Node(metadata=client.V1ObjectMeta(name="n1")))
    for name in ("p1", "p2"):
        v1.create_namespaced_pod(NS, pod(name))
    pods = v1.list_namespaced_pod(NS)
    check(sorted(p.metadata.name for p in pods.items) == ["p1", "p2"],
          "list_namespaced_pod lists p1 and p2")
    check(pods.metadata.resource_version, "the list has a resourceVersion")
    check([n.metadata.name for n in v1.list_node().items] == ["n1"], "list_node lists n1")
    return pods.metadata.resource_version


def case_watch(v1, rv):
    """Changes made after rv, then a watch from rv: the replay in order."""
    v1.create_namespaced_pod(NS, pod("w1"))
    v1.patch_namespaced_pod("w1", NS, {"metadata": {"labels": {"step": "2"}}})
    v1.delete_namespaced_pod("w1", NS, grace_period_seconds=0)
    w = watch.Watch()
    seen = []
    for event in w.stream(v1.list_namespaced_pod, NS, resource_version=rv, timeout_seconds=10):
        obj = event["object"]
        check(isinstance(obj, client.V1Pod), "watch event %s carries a V1Pod" % event["type"])
        if obj.metadata.name != "w1":
            continue
        seen.append(event["type"])
        if event["type"] == "DELETED":
            w.stop()
    check(seen and seen[0] == "ADDED" and seen[-1] == "DELETED" and "MODIFIED" in seen
          and seen.index("MODIFIED") > 0,
          "watch.Watch().stream from resourceVersion %s: ADDED, MODIFIED…, DELETED (%s)"
          % (rv, ", ".join(seen)))
    check(w.resource_version and int(w.resource_version) > int(rv),
          "the watch followed the resourceVersion (%s)" % w.resource_version)


def case_bookmarks(v1):
    rv = v1.list_namespaced_pod(NS).metadata.resource_version
    w = watch.Watch()
    got = None
    for event in w.stream(v1.list_namespaced_pod, NS, resource_version=rv,
                          allow_watch_bookmarks=True, timeout_seconds=10):
        if event["type"] == "BOOKMARK":
            got = event["raw_object"]
            w.stop()
    check(got is not None, "allow_watch_bookmarks=True gets a BOOKMARK")
    check(got["metadata"].get("resourceVersion"), "the bookmark carries a resourceVersion")


def case_expired(v1):
    """More changes than the watch window keeps: the old resourceVersion is
    gone, and the client raises the server's 410 (it does not retry when
    timeout_seconds is given)."""
    old = v1.list_namespaced_pod(NS).metadata.resource_version
    for i in range(6):
        v1.create_namespaced_pod(NS, pod("x%d" % i))
        v1.delete_namespaced_pod("x%d" % i, NS, grace_period_seconds=0)
    try:
        for _ in watch.Watch().stream(v1.list_namespaced_pod, NS, resource_version=old,
                                      timeout_seconds=10):
            pass
        raise Failure("a watch from an expired resourceVersion did not fail")
    except ApiException as e:
        check(e.status == 410, "a watch from an expired resourceVersion raises 410 (%s)"
              % e.reason)
        check("too old resource version" in (e.reason or ""),
              "the 410 says the resourceVersion is too old")


def case_binding(v1):
    v1.create_namespaced_pod(NS, pod("b1"))
    body = client.V1Binding(metadata=client.V1ObjectMeta(name="b1"),
                            target=client.V1ObjectReference(api_version="v1", kind="Node",
                                                            name="n1"))
    # The server answers with a Status, which this client cannot read into
    # a V1Binding (its target is required): read the raw answer, as users
    # of this client do against a real cluster.
    resp = v1.create_namespaced_binding(NS, body, _preload_content=False)
    check(resp.status == 201, "create_namespaced_binding: 201")
    check(json.loads(resp.data)["status"] == "Success", "the answer is a Success Status")
    check(v1.read_namespaced_pod("b1", NS).spec.node_name == "n1", "the pod is bound to n1")
    try:
        v1.create_namespaced_binding(NS, body, _preload_content=False)
        raise Failure("a second binding did not fail")
    except ApiException as e:
        check(e.status == 409 and "is already assigned to node" in body_text(e),
              "binding again: 409 already assigned")


def case_custom_objects(co):
    pg = {"apiVersion": GROUP + "/" + VERSION, "kind": "PodGroup",
          "metadata": {"name": "pg1"}, "spec": {"minMember": 2, "queue": "q1"}}
    created = co.create_namespaced_custom_object(GROUP, VERSION, NS, "podgroups", pg)
    check(created["metadata"].get("uid"), "create_namespaced_custom_object: a PodGroup")
    got = co.get_namespaced_custom_object(GROUP, VERSION, NS, "podgroups", "pg1")
    check(got["spec"]["minMember"] == 2, "get_namespaced_custom_object: minMember 2")
    items = co.list_namespaced_custom_object(GROUP, VERSION, NS, "podgroups")["items"]
    check([i["metadata"]["name"] for i in items] == ["pg1"], "list_namespaced_custom_object")
    # PodGroup has no /status subresource: status is patched on the object.
    co.patch_namespaced_custom_object(GROUP, VERSION, NS, "podgroups", "pg1",
                                      {"status": {"phase": "Inqueue"}})
    got = co.get_namespaced_custom_object(GROUP, VERSION, NS, "podgroups", "pg1")
    check(got["status"]["phase"] == "Inqueue", "a PodGroup's status patched on the object")
    try:
        co.patch_namespaced_custom_object_status(GROUP, VERSION, NS, "podgroups", "pg1",
                                                 {"status": {"phase": "Running"}})
        raise Failure("PodGroup /status answered")
    except ApiException as e:
        check(e.status == 404, "PodGroup has no /status subresource: 404")
    bad = dict(pg, metadata={"name": "pg2"}, spec={"minMember": "two"})
    try:
        co.create_namespaced_custom_object(GROUP, VERSION, NS, "podgroups", bad)
        raise Failure("minMember \"two\" was accepted")
    except ApiException as e:
        check(e.status == 422
              and "spec.minMember in body must be of type integer" in body_text(e),
              "minMember \"two\": 422 from the CRD schema")

    q = {"apiVersion": GROUP + "/" + VERSION, "kind": "Queue", "metadata": {"name": "q1"},
         "spec": {"reclaimable": True}}
    co.create_cluster_custom_object(GROUP, VERSION, "queues", q)
    got = co.get_cluster_custom_object(GROUP, VERSION, "queues", "q1")
    check(got["spec"]["weight"] == 1, "create/get_cluster_custom_object: a Queue, weight "
          "defaulted to 1 by the CRD")
    items = co.list_cluster_custom_object(GROUP, VERSION, "queues")["items"]
    check([i["metadata"]["name"] for i in items] == ["q1"], "list_cluster_custom_object")
    co.patch_cluster_custom_object_status(GROUP, VERSION, "queues", "q1",
                                          {"status": {"state": "Open"}})
    got = co.get_cluster_custom_object_status(GROUP, VERSION, "queues", "q1")
    check(got["status"]["state"] == "Open", "patch_cluster_custom_object_status: state Open")


def main():
    port = int(sys.argv[1])
    cfg = client.Configuration()
    cfg.host = "http://127.0.0.1:%d" % port
    api = client.ApiClient(cfg)
    v1, co = client.CoreV1Api(api), client.CustomObjectsApi(api)
    try:
        rv = case_list(v1)
        case_watch(v1, rv)
        case_bookmarks(v1)
        case_binding(v1)
        case_custom_objects(co)
        case_expired(v1)
    except Failure as f:
        print("FAILED: " + str(f))
        return 1
    except ApiException as e:
        print("FAILED: unexpected answer %s %s: %s" % (e.status, e.reason, body_text(e)))
        return 1
    print("all cases passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
