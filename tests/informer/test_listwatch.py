"""informer.listwatch: paths, options and the watch stall deadline, over a recording RESTClient."""

from __future__ import annotations

from informer.listwatch import ListWatch, watch_read_timeout


class RecordingRESTClient:
    def __init__(self):
        self.requests = []
        self.streams = []

    def request(
        self, method, path, params=None, body=None, content_type="application/json", timeout=None
    ):
        self.requests.append((method, path, dict(params or {}), timeout))
        return {"kind": "List", "metadata": {"resourceVersion": "7"}, "items": []}

    def stream(self, path, params=None, timeout=None):
        self.streams.append((path, dict(params or {}), timeout))
        return iter(())


def test_core_group_namespaced_list():
    rc = RecordingRESTClient()
    lw = ListWatch(rc, "", "v1", "pods", "kube-system")
    assert lw.list({"resourceVersion": "0", "limit": 500})["metadata"]["resourceVersion"] == "7"
    method, path, params, timeout = rc.requests[0]
    assert (method, path) == ("GET", "/api/v1/namespaces/kube-system/pods")
    assert params == {"resourceVersion": "0", "limit": 500}
    assert isinstance(timeout, tuple)  # connect and per-read deadlines, not a total


def test_named_group_all_namespaces_with_selectors():
    rc = RecordingRESTClient()
    lw = ListWatch(
        rc, "apps", "v1", "deployments", label_selector="app=web", field_selector="metadata.name=x"
    )
    lw.list({"resourceVersion": ""})
    _, path, params, _ = rc.requests[0]
    assert path == "/apis/apps/v1/deployments"
    # an empty resourceVersion is left out: that is how a consistent read is asked for
    assert params == {"labelSelector": "app=web", "fieldSelector": "metadata.name=x"}
    assert "deployments" in repr(lw) and "apps/v1" in repr(lw)


def test_tweak_list_options_has_the_last_word():
    rc = RecordingRESTClient()

    def tweak(options):
        options["labelSelector"] = "tier=db"

    lw = ListWatch(rc, "", "v1", "pods", label_selector="app=web", tweak_list_options=tweak)
    lw.watch({"resourceVersion": "5", "timeoutSeconds": 300})
    _, params, _ = rc.streams[0]
    assert params["labelSelector"] == "tier=db"


def test_watch_params_and_stall_deadline():
    rc = RecordingRESTClient()
    lw = ListWatch(rc, "samplecontroller.k8s.io", "v1alpha1", "foos", "default")
    lw.watch({"resourceVersion": "5", "timeoutSeconds": 400, "allowWatchBookmarks": True})
    path, params, timeout = rc.streams[0]
    assert path == "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos"
    assert params == {
        "resourceVersion": "5",
        "timeoutSeconds": 400,
        "allowWatchBookmarks": True,
        "watch": True,
    }
    connect, read = timeout
    assert read == watch_read_timeout(400) and 400 < read < 440
    lw.watch({"timeoutSeconds": 300}, read_timeout=3.0)
    assert rc.streams[1][2][1] == 3.0


def test_watch_read_timeout_is_slightly_past_the_server_deadline():
    assert watch_read_timeout(1) == 3.0  # at least 2 s of slack
    assert watch_read_timeout(600) == 630.0  # 5% past


def test_lazy_items_is_asked_of_the_client_only_when_set():
    class LazyRecordingRESTClient(RecordingRESTClient):
        def request(self, method, path, params=None, timeout=None, *, lazy_items=False):
            self.requests.append((method, path, lazy_items))
            return {"kind": "List", "metadata": {"resourceVersion": "7"}, "items": []}

    rc = LazyRecordingRESTClient()
    ListWatch(rc, "apps", "v1", "deployments", lazy_items=True).list({})
    ListWatch(rc, "apps", "v1", "deployments").list({})
    assert [r[2] for r in rc.requests] == [True, False]
