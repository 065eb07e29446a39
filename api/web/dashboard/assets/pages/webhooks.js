// Webhook endpoints, their deliveries, and the project's events.
import * as api from "../api.js";
import { h, add, clear, table, time, badge, pager, field, input, select, form, toast, confirm, dl, section, id, secret } from "../ui.js";
import { state, href, go, every, canWrite } from "../app.js";
import { attempts, deliveryTable } from "./payments.js";

const base = () => `/projects/${state.project.id}/webhooks`;
const eventTypes = [
  "checkout.session.created", "checkout.session.open", "checkout.session.processing", "checkout.session.completed",
  "checkout.session.expired", "checkout.session.canceled", "checkout.session.exception", "checkout.session.resolved",
  "checkout.session.updated", "transaction.pending", "transaction.confirmed", "transaction.finalized", "transaction.failed",
  "transaction.reorged", "transaction.reversed", "transaction.assigned", "payment_plan.created", "payment_plan.updated", "payment_plan.archived",
  "webhook_endpoint.disabled",
];

export async function list(main) {
  const res = await api.list(base() + "?limit=100");
  add(main, h("div", { class: "page-head" }, h("h1", {}, "Webhooks")),
    h("p", { class: "muted" }, "Signed HTTP POSTs to your server for every event you subscribe to (Standard Webhooks; see docs/webhooks.md)."),
    table([
      { label: "URL", cell: (w) => h("span", { class: "wrap" }, w.url) },
      { label: "Events", cell: (w) => w.enabledEvents.includes("*") ? "All" : `${w.enabledEvents.length} type(s)` },
      { label: "Status", cell: (w) => badge(w.status) },
      { label: "Description", cell: (w) => w.description || "—" },
      { label: "Created", cell: (w) => time(w.createdAt) },
    ], res.items, { link: (w) => href(`webhooks/${w.id}`), empty: "No endpoint yet.", caption: "Webhook endpoints" }),
    canWrite() ? section("Add an endpoint", endpointForm(null)) : null);
}

function endpointForm(w) {
  const url = input({ type: "url", value: w ? w.url : "", placeholder: "https://shop.example/hooks", required: true });
  const desc = input({ value: w ? w.description : "", maxlength: "500" });
  const all = !w || w.enabledEvents.includes("*");
  const allBox = h("input", { type: "checkbox", checked: all });
  const boxes = eventTypes.map((t) => h("label", { class: "check" }, h("input", { type: "checkbox", value: t, checked: !all && w.enabledEvents.includes(t) }), h("code", {}, t)));
  const set = h("fieldset", { class: "event-types" }, h("legend", {}, "Event types"), boxes);
  const sync = () => { set.hidden = allBox.checked; };
  allBox.addEventListener("change", sync);
  sync();
  return form({ class: "endpoint-form" }, [
    field("Endpoint URL", url, { name: "url", hint: "HTTPS in production; it must answer 2xx within 10 s." }),
    field("Description (optional)", desc, { name: "description" }),
    h("div", { class: "field" }, h("label", { class: "check" }, allBox, "Every event type"), h("div", { "data-field": "enabledEvents", id: "enabled-events" }), h("p", { class: "field-error", id: "enabled-events-err", hidden: true })),
    set,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, w ? "Save changes" : "Add endpoint")),
  ], async () => {
    const body = { url: url.value.trim(), description: desc.value.trim(),
      enabledEvents: allBox.checked ? ["*"] : boxes.map((l) => l.firstChild).filter((c) => c.checked).map((c) => c.value) };
    if (w) {
      await api.patch(`${base()}/${w.id}`, body);
      toast("Endpoint saved");
      go(location.pathname, { replace: true });
      return;
    }
    const made = await api.post(base(), body);
    await secret("Signing secret", made.secret, "Your server verifies every delivery with this secret. Copy it now: it is shown this once.");
    go(href(`webhooks/${made.id}`));
  });
}

