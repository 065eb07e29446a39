// Small building blocks: elements, formats, tables, forms, dialogs.

// h makes an element: h("a", {href, class, onclick}, children...).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (k === "text") el.textContent = v;
    else if (k in el && k !== "list" && typeof v !== "string") el[k] = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  append(el, children);
  return el;
}

// add appends children to el, skipping null, undefined and false (which
// the DOM's own append would write out as text).
export function add(el, ...children) {
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// usd shows a USD decimal string with thousands separators, without
// turning it into a float: "1234.5" -> "$1,234.50".
export function usd(s) {
  if (s === undefined || s === null || s === "") return "—";
  let [whole, frac = ""] = String(s).split(".");
  const neg = whole.startsWith("-");
  if (neg) whole = whole.slice(1);
  whole = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  frac = (frac + "00").slice(0, Math.max(2, frac.replace(/0+$/, "").length));
  return (neg ? "-$" : "$") + whole + "." + frac;
}

// amount shows a token amount as given (an exact decimal) with its symbol.
export function amount(value, symbol) { return `${value} ${symbol}`; }

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: "medium" });

// time shows an instant in the browser's time zone, the exact instant on hover.
export function time(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  return h("time", { datetime: iso, title: iso }, dateTime.format(d));
}
export function day(iso) { return iso ? dateOnly.format(new Date(iso)) : "—"; }

export function titleCase(s) { return String(s).replace(/_/g, " ").replace(/^\w/, (c) => c.toUpperCase()); }

const tones = {
  completed: "ok", verified: "ok", finalized: "ok", confirmed: "ok", active: "ok", enabled: "ok", succeeded: "ok", delivered: "ok",
  processing: "warn", pending: "warn", open: "info", retrying: "warn",
  expired: "muted", canceled: "muted", archived: "muted",
  failed: "bad", disabled: "bad", reorged: "bad", reversed: "bad",
};

export function badge(status, extra) {
  return h("span", { class: `badge ${tones[status] || "info"}${extra ? " " + extra : ""}` }, titleCase(status));
}

// copyButton copies a value; the label names it for screen readers.
export function copyButton(value, label = "Copy") {
  const b = h("button", { type: "button", class: "copy", "aria-label": `Copy ${label}`, title: `Copy ${label}` }, "Copy");
  b.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(value);
      b.textContent = "Copied";
    } catch {
      window.prompt("Copy it from here:", value);
    }
    setTimeout(() => { b.textContent = "Copy"; }, 1500);
  });
  return b;
}

// id shows a long identifier shortened, in full on hover, with a copy button.
export function id(value, label = "ID") {
  if (!value) return "—";
  return h("span", { class: "id" }, h("code", { title: value }, value), copyButton(value, label));
}

// mono shows a value in full (an address, a hash), with a copy button.
export function mono(value, label) {
  if (!value) return "—";
  return h("span", { class: "id wrap" }, h("code", {}, value), copyButton(value, label));
}

let toastTimer;
export function toast(message, tone = "ok") {
  let el = document.getElementById("toast");
  if (!el) {
    el = h("div", { id: "toast", role: "status", "aria-live": "polite" });
    document.body.append(el);
  }
  el.className = `toast ${tone}`;
  el.textContent = message;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, 4000);
}

// table renders rows; each column has a label and a cell(row). With link,
// a row's first cell links to link(row).
export function table(columns, rows, { empty = "Nothing here yet.", link, caption } = {}) {
  if (!rows.length) return h("p", { class: "empty" }, empty);
  return h("div", { class: "table-wrap" },
    h("table", {},
      caption ? h("caption", { class: "sr-only" }, caption) : null,
      h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col", class: c.class }, c.label)))),
      h("tbody", {}, rows.map((r) => h("tr", {}, columns.map((c, i) => {
        let content = c.cell(r);
        if (i === 0 && link) content = h("a", { href: link(r) }, content);
        return h("td", { "data-label": c.label, class: c.class }, content);
      }))))));
}

// pager shows a list's position and the previous and next pages.
export function pager(p, go) {
  if (!p || p.totalPages <= 1) return p ? h("p", { class: "muted small" }, `${p.total} in all`) : null;
  return h("nav", { class: "pager", "aria-label": "Pages" },
    h("button", { type: "button", disabled: !p.hasPreviousPage, onclick: () => go(p.page - 1) }, "Previous"),
    h("span", {}, `Page ${p.page} of ${p.totalPages} · ${p.total} in all`),
    h("button", { type: "button", disabled: !p.hasNextPage, onclick: () => go(p.page + 1) }, "Next"));
}

