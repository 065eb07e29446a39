// The signed-in user's account: password, passkeys, sessions and authorized applications.
import * as api from "../api.js";
import { h, add, clear, field, input, form, toast, table, time, confirm, section, dl, dialog } from "../ui.js";
import * as passkeys from "../webauthn.js";
import { state, go, reloadMe } from "../app.js";
import * as oauth from "./oauth.js";

export async function page(main) {
  const me = state.me;
  add(main, h("h1", {}, "Your account"),
    section("Profile", dl([["Email", me.user.email], ["Member since", time(me.user.createdAt)],
      ["Projects", me.projects.length ? me.projects.map((p) => h("a", { class: "chip", href: `/dashboard/projects/${p.id}/sandbox/` }, `${p.name} (${p.role})`)) : "None yet"]])));
  const pw = h("section", { class: "card" });
  const pk = h("section", { class: "card" });
  const ss = h("section", { class: "card" });
  add(main, pw, pk, ss, oauth.grants("/auth/oauth-grants", { showUser: false }));
  passwordCard(pw);
  await Promise.all([passkeyCard(pk), sessionsCard(ss)]);
}

function passwordCard(el) {
  const has = state.me.user.hasPassword;
  const current = input({ type: "password", autocomplete: "current-password" });
  const next = input({ type: "password", autocomplete: "new-password", minlength: "12" });
  const usePasskey = h("button", { type: "submit", name: "passkey", value: "1" }, has ? "Confirm with a passkey instead" : "Confirm with a passkey");
  let withPasskey = false;
  usePasskey.addEventListener("click", () => { withPasskey = true; });
  const f = form({ class: "narrow" }, [
    has ? field("Current password", current, { name: "currentPassword" }) : h("p", { class: "muted" }, "This account signs in with passkeys only; setting a password needs a passkey's confirmation."),
    field(has ? "New password" : "Password", next, { name: "newPassword", hint: "At least 12 characters. Every other session is signed out, and every application you authorized is disconnected." }),
    h("div", { class: "actions" }, has ? h("button", { type: "submit", class: "primary" }, "Change password") : null, passkeys.supported() ? usePasskey : null),
  ], async () => {
    const viaPasskey = withPasskey || !has;
    withPasskey = false;
    if (viaPasskey) await passkeys.assert("/auth/password", { newPassword: next.value });
    else await api.post("/auth/password", { currentPassword: current.value, newPassword: next.value });
    await reloadMe();
    toast("Password changed; your other sessions are signed out and your authorized applications disconnected.");
    go(location.pathname, { replace: true });
  });
  clear(el, h("h2", {}, has ? "Password" : "Set a password"), f);
}

async function passkeyCard(el) {
  const list = await api.get("/auth/passkeys");
  const add = h("button", { type: "button", class: "primary", id: "add-passkey" }, "Add a passkey");
  add.addEventListener("click", async () => {
    const name = await dialog("Name this passkey", (close) => {
      const n = input({ value: "My device", maxlength: "100" });
      return form({}, [field("Name", n, { hint: "So that you know it again: “Work laptop”, “Phone”." }),
        h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Continue"), h("button", { type: "button", onclick: () => close() }, "Cancel"))],
      async () => close(n.value.trim() || "Passkey"));
    });
    if (!name) return;
    try {
      await passkeys.register(name);
      toast("Passkey added");
    } catch (err) {
      toast(err.name === "NotAllowedError" ? "The passkey prompt was closed or timed out." : err.message, "bad");
    }
    passkeyCard(el);
  });
  clear(el, h("h2", {}, "Passkeys"),
    h("p", { class: "muted" }, "Sign in with your device's screen lock or a security key instead of a password."),
    table([
      { label: "Name", cell: (p) => p.name },
      { label: "Added", cell: (p) => time(p.createdAt) },
      { label: "Last used", cell: (p) => time(p.lastUsedAt) },
      { label: "", class: "actions-cell", cell: (p) => [
        h("button", { type: "button", class: "small", onclick: async () => {
          const name = await dialog("Rename passkey", (close) => {
            const n = input({ value: p.name, maxlength: "100" });
            return form({}, [field("Name", n), h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Save"), h("button", { type: "button", onclick: () => close() }, "Cancel"))],
              async () => close(n.value.trim()));
          });
          if (name === undefined) return;
          await api.patch(`/auth/passkeys/${p.id}`, { name });
          passkeyCard(el);
        } }, "Rename"),
        h("button", { type: "button", class: "small danger", onclick: async () => {
          if (!(await confirm("Delete passkey", `“${p.name}” will no longer sign you in.`, "Delete", true))) return;
          try {
            await api.del(`/auth/passkeys/${p.id}`);
            toast("Passkey deleted");
          } catch (err) { toast(err.message, "bad"); }
          passkeyCard(el);
        } }, "Delete")] },
    ], list, { empty: "No passkey yet.", caption: "Passkeys" }),
    passkeys.supported() ? add : h("p", { class: "muted" }, "This browser does not support passkeys."));
}

async function sessionsCard(el) {
  const list = await api.get("/auth/sessions");
  clear(el, h("h2", {}, "Signed-in sessions"),
    table([
      { label: "Device", cell: (s) => [s.userAgent || "Unknown", " ", s.current ? h("span", { class: "badge info" }, "This session") : null] },
      { label: "IP", cell: (s) => s.ip || "—" },
      { label: "Last seen", cell: (s) => time(s.lastSeenAt) },
      { label: "Expires", cell: (s) => time(s.expiresAt) },
      { label: "", class: "actions-cell", cell: (s) => s.current ? null : h("button", { type: "button", class: "small danger", onclick: async () => {
        await api.del(`/auth/sessions/${s.id}`);
        toast("Session signed out");
        sessionsCard(el);
      } }, "Sign out") },
    ], list, { caption: "Sessions" }),
    list.length > 1 ? h("button", { type: "button", onclick: async () => {
      const r = await api.post("/auth/sessions/revoke-others");
      toast(`${r.revoked} other session(s) signed out, ${r.oauthGrantsRevoked} authorized application(s) disconnected`);
      go(location.pathname, { replace: true }); // the authorized applications' list too
    } }, "Sign out every other session") : null,
    list.length > 1 ? h("p", { class: "muted" }, "Signing out every other session also disconnects every application you authorized.") : null);
}
