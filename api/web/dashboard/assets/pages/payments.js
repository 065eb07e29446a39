// Checkout sessions and transactions: filterable tables, CSV exports and
// detail pages that follow a payment live.
import * as api from "../api.js";
import { h, add, clear, usd, table, time, badge, pager, field, input, select, form, toast, confirm, dl, section, id, mono, amount, titleCase } from "../ui.js";
import { state, href, go, every, canWrite } from "../app.js";
import { refundsCard } from "./refunds.js";

const project = () => `/projects/${state.project.id}`;
const sessionStatuses = ["open", "processing", "completed", "expired", "canceled"];
// The deployment's API shape names transaction statuses (docs/decisions.md,
// "The second API shape"): completed there is confirmed or finalized.
const txStatuses = () => (state.me.apiShape === "second" ? ["pending", "completed", "failed"] : ["pending", "confirmed", "finalized", "failed", "reversed"]);
const finalTx = (s) => s === "finalized" || s === "failed" || s === "completed" || s === "reversed";
const finalSession = (s) => s === "completed" || s === "expired" || s === "canceled";

export function txColumns() {
  return [
    { label: "Amount", cell: (t) => amount(t.amount, t.symbol) },
    { label: "USD", cell: (t) => usd(t.amountUsd) },
    { label: "Status", cell: (t) => [badge(t.status), t.unexpected && !t.assignedSessionId ? badge("unexpected", "bad") : null] },
    { label: "Network", cell: (t) => t.network },
    { label: "Date", cell: (t) => time(t.createdAt) },
  ];
}

// filterBar is a list's filters, kept in the address so that a filtered
// table can be shared and reloaded; the CSV export takes the same ones.
function filterBar(page, filters, values, exportName) {
  const controls = filters.map(([name, label, options]) => {
    const c = options ? select([["", "All"], ...options.map((o) => (Array.isArray(o) ? o : [o, titleCase(o)]))], values[name] || "", { name })
      : input({ type: "date", name, value: values[name] || "" });
    return h("label", {}, label + " ", c);
  });
  const f = h("form", { class: "filters", role: "search", "aria-label": "Filters" }, controls,
    h("button", { type: "submit" }, "Apply"),
    h("button", { type: "button", class: "link", onclick: () => go(href(page)) }, "Clear"));
  f.addEventListener("submit", (e) => {
    e.preventDefault();
    const q = {};
    for (const el of f.querySelectorAll("[name]")) q[el.name] = el.value;
    go(href(page) + api.query(q));
  });
  const exp = h("button", { type: "button", class: "export" }, "Export CSV");
  exp.addEventListener("click", async () => {
    exp.disabled = true;
    try {
      const name = await api.download(`${project()}/${exportName}` + api.query(filterValues(filters, values)), `${exportName}.csv`);
      toast(`Downloaded ${name}`);
    } catch (err) {
      toast(err.message, "bad");
    } finally {
      exp.disabled = false;
    }
  });
  return h("div", { class: "toolbar" }, f, exp);
}

function filterValues(filters, values) {
  const q = {};
  for (const [name] of filters) if (values[name]) q[name] = values[name];
  return q;
}

function readParams(filters) {
  const p = new URLSearchParams(location.search);
  const v = { page: Number(p.get("page")) || 1 };
  for (const [name] of filters) v[name] = p.get(name) || "";
  return v;
}

export async function sessions(main) {
  const filters = [["status", "Status", sessionStatuses], ["exception", "Exception", [["true", "To resolve"]]], ["from", "From"], ["to", "To"]];
  const v = readParams(filters);
  const body = h("div", {});
  add(main, h("h1", {}, "Checkout sessions"), filterBar("sessions", filters, v, "checkout-sessions"), body);
  const draw = async () => {
    const res = await api.list(`${project()}/checkout-sessions` + api.query(Object.assign(filterValues(filters, v), { page: v.page, limit: 20 })));
    clear(body,
      table([
        { label: "Amount", cell: (s) => usd(s.amountUsd) },
        { label: "Paid", cell: (s) => usd(s.amountPaidUsd) },
        { label: "Status", cell: (s) => [badge(s.status), s.exception ? badge(s.exception, "bad") : null] },
        { label: "Customer", cell: (s) => s.email || "—" },
        { label: "Created", cell: (s) => time(s.createdAt) },
        { label: "ID", cell: (s) => h("code", { class: "short" }, s.id) },
      ], res.items, { link: (s) => href(`sessions/${s.id}`), empty: "No checkout session matches.", caption: "Checkout sessions" }),
      pager(res.pagination, (n) => go(href("sessions") + api.query(Object.assign(filterValues(filters, v), { page: n })))));
  };
  await draw();
  every(10000, draw);
}

