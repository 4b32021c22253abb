#!/usr/bin/env python3
"""basalt soak: Basalt's four services on a simulated cluster, a stream of
gangs, a chaos loop that kills and freezes the services, and an independent
checker that watches the API and asserts what must always hold.

    tools/soak/soak.py --build build [--minutes 10] [--nodes 200] [--pods 10000]
                       [--faults] [--short] [--inject-duplicate --expect duplicates]

What runs (every process started here, restarted 0.3 s after it dies, as a
kubelet restarts a container): basalt-apisim, cache-svc, session-svc,
three binder-svc and controller-svc over ipc:// in --dir.

The workload (namespace "soak", two queues): gangs of 1 to 16 pods arriving
evenly over the run, most finishing on their own (basalt.dev/complete-after-ms)
and then deleted as a job controller would, the rest running to the end;
and a Deployment scaled between 0 and 12 replicas now and then.

The chaos loop sends SIGKILL to a random service every 1-5 s, and now and
then SIGSTOPs one for 3-8 s (a frozen process is not a dead one). With
--faults the simulator also answers 5 % of requests with 500/503, 2 % with
429 and Retry-After, adds 50 ms to each, drops (truncates) watches and
forces 410 Gone on every watch every 30 s.

The checker reads the API only (a watch on pods and PodGroups, and the
simulator's /admin/audit of bindings) and counts:
  duplicates     a binding of a pod already on a node (same node or another;
                 the API refuses both, its audit counts them) and a pod seen
                 on a second node
  partial_gangs  a gang with some but fewer than minMember members bound for
                 longer than --partial-limit-s of wall time once all its pods
                 exist, whatever the scheduler was doing meanwhile (the time
                 cache-svc or session-svc was not ready is reported apart,
                 in all as scheduler_unavailable_s and for each violation)
  overcommitted  a node whose bound, unfinished pods ask for more cpu, memory
                 or pods than it has
  lost_pods      pods still unbound when the cluster has room for them,
                 --settle-s after the chaos stopped
  groups_lost    a PodGroup deleted by somebody else than the workload while
                 pods of it are live
  crashes        a service that died of a signal the chaos did not send, or
                 exited with a code not 0
Exit 0 when all are 0 (or, with --expect CLASS, when CLASS alone is > 0);
the report is printed as one JSON object and written to --report.
"""
import argparse
import ctypes
import http.client
import json
import os
import queue
import random
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.parse

NS = "soak"
QUEUES = ("soak-a", "soak-b")
SERVICES_METRICS = ("basalt_kube_retries_total", "basalt_kube_relists_total",
                    "basalt_kube_watch_restarts_total", "basalt_kube_throttled_total",
                    "basalt_kube_errors_total", "basalt_work_reissued_total",
                    "basalt_binders_lost_total", "basalt_commit_rejections_total")


def now():
    return time.monotonic()


def log(msg):
    sys.stderr.write("%s soak: %s\n" % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


# ---------------------------------------------------------------------------
# The API, as a client that retries what a careful client retries


class Api:
    def __init__(self, host, port, stats, name):
        self.host, self.port, self.stats, self.name = host, port, stats, name
        self.conn = None

    def _conn(self):
        if self.conn is None:
            self.conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
        return self.conn

    def request(self, method, path, body=None, ctype="application/json", attempts=30):
        """(code, parsed body). Retries connection errors, 5xx and 429
        (after Retry-After); other codes are returned."""
        data = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
        for i in range(attempts):
            try:
                c = self._conn()
                headers = {"Content-Type": ctype} if data is not None else {}
                c.request(method, path, body=data, headers=headers)
                r = c.getresponse()
                text = r.read()
            except (OSError, http.client.HTTPException):
                self.conn = None
                self.stats[self.name + "_retries"] = self.stats.get(self.name + "_retries", 0) + 1
                time.sleep(min(0.05 * (i + 1), 1.0))
                continue
            if r.status == 429 or r.status >= 500:
                self.stats[self.name + "_retries"] = self.stats.get(self.name + "_retries", 0) + 1
                wait = r.getheader("Retry-After")
                time.sleep(float(wait) if wait else min(0.05 * (i + 1), 1.0))
                continue
            try:
                parsed = json.loads(text) if text else None
            except ValueError:
                parsed = text.decode(errors="replace")
            return r.status, parsed
        raise RuntimeError("%s %s: no answer after %d attempts" % (method, path, attempts))


# ---------------------------------------------------------------------------
# The services, kept running


def _die_with_parent():
    # PR_SET_PDEATHSIG: a service outlives no soak, even one killed by ctest.
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)


