"""The printers of the kinds served by the generic store (kubesim/views/table_kinds.py)."""

from __future__ import annotations

import pytest

from kubesim.api.builtin_kinds import GENERIC_KINDS
from kubesim.views.table_kinds import KIND_PRINTERS


@pytest.mark.parametrize("key", sorted(KIND_PRINTERS), ids=lambda k: f"{k[0] or 'core'}/{k[1]}")
def test_every_row_has_a_cell_per_column_even_for_a_bare_object(key):
    printer = KIND_PRINTERS[key]
    bare = {"metadata": {"name": "x", "creationTimestamp": "2026-01-01T00:00:00Z"}}
    cells = printer.row(bare)
    assert len(cells) == len(printer.columns)
    assert cells[0] == "x" and printer.columns[0]["name"] == "Name"


def test_every_printer_is_of_a_served_kind():
    served = {(info.group, info.kind) for info in GENERIC_KINDS}
    assert set(KIND_PRINTERS) <= served
