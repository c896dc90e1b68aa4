"""Record the request bodies kubectl sends, to keep them as protobuf test fixtures.

Run by hand (not by pytest): ``python tests/kubesim/data/protobuf/capture_kubectl.py [KUBECTL...]``.
For each kubectl binary it starts a tiny HTTP server on 127.0.0.1 that answers discovery and
the few GETs kubectl needs, echoes every write back with the request's own Content-Type (so
kubectl sees a success and prints as usual) and saves the write bodies as
``<version>-<name>.bin`` beside this file, plus ``<version>-<name>.json`` holding what the
same command prints with ``--dry-run=client -o json``. The bytes are what kubectl produced
on this machine; nothing here is copied from elsewhere.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

_CORE = ["namespaces", "configmaps", "secrets", "serviceaccounts", "services", "events", "pods"]
_CORE_KINDS = ["Namespace", "ConfigMap", "Secret", "ServiceAccount", "Service", "Event", "Pod"]
_DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {
        "name": "web",
        "namespace": "default",
        "uid": "0f6c0d0e-0000-4000-8000-000000000001",
        "resourceVersion": "7",
        "generation": 1,
        "creationTimestamp": "2024-05-01T10:00:00Z",
        "labels": {"app": "web"},
    },
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "nginx", "image": "nginx"}]},
        },
    },
    "status": {},
}
_SCALE = {
    "apiVersion": "autoscaling/v1",
    "kind": "Scale",
    "metadata": {"name": "web", "namespace": "default", "resourceVersion": "7"},
    "spec": {"replicas": 1},
    "status": {"replicas": 1, "selector": "app=web"},
}


def _resource_list(group_version: str, names: list[str], kinds: list[str]) -> dict:
    namespaced = {"namespaces": False}
    resources = [
        {
            "name": n,
            "singularName": "",
            "namespaced": namespaced.get(n, True),
            "kind": k,
            "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
        }
        for n, k in zip(names, kinds, strict=True)
    ]
    if group_version == "apps/v1":
        resources.append(
            {
                "name": "deployments/scale",
                "singularName": "",
                "namespaced": True,
                "group": "autoscaling",
                "version": "v1",
                "kind": "Scale",
                "verbs": ["get", "patch", "update"],
            }
        )
    return {"kind": "APIResourceList", "groupVersion": group_version, "resources": resources}


_GROUPS = {"apps": ["deployments"], "rbac.authorization.k8s.io": [], "coordination.k8s.io": []}


class _Recorder(BaseHTTPRequestHandler):
    """Answers discovery and reads; records and echoes writes."""

    records: list[dict] = []

    def log_message(self, format: str, *args: object) -> None:
        return

    def _send(self, code: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _json(self, obj: dict, code: int = 200) -> None:
        self._send(code, json.dumps(obj).encode())

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        if path == "/api":
            self._json({"kind": "APIVersions", "versions": ["v1"]})
        elif path == "/apis":
            groups = [
                {
                    "name": g,
                    "versions": [{"groupVersion": f"{g}/v1", "version": "v1"}],
                    "preferredVersion": {"groupVersion": f"{g}/v1", "version": "v1"},
                }
                for g in _GROUPS
            ]
            self._json({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
        elif path == "/api/v1":
            self._json(_resource_list("v1", _CORE, _CORE_KINDS))
        elif path == "/apis/apps/v1":
            self._json(_resource_list("apps/v1", ["deployments"], ["Deployment"]))
        elif path.endswith("/deployments/web/scale"):
            self._json(_SCALE)
        elif path.endswith("/deployments/web"):
            self._json(_DEPLOYMENT)
        elif re.fullmatch(r"/apis/[^/]+/v1", path):
            self._json(_resource_list(path[len("/apis/") :], [], []))
        else:
            self._json({"kind": "Status", "apiVersion": "v1", "code": 404}, 404)

    def _write(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        ctype = self.headers.get("Content-Type", "")
        accept = self.headers.get("Accept", "")
        self.records.append(
            {
                "method": self.command,
                "path": self.path,
                "content_type": ctype,
                "accept": accept,
                "body": body,
            }
        )
        if self.command == "PATCH" and self.path.split("?")[0].endswith("/scale"):
            self._json({**_SCALE, "spec": json.loads(body)["spec"]})
            return
        self._send(201 if self.command == "POST" else 200, body, ctype or "application/json")

    do_POST = do_PUT = do_PATCH = _write


COMMANDS = {
    "namespace": ["create", "namespace", "dev"],
    "deployment": ["create", "deployment", "web", "--image=nginx"],
    "deployment-full": [
        "create",
        "deployment",
        "api",
        "--image=registry.example/api:1.2",
        "--replicas=0",
        "--port=8080",
        "-n",
        "dev",
        "--",
        "serve",
        "--verbose",
    ],
    "configmap": [
        "create",
        "configmap",
        "settings",
        "--from-literal=mode=fast",
        "--from-literal=level=3",
    ],
    "secret": ["create", "secret", "generic", "creds", "--from-literal=password=s3cr3t"],
    "serviceaccount": ["create", "serviceaccount", "robot"],
    "service": ["create", "service", "clusterip", "web", "--tcp=80:8080"],
    "role": ["create", "role", "reader", "--verb=get,list", "--resource=pods"],
    "rolebinding": [
        "create",
        "rolebinding",
        "rb",
        "--role=reader",
        "--serviceaccount=default:robot",
    ],
    "clusterrole": ["create", "clusterrole", "viewer", "--verb=get", "--resource=configmaps"],
    "clusterrolebinding": [
        "create",
        "clusterrolebinding",
        "crb",
        "--clusterrole=viewer",
        "--user=alice",
    ],
    "scale": ["scale", "deployment", "web", "--replicas=3"],
}


def kubeconfig_for(port: int) -> dict[str, Any]:
    """A kubeconfig for an anonymous client of http://127.0.0.1:<port>."""
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
        "users": [{"name": "u", "user": {}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }


def _version(kubectl: str) -> str:
    out = subprocess.run(
        [kubectl, "version", "--client", "-o", "json"], capture_output=True, text=True, check=True
    )
    info = json.loads(out.stdout)["clientVersion"]
    return f"kubectl{info['major']}.{info['minor'].rstrip('+')}"


def capture(kubectl: str, out_dir: Path = HERE, names: list[str] | None = None) -> None:
    """Run the commands (all by default) against a recorder and save what kubectl sent."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    version = _version(kubectl)
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = Path(tmp) / "config"
        kubeconfig.write_text(json.dumps(kubeconfig_for(server.server_port)))
        env = {**os.environ, "KUBECONFIG": str(kubeconfig), "HOME": tmp}
        for name, args in COMMANDS.items():
            if names is not None and name not in names:
                continue
            _Recorder.records.clear()
            run = subprocess.run([kubectl, *args], capture_output=True, text=True, env=env)
            writes = list(_Recorder.records)
            print(
                f"{version} {name}: rc={run.returncode} {run.stdout.strip()} {run.stderr.strip()}"
            )
            for i, rec in enumerate(writes):
                suffix = "" if i == 0 else f"-{i}"
                stem = f"{version}-{name}{suffix}"
                ext = "bin" if "protobuf" in rec["content_type"] else "body.json"
                (out_dir / f"{stem}.{ext}").write_bytes(rec["body"])
                print(f"  {rec['method']} {rec['path']} {rec['content_type']} -> {stem}.{ext}")
                print(f"    Accept: {rec['accept']}")
            if args[0] == "create":
                cut = args.index("--") if "--" in args else len(args)
                dry_args = [*args[:cut], "--dry-run=client", "-o", "json", *args[cut:]]
                dry = subprocess.run(
                    [kubectl, *dry_args],
                    capture_output=True,
                    text=True,
                    env=env,
                )
                if dry.returncode == 0:
                    (out_dir / f"{version}-{name}.json").write_text(dry.stdout)
    server.shutdown()


def main(argv: list[str]) -> int:
    kubectls = argv or ["kubectl", str(Path(sys.executable).parent / "kubectl")]
    for kubectl in kubectls:
        capture(kubectl)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
