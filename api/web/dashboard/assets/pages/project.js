// The project's settings, members, API keys, deposit keys, deposit
// addresses, OAuth applications and audit log, and creating a project.
import * as api from "../api.js";
import { h, add, table, time, badge, pager, field, input, select, form, toast, confirm, dl, section, mono, secret, titleCase, dialog, copyButton } from "../ui.js";
import { state, href, go, isOwner, reloadMe } from "../app.js";
import * as oauth from "./oauth.js";

const project = () => `/projects/${state.project.id}`;
const ownersOnly = () => h("p", { class: "muted" }, "Only the project's owners change this.");

export async function create(main) {
  const name = input({ required: true, maxlength: "200", placeholder: "My shop" });
  add(main, h("h1", {}, state.me.projects.length ? "New project" : "Create your first project"),
    h("p", { class: "muted" }, "A project holds payment plans, checkout sessions, keys and webhooks, in a sandbox and a live environment."),
    form({ class: "narrow" }, [field("Name", name, { name: "name" }), h("button", { type: "submit", class: "primary" }, "Create project")], async () => {
      const p = await api.post("/projects", { name: name.value.trim() });
      await reloadMe();
      toast("Project created");
      go(`/dashboard/projects/${p.id}/sandbox/`);
    }));
}

export async function apiKeys(main) {
  const keys = await api.get(`${project()}/api-keys`);
  const mine = keys.filter((k) => k.environment === state.env);
  const create = h("button", { type: "button", class: "primary", id: "create-key" }, `Create ${state.env} key`);
  create.addEventListener("click", async () => {
    const r = await api.post(`${project()}/api-keys`);
    await secret("New API key", r.secret, "Your server sends it as “Authorization: Bearer …”. Copy it now: it is shown this once.");
    go(location.pathname, { replace: true });
  });
  add(main, h("div", { class: "page-head" }, h("h1", {}, "API keys"), isOwner() ? create : null),
    h("p", { class: "muted" }, `Keys of the ${state.env} environment. A key acts for the whole project in its environment: keep it on your server.`),
    table([
      { label: "Key", cell: (k) => h("code", {}, k.hint) },
      { label: "Created", cell: (k) => time(k.createdAt) },
      { label: "Last used", cell: (k) => time(k.lastUsedAt) },
      { label: "Ends", cell: (k) => k.expiresAt ? [time(k.expiresAt), new Date(k.expiresAt) <= new Date() ? badge("expired") : null] : "Never" },
      { label: "", class: "actions-cell", cell: (k) => isOwner() && (!k.expiresAt || new Date(k.expiresAt) > new Date()) ? [
        h("button", { type: "button", class: "small", onclick: () => roll(k) }, "Roll"),
        h("button", { type: "button", class: "small danger", "data-revoke": k.hint, onclick: async () => {
          if (!(await confirm("Revoke key", `${k.hint} stops working now, for every call.`, "Revoke", true))) return;
          await api.post(`${project()}/api-keys/${k.id}/revoke`);
          toast("Key revoked");
          go(location.pathname, { replace: true });
        } }, "Revoke")] : null },
    ], mine, { empty: `No ${state.env} key yet.`, caption: "API keys" }),
    isOwner() ? null : ownersOnly());
}

