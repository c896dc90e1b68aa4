// make demo-ui: draws the pipeline from /api/state, polled every 250 ms (demo/ui/server.py).
// Every entry is a record the controller or kubesim already produced (demo/ui/recorder.py);
// this file only places it on its stage. Words come from /api/words (demo/ui/words.py).
"use strict";

const STAGES = ["apiserver", "reflector", "fifo", "indexer", "handlers", "queue", "workers",
  "writes", "events"];
const CONTROLS = ["create", "scale", "delete", "deleteDeployment", "collide", "burst",
  "dropWatches", "bookmarks", "compact", "tombstone", "inject409", "inject500", "restart", "pause"];
const X0 = 10, STEP = 132, W = 118, Y = 30, H = 72;
const SVG = "http://www.w3.org/2000/svg";

let words = {};
let lang = localStorage.getItem("demo-ui-lang") || "en";
let since = 0;
let paused = false;
const recent = Object.fromEntries(STAGES.map((s) => [s, []]));
// key -> [{requeues, backoff}] from the workers' "error syncing" / "conflict" records
const backoffs = {};
// per resource, how its reflector last got the whole state: "WatchList" or "list"
const reflectorMode = {};
let writesByCode = {};
// the last control's name and the server's answer (both languages): redrawn on a switch
let lastAnswer = null;

function w(key) {
  const entry = words[key];
  return entry ? entry[lang] : key;
}

function applyWords() {
  document.documentElement.lang = lang;
  for (const el of document.querySelectorAll("[data-w]")) el.textContent = w(el.dataset.w);
  const pause = document.getElementById("btn-pause");
  if (pause) pause.textContent = w(paused ? "resume" : "pause");
  showAnswer();
}

// the control's name and the server's answer, both in the page's language
function showAnswer() {
  if (!lastAnswer) return;
  const { name, body } = lastAnswer;
  const done = lang === "ja" && body.done_ja ? body.done_ja : body.done;
  const result = document.getElementById("result");
  result.textContent = `${w(name === "tombstone" ? "tombstone.control" : name)}: ${done || body.error}`;
  result.dataset.control = name;
}

function el(tag, attrs = {}, text = "") {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text) node.textContent = text;
  return node;
}

function svg(tag, attrs = {}, text = "") {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text) node.textContent = text;
  return node;
}

function stageX(stage) {
  return X0 + STAGES.indexOf(stage) * STEP;
}

function drawPipeline() {
  const edges = document.getElementById("edges");
  const stages = document.getElementById("stages");
  STAGES.forEach((stage, i) => {
    const x = stageX(stage);
    if (i > 0 && stage !== "events") {
      edges.append(svg("line", { x1: x - STEP + W, y1: Y + H / 2, x2: x - 2, y2: Y + H / 2,
        stroke: "#888", "marker-end": "url(#arrow)" }));
    }
    const g = svg("g", { id: `st-${stage}`, class: "stage" });
    g.append(svg("rect", { x, y: Y, width: W, height: H, rx: 8 }));
    g.append(svg("text", { x: x + W / 2, y: Y + 20, class: "label", "data-w": `${stage}.short` }));
    g.append(svg("text", { x: x + W / 2, y: Y + 40, class: "figure", id: `fig-${stage}` }));
    g.append(svg("text", { x: x + W / 2, y: Y + 60, class: "figure small", id: `fig2-${stage}` }));
    stages.append(g);
  });
  // the writes reach the API server, whose watch brings them back: the loop
  const from = stageX("writes") + W / 2, to = stageX("apiserver") + W / 2;
  edges.append(svg("path", { d: `M ${from} ${Y + H} V ${Y + H + 30} H ${to} V ${Y + H + 4}`,
    fill: "none", stroke: "#bbb", "stroke-dasharray": "4 3", "marker-end": "url(#arrow)" }));
  // workers also record Events
  const wx = stageX("workers") + W / 2, ex = stageX("events") + W / 2;
  edges.append(svg("path", { d: `M ${wx} ${Y} V ${Y - 14} H ${ex} V ${Y - 3}`,
    fill: "none", stroke: "#888", "marker-end": "url(#arrow)" }));
}

