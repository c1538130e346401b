// jobdedup review: the page's one script, served from the package (no CDN, no framework).
// Every piece of ad text goes into the page as a text node (el() below), never as HTML.
"use strict";

const state = Object.assign({ token: sessionStorage.getItem("jobdedup-token") || "", queue: [], position: 0,
  context: "", sample: "", answers: {}, meta: null, busy: false },
  JSON.parse(sessionStorage.getItem("jobdedup-queue") || "{}"));

function remember() {  // the list being read survives a reload of the page
  const { queue, position, context, sample } = state;
  sessionStorage.setItem("jobdedup-queue", JSON.stringify({ queue, position, context, sample }));
}
const DUP_TYPES = ["", "FULL", "PARTIAL", "TEMPORAL", "SEMANTIC"];

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function svg(tag, attrs, text) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

async function api(path, options) {
  const headers = Object.assign({}, (options || {}).headers);
  if (state.token) headers.Authorization = "Bearer " + state.token;
  const response = await fetch(path, Object.assign({}, options, { headers }));
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

function show(...children) {
  const main = document.getElementById("main");
  main.replaceChildren(...children);
}

function status(text) { document.getElementById("status").textContent = text; }
function key(a, b) { return a < b ? a + "|" + b : b + "|" + a; }
function fmt(x, digits) { return x === null || x === undefined ? "–" : Number(x).toFixed(digits); }

// ------------------------------------------------------------------------------------ groups
async function groupsPage(params) {
  const fields = ["title", "employer", "source", "corpus", "min_size", "max_size"];
  const meta = state.meta;
  const input = (name, label, attrs) => el("label", {}, label,
    el("input", Object.assign({ id: "filter-" + name, name, value: params.get(name) || "" }, attrs)));
  const choice = (name, label, values) => el("label", {}, label,
    el("select", { id: "filter-" + name, name },
      el("option", { value: "" }, "all"),
      values.map(v => el("option", { value: v, selected: params.get(name) === v }, v))));
  const form = el("form", { class: "filters", id: "filters", onsubmit: event => {
      event.preventDefault();
      const next = new URLSearchParams();
      for (const name of fields) {
        const value = form.elements[name].value.trim();
        if (value) next.set(name, value);
      }
      location.hash = "#/groups?" + next.toString();
    } },
    input("title", "title words"), input("employer", "employer"),
    choice("source", "source", meta.source), choice("corpus", "corpus", meta.corpus),
    input("min_size", "min size", { type: "number", min: 1, size: 4 }),
    input("max_size", "max size", { type: "number", min: 1, size: 4 }),
    el("button", { type: "submit", class: "primary", id: "filter-apply" }, "Filter"));
  const query = new URLSearchParams(params);
  query.set("per_page", "50");
  const found = await api("/api/groups?" + query.toString());
  const pages = Math.max(1, Math.ceil(found.total / found.per_page));
  const goto = page => { const next = new URLSearchParams(params); next.set("page", page);
    location.hash = "#/groups?" + next.toString(); };
  const rows = found.groups.map(g => el("tr", {},
    el("td", { class: "num" }, g.size),
    el("td", {}, el("a", { href: "#/group/" + encodeURIComponent(g.group_id), class: "group-link" },
      g.title || "(no title)")),
    el("td", {}, g.employer), el("td", {}, g.sources), el("td", {}, g.corpora)));
  show(el("h2", {}, `Groups (${found.total} match, largest first)`), form,
    el("table", { id: "groups-table" },
      el("thead", {}, el("tr", {}, el("th", { class: "num" }, "ads"), el("th", {}, "title"),
        el("th", {}, "employer"), el("th", {}, "sources"), el("th", {}, "corpora"))),
      el("tbody", {}, rows)),
    el("div", { class: "pager" },
      el("button", { disabled: found.page <= 1, onclick: () => goto(found.page - 1) }, "‹ previous"),
      el("span", { id: "page-info" }, `page ${found.page} of ${pages}`),
      el("button", { disabled: found.page >= pages, onclick: () => goto(found.page + 1) }, "next ›")));
}

// ------------------------------------------------------------------------------------ a group
async function groupPage(groupId) {
  const group = await api("/api/groups/" + encodeURIComponent(groupId));
  state.answers = await api("/api/labels");
  const fields = Object.keys(group.members[0]).filter(f => f !== "differs");
  const members = group.members.map(m => el("tr", {},
    fields.map(f => el("td", { class: f !== "ad_id" && m.differs.includes(f) ? "differs" : null }, m[f] ?? ""))));
  const pairs = group.pairs.map(p => [p.ad_id_a, p.ad_id_b]);
  const start = (index) => { startQueue(pairs, index, "group:" + groupId, ""); };
  const pairRows = group.pairs.map((p, i) => {
    const answer = state.answers[key(p.ad_id_a, p.ad_id_b)];
    return el("tr", {},
      el("td", {}, el("a", { href: "#", class: "pair-link", onclick: e => { e.preventDefault(); start(i); } },
        p.ad_id_a, " ~ ", p.ad_id_b)),
      el("td", { class: "num" }, fmt(p.probability, 3)), el("td", {}, p.is_duplicate ? "duplicate" : "different"),
      el("td", {}, p.rule ?? ""), el("td", {}, p.dup_type ?? ""),
      el("td", { class: "answered" }, answer ? (answer.label === "1" ? "same" : "different") : ""));
  });
  show(el("h2", {}, `Group ${group.group_id} — ${group.size} ads`),
    el("p", {}, "Cells that differ from the first ad are marked."),
    el("table", { id: "members-table" }, el("thead", {}, el("tr", {}, fields.map(f => el("th", {}, f)))),
      el("tbody", {}, members)),
    el("h2", {}, `Candidate pairs in the group (${group.pairs.length})`),
    pairs.length ? el("button", { class: "primary", id: "label-group", onclick: () => start(0) },
      "Read and label these pairs") : el("p", {}, "A single ad: no pairs."),
    el("table", { id: "pairs-table" }, el("thead", {}, el("tr", {}, ["pair", "probability", "decision",
      "rule", "type", "your answer"].map(h => el("th", {}, h)))), el("tbody", {}, pairRows)));
}

// ------------------------------------------------------------------------------------ a pair
function startQueue(pairs, index, context, sample) {
  Object.assign(state, { queue: pairs, position: index, context, sample });
  remember();
  location.hash = "#/pair";
  render();
}

async function pairPage() {
  if (!state.queue.length) { show(el("p", {}, "No pair chosen: open a group or a sampling mode.")); return; }
  if (state.position >= state.queue.length) {
    show(el("h2", {}, "Done"), el("p", { id: "queue-done" }, `All ${state.queue.length} pairs of this list are answered.`),
      state.sample ? estimatePanel(await api("/api/estimate")) : "");
    return;
  }
  const [a, b] = state.queue[state.position];
  status("explaining the pair…");
  const [pair, answers] = await Promise.all([
    api("/api/pair?" + new URLSearchParams({ a, b }).toString()), api("/api/labels")]);
  status("");
  state.answers = answers;
  const previous = answers[key(a, b)];
  const typeSelect = el("select", { id: "dup-type" }, DUP_TYPES.map(t =>
    el("option", { value: t, selected: previous && previous.dup_type === t }, t || "type (optional)")));
  const reason = el("input", { id: "reason", size: 40, placeholder: "reason (optional)",
    value: previous ? previous.reason || "" : "" });
  const bar = el("div", { class: "answer-bar" },
    el("span", { id: "progress" }, `pair ${state.position + 1} of ${state.queue.length}`),
    el("button", { id: "answer-y", class: "primary", onclick: () => answer(1) }, "Same vacancy ", el("kbd", {}, "y")),
    el("button", { id: "answer-n", onclick: () => answer(0) }, "Different ", el("kbd", {}, "n")),
    el("button", { id: "answer-u", onclick: () => answer(null) }, "Unsure ", el("kbd", {}, "u")),
    el("button", { id: "answer-b", onclick: back }, "Back ", el("kbd", {}, "b")),
    typeSelect, reason,
    el("span", { id: "current-answer", class: "answered" },
      previous ? `answered: ${previous.label === "1" ? "same" : "different"}` : ""));
  const facts = el("div", { class: "facts" },
    el("span", {}, el("b", {}, "probability "), fmt(pair.probability, 4), ` (threshold ${fmt(pair.threshold, 4)})`),
    el("span", {}, el("b", {}, "decision "), pair.decision),
    el("span", { id: "pair-type" }, el("b", {}, "type "), pair.dup_type || "–"),
    el("span", {}, el("b", {}, "rule "), pair.rule || "none"),
    el("span", {}, el("b", {}, "dedup groups "), pair.same_group ? "the same group" : "different groups"));
  const fieldRows = Object.entries(pair.fields).map(([name, [va, vb]]) => el("tr",
    { class: norm(va) !== norm(vb) ? "differs" : null }, el("th", {}, name), el("td", {}, va ?? ""), el("td", {}, vb ?? "")));
  const column = (title, blocks) => el("div", { class: "text" }, el("h3", {}, title),
    blocks.length ? blocks.map(block => el("p", { class: "block" + (block.shared ? " shared" : "") +
      (block.boilerplate ? " boilerplate" : "") }, block.text)) : el("p", {}, "(no description)"));
  show(bar, estimateSlot(), facts,
    el("table", { id: "fields-table" }, el("thead", {}, el("tr", {}, el("th", {}, "field"),
      el("th", {}, pair.ad_id_a), el("th", {}, pair.ad_id_b))), el("tbody", {}, fieldRows)),
    el("h3", {}, "What moved the score (log-odds contributions)"), contributionChart(pair),
    el("div", { class: "legend" }, el("span", { class: "shared" }, "shared block"),
      el("span", { class: "boilerplate" }, "boilerplate"), el("span", {}, "not shared")),
    el("div", { class: "texts", id: "texts" }, column("A", pair.texts[0]), column("B", pair.texts[1])));
  if (state.sample) document.getElementById("estimate-slot").replaceChildren(estimatePanel(await api("/api/estimate")));
}

function norm(value) { return value === null || value === undefined ? "" : String(value).trim().toLowerCase(); }

function estimateSlot() { return el("div", { id: "estimate-slot" }); }

function estimatePanel(estimate) {
  if (!estimate || estimate.estimated_precision === undefined)
    return el("div", { class: "estimate", id: "estimate" }, "No answers in the accepted-pairs sample yet.");
  return el("div", { class: "estimate", id: "estimate" },
    "Estimated precision of accepted pairs: ",
    el("b", { id: "estimate-value" }, fmt(estimate.estimated_precision, 3)),
    " (95 % interval ", el("span", { id: "estimate-low" }, fmt(estimate.estimated_precision_low, 3)), "–",
    el("span", { id: "estimate-high" }, fmt(estimate.estimated_precision_high, 3)), ") from ",
    el("span", { id: "estimate-n" }, estimate.precision_sample_size), " labelled pairs of the uniform sample");
}

function contributionChart(pair) {
  const items = Object.entries(pair.contributions).sort((x, y) => Math.abs(y[1]) - Math.abs(x[1])).slice(0, 12);
  const width = 640, row = 18, label = 190, half = (width - label - 60) / 2;
  const scale = Math.max(1e-9, ...items.map(([, v]) => Math.abs(v)));
  const chart = svg("svg", { class: "chart", id: "contributions", width, height: items.length * row + 24,
    role: "img", "aria-label": "feature contributions" });
  const zero = label + half;
  chart.append(svg("line", { x1: zero, x2: zero, y1: 0, y2: items.length * row, stroke: "#555" }));
  items.forEach(([name, value], i) => {
    const length = Math.abs(value) / scale * half, y = i * row;
    chart.append(svg("text", { x: 0, y: y + 12 }, name));
    chart.append(svg("rect", { x: value >= 0 ? zero : zero - length, y: y + 3, width: Math.max(1, length),
      height: row - 6, fill: value >= 0 ? "#3c9a4e" : "#c0392b" }));
    chart.append(svg("text", { x: value >= 0 ? zero + length + 4 : zero - length - 44, y: y + 12 },
      (value >= 0 ? "+" : "") + value.toFixed(2)));
  });
  chart.append(svg("text", { x: 0, y: items.length * row + 18 },
    `bias ${pair.bias.toFixed(2)} + contributions = raw score ${pair.raw_score.toFixed(2)}` +
    ` → trees' probability ${pair.trees_probability.toFixed(3)}`));
  return chart;
}

async function answer(label) {
  if (state.busy) return;
  state.busy = true;
  try { await record(label); } catch (failure) { status("not saved: " + failure.message); }
  finally { state.busy = false; }
}

async function record(label) {
  const [a, b] = state.queue[state.position];
  if (label !== null) {
    const body = { ad_id_a: a, ad_id_b: b, label, sample: state.sample,
      dup_type: label === 1 ? document.getElementById("dup-type").value : "",
      reason: document.getElementById("reason").value };
    status("saving…");
    await api("/api/labels", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body) });
    status(`saved ${label === 1 ? "same" : "different"} for pair ${state.position + 1}`);
  }
  state.position += 1;
  if (state.sample === "accepted") skipAnswered();
  remember();
  await pairPage();
}

