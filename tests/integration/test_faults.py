"""The fault suite: the controller under API faults loses nothing and converges.

Each case runs one workload while kubesim misbehaves in one way: N Foos are created, a third of
them scaled, a quarter deleted, and half of the deleted names created again (a new uid, so the
old Deployment has to be garbage-collected before the new Foo can have its own). Then, within a
deadline, with the fault still on:

- every Foo has exactly one Deployment, controlled by it (same uid), with the Foo's replicas,
  and a status with the right ``availableReplicas`` and ``observedGeneration`` (Ready=True);
- every deleted Foo's Deployment is gone (kubesim's garbage collector deletes it; the check
  waits for that), and no Deployment exists that no live Foo asked for;

and once the fault is lifted:

- the controller's own caches (its listers) hold exactly the server's objects at the server's
  resourceVersions: a deletion missed during a watch gap was still seen, through the relist;
- the workqueue's depth (``workqueue_depth``) is back to 0, and the fault shows in the metrics
  (``workqueue_retries_total``, reconcile errors, ``informer_relists_total`` or
  ``informer_watches_total``, whichever the fault must move);
- nothing unexpected in the logs: no traceback, no ERROR other than the sync errors that the
  injected fault explains, and no exception escaped a thread.

The default suite runs a short version of each case (tens of Foos, a few seconds each); the
``slow`` versions use 200 Foos and the full fault rates. In the short versions the
reflector's back-off (800 ms doubling to 30 s, client-go's) is compressed to 50 ms doubling to
0.4 s, so that a dozen relists fit in seconds; the back-off itself is pinned by unit tests.
"""

from __future__ import annotations

import functools
import logging
import random
import re
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

import pytest

import client.wait
import informer.reflector
from client.errors import APIError, TransportError
from client.rest import resource_path
from controller.foo_controller import FOO_GVR
from controller.main import Components, run
from kubesim import KubeSim
from tests.helpers import CRD, wait_for
from tests.integration.controller_harness import ControllerHarness, foo

NAMESPACE = "default"
FOO_KEY = ("samplecontroller.k8s.io", "foos")  # kubesim storage keys: (group, plural)
DEPLOYMENT_KEY = ("apps", "deployments")
SHORT_N = 40
LONG_N = 200

# Sync errors that an injected fault explains, by fault. Anything else logged at ERROR fails.
TRANSIENT = [
    r"409 Conflict",  # a status or Deployment write raced a newer version: retried
    r"AlreadyExists",  # a create raced the cache (it had not yet seen our own Deployment)
    r'Resource ".*" already exists and is not managed by Foo',  # a re-created Foo meets the
    # previous Foo's Deployment until the garbage collector removes it
]
INJECTED = [r"kubesim: injected", r"Too many requests"]
CONNECTION = [
    r"Connection refused",
    r"Connection aborted",
    r"RemoteDisconnected",
    r"Max retries exceeded",
    r"ProtocolError",
    r"Connection reset",
]


# -- harness ------------------------------------------------------------------------------------


class FaultHarness(ControllerHarness):
    """ControllerHarness that keeps the informers and controller ``run()`` built (its on_start)."""

    def __init__(self, sim: KubeSim, *flags: str) -> None:
        super().__init__(sim, *flags)
        self.parts: Components | None = None  # foo_informer, deployment_informer, controller

    def _run(self) -> None:
        self.exit_code = run(
            self.options,
            self._rest,
            self.stop,
            registry=self.registry,
            ready=self.ready,
            on_start=self._started,
        )

    def _started(self, parts: Components) -> None:
        self.parts = parts


class Chaos:
    """Calls ``action`` every ``interval`` seconds on a named thread until stopped."""

    def __init__(self, name: str, interval: float, action: Callable[[], Any]) -> None:
        self.interval = interval  # seconds between two actions
        self.action = action  # the fault, e.g. sim.faults.close_watches
        self.count = 0  # actions performed so far
        self._stop = threading.Event()  # set by stop(); the thread ends at its next wake-up
        # daemon: a chaos thread left behind by a failed test only disturbs a dead kubesim
        self._thread = threading.Thread(target=self._loop, name=f"chaos-{name}", daemon=True)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.action()
            self.count += 1

    def start(self) -> Chaos:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)