function drawCards() {
  const cards = document.getElementById("cards");
  for (const stage of STAGES) {
    const card = el("div", { class: "card", id: `card-${stage}` });
    card.append(el("h3", { "data-w": stage }), el("p", { class: "note", "data-w": `${stage}.note` }));
    card.append(el("div", { class: "state", id: `state-${stage}` }));
    card.append(el("ul", { class: "recent", id: `recent-${stage}` }));
    cards.append(card);
  }
}

function drawControls() {
  const buttons = document.getElementById("buttons");
  for (const name of CONTROLS) {
    const box = el("div", { class: "control" });
    const button = el("button", { type: "button", id: `btn-${name}`,
      "data-w": name === "tombstone" ? "tombstone.control" : name });
    button.addEventListener("click", () => act(name === "pause" && paused ? "resume" : name));
    box.append(button);
    if (words[`help.${name}`]) box.append(el("small", { "data-w": `help.${name}` }));
    buttons.append(box);
  }
}

async function act(name) {
  const result = document.getElementById("result");
  lastAnswer = null;
  result.textContent = "…";
  const args = { name: document.getElementById("foo-name").value };
  if (name === "create") args.replicas = Number(document.getElementById("foo-replicas").value);
  const response = await fetch(`/api/action/${name}`, { method: "POST",
    headers: { "Content-Type": "application/json" }, body: JSON.stringify(args) });
  lastAnswer = { name, body: await response.json() };
  showAnswer();
}

// -- tokens: a dot moving along the stages an entry passed --------------------------------

const tokens = [];

function flowOf(entry) {
  if (entry.message === "informer") return ["apiserver", "reflector", "fifo", "indexer", "handlers"];
  if (entry.message === "enqueue") return ["handlers", "queue"];
  if (entry.message === "dequeue") return ["queue", "workers"];
  if (entry.stage === "writes") return ["workers", "writes"];
  return [entry.stage];
}

function launch(entry) {
  const flow = flowOf(entry);
  const xs = flow.map((s) => stageX(s) + W / 2);
  const dot = svg("circle", { r: 6, cy: Y + H / 2, cx: xs[0],
    class: entry.code >= 400 || /error|conflict|Gone|410/.test(entry.text) ? "token bad" : "token" });
  document.getElementById("tokens").append(dot);
  tokens.push({ dot, xs, t0: performance.now(), dur: 350 * Math.max(1, xs.length - 1) });
  for (const stage of flow) flash(stage);
}

function flash(stage) {
  const g = document.getElementById(`st-${stage}`);
  g.classList.remove("hot");
  void g.getBBox();
  g.classList.add("hot");
  clearTimeout(g.cool);
  g.cool = setTimeout(() => g.classList.remove("hot"), 450);
}

function animate(now) {
  for (let i = tokens.length - 1; i >= 0; i--) {
    const t = tokens[i];
    const p = Math.min(1, (now - t.t0) / t.dur);
    const seg = p * (t.xs.length - 1);
    const k = Math.min(t.xs.length - 2, Math.floor(seg));
    const x = t.xs.length > 1 ? t.xs[k] + (t.xs[k + 1] - t.xs[k]) * (seg - k) : t.xs[0];
    t.dot.setAttribute("cx", x);
    if (p >= 1) {
      t.dot.remove();
      tokens.splice(i, 1);
    }
  }
  requestAnimationFrame(animate);
}

// -- entries ----------------------------------------------------------------------------