class Service:
    def __init__(self, name, argv, logdir):
        self.name, self.argv = name, argv
        self.logpath = os.path.join(logdir, name + ".log")
        self.proc = None
        self.offset = 0
        self.port = None
        self.incarnation = 0
        self.killed_by_chaos = False
        self.metrics = {}      # incarnation -> {metric: value}

    def start(self):
        self.offset = os.path.getsize(self.logpath) if os.path.exists(self.logpath) else 0
        out = open(self.logpath, "ab")
        self.proc = subprocess.Popen(self.argv, stdout=out, stderr=subprocess.STDOUT,
                                     preexec_fn=_die_with_parent)
        out.close()
        self.incarnation += 1
        self.port = None
        self.killed_by_chaos = False

    def http_port(self):
        if self.port is None:
            try:
                with open(self.logpath, "rb") as f:
                    f.seek(self.offset)
                    m = re.search(rb"event=starting .*?port=(\d+)", f.read())
                    if m:
                        self.port = int(m.group(1))
            except OSError:
                pass
        return self.port


class Services:
    def __init__(self, args, master, stats):
        self.args, self.stats = args, stats
        d = args.dir
        snap, delta, work = ("ipc://%s/%s.sock" % (d, n) for n in ("cache", "delta", "work"))
        b = args.build
        common = ["--http", "127.0.0.1:0", "--master", master]
        logs = os.path.join(d, "logs")
        self.list = [
            Service("cache-svc", [b + "/cache-svc/cache-svc"] + common + [
                "--snapshot-endpoint", snap, "--delta-endpoint", delta, "--work-endpoint", work],
                logs),
            Service("session-svc", [b + "/session-svc/session-svc", "--http", "127.0.0.1:0",
                                    "--snapshot-endpoint", snap, "--delta-endpoint", delta], logs),
        ]
        for i in range(1, args.binders + 1):
            self.list.append(Service("binder-svc-%d" % i, [b + "/binder-svc/binder-svc"] + common
                                     + ["--work-endpoint", work, "--binder-id", "binder-%d" % i],
                                     logs))
        self.list.append(Service("controller-svc", [b + "/controller-svc/controller-svc"] + common
                                 + ["--snapshot-endpoint", snap, "--delta-endpoint", delta], logs))
        self.stopping = False
        self.done = False
        self.crashes = []
        self.restarts = {}

    def start(self):
        for s in self.list:
            s.start()
        threading.Thread(target=self._keeper, daemon=True).start()
        threading.Thread(target=self._scraper, daemon=True).start()

    def _keeper(self):
        # PR_SET_PDEATHSIG fires when the *thread* that started a child
        # ends: this thread lives until every service has stopped.
        while not self.done:
            for s in self.list:
                rc = s.proc.poll()
                if rc is None or self.stopping:
                    continue
                if not (s.killed_by_chaos and rc == -signal.SIGKILL):
                    self.crashes.append("%s exited %s" % (s.name, rc if rc >= 0 else
                                                          signal.Signals(-rc).name))
                    log("CRASH %s exited %s (log %s)" % (s.name, rc, s.logpath))
                time.sleep(0.3)
                if self.stopping:
                    continue
                self.restarts[s.name] = self.restarts.get(s.name, 0) + 1
                s.start()
            time.sleep(0.1)

    def scheduler_ready(self):
        """cache-svc and session-svc both answer /readyz 200 within 0.3 s."""
        for s in self.list[:2]:
            port = s.http_port()
            if not port or s.proc.poll() is not None:
                return False
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=0.3)
                c.request("GET", "/readyz")
                code = c.getresponse().status
                c.close()
            except (OSError, http.client.HTTPException):
                return False
            if code != 200:
                return False
        return True

    def _scrape(self, s):
        port = s.http_port()
        if not port:
            return
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/metrics")
            text = c.getresponse().read().decode(errors="replace")
            c.close()
        except (OSError, http.client.HTTPException):
            return
        vals = {}
        for line in text.splitlines():
            for m in SERVICES_METRICS:
                if line.startswith(m + " ") or line.startswith(m + "{"):
                    vals[m] = vals.get(m, 0.0) + float(line.rsplit(" ", 1)[1])
        s.metrics[s.incarnation] = vals

    def _scraper(self):
        while not self.stopping:
            for s in self.list:
                if s.proc and s.proc.poll() is None:
                    self._scrape(s)
            time.sleep(2)

    def totals(self):
        """Each metric summed over every incarnation of every service (the
        last scrape of each: a lower bound, up to 2 s are missed per kill)."""
        for s in self.list:
            if s.proc and s.proc.poll() is None:
                self._scrape(s)
        out = {m: 0 for m in SERVICES_METRICS}
        for s in self.list:
            for vals in s.metrics.values():
                for m, v in vals.items():
                    out[m] += int(v)
        return out

    def stop(self):
        """SIGTERM to every service; one that does not exit 0 (a sanitizer's
        report, a hang) is a crash."""
        if self.stopping:
            return
        self.stopping = True
        running = [s for s in self.list if s.proc and s.proc.poll() is None]
        for s in running:
            s.proc.send_signal(signal.SIGCONT)
            s.proc.terminate()
        for s in running:
            try:
                rc = s.proc.wait(20)
            except subprocess.TimeoutExpired:
                s.proc.kill()
                s.proc.wait()
                rc = "a hang (killed 20 s after SIGTERM)"
            if rc != 0:
                self.crashes.append("%s exited %s at the stop" % (s.name, rc))
                log("CRASH %s exited %s at the stop (log %s)" % (s.name, rc, s.logpath))
        self.done = True


