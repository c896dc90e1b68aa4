"""The image's package list (Dockerfile COPY lines) against what the controller imports.

The Dockerfile copies packages one by one, so the wheel built inside it holds only what the
installed controller runs on. A package added to the controller's import graph but not to the
Dockerfile gives an image that fails at start-up; a package copied but never imported (kubesim,
the demo) ships test code to clusters. Both are caught here, without docker: the import graph is
read from the source with ``ast``, starting at the ``sample-controller`` console script.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NEVER_IN_IMAGE = {"kubesim", "demo", "bench", "tests"}


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def first_party_packages() -> set[str]:
    """Top-level packages of this repository: root directories holding Python modules (with or
    without an __init__.py: setuptools finds namespace packages such as client/ too)."""
    return {p.parent.name for p in ROOT.glob("*/*.py")}


def module_file(module: str) -> Path | None:
    """The source of a dotted first-party module name: its .py file, its package's __init__.py,
    or the directory of a namespace package (no code of its own); None if it is no module."""
    base = ROOT.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return base if base.is_dir() and any(base.glob("*.py")) else None


def imported_modules(path: Path, module: str) -> set[str]:
    """Every module named by an import in the file, at any depth (function-local imports count:
    they run in the image too). ``from pkg import name`` yields pkg.name when that is a module."""
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def packages_reached_from(entry_module: str) -> set[str]:
    """Top-level first-party packages reachable by imports from entry_module (and the parent
    packages' __init__ modules, which Python runs on the way)."""
    ours = first_party_packages()
    seen: set[str] = set()
    todo = [entry_module]
    while todo:
        module = todo.pop()
        parts = module.split(".")
        for i in range(1, len(parts) + 1):  # importing a.b.c runs a and a.b first
            name = ".".join(parts[:i])
            if name in seen or parts[0] not in ours:
                continue
            path = module_file(name)
            if path is None:
                continue  # a name imported from a module, not a module itself
            seen.add(name)
            if path.is_file():
                todo.extend(imported_modules(path, name))
    return {m.split(".")[0] for m in seen}


def dockerfile_copied_packages() -> set[str]:
    """Directories the Dockerfile COPYs from the build context (not --from= a stage)."""
    copied: set[str] = set()
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        m = re.match(r"^COPY\s+(?!--from)(.+)$", line.strip())
        if not m:
            continue
        *sources, _dest = m.group(1).split()
        copied.update(s.rstrip("/") for s in sources if (ROOT / s).is_dir())
    return copied


def controller_entry_module() -> str:
    target = _pyproject()["project"]["scripts"]["sample-controller"]
    return target.partition(":")[0]


def test_the_image_copies_exactly_the_packages_the_controller_imports():
    needed = packages_reached_from(controller_entry_module())
    assert needed >= {"controller", "workqueue", "informer", "client", "tools"}
    copied = dockerfile_copied_packages()
    assert copied == needed, (
        f"Dockerfile COPY list {sorted(copied)} differs from the packages the "
        f"controller imports {sorted(needed)}"
    )


def test_nothing_test_only_is_copied_or_imported():
    assert not dockerfile_copied_packages() & NEVER_IN_IMAGE
    assert not packages_reached_from(controller_entry_module()) & NEVER_IN_IMAGE


def test_every_copied_package_is_in_the_wheel():
    """setuptools' include list decides what the wheel built in the image carries."""
    include = _pyproject()["tool"]["setuptools"]["packages"]["find"]["include"]
    patterns = {p.rstrip("*") for p in include}
    assert dockerfile_copied_packages() <= patterns


def test_the_build_context_leaves_test_only_packages_out():
    ignored = {
        line.strip().rstrip("/")
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert NEVER_IN_IMAGE <= ignored, f"not in .dockerignore: {sorted(NEVER_IN_IMAGE - ignored)}"