function take(entry) {
  since = Math.max(since, entry.seq);
  recent[entry.stage].unshift(entry);
  recent[entry.stage].length = Math.min(recent[entry.stage].length, 3);
  if (entry.message === "error syncing, requeuing" || entry.message === "conflict, requeuing") {
    (backoffs[entry.key] = backoffs[entry.key] || []).push(
      { requeues: entry.requeues, backoff: entry.backoff, conflict: entry.message !== "error syncing, requeuing" });
  }
  if (entry.stage === "reflector") {
    // how the reflector last got the whole state: a WatchList stream or a list (a plain watch
    // after either is the same cycle going on)
    const resource = entry.resource || (/^Foo reflector/.test(entry.text) ? "foos"
      : /^Deployment reflector/.test(entry.text) ? "deployments" : "");
    if (/^WatchList |streamed the initial state/.test(entry.text)) reflectorMode[resource] = "WatchList";
    if (/^LIST |listed at resourceVersion/.test(entry.text)) reflectorMode[resource] = "list";
  }
  if (entry.stage === "writes") writesByCode[entry.code] = (writesByCode[entry.code] || 0) + 1;
  const list = document.getElementById("entries");
  const item = el("li", { class: `stage-${entry.stage}`, "data-stage": entry.stage });
  item.append(el("span", { class: "t" }, `${entry.t.toFixed(2)}s`),
    el("span", { class: "badge", "data-w": entry.stage }, w(entry.stage)),
    el("span", { class: "text" }, entry.text));
  if (entry.trace) item.append(el("code", { class: "trace", title: w("trace") }, entry.trace));
  item.dataset.t = entry.t;
  // newest first, by when it happened (kubesim's request log arrives a poll later)
  let before = list.firstChild;
  while (before && Number(before.dataset.t) > entry.t) before = before.nextSibling;
  list.insertBefore(item, before);
  while (list.children.length > 300) list.lastChild.remove();
  if (tokens.length < 40) launch(entry);
}

function renderRecent() {
  for (const stage of STAGES) {
    const ul = document.getElementById(`recent-${stage}`);
    ul.replaceChildren(...recent[stage].map((e) => {
      const li = el("li", { title: e.text });
      li.append(el("span", { class: "txt" }, e.text));
      if (e.trace) li.append(el("code", { class: "trace", title: e.trace }, e.trace));
      return li;
    }));
  }
}

// -- the state ----------------------------------------------------------------------------

// resourceVersions are long numbers: the boxes show their last digits
function shortRV(rv) {
  const s = String(rv ?? "?");
  return s.length > 7 ? `…${s.slice(-6)}` : s;
}

function ms(seconds) {
  if (seconds === null || seconds === undefined) return "?";
  return seconds < 1 ? `${Math.round(seconds * 1000)} ms` : `${seconds.toFixed(2)} s`;
}

function kv(label, value, id) {
  const p = el("p", id ? { id } : {});
  p.append(el("span", { class: "k", "data-w": label }, w(label)), el("span", { class: "v" }, ` ${value}`));
  return p;
}

function chips(keys, cls) {
  const span = el("span", { class: "chips" });
  for (const k of keys) span.append(el("span", { class: `chip ${cls}` }, k));
  if (!keys.length) span.append(el("span", { class: "none" }, "–"));
  return span;
}

