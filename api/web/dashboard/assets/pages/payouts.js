// Payout batches: transfers the merchant pays out of a treasury address,
// uploaded as a CSV file (every bad line named, the whole batch refused),
// approved by an owner with a fresh sign-in, then each prepared transfer
// sent from the browser wallet that holds the treasury and its hash
// reported; the batch's report follows them to finalized.
import * as api from "../api.js";
import { h, add, clear, table, time, badge, pager, field, input, select, form, toast, confirm, dialog, dl, section, id, mono, amount, titleCase, copyButton } from "../ui.js";
import { state, href, go, every, canWrite, isOwner } from "../app.js";

const project = () => `/projects/${state.project.id}`;
const batchStatuses = ["awaiting_approval", "approved", "completed", "canceled"];
const payoutStatuses = ["awaiting_approval", "awaiting_signature", "sent", "confirmed", "finalized", "failed", "canceled", "exception", "stale", "reversed"];
const batchDone = (s) => s === "completed" || s === "canceled";

// The statuses ui.js does not tone itself.
const tones = { awaiting_approval: "warn", awaiting_signature: "warn", approved: "ok", exception: "bad" };
const status = (s) => badge(s, tones[s]);

// who names the member or key that created or approved a batch.
function who(actor) {
  if (!actor) return "—";
  if (actor === state.me.user.id) return `${state.me.user.email} (you)`;
  return h("code", { class: "short", title: actor }, actor);
}

export async function list(main) {
  const params = new URLSearchParams(location.search);
  const filter = params.get("status") || "";
  const page = Number(params.get("page")) || 1;
  const statusSelect = select([["", "All"], ...batchStatuses.map((s) => [s, titleCase(s)])], filter, { "aria-label": "Status" });
  statusSelect.addEventListener("change", () => go(href("payouts") + api.query({ status: statusSelect.value })));
  const body = h("div", {});
  add(main, h("h1", {}, "Payouts"),
    h("p", { class: "muted" }, `Batches of transfers paid out of an address of yours, in the ${state.env} environment. An owner approves a batch; each payout is then sent from your wallet and followed on chain.`),
    canWrite() ? await uploadCard() : h("p", { class: "notice" }, "Your role reads the payout batches; a developer or an owner uploads them."),
    h("div", { class: "section-head" }, h("h2", {}, "Batches"), h("div", { class: "filters" }, h("label", {}, "Status ", statusSelect))),
    body);
  const draw = async () => {
    const res = await api.list(`${project()}/payout-batches` + api.query({ status: filter, page, limit: 20 }));
    clear(body,
      table([
        { label: "Batch", cell: (b) => b.reference || "No reference" },
        { label: "Payouts", cell: (b) => String(b.payoutCount) },
        { label: "Status", cell: (b) => status(b.status) },
        { label: "From", cell: (b) => h("code", { class: "short", title: b.fromAddress }, b.fromAddress) },
        { label: "Created", cell: (b) => time(b.createdAt) },
        { label: "ID", cell: (b) => h("code", { class: "short" }, b.id) },
      ], res.items, { link: (b) => href(`payouts/${b.id}`), empty: filter ? "No payout batch matches." : "No payout batch yet: upload one above.", caption: "Payout batches" }),
      pager(res.pagination, (n) => go(href("payouts") + api.query({ status: filter, page: n }))));
  };
  await draw();
  every(10000, draw);
}

