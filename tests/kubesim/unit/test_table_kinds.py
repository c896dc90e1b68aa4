"""The printers of the kinds served by the generic store (kubesim/views/table_kinds.py).

Besides the shape of every row, each printer's columns and cells are compared with a record
(tests/kubesim/data/tables/generic_kinds.json) for a well-filled object of its kind
(table_samples.py), the same object with its fields null, a bare one and, where cells branch,
one down the other branches: a column that moves, reads another field or loses its default
shows up there. When a printer is changed on purpose, rewrite the record with
``python -m tests.kubesim.unit.test_table_kinds`` and read its diff.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubesim.api.builtin_kinds import GENERIC_KINDS
from kubesim.views.table_kinds import KIND_PRINTERS
from tests.kubesim.unit.table_samples import nulled, other_branches, samples

RECORD = Path(__file__).resolve().parents[1] / "data" / "tables" / "generic_kinds.json"


def _key_text(key: tuple[str, str]) -> str:
    return f"{key[0] or 'core'}/{key[1]}"


@pytest.mark.parametrize("key", sorted(KIND_PRINTERS), ids=_key_text)
def test_every_row_has_a_cell_per_column_even_for_a_bare_object(key):
    printer = KIND_PRINTERS[key]
    bare = {"metadata": {"name": "x", "creationTimestamp": "2026-01-01T00:00:00Z"}}
    cells = printer.row(bare)
    assert len(cells) == len(printer.columns)
    assert cells[0] == "x" and printer.columns[0]["name"] == "Name"


def test_every_printer_is_of_a_served_kind():
    served = {(info.group, info.kind) for info in GENERIC_KINDS}
    assert set(KIND_PRINTERS) <= served


def _printed(key: tuple[str, str]) -> dict[str, Any]:
    """A printer's columns, and its rows for the sample objects of its kind."""
    printer, full = KIND_PRINTERS[key], samples()[key]
    objects = {"full": full, "nulls": nulled(full), "bare": {"metadata": full["metadata"]}}
    if key in other_branches():
        objects["other"] = other_branches()[key]
    rows: dict[str, Any] = {}
    for name, obj in objects.items():
        try:
            rows[name] = printer.row(obj)
        except Exception as e:  # recorded as it is (a 500), not as it should be
            rows[name] = {"raises": type(e).__name__}
    return {"columns": printer.columns, "rows": rows}


@pytest.mark.parametrize("key", sorted(KIND_PRINTERS), ids=_key_text)
def test_columns_and_cells_are_as_recorded(key):
    recorded = json.loads(RECORD.read_text())[_key_text(key)]
    printed = _printed(key)
    assert printed["columns"] == recorded["columns"]
    assert printed["rows"] == recorded["rows"]


def test_the_record_covers_every_printer():
    assert set(json.loads(RECORD.read_text())) == {_key_text(k) for k in KIND_PRINTERS}


if __name__ == "__main__":
    RECORD.parent.mkdir(parents=True, exist_ok=True)
    record = {_key_text(key): _printed(key) for key in sorted(KIND_PRINTERS)}
    RECORD.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