def retrying(fn: Callable[[], Any], *, ok: Iterable[int] = (), timeout: float = 60.0) -> Any:
    """The test's own writes go through the same faults: retry what a fault explains.

    ``ok`` lists status codes that mean "already done" for this call (409 on a create retried
    after a lost answer, 404 on a delete).
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            return fn()
        except APIError as err:
            if err.code in ok:
                return None
            if err.code not in (429, 500, 503, 504) or time.monotonic() > deadline:
                raise
        except TransportError:
            if time.monotonic() > deadline:
                raise
        time.sleep(0.02)  # a retry pause, not synchronisation


# -- the workload and what the world must look like after it -------------------------------------


@dataclass
class Workload:
    """Foos created, scaled, deleted and re-created by the test; ``expected`` is the end state."""

    h: ControllerHarness
    n: int
    pool: ThreadPoolExecutor
    rng: random.Random = field(default_factory=lambda: random.Random(7))
    expected: dict[str, int] = field(default_factory=dict)  # live Foo name -> spec.replicas
    deleted: set[str] = field(default_factory=set)  # names deleted and not re-created

    def _each(self, fn: Callable[[str], Any], names: Iterable[str]) -> None:
        list(self.pool.map(fn, list(names)))  # list(): re-raise the first failure

    def _create(self, name: str) -> None:
        retrying(lambda: self.h.create_foo(foo(name, replicas=self.expected[name])), ok=(409,))

    def create(self) -> None:
        names = [f"foo-{i:03d}" for i in range(self.n)]
        for name in names:
            self.expected[name] = self.rng.randint(1, 3)
        self._each(self._create, names)

    def scale(self) -> None:
        names = sorted(self.expected)[::3]
        for name in names:
            self.expected[name] += 2  # 1..3 -> 3..5: always a change
        self._each(
            lambda name: retrying(
                lambda: self.h.patch_foo(name, {"spec": {"replicas": self.expected[name]}})
            ),
            names,
        )

    def delete(self) -> list[str]:
        names = sorted(self.expected)[1::4]
        for name in names:
            del self.expected[name]
            self.deleted.add(name)
        self._each(lambda name: retrying(lambda: self.h.delete_foo(name), ok=(404,)), names)
        return names

    def recreate(self, names: list[str]) -> None:
        again = names[::2]
        for name in again:
            self.deleted.discard(name)
            self.expected[name] = self.rng.randint(1, 3)
        self._each(self._create, again)

    def run(self, between: Callable[[str], None] = lambda phase: None) -> None:
        """All phases; ``between(phase)`` runs after each (a fault may strike there)."""
        self.create()
        between("created")
        self.scale()
        between("scaled")
        gone = self.delete()
        between("deleted")
        self.recreate(gone)
        between("recreated")


def _objects(sim: KubeSim, key: tuple[str, str]) -> dict[str, dict]:
    # The server's truth, read in-process: no fault, no latency on the test's checks.
    return {
        s.obj["metadata"]["name"]: s.obj
        for s in sim.storage.items(key)
        if s.obj["metadata"].get("namespace") == NAMESPACE
    }


def convergence_problems(sim: KubeSim, w: Workload) -> list[str]:
    """What is still wrong with the world; [] when it is as the workload asked."""
    foos, deployments = _objects(sim, FOO_KEY), _objects(sim, DEPLOYMENT_KEY)
    problems = []
    if set(foos) != set(w.expected):
        problems.append(f"foos differ from the workload: {sorted(set(foos) ^ set(w.expected))}")
    for name, replicas in sorted(w.expected.items()):
        f = foos.get(name)
        if f is None:
            continue
        d = deployments.get(name)
        if d is None:
            problems.append(f"{name}: no deployment")
            continue
        owners = [r for r in d["metadata"].get("ownerReferences") or [] if r.get("controller")]
        if [r.get("uid") for r in owners] != [f["metadata"]["uid"]]:
            problems.append(f"{name}: deployment not controlled by this foo: {owners}")
        if d["spec"].get("replicas") != replicas:
            problems.append(
                f"{name}: deployment replicas {d['spec'].get('replicas')} != {replicas}"
            )
        status = f.get("status") or {}
        if status.get("availableReplicas") != replicas:
            problems.append(
                f"{name}: status.availableReplicas {status.get('availableReplicas')} != {replicas}"
            )
        if status.get("observedGeneration") != f["metadata"]["generation"]:
            problems.append(
                f"{name}: status.observedGeneration {status.get('observedGeneration')}"
                f" != generation {f['metadata']['generation']}"
            )
        ready = [c for c in status.get("conditions") or [] if c.get("type") == "Ready"]
        if [c.get("status") for c in ready] != ["True"]:
            problems.append(f"{name}: Ready condition {ready}")
    for name in sorted(deployments):
        if name not in w.expected:
            problems.append(f"{name}: orphan deployment (owner deleted: {name in w.deleted})")
        elif (
            sum(
                1
                for x in deployments.values()
                for r in x["metadata"].get("ownerReferences") or []
                if r.get("controller") and r.get("kind") == "Foo" and r.get("name") == name
            )
            != 1
        ):
            problems.append(f"{name}: not exactly one deployment controlled by Foo {name}")
    return problems


def cache_problems(sim: KubeSim, h: FaultHarness) -> list[str]:
    """Differences between the controller's caches and the server (keys and resourceVersions)."""
    problems = []
    for what, key, informer_name in (
        ("foo", FOO_KEY, "foo_informer"),
        ("deployment", DEPLOYMENT_KEY, "deployment_informer"),
    ):
        server = {
            f"{NAMESPACE}/{n}": o["metadata"]["resourceVersion"]
            for n, o in _objects(sim, key).items()
        }
        cache = {
            f"{o['metadata']['namespace']}/{o['metadata']['name']}": o["metadata"][
                "resourceVersion"
            ]
            for o in getattr(h.parts, informer_name).lister().list()
        }
        stale = sorted(set(cache) - set(server))
        missing = sorted(set(server) - set(cache))
        behind = sorted(k for k in set(server) & set(cache) if server[k] != cache[k])
        if stale or missing or behind:
            problems.append(
                f"{what} cache: stale {stale[:5]} missing {missing[:5]} behind {behind[:5]}"
            )
    return problems