// uploadCard is the form that uploads a batch's CSV file. A refused
// batch's line errors are listed by line, in the file's order.
async function uploadCard() {
  const assets = (await api.get("/assets")).filter((a) => a.isLive === (state.env === "live"));
  const file = input({ type: "file", accept: ".csv,text/csv", name: "file" });
  const from = input({ name: "fromAddress", placeholder: "0x…", spellcheck: false, autocomplete: "off" });
  const reference = input({ name: "reference", maxlength: 200, placeholder: "May payouts" });
  const problems = h("div", { class: "form-error", id: "upload-problems", role: "alert", hidden: true });
  const useWallet = window.ethereum ? h("button", { type: "button", id: "use-wallet", onclick: async () => {
    try {
      const [account] = await window.ethereum.request({ method: "eth_requestAccounts" });
      if (account) from.value = account;
    } catch (err) { toast(err.message || "The wallet gave no account", "bad"); }
  } }, "Use my wallet's address") : null;
  const example = `address,asset,amount,reference\n0x2b5AD5c4795c026514f8317c7a215E218DcCD6cF,${(assets[0] || { id: "usdc-base" }).id},12.5,invoice-1042`;
  const f = form({ id: "upload-payouts", class: "payout-form" }, [
    problems,
    field("CSV file", file, { name: "file", hint: "A header line, address,asset,amount,reference, then one line per payout; at most 1,000. The reference is optional and names one payout." }),
    field("From address", from, { name: "fromAddress", hint: "The address of yours the payouts are paid from: your wallet sends each payout from it." }),
    useWallet ? h("div", { class: "actions tight" }, useWallet) : null,
    field("Reference", reference, { name: "reference", hint: "Optional: what the batch is, for you." }),
    h("details", {}, h("summary", {}, "File format and assets"),
      h("pre", { class: "json" }, example),
      h("p", { class: "small muted" }, `Assets of the ${state.env} environment: `, assets.length ? assets.map((a, i) => [i ? ", " : "", h("code", {}, a.id), ` (${a.symbol} on ${a.network})`]) : "none")),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Upload batch")),
  ], async () => {
    problems.hidden = true;
    if (!file.files.length) throw new api.APIError(422, { message: "Choose the batch's CSV file.", error: { details: [{ field: "file", message: "Choose a CSV file" }] } });
    const text = await file.files[0].text();
    const q = { fromAddress: from.value.trim() };
    if (reference.value.trim()) q.reference = reference.value.trim();
    try {
      const b = await api.upload(`${project()}/payout-batches` + api.query(q), text, "text/csv");
      toast(`Batch of ${b.payoutCount} payouts uploaded: an owner approves it`);
      go(href(`payouts/${b.id}`));
    } catch (err) {
      const lines = (err.details || []).filter((d) => /^line \d+/.test(d.field) || d.field === "payouts");
      if (lines.length) {
        showProblems(problems, lines, file.files[0].name);
        err.details = err.details.filter((d) => !lines.includes(d));
        err.message = "The batch was refused: nothing was created.";
      }
      throw err;
    }
  });
  return section("Upload a batch", f);
}

// showProblems lists a refused file's problems, one item per problem,
// named by its line and column.
function showProblems(box, details, name) {
  const items = details.map((d) => {
    const m = /^line (\d+)(?:\.(\w+))?$/.exec(d.field);
    if (!m) return h("li", {}, d.message);
    const where = m[1] === "1" ? "Line 1 (the header)" : `Line ${m[1]}`;
    return h("li", { "data-line": m[1] }, h("strong", {}, where), m[2] ? [", ", h("code", {}, m[2])] : null, `: ${d.message}`);
  });
  const n = details.length;
  clear(box, h("strong", {}, `${name}: ${n} problem${n === 1 ? "" : "s"} to fix, then upload the file again.`), h("ul", {}, items));
  box.hidden = false;
}