function render(state) {
  const m = state.machinery || {};
  const c = state.cluster || {};
  const informers = m.informers || {};
  paused = !!c.paused;
  // API server
  const up = c.up !== false;
  document.getElementById("fig-apiserver").textContent = `rv ${shortRV(c.resourceVersion)}`;
  document.getElementById("fig2-apiserver").textContent = w(up ? "up" : "down");
  document.getElementById("st-apiserver").classList.toggle("down", !up);
  document.getElementById("state-apiserver").replaceChildren(
    kv("resourceVersion", c.resourceVersion || "?"),
    el("p", { id: "apiserver-faults" }, (c.faults || []).map((f) => f.latency ? `latency ${f.latency}s` : `fail ${f.code}`).join(", ")));
  document.getElementById("apiserver-up").textContent = w(up ? "up" : "down");
  // Reflector, FIFO, Indexer
  const refl = [], fifo = [], idx = [];
  let relists = 0, fifoCount = 0, cached = 0;
  for (const [kind, inf] of Object.entries(informers)) {
    const resource = kind === "Foo" ? "foos" : "deployments";
    relists += inf.relists;
    fifoCount += inf.fifo;
    cached += inf.objects.length;
    const box = el("div", { class: "informer" });
    box.append(el("h4", {}, `${kind} (${reflectorMode[resource] || "…"})`),
      kv("resourceVersion", inf.resourceVersion, `rv-${kind}`),
      kv("lists", inf.lists, `lists-${kind}`),
      kv("relists", inf.relists, `relists-${kind}`),
      kv("watches", inf.watches, `watches-${kind}`),
      kv("watchEvents", inf.watchEvents, `watchevents-${kind}`));
    refl.push(box);
    fifo.push(kv("queued", `${kind}: ${inf.fifo}`));
    const ul = el("ul", { class: "objects", id: `cache-${kind}` });
    for (const o of inf.objects) {
      ul.append(el("li", { "data-key": o.key },
        `${o.key} rv ${shortRV(o.rv)} · ${o.available ?? 0}/${o.replicas ?? "-"}${o.owner ? " · " + o.owner : ""}`));
    }
    idx.push(el("h4", {}, kind), ul);
  }
  document.getElementById("state-reflector").replaceChildren(...refl);
  document.getElementById("state-fifo").replaceChildren(...fifo);
  document.getElementById("state-indexer").replaceChildren(...idx);
  document.getElementById("fig-reflector").textContent = `rv ${shortRV((informers.Foo || {}).resourceVersion)}`;
  document.getElementById("fig2-reflector").textContent = `${w("relists")} ${relists}`;
  document.getElementById("fig-fifo").textContent = `${fifoCount}`;
  document.getElementById("fig-indexer").textContent = `${cached}`;
  // workqueue
  const q = m.queue || { queued: [], dirty: [], processing: [], waiting: [], requeues: {} };
  const bo = el("ul", { id: "backoffs" });
  for (const [key, list] of Object.entries(backoffs)) {
    const li = el("li", { "data-key": key, "data-backoffs": list.map((b) => b.backoff ?? "").join(",") });
    li.append(el("b", {}, key + ": "),
      ...list.slice(-8).map((b) => el("span", { class: b.conflict ? "chip conflict" : "chip bad" },
        `#${b.requeues} ${ms(b.backoff)}`)));
    bo.append(li);
  }
  const waiting = el("span", { class: "chips", id: "waiting" });
  for (const d of q.waiting) {
    waiting.append(el("span", { class: "chip delayed" }, `${d.key} ${ms(d.left)} (#${q.requeues[d.key] ?? 0})`));
  }
  document.getElementById("state-queue").replaceChildren(
    kv("queued", "", "q-queued"), chips(q.queued, "queued"),
    kv("dirty", "", "q-dirty"), chips(q.dirty, "dirty"),
    kv("processing", "", "q-processing"), chips(q.processing, "processing"),
    kv("delayed", ""), waiting,
    kv("adds", q.adds ?? 0, "q-adds"),
    el("p", { class: "why", id: "adds-why", "data-w": "adds.why" }, w("adds.why")),
    kv("backoff", ""), bo);
  document.getElementById("fig-queue").textContent = `${q.queued.length} / ${q.processing.length} / ${q.waiting.length}`;
  document.getElementById("fig2-queue").textContent = `${w("adds")} ${q.adds ?? 0}`;
  // workers
  const ws = Object.entries(m.workers || {});
  document.getElementById("state-workers").replaceChildren(
    ...(paused ? [el("p", { class: "paused", id: "workers-paused" }, w("paused"))] : []),
    ...ws.map(([name, key]) => el("p", { class: key ? "busy" : "idle", "data-worker": name },
      `${name}: ${key || w("idle")}`)));
  document.getElementById("fig-workers").textContent = paused ? w("paused") : `${ws.filter(([, k]) => k).length}/${ws.length}`;
  document.getElementById("st-workers").classList.toggle("paused", paused);
  // writes and Events
  // successes in one figure, the failures by code below it (they are what a control injects)
  const codes = Object.entries(writesByCode);
  const ok = codes.filter(([k]) => Number(k) < 300).reduce((n, [, v]) => n + v, 0);
  document.getElementById("fig-writes").textContent = `2xx ${ok}`;
  document.getElementById("fig2-writes").textContent = codes.filter(([k]) => Number(k) >= 300)
    .map(([k, v]) => `${k}×${v}`).join(" ");
  const events = c.events || [];
  document.getElementById("fig-events").textContent = `${events.length}`;
  document.getElementById("state-events").replaceChildren(...events.slice(-5).map((e) =>
    el("p", { class: e.type === "Warning" ? "warning" : "" }, `${e.type} ${e.reason} ×${e.count || 1}`)));
  renderCluster(c);
  renderRecent();
  applyWords();
}

