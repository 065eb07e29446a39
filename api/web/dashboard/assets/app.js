// The dashboard: routing, the signed-in user's projects, the layout, and
// the environment switch. Pages live in pages/*.js.
import * as api from "./api.js";
import { h, add, clear, toast, dialog, form, field, input } from "./ui.js";
import * as passkeys from "./webauthn.js";
import * as auth from "./pages/auth.js";
import * as account from "./pages/account.js";
import * as overview from "./pages/overview.js";
import * as plans from "./pages/plans.js";
import * as payments from "./pages/payments.js";
import * as payouts from "./pages/payouts.js";
import * as webhooks from "./pages/webhooks.js";
import * as project from "./pages/project.js";
import * as oauth from "./pages/oauth.js";

const root = document.getElementById("app");
const BASE = "/dashboard";

// state is what every page reads: the user, their projects, the project
// and environment on screen.
export const state = { me: null, project: null, env: "sandbox", role: "", timers: [] };

export function go(path, { replace = false } = {}) {
  navigated = true;
  const url = path.startsWith("/") ? path : `${BASE}/${path}`;
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  render();
}

// href is a project page's address in the current environment.
export function href(page = "") {
  return `${BASE}/projects/${state.project.id}/${state.env}/${page}`;
}

// every runs fn now and then every ms while the page is shown and the tab
// visible; it stops when the page changes.
export function every(ms, fn) {
  const gen = generation;
  const t = setInterval(() => {
    if (gen !== generation) clearInterval(t); // a page drawn after this one
    else if (document.visibilityState === "visible") fn();
  }, ms);
  state.timers.push(t);
}

// generation counts the pages drawn: a timer of an earlier page stops.
let generation = 0;

export function canWrite() { return state.role === "owner" || state.role === "developer"; }
export function isOwner() { return state.role === "owner"; }

// Sudo mode: a sensitive action after an old sign-in asks for the
// password (or a passkey) in a dialog, then the action is retried.
api.onReauthenticationRequired(() => dialog("Confirm it is you", (close) => {
  const password = input({ type: "password", autocomplete: "current-password", id: "reauth-password", "data-field": "password" });
  const usePasskey = passkeys.supported() ? h("button", { type: "button", onclick: async () => {
    try {
      await passkeys.assert("/auth/reauthenticate");
      close(true);
    } catch (err) { toast(err.message || "The passkey was not accepted", "bad"); }
  } }, "Use a passkey") : null;
  return h("div", {},
    h("p", {}, "This action changes who can reach your account or your project, where its events go or how its payments are settled. Confirm your password (or use a passkey) to go on; you will not be asked again for a few minutes."),
    form({}, [field("Password", password, { name: "password" }),
      h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Confirm"), usePasskey,
        h("button", { type: "button", onclick: () => close(false) }, "Cancel"))], async () => {
      await api.post("/auth/reauthenticate", { password: password.value });
      close(true);
    }));
}).then((ok) => ok === true));

api.onSignedOut(() => {
  state.me = null;
  if (!location.pathname.startsWith(BASE + "/login")) {
    go(`${BASE}/login?next=${encodeURIComponent(location.pathname + location.search + location.hash)}`, { replace: true });
  }
});

const projectPages = {
  "": overview.page,
  plans: plans.list,
  "plans/new": plans.create,
  "plans/:id": plans.detail,
  sessions: payments.sessions,
  "sessions/:id": payments.session,
  transactions: payments.transactions,
  "transactions/:id": payments.transaction,
  payouts: payouts.list,
  "payouts/:id": payouts.detail,
  webhooks: webhooks.list,
  "webhooks/:id": webhooks.detail,
  events: webhooks.events,
  "events/:id": webhooks.event,
  "api-keys": project.apiKeys,
  members: project.members,
  settings: project.settings,
  "deposit-addresses": project.depositAddresses,
  "audit-log": project.auditLog,
  apps: project.apps,
};

const nav = [
  ["", "Overview"], ["plans", "Payment plans"], ["sessions", "Checkout sessions"], ["transactions", "Transactions"], ["payouts", "Payouts"],
  ["webhooks", "Webhooks"], ["events", "Events"], ["deposit-addresses", "Deposit addresses"], ["api-keys", "API keys"],
  ["members", "Members"], ["apps", "OAuth apps"], ["settings", "Settings"], ["audit-log", "Audit log"],
];

function match(rest) {
  const parts = rest.split("/").filter(Boolean);
  for (const [pattern, fn] of Object.entries(projectPages)) {
    const pp = pattern.split("/").filter(Boolean);
    if (pp.length !== parts.length) continue;
    const params = {};
    if (pp.every((p, i) => (p.startsWith(":") ? (params[p.slice(1)] = decodeURIComponent(parts[i])) : p === parts[i]))) {
      return { fn, params, section: pp[0] || "" };
    }
  }
  return null;
}

async function loadMe() {
  if (!state.me) state.me = await api.get("/auth/me", { quiet: true });
  return state.me;
}

export async function reloadMe() {
  state.me = null;
  return loadMe();
}

