#!/usr/bin/env python3
"""run-manifests: run deploy/'s manifests on this machine the way a kubelet
would, against an API server (the simulator), without a cluster.

    scripts/run-manifests.py --overlay deploy/overlays/one-pod \\
        --master http://127.0.0.1:8080 [--bin-dir build] [--work-dir DIR]
        [--state FILE] [--replicas NAME=N ...] [--no-apply]

What it does, in order:
  1. renders the overlay with `kubectl kustomize` and applies the result to
     the API server with `kubectl apply --server-side=false -f -` (so every
     object must be one the server accepts);
  2. runs every Deployment's pod template `replicas` times. Each pod gets
     its own loopback address (127.0.0.11, .12, ...) that stands for its pod
     IP: 0.0.0.0, 127.0.0.1 and localhost in a container's command, args
     and env become that address, as they would inside the pod's network
     namespace. Each container is a local process: `command`/`args` with
     $(VAR) expanded from its `env` (values, the downward API fields
     metadata.name, metadata.namespace and status.podIP, ConfigMap and
     Secret keys); the image's binaries (/usr/local/bin/NAME) are taken
     from --bin-dir. Volumes: an emptyDir is a directory per pod; a
     ConfigMap or Secret (from the rendered manifests) is a directory with
     one file per key; every mountPath in the command, args and env is
     replaced by its directory. As root, runAsUser/runAsGroup are honoured
     (the process runs as that user, the pod's directories are its own).
  3. probes: httpGet readiness and liveness probes, with their periods and
     thresholds; a liveness failure restarts the container, and any exit
     restarts it (restartPolicy Always) after a back-off of 1, 2, 4 … 10 s.
  4. Services: each ClusterIP Service gets an address 127.0.1.N; its name
     (NAME, NAME.NS, NAME.NS.svc, NAME.NS.svc.cluster.local) in a
     container's command, args or env becomes that address. A proxy on each
     port sends every new connection to one Ready pod the selector matches,
     picked at random (kube-proxy's iptables mode), and when that pod
     refuses the connection, closes it (the client reconnects).

Not emulated: the container image itself (the host's libraries are used;
`make image` checks the image), readOnlyRootFilesystem, capabilities,
resource limits, HPAs and PDBs (applied, not acted on), in-cluster API
credentials: every container gets KUBECONFIG pointing at a kubeconfig for
--master instead.

--state FILE is rewritten on every change, as JSON: pods (name,
deployment, ip, ready, containers with pid, restarts, ready, exits, log and
the port of their first httpGet probe) and services (name, ip, ports).
SIGTERM or SIGINT stops every container (SIGTERM, then SIGKILL after the
pod's grace period, at most 10 s); the exit status is 0 when every one of
them then exited 0, else 1. The host's *SAN_OPTIONS reach the containers.
"""
import argparse
import asyncio
import base64
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

import yaml


def die(msg):
    print(f"run-manifests: {msg}", file=sys.stderr)
    sys.exit(2)


def log(msg):
    print(f"run-manifests: {msg}", file=sys.stderr, flush=True)


# ------------------------------------------------------------ rendering


def render(overlay):
    r = subprocess.run(["kubectl", "kustomize", overlay], capture_output=True, text=True)
    if r.returncode != 0:
        die(f"kubectl kustomize {overlay} failed:\n{r.stderr}")
    objs = [o for o in yaml.safe_load_all(r.stdout) if o]
    return r.stdout, objs


def apply(text, kubeconfig):
    r = subprocess.run(
        ["kubectl", "--kubeconfig", kubeconfig, "apply", "--server-side=false", "-f", "-"],
        input=text, capture_output=True, text=True)
    sys.stderr.write(r.stdout)
    if r.returncode != 0:
        die(f"kubectl apply failed:\n{r.stderr}")


def write_kubeconfig(path, master):
    with open(path, "w") as f:
        json.dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "sim",
            "clusters": [{"name": "sim", "cluster": {"server": master}}],
            "users": [{"name": "sim", "user": {}}],
            "contexts": [{"name": "sim", "context": {"cluster": "sim", "user": "sim"}}],
        }, f)


def find_bin(bin_dir, path):
    name = os.path.basename(path)
    for root, _dirs, files in os.walk(bin_dir):
        if name in files:
            cand = os.path.join(root, name)
            if os.access(cand, os.X_OK) and os.path.isfile(cand):
                return os.path.abspath(cand)
    die(f"{path}: no executable named {name} under {bin_dir}")


# ------------------------------------------------------------ pods


