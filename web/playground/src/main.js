// The Aurane playground page: a CodeMirror 6 editor, the generated PyTorch, a layer table and
// the architecture diagram, all from one JSON endpoint (POST /api/analyze) of the local
// server. Everything is linked by .aur source line: a click on a diagram node, a table row,
// a generated line or a source line highlights that line everywhere.
import { EditorState, StateEffect, StateField, RangeSetBuilder } from "@codemirror/state";
import {
  EditorView, keymap, lineNumbers, highlightActiveLine, Decoration, hoverTooltip, drawSelection,
} from "@codemirror/view";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import {
  StreamLanguage, syntaxHighlighting, defaultHighlightStyle, indentUnit, bracketMatching,
} from "@codemirror/language";
import { setDiagnostics, lintGutter } from "@codemirror/lint";
import { python } from "@codemirror/legacy-modes/mode/python";
import { aurane } from "./aurane-mode.js";

const DEBOUNCE_MS = 250;
const $ = (id) => document.getElementById(id);

// The server writes this launch's secret into the page it serves (never a cookie, which a
// request from any other page would carry too); every /api/ request sends it back.
const TOKEN = document.querySelector('meta[name="aurane-token"]')?.content ?? "";
function api(path, body) {
  const headers = { "X-Aurane-Token": TOKEN };
  if (body === undefined) return fetch(path, { headers, credentials: "omit" });
  headers["Content-Type"] = "application/json";
  return fetch(path, { method: "POST", headers, body: JSON.stringify(body), credentials: "omit" });
}

const state = {
  result: null, // the last analysis
  model: null, // model drawn
  expanded: new Set(), // block paths expanded in the diagram
  expandAll: false,
  linkedLine: null,
  request: 0, // id of the newest analysis request
  view: { x: 10, y: 10, scale: 1 },
  canSave: false,
};

// -- line highlighting shared by both editors -----------------------------------------------
const setLinked = StateEffect.define();
const linkedField = StateField.define({
  create: () => Decoration.none,
  update(deco, tr) {
    deco = deco.map(tr.changes);
    for (const effect of tr.effects) {
      if (effect.is(setLinked)) {
        const builder = new RangeSetBuilder();
        const doc = tr.state.doc;
        for (const [first, last] of effect.value) {
          for (let n = Math.max(1, first); n <= Math.min(last, doc.lines); n++) {
            const line = doc.line(n);
            builder.add(line.from, line.from, Decoration.line({ class: "cm-linked-line" }));
          }
        }
        deco = builder.finish();
      }
    }
    return deco;
  },
  provide: (field) => EditorView.decorations.from(field),
});

function highlightLines(view, ranges, scroll) {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const effects = [setLinked.of(sorted)];
  if (scroll && sorted.length && sorted[0][0] <= view.state.doc.lines) {
    effects.push(EditorView.scrollIntoView(view.state.doc.line(sorted[0][0]).from, { y: "center" }));
  }
  view.dispatch({ effects });
}

// -- positions --------------------------------------------------------------------------------
function offset(doc, line, column) {
  if (line < 1) return 0;
  if (line > doc.lines) return doc.length;
  const l = doc.line(line);
  return Math.min(l.to, l.from + Math.max(0, column - 1));
}

function spanRange(doc, span) {
  if (!span) return { from: 0, to: Math.min(1, doc.length) };
  const from = offset(doc, span.line, span.column);
  let to = offset(doc, span.end_line, span.end_column);
  if (to <= from) to = Math.min(doc.length, from + 1);
  return { from, to };
}

// -- editors ------------------------------------------------------------------------------------
const hover = hoverTooltip((view, pos) => {
  const result = state.result;
  if (!result) return null;
  let best = null;
  let bestSize = Infinity;
  for (const h of result.hovers) {
    const { from, to } = spanRange(view.state.doc, h.span);
    if (from <= pos && pos <= to && to - from < bestSize) {
      best = { from, to, text: h.text };
      bestSize = to - from;
    }
  }
  if (!best) return null;
  return {
    pos: best.from,
    end: best.to,
    above: true,
    create() {
      const dom = document.createElement("div");
      dom.className = "aur-hover";
      dom.textContent = best.text;
      return { dom };
    },
  };
});

