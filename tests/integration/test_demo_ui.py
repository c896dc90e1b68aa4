"""``make demo-ui`` in a real browser: the page shows what the cluster and the controller did.

The demo runs as ``python -m demo.ui`` (its own process, as a learner starts it); a headless
Chromium (Debian's ``chromium``; ``.ci/run`` installs it) opens the page and is driven over the
DevTools protocol (``tests/integration/browser.py``: real mouse clicks on the controls). The
test checks the page against the machinery's own answers: the Deployment appears in the table
and in the Indexer, a compaction is counted as a relist, the 500s' backoff doubles, a burst
while paused stays one queued key (and one add), and the Japanese labels carry the glossary's
terms, drawn by a font (``.ci/run`` installs fonts-ipaexfont-gothic) rather than as boxes. It takes
its screenshots into the test's tmp dir (``DEMO_UI_SCREENSHOTS=<dir>`` writes them there
instead: how docs/demo-ui*.png are made). Without chromium the browser test is skipped with
the reason; the words test needs no browser.
"""

from __future__ import annotations

import json
import os
import re
import signal
import string
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from demo.ui.cluster import ACTIONS
from demo.ui.words import ANSWER_TERMS, ANSWERS, TERMS, WORDS, answer, glossary
from tests.helpers import ROOT
from tests.integration.browser import Browser, chromium_path

CHROMIUM = chromium_path()


def test_every_label_has_both_languages_and_the_glossary_terms():
    pairs = glossary()
    # the glossary parsed: a few rows every reader meets
    assert pairs["Reflector"] == "リフレクター"
    assert pairs["workqueue"] == "ワークキュー"
    for key, (en, ja) in WORDS.items():
        assert en and ja, key
    for key, term in TERMS.items():
        assert term in pairs, f"{key}: {term!r} is not a row of docs/ja/glossary.md"
        assert pairs[term] in WORDS[key][1], f"{key}: {WORDS[key][1]!r} lacks {pairs[term]!r}"
    # every control the page offers has its words (app.js's CONTROLS list)
    app = (ROOT / "demo" / "ui" / "static" / "app.js").read_text()
    controls = re.search(r"const CONTROLS = \[(.*?)\];", app, re.S)
    assert controls is not None
    for name in re.findall(r'"(\w+)"', controls.group(1)):
        assert name in ACTIONS, name
        assert (name if name != "tombstone" else "tombstone.control") in WORDS, name


def test_every_control_answers_in_both_languages():
    # every control, and the refused request, has an English and a Japanese answer ...
    assert set(ANSWERS) == set(ACTIONS) | {"error"}
    formatter = string.Formatter()
    for key, (en, ja) in ANSWERS.items():
        assert en and ja, key
        assert not re.search(r"[\u3040-\u30ff]", en), f"{key}: Japanese in {en!r}"
        assert re.search(r"[\u3040-\u30ff]", ja), f"{key}: {ja!r} is not Japanese"
        # ... with the same fields, so one call fills in both
        fields = [{f for _, f, _, _ in formatter.parse(text) if f} for text in (en, ja)]
        assert fields[0] == fields[1], key
    done = answer("burst", name="example-foo")
    assert done.en == "5 changes to Foo example-foo"
    assert done.ja == "Foo example-foo を5回続けて変更しました"
    with pytest.raises(KeyError):
        answer("no-such-control")
    pairs = glossary()
    for key, term in ANSWER_TERMS.items():
        assert term in pairs, f"{key}: {term!r} is not a row of docs/ja/glossary.md"
        assert pairs[term] in ANSWERS[key][1], f"{key}: {ANSWERS[key][1]!r} lacks {pairs[term]!r}"


