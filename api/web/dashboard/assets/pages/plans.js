// Payment plans: the list, creating and editing one, its payment link.
import * as api from "../api.js";
import { h, add, clear, usd, table, time, badge, pager, field, input, select, form, toast, confirm, dl, section, id, copyButton } from "../ui.js";
import { state, href, go, canWrite } from "../app.js";

const base = () => `/projects/${state.project.id}/payment-plans`;
export const paymentLink = (planId) => `${location.origin}/pay/${planId}`;

function price(p) {
  if (p.pricingModel === "token_amount") {
    // A plan of the second API shape: token amounts, paid to its recipient.
    return (p.paymentOptions || []).map((o) => `${o.amount} ${o.symbol} on ${o.networkId}`).join(" or ");
  }
  return p.pricingModel === "fixed_usd" ? usd(p.amountUsd) : `${usd(p.minAmountUsd)} – ${usd(p.maxAmountUsd)} (payer chooses)`;
}

export async function list(main) {
  const params = new URLSearchParams(location.search);
  const status = params.get("status") || "";
  const page = Number(params.get("page")) || 1;
  const res = await api.list(base() + api.query({ status, page, limit: 20 }));
  const filter = select([["", "All"], ["active", "Active"], ["archived", "Archived"], ["expired", "Expired"]], status, { "aria-label": "Status" });
  filter.addEventListener("change", () => go(href("plans") + api.query({ status: filter.value })));
  add(main, 
    h("div", { class: "page-head" }, h("h1", {}, "Payment plans"), canWrite() ? h("a", { class: "button primary", href: href("plans/new") }, "New payment plan") : null),
    h("div", { class: "filters" }, h("label", {}, "Status ", filter)),
    table([
      { label: "Title", cell: (p) => p.title },
      { label: "Price", cell: price },
      { label: "Status", cell: (p) => badge(p.status) },
      { label: "Created", cell: (p) => time(p.createdAt) },
      { label: "Payment link", class: "actions-cell", cell: (p) => p.status === "active" ? copyButton(paymentLink(p.id), "payment link") : "—" },
    ], res.items, { link: (p) => href(`plans/${p.id}`), empty: "No payment plan yet.", caption: "Payment plans" }),
    pager(res.pagination, (n) => go(href("plans") + api.query({ status, page: n }))));
}

export async function create(main) {
  add(main, h("h1", {}, "New payment plan"));
  add(main, await planForm(null));
}

export async function detail(main, { id: planId }) {
  const p = await api.get(`${base()}/${planId}`);
  const link = paymentLink(p.id);
  const actions = h("div", { class: "actions" });
  if (canWrite() && p.status === "active") {
    actions.append(
      h("button", { type: "button", onclick: async () => {
        clear(main, h("h1", {}, `Edit “${p.title}”`), await planForm(p));
      } }, "Edit"),
      h("button", { type: "button", class: "danger", onclick: async () => {
        if (!(await confirm("Archive plan", "Its payment link stops opening new checkout sessions. Sessions already open go on.", "Archive", true))) return;
        await api.post(`${base()}/${p.id}/archive`);
        toast("Plan archived");
        go(href(`plans/${p.id}`), { replace: true });
      } }, "Archive"));
  }
  add(main, 
    h("div", { class: "page-head" }, h("h1", {}, p.title), badge(p.status)),
    p.status === "active" ? section("Payment link",
      h("p", { class: "muted" }, "Share it, put it behind a “Pay” button or in an invoice: each visit opens a new checkout session for this plan."),
      h("div", { class: "secret" }, h("code", { id: "payment-link" }, link), copyButton(link, "payment link")),
      h("p", {}, h("a", { href: link, target: "_blank", rel: "noopener", id: "open-payment-link" }, "Open the checkout"))) : null,
    section("Details", dl([
      ["ID", id(p.id, "plan ID")],
      ["Price", price(p)],
      ["Accepted assets", policies(p.acceptedAssetPolicies)],
      ["Redirect after payment", p.redirectUrl || "—"],
      ["Merchant shown", [p.merchantInfo.name, p.merchantInfo.email, p.merchantInfo.website].filter(Boolean).join(" · ") || "—"],
      ["Expires", p.expiresAt ? time(p.expiresAt) : "Never"],
      ["Created", time(p.createdAt)],
      ["Updated", time(p.updatedAt)],
    ])),
    actions);
}

function policies(list) {
  if (!list || !list.length) return "Every asset of the deployment";
  return h("ul", { class: "plain" }, list.map((x) => h("li", {}, x.policyType === "any"
    ? `Any asset${x.chainScope && x.chainScope.length ? " on " + x.chainScope.join(", ") : ""}`
    : x.assetDefinitionId)));
}

