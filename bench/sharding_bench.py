"""Sharding (--sharding, issue 21): N Foos shared among 1, 2 and 3 replicas on kubesim.

    python -m bench.sharding_bench [--foos 300] [--replicas 1,2,3] [--gate on,off]
                                   [--buckets 64] [--lease 4]

No client-go twin: neither client-go nor sample-controller shards (docs/sharding.md). Each run
starts a fresh kubesim in this process (with the ShardedListAndWatch gate on, so the Foo
informers are filtered by the server, or off, so each replica drops foreign Foos itself) and the
replicas as child processes (``python -m controller --sharding``, the real CLI, as
``bench.e2e.harness`` runs the controller), waits until they have split the buckets, then:

- creates N Foos at once (inside kubesim, as ``bench.e2e.harness.create_foos`` does) and times
  the convergence: every Foo's Deployment made and its status showing the replicas available;
- reads each replica's CPU seconds over that burst and its RSS (now and peak) from /proc, the
  buckets it claims and the Foos and Deployments of those buckets (what its informers hold once
  scoped), and the objects its client-side filter dropped (its /metrics);
- with 2 or more replicas, stops one gracefully (SIGTERM) and, on the next run of the same
  size, kills one (SIGKILL), and times the handover: from the signal until every Foo of the
  stopped replica's buckets, changed at the moment of the signal, has converged under its new
  owner. A graceful stop hands the buckets over at once; a killed replica's claims stand until
  its Lease expires (--lease seconds), no sooner, by design.

Every figure is printed beside the baseline of the same run and size: one replica of the same
checkout without --sharding (the controller as it was), and the ratio to it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.e2e.harness import CRD, NAMESPACE, PY, ROOT, create_foos, foo_names, free_port
from bench.e2e.measure import Tracker, cpu_seconds
from kubesim import KubeSim
from runtime.sharding.assignment import assign, bucket_of_uid, decode_buckets
from runtime.sharding.membership import BUCKETS_ANNOTATION, RING_LABEL

FOO_KEY = ("samplecontroller.k8s.io", "foos")
DEPLOY_KEY = ("apps", "deployments")
LEASE_KEY = ("coordination.k8s.io", "leases")
FOO_GVR = ("samplecontroller.k8s.io", "v1alpha1", "foos")
TIMEOUT = 300.0  # seconds any one wait may take before the run is declared broken


@dataclasses.dataclass
class Replica:
    """One controller process under test."""

    name: str
    proc: subprocess.Popen[bytes]
    metrics_port: int
    probe_port: int
    log_path: Path

    def get(self, port: int, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as err:
            return err.code, ""
        except OSError:
            return 0, ""

    def metric(self, name: str) -> float:
        """The sum of a metric's samples on the replica's /metrics (0 when absent)."""
        code, text = self.get(self.metrics_port, "/metrics")
        total = 0.0
        for line in text.splitlines() if code == 200 else []:
            if line.startswith((name + "{", name + " ")):
                total += float(line.rsplit(" ", 1)[1])
        return total

    def rss_mib(self) -> tuple[float, float]:
        """(current, peak) resident set size in MiB, from /proc/<pid>/status."""
        fields = {}
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                fields[key] = value.strip()
        return (int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024)


def wait(cond, what: str, timeout: float = TIMEOUT, every: float = 0.05) -> float:
    """Poll ``cond`` until true; the monotonic time it became so."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(every)
    return time.monotonic()


