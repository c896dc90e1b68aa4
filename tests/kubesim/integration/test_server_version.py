"""kubesim as kube-apiserver v1.36 (the default) and, with ``server_version="1.24"``, as v1.24.

Each test states one answer that changed between the two releases recorded in
shared/KUBE_APISERVER_FACTS.md, and checks it on both: the controller has to cope with the
older server's answers, so kubesim keeps them behind the switch.
"""

from __future__ import annotations

import json

import pytest

from kubesim import KubeSim
from kubesim.__main__ import build_parser
from tests.kubesim.integration.test_api import FOO_CRD, raw

V1_24 = pytest.mark.kubesim(crds=[FOO_CRD], server_version="1.24")


def test_an_unknown_release_is_refused():
    with pytest.raises(ValueError, match="server_version must be one of 1.24, 1.36"):
        KubeSim(server_version="1.30")


def test_the_cli_switch_names_the_release():
    assert build_parser().parse_args([]).emulate == "1.36"
    assert build_parser().parse_args(["--emulate", "1.24"]).emulate == "1.24"


def test_version_has_the_emulation_fields(sim):
    code, _, body = raw(sim, "GET", "/version")
    info = json.loads(body)
    assert code == 200
    assert (info["major"], info["minor"]) == ("1", "36")
    assert (info["emulationMajor"], info["emulationMinor"]) == ("1", "36")
    assert info["gitVersion"].startswith("v1.36.")


@V1_24
def test_version_as_v1_24_has_no_emulation_fields(sim):
    info = json.loads(raw(sim, "GET", "/version")[2])
    assert (info["major"], info["minor"]) == ("1", "24")
    assert "emulationMajor" not in info and "emulationMinor" not in info
    assert info["gitVersion"].startswith("v1.24.")
