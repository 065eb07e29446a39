// Passkey ceremonies: the API's options in, the browser's credential out,
// in the JSON forms of WebAuthn Level 3 (with a fallback for browsers
// that lack parse…FromJSON and toJSON).
import * as api from "./api.js";

const b64 = (s) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(s.length / 4) * 4, "=")), (c) => c.charCodeAt(0));
const str = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

export const supported = () => !!(window.PublicKeyCredential && navigator.credentials);

function creationOptions(o) {
  if (PublicKeyCredential.parseCreationOptionsFromJSON) return PublicKeyCredential.parseCreationOptionsFromJSON(o);
  return Object.assign({}, o, {
    challenge: b64(o.challenge), user: Object.assign({}, o.user, { id: b64(o.user.id) }),
    excludeCredentials: (o.excludeCredentials || []).map((c) => Object.assign({}, c, { id: b64(c.id) })),
  });
}

function requestOptions(o) {
  if (PublicKeyCredential.parseRequestOptionsFromJSON) return PublicKeyCredential.parseRequestOptionsFromJSON(o);
  return Object.assign({}, o, {
    challenge: b64(o.challenge), allowCredentials: (o.allowCredentials || []).map((c) => Object.assign({}, c, { id: b64(c.id) })),
  });
}

function toJSON(cred) {
  if (cred.toJSON) return cred.toJSON();
  const r = cred.response;
  const response = { clientDataJSON: str(r.clientDataJSON) };
  if (r.attestationObject) {
    response.attestationObject = str(r.attestationObject);
    response.transports = r.getTransports ? r.getTransports() : [];
  } else {
    Object.assign(response, { authenticatorData: str(r.authenticatorData), signature: str(r.signature),
      userHandle: r.userHandle ? str(r.userHandle) : null });
  }
  return { id: cred.id, rawId: str(cred.rawId), type: cred.type, response,
    clientExtensionResults: cred.getClientExtensionResults(), authenticatorAttachment: cred.authenticatorAttachment };
}

// register adds a passkey to the signed-in account.
export async function register(name) {
  const opts = await api.post("/auth/passkeys/registration-options");
  const cred = await navigator.credentials.create({ publicKey: creationOptions(opts.publicKey) });
  return api.post("/auth/passkeys", { challengeId: opts.challengeId, name, credential: toJSON(cred) });
}

// assert answers a sign-in challenge; finish posts it (with extra fields)
// to the route that consumes it.
export async function assert(finish, extra = {}) {
  const opts = await api.post("/auth/passkeys/login-options", {}, { quiet: true });
  const cred = await navigator.credentials.get({ publicKey: requestOptions(opts.publicKey) });
  return api.post(finish, Object.assign({ challengeId: opts.challengeId, credential: toJSON(cred) }, extra), { quiet: true });
}
