(() => {
"use strict";
const PAGE = 250;
const SEVERITY = {error: 0, failed: 1, skipped: 2, passed: 4};
const OUTCOME_CLASS = {passed: "o-passed", failed: "o-failed", error: "o-error"};
const FLAG_TITLE = {
  "+": "worse than baseline", "-": "better than baseline", "=": "same as baseline",
  "~": "changed from baseline (the report states no direction for this metric)",
};
const EDIT_COUNTS = ["hits", "substitutions", "deletions", "insertions", "reference_length"];
const B85 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%:()*+-;.=,?@^_`{|}~";
const B85_VALUE = new Int16Array(128).fill(-1);
for (let i = 0; i < 85; i++) B85_VALUE[B85.charCodeAt(i)] = i;

function b85decode(text) {
  const n = text.length, full = Math.floor(n / 5), rest = n % 5;
  const out = new Uint8Array(full * 4 + (rest ? rest - 1 : 0));
  let o = 0;
  const group = (at, len) => {
    let v = 0;
    for (let j = 0; j < 5; j++) {
      const c = j < len ? (B85_VALUE[text.charCodeAt(at + j)] ?? -1) : 84;
      if (c < 0) throw new Error("corrupt data block");
      v = v * 85 + c;
    }
    return v;
  };
  for (let at = 0; at < full * 5; at += 5) {
    const v = group(at, 5);
    out[o++] = v >>> 24; out[o++] = (v >>> 16) & 255;
    out[o++] = (v >>> 8) & 255; out[o++] = v & 255;
  }
  if (rest) {
    const v = group(full * 5, rest);
    for (let j = 0; j < rest - 1; j++) out[o++] = (v >>> (24 - 8 * j)) & 255;
  }
  return out;
}

// A big report keeps its data blocks in files beside the page ("doceval-data": the folder and
// the render that wrote them); each file calls doceval_data(id, render, kind, text).
const DATA = (() => {
  const node = document.getElementById("doceval-data");
  return node ? JSON.parse(node.textContent) : null;
})();
const arriving = new Map();  // id -> {resolve, reject} of a data file being loaded
window.doceval_data = (id, render, kind, text) => {
  const waiting = arriving.get(id);
  if (!waiting) return;
  arriving.delete(id);
  if (render === DATA.render) waiting.resolve({type: kind, text});
  else waiting.reject(new Error("the data file " + id + ".js belongs to another render of " +
    "this report (it was written again while the page was open): reload the page"));
};
function loadFile(id) {
  return new Promise((resolve, reject) => {
    arriving.set(id, {resolve, reject});
    const script = document.createElement("script");
    script.src = DATA.folder + encodeURIComponent(id) + ".js";
    script.onerror = () => {
      arriving.delete(id);
      reject(new Error("could not load " + decodeURIComponent(DATA.folder) + id +
        ".js: keep that folder beside this page"));
    };
    script.onload = () => script.remove();
    document.head.appendChild(script);
  });
}

const blobs = new Map();
function loadBlob(id) {
  if (!blobs.has(id)) blobs.set(id, readBlob(id));
  return blobs.get(id);
}
async function readBlob(id) {
  const node = document.getElementById(id);
  let block;
  if (node) block = {type: node.type, text: node.textContent};
  else if (DATA) block = await loadFile(id);
  else throw new Error("missing data block " + id);
  if (block.type === "application/json") return JSON.parse(block.text);
  if (typeof DecompressionStream !== "function") {
    throw new Error("this browser has no DecompressionStream; open the JSON report instead");
  }
  const stream = new Blob([b85decode(block.text.trim())]).stream()
    .pipeThrough(new DecompressionStream("deflate-raw"));
  return JSON.parse(await new Response(stream).text());
}

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}
// A number that is missing, NaN or infinite shows as "n/a" (the report writes NaN as null).
const NA = "n/a";
function fmt(v, digits = 4) {
  if (typeof v === "number") return Number.isFinite(v) ? v.toFixed(digits) : NA;
  return v === null || v === undefined ? NA : String(v);
}
function fmtInt(v) {
  return typeof v === "number" && Number.isFinite(v) ? v.toLocaleString("en-US") : fmt(v);
}
// A value of generic data (a view or detail nobody wrote a renderer for).
function cell(v) {
  if (typeof v === "number") return Number.isInteger(v) ? fmtInt(v) : fmt(v);
  if (v === null || v === undefined) return NA;
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}

// Diff ops from a chunk: shared truth text + edit script, or the ops as the report gave them.
function diffOps(diff, chunk) {
  if (Array.isArray(diff.ops)) return diff.ops;
  const segments = [];
  let p = 0;
  for (const s of chunk.refs[diff.g]) {
    if (typeof s === "number") p += s; else { segments.push([p, s]); p += s.length; }
  }
  let pos = 0, k = 0;
  const take = (n) => {
    while (k < segments.length && segments[k][0] + segments[k][1].length <= pos) k++;
    if (n === 0) return "";
    const [start, text] = segments[k];
    const off = pos - start;
    pos += n;
    return text.slice(off, off + n);
  };
  const ops = [];
  for (const x of chunk.scripts[diff.s]) {
    if (typeof x === "number") {
      if (x > 0) ops.push(["=", take(x)]); else { ops.push(["\u2026", -x]); pos += -x; }
    } else if (typeof x[0] === "string") ops.push(["I", x[0]]);
    else if (x.length > 1) ops.push(["S", take(x[0]), x[1]]);
    else ops.push(["D", take(x[0])]);
  }
  return ops;
}

function editText(tag, cls, text) {
  const node = el(tag, cls);
  const s = String(text);
  if (s.length && s.trim() === "") {  // whitespace-only edits would be invisible
    node.classList.add("ws");
    node.title = "whitespace";
    node.appendChild(document.createTextNode(
      s.replace(/ /g, "\u2423").replace(/\t/g, "\u21E5").replace(/\n/g, "\u21B5\n")));
  } else {
    node.appendChild(document.createTextNode(s));
  }
  return node;
}

function renderDiff(ops) {
  const box = el("div", "diff");
  const frag = document.createDocumentFragment();
  for (const op of ops) {
    if (!Array.isArray(op)) continue;
    switch (op[0]) {
      case "=": frag.appendChild(document.createTextNode(String(op[1]))); break;
      case "S": {
        const sub = el("span", "sub");
        sub.title = "substitution: truth \u2192 output";
        sub.append(editText("del", null, op[1]), editText("ins", null, op[2]));
        frag.appendChild(sub);
        break;
      }
      case "D": frag.appendChild(editText("del", "del", op[1])); break;
      case "I": frag.appendChild(editText("ins", "ins", op[1])); break;
      case "\u2026": frag.appendChild(el("span", "gap",
        "\u2026 " + fmtInt(op[1]) + " unchanged characters \u2026")); break;
      default: frag.appendChild(el("span", "unknown", op.slice(1).join(" ")));
    }
  }
  box.appendChild(frag);
  return box;
}

function legend(from, to) {
  const p = el("p", "legend");
  const sub = el("span", "sub");
  sub.append(el("del", null, from), el("ins", null, to));
  p.append(sub, " substitution, ", el("del", "del", "deleted"), " only in the " + from + ", ",
    el("ins", "ins", "inserted"), " only in the " + to + ", ",
    el("span", "gap", "\u2026 n unchanged characters \u2026"),
    " elided; \u2423 \u21B5 mark whitespace-only edits.");
  return p;
}

function table(head, rows, cls) {
  const t = el("table", cls);
  const tr = el("tr");
  for (const h of head) tr.appendChild(el("th", null, h));
  t.appendChild(tr);
  for (const r of rows) {
    const row = el("tr");
    for (const c of r) {
      if (c instanceof Node) { const td = el("td"); td.appendChild(c); row.appendChild(td); }
      else row.appendChild(el("td", typeof c === "number" ? "num" : null, cell(c)));
    }
    t.appendChild(row);
  }
  return t;
}

// One table per kind of count entry: edit counts (hits, S, D, I, N), (tp, fp, fn), ...
function countsTables(counts) {
  const groups = new Map();
  for (const [metric, value] of Object.entries(counts)) {
    const entry = value && typeof value === "object" ? value : {value};
    const keys = EDIT_COUNTS.every((k) => k in entry) ? EDIT_COUNTS : Object.keys(entry);
    const id = keys.join("\n");
    if (!groups.has(id)) groups.set(id, {keys, rows: []});
    groups.get(id).rows.push([metric, ...keys.map((k) => (typeof entry[k] === "number"
      ? entry[k] : fmt(entry[k])))]);
  }
  return [...groups.values()].map((g) =>
    table(["metric", ...g.keys.map((k) => k.replace(/_/g, " "))], g.rows));
}

// The blocks a view or a row's extra details are drawn from (see views.py): diff, table, pre.
function drawBlock(block, chunk) {
  const box = el("div", "view view-" + String(block.t));
  box.appendChild(el("h4", null, block.title));
  if (block.note) box.appendChild(el("p", "note", block.note));
  if (block.t === "diff") {
    box.appendChild(legend(block.from || "before", block.to || "after"));
    box.appendChild(renderDiff(diffOps(block.d || {}, chunk)));
  } else if (block.t === "table") {
    box.appendChild(table(block.head || [], block.rows || [], "generic"));
  } else {
    box.appendChild(el("pre", "json", block.text !== undefined ? block.text : cell(block)));
  }
  return box;
}

function buildDetail(st, row, d, chunk) {
  const box = el("div", "detail-body");
  if (d.nodeid) box.appendChild(el("div", "nodeid", d.nodeid));
  if (d.message) box.appendChild(el("p", "message", d.message));
  if (d.notes && d.notes.length) {
    const ul = el("ul", "notes");
    for (const n of d.notes) ul.appendChild(el("li", null, n));
    box.appendChild(ul);
  }
  const labels = Object.entries(d.labels || {});
  if (labels.length) {
    box.appendChild(el("h4", null, "Labels"));
    box.appendChild(table(["label", "value"], labels.map(([k, v]) => [k, cell(v)]), "labels"));
  }
  const metrics = d.metrics || {}, base = d.baseline || {};
  const names = Object.keys(metrics);
  for (const k of Object.keys(base)) if (!(k in metrics)) names.push(k);
  if (names.length) {
    box.appendChild(el("h4", null, "Metrics"));
    box.appendChild(table(["metric", "value", "baseline", "\u0394"], names.map((m) => {
      const v = metrics[m], b = base[m];
      const delta = typeof v === "number" && typeof b === "number" ? v - b : null;
      const shown = delta === null ? NA : (delta >= 0 ? "+" : "") + delta.toFixed(4);
      const span = el("span", null, shown);
      const dir = st.data.directions[m];
      if (delta !== null && Math.abs(delta) >= 5e-7 && dir) {
        span.className = (dir === "lower") === (delta > 0) ? "delta sig worse" : "delta sig better";
      }
      return [m, fmt(v), fmt(b), span];
    })));
  }
  const countTables = countsTables(d.counts || {});
  if (countTables.length) {
    box.appendChild(el("h4", null, "Counts"));
    box.append(...countTables);
  }
  for (const block of d.extras || []) box.appendChild(drawBlock(block, chunk));
  if (d.views && d.views.length) {
    const views = el("div", "views");  // side by side where there is room
    for (const block of d.views) views.appendChild(drawBlock(block, chunk));
    box.appendChild(views);
  } else {
    box.appendChild(el("p", "legend", "No views in the report for this row."));
  }
  return box;
}

function initSuite(root) {
  // The header: metrics, their directions, how many pages of rows and, when the page holds
  // its data, the first page itself (its rows and the names they bring); every other page is
  // a data block of its own, read in turn (`loadPages`).
  const data = JSON.parse(document.getElementById(root.dataset.rows).textContent);
  const names = {cases: [], systems: [], outcomes: [], labels: []};
  const st = {
    root, data, names, rows: [], prefix: root.dataset.prefix, open: new Set(), limit: PAGE,
    tbody: root.querySelector("tbody"), sortKey: null, sortDir: 1, pending: null,
    hasLabels: root.querySelector("th[data-key=labels]") !== null,
    pages: data.pages || 1, loaded: 0,
  };
  st.columns = 4 + data.metrics.length + (st.hasLabels ? 1 : 0);
  const labelText = (r) => (r[8] === null || r[8] === undefined ? "" : names.labels[r[8]]);
  st.labelText = labelText;
  st.keys = {
    case: (r) => names.cases[r[0]], system: (r) => names.systems[r[1]],
    outcome: (r) => SEVERITY[names.outcomes[r[2]]] ?? 3, message: (r) => r[5],
    labels: (r) => labelText(r) || null,
  };
  data.metrics.forEach((m, i) => { st.keys["m" + i] = (r) => r[3][i]; });
  if (data.rows) addPage(st, data);
  reorder(st);
  const outcomeSelect = root.querySelector(".f-outcome"), textInput = root.querySelector(".f-text");
  const refilter = (keepLimit) => {
    const want = outcomeSelect.value, q = textInput.value.trim().toLowerCase();
    st.view = st.order.filter((i) => {
      const r = st.rows[i], outcome = names.outcomes[r[2]];
      if (want === "!passed" ? outcome === "passed" : want && outcome !== want) return false;
      if (!q) return true;
      const text = names.cases[r[0]] + "\n" + names.systems[r[1]] + "\n" + labelText(r) +
        "\n" + (r[5] || "") + "\n" + outcome;
      return text.toLowerCase().includes(q);
    });
    if (keepLimit !== true) st.limit = PAGE;
    draw(st);
  };
  st.refilter = refilter;
  outcomeSelect.addEventListener("change", () => refilter());
  textInput.addEventListener("input", () => refilter());
  root.querySelectorAll("thead th[data-key]").forEach((th) => {
    th.querySelector("button").addEventListener("click", () => sortBy(st, th));
  });
  root.querySelector(".more").addEventListener("click", () => { st.limit += PAGE; draw(st); });
  root.querySelector(".all").addEventListener("click", () => { st.limit = Infinity; draw(st); });
  st.tbody.addEventListener("click", (e) => {
    const tr = e.target.closest("tr.case");
    if (tr && !e.target.closest("a, button, input, select")) toggle(st, Number(tr.dataset.i), tr);
  });
  st.tbody.addEventListener("keydown", (e) => {
    const tr = e.target.closest("tr.case");
    if (tr && (e.key === "Enter" || e.key === " ")) {
      e.preventDefault();
      toggle(st, Number(tr.dataset.i), tr);
    }
  });
  // "#q=text" opens the page filtered (a link to "the failures of nation=KR", and a test hook);
  // an outcome is text too: "#q=failed" shows the failed tests.
  if (location.hash.startsWith("#q=")) textInput.value = decodeURIComponent(location.hash.slice(3));
  st.search = (q) => { textInput.value = q; refilter(); };
  st.reveal = async (i) => {
    // A link from "What changed": show row i whatever the filters, open it, scroll to it.
    await st.ready;
    outcomeSelect.value = "";
    textInput.value = "";
    refilter();
    st.limit = Math.max(st.limit, st.view.indexOf(i) + 1);
    draw(st);
    const tr = st.tbody.querySelector(`tr.case[data-i="${i}"]`);
    if (!tr) return;
    // The row at the top, its opened details below it in view (not at the bottom, hidden);
    // again once the details are drawn, as they can re-flow the table's columns above it.
    const top = () => tr.scrollIntoView({ block: "start" });
    const opened = st.open.has(i) ? Promise.resolve() : toggle(st, i, tr);
    top();
    opened.then(top, () => {});
  };
  refilter();
  st.ready = loadPages(st);
  st.ready.catch(() => {});
  return st;
}

// A page of rows: the names it brings, then its rows (their numbers go on from the last's).
function addPage(st, page) {
  for (const key of ["cases", "systems", "outcomes", "labels"]) {
    for (const name of page[key] || []) st.names[key].push(name);
  }
  for (const row of page.rows) st.rows.push(row);
  st.loaded += 1;
}

// The rows in the order shown: by the chosen column, else errors and failures first, then the
// report's order.
function reorder(st) {
  st.order = st.rows.map((_, i) => i);
  if (st.sortKey === null) {
    st.order.sort((a, b) => st.keys.outcome(st.rows[a]) - st.keys.outcome(st.rows[b]) || a - b);
  } else {
    const f = st.keys[st.sortKey];
    st.order.sort((a, b) => compareValues(f(st.rows[a]), f(st.rows[b]), st.sortDir) || a - b);
  }
}

// The pages of rows the header does not hold, one after another, each shown as it arrives.
async function loadPages(st) {
  try {
    for (let k = st.loaded; k < st.pages; k++) {
      addPage(st, await loadBlob(`${st.root.dataset.rows}-p${k}`));
      reorder(st);
      st.refilter(true);
    }
  } catch (err) {
    st.root.appendChild(el("p", "error", "Could not load all the cases: " + err.message));
    throw err;
  }
}

// "#case-s<suite>-r<row>": the failing tests listed under "What changed" link to their rows.
function revealFromHash(states) {
  if (location.hash.startsWith("#q=")) {
    const q = decodeURIComponent(location.hash.slice(3));
    states.forEach((st) => st.search(q));
    return;
  }
  const m = /^#case-s(\d+)-r(\d+)$/.exec(location.hash);
  if (!m) return;
  const st = states.find((s) => s.prefix === `doceval-s${m[1]}-d`);
  if (st) st.reveal(Number(m[2]));
}

function compareValues(a, b, dir) {
  const rank = (v) => (typeof v === "number" ? 0 : typeof v === "string" ? 1 : 2);
  const ra = rank(a), rb = rank(b);
  if (ra !== rb) return ra - rb;  // numbers, then text, then missing, either direction
  if (ra === 0) return (a - b) * dir;
  if (ra === 1) return a.localeCompare(b) * dir;
  return 0;
}

function sortBy(st, th) {
  const key = th.dataset.key;
  st.sortDir = st.sortKey === key ? -st.sortDir : 1;
  st.sortKey = key;
  st.root.querySelectorAll("thead th").forEach((h) => h.removeAttribute("aria-sort"));
  th.setAttribute("aria-sort", st.sortDir > 0 ? "ascending" : "descending");
  reorder(st);
  st.refilter();
}

function rowElement(st, i) {
  const r = st.rows[i], data = st.data, names = st.names;
  const tr = el("tr", "case");
  tr.tabIndex = 0;
  tr.dataset.i = String(i);
  tr.setAttribute("aria-expanded", st.open.has(i) ? "true" : "false");
  tr.appendChild(el("td", null, names.cases[r[0]]));
  tr.appendChild(el("td", null, names.systems[r[1]]));
  if (st.hasLabels) tr.appendChild(el("td", "labels", st.labelText(r)));
  const outcome = names.outcomes[r[2]];
  const td = el("td");
  td.appendChild(el("span", "badge " + (OUTCOME_CLASS[outcome] || "o-other"), outcome));
  tr.appendChild(td);
  const flags = r[4];
  r[3].forEach((v, k) => {
    const f = flags[k];
    const cls = f === "+" ? " worse" : f === "-" ? " better" : "";
    // The arrow says which way the value moved; the colour says whether that is good.
    const up = (f === "+") === (data.dirs[k] === "lower");
    const cell = el("td", "num m" + cls + (cls ? (up ? " up" : " down") : ""), fmt(v));
    if (FLAG_TITLE[f]) cell.title = FLAG_TITLE[f];
    tr.appendChild(cell);
  });
  const msg = el("td", "msg", r[5] || "");
  if (r[5]) msg.title = r[5];
  tr.appendChild(msg);
  return tr;
}

function detailElement(st, i) {
  const tr = el("tr", "detail");
  tr.dataset.for = String(i);
  const td = el("td", null, "Loading\u2026");
  td.colSpan = st.columns;
  tr.appendChild(td);
  const r = st.rows[i];
  const job = loadBlob(st.prefix + r[6]).then((chunk) => {
    const d = (chunk.rows || {})[String(i)] || {};
    td.replaceChildren(buildDetail(st, r, d, chunk));
  }).catch((err) => {
    td.replaceChildren(el("p", "error", "Could not show this row: " + err.message));
    throw err;
  });
  st.pending = job;
  job.catch(() => {});
  return tr;
}

function toggle(st, i, tr) {
  if (st.open.has(i)) {
    st.open.delete(i);
    tr.setAttribute("aria-expanded", "false");
    const next = tr.nextElementSibling;
    if (next && next.classList.contains("detail")) next.remove();
    return Promise.resolve();
  }
  st.open.add(i);
  tr.setAttribute("aria-expanded", "true");
  tr.after(detailElement(st, i));
  return st.pending;
}

function draw(st) {
  const frag = document.createDocumentFragment();
  const shown = st.view.slice(0, st.limit);
  for (const i of shown) {
    frag.appendChild(rowElement(st, i));
    if (st.open.has(i)) frag.appendChild(detailElement(st, i));
  }
  st.tbody.replaceChildren(frag);
  const rest = st.view.length - shown.length;
  const more = st.root.querySelector(".more"), all = st.root.querySelector(".all");
  more.hidden = all.hidden = rest <= 0;
  more.textContent = "show " + Math.min(PAGE, rest).toLocaleString("en-US") + " more";
  all.textContent = "show all " + st.view.length.toLocaleString("en-US");
  st.root.querySelector(".count").textContent = "showing " + shown.length.toLocaleString("en-US") +
    " of " + st.view.length.toLocaleString("en-US") + " matching, " +
    st.rows.length.toLocaleString("en-US") + " in all" + (st.loaded < st.pages
      ? " (loading the cases: " + st.loaded + " of " + st.pages + " pages in)" : "");
}

async function selftest(states) {
  const html = document.documentElement;
  try {
    await Promise.all(states.map((st) => st.ready));
    for (const st of states) {
      const i = st.view.find((k) => st.rows[k][7]);
      if (i === undefined) continue;
      if (st.view.indexOf(i) >= st.limit) { st.limit = st.view.indexOf(i) + 1; draw(st); }
      const tr = st.tbody.querySelector('tr.case[data-i="' + i + '"]');
      const clicked = performance.now();
      tr.click();
      await st.pending;
      html.dataset.openMs = (performance.now() - clicked).toFixed(1);
      break;
    }
    html.dataset.selftest = "ok";
  } catch (err) {
    html.dataset.selftest = "error: " + (err && err.message);
  }
}

const states = [];
for (const root of document.querySelectorAll(".cases[data-rows]")) {
  try { states.push(initSuite(root)); }
  catch (err) {
    root.appendChild(el("p", "error", "Could not draw the case table: " + err.message));
  }
}
if (location.hash.startsWith("#case-")) revealFromHash(states);
window.addEventListener("hashchange", () => revealFromHash(states));
document.documentElement.dataset.readyMs = performance.now().toFixed(1);
Promise.all(states.map((st) => st.ready)).then(() => {
  document.documentElement.dataset.rowsMs = performance.now().toFixed(1);
}, () => {});
if (location.hash === "#selftest") selftest(states);
})();
