// The dashboard's only way to the server: the public /api/v1 routes, on
// the session cookie, in the environment the page shows.

export class APIError extends Error {
  constructor(status, envelope) {
    super((envelope && envelope.message) || `HTTP ${status}`);
    this.status = status;
    this.code = envelope && envelope.error ? envelope.error.code : "";
    this.details = (envelope && envelope.error && envelope.error.details) || [];
  }
}

let environment = "sandbox";
let signedOut = () => {};
// reauthenticate asks the user to confirm who they are (sudo mode); it
// resolves true once POST /auth/reauthenticate succeeded, false if they
// gave up.
let reauthenticate = async () => false;

export function setEnvironment(env) { environment = env; }
export function onSignedOut(fn) { signedOut = fn; }
export function onReauthenticationRequired(fn) { reauthenticate = fn; }

function headers(extra) {
  return Object.assign({ Accept: "application/json", "Paymentsd-Environment": environment }, extra);
}

// request calls a route; a body is sent as JSON, or as it is with
// opts.contentType (a CSV file).
async function request(method, path, body, opts = {}) {
  let res;
  try {
    res = await fetch("/api/v1" + path, {
      method, credentials: "same-origin",
      headers: headers(body === undefined ? {} : { "Content-Type": opts.contentType || "application/json" }),
      body: body === undefined ? undefined : opts.contentType ? body : JSON.stringify(body),
    });
  } catch {
    throw new APIError(0, { message: "The server could not be reached; check the connection and try again." });
  }
  let env;
  try {
    env = await res.json();
  } catch {
    throw new APIError(res.status, { message: `Unexpected answer from the server (HTTP ${res.status}).` });
  }
  if (!env.success) {
    if (res.status === 401 && !opts.quiet) signedOut();
    // A sensitive action after an old sign-in: confirm, then retry once.
    if (res.status === 403 && env.error && env.error.code === "REAUTHENTICATION_REQUIRED" && !opts.retried && await reauthenticate()) {
      return request(method, path, body, Object.assign({}, opts, { retried: true }));
    }
    throw new APIError(res.status, env);
  }
  return env;
}

// get returns a route's data.
export async function get(path, opts) { return (await request("GET", path, undefined, opts)).data; }

// list returns a page: its items and pagination.
export async function list(path, opts) {
  const env = await request("GET", path, undefined, opts);
  return { items: env.data, pagination: env.meta.pagination, nextCursor: env.meta.nextCursor };
}

export async function post(path, body, opts) { return (await request("POST", path, body === undefined ? {} : body, opts)).data; }
// send posts and returns the whole envelope, for its message.
export async function send(path, body) { return request("POST", path, body === undefined ? {} : body); }
// upload posts a file's text as it is (a payout batch's CSV, say) and
// returns the route's data.
export async function upload(path, text, contentType) { return (await request("POST", path, text, { contentType })).data; }
export async function patch(path, body) { return (await request("PATCH", path, body)).data; }
export async function del(path) { return (await request("DELETE", path)).data; }

// download saves a list route's CSV export (Accept: text/csv) as a file.
export async function download(path, fallbackName) {
  const res = await fetch("/api/v1" + path, { credentials: "same-origin", headers: headers({ Accept: "text/csv" }) });
  if (!res.ok) {
    let env = null;
    try { env = await res.json(); } catch { /* not an envelope */ }
    throw new APIError(res.status, env);
  }
  const name = (/filename="([^"]+)"/.exec(res.headers.get("Content-Disposition") || "") || [])[1] || fallbackName;
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
  return name;
}

// query builds a query string from the set values of an object.
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "") q.set(k, v);
  }
  const s = q.toString();
  return s ? "?" + s : "";
}
