"""kubesim's distribution (kubesim/pyproject.toml) holds the whole package, and only kubesim.

setuptools is given an explicit package list (its automatic discovery cannot see kubesim's
subpackages under their real names when the package maps onto its own directory), so these
tests keep that list equal to the subpackages on disk. The controller's distribution must no
longer ship any of it.
"""

from __future__ import annotations

import tomllib

from tests.helpers import ROOT

KUBESIM = ROOT / "kubesim"


def kubesim_project() -> dict:
    return tomllib.loads((KUBESIM / "pyproject.toml").read_text())


def subpackages_on_disk() -> set[str]:
    return {
        "kubesim" + ".".join(("", *init.parent.relative_to(KUBESIM).parts))
        for init in KUBESIM.rglob("__init__.py")
        if "build" not in init.relative_to(KUBESIM).parts
    }


def test_the_package_list_names_every_subpackage_on_disk():
    listed = set(kubesim_project()["tool"]["setuptools"]["packages"])
    assert listed == subpackages_on_disk()


def test_the_package_maps_onto_its_own_directory():
    assert kubesim_project()["tool"]["setuptools"]["package-dir"] == {"kubesim": "."}


def test_every_package_data_file_exists():
    data = kubesim_project()["tool"]["setuptools"]["package-data"]
    for package, patterns in data.items():
        directory = KUBESIM.joinpath(*package.split(".")[1:])
        for pattern in patterns:
            assert list(directory.glob(pattern)), f"{package}: nothing matches {pattern}"


def test_the_shared_helpers_are_the_client_files_not_copies():
    # one implementation on both ends of the wire: a copy could drift from the controller's
    for name in ("labels.py", "shard.py"):
        link = KUBESIM / "api" / name
        assert link.is_symlink(), f"kubesim/api/{name} should link to client/{name}"
        assert link.resolve() == (ROOT / "client" / name).resolve()


def test_the_controllers_distribution_does_not_ship_kubesim():
    root = tomllib.loads((ROOT / "pyproject.toml").read_text())
    included = root["tool"]["setuptools"]["packages"]["find"]["include"]
    assert not [p for p in included if p.startswith("kubesim")]
    assert "kubesim" not in root["project"].get("scripts", {})
    assert "kubesim" not in root["tool"]["setuptools"].get("package-data", {})


def test_the_console_script_and_the_plugin_entry_point():
    project = kubesim_project()["project"]
    assert project["scripts"] == {"kubesim": "kubesim.__main__:main"}
    # named as the module, so a conftest's pytest_plugins line does not register it twice
    assert project["entry-points"]["pytest11"] == {"kubesim.pytest_plugin": "kubesim.pytest_plugin"}
