"""A bare control plane for e2e tests: etcd and kube-apiserver from ``$KUBEBUILDER_ASSETS``.

Twin of controller-runtime's envtest (``pkg/internal/testing/controlplane``: etcd.go and
apiserver.go), with the flags it passes, plus what this suite needs on top:

- certificates made with the ``openssl`` CLI: a CA, a serving certificate for 127.0.0.1 /
  localhost signed by it, and a service-account signing key pair (so the TokenRequest API can
  mint ServiceAccount tokens);
- a static token file with one admin user in ``system:masters`` (the kubeconfig's credential);
- ``--authorization-mode=RBAC``, so the controller's ServiceAccount has exactly the rights
  manifests/base/rbac.yaml gives it;
- ``--endpoint-reconciler-type=none``: on loopback the advertise address is 127.0.0.1, which
  the apiserver's own ``kubernetes`` Endpoints would fail validation with.

Get the binaries with ``setup-envtest`` (see docs/testing.md, "End-to-end tests"):
``export KUBEBUILDER_ASSETS=$(setup-envtest use -p path)``. There is no kube-controller-manager:
no garbage collection, no Deployment status, no namespace finalization.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import yaml

__all__ = ["EnvTest", "EnvTestError"]

START_TIMEOUT = 60.0  # seconds for etcd and the apiserver together to become healthy
STOP_TIMEOUT = 20.0  # seconds between SIGTERM and SIGKILL, for both processes together


class EnvTestError(RuntimeError):
    """The control plane could not be started; the message says which part and why."""


def free_port() -> int:
    """A port free on 127.0.0.1 right now (envtest's addr.Suggest; a small race is accepted)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _openssl(*args: str) -> None:
    openssl = shutil.which("openssl")
    if openssl is None:
        raise EnvTestError("envtest needs the openssl command-line tool on PATH")
    subprocess.run([openssl, *args], check=True, capture_output=True)


def make_certificates(directory: Path) -> dict[str, Path]:
    """CA, serving cert/key for 127.0.0.1 and localhost, service-account key pair."""
    d = directory
    _openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        str(d / "ca.key"),
        "-out",
        str(d / "ca.crt"),
        "-days",
        "2",
        "-subj",
        "/CN=envtest-ca",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,digitalSignature,keyCertSign",
    )
    _openssl(
        "req",
        "-new",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        str(d / "apiserver.key"),
        "-out",
        str(d / "apiserver.csr"),
        "-subj",
        "/CN=kube-apiserver",
    )
    (d / "serving.ext").write_text(
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
        "basicConstraints=critical,CA:FALSE\n"
        "keyUsage=critical,digitalSignature,keyEncipherment\n"
        "extendedKeyUsage=serverAuth\n"
    )
    _openssl(
        "x509",
        "-req",
        "-in",
        str(d / "apiserver.csr"),
        "-CA",
        str(d / "ca.crt"),
        "-CAkey",
        str(d / "ca.key"),
        "-CAcreateserial",
        "-out",
        str(d / "apiserver.crt"),
        "-days",
        "2",
        "-extfile",
        str(d / "serving.ext"),
    )
    # service-account token signing: private key for the signer, public key for verification
    _openssl(
        "genpkey",
        "-algorithm",
        "RSA",
        "-pkeyopt",
        "rsa_keygen_bits:2048",
        "-out",
        str(d / "sa-signer.key"),
    )
    _openssl("pkey", "-in", str(d / "sa-signer.key"), "-pubout", "-out", str(d / "sa-signer.pub"))
    return {
        name: d / name
        for name in ("ca.crt", "apiserver.crt", "apiserver.key", "sa-signer.key", "sa-signer.pub")
    }