def until_no_problems(problems: Callable[[], list[str]], timeout: float, what: str) -> None:
    """Poll ``problems`` until it returns []; fail with the latest list after ``timeout``."""
    found: list[str] = []

    def none_left() -> bool:
        found[:] = problems()
        return not found

    wait_for(
        none_left,
        timeout=timeout,
        interval=0.05,
        message=lambda: f"{what}: {len(found)} problems left, e.g. {found[:8]}",
    )


# -- logs and escaped exceptions -----------------------------------------------------------------


@pytest.fixture
def escaped(monkeypatch):
    """Exceptions that ended a thread (threading.excepthook), collected instead of printed."""
    seen: list[threading.ExceptHookArgs] = []
    original = threading.excepthook

    def hook(args: threading.ExceptHookArgs) -> None:
        seen.append(args)
        original(args)

    monkeypatch.setattr(threading, "excepthook", hook)
    return seen


def unexpected_log_records(records: Iterable[logging.LogRecord], allowed: list[str]) -> list[str]:
    """ERROR records other than sync errors whose error the fault explains; any traceback."""
    pattern = re.compile("|".join(allowed)) if allowed else None
    bad = []
    for r in records:
        if r.exc_info:
            bad.append(f"traceback in {r.name}: {r.getMessage()}")
        elif r.levelno >= logging.ERROR:
            error = str(getattr(r, "error", ""))
            if r.getMessage() == "error syncing, requeuing" and pattern and pattern.search(error):
                continue
            bad.append(f"{r.levelname} {r.name}: {r.getMessage()} {error}")
    return bad


def metric(h: ControllerHarness, metric_name: str, **labels: str) -> float:
    return h.metric(metric_name, labels) or 0.0


def informer_metric(h: ControllerHarness, name: str, resource: str) -> float:
    labels = (
        {"name": "samplecontroller", "group": FOO_GVR[0], "version": FOO_GVR[1], "resource": "foos"}
        if resource == "foos"
        else {"name": "kube", "group": "apps", "version": "v1", "resource": "deployments"}
    )
    return h.metric(name, labels) or 0.0


# -- the cases ------------------------------------------------------------------------------------


@dataclass
class Case:
    """One fault: how to switch it on while the workload runs, and what it must leave behind."""

    n: int
    deadline: float  # seconds for the world to converge after the workload
    allowed: list[str]  # regexes of sync errors this fault explains
    workers: int = 2
    compress_backoff: bool = True


pytestmark = pytest.mark.kubesim(deployment_status_delay=0.05)


