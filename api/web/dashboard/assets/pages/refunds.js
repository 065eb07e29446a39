// A session's refunds: its books (received, refunded, what remains), its
// refunds, a refund made from the page, and a prepared transfer sent from
// the browser wallet that holds the funds (docs/refunds.md).
import * as api from "../api.js";
import { h, clear, table, time, badge, field, input, select, form, toast, confirm, dialog, secret, section, mono, amount, titleCase } from "../ui.js";
import { state, every, canWrite, isOwner } from "../app.js";

const project = () => `/projects/${state.project.id}`;
const settled = (s) => s === "finalized" || s === "failed" || s === "canceled" || s === "exception";

// refundsCard returns the card of session s; it keeps itself up to date
// while a refund is on its way.
export function refundsCard(s) {
  const card = h("section", { class: "card", id: "refunds" });
  let last = "";
  const draw = async () => {
    const [x, res] = await Promise.all([api.get(`${project()}/checkout-sessions/${s.id}`), api.list(`${project()}/refunds` + api.query({ checkoutSessionId: s.id, limit: 100 }))]);
    const refunds = res.items;
    const key = JSON.stringify([x.refunds, refunds.map((r) => r.status + r.updatedAt)]);
    if (key !== last) {
      last = key;
      fill(card, x, refunds, () => { last = ""; card.refresh(); });
    }
    return refunds;
  };
  let polling = false;
  card.refresh = () => draw().then((refunds) => {
    if (!polling && refunds.some((r) => !settled(r.status))) {
      polling = true;
      every(3000, draw);
    }
  });
  card.refresh();
  return card;
}

function fill(card, s, refunds, redraw) {
  const books = (s.refunds && s.refunds.assets) || [];
  const left = books.filter((b) => b.remaining !== "0");
  clear(card, h("h2", {}, "Refunds ", s.refunds && s.refunds.status ? badge(s.refunds.status) : null),
    books.length ? table([
      { label: "Asset", cell: (b) => b.symbol },
      { label: "Received", cell: (b) => amount(b.received, b.symbol) },
      { label: "Refunded", cell: (b) => amount(b.refunded, b.symbol) },
      { label: "Remaining", cell: (b) => amount(b.remaining, b.symbol) },
    ], books, { caption: "Refund balance" }) : h("p", { class: "muted" }, "Nothing final received yet: a refund gives back what the session received in finalized transfers."),
    refunds.length ? table([
      { label: "Amount", cell: (r) => amount(r.amount, r.symbol) },
      { label: "Status", cell: (r) => badge(r.status, r.status === "exception" || r.status === "failed" ? "bad" : r.status === "awaiting_approval" ? "warn" : undefined) },
      { label: "To", cell: (r) => (r.toAddress ? [mono(r.toAddress, "refund address"), ` (${r.addressSource})`] : "the customer's link") },
      { label: "Created", cell: (r) => time(r.createdAt) },
      { label: "", cell: (r) => actions(r, redraw) },
    ], refunds, { caption: "Refunds" }) : null,
    canWrite() && left.length ? h("div", { class: "actions" }, h("button", { type: "button", id: "refund", class: "primary", onclick: () => create(s, left, redraw) }, "Refund")) : null);
}