def labels_match(selector, labels):
    return all(labels.get(k) == v for k, v in (selector or {}).items())


class Container:
    def __init__(self, pod, spec, index):
        self.pod = pod
        self.spec = spec
        self.name = spec["name"]
        self.proc = None
        self.restarts = 0
        self.exits = []
        self.ready = "readinessProbe" not in spec
        self.live_failures = 0
        self.ready_failures = 0
        self.started_at = 0.0
        self.log = os.path.join(pod.dir, "logs", f"{self.name}.log")
        self.stopping = False

    def probe_port(self):
        for kind in ("readinessProbe", "livenessProbe"):
            p = self.spec.get(kind, {}).get("httpGet")
            if p:
                return self.pod.resolve_port(p["port"])
        return None


class Pod:
    def __init__(self, runner, deploy, index, ip):
        meta = deploy["metadata"]
        self.runner = runner
        self.deployment = meta["name"]
        self.namespace = meta.get("namespace", "default")
        self.name = f"{self.deployment}-{index}"
        self.ip = ip
        tmpl = deploy["spec"]["template"]
        self.labels = tmpl.get("metadata", {}).get("labels", {})
        self.spec = tmpl["spec"]
        self.dir = os.path.join(runner.work_dir, self.name)
        os.makedirs(os.path.join(self.dir, "logs"), exist_ok=True)
        self.grace = min(int(self.spec.get("terminationGracePeriodSeconds", 30)), 10)
        sc = self.spec.get("securityContext", {})
        self.uid = sc.get("runAsUser")
        self.gid = sc.get("runAsGroup")
        self.fs_group = sc.get("fsGroup")
        self.volumes = {}
        for v in self.spec.get("volumes", []):
            self.volumes[v["name"]] = self.make_volume(v)
        self.containers = [Container(self, c, i) for i, c in enumerate(self.spec["containers"])]

    def make_volume(self, v):
        path = os.path.join(self.dir, "volumes", v["name"])
        os.makedirs(path, exist_ok=True)
        if "emptyDir" in v:
            os.chmod(path, 0o777)  # as the kubelet makes them
        elif "configMap" in v:
            cm = self.runner.find("ConfigMap", v["configMap"]["name"], self.namespace)
            self.write_keys(path, cm.get("data", {}), v["configMap"].get("items"),
                            v["configMap"].get("defaultMode", 0o644))
        elif "secret" in v:
            sec = self.runner.find("Secret", v["secret"]["secretName"], self.namespace)
            data = {k: base64.b64decode(x) for k, x in sec.get("data", {}).items()}
            data.update({k: x.encode() for k, x in sec.get("stringData", {}).items()})
            self.write_keys(path, data, v["secret"].get("items"),
                            v["secret"].get("defaultMode", 0o644))
        else:
            die(f"pod {self.name}: volume {v['name']}: only emptyDir, configMap and secret")
        #  fsGroup: the pod's volumes belong to its group.
        if os.geteuid() == 0 and self.fs_group is not None:
            for root, _dirs, files in os.walk(path):
                for n in [root] + [os.path.join(root, f) for f in files]:
                    os.chown(n, -1, self.fs_group)
                    os.chmod(n, os.stat(n).st_mode | 0o040)
        return path

    def write_keys(self, path, data, items, mode):
        keys = [(i["key"], i.get("path", i["key"])) for i in items] if items else \
            [(k, k) for k in data]
        for key, rel in keys:
            if key not in data:
                die(f"pod {self.name}: key {key} missing from its ConfigMap/Secret")
            dest = os.path.join(path, rel)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            value = data[key]
            with open(dest, "wb") as f:
                f.write(value if isinstance(value, bytes) else value.encode())
            os.chmod(dest, mode)

    def resolve_port(self, port):
        if isinstance(port, int) or str(port).isdigit():
            return int(port)
        for c in self.spec["containers"]:
            for p in c.get("ports", []):
                if p.get("name") == port:
                    return int(p["containerPort"])
        die(f"pod {self.name}: no container port named {port}")

    def ready(self):
        return all(c.ready for c in self.containers)

    # The text a container sees: pod IP for the addresses of its network
    # namespace, its volumes' directories for their mount paths, Service
    # names for their proxies' addresses.
    def rewrite(self, text, mounts):
        #  One pass, longest mount path first: a replaced path is never
        #  looked at again (a host directory under /tmp is not the /tmp mount).
        if mounts:
            paths = {m.rstrip("/"): host for m, host in mounts}
            alt = "|".join(re.escape(m) for m in sorted(paths, key=len, reverse=True))
            text = re.sub(r"(?<![\w.-])(" + alt + r")(?=/|$|[\s,;:\"'])",
                          lambda m: paths[m.group(1)], text)
        text = re.sub(r"(?<![\w.])(0\.0\.0\.0|127\.0\.0\.1|localhost)(?=:)", self.ip, text)
        return self.runner.rewrite_services(text, self.namespace)

    def env_of(self, c):
        env = {}
        for e in c.spec.get("env", []):
            if "value" in e:
                env[e["name"]] = expand(str(e["value"]), env)
                continue
            vf = e.get("valueFrom", {})
            if "fieldRef" in vf:
                field = vf["fieldRef"]["fieldPath"]
                values = {"metadata.name": self.name, "metadata.namespace": self.namespace,
                          "status.podIP": self.ip, "spec.nodeName": "run-manifests",
                          "spec.serviceAccountName": self.spec.get("serviceAccountName", "")}
                if field not in values:
                    die(f"pod {self.name}: env {e['name']}: fieldRef {field} not emulated")
                env[e["name"]] = values[field]
            elif "configMapKeyRef" in vf:
                ref = vf["configMapKeyRef"]
                env[e["name"]] = self.runner.find("ConfigMap", ref["name"],
                                                  self.namespace)["data"][ref["key"]]
            elif "secretKeyRef" in vf:
                ref = vf["secretKeyRef"]
                sec = self.runner.find("Secret", ref["name"], self.namespace)
                env[e["name"]] = base64.b64decode(sec["data"][ref["key"]]).decode()
            else:
                die(f"pod {self.name}: env {e['name']}: valueFrom {list(vf)} not emulated")
        return env

    def argv_env(self, c):
        env = self.env_of(c)
        mounts = sorted(((m["mountPath"], self.volumes[m["name"]])
                         for m in c.spec.get("volumeMounts", [])),
                        key=lambda m: -len(m[0]))
        argv = [expand(a, env) for a in c.spec.get("command", []) + c.spec.get("args", [])]
        if not argv:
            die(f"pod {self.name}: container {c.name} has no command (the image's entrypoint "
                "is not emulated)")
        argv = [self.rewrite(a, mounts) for a in argv]
        argv[0] = find_bin(self.runner.bin_dir, argv[0])
        penv = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "KUBECONFIG": self.runner.kubeconfig, "HOSTNAME": self.name}
        #  A sanitizer build's options (suppressions, halt_on_error) reach
        #  the containers, so they report as the other tests' processes do.
        for k, v in os.environ.items():
            if k.endswith("SAN_OPTIONS"):
                penv[k] = v
        for k, v in env.items():
            penv[k] = self.rewrite(v, mounts)
        return argv, penv


