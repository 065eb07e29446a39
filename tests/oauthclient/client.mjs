// A strict third-party OAuth 2.1 client (oauth4webapi, by panva: it
// checks every response against the RFCs) run against the engine's
// authorization server by tests/e2e/oauth_client_test.go. It prints one
// JSON object: each step's result, or what the library threw; the Go test
// asserts on it.
//
// The server is served on OAUTH_BASE (plain HTTP on loopback) under the
// issuer OAUTH_ISSUER (its public https URL): every request the library
// makes to the issuer goes to OAUTH_BASE, as it would through the TLS
// proxy in front of a deployment. The user's consent is given through the
// consent page's API with their session cookie (SESSION_COOKIE), as the
// page does.
import * as oauth from 'oauth4webapi'

const env = (name) => {
  const v = process.env[name]
  if (!v) throw new Error(`${name} is not set`)
  return v
}
const base = env('OAUTH_BASE')
const issuer = new URL(env('OAUTH_ISSUER'))
const projectId = env('PROJECT_ID')
const cookie = env('SESSION_COOKIE')
const redirectUri = env('REDIRECT_URI')
const publicClient = { client_id: env('PUBLIC_CLIENT_ID') }
const confidentialClient = { client_id: env('CONFIDENTIAL_CLIENT_ID') }
const confidentialSecret = env('CONFIDENTIAL_CLIENT_SECRET')

const toServer = (url) => String(url).replace(issuer.origin, base)
const opts = { [oauth.customFetch]: (url, init) => fetch(toServer(url), init) }

const out = {}

// step runs fn and records what it returned, or what it threw.
async function step(name, fn) {
  try {
    out[name] = { ok: true, ...(await fn()) }
  } catch (err) {
    out[name] = { ok: false, thrown: await describe(err) }
  }
}

async function describe(err) {
  const d = { name: err?.name, code: err?.code, message: err?.message }
  if (err instanceof oauth.WWWAuthenticateChallengeError) {
    d.status = err.status
    d.challenges = err.cause
    try {
      const body = await err.response.json()
      if (typeof body.error === 'string') d.error = body.error // an OAuth error, not the API's envelope
    } catch {}
  } else if (err instanceof oauth.ResponseBodyError) {
    d.status = err.status
    d.error = err.error
    d.error_description = err.error_description
  } else if (err instanceof oauth.AuthorizationResponseError) {
    d.error = err.error
    d.error_description = err.error_description
  }
  return d
}

// authorizationUrl is where the application sends the browser: the code
// flow with PKCE (S256), with a state only when given one.
async function authorizationUrl(as, client, scope, verifier, state) {
  const u = new URL(as.authorization_endpoint)
  u.searchParams.set('client_id', client.client_id)
  u.searchParams.set('redirect_uri', redirectUri)
  u.searchParams.set('response_type', 'code')
  u.searchParams.set('scope', scope)
  u.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier))
  u.searchParams.set('code_challenge_method', 'S256')
  if (state) u.searchParams.set('state', state)
  return u
}

// consent is the user's browser: /oauth/authorize sends it to the consent
// page, which answers through its API; the answer is where the browser
// goes back to the application.
async function consent(authUrl, decision) {
  const res = await fetch(toServer(authUrl), { redirect: 'manual' })
  const location = res.headers.get('location') ?? ''
  if (res.status !== 302 || !location.startsWith('/dashboard/authorize?')) {
    throw new Error(`/oauth/authorize answered ${res.status} to ${location}; want the consent page`)
  }
  const body = decision === 'allow' ? { decision, projectId, environment: 'sandbox' } : { decision }
  const answer = await fetch(`${base}/api/v1/oauth/authorization?${authUrl.searchParams}`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const json = await answer.json()
  if (answer.status !== 200) throw new Error(`consent: ${answer.status} ${JSON.stringify(json)}`)
  return new URL(json.data.redirectTo)
}

async function apiCall(accessToken, path) {
  const res = await oauth.protectedResourceRequest(accessToken, 'GET', new URL(path, issuer), undefined, undefined, opts)
  return { status: res.status }
}

const epoch = () => Math.floor(Date.now() / 1000)

let as
await step('discovery', async () => {
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...opts, algorithm: 'oauth2' }))
  return { issuer: as.issuer, issParameterSupported: as.authorization_response_iss_parameter_supported }
})
if (!as) {
  console.log(JSON.stringify(out))
  process.exit(0)
}
const plans = `/api/v1/projects/${projectId}/payment-plans`