# ---------------------------------------------------------------------------
# Chaos


class Chaos:
    def __init__(self, services, rnd, args):
        self.services, self.rnd, self.args = services, rnd, args
        self.kills, self.stops = {}, {}
        self.last_kill = None
        self.running = True

    def run(self, until):
        while self.running and now() < until:
            time.sleep(self.rnd.uniform(self.args.kill_min_s, self.args.kill_max_s))
            if not self.running or now() >= until:
                break
            s = self.rnd.choice(self.services.list)
            if self.rnd.random() < 0.2:
                self._freeze(s, self.rnd.uniform(3, 8))
                continue
            if s.proc.poll() is None:
                s.killed_by_chaos = True
                s.proc.send_signal(signal.SIGKILL)
                self.kills[s.name] = self.kills.get(s.name, 0) + 1
                self.last_kill = now()

    def _freeze(self, s, seconds):
        proc = s.proc
        if proc.poll() is not None:
            return
        proc.send_signal(signal.SIGSTOP)
        self.stops[s.name] = self.stops.get(s.name, 0) + 1

        def thaw():
            time.sleep(seconds)
            if proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
        threading.Thread(target=thaw, daemon=True).start()


# ---------------------------------------------------------------------------
# The checker: the API's view, nothing of Basalt's


def quantity(q):
    """Kubernetes quantity to a float (cpu in cores, memory in bytes)."""
    q = str(q)
    units = {"m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 2**10, "Mi": 2**20,
             "Gi": 2**30, "Ti": 2**40}
    for u in sorted(units, key=len, reverse=True):
        if q.endswith(u):
            return float(q[:-len(u)]) * units[u]
    return float(q)