async function roll(k) {
  const grace = await dialog("Roll key", (close) => {
    const g = select([["0", "Now"], ["3600", "In 1 hour"], ["86400", "In 24 hours"], ["604800", "In 7 days"]], "86400");
    return form({}, [h("p", {}, "A new key replaces it; the old one keeps working for a while, so that you can deploy the new one."),
      field("The old key stops", g),
      h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Roll"), h("button", { type: "button", onclick: () => close() }, "Cancel"))],
    async () => close(Number(g.value)));
  });
  if (grace === undefined) return;
  const r = await api.post(`${project()}/api-keys/${k.id}/roll`, { gracePeriodSeconds: grace });
  await secret("New API key", r.secret);
  go(location.pathname, { replace: true });
}

export async function members(main) {
  const list = await api.get(`${project()}/members`);
  const roles = [["owner", "Owner: everything, keys, members and settings"], ["developer", "Developer: plans, sessions, webhooks"], ["viewer", "Viewer: reads only"]];
  add(main, h("h1", {}, "Members"),
    table([
      { label: "Email", cell: (m) => [m.email, m.userId === state.me.user.id ? h("span", { class: "badge info" }, "You") : null] },
      { label: "Role", cell: (m) => {
        if (!isOwner()) return titleCase(m.role);
        const s = select(roles.map(([v]) => [v, titleCase(v)]), m.role, { "aria-label": `Role of ${m.email}` });
        s.addEventListener("change", async () => {
          try {
            await api.patch(`${project()}/members/${m.userId}`, { role: s.value });
            toast("Role changed");
          } catch (err) {
            toast(err.message, "bad");
            s.value = m.role;
          }
        });
        return s;
      } },
      { label: "Since", cell: (m) => time(m.createdAt) },
      { label: "", class: "actions-cell", cell: (m) => isOwner() ? h("button", { type: "button", class: "small danger", onclick: async () => {
        if (!(await confirm("Remove member", `${m.email} loses access to this project.`, "Remove", true))) return;
        try {
          await api.del(`${project()}/members/${m.userId}`);
          toast("Member removed");
        } catch (err) { toast(err.message, "bad"); }
        go(location.pathname, { replace: true });
      } }, "Remove") : null },
    ], list, { caption: "Members" }));
  if (!isOwner()) return add(main, ownersOnly());
  const pending = await api.get(`${project()}/invitations`);
  add(main, section("Pending invitations", table([
    { label: "Email", cell: (i) => i.email },
    { label: "Role", cell: (i) => titleCase(i.role) },
    { label: "Invited by", cell: (i) => i.invitedByEmail || i.invitedBy },
    { label: "Expires", cell: (i) => time(i.expiresAt) },
    { label: "", class: "actions-cell", cell: (i) => h("button", { type: "button", class: "small danger", "data-revoke": i.email, onclick: async () => {
      if (!(await confirm("Revoke invitation", `The invitation sent to ${i.email} will no longer let anyone join.`, "Revoke", true))) return;
      try {
        await api.del(`${project()}/invitations/${i.id}`);
        toast("Invitation revoked");
      } catch (err) { toast(err.message, "bad"); }
      go(location.pathname, { replace: true });
    } }, "Revoke") },
  ], pending, { caption: "Pending invitations", empty: "No invitation is waiting for an answer." })));
  const email = input({ type: "email", autocomplete: "off" });
  const role = select(roles, "developer");
  add(main, section("Invite someone", form({ class: "inline" }, [field("Email", email, { name: "email" }), field("Role", role, { name: "role" }),
    h("button", { type: "submit", class: "primary" }, "Invite")], async () => {
    const r = await api.post(`${project()}/invitations`, { email: email.value.trim(), role: role.value });
    const link = `${location.origin}/dashboard/invitation#token=${encodeURIComponent(r.token)}`;
    await secret("Invitation link", link, `Send this link to ${r.invitation.email}; it is shown this once and works until ${new Date(r.invitation.expiresAt).toLocaleString()}.`);
    email.value = "";
    go(location.pathname, { replace: true }); // the new invitation joins the pending ones
  })));
}

// seconds reads a Go duration ("1h30m0s") as seconds.
function seconds(d) {
  let s = 0;
  for (const [, n, u] of String(d).matchAll(/([\d.]+)(h|ms|m|s)/g)) s += Number(n) * { h: 3600, m: 60, s: 1, ms: 0.001 }[u];
  return Math.round(s);
}

export async function settings(main) {
  const [p, dk, bk] = await Promise.all([api.get(project()), api.get(`${project()}/deposit-key`), api.get(`${project()}/bitcoin-deposit-key`)]);
  add(main, h("h1", {}, "Settings"));
  const name = input({ value: p.name, maxlength: "200" });
  const completeOn = select([["confirmed", "Confirmed: the first block that includes it (fast)"], ["finalized", "Finalized: past the network's finality (safest)"]], p.completeOn);
  const tolerance = input({ inputmode: "decimal", value: p.underpaymentTolerancePercent });
  const late = input({ type: "number", min: "0", value: String(seconds(p.latePaymentWindow)) });
  const lifetime = input({ type: "number", min: "60", value: p.sessionLifetimeSeconds ? String(p.sessionLifetimeSeconds) : "", placeholder: "deployment default" });
  const owner = isOwner();
  for (const c of [name, completeOn, tolerance, late, lifetime]) c.disabled = !owner;
  add(main, section("Project", form({ class: "narrow" }, [
    field("Name", name, { name: "name" }),
    field("A session completes when its payment is", completeOn, { name: "completeOn" }),
    field("Underpayment tolerance (%)", tolerance, { name: "underpaymentTolerancePercent", hint: "A session paid within this much of its amount completes as paid." }),
    field("Late payment window (seconds)", late, { name: "latePaymentWindowSeconds", hint: "How long after expiry a payment to the session still counts." }),
    field("Session lifetime (seconds)", lifetime, { name: "sessionLifetimeSeconds", hint: "How long a checkout session stays open; empty for the deployment's default." }),
    owner ? h("button", { type: "submit", class: "primary" }, "Save settings") : ownersOnly(),
  ], async () => {
    // Only the settings that changed: a rename alone needs no fresh
    // sign-in, a payment setting does (the dialog asks for the password).
    const body = { name: name.value.trim() };
    if (completeOn.value !== p.completeOn) body.completeOn = completeOn.value;
    if (tolerance.value.trim() !== p.underpaymentTolerancePercent) body.underpaymentTolerancePercent = tolerance.value.trim();
    if (Number(late.value) !== seconds(p.latePaymentWindow)) body.latePaymentWindowSeconds = Number(late.value);
    if (lifetime.value && Number(lifetime.value) !== p.sessionLifetimeSeconds) body.sessionLifetimeSeconds = Number(lifetime.value);
    await api.patch(project(), body);
    await reloadMe();
    toast("Settings saved");
    go(location.pathname, { replace: true });
  })));
  add(main, depositKey(owner, dk, {
    title: "Deposit key", path: "deposit-key", id: "deposit-key", label: "Extended public key", placeholder: "xpub…", button: "Set deposit key",
    none: "None yet: checkout sessions cannot open in this environment until one is set.",
    about: ["Checkout sessions get their deposit addresses from this extended public key (…/0/i). Its private key stays with you: ",
      h("code", {}, "paymentsd sweep"), " moves the funds out with it (docs/operations.md)."],
    hint: "Setting a new key affects new sessions only. Each project environment needs a key of its own (sandbox and live too): a key that derives another's addresses is refused.",
  }));
  const kind = select([["", "Native SegWit (BIP84, …1q…)"], ["p2tr", "Taproot (BIP86, …1p…, from an xpub or tpub)"]], bk.addressType === "p2tr" ? "p2tr" : "");
  add(main, depositKey(owner, bk, {
    title: "Bitcoin deposit key", path: "bitcoin-deposit-key", id: "bitcoin-deposit-key", label: "Bitcoin account key", button: "Set Bitcoin deposit key",
    placeholder: state.env === "live" ? "zpub…" : "vpub…", kind, none: "None yet: no Bitcoin payment in this environment until one is set.",
    about: ["Bitcoin deposit addresses derive from this wallet account (…/0/i): give its account key, m/84'/0'/0' on mainnet (zpub…), m/84'/1'/0' on the test networks (vpub…). Its private key stays in your wallet."],
    hint: `The ${state.env} environment takes a ${state.env === "live" ? "mainnet key (zpub…, xpub…)" : "test network's key (vpub…, tpub…)"}. An account key serves one project environment, for Bitcoin and EVM networks alike: one another has set is refused.`,
  }));
  add(main, await recipients(owner));
}

// depositKey is the card of one of the environment's deposit keys (the EVM
// key, the Bitcoin account key): the key itself reveals every address it
// derives, so the API shows it to a signed-in owner only; everyone sees
// its fingerprint and first address, to check it against a wallet.
function depositKey(owner, k, o) {
  const xpub = input({ autocomplete: "off", spellcheck: "false", placeholder: o.placeholder });
  xpub.disabled = !owner;
  return section(`${o.title} (${state.env})`,
    h("p", { class: "muted" }, ...o.about),
    dl([["Current key", !k.fingerprint ? o.none
      : k.xpub ? h("span", { id: o.id }, mono(k.xpub, o.title.toLowerCase())) : "Shown to owners only"],
      ...(k.addressType ? [["Addresses", k.addressType === "p2tr" ? "Taproot (BIP86)" : "Native SegWit (BIP84)"]] : []),
      ...(k.fingerprint ? [["Fingerprint", h("span", { id: `${o.id}-fingerprint` }, mono(k.fingerprint, "fingerprint"))],
        ["First address (…/0/0)", h("span", { id: `${o.id}-first` }, mono(k.firstAddress, "address"))]] : []),
      ["Addresses handed out", String(k.addressesIssued)]]),
    owner ? form({ class: "narrow" }, [field(o.label, xpub, { name: "xpub", hint: o.hint }),
      ...(o.kind ? [field("Kind of address", o.kind, { name: "addressType" })] : []),
      h("button", { type: "submit", class: "primary" }, o.button)], async () => {
      const body = { xpub: xpub.value.trim() };
      if (o.kind?.value) body.addressType = o.kind.value;
      await api.post(`${project()}/${o.path}`, body);
      toast(`${o.title} set for ${state.env}`);
      go(location.pathname, { replace: true });
    }) : ownersOnly());
}

// recipients is the environment's recipient addresses, which plans paid to
// one shared address pay (the second API shape): an owner adds one, its
// wallet signs the challenge (the browser wallet, EIP-1193 personal_sign,
// or any wallet, the signature pasted) and the project owns it.
async function recipients(owner) {
  const list = await api.get(`${project()}/recipients`);
  const card = section(`Recipients (${state.env})`,
    h("p", { class: "muted" }, "A plan paid to a shared recipient address pays only an address this project proved it controls: its wallet signs a challenge naming this project and environment. An address belongs to one project per environment."),
    table([
      { label: "Address", cell: (r) => mono(r.address, "address") },
      { label: "Status", cell: (r) => badge(r.status) },
      { label: "Verified", cell: (r) => r.verifiedAt ? [time(r.verifiedAt), r.method === "eip1271" ? " (contract wallet)" : ""] : "—" },
      { label: "", class: "actions-cell", cell: (r) => owner ? [
        r.status === "pending" ? h("button", { type: "button", class: "small", "data-verify": r.address, onclick: () => verifyRecipient(r) }, "Verify") : null,
        h("button", { type: "button", class: "small danger", "data-remove": r.address, onclick: async () => {
          if (!(await confirm("Remove recipient", `Plans paying ${r.address} open no more sessions until it is verified again.`, "Remove", true))) return;
          try {
            await api.del(`${project()}/recipients/${r.address}`);
            toast("Recipient removed");
          } catch (err) { toast(err.message, "bad"); }
          go(location.pathname, { replace: true });
        } }, "Remove")] : null },
    ], list, { empty: `No ${state.env} recipient yet.`, caption: "Recipients" }));
  if (!owner) return add(card, ownersOnly());
  const address = input({ autocomplete: "off", spellcheck: "false", placeholder: "0x…" });
  return add(card, form({ class: "narrow", id: "add-recipient" }, [field("Address", address, { name: "address", hint: "The address your plans are paid to; you sign a challenge with its wallet next." }),
    h("button", { type: "submit", class: "primary" }, "Add recipient")], async () => {
    const r = await api.post(`${project()}/recipients`, { address: address.value.trim() });
    if (r.status === "verified") {
      toast("This project has verified this recipient already");
      return go(location.pathname, { replace: true });
    }
    await verifyRecipient(r);
  }));
}

// verifyRecipient shows a pending recipient's challenge and takes its
// signature: from the browser wallet (eth_requestAccounts, then
// personal_sign of the challenge's bytes by the address), or pasted.
async function verifyRecipient(r) {
  const done = await dialog("Verify recipient", (close) => {
    const signature = input({ autocomplete: "off", spellcheck: "false", placeholder: "0x…" });
    const walletStatus = h("p", { class: "notice bad", role: "alert", hidden: true });
    const f = form({ id: "verify-recipient" }, [
      h("p", {}, "Sign this message with the wallet of ", h("code", {}, r.address), ` before ${new Date(r.challengeExpiresAt).toLocaleTimeString()}:`),
      h("div", { class: "secret" }, h("code", { id: "recipient-challenge", class: "challenge" }, r.challenge), copyButton(r.challenge, "challenge")),
      window.ethereum ? h("button", { type: "button", class: "primary", id: "sign-with-wallet", onclick: async (e) => {
        walletStatus.hidden = true;
        e.target.disabled = true;
        try {
          signature.value = await walletSignature(r);
          f.requestSubmit();
        } catch (err) {
          walletStatus.textContent = err.message || String(err);
          walletStatus.hidden = false;
        } finally { e.target.disabled = false; }
      } }, "Sign with wallet")
        : h("p", { class: "notice warn", id: "no-wallet" }, "No browser wallet found on this page. Sign the message above with the address's wallet elsewhere (personal_sign, e.g. “cast wallet sign”), and paste the signature below."),
      walletStatus,
      field("Signature", signature, { name: "signature", hint: "0x and hex digits, as personal_sign answers. A contract wallet (EIP-1271) approves the message instead." }),
      h("div", { class: "actions" }, h("button", { type: "submit" }, "Verify"), h("button", { type: "button", onclick: () => close(false) }, "Cancel")),
    ], async () => {
      await api.post(`${project()}/recipients/${r.address}/verify`, { signature: signature.value.trim() });
      close(true);
    });
    return f;
  });
  if (done) toast("Recipient verified: plans may pay it");
  go(location.pathname, { replace: true });
}

// walletSignature asks the browser wallet (EIP-1193) for the address's
// personal_sign signature of the challenge.
async function walletSignature(r) {
  const accounts = await window.ethereum.request({ method: "eth_requestAccounts" });
  if (!(accounts || []).some((a) => String(a).toLowerCase() === r.address.toLowerCase())) {
    throw new Error(`The wallet did not offer ${r.address} (it offered ${(accounts || []).join(", ") || "no account"}): choose that account in the wallet and sign again.`);
  }
  const hex = "0x" + Array.from(new TextEncoder().encode(r.challenge), (b) => b.toString(16).padStart(2, "0")).join("");
  return window.ethereum.request({ method: "personal_sign", params: [hex, r.address] });
}

export async function depositAddresses(main) {
  const params = new URLSearchParams(location.search);
  const page = Number(params.get("page")) || 1;
  const funded = params.get("funded") === "true";
  const res = await api.list(`${project()}/deposit-addresses` + api.query({ page, limit: 50, funded: funded ? "true" : "" }));
  const toggle = h("input", { type: "checkbox", checked: funded });
  toggle.addEventListener("change", () => go(href("deposit-addresses") + api.query({ funded: toggle.checked ? "true" : "" })));
  add(main, h("h1", {}, "Deposit addresses"),
    h("p", { class: "muted" }, "One address per checkout session, derived from the deposit key. ", h("code", {}, "paymentsd sweep"), " collects the funded ones."),
    h("label", { class: "check" }, toggle, "Funded only"),
    table([
      { label: "Index", cell: (a) => String(a.index) },
      { label: "Address", cell: (a) => mono(a.address, "address") },
      { label: "Session", cell: (a) => a.checkoutSessionId ? [h("a", { href: href(`sessions/${a.checkoutSessionId}`) }, h("code", { class: "short" }, a.checkoutSessionId)), " ", a.sessionStatus ? badge(a.sessionStatus) : null] : "—" },
      { label: "Received", cell: (a) => a.received && a.received.length ? a.received.map((r) => h("div", {}, `${r.amountBaseUnits} base units of ${r.assetDefinitionId}`)) : "—" },
      { label: "Created", cell: (a) => time(a.createdAt) },
    ], res.items, { empty: "No deposit address yet.", caption: "Deposit addresses" }),
    pager(res.pagination, (n) => go(href("deposit-addresses") + api.query({ page: n, funded: funded ? "true" : "" }))));
}

export async function auditLog(main) {
  const page = Number(new URLSearchParams(location.search).get("page")) || 1;
  const res = await api.list(`${project()}/audit-log` + api.query({ page, limit: 25 }));
  add(main, h("h1", {}, "Audit log"),
    h("p", { class: "muted" }, "Every management change in this environment: who, from where, what."),
    table([
      { label: "Time", cell: (e) => time(e.occurredAt) },
      { label: "Action", cell: (e) => h("code", {}, e.action) },
      { label: "Target", cell: (e) => `${e.target.type} ${e.target.id}` },
      { label: "By", cell: (e) => [`${titleCase(e.actor.type)} ${e.actor.id}`, e.actor.ip ? h("div", { class: "muted small" }, e.actor.ip) : null] },
    ], res.items, { empty: "Nothing recorded yet.", caption: "Audit log" }),
    pager(res.pagination, (n) => go(href("audit-log") + api.query({ page: n }))));
}


// apps are the project's registered OAuth applications (owners only).
export async function apps(main) {
  const list = await api.get(`${project()}/oauth-clients`);
  const name = input({ maxlength: "100", autocomplete: "off" });
  const uris = h("textarea", { rows: "3", spellcheck: "false", placeholder: "https://app.example/callback" });
  const kind = select([["true", "Confidential: a server that keeps a secret"], ["false", "Public: a native or browser app (PKCE only)"]], "true");
  add(main, h("h1", {}, "OAuth applications"),
    h("p", { class: "muted" }, "Third-party applications (an accounting tool, a shop plugin) that your users can allow to act for them in this project."),
    table([
      { label: "Name", cell: (c) => [c.name, c.revokedAt ? [" ", badge("revoked", "bad")] : null] },
      { label: "Client ID", cell: (c) => h("code", {}, c.id) },
      { label: "Type", cell: (c) => (c.confidential ? "Confidential" : "Public") },
      { label: "Redirect URIs", cell: (c) => h("ul", { class: "plain small" }, c.redirectUris.map((u) => h("li", { class: "wrap" }, u))) },
      { label: "Registered", cell: (c) => time(c.createdAt) },
      { label: "", class: "actions-cell", cell: (c) => c.revokedAt ? null : h("button", { type: "button", class: "small danger", onclick: async () => {
        if (!(await confirm("Revoke application", `${c.name} can no longer be authorized in this project.`, "Revoke", true))) return;
        await api.post(`${project()}/oauth-clients/${c.id}/revoke`);
        toast("Application revoked");
        go(location.pathname, { replace: true });
      } }, "Revoke") },
    ], list, { empty: "No application registered yet.", caption: "OAuth applications" }),
    oauth.grants(`${project()}/oauth-grants`, { showUser: true }),
    section("Register an application", form({ class: "narrow" }, [
      field("Name", name, { name: "name", hint: "Shown to users when they are asked to allow it." }),
      field("Redirect URIs, one per line", uris, { name: "redirectUris", hint: "Matched exactly. https, or for a native app http on 127.0.0.1 or [::1] (any port) or localhost (this port)." }),
      field("Type", kind, { name: "confidential" }),
      h("button", { type: "submit", class: "primary" }, "Register"),
    ], async () => {
      const r = await api.post(`${project()}/oauth-clients`, { name: name.value.trim(),
        redirectUris: uris.value.split("\n").map((u) => u.trim()).filter(Boolean), confidential: kind.value === "true" });
      if (r.clientSecret) {
        await secret("Client secret", r.clientSecret, `The secret of ${r.client.name} (client ID ${r.client.id}). Copy it now: it is shown this once.`);
      }
      toast("Application registered");
      go(location.pathname, { replace: true });
    })));
}
