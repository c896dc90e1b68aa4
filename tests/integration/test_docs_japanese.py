"""The Japanese words a native reading corrected stay corrected (issue 31).

Each entry is a phrase that read wrongly, the reason, and what is said instead. The check runs
over the Japanese documents and the demo page's words (``demo/ui/words.py``), so a phrase copied
from an old version, or translated the old way again, fails here with the better wording.
Also: a command's comment in a Japanese shell block is in Japanese, as the prose around it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from demo.ui.words import ANSWERS, WORDS, glossary
from tests.helpers import ROOT

JA_DOCS = sorted((ROOT / "docs" / "ja").glob("*.md"))
WORDS_FILE = ROOT / "demo" / "ui" / "words.py"

# old phrase -> (why it reads wrongly, what to write)
RETIRED: dict[str, tuple[str, str]] = {
    "再一覧": ("not the glossary's term for relist", "再リスト"),
    "こだま": ("not the usual word for a write's echo, and not in the glossary", "エコー"),
    "ウォッチの裏": ("reads as 'the back side of the watch'", "ウォッチが切れている間に"),
    # (包む for a bundle that packages manifests is fine: only wrapping a function is ラップ)
    "包んで": ("'wrap' a function is ラップ in Japanese programming prose", "ラップして"),
    "を包む": ("'wrap' a function is ラップ in Japanese programming prose", "をラップする"),
    "包んだ": ("'wrap' a function is ラップ in Japanese programming prose", "ラップした"),
    "古い版での書き込み": ("版 is vague: say which version", "古い resourceVersion での書き込み"),
    "下の層の上に立ち": ("a literal 'stands on the layers below'", "下の層だけを使って作られ"),
}

# a command's comment in a shell block: what follows " # "
COMMENT = re.compile(r"\s#\s+(.+)$")
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def japanese_texts() -> list[tuple[str, str]]:
    """(where, text): every Japanese document, and the page's Japanese words."""
    texts = [(str(p.relative_to(ROOT)), p.read_text()) for p in JA_DOCS]
    for key, (_, ja) in {**WORDS, **ANSWERS}.items():
        texts.append((f"demo/ui/words.py [{key}]", ja))
    return texts


@pytest.mark.parametrize("old", sorted(RETIRED))
def test_a_retired_phrase_does_not_come_back(old: str) -> None:
    why, instead = RETIRED[old]
    found = [where for where, text in japanese_texts() if old in text]
    # words.py's comments too, not only the strings the page shows
    if old in WORDS_FILE.read_text():
        found.append(str(WORDS_FILE.relative_to(ROOT)))
    assert not found, f"{old!r} ({why}); write {instead!r} instead: {found}"


def test_the_replacements_are_in_use() -> None:
    """The check above cannot pass by the documents losing the passages: the new words are
    there, and エコー is a glossary term."""
    everything = "\n".join(text for _, text in japanese_texts())
    for instead in ("再リスト", "エコー", "ウォッチが切れている間に", "ラップして"):
        assert instead in everything, instead
    assert glossary()["echo (of the controller's own write)"] == "エコー"


@pytest.mark.parametrize("path", JA_DOCS, ids=lambda p: p.name)
def test_shell_comments_in_japanese_documents_are_japanese(path: Path) -> None:
    english = []
    for block in re.findall(r"^```sh\n(.*?)^```", path.read_text(), re.S | re.M):
        for line in block.splitlines():
            m = COMMENT.search(line)
            if m and not JAPANESE.search(m.group(1)):
                english.append(line)
    assert not english, f"{path.name}: comments left in English: {english}"
