"""``python -m kubesim``: whatever keeps it from serving is one line naming the flag, exit 2.

Each row fails before the server would print its URL, so ``main`` runs in-process; one
subprocess run checks the real exit path (status, stderr, no traceback) for a port in use.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubesim import KubeSim
from kubesim.__main__ import build_parser, main
from tests.helpers import ROOT

CRD_WITHOUT_SPEC = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: bars.example.com}
"""


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port something else is listening on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


def files(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "not-yaml.yaml").write_text("a: [b\n")
    (tmp_path / "foo.yaml").write_text((ROOT / "manifests" / "example-foo.yaml").read_text())
    (tmp_path / "empty.yaml").write_text("# nothing\n")
    (tmp_path / "no-spec.yaml").write_text(CRD_WITHOUT_SPEC)
    (tmp_path / "a-file").write_text("")
    return {
        "missing": str(tmp_path / "missing.yaml"),
        "not-yaml": str(tmp_path / "not-yaml.yaml"),
        "foo": str(tmp_path / "foo.yaml"),
        "empty": str(tmp_path / "empty.yaml"),
        "no-spec": str(tmp_path / "no-spec.yaml"),
        "under-a-file": str(tmp_path / "a-file" / "kubeconfig"),
    }


INVALID = [
    # (flags, with {name} filled from files() and busy_port; the flag named; the problem stated)
    (["--listen", "nope"], "--listen", "expected HOST:PORT"),
    (["--listen", "127.0.0.1:99999"], "--listen", "the port must be 0-65535"),
    (["--listen", "127.0.0.1:{busy_port}"], "--listen", "cannot listen on 127.0.0.1:"),
    (["--crd", "{missing}"], "--crd", "cannot read"),
    (["--crd", "{not-yaml}"], "--crd", "is not YAML"),
    (["--crd", "{foo}"], "--crd", "document 1 is not a CustomResourceDefinition"),
    (["--crd", "{empty}"], "--crd", "holds no CustomResourceDefinition"),
    (["--crd", "{no-spec}"], "--crd", "spec.group: Required value"),
    (["--deployment-status-delay", "-1"], "--deployment-status-delay", "must be 0 or more"),
    (["--deployment-status-delay", "soon"], "--deployment-status-delay", "invalid seconds value"),
    (["--history-size", "0"], "--history-size", "must be at least 1 (got 0)"),
    (["--deployment-controller", "fast"], "--deployment-controller", "invalid choice: 'fast'"),
    (
        ["--deployment-controller", "none", "--deployment-status-delay", "1"],
        "--deployment-controller",
        "deployment_status_delay needs a deployment controller",
    ),
    (
        ["--deployment-controller", "full", "--simulated-node"],
        "--simulated-node",
        'does not go with deployment_controller="full"',
    ),
    (["--token", ""], "--token", "must not be empty"),
    (["--client-ca-file", "{missing}"], "--client-ca-file", "cannot read"),
    (["--client-ca-file", "{empty}"], "--client-ca-file", "holds no PEM certificate"),
    (["--authorization-mode", "Node"], "--authorization-mode", "invalid choice: 'Node'"),
    (["--kubeconfig", "{under-a-file}"], "--kubeconfig", "cannot write"),
    (["--feature-gates", "Bogus=true"], "--feature-gates", "unrecognized feature gate: Bogus"),
    (["--feature-gates", "ShardedListAndWatch"], "--feature-gates", "missing bool value for"),
    (["--feature-gates", "ShardedListAndWatch=on"], "--feature-gates", "invalid value of"),
    (["--webhook-service", "hooks=127.0.0.1:1"], "--webhook-service", "expected NAMESPACE/NAME"),
    (["--webhook-service", "ns/hooks:x=h:1"], "--webhook-service", "ports must be numbers"),
]


@pytest.mark.parametrize(
    ("flags", "flag", "problem"), INVALID, ids=[" ".join(c[0]) for c in INVALID]
)
def test_a_bad_flag_is_one_line_naming_it(tmp_path, capsys, busy_port, flags, flag, problem):
    values = {**files(tmp_path), "busy_port": busy_port}
    argv = [f.format(**values) for f in flags]
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""  # no URL: a parent waiting for one sees the process end instead
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"kubesim: error: argument {flag}: "), lines[0]
    assert problem in lines[0], lines[0]


def test_a_port_in_use_ends_the_process_with_status_2_and_no_traceback(busy_port):
    res = subprocess.run(
        [sys.executable, "-m", "kubesim", "--listen", f"127.0.0.1:{busy_port}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 2
    assert res.stdout == ""
    assert res.stderr.splitlines() == [
        f"kubesim: error: argument --listen: cannot listen on 127.0.0.1:{busy_port}: "
        "Address already in use"
    ]


def test_no_watch_list_answers_as_v1_24():
    # unset, WatchList follows --emulate: served by the default 1.36, refused by 1.24
    assert build_parser().parse_args([]).watch_list is None
    assert KubeSim().rest.watch_list is True
    assert KubeSim(server_version="1.24").rest.watch_list is False
    assert build_parser().parse_args(["--no-watch-list"]).watch_list is False
    assert build_parser().parse_args(["--watch-list"]).watch_list is True
    assert KubeSim(server_version="1.24", watch_list=True).rest.watch_list is True


def test_feature_gates_take_kube_apiservers_syntax():
    def gate(*flags: str) -> list[dict[str, bool]]:
        return build_parser().parse_args(list(flags)).feature_gates

    assert gate() == []
    assert gate("--feature-gates", "ShardedListAndWatch=true") == [{"ShardedListAndWatch": True}]
    # strconv.ParseBool's spellings, pairs separated by commas, the flag repeatable
    assert gate("--feature-gates", " ShardedListAndWatch=T, ") == [{"ShardedListAndWatch": True}]
    assert gate(
        "--feature-gates", "ShardedListAndWatch=1", "--feature-gates", "ShardedListAndWatch=false"
    ) == [{"ShardedListAndWatch": True}, {"ShardedListAndWatch": False}]


def test_webhook_services_map_a_service_to_an_address():
    args = build_parser().parse_args(
        ["--webhook-service", "default/hooks:8443=127.0.0.1:9443", "--webhook-service", "a/b=h:1"]
    )
    assert dict(args.webhook_service) == {
        "default/hooks:8443": "127.0.0.1:9443",
        "a/b": "h:1",
    }


def test_the_workload_chain_and_the_simulated_node_are_flags():
    args = build_parser().parse_args(["--deployment-controller", "pods", "--simulated-node"])
    assert (args.deployment_controller, args.simulated_node) == ("pods", True)
    defaults = build_parser().parse_args([])
    assert (defaults.deployment_controller, defaults.simulated_node) == (None, False)