function back() {
  if (state.position === 0) { status("nothing to go back to"); return; }
  state.position -= 1;
  remember();
  status("back: a new answer replaces the one written");
  pairPage();
}

function skipAnswered() {
  while (state.position < state.queue.length && state.answers[key(...state.queue[state.position])]) {
    state.position += 1;
  }
}

// ------------------------------------------------------------------------------------ modes
async function samplePage(mode) {
  const found = await api(`/api/queue/${mode}?size=200`);
  state.answers = await api("/api/labels");
  Object.assign(state, { queue: found.pairs.map(p => [p.ad_id_a, p.ad_id_b]), position: 0,
    context: "sample:" + mode, sample: mode === "accepted" ? "accepted" : "" });
  if (mode === "accepted") skipAnswered();
  remember();
  await pairPage();
}

async function retrainButton() {
  if (!state.meta.retrain) return "";
  const button = el("button", { id: "retrain", onclick: async () => {
    button.disabled = true; status("retraining (minutes)…");
    try { const done = await api("/api/retrain", { method: "POST" });
      status(`retrained: threshold ${fmt(done.threshold, 4)}, saved ${done.model}`); }
    catch (failure) { status("retraining failed: " + failure.message); }
    button.disabled = false; } }, "Retrain on the labels");
  return button;
}