def expand(text, env):
    def sub(m):
        if m.group(0) == "$$":
            return "$"
        return env.get(m.group(1), m.group(0))
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)", sub, text)


# ------------------------------------------------------------ the runner


class Runner:
    def __init__(self, args, objs):
        self.args = args
        self.objs = objs
        self.bin_dir = args.bin_dir
        self.work_dir = args.work_dir
        self.kubeconfig = os.path.join(self.work_dir, "kubeconfig")
        self.pods = []
        self.services = []  # (obj, ip)
        self.stopping = False
        self.unclean = []
        self.state_dirty = True
        ip = 1
        for o in objs:
            if o.get("kind") == "Service" and o["spec"].get("selector") and \
                    o["spec"].get("type", "ClusterIP") == "ClusterIP" and \
                    o["spec"].get("clusterIP") != "None":
                self.services.append((o, f"127.0.1.{ip}"))
                ip += 1

    def find(self, kind, name, namespace):
        for o in self.objs:
            m = o.get("metadata", {})
            if o.get("kind") == kind and m.get("name") == name and \
                    m.get("namespace", namespace) == namespace:
                return o
        die(f"{kind} {namespace}/{name} is not in the rendered manifests")

    def rewrite_services(self, text, namespace):
        for svc, ip in self.services:
            name = svc["metadata"]["name"]
            ns = svc["metadata"].get("namespace", namespace)
            names = [f"{name}.{ns}.svc.cluster.local", f"{name}.{ns}.svc", f"{name}.{ns}"]
            if ns == namespace:
                names.append(name)
            for n in names:
                text = re.sub(r"(?<![\w.-])" + re.escape(n) + r"(?=:\d)", ip, text)
        return text

    def write_state(self):
        if not self.args.state or not self.state_dirty:
            return
        self.state_dirty = False
        state = {"pods": [], "services": []}
        for p in self.pods:
            state["pods"].append({
                "name": p.name, "deployment": p.deployment, "ip": p.ip, "ready": p.ready(),
                "labels": p.labels,
                "containers": [{"name": c.name, "pid": c.proc.pid if c.proc else 0,
                                "restarts": c.restarts, "ready": c.ready, "exits": c.exits,
                                "log": c.log, "probe_port": c.probe_port()}
                               for c in p.containers]})
        for svc, ip in self.services:
            state["services"].append({"name": svc["metadata"]["name"], "ip": ip,
                                      "ports": [p["port"] for p in svc["spec"]["ports"]]})
        tmp = self.args.state + ".tmp"
        with open(tmp, "w") as f:
            json.dump(state, f, indent=1)
        os.replace(tmp, self.args.state)

    def dirty(self):
        self.state_dirty = True
        self.write_state()

    # -------------------------------------------------- containers

    def start(self, c):
        argv, env = c.pod.argv_env(c)
        out = open(c.log, "ab")
        out.write(f"--- run-manifests: start {time.strftime('%H:%M:%S')}: "
                  f"{' '.join(argv)}\n".encode())
        out.flush()
        uid, gid = c.pod.uid, c.pod.gid
        sc = c.spec.get("securityContext", {})
        uid = sc.get("runAsUser", uid)
        gid = sc.get("runAsGroup", gid)

        def as_user():
            os.setsid()
            if os.geteuid() == 0 and uid is not None and not self.args.no_run_as:
                os.setgroups([])
                if gid is not None:
                    os.setgid(gid)
                os.setuid(uid)
        c.proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, preexec_fn=as_user,
                                  cwd=c.pod.dir)
        out.close()
        c.started_at = time.monotonic()
        c.ready = "readinessProbe" not in c.spec
        c.live_failures = c.ready_failures = 0
        self.dirty()

    async def watch(self, c):
        backoff = 1
        while not self.stopping:
            self.start(c)
            while c.proc.poll() is None and not self.stopping:
                await asyncio.sleep(0.05)
            if self.stopping:
                return
            code = c.proc.returncode
            c.exits.append(code)
            c.restarts += 1
            c.ready = False
            self.dirty()
            ran = time.monotonic() - c.started_at
            backoff = 1 if ran > 20 else min(backoff * 2, 10)
            log(f"{c.pod.name}/{c.name} exited ({code}); restart in {backoff} s")
            await asyncio.sleep(backoff)

    async def probe(self, c, kind):
        spec = c.spec.get(kind)
        if not spec:
            return
        get = spec.get("httpGet")
        if not get:
            die(f"{c.pod.name}/{c.name}: {kind}: only httpGet probes are emulated")
        port = c.pod.resolve_port(get["port"])
        path = get.get("path", "/")
        period = spec.get("periodSeconds", 10)
        threshold = spec.get("failureThreshold", 3)
        success = spec.get("successThreshold", 1)
        timeout = spec.get("timeoutSeconds", 1)
        await asyncio.sleep(spec.get("initialDelaySeconds", 0))
        oks = 0
        while not self.stopping:
            if c.proc and c.proc.poll() is None and \
                    time.monotonic() - c.started_at >= spec.get("initialDelaySeconds", 0):
                ok = await http_ok(c.pod.ip, port, path, timeout)
                if kind == "readinessProbe":
                    oks = oks + 1 if ok else 0
                    c.ready_failures = 0 if ok else c.ready_failures + 1
                    was = c.ready
                    if ok and oks >= success:
                        c.ready = True
                    elif c.ready_failures >= threshold:
                        c.ready = False
                    if was != c.ready:
                        self.dirty()
                else:
                    c.live_failures = 0 if ok else c.live_failures + 1
                    if c.live_failures >= threshold:
                        log(f"{c.pod.name}/{c.name}: liveness probe failed {threshold} times: "
                            "restarting it")
                        c.live_failures = 0
                        c.proc.kill()
            await asyncio.sleep(period)

    # -------------------------------------------------- services

    async def serve(self, svc, ip, port_spec):
        port = port_spec["port"]
        target = port_spec.get("targetPort", port)
        selector = svc["spec"]["selector"]

        async def handle(reader, writer):
            pods = [p for p in self.pods if labels_match(selector, p.labels) and p.ready()
                    and p.namespace == svc["metadata"].get("namespace", p.namespace)]
            if not pods:
                writer.close()
                return
            p = random.choice(pods)
            try:
                r2, w2 = await asyncio.wait_for(
                    asyncio.open_connection(p.ip, p.resolve_port(target)), 2)
            except (OSError, asyncio.TimeoutError):
                writer.close()  # refused: the client connects again
                return
            await asyncio.gather(pipe(reader, w2), pipe(r2, writer))

        server = await asyncio.start_server(handle, ip, port, reuse_address=True)
        return server

    # -------------------------------------------------- run

    async def run(self):
        ip = 11
        for o in self.objs:
            if o.get("kind") != "Deployment":
                continue
            name = o["metadata"]["name"]
            n = self.args.replicas.get(name, o["spec"].get("replicas", 1))
            for i in range(n):
                self.pods.append(Pod(self, o, i, f"127.0.0.{ip}"))
                ip += 1
        servers = []
        for svc, sip in self.services:
            for p in svc["spec"]["ports"]:
                servers.append(await self.serve(svc, sip, p))
        tasks = []
        for p in self.pods:
            for c in p.containers:
                tasks.append(asyncio.create_task(self.watch(c)))
                tasks.append(asyncio.create_task(self.probe(c, "readinessProbe")))
                tasks.append(asyncio.create_task(self.probe(c, "livenessProbe")))
        log(f"running {len(self.pods)} pods, {len(self.services)} services; "
            f"state in {self.args.state or '-'}")
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for s in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(s, stop.set)
        await stop.wait()
        self.stopping = True
        for s in servers:
            s.close()
        await self.stop_all()
        for t in tasks:
            t.cancel()

    async def stop_all(self):
        procs = [(c, c.proc) for p in self.pods for c in p.containers
                 if c.proc and c.proc.poll() is None]
        for _c, proc in procs:
            proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + max((p.grace for p in self.pods), default=10)
        while time.monotonic() < deadline and any(pr.poll() is None for _c, pr in procs):
            await asyncio.sleep(0.05)
        for c, proc in procs:
            if proc.poll() is None:
                log(f"{c.pod.name}/{c.name} did not stop in its grace period: SIGKILL")
                proc.kill()
                proc.wait()
        self.unclean = []
        for c, proc in procs:
            c.exits.append(proc.returncode)
            if proc.returncode != 0:
                self.unclean.append(f"{c.pod.name}/{c.name} ({proc.returncode})")
        self.dirty()
        if self.unclean:
            log("did not exit 0 on SIGTERM: " + ", ".join(self.unclean))