export async function detail(main, { id: batchId }) {
  const body = h("div", {});
  // The wallet's log: what this page sent, kept across redraws.
  const log = h("ul", { class: "plain small wallet-log", id: "wallet-log", "aria-live": "polite" });
  const local = { busy: false, hashes: {} };
  add(main, body);
  let last = "";
  let b;
  const draw = async (force) => {
    b = await api.get(`${project()}/payout-batches/${batchId}`);
    const key = JSON.stringify([b.status, b.updatedAt, b.payouts.map((p) => p.status + p.updatedAt), local.busy, local.hashes]);
    if (key === last && !force) return b;
    last = key;
    const redraw = () => draw(true);
    clear(body,
      h("div", { class: "page-head" }, h("h1", {}, b.reference ? `Payout batch “${b.reference}”` : "Payout batch"), h("span", { id: "batch-status" }, status(b.status))),
      approvalCard(b, redraw),
      h("div", { class: "grid2" },
        section("Batch", dl([
          ["ID", id(b.id, "batch ID")],
          ["Paid from", mono(b.fromAddress, "from address")],
          ["Payouts", String(b.payoutCount)],
          ["Created by", who(b.createdBy)],
          ["Created", time(b.createdAt)],
          ["Approved by", b.approvedBy ? who(b.approvedBy) : "—"],
          ["Approved", time(b.approvedAt)],
        ])),
        h("section", { class: "card", id: "report" }, h("h2", {}, "Report"),
          h("ul", { class: "status-counts" }, payoutStatuses.filter((s) => b.report.statuses[s]).map((s) =>
            h("li", {}, status(s), h("strong", {}, String(b.report.statuses[s]))))),
          h("ul", { class: "plain report-lines" }, b.report.totals.map((t) => h("li", {},
            h("strong", {}, `${amount(t.paid, t.symbol)} paid`), ` of ${amount(t.requested, t.symbol)}`,
            t.inFlight !== "0" ? `, ${amount(t.inFlight, t.symbol)} on its way` : "",
            t.toSign !== "0" ? `, ${amount(t.toSign, t.symbol)} to sign` : "",
            t.notPaid !== "0" ? h("span", { class: "bad-text" }, `, ${amount(t.notPaid, t.symbol)} not paid`) : ""))))),
      section("Totals", table([
        { label: "Asset", cell: (t) => `${t.symbol} on ${t.network}` },
        { label: "Requested", cell: (t) => amount(t.requested, t.symbol) },
        { label: "Paid", cell: (t) => amount(t.paid, t.symbol) },
        { label: "In flight", cell: (t) => amount(t.inFlight, t.symbol) },
        { label: "To sign", cell: (t) => amount(t.toSign, t.symbol) },
        { label: "Not paid", cell: (t) => amount(t.notPaid, t.symbol) },
      ], b.report.totals, { caption: "Totals per asset" })),
      payoutsCard(b, local, log, redraw),
      canWrite() && cancelable(b) ? h("div", { class: "actions" }, h("button", { type: "button", class: "danger", id: "cancel-batch", disabled: local.busy, onclick: async () => {
        if (!(await confirm("Cancel batch", "None of its payouts is sent, and none can be any more.", "Cancel batch", true))) return;
        try {
          await api.post(`${project()}/payout-batches/${b.id}/cancel`);
          toast("Batch canceled");
        } catch (err) { toast(err.message, "bad"); }
        redraw();
      } }, "Cancel batch")) : null);
    return b;
  };
  await draw();
  if (!batchDone(b.status)) every(3000, async () => { const x = await draw(); if (batchDone(x.status)) state.timers.forEach(clearInterval); });
}

// cancelable: awaiting approval, or approved with nothing sent yet.
const cancelable = (b) => b.status === "awaiting_approval" || (b.status === "approved" && b.payouts.every((p) => p.status === "awaiting_signature"));

function approvalCard(b, redraw) {
  if (b.status !== "awaiting_approval") return null;
  const totals = b.report.totals.map((t) => amount(t.requested, t.symbol)).join(" and ");
  return h("section", { class: "card attention", id: "approval" }, h("h2", {}, "Waiting for approval"),
    h("p", { class: "wrap" }, `${b.payoutCount} payout${b.payoutCount === 1 ? "" : "s"}, ${totals}, from ${b.fromAddress}. Once an owner approves the batch, each payout can be sent from the wallet that holds that address.`),
    isOwner() ? h("button", { type: "button", class: "primary", id: "approve", onclick: async () => {
      if (!(await confirm("Approve payout batch", `You approve paying ${totals} to ${b.payoutCount} address${b.payoutCount === 1 ? "" : "es"} from ${b.fromAddress}. You may be asked to confirm your password.`, "Approve batch"))) return;
      try {
        await api.post(`${project()}/payout-batches/${b.id}/approve`);
        toast("Batch approved: its payouts may be sent");
      } catch (err) { toast(err.code === "REAUTHENTICATION_REQUIRED" ? "Not approved: your identity was not confirmed" : err.message, "bad"); }
      redraw();
    } }, "Approve") : h("p", { class: "muted" }, "Only an owner of the project approves a payout batch."));
}