class EnvTest:
    """etcd + kube-apiserver on loopback; ``start()`` returns the admin kubeconfig path."""

    def __init__(
        self,
        assets: str | os.PathLike,
        workdir: str | os.PathLike | None = None,
        log_dir: str | os.PathLike | None = None,
    ) -> None:
        self.assets = Path(assets)  # directory with etcd and kube-apiserver (KUBEBUILDER_ASSETS)
        self._tmp = None if workdir else tempfile.TemporaryDirectory(prefix="envtest-")
        self.workdir = Path(workdir or self._tmp.name)  # certs, etcd data, kubeconfig
        self.log_dir = Path(log_dir) if log_dir else self.workdir  # etcd.log, kube-apiserver.log
        self.admin_token = uuid.uuid4().hex  # the admin's bearer token (token file)
        self.etcd: subprocess.Popen | None = None
        self.apiserver: subprocess.Popen | None = None
        self.etcd_url = ""  # http://127.0.0.1:<port>
        self.server_url = ""  # https://127.0.0.1:<port>
        self.kubeconfig = ""  # admin kubeconfig path, once started
        self._deadline = 0.0  # time.monotonic() by which start() must have finished
        self._timeout = START_TIMEOUT  # what start() was given, for messages

    def _binary(self, name: str) -> str:
        path = self.assets / name
        if not os.access(path, os.X_OK):
            raise EnvTestError(
                f"{name} not found or not executable in KUBEBUILDER_ASSETS="
                f"{self.assets} (get the binaries with setup-envtest)"
            )
        return str(path)

    def _spawn(self, name: str, args: list[str]) -> subprocess.Popen:
        log = open(self.log_dir / f"{name}.log", "wb")  # the child keeps it open
        try:
            return subprocess.Popen(
                [self._binary(name), *args],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        finally:
            log.close()

    def _tail(self, name: str, lines: int = 15) -> str:
        try:
            text = (self.log_dir / f"{name}.log").read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def _wait_healthy(
        self,
        name: str,
        proc: subprocess.Popen,
        url: str,
        context: ssl.SSLContext | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        last = ""
        while time.monotonic() < self._deadline:
            if proc.poll() is not None:
                raise EnvTestError(f"{name} exited with {proc.returncode}:\n{self._tail(name)}")
            try:
                req = urllib.request.Request(url, headers=headers or {})
                with urllib.request.urlopen(req, timeout=2, context=context) as resp:
                    body = resp.read().decode(errors="replace")
                    if resp.status == 200 and ("true" in body or body.strip() == "ok"):
                        return
                    last = body
            except (urllib.error.URLError, OSError) as err:
                last = str(err)
            time.sleep(0.2)
        raise EnvTestError(
            f"{name} not healthy within the {self._timeout:g}s given to start the control "
            f"plane ({last}):\n{self._tail(name)}"
        )

    def start(self, timeout: float = START_TIMEOUT) -> str:
        """Start etcd, then kube-apiserver; wait for both; write and return the kubeconfig.

        ``timeout`` bounds the whole start, both processes together (the e2e suite passes what
        is left of the first test's budget), and a start that overruns it raises EnvTestError.
        """
        self._timeout = timeout
        self._deadline = time.monotonic() + timeout
        try:
            return self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> str:
        certs_dir = self.workdir / "certs"
        certs_dir.mkdir(parents=True, exist_ok=True)
        certs = make_certificates(certs_dir)
        tokens = self.workdir / "tokens.csv"
        tokens.write_text(f'{self.admin_token},admin,admin-uid,"system:masters"\n')
        tokens.chmod(0o600)

        client_port, peer_port = free_port(), free_port()
        self.etcd_url = f"http://127.0.0.1:{client_port}"
        etcd_args = [
            f"--data-dir={self.workdir / 'etcd'}",
            f"--listen-client-urls={self.etcd_url}",
            f"--advertise-client-urls={self.etcd_url}",
            f"--listen-peer-urls=http://127.0.0.1:{peer_port}",
        ]
        if self._has_flag("etcd", "unsafe-no-fsync"):
            etcd_args.append("--unsafe-no-fsync=true")  # as envtest: a test etcd need not fsync
        self.etcd = self._spawn("etcd", etcd_args)
        self._wait_healthy("etcd", self.etcd, f"{self.etcd_url}/health")

        port = free_port()
        self.server_url = f"https://127.0.0.1:{port}"
        self.apiserver = self._spawn(
            "kube-apiserver",
            [
                f"--etcd-servers={self.etcd_url}",
                f"--cert-dir={certs_dir}",
                f"--tls-cert-file={certs['apiserver.crt']}",
                f"--tls-private-key-file={certs['apiserver.key']}",
                f"--secure-port={port}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                "--endpoint-reconciler-type=none",
                "--service-cluster-ip-range=10.0.0.0/24",
                "--allow-privileged=true",
                # envtest: without kube-controller-manager no "default" ServiceAccount is made, and
                # the admission plugin would refuse pods for want of it
                "--disable-admission-plugins=ServiceAccount",
                "--authorization-mode=RBAC",
                f"--token-auth-file={tokens}",
                f"--service-account-issuer={self.server_url}/",
                f"--service-account-key-file={certs['sa-signer.pub']}",
                f"--service-account-signing-key-file={certs['sa-signer.key']}",
            ],
        )
        context = ssl.create_default_context(cafile=str(certs["ca.crt"]))
        self._wait_healthy(
            "kube-apiserver",
            self.apiserver,
            f"{self.server_url}/readyz",
            context,
            {"Authorization": f"Bearer {self.admin_token}"},
        )
        self.kubeconfig = str(self.workdir / "admin.kubeconfig")
        Path(self.kubeconfig).write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [
                        {
                            "name": "envtest",
                            "cluster": {
                                "server": self.server_url,
                                "certificate-authority": str(certs["ca.crt"]),
                            },
                        }
                    ],
                    "users": [{"name": "admin", "user": {"token": self.admin_token}}],
                    "contexts": [
                        {"name": "envtest", "context": {"cluster": "envtest", "user": "admin"}}
                    ],
                    "current-context": "envtest",
                },
                sort_keys=False,
            )
        )
        return self.kubeconfig

    def _has_flag(self, name: str, flag: str) -> bool:
        try:
            out = subprocess.run(
                [self._binary(name), "--help"],
                capture_output=True,
                text=True,
                timeout=max(1.0, min(20.0, self._deadline - time.monotonic())),
            )
        except (OSError, subprocess.TimeoutExpired):
            return False
        return f"--{flag}" in out.stdout + out.stderr

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """SIGTERM the apiserver, then etcd; SIGKILL what still runs once ``timeout`` (for both
        together) has passed; remove the workdir."""
        deadline = time.monotonic() + timeout
        for proc in (self.apiserver, self.etcd):
            if proc is None or proc.poll() is not None:
                continue
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        self.apiserver = self.etcd = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> EnvTest:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
