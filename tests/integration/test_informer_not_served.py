"""An informer whose CRD is deleted, then installed again, against kubesim over HTTP: the
reflector names the missing resource once, ``last_sync_error()`` reports the stale cache for
as long as it lasts, and both clear when the CRD is back."""

from __future__ import annotations

import logging

import pytest
import yaml

from client.errors import is_not_found
from client.rest import RESTClient, resource_path
from client.wait import ExponentialBackoff
from informer import SharedIndexInformer, wait_for_cache_sync
from informer.listwatch import ListWatch
from informer.testing import RunningInformer
from tests.helpers import CRD, wait_for

GROUP, VERSION, PLURAL = "samplecontroller.k8s.io", "v1alpha1", "foos"
CRDS = ("apiextensions.k8s.io", "v1", "customresourcedefinitions")
HINT = (
    "samplecontroller.k8s.io/v1alpha1 foos: the server does not serve this resource (404); "
    "is its CustomResourceDefinition installed?"
)


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "informer.reflector" and r.levelno >= logging.WARNING
    ]


@pytest.mark.parametrize("watch_list", [True, False], ids=["watch-list", "list-watch"])
def test_a_deleted_crd_is_named_once_and_the_informer_reports_it(
    sim, caplog: pytest.LogCaptureFixture, watch_list: bool
) -> None:
    caplog.set_level(logging.DEBUG, logger="informer.reflector")
    api = RESTClient(sim.api_client)
    informer = SharedIndexInformer(
        ListWatch(RESTClient(sim.api_client), GROUP, VERSION, PLURAL, "default"),
        0.0,
        name="foos",
        reflector_options={
            "backoff": ExponentialBackoff(initial=0.02, cap=0.05),
            "use_watch_list": watch_list,
        },
    )
    with RunningInformer(informer) as running:
        assert wait_for_cache_sync(running.stop, informer, timeout=10)
        assert informer.last_sync_error() is None

        crd = yaml.safe_load(CRD.read_text())
        name = crd["metadata"]["name"]
        api.request("DELETE", resource_path(*CRDS, None, name))
        err = wait_for(
            informer.last_sync_error, not_yet=lambda e: False, message="the informer failing"
        )
        assert is_not_found(err)
        # several more failed rounds, and still one warning that names it (the watch the
        # deletion ended may add its own, "unexpected watch close", when it was young)
        failures = len(sim.request_log)
        wait_for(lambda: len(sim.request_log) >= failures + 4, message="more attempts")
        assert informer.last_sync_error() is not None
        warned = [m for m in warnings_of(caplog) if "(404)" in m]
        assert len(warned) == 1, warnings_of(caplog)
        assert warned[0].endswith(HINT)
        # has_synced stays as client-go's: true after the first sync
        assert informer.has_synced()

        # installed again from the same file (its metadata as shipped, annotations and all)
        api.request("POST", resource_path(*CRDS, None), body=crd)
        wait_for(lambda: informer.last_sync_error() is None, message="synced again")
        # said once the list has succeeded (the reflector clears the error first)
        served = "reflector-foos: samplecontroller.k8s.io/v1alpha1 foos is served again"
        wait_for(lambda: served in caplog.messages, message="the served-again line")
