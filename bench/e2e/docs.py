"""Where the end-to-end bench's figures are published: a marked block of docs/benchmarks.md.

The 'End to end' section is written by hand (what the bench does, what bounds each figure) and
holds one block between the markers below that ``--write-docs`` rewrites, so a new run replaces
the figures and never the text that explains them.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "benchmarks.md"
CHART = ROOT / "docs" / "e2e_converge.png"
BEGIN = "<!-- BEGIN e2e_bench figures: `python -m bench.e2e_bench --write-docs` rewrites this -->"
END = "<!-- END e2e_bench figures -->"
SECTION = "## End to end"


def write_docs(figures: str, path: Path = DOCS) -> None:
    """Replace the marked block (markers included) with figures, nothing else.

    Without the markers, a new 'End to end' section holding the block is appended, so a first
    run on a fresh file publishes something to write the prose around.
    """
    block = f"{BEGIN}\n\n{figures.strip(chr(10))}\n\n{END}"
    text = path.read_text()
    start = text.find(BEGIN)
    end = text.find(END, start)
    if start < 0 or end < 0:
        path.write_text(text.rstrip("\n") + f"\n\n{SECTION}\n\n{block}\n")
        return
    path.write_text(text[:start] + block + text[end + len(END) :])
