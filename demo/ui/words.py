"""The page's words in English and Japanese; the terms are the glossary's.

No client-go twin: part of the demo. Every label the page shows comes from ``WORDS`` (served as
``/api/words``; the page switches language without a reload). Where a label names a concept of
the glossary (docs/ja/glossary.md), ``TERMS`` says which row, and the Japanese label must carry
that row's Japanese term word for word: ``tests/integration/test_demo_ui.py`` checks it with
``glossary()``, so a term renamed in the glossary cannot drift from the page. The controls'
answers (``ANSWERS``, filled in by ``demo.ui.cluster``) are here too, in both languages, so the
page can show them in its current language; ``ANSWER_TERMS`` checks their terms the same way.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

__all__ = ["ANSWERS", "ANSWER_TERMS", "GLOSSARY", "TERMS", "WORDS", "Answer", "answer", "glossary"]

GLOSSARY = Path(__file__).resolve().parents[2] / "docs" / "ja" / "glossary.md"

# key -> (English, Japanese)
WORDS: dict[str, tuple[str, str]] = {
    "title": ("The controller, live", "コントローラーをライブで見る"),
    "subtitle": (
        "kubesim and the Foo controller in this process: every change, stage by stage, "
        "with the --trace line it logged.",
        "このプロセスの中で kubesim と Foo コントローラーが動いています。変更はすべて、"
        "段階ごとに、ログに出した --trace の行と一緒に流れます。",
    ),
    "language": ("日本語", "English"),
    # the stages
    "apiserver": ("API server", "APIサーバー"),
    "apiserver.note": (
        "kubesim: objects, resourceVersion, history",
        "kubesim: オブジェクト、resourceVersion、履歴",
    ),
    "reflector": ("Reflector", "Reflector（リフレクター）"),
    "reflector.note": ("list or WatchList, then watch", "list または WatchList、その後ウォッチ"),
    "fifo": ("FIFO", "FIFO（DeltaFIFO / RealFIFO）"),
    "fifo.note": ("changes waiting for the cache", "キャッシュへの反映を待つ変更"),
    "indexer": ("Indexer", "Indexer（インデクサー）"),
    "indexer.note": ("the cached objects", "キャッシュされたオブジェクト"),
    "handlers": ("event handlers", "イベントハンドラー"),
    "handlers.note": ("turn a change into a key", "変更をキーにする"),
    "queue": ("workqueue", "ワークキュー"),
    "queue.note": ("queued, dirty, processing, delayed", "待ち、dirty、処理中、遅延"),
    "workers": ("workers", "ワーカー"),
    "workers.note": ("reconcile one key each", "1つずつキーを Reconcile（リコンサイル、調整）"),
    "writes": ("API writes", "API への書き込み"),
    "writes.note": ("what the controller sent", "コントローラーが送ったもの"),
    "events": ("Events", "Event（イベントの記録）"),
    "events.note": ("what it told the user", "ユーザーへの知らせ"),
    # the stages' short names, for the drawing's boxes (the cards carry the full ones)
    "apiserver.short": ("API server", "APIサーバー"),
    "reflector.short": ("Reflector", "Reflector"),
    "fifo.short": ("FIFO", "FIFO"),
    "indexer.short": ("Indexer", "Indexer"),
    "handlers.short": ("event handlers", "ハンドラー"),
    "queue.short": ("workqueue", "ワークキュー"),
    "workers.short": ("workers", "ワーカー"),
    "writes.short": ("API writes", "書き込み"),
    "events.short": ("Events", "Event"),
    # the figures
    "resourceVersion": ("resourceVersion", "リソースバージョン"),
    "lists": ("lists", "list"),
    "relists": ("relists", "再リスト"),
    "watches": ("watches", "ウォッチ"),
    "watchEvents": ("watch events (bookmarks too)", "ウォッチイベント（ブックマークを含む）"),
    "queued": ("queued", "待ち"),
    "dirty": ("dirty", "dirty"),
    "processing": ("processing", "処理中"),
    "delayed": ("delayed (backoff)", "遅延中（バックオフ）"),
    "backoff": ("backoff", "バックオフ"),
    "idle": ("idle", "待機中"),
    "paused": ("paused", "一時停止中"),
    "adds": ("adds", "追加"),
    # what the adds figure counts: client-go's workqueue_adds_total, which skips a key that is
    # already waiting (docs/demo-ui.md says the same)
    "adds.why": (
        "adds counts the adds that queued a key (workqueue_adds_total): a key already waiting "
        "is not added again, so five changes to one paused Foo count one.",
        "追加の数は、キーを待ちに入れた追加だけを数えます（workqueue_adds_total）。"
        "すでに待っているキーは二度は追加されないので、"
        "止めている間に1つの Foo を5回変更しても1と数えます。",
    ),
    "up": ("serving", "稼働中"),
    "down": ("not answering", "応答なし"),
    "trace": ("--trace line", "--trace の行"),
    "log": ("What happened, in order", "起きたこと（順番どおり）"),
    "cluster": ("kubectl get foos,deployments,pods", "kubectl get foos,deployments,pods"),
    # the Pods, drawn by Deployment
    "pods": ("Pods, by Deployment", "Deployment ごとの Pod"),
    "pods.note": (
        "Each Deployment controls a ReplicaSet, which controls the Pods; the page follows the "
        "controller ownerReferences, as the deployment and ReplicaSet controllers do. kubesim's "
        "simulated node runs each Pod: ContainerCreating first, then Running and Ready.",
        "Deployment が ReplicaSet を、ReplicaSet が Pod を制御します。このページは、"
        "Deployment コントローラーと ReplicaSet コントローラーと同じく、controller 指定の"
        "オーナーリファレンスをたどって描きます。Pod は kubesim の模擬ノードが動かします。"
        "まず ContainerCreating、次に Running で Ready になります。",
    ),
    "pods.none": ("no Pods", "Pod はありません"),
    "pods.orphans": (
        "ReplicaSet gone, Pods being collected:",
        "ReplicaSet が消え、回収を待つ Pod:",
    ),
    "pod.ready": ("Ready", "Ready（準備完了）"),
    "pod.notReady": ("not Ready", "まだ Ready ではない"),
    "name": ("Foo name", "Foo の名前"),
    "replicas": ("replicas", "レプリカ数"),
    # the controls
    "controls": ("Try it", "試す"),
    "create": ("Create Foo", "Foo を作る"),
    "scale": ("Scale +1", "レプリカ数を +1"),
    "delete": ("Delete Foo", "Foo を消す"),
    "deleteDeployment": ("Delete its Deployment", "その Deployment を消す"),
    "collide": ("Colliding Deployment", "名前がぶつかる Deployment"),
    "burst": ("Burst of 5 changes", "5回続けて変更"),
    "dropWatches": ("Drop the watch", "ウォッチを切る"),
    "bookmarks": ("Send bookmarks", "ブックマークを送る"),
    "compact": ("Compact history (410)", "履歴をコンパクション（410）"),
    "tombstone.control": ("Delete behind the watch's back", "ウォッチが切れている間に消す"),
    "inject409": ("Inject 409s", "409 を起こす"),
    "inject500": ("Inject 500s", "500 を返させる"),
    "restart": ("Restart the API server", "APIサーバーを再起動"),
    "pause": ("Pause workers", "ワーカーを止める"),
    "resume": ("Resume workers", "ワーカーを再開"),
    "pause.why": (
        "The controller has no pause, as client-go has none: the demo holds its workers from "
        "outside, before they take a key (it wraps the queue's get on this one instance). Keys "
        "added meanwhile stay queued, so a burst for one Foo stays one key.",
        "コントローラーにも client-go にも一時停止はありません。デモが外側から、ワーカーが"
        "キーを取る前に止めています（このインスタンスの queue の get をラップしています）。"
        "その間に追加されたキーは待ちのままなので、"
        "1つの Foo への連続した変更は1つのキーのままです。",
    ),
    "help.create": (
        "the Deployment and its Pods appear, then the status",
        "Deployment と Pod が現れ、次に status",
    ),
    "help.scale": (
        "the Deployment's replicas follow, and its Pods",
        "Deployment のレプリカ数と Pod が追いつく",
    ),
    "help.delete": (
        "garbage collection removes the Deployment and its Pods",
        "ガベージコレクションが Deployment とその Pod を消す",
    ),
    "help.deleteDeployment": ("the controller creates it again", "コントローラーが作り直す"),
    "help.collide": (
        "ErrResourceExists, retried with backoff",
        "ErrResourceExists、バックオフで再試行",
    ),
    "help.burst": ("pause first: one key in the queue", "先に止めると、キューにはキーが1つ"),
    "help.dropWatches": (
        "watch again from the resourceVersion, no relist",
        "resourceVersion からウォッチし直す。再リストなし",
    ),
    "help.bookmarks": (
        "watch events +1, no handler runs: only a resourceVersion",
        "ウォッチイベントは増えるが、ハンドラーは動かない。運ぶのはリソースバージョンだけ",
    ),
    "help.compact": ("410 Gone: the relist is counted", "410 Gone: 再リストが数えられる"),
    "help.tombstone": (
        "the relist finds it gone: a tombstone",
        "再リストで消えたと分かる: tombstone（墓標）",
    ),
    "help.inject409": (
        "a stale write: requeued, not an error",
        "古い resourceVersion での書き込み、つまり競合 (409 Conflict): エラーではなく再投入",
    ),
    "help.inject500": ("each retry waits twice as long", "再試行のたびに待ち時間が倍に"),
    "help.restart": (
        "watches cut, resumed from their resourceVersion",
        "ウォッチが切れ、resourceVersion から再開",
    ),
}

# key -> the English of its glossary row (docs/ja/glossary.md); the Japanese label contains
# that row's Japanese term.
TERMS: dict[str, str] = {
    "reflector": "Reflector",
    "fifo": "DeltaFIFO / RealFIFO",
    "indexer": "Indexer",
    "handlers": "event handler",
    "queue": "workqueue",
    "workers": "worker",
    "workers.note": "reconcile",
    "events": "event recording",
    "resourceVersion": "resourceVersion",
    "relists": "relist",
    "delayed": "backoff",
    "backoff": "backoff",
    "help.tombstone": "tombstone",
    "help.inject409": "conflict, optimistic concurrency",
    "bookmarks": "bookmark",
    "help.bookmarks": "resourceVersion",
    "help.delete": "garbage collection",
    "pods.note": "ownerReference",
}


class Answer(NamedTuple):
    """A control's answer in both languages (the server sends both; the page picks one)."""

    en: str
    ja: str


