"""Fault injection: the failures a controller must survive, on demand, from Python or HTTP.

No upstream twin: this is what chaos testing against a real cluster would do by hand (kill the
apiserver, throttle it, compact etcd). Each fault maps to a real-world event:

- ``close_watches()``       the apiserver ends every watch (rollout, watch timeout, LB reset);
- ``fail_next(n, code)``    the next n matching requests fail (429 with Retry-After, 500, 503, 504);
- ``fail_fraction(p, code)`` each matching request fails with probability p (a flaky network path);
- ``add_latency(seconds)``  every matching request is delayed (an overloaded server);
- ``compact()``             etcd compaction that also empties every watch window: the next watch,
                            continue or Exact list from an older RV gets 410;
- ``restart()``             the apiserver restarts on the same address with its state kept.

The same faults are served over HTTP for out-of-process clients (the demo, kubectl users):
``GET /kubesim/faults`` shows them, ``POST /kubesim/faults`` with a JSON body adds one
({"action": "fail", "count": 3, "code": 503, "verbs": ["list"], "resources": ["foos"]};
actions: fail, latency, closeWatches, compact, restart, bookmarks), ``DELETE /kubesim/faults``
clears them, and ``GET /kubesim/requests`` returns the request log.
"""

from __future__ import annotations

import json
import random
import threading
import time
from dataclasses import asdict, dataclass, field

from kubesim.api import errors
from kubesim.server.responses import send_json

__all__ = ["FaultInjector", "FaultRule"]

_MESSAGES = {
    429: "Too many requests, please try again later.",
    500: "kubesim: injected internal error",
    503: "kubesim: injected: the server is currently unable to handle the request",
    504: "kubesim: injected: the server was unable to return a response in the time allotted",
}


@dataclass
class FaultRule:
    """One failure or latency rule; a request matches when its verb and resource match."""

    code: int = 500  # HTTP status to answer with (0 for a latency-only rule)
    remaining: int | None = None  # requests left to fail; None = no count limit
    probability: float = 1.0  # chance that a matching request is affected
    verbs: list[str] | None = None  # e.g. ["list", "watch"]; None matches every verb
    resources: list[str] | None = None  # plurals, e.g. ["foos"]; None matches every resource
    retry_after: int = 1  # Retry-After seconds for 429 (and retryAfterSeconds in the Status)
    latency: float = 0.0  # seconds to sleep before answering (latency rules)
    hits: int = 0  # how many requests this rule has affected so far
    seed: int | None = field(default=None, repr=False)  # seed for probability draws (tests)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def matches(self, verb: str, resource: str) -> bool:
        if self.verbs is not None and verb not in self.verbs:
            return False
        if self.resources is not None and resource.split("/")[0] not in self.resources:
            return False
        return True

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("seed", None)
        return d