def run_case(
    sim: KubeSim,
    case: Case,
    caplog,
    escaped,
    monkeypatch,
    fault_on: Callable[[FaultHarness], Chaos | None],
    between: Callable[[FaultHarness, str], None] = lambda h, phase: None,
) -> FaultHarness:
    """Run the workload under the fault; assert convergence, caches, queue, logs; return h."""
    if case.compress_backoff:
        monkeypatch.setattr(
            informer.reflector,
            "ExponentialBackoff",
            functools.partial(client.wait.ExponentialBackoff, initial=0.05, cap=0.4),
        )
    caplog.set_level(logging.INFO)
    h = FaultHarness(sim, "--workers", str(case.workers)).start()
    chaos = None
    try:
        with ThreadPoolExecutor(8, thread_name_prefix="workload") as pool:
            w = Workload(h, case.n, pool)
            chaos = fault_on(h)
            w.run(lambda phase: between(h, phase))
            until_no_problems(lambda: convergence_problems(sim, w), case.deadline, "convergence")
        if chaos is not None:
            chaos.stop()
        sim.faults.clear()
        until_no_problems(lambda: cache_problems(sim, h), case.deadline, "caches equal to server")
        assert not convergence_problems(sim, w)
        wait_for(
            lambda: metric(h, "workqueue_depth", name="foo") == 0,
            timeout=case.deadline,
            message="queue depth 0",
        )
        assert unexpected_log_records(caplog.records, case.allowed) == []
        assert escaped == []
        assert h.parts.controller.workers.alive() == case.workers
        return h
    finally:
        if chaos is not None:
            chaos.stop()
        sim.faults.clear()
        h.shutdown(timeout=30)


# 1. Every watch dropped every 2 s (short: every 0.5 s, which also makes many watches "very
#    short" and so exercises the relist-after-backoff path).


@pytest.mark.parametrize(
    "n,interval,deadline",
    [
        pytest.param(SHORT_N, 0.5, 20, id="short"),
        pytest.param(
            LONG_N, 2.0, 120, id="long", marks=[pytest.mark.slow, pytest.mark.timeout(600)]
        ),
    ],
)
def test_watches_dropped(sim, caplog, escaped, monkeypatch, n, interval, deadline):
    holder: dict[str, Chaos] = {}
    before: dict[str, float] = {}

    def fault_on(h):
        for resource in ("foos", "deployments"):
            before[resource] = informer_metric(h, "informer_watches_total", resource)
        holder["chaos"] = Chaos("close-watches", interval, sim.faults.close_watches).start()
        return holder["chaos"]

    def between(h, phase):
        # at least one drop lands between two phases, whatever the timing
        count = holder["chaos"].count
        wait_for(
            lambda: holder["chaos"].count > count, timeout=interval * 4, message="a watch drop"
        )

    case = Case(n, deadline, TRANSIENT, compress_backoff=(n == SHORT_N))
    h = run_case(sim, case, caplog, escaped, monkeypatch, fault_on, between)
    drops = holder["chaos"].count
    assert drops >= 4
    # every drop was followed by a new watch on both informers
    for resource in ("foos", "deployments"):
        assert informer_metric(h, "informer_watches_total", resource) >= before[resource] + drops


# 2. History compacted so every re-watch gets 410 and relists; on top, a deterministic blackout
#    of list/watch while Foos are deleted, so those deletions can only be learnt from a relist.