async function overlapPage() {
  const overlap = await api("/api/overlap");
  const biggest = Math.max(1, ...overlap.matrix.flat());
  const cell = count => {
    const td = el("td", { class: "num" }, count);
    td.style.background = `rgba(31, 95, 168, ${(0.6 * count / biggest).toFixed(3)})`;
    return td;
  };
  show(el("h2", {}, "Where the duplicates come from"),
    el("p", {}, "Groups of two or more ads (vacancies posted more than once) that each pair of sources shares; " +
      "the diagonal counts a source's duplicated vacancies."),
    el("table", { class: "matrix", id: "overlap-matrix" },
      el("thead", {}, el("tr", {}, el("th", {}, ""), overlap.sources.map(s => el("th", {}, s)))),
      el("tbody", {}, overlap.sources.map((s, i) => el("tr", {}, el("th", {}, s), overlap.matrix[i].map(cell))))),
    el("h2", {}, "Duplicate rate per source"),
    el("table", { id: "rates-table" }, el("thead", {}, el("tr", {}, ["source", "ads", "in a group of 2+", "rate"]
      .map(h => el("th", {}, h)))),
      el("tbody", {}, overlap.rates.map(r => el("tr", {}, el("td", {}, r.source), el("td", { class: "num" }, r.ads),
        el("td", { class: "num" }, r.duplicated), el("td", { class: "num" }, (100 * r.rate).toFixed(1) + " %"))))),
    await retrainButton());
}