function payoutsCard(b, local, log, redraw) {
  const pending = b.payouts.filter((p) => p.status === "awaiting_signature" && !local.hashes[p.id]);
  const wallet = canWrite() && window.ethereum;
  return h("section", { class: "card", id: "payouts" },
    h("div", { class: "section-head" }, h("h2", {}, "Payouts"),
      wallet && pending.length > 1 ? h("button", { type: "button", class: "primary", id: "send-all", disabled: local.busy,
        onclick: () => sendAll(b, pending, local, log, redraw) }, "Send all with wallet") : null),
    table([
      { label: "Line", cell: (p) => String(p.line) },
      { label: "Amount", cell: (p) => amount(p.amount, p.symbol) },
      { label: "To", cell: (p) => h("span", { class: "id" }, h("code", { class: "short", title: p.toAddress }, p.toAddress), copyButton(p.toAddress, "payee address")) },
      { label: "Reference", cell: (p) => p.reference || "—" },
      { label: "Status", cell: (p) => [status(p.status), p.failureReason ? h("p", { class: "small muted" }, p.failureReason) : null] },
      { label: "Transaction", cell: (p) => (p.txHash || local.hashes[p.id] ? h("code", { class: "short", title: p.txHash || local.hashes[p.id] }, p.txHash || local.hashes[p.id]) : "—") },
      { label: "", class: "actions-cell", cell: (p) => (canWrite() && p.status === "awaiting_signature" && !local.hashes[p.id] ? h("span", { class: "cell-buttons" },
        wallet ? h("button", { type: "button", class: "small send-payout", "data-line": String(p.line), disabled: local.busy,
          onclick: () => sendAll(b, [p], local, log, redraw) }, "Send with wallet") : null,
        h("button", { type: "button", class: "small", disabled: local.busy, onclick: () => reportHash(p, redraw) }, "Report hash"),
        cancelButton(p, redraw))
        : canWrite() && p.status === "stale" ? h("span", { class: "cell-buttons" }, cancelButton(p, redraw)) : null) },
    ], b.payouts, { caption: "Payouts" }),
    b.status === "approved" && !window.ethereum && pending.length ? h("p", { class: "muted small" }, "No browser wallet on this page: send each prepared transfer from your wallet, then report its hash.") : null,
    log.childElementCount ? [h("h3", { class: "small" }, "Sent from this page"), log] : null);
}

// cancelButton cancels one payout awaiting its signature or stale; a stale
// one's transaction is still followed, and counts if it is mined after all.
function cancelButton(p, redraw) {
  return h("button", { type: "button", class: "small danger cancel-payout", onclick: async () => {
    const text = p.status === "stale"
      ? "Its transaction is still followed: if it is mined after all, the payout counts as paid."
      : "It will not be paid; the batch's other payouts are not changed.";
    if (!(await confirm("Cancel payout", `Cancel line ${p.line}, ${amount(p.amount, p.symbol)} to ${p.toAddress}? ${text}`, "Cancel payout", true))) return;
    try {
      await api.post(`${project()}/payouts/${p.id}/cancel`);
      toast("Payout canceled");
    } catch (err) { toast(err.message, "bad"); }
    redraw();
  } }, "Cancel");
}