export async function transactions(main) {
  const assets = await api.get("/assets");
  const networks = [...new Set(assets.filter((a) => a.isLive === (state.env === "live")).map((a) => a.network))];
  const filters = [["status", "Status", txStatuses()], ["network", "Network", networks], ["unexpected", "Unexpected", [["true", "To assign"]]],
    ["from", "From"], ["to", "To"]];
  const v = readParams(filters);
  const body = h("div", {});
  add(main, h("h1", {}, "Transactions"), filterBar("transactions", filters, v, "transactions"), body);
  const draw = async () => {
    const res = await api.list(`${project()}/transactions` + api.query(Object.assign(filterValues(filters, v), { page: v.page, limit: 20 })));
    clear(body,
      table([...txColumns(), { label: "Hash", cell: (t) => h("code", { class: "short" }, t.txHash) }], res.items,
        { link: (t) => href(`transactions/${t.id}`), empty: "No transaction matches.", caption: "Transactions" }),
      pager(res.pagination, (n) => go(href("transactions") + api.query(Object.assign(filterValues(filters, v), { page: n })))));
  };
  await draw();
  every(10000, draw);
}

// addDecimal adds two non-negative decimal strings exactly.
function addDecimal(a, b) {
  const [ai, af = ""] = a.split(".");
  const [bi, bf = ""] = b.split(".");
  const n = Math.max(af.length, bf.length);
  const sum = BigInt(ai + af.padEnd(n, "0")) + BigInt(bi + bf.padEnd(n, "0"));
  let s = sum.toString().padStart(n + 1, "0");
  if (!n) return s;
  s = s.slice(0, -n) + "." + s.slice(-n);
  return s.replace(/\.?0+$/, "");
}

function paidByAsset(txs) {
  const out = {};
  for (const t of txs || []) {
    if (t.status !== "confirmed" && t.status !== "finalized" && t.status !== "completed") continue;
    const k = `${t.symbol}|${t.network}`;
    out[k] = out[k] ? addDecimal(out[k], t.amount) : t.amount;
  }
  return out;
}

export async function session(main, { id: sid }) {
  const body = h("div", {});
  add(main, body);
  const history = h("section", { class: "card" });
  const deliveries = h("section", { class: "card" });
  let refunds = null;
  let last = "";
  const draw = async () => {
    const s = await api.get(`${project()}/checkout-sessions/${sid}`);
    const key = s.updatedAt + (s.transactions || []).map((t) => t.status + t.confirmations).join();
    if (key === last) return s;
    last = key;
    const paid = paidByAsset(s.transactions);
    clear(body,
      h("div", { class: "page-head" }, h("h1", {}, `Checkout session ${usd(s.amountUsd)}`), h("span", { id: "session-status" }, badge(s.status)),
        s.exception ? badge(s.exception, "bad") : null),
      exceptionCard(s),
      h("div", { class: "grid2" },
        section("Payment", dl([
          ["Amount due", usd(s.amountUsd)],
          ["Paid", h("span", { id: "session-paid" }, usd(s.amountPaidUsd))],
          ["Resolution", s.resolution ? titleCase(s.resolution) : null],
          ["Deposit address", mono(s.depositAddress, "deposit address")],
          ["Quote valid until", time(s.quoteExpiresAt)],
          ["Expires", time(s.expiresAt)],
          ["Completed", s.completedAt ? time(s.completedAt) : "—"],
        ].filter((x) => x[1] !== null))),
        section("Details", dl([
          ["ID", id(s.id, "session ID")],
          ["Payment plan", h("a", { href: href(`plans/${s.paymentPlanId}`) }, s.paymentPlanId)],
          ["Customer email", s.email || "—"],
          ["Metadata", h("code", { class: "wrap" }, JSON.stringify(s.metadata))],
          ["Created", time(s.createdAt)],
          ["Temporal workflow", s.workflowId ? id(s.workflowId, "workflow ID") : "—"],
        ]))),
      section("Amount per asset", table([
        { label: "Asset", cell: (o) => `${o.symbol} on ${o.network}` },
        { label: "Due", cell: (o) => amount(o.amount, o.symbol) },
        { label: "Paid", cell: (o) => { const p = paid[`${o.symbol}|${o.network}`]; return p ? amount(p, o.symbol) : "—"; } },
      ], s.paymentOptions, { empty: "No payment option.", caption: "Amount per asset" })),
      section("Transactions", table(txColumns(), s.transactions || [], { link: (t) => href(`transactions/${t.id}`), empty: "No transaction yet.", caption: "Transactions" })),
      refunds ? (refunds.refresh(), refunds) : (refunds = refundsCard(s)),
      history, deliveries,
      canWrite() && s.status === "open" ? h("div", { class: "actions" }, h("button", { type: "button", class: "danger", onclick: async () => {
        if (!(await confirm("Cancel session", "The customer can no longer pay it. A payment that arrives later is recorded as a late payment.", "Cancel session", true))) return;
        await api.post(`${project()}/checkout-sessions/${s.id}/cancel`);
        toast("Session canceled");
        last = "";
        draw();
      } }, "Cancel session")) : null);
    await eventsAndDeliveries(history, deliveries, s.id);
    return s;
  };
  const s = await draw();
  if (!finalSession(s.status) || (s.transactions || []).some((t) => !finalTx(t.status))) {
    every(3000, async () => { const x = await draw(); if (finalSession(x.status) && (x.transactions || []).every((t) => finalTx(t.status))) state.timers.forEach(clearInterval); });
  }
}