@pytest.mark.parametrize(
    "n,interval,deadline",
    [
        pytest.param(SHORT_N, 0.3, 20, id="short"),
        pytest.param(
            LONG_N, 2.0, 180, id="long", marks=[pytest.mark.slow, pytest.mark.timeout(600)]
        ),
    ],
)
def test_history_compacted_every_rewatch_relists(
    sim, caplog, escaped, monkeypatch, n, interval, deadline
):
    ticks = iter(range(1_000_000))

    def compact_and_drop():
        # Another resource is written first (as in any cluster, where etcd's revision moves with
        # every resource), so the compaction passes every informer's last resourceVersion and
        # every re-watch gets 410 Expired.
        i = next(ticks)
        retrying(
            lambda: sim_client.request(
                "POST",
                resource_path("", "v1", "events", NAMESPACE),
                body={
                    "metadata": {"name": f"chaos.{i}"},
                    "involvedObject": {"namespace": NAMESPACE},
                    "reason": "Compaction",
                    "type": "Normal",
                },
            )
        )
        sim.faults.compact()
        sim.faults.close_watches()

    def fault_on(h):
        nonlocal sim_client, chaos
        sim_client = h.client
        chaos = Chaos("compact", interval, compact_and_drop).start()
        return chaos

    def orphans():
        foos = _objects(sim, FOO_KEY)
        return [name for name in _objects(sim, DEPLOYMENT_KEY) if name not in foos]

    sim_client = None
    chaos: Chaos | None = None
    blackout = []

    def between(h, phase):
        # at least one compaction lands between two phases, whatever the timing
        count = chaos.count
        wait_for(lambda: chaos.count > count, timeout=interval * 4, message="a compaction")
        if phase == "scaled":
            # Before the deletions, no list or watch gets through (one rule per resource, so
            # the test can see both informers locked out) and the history is gone: the informers
            # cannot hear of the deletions from a watch; only a relist tells them.
            blackout.extend(
                sim.faults.fail_fraction(1.0, 503, verbs=["list", "watch"], resources=[r])
                for r in ("foos", "deployments")
            )
            compact_and_drop()
            wait_for(
                lambda: all(rule.hits for rule in blackout),
                timeout=10,
                message="both informers locked out",
            )
        elif phase == "deleted":
            # the deletions are done and their Deployments collected; forget those events too,
            # then let lists through again
            wait_for(lambda: not orphans(), timeout=10, message="garbage collection")
            compact_and_drop()
            for rule in blackout:
                sim.faults.remove(rule)

    case = Case(n, deadline, TRANSIENT + INJECTED, compress_backoff=(n == SHORT_N))
    h = run_case(sim, case, caplog, escaped, monkeypatch, fault_on, between)
    # both informers relisted, and the missed Deployment deletions arrived as tombstones: the
    # first list and the relist after the blackout at least (how many compactions find an
    # informer watching, rather than still listing, depends on the machine's load)
    assert chaos.count >= 4
    assert informer_metric(h, "informer_relists_total", "foos") >= 2
    assert informer_metric(h, "informer_relists_total", "deployments") >= 2
    tombstones = [
        r for r in caplog.records if r.getMessage() == "recovered deleted object from tombstone"
    ]
    assert len(tombstones) >= 1
    expired = [r for r in caplog.records if "410" in r.getMessage() or "Expired" in r.getMessage()]
    assert expired, "no re-watch met 410 Expired"


# 3. 20% of requests fail: 429 with Retry-After 1, 500 and 503 in equal shares.


@pytest.mark.parametrize(
    "n,deadline",
    [
        pytest.param(SHORT_N, 20, id="short"),
        pytest.param(LONG_N, 120, id="long", marks=[pytest.mark.slow, pytest.mark.timeout(600)]),
    ],
)
def test_a_fifth_of_requests_fail(sim, caplog, escaped, monkeypatch, n, deadline):
    each = 1 - 0.8 ** (1 / 3)  # three independent rules: 1 - (1 - p)^3 = 20%
    rules = []

    def fault_on(h):
        rules.extend(
            [
                sim.faults.fail_fraction(each, 429, retry_after=1, seed=1),
                sim.faults.fail_fraction(each, 500, seed=2),
                sim.faults.fail_fraction(each, 503, seed=3),
            ]
        )
        return None

    case = Case(n, deadline, TRANSIENT + INJECTED, compress_backoff=(n == SHORT_N))
    h = run_case(sim, case, caplog, escaped, monkeypatch, fault_on)
    assert all(rule.hits > 0 for rule in rules)
    errors = metric(h, "controller_runtime_reconcile_errors_total", controller="foo")
    assert errors >= 3
    # every failed sync was put back with add_rate_limited, which counts a retry
    assert metric(h, "workqueue_retries_total", name="foo") >= errors


# 4. 200 ms added to every request.


@pytest.mark.parametrize(
    "n,workers,deadline",
    [
        pytest.param(20, 6, 25, id="short"),
        pytest.param(LONG_N, 2, 400, id="long", marks=[pytest.mark.slow, pytest.mark.timeout(900)]),
    ],
)
def test_slow_server(sim, caplog, escaped, monkeypatch, n, workers, deadline):
    rule = {}

    def fault_on(h):
        rule["latency"] = sim.faults.add_latency(0.2)
        return None

    case = Case(n, deadline, TRANSIENT, workers=workers, compress_backoff=False)
    h = run_case(sim, case, caplog, escaped, monkeypatch, fault_on)
    assert rule["latency"].hits > n
    # every reconcile that wrote waited on the server: the mean is well above a fast one's
    total = metric(h, "controller_runtime_reconcile_time_seconds_sum", controller="foo")
    count = metric(h, "controller_runtime_reconcile_time_seconds_count", controller="foo")
    assert count >= n and total / count > 0.1


# 5. kubesim restarted, state kept, while the controller has work queued: Deployment creates are
#    slowed a little so that keys are still queued when the server goes down; it stays down
#    until the controller has failed and re-queued syncs, then comes back on the same port.