function actions(r, redraw) {
  if (!canWrite()) return null;
  return [
    // A refund to an address the merchant gave is a payout: an owner
    // approves the address shown, with a fresh sign-in.
    r.status === "awaiting_approval" && isOwner() ? h("button", { type: "button", class: "primary approve-refund", onclick: async () => {
      if (!(await confirm("Approve refund", `You approve paying ${amount(r.amount, r.symbol)} to ${r.toAddress}, an address the merchant gave (not the customer through the link). You may be asked to confirm your password.`, "Approve refund"))) return;
      try {
        await api.post(`${project()}/refunds/${r.id}/approve`, { address: r.toAddress });
        toast("Refund approved: it may be sent");
      } catch (err) { toast(err.code === "REAUTHENTICATION_REQUIRED" ? "Not approved: your identity was not confirmed" : err.message, "bad"); }
      redraw();
    } }, "Approve") : null,
    r.status === "awaiting_approval" && !isOwner() ? h("span", { class: "muted" }, "An owner approves it") : null,
    r.status === "awaiting_signature" && window.ethereum ? h("button", { type: "button", class: "send-refund", onclick: () => sendWithWallet(r).then(redraw, (err) => toast(err.message || "The wallet did not send it", "bad")) }, "Send with wallet") : null,
    r.status === "awaiting_address" || r.status === "awaiting_approval" || r.status === "awaiting_signature" ? h("button", { type: "button", class: "danger", onclick: async () => {
      if (!(await confirm("Cancel refund", "Nothing has been sent for it; what it held can be refunded again.", "Cancel refund", true))) return;
      await api.post(`${project()}/refunds/${r.id}/cancel`);
      toast("Refund canceled");
      redraw();
    } }, "Cancel") : null,
  ];
}

// create asks for the refund: the asset, the amount (all that remains by
// default), and the address if the merchant has it; without one, the
// customer's link is shown once.
function create(s, left, redraw) {
  return dialog("Refund", (close) => {
    const asset = select(left.map((b) => [b.assetDefinitionId, `${b.symbol} (${b.remaining} remaining)`]), left[0].assetDefinitionId, { name: "assetDefinitionId" });
    const amt = input({ name: "amount", inputmode: "decimal", placeholder: "all that remains" });
    const address = input({ name: "address", placeholder: "0x… (or leave empty: the customer gives it)", spellcheck: false, autocomplete: "off" });
    const reason = input({ name: "reason", maxlength: 500 });
    return form({ id: "refund-form" }, [
      left.length > 1 ? field("Asset", asset, { name: "assetDefinitionId" }) : null,
      field("Amount", amt, { name: "amount", hint: "In the asset's units; empty refunds all that remains. Never more than remains." }),
      field("Customer's address", address, { name: "address", hint: "Empty: you get a link for the customer to give it (an exchange's deposit address may not credit a refund). An address you give waits for an owner's approval." }),
      field("Reason", reason, { name: "reason", hint: "Shown to the customer on the link's page." }),
      h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Create refund"), h("button", { type: "button", onclick: () => close() }, "Cancel")),
    ], async () => {
      const body = { checkoutSessionId: s.id, assetDefinitionId: asset.value };
      if (amt.value.trim()) body.amount = amt.value.trim();
      if (address.value.trim()) body.address = address.value.trim();
      if (reason.value.trim()) body.reason = reason.value.trim();
      const r = await api.post(`${project()}/refunds`, body);
      close();
      if (r.claimUrl) await secret("The customer's link", r.claimUrl, "Send this link to the customer: there they give the address the refund goes to. It is shown this once.");
      else toast(`Refund of ${amount(r.amount, r.symbol)} created` + (r.status === "awaiting_approval" ? ": an owner approves it before it is sent" : ""));
      redraw();
    });
  });
}

// sendWithWallet sends the prepared transfer from the browser wallet that
// holds the funds (the recipient's, or a treasury's), then reports its hash.
async function sendWithWallet(r) {
  const t = r.transfer;
  if (!(await confirm("Send the refund", `Your wallet is asked to send ${amount(r.amount, r.symbol)} to ${r.toAddress} on ${titleCase(r.network)}, from the account it holds the funds in.`, "Open the wallet"))) return;
  const [from] = await window.ethereum.request({ method: "eth_requestAccounts" });
  try {
    await window.ethereum.request({ method: "wallet_switchEthereumChain", params: [{ chainId: "0x" + t.chainId.toString(16) }] });
  } catch (err) { /* the wallet asks the merchant itself, or is on the chain already */ }
  const hash = await window.ethereum.request({ method: "eth_sendTransaction",
    params: [{ from, to: t.to, value: "0x" + BigInt(t.value).toString(16), data: t.data }] });
  await api.post(`${project()}/refunds/${r.id}/transaction`, { txHash: hash });
  toast("Refund sent: it is followed to finalized");
}