async def pipe(reader, writer):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except (OSError, asyncio.CancelledError):
        pass
    finally:
        try:
            writer.close()
        except OSError:
            pass


async def http_ok(host, port, path, timeout):
    try:
        r, w = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
        w.write(f"GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
        await w.drain()
        line = await asyncio.wait_for(r.readline(), timeout)
        w.close()
        parts = line.split()
        return len(parts) >= 2 and 200 <= int(parts[1]) < 400
    except (OSError, asyncio.TimeoutError, ValueError):
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--overlay", required=True, help="kustomization directory")
    ap.add_argument("--master", required=True, help="API server URL (the simulator)")
    ap.add_argument("--bin-dir", default="build", help="where the binaries are (build dir)")
    ap.add_argument("--work-dir", help="pods' directories and logs (default: a temp dir)")
    ap.add_argument("--state", help="JSON state file, rewritten on every change")
    ap.add_argument("--replicas", action="append", default=[], metavar="NAME=N",
                    help="override a Deployment's replicas")
    ap.add_argument("--no-apply", action="store_true", help="do not kubectl apply first")
    ap.add_argument("--no-run-as", action="store_true",
                    help="as root, do not switch to the pods' runAsUser")
    args = ap.parse_args()
    reps = {}
    for r in args.replicas:
        name, _, n = r.partition("=")
        if not n.isdigit():
            die(f"--replicas {r}: want NAME=N")
        reps[name] = int(n)
    args.replicas = reps
    if not args.work_dir:
        args.work_dir = tempfile.mkdtemp(prefix="basalt-run-manifests-")
    os.makedirs(args.work_dir, exist_ok=True)
    os.chmod(args.work_dir, 0o755)
    text, objs = render(args.overlay)
    runner = Runner(args, objs)
    write_kubeconfig(runner.kubeconfig, args.master)
    os.chmod(runner.kubeconfig, 0o644)
    if not args.no_apply:
        apply(text, runner.kubeconfig)
    asyncio.run(runner.run())
    #  Like a test's own processes: a container that did not stop cleanly
    #  (exit 0 on SIGTERM, within its grace period) fails the run.
    sys.exit(1 if runner.unclean else 0)


if __name__ == "__main__":
    main()