class FaultInjector:
    """Holds the active fault rules; ``before_request`` applies them to each API request."""

    def __init__(self, sim) -> None:
        self.sim = sim  # the KubeSim (close watches, compact, restart act on it)
        self._lock = threading.Lock()  # guards _rules
        self._rules: list[FaultRule] = []  # active rules, checked in order

    # ---- Python API ----------------------------------------------------------------------------

    def fail_next(
        self, n: int, code: int = 500, *, verbs=None, resources=None, retry_after: int = 1
    ) -> FaultRule:
        """Fail the next n requests matching verbs/resources with `code`."""
        return self._add(
            FaultRule(
                code=code,
                remaining=n,
                verbs=_list(verbs),
                resources=_list(resources),
                retry_after=retry_after,
            )
        )

    def fail_fraction(
        self,
        p: float,
        code: int = 503,
        *,
        verbs=None,
        resources=None,
        retry_after: int = 1,
        seed: int | None = None,
    ) -> FaultRule:
        """Fail each matching request with probability p until cleared."""
        return self._add(
            FaultRule(
                code=code,
                probability=p,
                verbs=_list(verbs),
                resources=_list(resources),
                retry_after=retry_after,
                seed=seed,
            )
        )

    def add_latency(self, seconds: float, *, verbs=None, resources=None) -> FaultRule:
        """Delay every matching request by `seconds` until cleared."""
        return self._add(
            FaultRule(code=0, latency=seconds, verbs=_list(verbs), resources=_list(resources))
        )

    def remove(self, rule: FaultRule) -> None:
        with self._lock:
            if rule in self._rules:
                self._rules.remove(rule)

    def clear(self) -> None:
        """Remove every failure and latency rule."""
        with self._lock:
            self._rules.clear()

    @property
    def rules(self) -> list[FaultRule]:
        with self._lock:
            return list(self._rules)

    def close_watches(self) -> int:
        """End every open watch stream now (cleanly, as a server-side close); returns the count."""
        return self.sim.storage.close_all_watchers("closed by fault injection")

    def compact(self) -> None:
        """Compact etcd to now and start every watch window over at the current RV: watches,
        continues and Exact lists from any older RV get 410 Expired."""
        self.sim.storage.compact()

    def restart(self) -> None:
        """Stop and start the server on the same port; objects and history are kept."""
        self.sim.restart()

    def _add(self, rule: FaultRule) -> FaultRule:
        if rule.code not in (0, 429, 500, 503, 504):
            raise ValueError(f"unsupported fault code {rule.code} (use 429, 500, 503 or 504)")
        with self._lock:
            self._rules.append(rule)
        return rule

    # ---- the request hook ----------------------------------------------------------------------

    def before_request(self, verb: str, resource: str) -> None:
        """Sleep for matching latency rules, then raise the first matching failure."""
        if not self._rules:
            return
        delay = 0.0
        failure: FaultRule | None = None
        with self._lock:
            for rule in list(self._rules):
                if not rule.matches(verb, resource):
                    continue
                if rule.code == 0:
                    delay += rule.latency
                    rule.hits += 1
                    continue
                if failure is not None or rule._rng.random() >= rule.probability:
                    continue
                failure = rule
                rule.hits += 1
                if rule.remaining is not None:
                    rule.remaining -= 1
                    if rule.remaining <= 0:
                        self._rules.remove(rule)
        if delay:
            time.sleep(delay)
        if failure is not None:
            raise _error(failure)

    # ---- HTTP admin API ------------------------------------------------------------------------

    def handle_admin(self, server, h, req, body: bytes) -> None:
        path = req.path.rstrip("/")
        req.resource = path
        if path == "/kubesim/requests" and req.method == "GET":
            log = [asdict(r) for r in server.request_log]
            return send_json(h, req, 200, {"items": log})
        if path != "/kubesim/faults":
            raise errors.page_not_found()
        if req.method == "GET":
            return send_json(h, req, 200, {"rules": [r.to_dict() for r in self.rules]})
        if req.method == "DELETE":
            self.clear()
            return send_json(h, req, 200, {"rules": []})
        if req.method != "POST":
            raise errors.method_not_allowed()
        try:
            spec = json.loads(body or b"{}")
            out = self._apply_admin(spec)
        except (ValueError, TypeError, KeyError) as e:
            raise errors.bad_request(f"bad fault request: {e}") from None
        send_json(h, req, 200, out)
        if spec.get("action") == "restart":
            # After the answer is out: restarting closes this very connection.
            threading.Thread(target=self.restart, name="kubesim-admin-restart", daemon=True).start()

    def _apply_admin(self, spec: dict) -> dict:
        action = spec.get("action")
        common = {"verbs": spec.get("verbs"), "resources": spec.get("resources")}
        if action == "fail":
            if "probability" in spec:
                rule = self.fail_fraction(
                    float(spec["probability"]),
                    int(spec.get("code", 503)),
                    retry_after=int(spec.get("retryAfter", 1)),
                    **common,
                )
            else:
                rule = self.fail_next(
                    int(spec.get("count", 1)),
                    int(spec.get("code", 500)),
                    retry_after=int(spec.get("retryAfter", 1)),
                    **common,
                )
            return rule.to_dict()
        if action == "latency":
            return self.add_latency(float(spec["seconds"]), **common).to_dict()
        if action == "closeWatches":
            return {"closed": self.close_watches()}
        if action == "compact":
            self.compact()
            return {"compacted": True, "resourceVersion": str(self.sim.storage.rv)}
        if action == "bookmarks":
            self.sim.send_bookmarks()
            return {"requested": True}
        if action == "restart":
            return {"restarting": True}
        raise ValueError(f"unknown action {action!r}")


def _list(v) -> list[str] | None:
    if v is None:
        return None
    return [v] if isinstance(v, str) else list(v)


def _error(rule: FaultRule) -> errors.ApiError:
    code = rule.code
    if code == 429:
        return errors.too_many_requests(rule.retry_after, _MESSAGES[429])
    if code == 500:
        return errors.internal_error(_MESSAGES[500])
    if code == 503:
        return errors.service_unavailable(_MESSAGES[503])
    return errors.timeout(_MESSAGES[504], retry_after=rule.retry_after)