const source = new EditorView({
  parent: $("source"),
  state: EditorState.create({
    doc: "",
    extensions: [
      lineNumbers(),
      history(),
      drawSelection(),
      highlightActiveLine(),
      bracketMatching(),
      indentUnit.of("    "),
      keymap.of([indentWithTab, ...defaultKeymap, ...historyKeymap]),
      StreamLanguage.define(aurane),
      syntaxHighlighting(defaultHighlightStyle),
      lintGutter(),
      linkedField,
      hover,
      EditorView.updateListener.of((update) => {
        if (update.docChanged) schedule();
        if (update.selectionSet && !update.docChanged && update.transactions.some((t) => t.isUserEvent("select"))) {
          const line = update.state.doc.lineAt(update.state.selection.main.head).number;
          link(line, { fromSource: true });
        }
      }),
    ],
  }),
});

const generated = new EditorView({
  parent: $("python"),
  state: EditorState.create({
    doc: "",
    extensions: [
      lineNumbers(),
      EditorState.readOnly.of(true),
      StreamLanguage.define(python),
      syntaxHighlighting(defaultHighlightStyle),
      linkedField,
      EditorView.domEventHandlers({
        mouseup(event, view) {
          const pos = view.posAtCoords({ x: event.clientX, y: event.clientY });
          if (pos == null || !state.result) return false;
          const line = view.state.doc.lineAt(pos).number;
          const hit = state.result.mapping.find((m) => m.first <= line && line <= m.last);
          if (hit && hit.span) link(hit.span.line, { fromPython: line });
          return false;
        },
      }),
    ],
  }),
});

// -- analysis -----------------------------------------------------------------------------------
let timer = null;
function schedule() {
  clearTimeout(timer);
  setStatus("busy", "analysing…");
  timer = setTimeout(refresh, DEBOUNCE_MS);
}

async function refresh() {
  const id = ++state.request;
  const body = {
    source: source.state.doc.toString(),
    model: state.model,
    expand: state.expandAll ? true : [...state.expanded],
  };
  let result;
  try {
    const response = await api("/api/analyze", body);
    result = await response.json();
    if (!response.ok) throw new Error(result.error || response.statusText);
  } catch (error) {
    if (id === state.request) setStatus("error", `server: ${error.message}`);
    return;
  }
  if (id !== state.request) return; // a newer edit is on its way
  render(result);
}

function setStatus(kind, text) {
  const el = $("status");
  el.className = `status ${kind}`;
  el.textContent = text;
}

function render(result) {
  const previous = state.result;
  state.result = result;
  const errors = result.diagnostics.filter((d) => d.severity === "error").length;
  const warnings = result.diagnostics.length - errors;
  if (errors) setStatus("error", `${errors} error${errors > 1 ? "s" : ""}`);
  else setStatus("ok", warnings ? `ok, ${warnings} warning${warnings > 1 ? "s" : ""}` : `ok (${result.elapsed_ms} ms)`);
  renderDiagnostics(result);
  renderPython(result);
  const fresh = result.models.length > 0;
  // with errors that stop lowering, the last good table and diagram stay, dimmed
  renderModels(fresh ? result : previous, !fresh);
  renderDiagram(result.diagram || (previous && previous.diagram), !result.diagram);
  if (state.linkedLine != null) link(state.linkedLine, { quiet: true });
}

function renderDiagnostics(result) {
  const doc = source.state.doc;
  const diagnostics = result.diagnostics.map((d) => {
    const { from, to } = spanRange(doc, d.span);
    let message = `${d.code}: ${d.message}`;
    if (d.hint) message += `\nhelp: ${d.hint}`;
    for (const label of d.labels) {
      if (label.span) message += `\n  line ${label.span.line}: ${label.message}`;
    }
    return { from, to, severity: d.severity === "error" ? "error" : d.severity === "warning" ? "warning" : "info", message, source: "aurane" };
  });
  source.dispatch(setDiagnostics(source.state, diagnostics));
  const list = $("problems");
  list.replaceChildren(
    ...result.diagnostics.map((d) => {
      const li = document.createElement("li");
      li.className = d.severity;
      const where = d.span ? `${d.span.line}:${d.span.column}` : "";
      const code = document.createElement("span");
      code.className = "code";
      code.textContent = `${d.code} ${where}`;
      li.append(code, document.createTextNode(d.message));
      if (d.hint) {
        const hint = document.createElement("span");
        hint.className = "hint";
        hint.textContent = `help: ${d.hint}`;
        li.append(hint);
      }
      li.addEventListener("click", () => {
        if (!d.span) return;
        const { from } = spanRange(source.state.doc, d.span);
        source.dispatch({ selection: { anchor: from }, scrollIntoView: true });
        source.focus();
      });
      return li;
    }),
  );
}