function exceptionCard(s) {
  if (!s.exception || !canWrite()) return null;
  const choices = {
    underpaid: ["underpayment_accepted", "Accept as paid", "The customer sent less than due (often an exchange's withdrawal fee). Accepting completes the session with what it received."],
    overpaid: ["overpayment_settled", "Mark as settled", "The customer sent more than due. Once you have refunded or credited the excess yourself, mark it settled."],
  };
  const c = choices[s.exception];
  if (!c) return section("Exception", h("p", {}, `This session is flagged ${titleCase(s.exception)}. See the runbook (docs/operations.md) for what to do.`));
  return h("section", { class: "card attention" }, h("h2", {}, `Exception: ${titleCase(s.exception)}`), h("p", {}, c[2]),
    h("button", { type: "button", class: "primary", id: "resolve", onclick: async () => {
      if (!(await confirm(c[1], c[2], c[1]))) return;
      try {
        await api.post(`${project()}/checkout-sessions/${s.id}/resolve`, { resolution: c[0] });
        toast("Exception resolved");
      } catch (err) { toast(err.message, "bad"); }
      go(location.pathname, { replace: true });
    } }, c[1]));
}

// eventsAndDeliveries lists an object's events (its status history, with
// times, where historyEl is given) and, on demand, each event's webhook
// deliveries.
async function eventsAndDeliveries(historyEl, deliveriesEl, objectId) {
  const evs = await api.list(`${project()}/events` + api.query({ objectId, limit: 100 }));
  const items = evs.items.slice().sort((a, b) => a.timestamp.localeCompare(b.timestamp));
  if (historyEl) clear(historyEl, h("h2", {}, "Status history"), h("ol", { class: "timeline" }, items.map((e) =>
    h("li", {}, time(e.timestamp), " ", h("strong", {}, e.type), e.data && e.data.status ? [" → ", badge(e.data.status)] : null))));
  clear(deliveriesEl, h("h2", {}, "Webhook deliveries"),
    items.length ? h("p", { class: "muted small" }, "Each event below went to every endpoint subscribed to it; open one to see its deliveries.") : h("p", { class: "empty" }, "No event yet."),
    items.map((e) => {
      const d = h("details", {}, h("summary", {}, e.type, " · ", time(e.timestamp)));
      const box = h("div", {}, h("p", { class: "muted" }, "Loading…"));
      d.append(box);
      d.addEventListener("toggle", async () => {
        if (!d.open) return;
        const res = await api.list(`${project()}/events/${e.id}/deliveries`);
        clear(box, deliveryTable(res.items));
      });
      return d;
    }));
}

