"""kubesim imports whichever of its modules a process imports first.

api/builtin_kinds.py builds ResourceInfos, so it imports api/resources.py, which reads the
table only when a Registry is made; a cycle at import time would break ``python -m kubesim``
for whichever entry point happens to import the table first.
"""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    "module",
    ["kubesim.api.builtin_kinds", "kubesim.registry.strategy", "kubesim.api.resources", "kubesim"],
)
def test_a_fresh_process_can_import_it_first(module):
    code = (
        f"import {module}\n"
        "from kubesim.api.resources import Registry\n"
        "assert Registry().lookup('batch', 'v1', 'jobs') is not None\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