function renderPython(result) {
  const note = $("python-note");
  if (result.python == null) {
    note.hidden = false;
    note.textContent = result.python_error || "no generated code";
    $("python").classList.add("stale");
    return;
  }
  note.hidden = true;
  $("python").classList.remove("stale");
  if (generated.state.doc.toString() !== result.python) {
    generated.dispatch({ changes: { from: 0, to: generated.state.doc.length, insert: result.python } });
  }
}

function renderModels(result, stale) {
  const select = $("model");
  const tbody = document.querySelector("#layers tbody");
  if (!result) {
    tbody.replaceChildren();
    return;
  }
  const names = result.models.map((m) => m.name);
  if (!stale) {
    select.replaceChildren(...names.map((n) => new Option(n, n)));
    if (result.diagram) state.model = result.diagram.model;
    if (state.model) select.value = state.model;
  }
  const model = result.models.find((m) => m.name === state.model) || result.models[0];
  $("totals").textContent = model
    ? `${model.name}: ${model.input_shape} → ${model.output_shape}, ${model.parameters.toLocaleString()} params, ${human(model.flops)} FLOPs per sample`
    : "";
  const rows = (model ? model.layers : []).map((layer) => {
    const tr = document.createElement("tr");
    if (layer.suffix) tr.classList.add("suffix");
    if (stale) tr.classList.add("stale");
    tr.dataset.line = layer.span ? layer.span.line : "";
    const name = "\u00a0\u00a0".repeat(layer.depth) + layer.path.split("/").pop() + (layer.name ? ` (${layer.name})` : "");
    const cells = [name, layer.call, layer.shape, layer.parameters ? layer.parameters.toLocaleString() : "", human(layer.flops), layer.span ? layer.span.line : ""];
    cells.forEach((text, i) => {
      const td = document.createElement("td");
      if (i >= 3) td.className = "num";
      td.textContent = text;
      tr.append(td);
    });
    tr.addEventListener("click", () => layer.span && link(layer.span.line, {}));
    return tr;
  });
  tbody.replaceChildren(...rows);
}

function human(n) {
  if (!n) return "0";
  const units = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
  for (const [size, unit] of units) if (n >= size) return `${(n / size).toFixed(1)}${unit}`;
  return String(n);
}

// -- diagram: the server's SVG (one renderer), pan, zoom, expand and collapse ----------------
function renderDiagram(diagram, stale) {
  const inner = $("diagram-inner");
  if (!diagram) {
    inner.replaceChildren();
    return;
  }
  // the SVG comes from Aurane's renderer, which escapes every text it draws
  inner.innerHTML = diagram.svg;
  inner.classList.toggle("stale", stale);
  inner.querySelectorAll(".node").forEach((g) => {
    g.addEventListener("click", (event) => {
      event.stopPropagation();
      if (g.dataset.line) link(Number(g.dataset.line), {});
    });
    if (g.dataset.block) {
      g.addEventListener("dblclick", (event) => {
        event.stopPropagation();
        state.expandAll = false;
        state.expanded.add(g.dataset.block);
        refresh();
      });
    }
  });
  inner.querySelectorAll(".cluster").forEach((g) => {
    const label = g.querySelector(".cluster-label");
    if (!label) return;
    label.addEventListener("click", (event) => {
      event.stopPropagation();
      collapse(g.dataset.block);
    });
  });
  applyView();
}

function collapse(path) {
  if (state.expandAll) {
    // from "expand all": keep every other block open
    state.expandAll = false;
    const paths = new Set();
    for (const g of $("diagram-inner").querySelectorAll(".cluster")) paths.add(g.dataset.block);
    state.expanded = paths;
  }
  for (const p of [...state.expanded]) if (p === path || p.startsWith(`${path}/`) || p.startsWith(`${path}[`)) state.expanded.delete(p);
  refresh();
}

