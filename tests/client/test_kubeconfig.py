"""client/config.py and client/kubeconfig.py: every broken kubeconfig is one ConfigError line
that names the file and what is wrong, and a good one still loads."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from client.config import ConfigError, load_client_configuration

GOOD = """\
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:6443"}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
users: [{name: u, user: {token: t}}]
current-context: x
"""

# (file content, words the one line must hold besides the file's path)
BROKEN: dict[str, tuple[str | bytes, str]] = {
    "not YAML": ("a: b: c\n", "is not valid YAML: mapping values are not allowed here, line 1"),
    "a string": ("hello\n", "top level is a string, not a mapping"),
    "a list": ("- a\n- b\n", "top level is a list, not a mapping"),
    "binary": (b"\x7fELF\x02\x01\x01\x00\xd0\xff\xfe", "is not a text file (not UTF-8 at byte 8)"),
    "empty": ("", "is empty"),
    "clusters a mapping": (
        "clusters: {name: c}\ncurrent-context: x\n",
        "clusters must be a list of {name, cluster} entries, not a mapping",
    ),
    "a cluster entry a string": ("clusters: [c]\n", "clusters[0] must be a mapping"),
    "a context with no name": (
        "contexts: [{context: {cluster: c}}]\n",
        "contexts[0] has no name",
    ),
    "a user with no body": ("users: [{name: u}]\n", "users[0] (u) has no user"),
    "a context body a string": (
        "contexts: [{name: x, context: c}]\n",
        "contexts[0] (x): context must be a mapping, not a string",
    ),
    "current-context a list": ("current-context: [x]\n", "current-context must be a string"),
    "no current-context": (GOOD.replace("current-context: x\n", ""), "current-context is not set"),
    "current-context naming nothing": (
        GOOD.replace("current-context: x", "current-context: nope"),
        "context was not found for specified context: nope",
    ),
    "context naming no cluster": (
        GOOD.replace("{cluster: c, user: u}", "{user: u}"),
        "cluster was not specified for context 'x'",
    ),
    "context naming a missing cluster": (
        GOOD.replace("{cluster: c, user: u}", "{cluster: d, user: u}"),
        "cluster 'd' was not found for context 'x'",
    ),
    "no server": (
        GOOD.replace('{server: "http://127.0.0.1:6443"}', "{}"),
        "no server found for cluster 'c'",
    ),
    "a server that is not a URL": (
        GOOD.replace("http://127.0.0.1:6443", "127.0.0.1:6443"),
        "server '127.0.0.1:6443' of cluster 'c' is not a URL",
    ),
}


def write(tmp_path: Path, content: str | bytes) -> Path:
    path = tmp_path / "kubeconfig"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_kubeconfig_is_one_line_naming_the_file(tmp_path: Path, case: str) -> None:
    content, words = BROKEN[case]
    path = write(tmp_path, content)
    with pytest.raises(ConfigError) as caught:
        load_client_configuration(str(path))
    message = str(caught.value)
    assert message.startswith(f"kubeconfig {path}"), message
    assert words in message
    assert "\n" not in message


def test_a_good_kubeconfig_loads(tmp_path: Path) -> None:
    cfg = load_client_configuration(str(write(tmp_path, GOOD)))
    assert cfg.host == "http://127.0.0.1:6443"


def test_a_context_naming_a_user_not_defined_has_no_credentials(tmp_path: Path) -> None:
    """client-go's ConfirmUsable accepts it (no credentials), and so does the loader."""
    cfg = load_client_configuration(str(write(tmp_path, GOOD.replace("user: u}", "user: v}"))))
    assert cfg.host == "http://127.0.0.1:6443"
    assert not cfg.api_key


def test_master_supplies_the_server_but_a_broken_file_is_still_refused(tmp_path: Path) -> None:
    no_server = write(tmp_path, GOOD.replace('{server: "http://127.0.0.1:6443"}', "{}"))
    cfg = load_client_configuration(str(no_server), master="http://127.0.0.1:9/")
    assert cfg.host == "http://127.0.0.1:9"
    not_yaml = write(tmp_path, "a: b: c\n")
    with pytest.raises(ConfigError, match="is not valid YAML"):
        load_client_configuration(str(not_yaml), master="http://127.0.0.1:9")


def test_a_directory_is_named_as_unreadable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=f"kubeconfig {tmp_path}: cannot read it: Is a directory"):
        load_client_configuration(str(tmp_path))


def test_kubeconfig_list_is_checked_merged_and_each_file_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """$KUBECONFIG's files are merged as the loader merges them: the context may live in one
    file and its cluster in another; a broken file among them is named on its own."""
    contexts = tmp_path / "contexts"
    contexts.write_text(
        textwrap.dedent("""\
            contexts: [{name: x, context: {cluster: c}}]
            current-context: x
        """)
    )
    clusters = tmp_path / "clusters"
    clusters.write_text('clusters: [{name: c, cluster: {server: "http://127.0.0.1:7"}}]\n')
    location = f"{contexts}:{tmp_path / 'absent'}:{clusters}"
    monkeypatch.setenv("KUBECONFIG", location)
    assert load_client_configuration().host == "http://127.0.0.1:7"

    clusters.write_text("clusters: [c]\n")
    with pytest.raises(ConfigError, match=f"^kubeconfig {clusters}: clusters\\[0\\] must be"):
        load_client_configuration()

    clusters.write_text("clusters: []\n")
    with pytest.raises(ConfigError) as caught:
        load_client_configuration()
    # a problem of the merged view names every file read
    assert str(caught.value).startswith(f"kubeconfig {contexts}:{clusters}: cluster 'c'")
