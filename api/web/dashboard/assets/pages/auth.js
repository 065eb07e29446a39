// Signing in, signing up and accepting an invitation.
import * as api from "../api.js";
import { h, add, field, input, form, toast } from "../ui.js";
import * as passkeys from "../webauthn.js";
import { go, reloadMe } from "../app.js";

function after(next) {
  // Only a path of this dashboard: never an address elsewhere.
  return next && /^\/dashboard\/[^/]/.test(next) && !next.startsWith("//") ? next : "/dashboard/";
}

function card(main, title, ...children) {
  add(main, h("div", { class: "auth-card" }, h("p", { class: "brand" }, "paymentsd"), h("h1", {}, title), children));
}

export async function login(main, { next }) {
  const email = input({ type: "email", name: "email", autocomplete: "username webauthn", required: true });
  const password = input({ type: "password", name: "password", autocomplete: "current-password", required: true });
  const f = form({ "aria-label": "Sign in with email and password" }, [
    field("Email", email, { name: "email" }),
    field("Password", password, { name: "password" }),
    h("button", { type: "submit", class: "primary wide" }, "Sign in"),
  ], async () => {
    await api.post("/auth/login", { email: email.value.trim(), password: password.value }, { quiet: true });
    await reloadMe();
    go(after(next), { replace: true });
  });
  const pk = h("button", { type: "button", class: "wide", id: "passkey-signin" }, "Sign in with a passkey");
  const pkStatus = h("p", { class: "form-error", role: "alert", hidden: true });
  pk.addEventListener("click", async () => {
    pk.disabled = true;
    pkStatus.hidden = true;
    try {
      await passkeys.assert("/auth/passkeys/login");
      await reloadMe();
      go(after(next), { replace: true });
    } catch (err) {
      pkStatus.textContent = err.name === "NotAllowedError" ? "The passkey prompt was closed or timed out." : err.message;
      pkStatus.hidden = false;
    } finally {
      pk.disabled = false;
    }
  });
  card(main, "Sign in", f,
    passkeys.supported() ? [h("p", { class: "or" }, "or"), pk, pkStatus] : null,
    h("p", { class: "muted center" }, "No account yet? ", h("a", { href: "/dashboard/signup" + (next ? "?next=" + encodeURIComponent(next) : "") }, "Create one")));
}

export async function signup(main, { next }) {
  const email = input({ type: "email", name: "email", autocomplete: "username", required: true });
  const password = input({ type: "password", name: "password", autocomplete: "new-password", required: true, minlength: "12" });
  const f = form({ "aria-label": "Create an account" }, [
    field("Email", email, { name: "email" }),
    field("Password", password, { name: "password", hint: "At least 12 characters; a passphrase of a few words is best." }),
    h("button", { type: "submit", class: "primary wide" }, "Create account"),
  ], async () => {
    await api.post("/auth/signup", { email: email.value.trim(), password: password.value }, { quiet: true });
    await reloadMe();
    toast("Welcome! Add a passkey from your account page to sign in without a password.");
    go(after(next), { replace: true });
  });
  card(main, "Create an account", f,
    h("p", { class: "muted center" }, "Already have one? ", h("a", { href: "/dashboard/login" }, "Sign in")));
}

// invitation accepts an invitation whose token is in the address's
// fragment (#token=…), which browsers never send to a server.
export async function invitation(main) {
  const token = new URLSearchParams(location.hash.slice(1)).get("token") || "";
  const tokenInput = input({ name: "token", value: token, autocomplete: "off", required: true });
  add(main, h("h1", {}, "Join a project"),
    h("p", {}, "You were invited to a project. Accept to see it in your dashboard, with the role the invitation gives."),
    form({ class: "narrow" }, [
      field("Invitation code", tokenInput, { name: "token", hint: "Filled in from the link you were sent." }),
      h("button", { type: "submit", class: "primary" }, "Accept invitation"),
    ], async () => {
      const res = await api.post("/invitations/accept", { token: tokenInput.value.trim() });
      await reloadMe();
      toast(`You joined the project as ${res.role}.`);
      go(`/dashboard/projects/${res.projectId}/sandbox/`, { replace: true });
    }));
}
