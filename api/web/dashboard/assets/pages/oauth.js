// The OAuth consent page (/dashboard/authorize?…, where /oauth/authorize
// sends the browser) and the applications a user has authorized.
import * as api from "../api.js";
import { h, add, clear, field, select, form, table, time, confirm, toast, section } from "../ui.js";
import { state } from "../app.js";

function card(main, title, ...children) {
  add(main, h("div", { class: "auth-card consent" }, h("p", { class: "brand" }, "paymentsd"), h("h1", {}, title), children));
}

export async function authorize(main) {
  const query = location.search;
  let req;
  try {
    req = await api.get("/oauth/authorization" + query, { quiet: true });
  } catch (err) {
    card(main, "This application's request cannot be accepted", h("p", { class: "notice bad", role: "alert" }, err.message),
      h("p", { class: "muted" }, "Nothing was shared. Go back to the application and try again, or tell its developer."));
    return;
  }
  const projects = state.me.projects;
  if (!projects.length) {
    card(main, `Authorize ${req.client.name}`, h("p", { class: "notice" }, "You are not a member of any project: there is nothing to authorize."));
    return;
  }
  const project = select(projects.map((p) => [p.id, `${p.name} (${p.role})`]), projects[0].id, { name: "projectId" });
  const env = select([["sandbox", "Sandbox (test data)"], ["live", "Live (real payments)"]], "sandbox", { name: "environment" });
  const back = new URL(req.redirectUri);
  const answer = async (decision) => {
    const body = decision === "allow" ? { decision, projectId: project.value, environment: env.value } : { decision };
    const res = await api.post("/oauth/authorization" + query, body);
    location.assign(res.redirectTo);
  };
  const deny = h("button", { type: "button", class: "wide", id: "deny" }, "Deny");
  const f = form({ "aria-label": "Authorize the application" }, [
    h("p", {}, h("strong", {}, req.client.name), " asks to act for you in one project:"),
    h("ul", { class: "scopes" }, req.scopes.map((s) => h("li", {}, s.description, " ", h("code", { class: "muted" }, s.name)))),
    field("Project", project, { name: "projectId" }),
    field("Environment", env, { name: "environment", hint: "The application sees and changes this environment's records only." }),
    h("p", { class: "muted" }, "It acts with your role in the project, and you can revoke it at any time from your account. You will be sent back to ",
      h("strong", {}, back.host), "."),
    h("button", { type: "submit", class: "primary wide", id: "allow" }, "Allow"),
  ], () => answer("allow"));
  deny.addEventListener("click", async () => {
    deny.disabled = true;
    try { await answer("deny"); } catch (err) { toast(err.message, "bad"); deny.disabled = false; }
  });
  card(main, `Authorize ${req.client.name}`, f, deny);
}

// grants lists authorized applications with a revoke button each: the
// user's own (account page) or a project's (its owners).
export function grants(path, { showUser }) {
  const box = h("div", {});
  const load = async () => {
    const list = await api.get(path);
    clear(box, table([
      { label: "Application", cell: (g) => g.clientName },
      showUser ? { label: "User", cell: (g) => g.userEmail }
        : { label: "Project", cell: (g) => (state.me.projects.find((p) => p.id === g.projectId) || {}).name || g.projectId },
      { label: "Environment", cell: (g) => g.environment },
      { label: "Scopes", cell: (g) => h("ul", { class: "plain small" }, g.scopes.map((sc) => h("li", {}, sc))) },
      { label: "Authorized", cell: (g) => time(g.createdAt) },
      { label: "Last used", cell: (g) => (g.lastUsedAt ? time(g.lastUsedAt) : "Never") },
      { label: "", class: "actions-cell", cell: (g) => h("button", { type: "button", class: "danger small", onclick: async () => {
        if (!(await confirm("Revoke authorization", `${g.clientName} loses access at once: its tokens stop working.`, "Revoke", true))) return;
        await api.post(showUser ? `/projects/${g.projectId}/oauth-grants/${g.id}/revoke` : `/auth/oauth-grants/${g.id}/revoke`);
        toast("Authorization revoked");
        load();
      } }, "Revoke") },
    ], list, { empty: "No application is authorized.", caption: "Authorized applications" }));
  };
  load().catch((err) => clear(box, h("p", { class: "notice bad" }, err.message)));
  return section("Authorized applications", box);
}
