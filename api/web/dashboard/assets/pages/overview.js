// The project's overview: what was paid today and this month, sessions by
// status, what needs attention and the latest payments.
import * as api from "../api.js";
import { h, add, clear, usd, table, badge } from "../ui.js";
import { state, href, every } from "../app.js";
import { txColumns } from "./payments.js";

export async function page(main) {
  const tz = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  const body = h("div", {});
  add(main, h("div", { class: "page-head" }, h("h1", {}, "Overview"),
    h("a", { class: "button primary", href: href("plans/new") }, "New payment plan")), body);
  const draw = async () => {
    const [o, latest] = await Promise.all([
      api.get(`/projects/${state.project.id}/overview${api.query({ timeZone: tz })}`),
      api.list(`/projects/${state.project.id}/transactions?limit=5`),
    ]);
    const attention = [];
    if (o.needsAttention.exceptions) {
      attention.push(h("li", {}, h("a", { href: href("sessions?exception=true") }, `${o.needsAttention.exceptions} checkout session(s) with an exception to resolve`)));
    }
    if (o.needsAttention.unexpectedTransactions) {
      attention.push(h("li", {}, h("a", { href: href("transactions?unexpected=true") }, `${o.needsAttention.unexpectedTransactions} unexpected transfer(s) to assign`)));
    }
    clear(body,
      h("div", { class: "stats" },
        stat("Paid today", usd(o.today.paidUsd), `${o.today.payments} payment(s)`, "paid-today"),
        stat("Paid this month", usd(o.thisMonth.paidUsd), `${o.thisMonth.payments} payment(s)`, "paid-month"),
        stat("Open sessions", String(o.sessionsByStatus.open + (o.sessionsByStatus.processing || 0)), `${o.sessionsByStatus.processing || 0} processing`)),
      attention.length ? h("section", { class: "card attention" }, h("h2", {}, "Needs attention"), h("ul", {}, attention)) : null,
      h("section", { class: "card" }, h("h2", {}, "Checkout sessions by status"),
        h("ul", { class: "status-counts" }, Object.entries(o.sessionsByStatus).map(([s, n]) =>
          h("li", {}, h("a", { href: href(`sessions?status=${s}`) }, badge(s), h("strong", {}, String(n))))))),
      h("section", { class: "card" }, h("div", { class: "section-head" }, h("h2", {}, "Latest payments"), h("a", { href: href("transactions") }, "All transactions")),
        table(txColumns(), latest.items, { link: (t) => href(`transactions/${t.id}`), empty: "No payment yet. Create a plan, open its payment link and pay it.", caption: "Latest payments" })),
      h("p", { class: "muted small" }, `Days and months in ${o.timeZone}. Amounts in USD at each payment's quoted rate.`));
  };
  await draw();
  every(10000, draw);
}

function stat(label, value, sub, testid) {
  return h("div", { class: "stat card", "data-stat": testid }, h("p", { class: "label" }, label), h("p", { class: "value" }, value), h("p", { class: "muted small" }, sub));
}