class Run:
    """kubesim and its replicas for one configuration."""

    def __init__(self, workdir: Path, gate: bool, buckets: int, lease: float) -> None:
        self.workdir, self.buckets, self.lease = workdir, buckets, lease
        self.sim = KubeSim(
            crds=[CRD],
            deployment_status_delay=0.0,
            history_size=500_000,
            request_log_size=2_000_000,
            sharded_list_and_watch=gate,
        )
        self.tracker = Tracker()
        self.sim.storage.add_listener(self.tracker)
        self.sim.start()
        self.kubeconfig = str(self.sim.write_kubeconfig(workdir / "kubeconfig"))
        self.replicas: list[Replica] = []

    def start(self, name: str, sharding: bool) -> Replica:
        metrics, probes = free_port(), free_port()
        renew = self.lease * 0.75
        retry = self.lease / 4
        args = [
            PY,
            "-m",
            "controller",
            "--kubeconfig",
            self.kubeconfig,
            "--metrics-bind-address",
            f"127.0.0.1:{metrics}",
            "--metrics-secure=false",
            "--health-probe-bind-address",
            f"127.0.0.1:{probes}",
            "--resync-period",
            "30s",
            # no client-side throttle (client-go's default 20 QPS would be what is measured),
            # as bench.e2e.harness runs the controller
            "--kube-api-qps",
            "0",
            # the replica's name (its Lease, its User-Agent): one host, so one name per process
            "--identity",
            name,
        ]
        if sharding:
            args += [
                "--sharding",
                "--sharding-buckets",
                str(self.buckets),
                "--leader-elect-namespace",
                NAMESPACE,
                "--leader-elect-lease-duration",
                f"{self.lease:g}s",
                "--leader-elect-renew-deadline",
                f"{renew:g}s",
                "--leader-elect-retry-period",
                f"{retry:g}s",
            ]
        log_path = self.workdir / f"{name}.log"
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(
                args,
                cwd=ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        replica = Replica(name, proc, metrics, probes, log_path)
        self.replicas.append(replica)
        return replica

    def ready(self, replica: Replica) -> None:
        def up() -> bool:
            exited = replica.proc.poll() is not None
            return exited or replica.get(replica.probe_port, "/readyz")[0] == 200

        wait(up, f"{replica.name} to be ready")
        if replica.proc.poll() is not None:
            raise RuntimeError(f"{replica.name} exited; see {replica.log_path}")

    def claims(self) -> dict[str, frozenset[int]]:
        """Lease name -> the buckets its holder claims (acts on), for the ring's Leases."""
        out = {}
        for stored in self.sim.storage.items(LEASE_KEY):
            meta = stored.obj["metadata"]
            if RING_LABEL in (meta.get("labels") or {}):
                claim = (meta.get("annotations") or {}).get(BUCKETS_ANNOTATION, "")
                out[meta["name"]] = frozenset(decode_buckets(claim))
        return out

    def split(self, names: list[str]) -> bool:
        """Each replica named claims exactly the buckets the assignment over them gives it:
        the steady state, every handover done."""
        claims = self.claims()
        assignment = assign(names, self.buckets)
        want = {n: frozenset(b for b, owner in assignment.items() if owner == n) for n in names}
        # a killed replica's Lease stays (expired) until someone deletes it: not a member
        return {n: claims.get(n) for n in names} == want

    def foo_buckets(self) -> dict[str, int]:
        """Foo name -> its bucket."""
        return {
            s.obj["metadata"]["name"]: bucket_of_uid(s.obj["metadata"]["uid"], self.buckets)
            for s in self.sim.storage.items(FOO_KEY)
        }

    def touch(self, names: list[str]) -> None:
        """Change spec.replicas of these Foos (1 -> 2 -> 3 -> 1), so each needs a reconcile."""
        info = self.sim.registry.lookup(*FOO_GVR)
        for name in names:
            obj = self.sim.storage.get(FOO_KEY, NAMESPACE, name).obj
            body = json.loads(json.dumps(obj))
            body["spec"]["replicas"] = 1 + body["spec"].get("replicas", 1) % 3
            self.sim.rest.update(info, NAMESPACE, name, body, {})

    def close(self) -> None:
        for r in self.replicas:
            if r.proc.poll() is None:
                r.proc.send_signal(signal.SIGTERM)
        for r in self.replicas:
            try:
                r.proc.wait(30)
            except subprocess.TimeoutExpired:
                r.proc.kill()
                r.proc.wait(5)
        self.sim.close()


@contextmanager
def run(gate: bool, buckets: int, lease: float) -> Iterator[Run]:
    with tempfile.TemporaryDirectory(prefix="sharding-bench-") as tmp:
        r = Run(Path(tmp), gate, buckets, lease)
        try:
            yield r
        except BaseException:
            for replica in r.replicas:
                print(f"--- {replica.log_path.name} (last lines)", file=sys.stderr)
                lines = replica.log_path.read_text(errors="replace").splitlines()
                print("\n".join(lines[-20:]), file=sys.stderr)
            raise
        finally:
            r.close()


@dataclasses.dataclass
class Result:
    label: str
    replicas: int
    converge_s: float
    cpu_s: list[float]  # per replica, over the burst
    rss_mib: list[float]  # per replica, after the burst
    peak_mib: list[float]
    foos: list[int]  # per replica: Foos of its buckets
    deployments: list[int]
    dropped: list[float]  # per replica: objects its client-side filter dropped
    handover_s: float | None = None  # graceful (SIGTERM) or forced (SIGKILL), see kind
    handover_kind: str = ""
    handover_foos: int = 0


def measure(n: int, replicas: int, gate: bool, buckets: int, lease: float, stop: str) -> Result:
    """One configuration: convergence of n new Foos, then (replicas >= 2) one handover."""
    sharding = replicas > 0
    count = max(replicas, 1)
    with run(gate, buckets, lease) as r:
        names = [f"replica-{i}" for i in range(count)]
        started = [r.start(name, sharding) for name in names]
        for replica in started:
            r.ready(replica)
        if sharding:
            wait(lambda: r.split(names), "the replicas to split the buckets")
        # one warm-up Foo: imports, first lists and watches happen before anything is timed
        r.tracker.arm(["warmup"])
        create_foos(r.sim, ["warmup"])
        if not r.tracker.done.wait(TIMEOUT):
            raise RuntimeError("the warm-up Foo did not converge")

        foos = foo_names(n)
        cpu0 = [cpu_seconds(x.proc.pid) for x in started]
        r.tracker.arm(foos)
        t0 = time.monotonic()
        create_foos(r.sim, foos)
        if not r.tracker.done.wait(TIMEOUT):
            raise RuntimeError(f"{len(r.tracker.pending)} Foos did not converge")
        converge = r.tracker.done_at - t0
        cpu = [cpu_seconds(x.proc.pid) - c for x, c in zip(started, cpu0, strict=True)]
        rss = [x.rss_mib() for x in started]

        by_foo = r.foo_buckets()
        claims = r.claims() if sharding else {names[0]: frozenset(range(buckets))}
        held = [claims.get(name, frozenset()) for name in names]
        own_foos = [sum(1 for b in by_foo.values() if b in h) for h in held]
        # a Foo's Deployment has its name and its bucket
        deps = {s.obj["metadata"]["name"] for s in r.sim.storage.items(DEPLOY_KEY)}
        own_deps = [sum(1 for f, b in by_foo.items() if b in h and f in deps) for h in held]
        dropped = [x.metric("sharding_objects_dropped_total") for x in started]
        result = Result(
            label=(f"{count} sharded" if sharding else "1 unsharded")
            + (" (2)" if stop == "kill" else ""),
            replicas=count,
            converge_s=converge,
            cpu_s=cpu,
            rss_mib=[a for a, _ in rss],
            peak_mib=[b for _, b in rss],
            foos=own_foos,
            deployments=own_deps,
            dropped=dropped,
        )
        if sharding and count >= 2:
            victim, rest = started[-1], names[:-1]
            moved = [f for f, b in by_foo.items() if b in claims[victim.name]]
            r.tracker.arm(moved)
            t0 = time.monotonic()
            victim.proc.send_signal(signal.SIGTERM if stop == "graceful" else signal.SIGKILL)
            r.touch(moved)
            if not r.tracker.done.wait(TIMEOUT):
                raise RuntimeError(f"{len(r.tracker.pending)} moved Foos did not converge")
            result.handover_s = r.tracker.done_at - t0
            result.handover_kind = "SIGTERM" if stop == "graceful" else "SIGKILL"
            result.handover_foos = len(moved)
            wait(lambda: r.split(rest), "the survivors to split the buckets")
        return result


def fmt_ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}x" if base else "-"


