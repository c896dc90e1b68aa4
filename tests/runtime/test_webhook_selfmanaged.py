"""runtime.webhook.selfmanaged: the CA written into the configurations before its certificate
is served, renewed after two thirds of its life, the bundle a union of replicas' CAs, and an
API server that refuses the write keeping the old certificate."""

from __future__ import annotations

import base64
import copy
import ssl
from typing import Any

import pytest

from client.errors import APIError
from runtime.webhook.selfmanaged import (
    ADMISSIONREGISTRATION,
    CertRotator,
    Pair,
    generate,
    merge_bundle,
)
from tests.helpers import wait_for

MUTATING = ("mutatingwebhookconfigurations", "m")
VALIDATING = ("validatingwebhookconfigurations", "v")


class FakeAPI:
    """Two webhook configurations, by path; GET and PUT, or a failure to raise."""

    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {
            f"{ADMISSIONREGISTRATION}/{resource}/{name}": {
                "metadata": {"name": name},
                "webhooks": [
                    {"name": "a.example.com", "clientConfig": {"url": "https://x"}},
                    {"name": "b.example.com", "clientConfig": {"url": "https://y"}},
                ],
            }
            for resource, name in (MUTATING, VALIDATING)
        }
        self.puts: list[str] = []
        self.fail: APIError | None = None

    def request(self, method: str, path: str, body: Any = None, **_: Any) -> dict[str, Any]:
        if self.fail is not None:
            raise self.fail
        if path not in self.objects:
            raise APIError(404, "NotFound", f"{path} not found")
        if method == "PUT":
            self.puts.append(path)
            self.objects[path] = copy.deepcopy(body)
        return copy.deepcopy(self.objects[path])

    def bundles(self) -> list[str]:
        return [
            hook["clientConfig"].get("caBundle", "")
            for obj in self.objects.values()
            for hook in obj["webhooks"]
        ]


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def pairs() -> list[Pair]:
    # two real pairs, made as the process makes them (a child process with cryptography)
    return [generate(["localhost", "127.0.0.1"], 3600) for _ in range(2)]


def maker(pairs: list[Pair], clock: Clock):
    made: list[Pair] = []

    def make(hosts: list[str], validity: float) -> Pair:
        pair = pairs[len(made)]
        made.append(pair)
        # the pair as if made now, valid for `validity`
        return Pair(pair.ca, pair.cert, pair.key, clock.now + validity, clock.now)

    return make, made


def pems(bundle: str) -> list[bytes]:
    data = base64.b64decode(bundle)
    return [b"-----BEGIN" + part for part in data.split(b"-----BEGIN")[1:]]


def test_the_ca_is_in_every_webhook_of_both_configurations(pairs):
    api, clock = FakeAPI(), Clock()
    make, _ = maker(pairs, clock)
    rotator = CertRotator(
        api, ["localhost"], [MUTATING, VALIDATING], validity=300, make=make, clock=clock
    )
    rotator.ensure()
    assert len(api.puts) == 2
    for bundle in api.bundles():
        assert [p.strip() for p in pems(bundle)] == [pairs[0].ca.strip()]
    assert isinstance(rotator.context(), ssl.SSLContext)
    rotator.ensure()  # nothing due, nothing changed: no write
    assert len(api.puts) == 2


def test_a_client_trusting_the_bundle_verifies_the_served_certificate(pairs):
    api, clock = FakeAPI(), Clock()
    make, _ = maker(pairs, clock)
    rotator = CertRotator(api, ["localhost"], [MUTATING], validity=300, make=make, clock=clock)
    rotator.ensure()
    client = ssl.create_default_context(cadata=base64.b64decode(api.bundles()[0]).decode())
    server = rotator.context()
    # an in-memory handshake: the client verifies the chain and the name "localhost"
    c_in, c_out, s_in, s_out = ssl.MemoryBIO(), ssl.MemoryBIO(), ssl.MemoryBIO(), ssl.MemoryBIO()
    c = client.wrap_bio(c_in, c_out, server_hostname="localhost")
    s = server.wrap_bio(s_in, s_out, server_side=True)
    for _ in range(10):
        for side in (c, s):
            try:
                side.do_handshake()
            except ssl.SSLWantReadError:
                pass
        s_in.write(c_out.read())
        c_in.write(s_out.read())
    assert c.getpeercert()["subject"]


def test_renewed_after_two_thirds_with_the_new_ca_written_first(pairs):
    api, clock = FakeAPI(), Clock()
    make, made = maker(pairs, clock)
    rotator = CertRotator(api, ["localhost"], [MUTATING], validity=300, make=make, clock=clock)
    rotator.ensure()
    first = rotator.context()
    clock.now += 199  # not yet two thirds of 300 s
    rotator.ensure()
    assert len(made) == 1 and rotator.context() is first
    clock.now += 2
    rotator.ensure()
    assert len(made) == 2 and rotator.context() is not first
    # new CA first, the old one kept for the certificate still in flight elsewhere
    assert [p.strip() for p in pems(api.bundles()[0])] == [pairs[1].ca.strip(), pairs[0].ca.strip()]


def test_a_refused_write_keeps_the_old_certificate_until_it_works(pairs):
    api, clock = FakeAPI(), Clock()
    make, made = maker(pairs, clock)
    rotator = CertRotator(api, ["localhost"], [MUTATING], validity=300, make=make, clock=clock)
    rotator.ensure()
    first = rotator.context()
    clock.now += 250
    api.fail = APIError(403, "Forbidden", "cannot update")
    rotator.ensure()
    # served only once the API server trusts its CA
    assert len(made) == 2 and rotator.context() is first


def test_the_first_certificate_is_served_even_before_the_configurations_exist(pairs):
    api, clock = FakeAPI(), Clock()
    api.objects.clear()
    make, _ = maker(pairs, clock)
    rotator = CertRotator(api, ["localhost"], [MUTATING], validity=300, make=make, clock=clock)
    rotator.ensure()
    assert isinstance(rotator.context(), ssl.SSLContext)


def test_the_bundle_keeps_other_replicas_cas_and_drops_the_oldest_beyond_the_limit():
    cas = [
        f"-----BEGIN CERTIFICATE-----\nCA{i}\n-----END CERTIFICATE-----".encode() for i in range(5)
    ]
    bundle = ""
    for ca in cas:
        bundle = merge_bundle(bundle, ca, limit=3)
    assert pems(bundle) == [cas[4] + b"\n", cas[3] + b"\n", cas[2] + b"\n"]
    # ours again: first, not twice
    assert pems(merge_bundle(bundle, cas[2], limit=3))[0].strip() == cas[2]
    assert len(pems(merge_bundle(bundle, cas[2], limit=3))) == 3
    # garbage in the field is replaced
    assert pems(merge_bundle("%%%", cas[0])) == [cas[0] + b"\n"]


def test_the_loop_renews_on_its_own_and_stops(pairs):
    api, clock = FakeAPI(), Clock()
    make, made = maker(pairs, clock)
    rotator = CertRotator(
        api, ["localhost"], [MUTATING], validity=300, interval=0.01, make=make, clock=clock
    )
    rotator.ensure()
    rotator.start()
    try:
        clock.now += 250
        wait_for(lambda: len(made) == 2, timeout=5, message="a renewal by the loop")
        wait_for(lambda: len(pems(api.bundles()[0])) == 2, timeout=5)
    finally:
        rotator.stop()