class Checker:
    def __init__(self, api, args):
        self.api, self.args = api, args
        # The watch threads and the check loop. Reentrant: the watch handlers
        # run under it and flag() what they see, which takes it again (with a
        # plain Lock the first violation a handler found hung the soak).
        self.lock = threading.RLock()
        self.pods = {}                 # uid -> dict
        self.groups = {}               # name -> dict
        self.nodes = {}                # name -> (cpu, mem, pods)
        self.violations = {"duplicates": [], "partial_gangs": [], "overcommitted": [],
                           "lost_pods": [], "groups_lost": [], "crashes": []}
        self.partial_since = {}
        self.partial_flagged = set()
        self.max_partial_s = 0.0
        self.over_flagged = set()
        self.expected_group_deletes = set()   # the workload deleted these
        self.lost_suspects = []     # (when, group, live pod uids) at its deletion
        self.relists = {"pods": 0, "podgroups": 0}
        self.running = True
        self.services = None        # set once they run: their readiness
        self.unavailable_s = 0.0    # time cache-svc or session-svc was not ready

    def flag(self, cls, what):
        with self.lock:
            if len(self.violations[cls]) < 1000:
                self.violations[cls].append(what)
        log("VIOLATION %s: %s" % (cls, what))

    def load_nodes(self):
        _, lst = self.api.request("GET", "/api/v1/nodes")
        for n in lst["items"]:
            a = n["status"]["allocatable"]
            self.nodes[n["metadata"]["name"]] = (quantity(a["cpu"]), quantity(a["memory"]),
                                                 int(a["pods"]))

    # -- pods ----------------------------------------------------------------
    def _pod(self, obj, deleted):
        md, spec = obj["metadata"], obj.get("spec", {})
        uid = md["uid"]
        node = spec.get("nodeName") or ""
        old = self.pods.get(uid)
        if old and old["node"] and node and old["node"] != node:
            self.flag("duplicates", "pod %s on %s, then on %s" % (md["name"], old["node"], node))
        if deleted:
            self.pods.pop(uid, None)
            return
        cpu = mem = 0.0
        for c in spec.get("containers", []):
            req = c.get("resources", {}).get("requests", {})
            cpu += quantity(req.get("cpu", 0))
            mem += quantity(req.get("memory", 0))
        self.pods[uid] = {
            "name": md["name"], "node": node, "phase": obj.get("status", {}).get("phase", ""),
            "group": md.get("annotations", {}).get("scheduling.k8s.io/group-name", ""),
            "cpu": cpu, "mem": mem, "deleting": "deletionTimestamp" in md,
            "first_seen": (old or {}).get("first_seen", now()),
        }

    def _group(self, obj, deleted):
        md = obj["metadata"]
        name = md["name"]
        if deleted:
            self.groups.pop(name, None)
            if name not in self.expected_group_deletes:
                live = [uid for uid, p in self.pods.items()
                        if p["group"] == name and not p["deleting"]
                        and p["phase"] not in ("Succeeded", "Failed")]
                if live:
                    # Judged later (_check_lost_groups): the pods' deletions
                    # come on another watch, which can run behind this one.
                    self.lost_suspects.append((now(), name, live))
            return
        self.groups[name] = {"min": obj.get("spec", {}).get("minMember", 1),
                             "phase": obj.get("status", {}).get("phase", ""),
                             "conditions": obj.get("status", {}).get("conditions", [])}

    def _watch(self, resource, path, handle):
        rv = None
        while self.running:
            if rv is None:
                code, lst = self.api.request("GET", path)
                if code != 200:
                    time.sleep(0.2)
                    continue
                with self.lock:
                    seen = set()
                    for o in lst["items"]:
                        handle(o, False)
                        seen.add(o["metadata"]["uid"] if resource == "pods"
                                 else o["metadata"]["name"])
                    store = self.pods if resource == "pods" else self.groups
                    for k in [k for k in store if k not in seen]:
                        gone = ({"metadata": {"uid": k, "name": store[k]["name"]}}
                                if resource == "pods" else {"metadata": {"name": k}})
                        handle(gone, True)
                rv = lst["metadata"]["resourceVersion"]
                self.relists[resource] += 1
            q = urllib.parse.urlencode({"watch": "1", "resourceVersion": rv,
                                        "allowWatchBookmarks": "true", "timeoutSeconds": "60"})
            try:
                c = http.client.HTTPConnection(self.api.host, self.api.port, timeout=90)
                c.request("GET", path + "?" + q)
                r = c.getresponse()
                if r.status != 200:
                    r.read()
                    if r.status == 410:
                        rv = None
                    time.sleep(0.1)
                    continue
                for line in r:
                    if not self.running:
                        break
                    try:
                        ev = json.loads(line)
                    except ValueError:
                        break   # a cut line: the watch was dropped
                    t, obj = ev.get("type"), ev.get("object", {})
                    if t == "ERROR":
                        if obj.get("code") == 410:
                            rv = None
                        break
                    if t != "BOOKMARK":
                        with self.lock:
                            handle(obj, t == "DELETED")
                    rv = obj.get("metadata", {}).get("resourceVersion", rv)
                c.close()
            except (OSError, http.client.HTTPException):
                time.sleep(0.1)

    def start(self):
        self.load_nodes()
        threading.Thread(target=self._watch, args=(
            "pods", "/api/v1/namespaces/%s/pods" % NS, self._pod), daemon=True).start()
        threading.Thread(target=self._watch, args=(
            "podgroups", "/apis/scheduling.volcano.sh/v1beta1/namespaces/%s/podgroups" % NS,
            self._group), daemon=True).start()
        threading.Thread(target=self._loop, daemon=True).start()

    def _loop(self):
        last = now()
        while self.running:
            time.sleep(0.5)
            # A gang's partial time counts only while the scheduler can
            # act: cache-svc and session-svc both answer /readyz (not
            # killed, frozen, restarting or in the start fence).
            up = self.services is None or self.services.scheduler_ready()
            t = now()
            with self.lock:
                self._check_nodes()
                self._check_gangs(0.0 if up else t - last)
                self._check_lost_groups()
            if not up:
                self.unavailable_s += t - last
            last = t

    def _check_nodes(self):
        use = {}
        for p in self.pods.values():
            if p["node"] and p["phase"] not in ("Succeeded", "Failed"):
                u = use.setdefault(p["node"], [0.0, 0.0, 0])
                u[0] += p["cpu"]
                u[1] += p["mem"]
                u[2] += 1
        for node, (cpu, mem, n) in use.items():
            cap = self.nodes.get(node)
            if cap and (cpu > cap[0] + 1e-6 or mem > cap[1] or n > cap[2]):
                if node not in self.over_flagged:
                    self.over_flagged.add(node)
                    self.violations["overcommitted"].append(
                        "node %s: cpu %.3f/%.3f memory %d/%d pods %d/%d" %
                        (node, cpu, cap[0], mem, cap[1], n, cap[2]))
                    log("VIOLATION overcommitted: " + self.violations["overcommitted"][-1])
            else:
                self.over_flagged.discard(node)

    def _check_lost_groups(self, settle_s=5.0):
        """A PodGroup deleted (not by the workload) while pods of it were
        live is a violation if those pods are still live settle_s later:
        the pods watch had that long to show their own deletions."""
        keep = []
        for when, name, uids in self.lost_suspects:
            if now() - when < settle_s:
                keep.append((when, name, uids))
                continue
            live = [self.pods[u]["name"] for u in uids if u in self.pods
                    and not self.pods[u]["deleting"]
                    and self.pods[u]["phase"] not in ("Succeeded", "Failed")]
            if live:
                self.flag("groups_lost", "PodGroup %s deleted with live pods %s (still there "
                          "%.0f s later)" % (name, ",".join(sorted(live)[:4]), settle_s))
        self.lost_suspects = keep

    def _check_gangs(self, down):
        """down: how long the scheduler was not ready since the last check."""
        members = {}
        for p in self.pods.values():
            if p["group"]:
                m = members.setdefault(p["group"], [0, 0])
                m[0] += 1
                if p["node"]:
                    m[1] += 1
        t = now()
        for name, g in self.groups.items():
            if name in self.expected_group_deletes or name.startswith("podgroup-"):
                continue
            total, bound = members.get(name, (0, 0))
            if total >= g["min"] and 0 < bound < g["min"]:
                if name not in self.partial_since:
                    self.partial_since[name] = [t, 0.0]   # since, time the scheduler was down
                else:
                    self.partial_since[name][1] += down
                since, down_s = self.partial_since[name]
                self.max_partial_s = max(self.max_partial_s, t - since)
                if t - since > self.args.partial_limit_s and name not in self.partial_flagged:
                    self.partial_flagged.add(name)
                    self.violations["partial_gangs"].append(
                        "%s: %d of minMember %d bound for %.1f s (the scheduler not ready "
                        "for %.1f s of it)" % (name, bound, g["min"], t - since, down_s))
                    log("VIOLATION partial_gangs: " + self.violations["partial_gangs"][-1])
            else:
                self.partial_since.pop(name, None)

    def unbound(self):
        with self.lock:
            return [p for p in self.pods.values()
                    if not p["node"] and not p["deleting"]]

    def audit(self):
        _, a = self.api.request("GET", "/admin/audit")
        return a