async function render() {
  const mine = ++generation;
  state.timers.forEach(clearInterval);
  state.timers = [];
  const path = location.pathname.replace(/\/+$/, "");
  const rest = path.slice(BASE.length).replace(/^\//, "");
  const params = new URLSearchParams(location.search);
  root.setAttribute("aria-busy", "true");
  try {
    if (rest === "login") return await show(auth.login, { next: params.get("next") });
    if (rest === "signup") return await show(auth.signup, { next: params.get("next") });
    let me;
    try {
      me = await loadMe();
    } catch (err) {
      if (err.status === 401) return go(`${BASE}/login?next=${encodeURIComponent(location.pathname + location.search + location.hash)}`, { replace: true });
      throw err;
    }
    if (rest === "authorize") return await show(oauth.authorize, {});
    if (rest === "invitation") return await layout(null, auth.invitation, {});
    if (rest === "account") return await layout(null, account.page, {});
    if (rest === "new-project") return await layout(null, project.create, {});
    const m = /^projects\/([^/]+)\/(sandbox|live)(?:\/(.*))?$/.exec(rest);
    if (!m) {
      if (!me.projects.length) return go(`${BASE}/new-project`, { replace: true });
      const last = localStorage.getItem("paymentsd.project");
      const p = me.projects.find((x) => x.id === last) || me.projects[0];
      return go(`${BASE}/projects/${p.id}/${localStorage.getItem("paymentsd.env") === "live" ? "live" : "sandbox"}/`, { replace: true });
    }
    const membership = me.projects.find((x) => x.id === m[1]);
    if (!membership) return await layout(null, notFound("You are not a member of this project, or it does not exist."), {});
    state.project = membership;
    state.role = membership.role;
    state.env = m[2];
    api.setEnvironment(state.env);
    localStorage.setItem("paymentsd.project", membership.id);
    localStorage.setItem("paymentsd.env", state.env);
    const page = match(m[3] || "");
    if (!page) return await layout(membership, notFound("No such page."), {});
    return await layout(membership, page.fn, page.params, page.section);
  } catch (err) {
    clear(root, h("main", { id: "main", class: "centered-msg" }, h("h1", {}, "Something went wrong"), h("p", {}, err.message)));
  } finally {
    // Busy until the page's last read is drawn (each page awaited above),
    // unless a later render (a redirect, a click) has the page now.
    if (mine === generation) root.setAttribute("aria-busy", "false");
  }
}

function notFound(text) {
  return (main) => add(main, h("h1", {}, "Not found"), h("p", {}, text));
}

async function show(pageFn, params) {
  const main = h("main", { id: "main", class: "auth", tabindex: "-1" });
  clear(root, main);
  await pageFn(main, params);
  focusHeading(main);
}

// focusHeading moves the focus to a page's heading after a navigation
// inside the dashboard (a screen reader announces the new page); on the
// first page the browser's own order starts, at the skip link.
let navigated = false;
function focusHeading(main) {
  const h1 = main.querySelector("h1");
  if (h1 && navigated) {
    h1.tabIndex = -1;
    h1.focus({ preventScroll: true });
  }
  document.title = (h1 ? h1.textContent + " · " : "") + "paymentsd";
}

// layout draws the header (project, environment, account) and the
// navigation around a page.
async function layout(membership, pageFn, params, section) {
  const main = h("main", { id: "main", class: "page", tabindex: "-1" });
  const live = state.env === "live" && membership;
  document.body.classList.toggle("live", !!live);
  const header = h("header", { class: "top" },
    h("a", { class: "brand", href: `${BASE}/` }, "paymentsd"),
    membership ? projectSwitch(membership) : null,
    membership ? envSwitch() : null,
    h("div", { class: "user" },
      h("a", { href: `${BASE}/account` }, state.me.user.email),
      h("button", { type: "button", class: "link", onclick: signOut }, "Sign out")));
  const banner = live ? h("div", { class: "live-banner", role: "note" }, "Live: real payments and real money") : null;
  const sidebar = membership ? h("nav", { class: "side", "aria-label": "Project" },
    h("ul", {}, nav.map(([p, label]) => h("li", {}, h("a", { href: href(p), "aria-current": section === p ? "page" : null }, label))))) : null;
  clear(root, header, banner, h("div", { class: "body" + (sidebar ? "" : " wide") }, sidebar, main));
  try {
    await pageFn(main, params);
  } catch (err) {
    if (err.status === 401) return;
    if (err.status === 403) {
      clear(main, h("h1", {}, "Not for your role"), h("p", { class: "notice" },
        `Your role in this project (${state.role}) does not show this page: ask one of its owners.`));
    } else {
      clear(main, h("h1", {}, err.status === 404 ? "Not found" : "Something went wrong"), h("p", { class: "notice bad" }, err.message));
    }
  }
  focusHeading(main);
}

function projectSwitch(membership) {
  const sel = h("select", { "aria-label": "Project", class: "project-switch" },
    state.me.projects.map((p) => h("option", { value: p.id, selected: p.id === membership.id }, p.name)),
    h("option", { value: "+" }, "New project…"));
  sel.addEventListener("change", () => {
    if (sel.value === "+") return go(`${BASE}/new-project`);
    go(`${BASE}/projects/${sel.value}/${state.env}/`);
  });
  return sel;
}

function envSwitch() {
  const group = h("div", { class: "env-switch", role: "group", "aria-label": "Environment" });
  for (const env of ["sandbox", "live"]) {
    group.append(h("a", {
      href: `${BASE}/projects/${state.project.id}/${env}/`, class: env, "aria-current": state.env === env ? "true" : null,
    }, env === "live" ? "Live" : "Sandbox"));
  }
  return group;
}

async function signOut() {
  try {
    await api.post("/auth/logout", {}, { quiet: true });
  } catch { /* signed out either way */ }
  state.me = null;
  toast("Signed out");
  go(`${BASE}/login`);
}

// Links inside the dashboard navigate without a reload.
document.addEventListener("click", (e) => {
  const a = e.target.closest("a");
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  if (a.target || a.hasAttribute("download")) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith(BASE + "/") || url.pathname.startsWith(BASE + "/assets/")) return;
  e.preventDefault();
  go(url.pathname + url.search + url.hash);
});
window.addEventListener("popstate", () => { navigated = true; render(); });
render();