export async function detail(main, { id: wid }) {
  const w = await api.get(`${base()}/${wid}`);
  const params = new URLSearchParams(location.search);
  const status = params.get("status") || "";
  const page = Number(params.get("page")) || 1;
  const deliveries = h("div", {});
  const disabledEvents = w.status === "disabled"
    ? (await api.list(`/projects/${state.project.id}/events` + api.query({ objectId: w.id, type: "webhook_endpoint.disabled", limit: 5 }))).items : [];
  const act = (label, fn, cls) => h("button", { type: "button", class: cls, onclick: fn }, label);
  add(main, 
    h("div", { class: "page-head" }, h("h1", { class: "wrap" }, w.url), badge(w.status)),
    w.status === "disabled" ? h("section", { class: "card attention", id: "disabled-notice" }, h("h2", {}, "This endpoint is disabled"),
      h("p", {}, w.disabledReason || "It was disabled."),
      disabledEvents.map((e) => h("p", { class: "small" }, time(e.timestamp), " · ", h("a", { href: href(`events/${e.id}`) }, "webhook_endpoint.disabled"),
        "")),
      h("p", {}, "Events kept being recorded while it was off: fetch them from the events API (", h("code", {}, "GET …/events?since=…"), ") to catch up, then enable it again."),
      canWrite() ? act("Enable again", async () => { await api.patch(`${base()}/${w.id}`, { status: "enabled" }); toast("Endpoint enabled"); go(location.pathname, { replace: true }); }, "primary") : null) : null,
    section("Details", dl([
      ["ID", id(w.id, "endpoint ID")],
      ["Events", w.enabledEvents.includes("*") ? "Every event type" : h("ul", { class: "plain" }, w.enabledEvents.map((e) => h("li", {}, h("code", {}, e))))],
      ["Description", w.description || "—"],
      ["Created", time(w.createdAt)],
    ])),
    canWrite() ? h("div", { class: "actions" },
      act("Send a test event", async () => {
        const ev = await api.post(`${base()}/${w.id}/test`);
        toast(`Test event ${ev.id} sent`);
        setTimeout(drawDeliveries, 1500);
      }),
      act("Rotate secret", async () => {
        if (!(await confirm("Rotate the signing secret", "A new secret signs every delivery from now on; the current one keeps signing too for 24 hours, so that you can deploy the new one.", "Rotate"))) return;
        const r = await api.post(`${base()}/${w.id}/rotate-secret`);
        await secret("New signing secret", r.secret);
      }),
      w.status === "enabled" ? act("Disable", async () => {
        if (!(await confirm("Disable endpoint", "No event is delivered to it until you enable it again; events go on being recorded.", "Disable", true))) return;
        await api.patch(`${base()}/${w.id}`, { status: "disabled" });
        toast("Endpoint disabled");
        go(location.pathname, { replace: true });
      }) : null,
      act("Delete", async () => {
        if (!(await confirm("Delete endpoint", "Deliveries stop and the endpoint is gone for good.", "Delete", true))) return;
        await api.del(`${base()}/${w.id}`);
        toast("Endpoint deleted");
        go(href("webhooks"));
      }, "danger")) : null,
    canWrite() ? h("details", { class: "card" }, h("summary", {}, "Edit endpoint"), endpointForm(w)) : null,
    h("section", { class: "card" }, h("div", { class: "section-head" }, h("h2", {}, "Delivery log"), statusFilter(status)), deliveries));

  async function drawDeliveries() {
    const res = await api.list(`${base()}/${w.id}/deliveries` + api.query({ status, page, limit: 20 }));
    clear(deliveries, table([
      { label: "Event", cell: (d) => [h("a", { href: href(`events/${d.eventId}`) }, d.eventType), h("br"), time(d.createdAt)] },
      { label: "Status", cell: (d) => badge(d.status) },
      { label: "Attempts", cell: attempts },
      { label: "", class: "actions-cell", cell: (d) => canWrite() ? h("button", { type: "button", class: "small", onclick: async (e) => {
        e.target.disabled = true;
        try {
          const env = await api.send(`${base()}/${w.id}/deliveries/${d.id}/redeliver`);
          toast(env.message);
        } catch (err) { toast(err.message, "bad"); }
        drawDeliveries();
      } }, "Redeliver") : null },
    ], res.items, { empty: "No delivery yet. Send a test event to try the endpoint.", caption: "Deliveries" }),
    pager(res.pagination, (n) => go(href(`webhooks/${w.id}`) + api.query({ status, page: n }))));
  }
  await drawDeliveries();
  every(5000, drawDeliveries);
}

function statusFilter(status) {
  const s = select([["", "All"], ["pending", "Pending"], ["delivered", "Delivered"], ["failed", "Failed"]], status, { "aria-label": "Delivery status" });
  s.addEventListener("change", () => go(location.pathname + api.query({ status: s.value })));
  return s;
}

export async function events(main) {
  const params = new URLSearchParams(location.search);
  const type = params.get("type") || "";
  const page = Number(params.get("page")) || 1;
  const res = await api.list(`/projects/${state.project.id}/events` + api.query({ type, page, limit: 25 }));
  const filter = select([["", "All types"], ...eventTypes.concat("webhook.test").map((t) => [t, t])], type, { "aria-label": "Event type" });
  filter.addEventListener("change", () => go(href("events") + api.query({ type: filter.value })));
  add(main, h("h1", {}, "Events"),
    h("p", { class: "muted" }, "Everything that happened in this environment, newest first. A consumer that was offline reads them all with ", h("code", {}, "?since="), " (docs/webhooks.md)."),
    h("div", { class: "filters" }, filter),
    table([
      { label: "Type", cell: (e) => e.type },
      { label: "Object", cell: (e) => h("code", { class: "short" }, (e.data && e.data.id) || "—") },
      { label: "Status", cell: (e) => e.data && e.data.status ? badge(e.data.status) : "—" },
      { label: "Time", cell: (e) => time(e.timestamp) },
    ], res.items, { link: (e) => href(`events/${e.id}`), empty: "No event yet.", caption: "Events" }),
    pager(res.pagination, (n) => go(href("events") + api.query({ type, page: n }))));
}

export async function event(main, { id: eid }) {
  const e = await api.get(`/projects/${state.project.id}/events/${eid}`);
  const d = await api.list(`/projects/${state.project.id}/events/${eid}/deliveries`);
  const obj = e.data && e.data.id ? e.data.id : "";
  const link = obj.startsWith("cs_") ? href(`sessions/${obj}`) : obj.startsWith("tx_") ? href(`transactions/${obj}`)
    : obj.startsWith("plan_") ? href(`plans/${obj}`) : obj.startsWith("we_") ? href(`webhooks/${obj}`) : null;
  add(main, h("h1", {}, e.type),
    section("Event", dl([["ID", id(e.id, "event ID")], ["Time", time(e.timestamp)], ["Object", link ? h("a", { href: link }, obj) : obj || "—"]])),
    section("Deliveries", deliveryTable(d.items)),
    section("Payload data", h("pre", { class: "json" }, JSON.stringify(e.data, null, 2))));
}