// ------------------------------------------------------------------------------------ routing
async function render() {
  const hash = location.hash || "#/groups";
  const [path, query] = hash.slice(1).split("?");
  const params = new URLSearchParams(query || "");
  try {
    if (!state.meta) state.meta = await api("/api/meta");
    if (path.startsWith("/group/")) await groupPage(decodeURIComponent(path.slice(7)));
    else if (path === "/pair") await pairPage();
    else if (path === "/sample/accepted") await samplePage("accepted");
    else if (path === "/sample/uncertain") await samplePage("uncertain");
    else if (path === "/overlap") await overlapPage();
    else await groupsPage(params);
    document.body.dataset.view = path.split("/")[1] || "groups";
    document.body.dataset.rendered = hash;  // (what tests wait for)
  } catch (failure) {
    show(el("p", { class: "error", id: "error" }, failure.message));
  }
}

document.addEventListener("keydown", event => {
  if (document.body.dataset.view !== "pair" && document.body.dataset.view !== "sample") return;
  const target = event.target;
  if (target && ["INPUT", "SELECT", "TEXTAREA"].includes(target.tagName)) return;
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const actions = { y: () => answer(1), n: () => answer(0), u: () => answer(null), b: back };
  const action = actions[event.key.toLowerCase()];
  if (action && state.queue.length && state.position < state.queue.length) { event.preventDefault(); action(); }
  else if (event.key.toLowerCase() === "b") { event.preventDefault(); back(); }
});

window.addEventListener("hashchange", () => { if (location.hash !== "#/pair") render(); });
window.addEventListener("DOMContentLoaded", () => {
  if (location.hash.startsWith("#token=")) {
    state.token = decodeURIComponent(location.hash.slice(7));
    sessionStorage.setItem("jobdedup-token", state.token);
    history.replaceState(null, "", location.pathname + "#/groups");
  }
  render();
});