// attempts lists a delivery's attempts: when, the answer, how long, the
// error and the start of the response.
export function attempts(d) {
  return h("ul", { class: "plain small" }, d.attempts.map((a) => h("li", {}, `#${a.attempt} `, time(a.at),
    ` · ${a.statusCode ? "HTTP " + a.statusCode : "no answer"} · ${a.latencyMs} ms`, a.error ? ` · ${a.error}` : "",
    a.responseExcerpt ? h("code", { class: "excerpt" }, a.responseExcerpt) : null)));
}

export function deliveryTable(list) {
  return table([
    { label: "Endpoint", cell: (d) => h("a", { href: href(`webhooks/${d.webhookId}`) }, h("code", { class: "short" }, d.webhookId)) },
    { label: "Status", cell: (d) => badge(d.status) },
    { label: "Attempts", cell: attempts },
  ], list, { empty: "No endpoint was subscribed to this event.", caption: "Deliveries" });
}

export async function transaction(main, { id: tid }) {
  const body = h("div", {});
  const deliveries = h("section", { class: "card" });
  add(main, body);
  let last = "";
  const draw = async () => {
    const t = await api.get(`${project()}/transactions/${tid}`);
    const key = t.updatedAt + t.confirmations;
    if (key === last) return t;
    last = key;
    clear(body,
      h("div", { class: "page-head" }, h("h1", {}, `Transaction ${amount(t.amount, t.symbol)}`), h("span", { id: "tx-status" }, badge(t.status)),
        t.unexpected && !t.assignedSessionId ? badge("unexpected", "bad") : null),
      t.unexpected && !t.assignedSessionId && canWrite() ? assignCard(t) : null,
      h("div", { class: "grid2" },
        section("Transfer", dl([
          ["Amount", amount(t.amount, t.symbol)],
          ["USD value", usd(t.amountUsd)],
          ["Network", `${t.network} (chain ${t.chainId})`],
          ["Confirmations", h("span", { id: "tx-confirmations" }, `${t.confirmations} of ${t.requiredConfirmations}`)],
          ["Transaction hash", [mono(t.txHash, "transaction hash"), t.explorerUrl ? h("a", { href: t.explorerUrl, target: "_blank", rel: "noopener noreferrer" }, "View on the explorer") : null]],
          ["From", mono(t.fromAddress, "sender address")],
          ["To", mono(t.toAddress, "deposit address")],
          ["Block", t.blockNumber !== null ? String(t.blockNumber) : "—"],
          ["Failure", t.failureReason || null],
        ].filter((x) => x[1] !== null))),
        section("Details", dl([
          ["ID", id(t.id, "transaction ID")],
          ["Checkout session", t.checkoutSessionId ? h("a", { href: href(`sessions/${t.checkoutSessionId}`) }, t.checkoutSessionId) : "—"],
          ["Assigned to", t.assignedSessionId ? h("a", { href: href(`sessions/${t.assignedSessionId}`) }, t.assignedSessionId) : null],
          ["Asset", t.assetDefinitionId],
          ["Seen", time(t.createdAt)],
          ["Confirmed", time(t.confirmedAt)],
          ["Finalized", time(t.finalizedAt)],
          ["Temporal workflow", t.workflowId ? id(t.workflowId, "workflow ID") : "—"],
        ].filter((x) => x[1] !== null)))),
      section("Status history", h("ol", { class: "timeline" }, t.statusHistory.map((c) =>
        h("li", {}, time(c.at), " ", badge(c.status), c.reason ? ` ${c.reason}` : "")))),
      deliveries);
    await eventsAndDeliveries(null, deliveries, t.id);
    return t;
  };
  const t = await draw();
  if (!finalTx(t.status)) every(3000, async () => { const x = await draw(); if (finalTx(x.status)) state.timers.forEach(clearInterval); });
}

function assignCard(t) {
  const sid = input({ placeholder: "cs_…", autocomplete: "off" });
  return h("section", { class: "card attention" }, h("h2", {}, "Unexpected transfer"),
    h("p", {}, "This transfer matched no open checkout session (paid late, to an ended session, or to an unknown address). If you know which session it pays, assign it: the session counts it as paid."),
    form({ class: "inline" }, [field("Checkout session ID", sid, { name: "checkoutSessionId" }), h("button", { type: "submit", class: "primary" }, "Assign")], async () => {
      await api.post(`${project()}/transactions/${t.id}/assign`, { checkoutSessionId: sid.value.trim() });
      toast("Transfer assigned");
      go(location.pathname, { replace: true });
    }));
}