// The public client: PKCE without state.
let pub
await step('publicAuthorization', async () => {
  const verifier = oauth.generateRandomCodeVerifier()
  const back = await consent(await authorizationUrl(as, publicClient, 'plans:read project:read', verifier), 'allow')
  const params = oauth.validateAuthResponse(as, publicClient, back, oauth.expectNoState)
  const res = await oauth.authorizationCodeGrantRequest(as, publicClient, oauth.None(), params, redirectUri, verifier, opts)
  pub = await oauth.processAuthorizationCodeResponse(as, publicClient, res)
  return {
    redirectHost: back.host, iss: back.searchParams.get('iss'), stateSent: back.searchParams.has('state'),
    tokenType: pub.token_type, expiresIn: pub.expires_in, scope: pub.scope,
    accessToken: pub.access_token.slice(0, 7), refreshToken: pub.refresh_token.slice(0, 7),
  }
})
await step('publicApiCall', () => apiCall(pub.access_token, plans))
await step('insufficientScope', () => apiCall(pub.access_token, `/api/v1/projects/${projectId}/webhooks`))
await step('missingToken', async () => {
  const res = await fetch(toServer(new URL(plans, issuer)))
  return { status: res.status, challenge: res.headers.get('www-authenticate') }
})
let refreshed
await step('publicRefresh', async () => {
  const res = await oauth.refreshTokenGrantRequest(as, publicClient, oauth.None(), pub.refresh_token, opts)
  refreshed = await oauth.processRefreshTokenResponse(as, publicClient, res)
  return { rotated: refreshed.refresh_token !== pub.refresh_token && refreshed.access_token !== pub.access_token }
})
await step('retiredAccessToken', () => apiCall(pub.access_token, plans))
await step('refreshedApiCall', () => apiCall(refreshed.access_token, plans))

// A state that is sent comes back; the errors a strict client reads.
await step('deniedWithoutState', async () => {
  const back = await consent(await authorizationUrl(as, publicClient, 'plans:read', oauth.generateRandomCodeVerifier()), 'deny')
  oauth.validateAuthResponse(as, publicClient, back, oauth.expectNoState)
  return {}
})
await step('errorWithoutState', async () => {
  const u = await authorizationUrl(as, publicClient, 'plans:read admin', oauth.generateRandomCodeVerifier())
  const res = await fetch(toServer(u), { redirect: 'manual' })
  if (res.status !== 303) throw new Error(`/oauth/authorize answered ${res.status}; want 303 to the application`)
  oauth.validateAuthResponse(as, publicClient, new URL(res.headers.get('location')), oauth.expectNoState)
  return {}
})

// The confidential client: state, HTTP Basic, introspection.
let conf
const basic = oauth.ClientSecretBasic(confidentialSecret)
await step('confidentialAuthorization', async () => {
  const verifier = oauth.generateRandomCodeVerifier()
  const state = oauth.generateRandomState()
  const back = await consent(await authorizationUrl(as, confidentialClient, 'plans:read', verifier, state), 'allow')
  const params = oauth.validateAuthResponse(as, confidentialClient, back, state)
  const res = await oauth.authorizationCodeGrantRequest(as, confidentialClient, basic, params, redirectUri, verifier, opts)
  conf = await oauth.processAuthorizationCodeResponse(as, confidentialClient, res)
  return { stateReturned: back.searchParams.get('state') === state }
})
const introspect = async (token, auth = basic) => {
  const res = await oauth.introspectionRequest(as, confidentialClient, auth, token, opts)
  const json = await oauth.processIntrospectionResponse(as, confidentialClient, res)
  return { active: json.active, exp: json.exp, expiresIn: json.exp === undefined ? undefined : json.exp - epoch(), clientId: json.client_id }
}
await step('introspectAccess', () => introspect(conf.access_token))
await step('introspectRefresh', () => introspect(conf.refresh_token))
await step('introspectOthersToken', () => introspect(refreshed.access_token))
await step('introspectWrongSecret', () => introspect(conf.access_token, oauth.ClientSecretBasic('svc_cs_wrong')))
await step('tokenWrongSecret', async () => {
  const res = await oauth.refreshTokenGrantRequest(as, confidentialClient, oauth.ClientSecretBasic('svc_cs_wrong'), conf.refresh_token, opts)
  await oauth.processRefreshTokenResponse(as, confidentialClient, res)
  return {}
})
await step('passwordGrant', async () => {
  const res = await oauth.genericTokenEndpointRequest(as, confidentialClient, basic, 'password',
    { username: 'someone@example.com', password: 'a long enough password' }, opts)
  await oauth.processGenericTokenEndpointResponse(as, confidentialClient, res)
  return {}
})
await step('clientCredentialsGrant', async () => {
  const res = await oauth.clientCredentialsGrantRequest(as, confidentialClient, basic, { scope: 'plans:read' }, opts)
  await oauth.processClientCredentialsResponse(as, confidentialClient, res)
  return {}
})

// Revocation: another client's token is refused and keeps working; the
// client's own ends its grant.
await step('revokeOthersToken', async () => {
  const res = await oauth.revocationRequest(as, confidentialClient, basic, refreshed.refresh_token, opts)
  await oauth.processRevocationResponse(res)
  return {}
})
await step('afterOthersRevocation', () => apiCall(refreshed.access_token, plans))
await step('revokeOwnToken', async () => {
  const res = await oauth.revocationRequest(as, publicClient, oauth.None(), refreshed.refresh_token, opts)
  await oauth.processRevocationResponse(res)
  return {}
})
await step('afterOwnRevocation', () => apiCall(refreshed.access_token, plans))
await step('introspectRevoked', async () => {
  // The confidential client's own grant, revoked by its access token.
  const res = await oauth.revocationRequest(as, confidentialClient, basic, conf.access_token, opts)
  await oauth.processRevocationResponse(res)
  return introspect(conf.refresh_token)
})

console.log(JSON.stringify(out))