# ---------------------------------------------------------------------------
# The workload


def pod_body(name, group, cpu, mem, complete_ms, labels=None):
    ann = {"scheduling.k8s.io/group-name": group}
    if complete_ms:
        ann["basalt.dev/complete-after-ms"] = str(complete_ms)
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS, "annotations": ann,
                         "labels": labels or {"soak": "gang"}},
            "spec": {"schedulerName": "basalt", "containers": [{
                "name": "c", "image": "busybox:1.36",
                "resources": {"requests": {"cpu": cpu, "memory": mem}}}]}}


class Workload:
    SIZES = (1, 1, 2, 2, 3, 4, 4, 6, 8, 8, 12, 16)
    CPUS = ("250m", "500m", "500m", "1", "1", "2")
    MEMS = ("256Mi", "512Mi", "1Gi", "2Gi")

    def __init__(self, api, reaper_api, checker, rnd, args):
        self.api, self.checker, self.rnd, self.args = api, checker, rnd, args
        self.reaper_api = reaper_api   # its own connection: deletes go beside creates
        self.submissions = queue.Queue(maxsize=64)
        self.submitted_pods = 0
        self.gangs = []        # (name, size)
        self.completed_gangs = 0
        self.scales = 0
        self.running = True

    def setup(self):
        self.api.request("POST", "/api/v1/namespaces", {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        for i, q in enumerate(QUEUES):
            self.api.request("POST", "/apis/scheduling.volcano.sh/v1beta1/queues", {
                "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                "metadata": {"name": q}, "spec": {"weight": i + 1, "reclaimable": True}})
        self.api.request("POST", "/apis/scheduling.volcano.sh/v1beta1/queues", {
            "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
            "metadata": {"name": "default"}, "spec": {"weight": 1}})
        self.api.request("POST", "/apis/apps/v1/namespaces/%s/deployments" % NS, {
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": NS},
            "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"schedulerName": "basalt", "containers": [{
                                      "name": "web", "image": "nginx:1.25",
                                      "resources": {"requests": {"cpu": "250m",
                                                                 "memory": "256Mi"}}}]}}}})

    def submit_gang(self, i):
        """Decide gang i here (the seed decides the run) and hand its
        requests to a submitter (each its own connection: with 50 ms of
        injected latency one connection cannot keep up with the arrivals)."""
        size = self.rnd.choice(self.SIZES)
        size = min(size, self.args.pods - self.submitted_pods)
        name = "g%05d" % i
        cpu, mem = self.rnd.choice(self.CPUS), self.rnd.choice(self.MEMS)
        # Most gangs finish; a few run to the end (they must all fit).
        complete = self.rnd.randint(3000, 30000) if self.rnd.random() < 0.85 else 0
        queue_name = self.rnd.choice(QUEUES)
        self.submissions.put((name, size, cpu, mem, complete, queue_name))
        self.submitted_pods += size
        self.gangs.append((name, size))

    def submitter(self, api):
        while True:
            item = self.submissions.get()
            if item is None:
                return
            name, size, cpu, mem, complete, queue_name = item
            api.request("POST", "/apis/scheduling.volcano.sh/v1beta1/namespaces/%s/podgroups"
                        % NS, {
                            "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                            "metadata": {"name": name, "namespace": NS},
                            "spec": {"minMember": size, "queue": queue_name}})
            for k in range(size):
                api.request("POST", "/api/v1/namespaces/%s/pods" % NS,
                            pod_body("%s-%d" % (name, k), name, cpu, mem, complete))
            self.submissions.task_done()

    def reap(self):
        """Delete the gangs whose pods all finished, as a job controller would."""
        with self.checker.lock:
            by_group = {}
            for p in self.checker.pods.values():
                if p["group"].startswith("g"):
                    by_group.setdefault(p["group"], []).append(p)
            done = [g for g, ps in by_group.items()
                    if ps and all(p["phase"] == "Succeeded" for p in ps)
                    and g not in self.checker.expected_group_deletes]
            for g in done:
                self.checker.expected_group_deletes.add(g)
        sizes = dict(self.gangs)
        for g in done:
            for k in range(sizes.get(g, 0)):
                self.reaper_api.request("DELETE", "/api/v1/namespaces/%s/pods/%s-%d" % (NS, g, k))
            self.reaper_api.request("DELETE", "/apis/scheduling.volcano.sh/v1beta1/namespaces/"
                                    "%s/podgroups/%s" % (NS, g))
            self.completed_gangs += 1

    def reaper(self):
        while self.running:
            self.reap()
            time.sleep(1)

    def scale(self):
        replicas = self.rnd.choice((0, 2, 4, 8, 12))
        self.api.request("PATCH", "/apis/apps/v1/namespaces/%s/deployments/web/scale" % NS,
                         {"spec": {"replicas": replicas}},
                         ctype="application/merge-patch+json")
        self.scales += 1

    def run(self, window_s, submitter_apis):
        workers = [threading.Thread(target=self.submitter, args=(a,), daemon=True)
                   for a in submitter_apis]
        for w in workers:
            w.start()
        start = now()
        i = 0
        next_scale = start + 20
        while self.running and self.submitted_pods < self.args.pods:
            # Pods arrive evenly over the window.
            due = start + window_s * self.submitted_pods / self.args.pods
            if now() < due:
                time.sleep(min(due - now(), 0.5))
            else:
                self.submit_gang(i)
                i += 1
            if now() >= next_scale:
                self.scale()
                next_scale = now() + self.rnd.uniform(10, 30)
        for _ in workers:
            self.submissions.put(None)
        for w in workers:
            w.join()

    def inject_duplicate(self):
        """What a binder that binds twice would do: a second binding of a
        bound pod, to its node."""
        with self.checker.lock:
            bound = [p for p in self.checker.pods.values() if p["node"]]
        if not bound:
            return False
        p = bound[0]
        # Its own connection: the workload's is in use by another thread.
        api = Api(self.api.host, self.api.port, self.api.stats, "injector")
        api.request("POST", "/api/v1/namespaces/%s/pods/%s/binding" % (NS, p["name"]), {
            "apiVersion": "v1", "kind": "Binding", "metadata": {"name": p["name"]},
            "target": {"apiVersion": "v1", "kind": "Node", "name": p["node"]}})
        log("injected a second binding of %s to %s" % (p["name"], p["node"]))
        return True