@pytest.mark.parametrize(
    "n,deadline,phases",
    [
        pytest.param(SHORT_N, 20, ("created",), id="short"),
        pytest.param(
            LONG_N,
            120,
            ("created", "scaled", "deleted", "recreated"),
            id="long",
            marks=[pytest.mark.slow, pytest.mark.timeout(600)],
        ),
    ],
)
def test_server_restarted_while_work_is_queued(
    sim, caplog, escaped, monkeypatch, n, deadline, phases
):
    queued_at_restart = []
    slow_creates = []

    def fault_on(h):
        slow_creates.append(
            sim.faults.add_latency(0.05, verbs=["create"], resources=["deployments"])
        )
        return None

    def between(h, phase):
        if phase not in phases:
            return
        before = metric(h, "controller_runtime_reconcile_errors_total", controller="foo")
        queued_at_restart.append(metric(h, "workqueue_depth", name="foo"))
        sim.stop()
        try:
            wait_for(
                lambda: (
                    metric(h, "controller_runtime_reconcile_errors_total", controller="foo")
                    > before
                ),
                timeout=10,
                message="a sync failing against the stopped server",
            )
        finally:
            sim.start()
        for rule in slow_creates:
            sim.faults.remove(rule)

    case = Case(n, deadline, TRANSIENT + CONNECTION, compress_backoff=(n == SHORT_N))
    h = run_case(sim, case, caplog, escaped, monkeypatch, fault_on, between)
    assert len(queued_at_restart) == len(phases)
    assert queued_at_restart[0] > 0, "the first restart found no work queued"
    assert metric(h, "workqueue_retries_total", name="foo") >= len(phases)


# 6. kubesim replaced by a new one with fresh state on the same address (an apiserver whose etcd
#    was wiped). The new server's resourceVersions start above the old one's, so the informers'
#    re-watch from their old RV gets 410 Expired, they relist, and the controller converges on
#    the new world: the old Foos are forgotten, a Foo created after the switch gets its
#    Deployment.


RESOURCES = ("foos", "deployments")


def test_server_replaced_with_fresh_state_relists_and_converges(caplog, escaped, monkeypatch):
    monkeypatch.setattr(
        informer.reflector,
        "ExponentialBackoff",
        functools.partial(client.wait.ExponentialBackoff, initial=0.05, cap=0.4),
    )
    caplog.set_level(logging.INFO)
    old = KubeSim(crds=[CRD], deployment_status_delay=0.05).start()
    h = FaultHarness(old, "--workers", "2").start()
    new: KubeSim | None = None
    try:
        for i in range(5):
            h.create_foo(foo(f"before-{i}", replicas=2))
        wait_for(
            lambda: len(_objects(old, DEPLOYMENT_KEY)) == 5, message="the old server's Deployments"
        )
        old_rv = old.resource_version
        relists = {r: informer_metric(h, "informer_relists_total", r) for r in RESOURCES}
        old.close()
        new = KubeSim(old.host, old.port, crds=[CRD], deployment_status_delay=0.05).start()
        assert new.url == old.url and new.resource_version > old_rv

        h.create_foo(foo("after", replicas=3))
        f = wait_for(
            lambda: (
                (h.get_foo("after").get("status") or {}).get("availableReplicas") == 3
                and h.get_foo("after")
            ),
            timeout=20,
            message="the Foo created after the switch converged",
        )
        dep = h.get_deployment("after")
        assert dep["metadata"]["ownerReferences"][0]["uid"] == f["metadata"]["uid"]
        assert set(_objects(new, FOO_KEY)) == {"after"}
        assert set(_objects(new, DEPLOYMENT_KEY)) == {"after"}  # none re-created for old Foos
        # both informers met 410 on their old RV and relisted; their caches are the new world
        for r in RESOURCES:
            wait_for(
                lambda r=r: informer_metric(h, "informer_relists_total", r) > relists[r],
                message=f"a relist of {r}",
            )
        stale_watches = [
            rec
            for rec in new.request_log
            if rec.verb == "watch"
            and int(parse_qs(rec.query).get("resourceVersion", ["0"])[0]) <= old_rv
        ]
        assert stale_watches, "no informer re-watched from the old server's RV"
        until_no_problems(lambda: cache_problems(new, h), 10, "caches equal to the new server")
        assert unexpected_log_records(caplog.records, TRANSIENT + CONNECTION) == []
        assert escaped == []
    finally:
        h.shutdown(timeout=30)
        old.close()
        if new is not None:
            new.close()