let fieldSeq = 0;

// field is a labelled control with room for its error; name is the API's
// field it carries, so the API's validation errors land beside it.
export function field(label, control, { hint, name } = {}) {
  const fid = control.id || `f${++fieldSeq}`;
  control.id = fid;
  if (name) control.dataset.field = name;
  const err = h("p", { class: "field-error", id: fid + "-err", hidden: true });
  const hintEl = hint ? h("p", { class: "hint", id: fid + "-hint" }, hint) : null;
  control.setAttribute("aria-describedby", [hintEl && hintEl.id, err.id].filter(Boolean).join(" "));
  return h("div", { class: "field" }, h("label", { for: fid }, label), control, hintEl, err);
}

export function input(attrs) { return h("input", Object.assign({ type: "text" }, attrs)); }

export function select(options, value, attrs) {
  return h("select", attrs || {}, options.map(([v, label]) => h("option", { value: v, selected: v === value }, label)));
}

// form wires a form: submit runs fn(form) with the button disabled, and
// shows an APIError's field problems beside their fields and its message
// at the top.
export function form(attrs, children, fn) {
  const status = h("div", { class: "form-error", role: "alert", hidden: true });
  const f = h("form", Object.assign({ novalidate: true }, attrs), status, children);
  f.addEventListener("submit", async (e) => {
    e.preventDefault();
    const buttons = f.querySelectorAll("button[type=submit]");
    buttons.forEach((b) => { b.disabled = true; });
    f.querySelectorAll(".field-error").forEach((el) => { el.hidden = true; });
    f.querySelectorAll("[aria-invalid]").forEach((el) => el.removeAttribute("aria-invalid"));
    status.hidden = true;
    try {
      await fn(f);
    } catch (err) {
      showErrors(f, status, err);
    } finally {
      buttons.forEach((b) => { b.disabled = false; });
    }
  });
  return f;
}

function showErrors(f, status, err) {
  const unplaced = [];
  for (const d of err.details || []) {
    const control = [...f.querySelectorAll("[data-field]")].find((c) => d.field === c.dataset.field || d.field.startsWith(c.dataset.field + "."));
    const box = control && document.getElementById(control.id + "-err");
    if (box) {
      box.textContent = d.message;
      box.hidden = false;
      control.setAttribute("aria-invalid", "true");
    } else unplaced.push(`${d.field}: ${d.message}`);
  }
  clear(status, h("strong", {}, err.message || "Something went wrong."), unplaced.length ? h("ul", {}, unplaced.map((u) => h("li", {}, u))) : null);
  status.hidden = false;
  const first = f.querySelector("[aria-invalid]");
  (first || status).focus?.();
  if (!first) status.scrollIntoView({ block: "nearest" });
}

// dialog opens a modal; fill(close) returns its content. It resolves with
// what close was given (undefined on Escape).
export function dialog(title, fill) {
  return new Promise((resolve) => {
    const d = h("dialog", { "aria-labelledby": "dlg-title" });
    const close = (v) => { d.close(); d.remove(); resolve(v); };
    d.addEventListener("cancel", (e) => { e.preventDefault(); close(undefined); });
    d.append(h("h2", { id: "dlg-title" }, title), fill(close));
    document.body.append(d);
    d.showModal();
  });
}

export function confirm(title, text, action = "Confirm", danger = false) {
  return dialog(title, (close) => h("div", {},
    h("p", {}, text),
    h("div", { class: "actions" },
      h("button", { type: "button", class: danger ? "danger" : "primary", onclick: () => close(true) }, action),
      h("button", { type: "button", onclick: () => close(false) }, "Cancel"))));
}

// secret shows a value that is shown only once, with a copy button.
export function secret(title, value, note) {
  return dialog(title, (close) => h("div", {},
    h("p", { class: "notice warn" }, note || "Copy it now: it is shown this once and cannot be read again."),
    h("div", { class: "secret" }, h("code", { "data-secret": "" }, value), copyButton(value, "secret")),
    h("div", { class: "actions" }, h("button", { type: "button", class: "primary", onclick: () => close(true) }, "Done, I have saved it"))));
}

export function dl(pairs) {
  return h("dl", { class: "facts" }, pairs.filter(Boolean).map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}

export function section(title, ...children) {
  return h("section", { class: "card" }, title ? h("h2", {}, title) : null, children);
}