# control -> (English, Japanese) format strings, with the same fields; "error" is the answer
# when the API server refused a control's request (its message is the server's, in English).
ANSWERS: dict[str, tuple[str, str]] = {
    "create": ("kubectl apply: Foo {name}", "kubectl apply: Foo {name} を作りました"),
    "scale": (
        "kubectl patch foo {name}: replicas {replicas}",
        "kubectl patch foo {name}: レプリカ数を {replicas} に",
    ),
    "delete": (
        "kubectl delete foo {name} (the garbage collector removes its Deployment)",
        "kubectl delete foo {name}（その Deployment はガベージコレクションで消えます）",
    ),
    "deleteDeployment": (
        "kubectl delete deployment {name}",
        "kubectl delete deployment {name} を実行しました",
    ),
    "collide": (
        "Deployment not-ours (no owner), then Foo collider wanting it",
        "オーナーのいない Deployment not-ours を作り、次にその名前を求める Foo collider を"
        "作りました",
    ),
    "burst": ("5 changes to Foo {name}", "Foo {name} を5回続けて変更しました"),
    "dropWatches": (
        "closed {closed} watches: each resumes from its resourceVersion",
        "ウォッチを {closed} 本切りました。それぞれ自分の resourceVersion から再開します",
    ),
    "bookmarks": (
        "bookmarks asked of every watch",
        "すべてのウォッチにブックマークを送るよう頼みました",
    ),
    "compact": (
        "compacted at rv {rv}, closed {closed} watches",
        "rv {rv} で履歴をコンパクションし、ウォッチを {closed} 本切りました",
    ),
    "tombstone": (
        "deleted Deployment {name} while the watch was down, then compacted",
        "ウォッチが切れている間に Deployment {name} を消し、履歴をコンパクションしました",
    ),
    "inject500": (
        "the next {count} Deployment writes answer 500; scaled Foo {name}",
        "次の {count} 回の Deployment への書き込みは 500 を返します。"
        "Foo {name} のレプリカ数を増やしました",
    ),
    "inject409": (
        "wrote Foo {name} during {conflicts} of the controller's status writes",
        "コントローラーの status の書き込みのうち {conflicts} 回の最中に Foo {name} を"
        "書き換えました",
    ),
    "restart": (
        "kubesim restarting on the same port (state kept)",
        "kubesim を同じポートで再起動しています（状態はそのまま）",
    ),
    "pause": (
        "workers paused (held before they take a key)",
        "ワーカーを止めました（キーを取る前で待たせています）",
    ),
    "resume": ("workers resumed", "ワーカーを再開しました"),
    "error": ("{code}: {message}", "APIサーバーがエラー {code} を返しました: {message}"),
}

# control -> the English of its glossary row; the Japanese answer contains that row's term.
ANSWER_TERMS: dict[str, str] = {
    "scale": "replicas",
    "delete": "garbage collection",
    "bookmarks": "bookmark",
    "pause": "worker",
    "resume": "worker",
}


def answer(control: str, **fields: object) -> Answer:
    """The answer of ``control`` in both languages, its fields filled in."""
    en, ja = ANSWERS[control]
    return Answer(en.format(**fields), ja.format(**fields))


_ROW = re.compile(r"^\|\s*([^|]+?)\s*\|\s*([^|]+?)\s*\|")


def glossary(path: Path = GLOSSARY) -> dict[str, str]:
    """The glossary's term pairs, English -> Japanese, from every table's first two columns."""
    pairs: dict[str, str] = {}
    for line in path.read_text().splitlines():
        m = _ROW.match(line)
        if m and not set(m.group(1)) <= set("-: ") and m.group(1) != "日本語":
            pairs[m.group(2)] = m.group(1)
    return pairs