// sendAll sends payouts one after the other from the browser wallet, each
// prepared transfer and then its hash reported; it stops at the first the
// wallet does not send. The batch is read again first, so that a payout
// sent meanwhile is not sent twice.
async function sendAll(b, payouts, local, log, redraw) {
  const what = payouts.length === 1 ? `${amount(payouts[0].amount, payouts[0].symbol)} to ${payouts[0].toAddress}` : `${payouts.length} payouts, one after the other`;
  if (!(await confirm("Send with wallet", `Your wallet is asked to send ${what}, from ${b.fromAddress}. Confirm each transaction in the wallet.`, "Open the wallet"))) return;
  local.busy = true;
  redraw();
  let sent = 0;
  try {
    const [from] = await window.ethereum.request({ method: "eth_requestAccounts" });
    if (!from || from.toLowerCase() !== b.fromAddress.toLowerCase()) {
      throw new Error(`The wallet's account ${from || "(none)"} is not the batch's address ${b.fromAddress}: choose that account in the wallet, then send again.`);
    }
    for (const p of payouts) {
      const now = (await api.get(`${project()}/payouts/${p.id}`));
      if (now.status !== "awaiting_signature" || local.hashes[p.id]) continue;
      const hash = await sendOne(now, from);
      local.hashes[p.id] = hash;
      sent++;
      try {
        await api.post(`${project()}/payouts/${p.id}/transaction`, { txHash: hash });
        logLine(log, p, [" sent: ", h("code", { class: "wrap tx-hash" }, hash)]);
      } catch (err) {
        logLine(log, p, [" sent: ", h("code", { class: "wrap tx-hash" }, hash), ` (not reported: ${err.message}; report this hash)`], "bad");
      }
      redraw();
    }
    toast(sent ? `Sent ${sent} payout${sent === 1 ? "" : "s"}: each is followed to finalized` : "Nothing left to send");
  } catch (err) {
    const msg = err.code === 4001 ? "You declined it in the wallet" : err.message || "The wallet did not send it";
    log.append(h("li", { class: "field-error" }, `Stopped: ${msg}`));
    toast(msg, "bad");
  } finally {
    local.busy = false;
    redraw();
  }
}

async function sendOne(p, from) {
  const t = p.transfer;
  try {
    await window.ethereum.request({ method: "wallet_switchEthereumChain", params: [{ chainId: "0x" + t.chainId.toString(16) }] });
  } catch { /* the wallet asks the merchant itself, or is on the chain already */ }
  return window.ethereum.request({ method: "eth_sendTransaction",
    params: [{ from, to: t.to, value: "0x" + BigInt(t.value).toString(16), data: t.data }] });
}

function logLine(log, p, rest, tone) {
  log.append(h("li", { class: tone === "bad" ? "field-error" : null, "data-line": String(p.line) },
    h("strong", {}, `Line ${p.line}`), ` · ${amount(p.amount, p.symbol)} to `, h("code", { class: "wrap" }, p.toAddress), rest));
}

// reportHash is for a payout sent from another wallet: the prepared
// transfer to make, and the hash it got.
function reportHash(p, redraw) {
  return dialog("Report the payout's transaction", (close) => {
    const hash = input({ name: "txHash", placeholder: "0x…", spellcheck: false, autocomplete: "off" });
    const t = p.transfer;
    return form({}, [
      h("p", { class: "wrap" }, `Send ${amount(p.amount, p.symbol)} to ${p.toAddress} from ${p.fromAddress}, as this transaction (chain ${t.chainId}):`),
      dl([["To", mono(t.to, "transaction's to")], ["Value", h("code", {}, t.value)], ["Data", mono(t.data, "transaction's data")]]),
      field("Transaction hash", hash, { name: "txHash" }),
      h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Report"), h("button", { type: "button", onclick: () => close() }, "Cancel")),
    ], async () => {
      await api.post(`${project()}/payouts/${p.id}/transaction`, { txHash: hash.value.trim() });
      close();
      toast("Transaction recorded: it is followed to finalized");
      redraw();
    });
  });
}