function table(id, header, rows) {
  const t = document.getElementById(id);
  const head = el("tr");
  for (const h of header) head.append(el("th", {}, h));
  t.replaceChildren(head, ...rows.map((r) => {
    const tr = el("tr", { "data-name": r[0] });
    for (const cell of r) tr.append(el("td", {}, String(cell ?? "")));
    return tr;
  }));
}

function age(ts) {
  if (!ts) return "";
  const s = Math.max(0, Math.round((Date.now() - Date.parse(ts)) / 1000));
  return s < 120 ? `${s}s` : `${Math.floor(s / 60)}m`;
}

function renderCluster(c) {
  // the columns kubectl prints (the Foo CRD's printer columns; kubectl's for Deployments)
  table("foos", ["NAME", "DEPLOYMENT", "DESIRED", "AVAILABLE", "READY", "AGE"], (c.foos || []).map((f) => {
    const st = f.status || {};
    const ready = (st.conditions || []).find((x) => x.type === "Ready");
    return [f.metadata.name, f.spec.deploymentName, f.spec.replicas, st.availableReplicas,
      ready ? ready.status : "", age(f.metadata.creationTimestamp)];
  }));
  table("deployments", ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"], (c.deployments || []).map((d) => {
    const st = d.status || {};
    return [d.metadata.name, `${st.readyReplicas || 0}/${d.spec.replicas ?? 1}`, st.updatedReplicas || 0,
      st.availableReplicas || 0, age(d.metadata.creationTimestamp)];
  }));
  table("events", ["TYPE", "REASON", "OBJECT", "COUNT", "MESSAGE"], (c.events || []).map((e) =>
    [e.type, e.reason, eventObject(e), e.count || 1, e.message]));
  renderPods(c.workloads || []);
}

// each Deployment, the ReplicaSets it controls, and their Pods (found by controller owner
// references on the server's side: demo/workloads.py); a Pod is green once Ready
function renderPods(workloads) {
  const box = document.getElementById("pods");
  box.replaceChildren(...workloads.map((wl) => {
    const div = el("div", { class: "workload", "data-deployment": wl.deployment });
    const chain = wl.deployment
      ? `Deployment ${wl.deployment} → ReplicaSet ${wl.replicaSets.join(", ") || "–"} →`
      : w("pods.orphans");
    div.append(el("span", { class: "chain" }, chain));
    const pods = el("span", { class: "chips" });
    for (const p of wl.pods) {
      pods.append(el("span", { class: `chip pod ${p.ready ? "ready" : "not-ready"}`,
        "data-pod": p.name, "data-status": p.status, "data-ready": String(p.ready),
        title: `${w(p.ready ? "pod.ready" : "pod.notReady")} (${p.readyColumn}) · ReplicaSet ${p.replicaSet}` },
      `${p.name} ${p.readyColumn} ${p.status}`));
    }
    if (!wl.pods.length) pods.append(el("span", { class: "none" }, w("pods.none")));
    div.append(pods);
    return div;
  }));
  if (!workloads.length) box.append(el("p", { class: "none" }, w("pods.none")));
}

// kubectl get events' OBJECT column: "deployment/example-foo" (the kind lowercased); the
// object is involvedObject in core/v1 Events, regarding in events.k8s.io/v1
function eventObject(e) {
  const ref = e.involvedObject || e.regarding || {};
  const kind = (ref.kind || "").toLowerCase();
  return ref.name ? `${kind}/${ref.name}` : kind;
}

async function poll() {
  try {
    const response = await fetch(`/api/state?since=${since}`);
    const state = await response.json();
    for (const entry of state.entries) take(entry);
    render(state);
    document.body.dataset.polls = String(Number(document.body.dataset.polls || 0) + 1);
  } catch (err) {
    document.getElementById("apiserver-up").textContent = String(err);
  }
  setTimeout(poll, 250);
}

async function start() {
  words = await (await fetch("/api/words")).json();
  drawPipeline();
  drawCards();
  drawControls();
  document.getElementById("lang").addEventListener("click", () => {
    lang = lang === "en" ? "ja" : "en";
    localStorage.setItem("demo-ui-lang", lang);
    applyWords();
  });
  applyWords();
  requestAnimationFrame(animate);
  poll();
}

start();