// planForm creates a plan, or edits p.
async function planForm(p) {
  const assets = (await api.get("/assets")).filter((a) => a.isLive === (state.env === "live"));
  const networks = [...new Set(assets.map((a) => a.network))];
  const title = input({ value: p ? p.title : "", maxlength: "200", required: true });
  const model = select([["fixed_usd", "A fixed price"], ["variable_usd", "The payer chooses, within bounds"]], p ? p.pricingModel : "fixed_usd");
  const amountUsd = input({ inputmode: "decimal", value: p && p.amountUsd ? p.amountUsd : "", placeholder: "49.00" });
  const minUsd = input({ inputmode: "decimal", value: p && p.minAmountUsd ? p.minAmountUsd : "", placeholder: "5.00" });
  const maxUsd = input({ inputmode: "decimal", value: p && p.maxAmountUsd ? p.maxAmountUsd : "", placeholder: "500.00" });
  const fixedBox = h("div", {}, field("Price in USD", amountUsd, { name: "amountUsd" }));
  const varBox = h("div", { class: "row2" }, field("Minimum in USD", minUsd, { name: "minAmountUsd" }), field("Maximum in USD", maxUsd, { name: "maxAmountUsd" }));
  const sync = () => { fixedBox.hidden = model.value !== "fixed_usd"; varBox.hidden = model.value === "fixed_usd"; };
  model.addEventListener("change", sync);
  sync();

  // Accepted assets: any asset on chosen networks, or chosen assets.
  const current = p ? p.acceptedAssetPolicies : [];
  const anyMode = !current.length || current.some((x) => x.policyType === "any");
  const mode = select([["any", "Any asset on the networks chosen"], ["assets", "Only the assets chosen"]], anyMode ? "any" : "assets");
  const scoped = new Set(current.flatMap((x) => x.chainScope || []));
  const chosen = new Set(current.filter((x) => x.policyType === "asset_definition").map((x) => x.assetDefinitionId));
  const netBoxes = networks.map((n) => h("label", { class: "check" }, h("input", { type: "checkbox", value: n, checked: !scoped.size || scoped.has(n) }), n));
  const assetBoxes = assets.map((a) => h("label", { class: "check" }, h("input", { type: "checkbox", value: a.id, checked: chosen.has(a.id) }), `${a.symbol} on ${a.network}`, h("span", { class: "muted small" }, ` (${a.id})`)));
  const netSet = h("fieldset", {}, h("legend", {}, "Networks"), netBoxes);
  const assetSet = h("fieldset", {}, h("legend", {}, "Assets"), assetBoxes);
  const syncMode = () => { netSet.hidden = mode.value !== "any"; assetSet.hidden = mode.value === "any"; };
  mode.addEventListener("change", syncMode);
  syncMode();
  const policyErr = h("div", {}, field("Accepted assets", mode, { name: "acceptedAssetPolicies" }), netSet, assetSet);

  const redirect = input({ type: "url", value: p && p.redirectUrl ? p.redirectUrl : "", placeholder: "https://shop.example/thanks" });
  const mi = (p && p.merchantInfo) || {};
  const mName = input({ value: mi.name || "", maxlength: "200" });
  const mEmail = input({ type: "email", value: mi.email || "" });
  const mSite = input({ type: "url", value: mi.website || "" });
  const mLogo = input({ type: "url", value: mi.logoUrl || "" });
  const expires = input({ type: "datetime-local", value: p && p.expiresAt ? localInput(p.expiresAt) : "" });

  // A plan's price and assets are fixed once made: sessions already
  // opened from it were quoted with them.
  if (p) {
    for (const c of [model, amountUsd, minUsd, maxUsd, mode, ...netBoxes.map((l) => l.firstChild), ...assetBoxes.map((l) => l.firstChild)]) c.disabled = true;
  }
  return form({ class: "plan-form" }, [
    p ? h("p", { class: "notice" }, "A plan's price and accepted assets cannot change once it exists: create a new plan for new ones.") : null,
    field("Title", title, { name: "title", hint: "What the payer sees: “Pro plan, one year”." }),
    field("Pricing", model, { name: "pricingModel" }), fixedBox, varBox,
    policyErr,
    field("Redirect after payment (optional)", redirect, { name: "redirectUrl" }),
    h("fieldset", {}, h("legend", {}, "Merchant shown on the checkout page"),
      field("Name", mName, { name: "merchantInfo.name" }), field("Email", mEmail, { name: "merchantInfo.email" }),
      field("Website", mSite, { name: "merchantInfo.website" }), field("Logo URL", mLogo, { name: "merchantInfo.logoUrl" })),
    field("Expires (optional)", expires, { name: "expiresAt", hint: "In your time zone; empty for never." }),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, p ? "Save changes" : "Create plan"),
      h("a", { class: "button", href: p ? href(`plans/${p.id}`) : href("plans") }, "Cancel")),
  ], async () => {
    const body = { title: title.value.trim() };
    if (!p) {
      body.pricingModel = model.value;
      if (model.value === "fixed_usd") body.amountUsd = amountUsd.value.trim();
      else Object.assign(body, { minAmountUsd: minUsd.value.trim(), maxAmountUsd: maxUsd.value.trim() });
      if (mode.value === "any") {
        const nets = netBoxes.map((l) => l.firstChild).filter((c) => c.checked).map((c) => c.value);
        body.acceptedAssetPolicies = [{ policyType: "any", chainScope: nets }];
      } else {
        body.acceptedAssetPolicies = assetBoxes.map((l) => l.firstChild).filter((c) => c.checked).map((c) => ({ policyType: "asset_definition", assetDefinitionId: c.value }));
      }
    }
    if (redirect.value.trim()) body.redirectUrl = redirect.value.trim();
    const m = {};
    for (const [k, el] of [["name", mName], ["email", mEmail], ["website", mSite], ["logoUrl", mLogo]]) if (el.value.trim()) m[k] = el.value.trim();
    body.merchantInfo = m;
    if (expires.value) body.expiresAt = new Date(expires.value).toISOString();
    const saved = p ? await api.patch(`${base()}/${p.id}`, body) : await api.post(base(), body);
    toast(p ? "Plan saved" : "Plan created");
    go(href(`plans/${saved.id}`), { replace: !!p });
  });
}

function localInput(iso) {
  const d = new Date(iso);
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