@pytest.fixture
def demo_ui() -> Iterator[str]:
    """``python -m demo.ui`` on a free port; its URL. Stopped with Ctrl-C's SIGINT, and it
    must exit 0 (the controller drained and stopped)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "demo.ui", "--status-delay", "0.3"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    lines: list[str] = []
    for line in proc.stdout:
        lines.append(line)
        match = re.search(r"open (http://127\.0\.0\.1:\d+/)", line)
        if match:
            break
    else:
        pytest.fail("python -m demo.ui printed no address:\n" + "".join(lines))
    # keep reading what it prints, so that a full pipe never blocks it
    drain = threading.Thread(target=lambda: lines.extend(proc.stdout or ()), daemon=True)
    drain.start()
    try:
        yield match.group(1)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=40)
        drain.join(5)
        out = "".join(lines)
        assert proc.returncode == 0, out
        assert "controller exited 0" in out


@pytest.fixture
def browser() -> Iterator[Browser]:
    if CHROMIUM is None:
        pytest.skip(
            "chromium is not installed (apt-get install -y chromium, or set CHROMIUM=<path>); "
            ".ci/run installs it"
        )
    b = Browser(CHROMIUM)
    try:
        yield b
    finally:
        b.close()


# True when each of 日, 本 and 語 is drawn in the page's font as something other than what a
# character no font has (U+E000, private use) is drawn as: the missing-glyph box. Canvas pixels,
# because document.fonts.check says true for a system font whatever it covers.
JAPANESE_GLYPHS_DRAWN = """(() => {
  const family = getComputedStyle(document.querySelector('#lang')).fontFamily;
  const draw = (ch) => {
    const c = document.createElement('canvas');
    c.width = c.height = 48;
    const g = c.getContext('2d');
    g.font = `32px ${family}`;
    g.fillText(ch, 4, 38);
    return Array.from(g.getImageData(0, 0, 48, 48).data).join(',');
  };
  const box = draw('\\uE000'), blank = draw(' ');
  return ['日', '本', '語'].every((ch) => { const d = draw(ch); return d !== box && d !== blank; });
})()"""


def text(browser: Browser, selector: str) -> str:
    return browser.js(f"document.querySelector({json.dumps(selector)})?.textContent ?? ''")


def test_the_page_shows_what_the_cluster_did(
    browser: Browser, demo_ui: str, tmp_path: Path
) -> None:
    # (browser first: without chromium the test skips before the demo starts)
    shots = Path(os.environ.get("DEMO_UI_SCREENSHOTS") or tmp_path)
    browser.goto(demo_ui)
    browser.wait("Number(document.body.dataset.polls || 0) >= 2", "the page's first polls")
    assert text(browser, "#card-reflector h3") == "Reflector"

    # create: the Deployment appears, in kubectl's table and in the Deployment informer's cache
    browser.click("#btn-create")
    browser.wait(
        "document.querySelector('#deployments tr[data-name=\"example-foo\"]')",
        "the Deployment in the table",
    )
    browser.wait(
        "document.querySelector('#cache-Deployment li[data-key=\"default/example-foo\"]')",
        "the Deployment in the Indexer",
    )
    # the Foo's status reports the replica kubesim made available
    browser.wait(
        "document.querySelector('#foos tr[data-name=\"example-foo\"] td:nth-child(4)')"
        "?.textContent === '1'",
        "availableReplicas 1",
    )
    # the path it took, as --trace lines beside the entries
    log = text(browser, "#entries")
    for step in (
        '"informer" kind=Foo event=add',
        '"enqueue"',
        '"dequeue"',
        '"creating deployment"',
    ):
        assert step in log, step
    assert "CREATE deployments default -> 201" in log
    # its Pod, drawn under its Deployment (found through the ReplicaSet's owner references),
    # Running and Ready once kubesim's simulated node runs it
    ready_pods = (
        "[...document.querySelectorAll("
        '\'#pods .workload[data-deployment="example-foo"] .pod[data-ready="true"]\')]'
        ".filter(p => p.dataset.status === 'Running').map(p => p.dataset.pod)"
    )
    first_pods = browser.wait(
        f"(() => {{ const p = {ready_pods}; return p.length ? p : null; }})()", "a Ready Pod"
    )
    assert len(first_pods) == 1 and first_pods[0].startswith("example-foo-"), first_pods
    chain = text(browser, '#pods .workload[data-deployment="example-foo"] .chain')
    assert chain.startswith("Deployment example-foo → ReplicaSet example-foo-"), chain
    browser.screenshot(shots / "demo-ui.png")

    # bookmarks: a watch event that moves no object (the count grows, the cache stays)
    events = int(text(browser, "#watchevents-Foo .v"))
    browser.click("#btn-bookmarks")
    browser.wait(
        f"Number(document.querySelector('#watchevents-Foo .v').textContent) > {events}",
        "a bookmark counted",
    )

    # compact history: each watch meets 410 Gone, and the relists are counted
    assert text(browser, "#relists-Foo .v").strip() == "0"
    browser.click("#btn-compact")
    browser.wait("document.querySelector('#relists-Foo .v').textContent.trim() === '1'", "a relist")
    browser.wait("document.querySelector('#entries').textContent.includes('410')", "the 410")

    # behind the watch's back: the relist finds the Deployment gone and hands the handlers a
    # tombstone; the controller creates the Deployment again
    browser.click("#btn-tombstone")
    browser.wait(
        "document.querySelector('#entries').textContent"
        ".includes('recovered deleted object from tombstone')",
        "the tombstone",
    )
    browser.wait(
        "document.querySelector('#entries').textContent"
        ".split('CREATE deployments default -> 201').length > 2",
        "the Deployment created again",
    )
    # the old Deployment's Pod went with it (garbage collection); the new one runs a new Pod
    browser.wait(
        f"(() => {{ const p = {ready_pods}; return p.length === 1"
        f" && !p.includes({json.dumps(first_pods[0])}); }})()",
        "a new Pod for the new Deployment, the old one gone",
    )

    # 500s: each failed sync adds the key back after a backoff that doubles
    browser.click("#btn-inject500")
    backoffs = browser.wait(
        "(() => { const li = document.querySelector("
        "'#backoffs li[data-key=\"default/example-foo\"]');"
        " const v = li ? li.dataset.backoffs.split(',').map(Number) : [];"
        " return v.length >= 4 ? v : null; })()",
        "four retries",
    )
    assert all(b > a for a, b in zip(backoffs, backoffs[1:], strict=False)), backoffs
    assert backoffs[1] == pytest.approx(2 * backoffs[0], rel=0.35)

    # 409s: the status write carries a resourceVersion that is no longer current; the sync is
    # requeued, not counted as an error
    browser.click("#btn-inject409")
    browser.wait(
        "document.querySelector('#entries').textContent.includes('UPDATE foos/status "
        "default/example-foo -> 409')",
        "a 409 on the status write",
    )
    browser.wait(
        "document.querySelector('#entries').textContent.includes('\"conflict, requeuing\"')",
        "the requeue",
    )

    # the 日本語 button's glyphs are drawn by a font, not as the missing-glyph box (a fresh
    # headless Chromium has no CJK font; .ci/run installs fonts-ipaexfont-gothic)
    assert browser.js(JAPANESE_GLYPHS_DRAWN) is True, "no font draws 日本語 (boxes on the page)"

    # Japanese: the labels switch, with the glossary's terms
    browser.click("#lang")
    polls = browser.js("Number(document.body.dataset.polls)")
    browser.wait(f"Number(document.body.dataset.polls) > {polls + 1}", "a poll drawn in Japanese")
    assert browser.js("document.documentElement.lang") == "ja"
    assert text(browser, "#card-reflector h3") == WORDS["reflector"][1]
    assert text(browser, "#card-queue h3") == glossary()["workqueue"]
    assert glossary()["relist"] in text(browser, "#state-reflector")
    assert text(browser, "#cluster h3") == WORDS["pods"][1]
    assert glossary()["ownerReference"] in text(browser, "#cluster .why")

    # pause, then a burst of changes (in Japanese now): the queue holds one key, the workers none
    # and so are the controls' answers: the server's, in the page's language
    browser.click("#btn-pause")
    browser.wait("document.querySelector('#workers-paused')", "the workers paused")
    paused_ja = json.dumps(f"{WORDS['pause'][1]}: {ANSWERS['pause'][1]}")
    browser.wait(
        f"document.querySelector('#result').textContent === {paused_ja}",
        "the pause, answered in Japanese",
    )
    browser.wait(
        "!document.querySelector('#state-queue .chip.processing')", "the syncs in flight to end"
    )
    # the adds figure and the queued keys, from one poll's drawing
    adds, waiting = browser.js(
        "[Number(document.querySelector('#q-adds .v').textContent),"
        " [...document.querySelectorAll('#state-queue .chip.queued')].map(e => e.textContent)]"
    )
    browser.click("#btn-burst")
    burst = answer("burst", name="example-foo")
    browser.wait(
        f"document.querySelector('#result').textContent.includes({json.dumps(burst.ja)})",
        "the burst, answered in Japanese",
    )
    queued = browser.wait(
        "(() => { const q = [...document.querySelectorAll('#state-queue .chip.queued')]"
        ".map(e => e.textContent); return q.length ? q : null; })()",
        "the queued key",
    )
    assert queued == ["default/example-foo"]
    # five changes, five calls to add, and the adds figure (workqueue_adds_total) moves by one,
    # as the page and the docs say: after the first, the key is waiting, and the queue
    # de-duplicates (by none, when a retry had queued the key already)
    expected = adds if "default/example-foo" in waiting else adds + 1
    browser.wait(
        f"Number(document.querySelector('#q-adds .v').textContent) === {expected}", "one add"
    )
    assert WORDS["adds.why"][1] in text(browser, "#adds-why")
    browser.screenshot(shots / "demo-ui-ja.png")
    # and it stays one: a moment later (not a synchronisation: a check that nothing changes)
    time.sleep(0.5)
    assert browser.js("[...document.querySelectorAll('#state-queue .chip.queued')].length") == 1
    assert browser.js("Number(document.querySelector('#q-adds .v').textContent)") == expected
    browser.click("#btn-pause")
    browser.wait("!document.querySelector('#workers-paused')", "the workers resumed")
    browser.wait("!document.querySelector('#state-queue .chip.queued')", "the queue drained")