# ---------------------------------------------------------------------------


def start_apisim(args):
    nodes = os.path.join(args.dir, "nodes.yaml")
    with open(nodes, "w") as f:
        for i in range(args.nodes):
            f.write(json.dumps({
                "apiVersion": "v1", "kind": "Node",
                "metadata": {"name": "node-%03d" % i,
                             "labels": {"kubernetes.io/hostname": "node-%03d" % i}},
                "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"},
                           "capacity": {"cpu": "16", "memory": "64Gi", "pods": "110"},
                           "conditions": [{"type": "Ready", "status": "True"}]}}) + "\n---\n")
    ready = os.path.join(args.dir, "apisim.port")
    logf = open(os.path.join(args.dir, "logs", "apisim.log"), "ab")
    proc = subprocess.Popen([args.build + "/tools/apisim/basalt-apisim", "--port", "0",
                             "--ready-file", ready, "--load", nodes],
                            stdout=logf, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
    deadline = now() + 30
    while now() < deadline:
        if os.path.exists(ready) and open(ready).read().strip():
            return proc, int(open(ready).read().split()[0])
        if proc.poll() is not None:
            raise SystemExit("soak: basalt-apisim exited %s" % proc.returncode)
        time.sleep(0.05)
    raise SystemExit("soak: basalt-apisim did not start")


def fault_config(expire):
    cfg = {"rules": [{"verb": "*", "resource": "*", "rate": 0.025, "code": 500},
                     {"verb": "*", "resource": "*", "rate": 0.025, "code": 503},
                     {"verb": "*", "resource": "*", "rate": 0.02, "code": 429,
                      "retryAfterSeconds": 1}],
           "latencyMs": 50, "watchDropRate": 0.0005}
    if expire:
        cfg["expireWatches"] = True
    return cfg


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--dir", default=None, help="state, sockets and logs (default: a new temp dir)")
    ap.add_argument("--minutes", type=float, default=None,
                    help="arrivals and chaos last this long (default 10)")
    ap.add_argument("--nodes", type=int, default=None, help="default 200")
    ap.add_argument("--pods", type=int, default=None, help="default 10000")
    ap.add_argument("--binders", type=int, default=3)
    ap.add_argument("--faults", action="store_true", help="the API fault soak")
    ap.add_argument("--no-chaos", action="store_true", help="no kills or stops")
    ap.add_argument("--kill-min-s", type=float, default=1.0)
    ap.add_argument("--kill-max-s", type=float, default=5.0)
    ap.add_argument("--partial-limit-s", type=float, default=20.0,
                    help="a gang partly bound longer than this (wall time, the scheduler's "
                         "own downtime included) is a violation (default 20: a binder's "
                         "timeout, the work's lease and a session, with a binder frozen)")
    ap.add_argument("--settle-s", type=float, default=300.0)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--short", action="store_true",
                    help="the test suite's version: 30 nodes, 600 pods, 1 minute (unless given)")
    ap.add_argument("--inject-duplicate", action="store_true",
                    help="bind one bound pod a second time (the checker must see it)")
    ap.add_argument("--expect", default=None, help="succeed only if this class alone is > 0")
    ap.add_argument("--report", default=None, help="also write the report here")
    args = ap.parse_args()
    short = args.short
    args.nodes = args.nodes or (30 if short else 200)
    args.pods = args.pods or (600 if short else 10000)
    args.minutes = args.minutes if args.minutes is not None else (1.0 if short else 10.0)
    seed = args.seed if args.seed is not None else int(time.time())
    rnd = random.Random(seed)
    args.build = os.path.abspath(args.build)
    if args.dir is None:
        import tempfile
        args.dir = tempfile.mkdtemp(prefix="basalt-soak-")
    args.dir = os.path.abspath(args.dir)
    # What an earlier run left in --dir (its own files only).
    import shutil
    shutil.rmtree(os.path.join(args.dir, "logs"), ignore_errors=True)
    for f in ("cache.sock", "delta.sock", "work.sock", "nodes.yaml", "apisim.port"):
        try:
            os.unlink(os.path.join(args.dir, f))
        except FileNotFoundError:
            pass
    os.makedirs(os.path.join(args.dir, "logs"), exist_ok=True)
    log("seed=%d dir=%s nodes=%d pods=%d minutes=%g faults=%s" % (
        seed, args.dir, args.nodes, args.pods, args.minutes, args.faults))

    stats = {}
    sim, port = start_apisim(args)
    api = Api("127.0.0.1", port, stats, "workload")
    master = "http://127.0.0.1:%d" % port
    checker = Checker(Api("127.0.0.1", port, stats, "checker"), args)
    workload = Workload(api, Api("127.0.0.1", port, stats, "reaper"), checker, rnd, args)
    workload.setup()
    checker.start()
    threading.Thread(target=workload.reaper, daemon=True).start()
    services = Services(args, master, stats)
    services.start()
    checker.services = services
    chaos = Chaos(services, rnd, args)
    t0 = now()
    window = args.minutes * 60
    if args.faults:
        Api("127.0.0.1", port, stats, "admin").request("POST", "/admin/faults",
                                                         fault_config(False))

        def expirer():
            a = Api("127.0.0.1", port, stats, "admin")
            while now() < t0 + window:
                time.sleep(30)
                a.request("POST", "/admin/faults", fault_config(True))
        threading.Thread(target=expirer, daemon=True).start()
    if not args.no_chaos:
        threading.Thread(target=chaos.run, args=(t0 + window,), daemon=True).start()
    injected = False
    try:
        submitters = [Api("127.0.0.1", port, stats, "submitter-%d" % i) for i in range(4)]
        wl = threading.Thread(target=workload.run, args=(window, submitters), daemon=True)
        wl.start()
        last_progress = 0
        while now() < t0 + window or wl.is_alive():
            time.sleep(1)
            if args.inject_duplicate and not injected and now() > t0 + 10:
                injected = workload.inject_duplicate()
            if now() - last_progress >= 30:
                last_progress = now()
                log("t=%ds submitted=%d unbound=%d completed_gangs=%d kills=%d stops=%d" % (
                    now() - t0, workload.submitted_pods, len(checker.unbound()),
                    workload.completed_gangs, sum(chaos.kills.values()),
                    sum(chaos.stops.values())))
        chaos.running = False
        chaos_end = now()
        if args.faults:
            Api("127.0.0.1", port, stats, "admin").request("DELETE", "/admin/faults")
        # Settle: every pod bound (the workload keeps reaping finished gangs).
        settled = None
        while now() < chaos_end + args.settle_s:
            if not checker.unbound() and workload.submitted_pods >= args.pods:
                settled = now()
                break
            time.sleep(0.5)
        time.sleep(2)   # the checker's last turn
        end = now() + 7     # and the groups deleted just now, judged after their settle
        while checker.lost_suspects and now() < end:
            time.sleep(0.5)
        for p in checker.unbound():
            with checker.lock:
                g = checker.groups.get(p["group"], {})
            reason = "; ".join(c.get("message", "") for c in g.get("conditions", [])
                               if c.get("type") == "Unschedulable")[:200]
            checker.violations["lost_pods"].append("%s (group %s: %s)" % (
                p["name"], p["group"], reason or "no condition"))
        audit = checker.audit()
        if audit["rebindsSameNode"] or audit["rebindsOtherNode"]:
            checker.violations["duplicates"].append(
                "API refused %d bindings of pods already on that node and %d on another: %s"
                % (audit["rebindsSameNode"], audit["rebindsOtherNode"],
                   "; ".join(audit["lastRebinds"][-5:])))
        totals = services.totals()
        services.stop()
        checker.violations["crashes"] = list(services.crashes)
    finally:
        checker.running = False
        workload.running = False
        services.stop()
        sim.terminate()
        sim.wait()
    last_kill = chaos.last_kill or chaos_end
    report = {
        "seed": seed, "dir": args.dir, "nodes": args.nodes, "pods": workload.submitted_pods,
        "gangs": len(workload.gangs), "gangs_completed_and_deleted": workload.completed_gangs,
        "deployment_scales": workload.scales, "minutes": args.minutes, "faults": args.faults,
        "kills": chaos.kills, "kills_total": sum(chaos.kills.values()),
        "stops": chaos.stops, "stops_total": sum(chaos.stops.values()),
        "binds_accepted_by_api": audit["binds"],
        "rebinds_same_node": audit["rebindsSameNode"],
        "rebinds_other_node": audit["rebindsOtherNode"],
        "max_partial_gang_s": round(checker.max_partial_s, 1),
        "scheduler_unavailable_s": round(checker.unavailable_s, 1),
        "settle_s_after_last_kill": round(settled - last_kill, 1) if settled else None,
        "checker_relists": checker.relists,
        "client_retries": {k: v for k, v in stats.items()},
        "services": totals,
        "counts": {k: len(v) for k, v in checker.violations.items()},
        "violations": {k: v[:20] for k, v in checker.violations.items() if v},
    }
    text = json.dumps(report, indent=1, sort_keys=True)
    print(text)
    if args.report:
        with open(args.report, "w") as f:
            f.write(text + "\n")
    bad = {k for k, v in report["counts"].items() if v}
    if args.expect:
        ok = bad == {args.expect}
        log("expected %s alone: %s" % (args.expect, "yes" if ok else "no (%s)" % sorted(bad)))
        return 0 if ok else 1
    log("result: %s" % ("ok" if not bad else "FAILED: " + ", ".join(sorted(bad))))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