def report(n: int, gate: bool, results: list[Result]) -> None:
    base = results[0]
    print(f"\n== {n} Foos, ShardedListAndWatch {'on' if gate else 'off'} (kubesim)")
    head = (
        f"{'replicas':<16} {'converge s':>11} {'Foos/s':>8} {'CPU total':>14} "
        f"{'CPU s/replica':>22} {'RSS MiB/replica':>22} {'peak MiB':>18} "
        f"{'Foos cached':>18} {'deps cached':>18} {'dropped':>14}"
    )
    print(head)

    def each(values: list[float], spec: str) -> str:
        return "/".join(format(v, spec) for v in values)

    for res in results:
        rate = n / res.converge_s
        slower = fmt_ratio(res.converge_s, base.converge_s)
        line = (
            f"{res.label:<16} {res.converge_s:>6.2f} {slower:>5}"
            f" {rate:>8.0f}"
            f" {sum(res.cpu_s):>6.2f} {fmt_ratio(sum(res.cpu_s), base.cpu_s[0]):>7}"
            f" {each(res.cpu_s, '.2f'):>14} {fmt_ratio(max(res.cpu_s), base.cpu_s[0]):>7}"
            f" {each(res.rss_mib, '.0f'):>14} {fmt_ratio(max(res.rss_mib), base.rss_mib[0]):>7}"
            f" {each(res.peak_mib, '.0f'):>18}"
            f" {each(res.foos, 'd'):>18} {each(res.deployments, 'd'):>18}"
            f" {each(res.dropped, '.0f'):>14}"
        )
        print(line)
    for res in results:
        if res.handover_s is not None:
            print(
                f"handover after {res.handover_kind} of 1 of {res.replicas}: "
                f"{res.handover_foos} Foos changed at the signal converged in "
                f"{res.handover_s:.2f} s"
            )
    print(
        "ratios: to the unsharded replica of the same run (CPU s/replica and RSS: the busiest"
        " replica's); cached: the Foos and Deployments of the buckets each replica claims;"
        " (2): the same size again, for the SIGKILL handover"
    )


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.sharding_bench", description=__doc__)
    # 300 alone by default, so that `make bench` stays short; docs/benchmarks.md's figures
    # add 1000 and 5000
    p.add_argument("--foos", default="300", help="Foo counts, comma-separated")
    p.add_argument("--replicas", default="1,2,3", help="replica counts, comma-separated")
    p.add_argument("--gate", default="on,off", help="ShardedListAndWatch: on, off or both")
    p.add_argument("--buckets", type=int, default=64, help="--sharding-buckets")
    p.add_argument("--lease", type=float, default=4.0, help="lease duration, seconds")
    a = p.parse_args(argv)
    counts = [int(x) for x in a.foos.split(",")]
    sizes = [int(x) for x in a.replicas.split(",")]
    gates = [x.strip() == "on" for x in a.gate.split(",")]
    print(
        f"bench.sharding_bench: buckets={a.buckets} lease={a.lease:g}s "
        f"cpus={os.cpu_count()} python={sys.version.split()[0]}"
    )
    for gate in gates:
        for n in counts:
            results = [measure(n, 0, gate, a.buckets, a.lease, "graceful")]
            for size in sizes:
                # the largest size is run twice, once per way of stopping a replica
                stops = ["graceful", "kill"] if size == max(sizes) and size >= 2 else ["graceful"]
                for stop in stops:
                    results.append(measure(n, size, gate, a.buckets, a.lease, stop))
            report(n, gate, results)


if __name__ == "__main__":
    main()