function applyView() {
  const { x, y, scale } = state.view;
  $("diagram-inner").style.transform = `translate(${x}px, ${y}px) scale(${scale})`;
}

function fit() {
  const svg = $("diagram-inner").querySelector("svg");
  const box = $("diagram").getBoundingClientRect();
  if (!svg) return;
  const w = Number(svg.getAttribute("width"));
  const h = Number(svg.getAttribute("height"));
  // the whole width, readable: a tall model is panned, not shrunk to nothing
  const scale = Math.max(Math.min(1, (box.width - 20) / w, (box.height - 20) / h), Math.min(1, (box.width - 20) / w, 0.75));
  state.view = { x: (box.width - w * scale) / 2, y: 10, scale };
  applyView();
}

function zoom(factor, cx, cy) {
  const v = state.view;
  const scale = Math.max(0.1, Math.min(5, v.scale * factor));
  const k = scale / v.scale;
  state.view = { x: cx - (cx - v.x) * k, y: cy - (cy - v.y) * k, scale };
  applyView();
}

(function panAndZoom() {
  const pane = $("diagram");
  let drag = null;
  pane.addEventListener("pointerdown", (event) => {
    if (event.button !== 0) return;
    drag = { x: event.clientX, y: event.clientY, vx: state.view.x, vy: state.view.y, moved: false };
  });
  window.addEventListener("pointermove", (event) => {
    if (!drag) return;
    const dx = event.clientX - drag.x;
    const dy = event.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) {
      drag.moved = true;
      pane.classList.add("dragging");
    }
    state.view.x = drag.vx + dx;
    state.view.y = drag.vy + dy;
    applyView();
  });
  window.addEventListener("pointerup", () => {
    drag = null;
    pane.classList.remove("dragging");
  });
  pane.addEventListener("wheel", (event) => {
    event.preventDefault();
    const rect = pane.getBoundingClientRect();
    zoom(event.deltaY < 0 ? 1.15 : 1 / 1.15, event.clientX - rect.left, event.clientY - rect.top);
  }, { passive: false });
  $("zoom-in").addEventListener("click", () => zoom(1.25, pane.clientWidth / 2, pane.clientHeight / 2));
  $("zoom-out").addEventListener("click", () => zoom(0.8, pane.clientWidth / 2, pane.clientHeight / 2));
  $("zoom-fit").addEventListener("click", fit);
})();

// -- linking ------------------------------------------------------------------------------------
function link(line, { fromSource = false, fromPython = null, quiet = false } = {}) {
  state.linkedLine = line;
  const result = state.result;
  if (!fromSource) highlightLines(source, [[line, line]], !quiet);
  else highlightLines(source, [[line, line]], false);
  const ranges = result ? result.mapping.filter((m) => m.span && m.span.line === line).map((m) => [m.first, m.last]) : [];
  highlightLines(generated, ranges, !quiet && fromPython == null);
  for (const tr of document.querySelectorAll("#layers tbody tr")) {
    tr.classList.toggle("linked", tr.dataset.line === String(line));
  }
  for (const g of $("diagram-inner").querySelectorAll(".node")) {
    g.classList.toggle("linked", g.dataset.line === String(line));
  }
}

// -- start --------------------------------------------------------------------------------------
$("model").addEventListener("change", (event) => {
  state.model = event.target.value;
  state.expanded.clear();
  state.expandAll = false;
  refresh().then(fit);
});
$("expand-all").addEventListener("click", () => {
  state.expandAll = true;
  refresh();
});
$("collapse-all").addEventListener("click", () => {
  state.expandAll = false;
  state.expanded.clear();
  refresh();
});
$("save").addEventListener("click", async () => {
  const response = await api("/api/save", { source: source.state.doc.toString() });
  const data = await response.json();
  setStatus(response.ok ? "ok" : "error", response.ok ? `saved ${data.saved}` : data.error);
});

async function start() {
  const response = await api("/api/file");
  const file = await response.json();
  $("file-name").textContent = file.name;
  $("save").hidden = !file.can_save;
  source.dispatch({ changes: { from: 0, to: 0, insert: file.text } });
  clearTimeout(timer);
  await refresh();
  fit();
}

window.aurane = { source, generated, state, refresh, link };
start();
