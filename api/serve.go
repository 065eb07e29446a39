package api

import (
	"context"
	"net/http"

	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/payment"
)

// call is one REST call on its way through serve's steps.
type call struct {
	w  http.ResponseWriter
	r  *http.Request
	ep endpoint
	// scope is what an OAuth access token needs on the route.
	scope string
	// actor is who the call acts as once authenticated: an API key, an
	// access token or a project's member; nil for an anonymous call and
	// for a signed-in user acting on their own account.
	actor *payment.Principal
	// SignedIn is the session cookie's user and session, nil for a call
	// without one.
	signedIn *rest.SignedIn
	// body is what a POST or PATCH sent, read under the size bound; nil
	// for the other methods.
	body []byte
}

// callStep is one step of serve: it returns false once it has answered
// the call (refused it, or run its handler), and the steps after it do
// not run.
type callStep func(c *call) bool

// serve runs the cross-cutting steps of every API call in order:
// authentication (under the client IP's budget of failures) and the
// token's scope, the rate limit, the body checks, sudo mode, then the
// handler under the idempotency key, its errors in the envelope.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, ep endpoint, scope string) {
	c := &call{w: w, r: r, ep: ep, scope: scope}
	for _, step := range []callStep{s.authenticateCall, s.limitCall, s.readCallBody, s.refuseStaleSession, s.runCall} {
		if !step(c) {
			return
		}
	}
}

// refuse answers the call with err in the envelope.
func (c *call) refuse(err error) bool {
	rest.FailErr(c.w, c.r, err)
	return false
}

// authenticateCall resolves who makes the call, as its route's access
// asks: a credential sent to a members' route is refused, the session
// cookie signs a user in, an API key or access token is checked against
// the route's scope; a public route reads nothing.
func (s *Server) authenticateCall(c *call) bool {
	cookieToken, sendsCredential := rest.SessionToken(c.r), hasCredentials(c.r.Header)
	if bearer := s.BearerSession(c.r.Header); bearer != "" {
		cookieToken, sendsCredential = bearer, false // the second shape's session token as a bearer token
	}
	access := c.ep.access
	switch {
	case access == member && sendsCredential && cookieToken == "":
		return s.refuseCredentialOnMembersRoute(c)
	case access == user || access == member || access == apiKey && !sendsCredential && cookieToken != "":
		return s.signInByCookie(c, cookieToken)
	case access == apiKey || access == optionalKey && sendsCredential:
		return s.authenticateCredential(c)
	}
	return true
}

// refuseCredentialOnMembersRoute answers an API key or access token sent
// to a members' route: a valid one of this project is refused, any other
// is what it would be elsewhere.
func (s *Server) refuseCredentialOnMembersRoute(c *call) bool {
	p, err := s.authenticateFrom(c.r.Context(), c.r.Header, s.ClientIP(c.r), c.w.Header())
	if err == nil {
		err = &payment.Error{Kind: payment.KindForbidden, Message: "API keys and access tokens do not manage keys, members, applications or settings: sign in as an owner"}
		if p.ProjectID != c.r.PathValue("projectId") {
			err = payment.NotFound("Project")
		}
	}
	return c.refuse(err)
}

// signInByCookie resolves the session cookie: a signed-in user, acting
// for themselves or (on a project's route) as a member of it in the
// environment the request names.
func (s *Server) signInByCookie(c *call, token string) bool {
	r := c.r
	if token == "" {
		return c.refuse(&payment.Error{Kind: payment.KindUnauthenticated, Message: "Not signed in: sign in first (the session cookie " + rest.SessionCookie + ")"})
	}
	in, err := s.SignedInFrom(r.Context(), token, s.ClientIP(r), c.w.Header())
	if err != nil {
		return c.refuse(err)
	}
	if rest.UnsafeMethod(r.Method) {
		if err := s.CrossOrigin(r); err != nil {
			return c.refuse(err)
		}
	}
	c.signedIn = &in
	p := payment.Principal{UserID: in.User.ID, SessionID: in.Session.ID}
	if c.ep.access == apiKey || c.ep.access == member {
		if p, err = s.memberOf(r, in); err != nil {
			return c.refuse(err)
		}
	}
	c.actor = &p
	ctx := context.WithValue(r.Context(), rest.PrincipalKey, p)
	ctx = context.WithValue(ctx, rest.UserKey, in)
	ctx = payment.WithOrigin(ctx, payment.Origin{ActorKind: payment.AuditActorUser, ActorID: in.User.ID,
		IP: s.ClientAddress(r), UserAgent: r.UserAgent()})
	c.r = r.WithContext(ctx)
	return true
}

// memberOf is a signed-in user as a member of the route's project, in the
// environment the request names; a state change needs a role that
// writes (but for leaving the project).
func (s *Server) memberOf(r *http.Request, in rest.SignedIn) (payment.Principal, error) {
	isLive, err := rest.Environment(r)
	if err != nil {
		return payment.Principal{}, err
	}
	p, err := s.Svc.Access().MemberPrincipal(r.Context(), in.User, in.Session, r.PathValue("projectId"), isLive)
	if err == nil && rest.UnsafeMethod(r.Method) && !p.CanWrite() && !rest.Leaving(r, in) {
		err = payment.ErrForbidden
	}
	return p, err
}

// authenticateCredential resolves an API key or access token, and holds
// a token to the route's scope.
func (s *Server) authenticateCredential(c *call) bool {
	p, err := s.authenticateFrom(c.r.Context(), c.r.Header, s.ClientIP(c.r), c.w.Header())
	if err == nil {
		err = allows(p, c.scope, c.w.Header())
	}
	if err != nil {
		return c.refuse(err)
	}
	c.actor = &p
	ctx := context.WithValue(c.r.Context(), rest.PrincipalKey, p)
	ctx = payment.WithOrigin(ctx, s.originOf(c.r, p))
	c.r = c.r.WithContext(ctx)
	return true
}

// limitCall takes one token of the route's tier: per session for cookie
// calls (the spec), per credential for API keys and tokens (whose Strict
// tier is StrictAPIKey), per client IP for anonymous calls.
func (s *Server) limitCall(c *call) bool {
	tier, counter := c.ep.tier, "ip:"+s.ClientIP(c.r)
	switch {
	case c.signedIn != nil:
		counter = "session:" + c.signedIn.Session.ID
	case c.actor != nil:
		counter = credentialCounter(*c.actor)
		if tier == Strict {
			tier = StrictAPIKey
		}
	}
	if err := s.Take(c.r.Context(), c.w.Header(), tier, counter); err != nil {
		return c.refuse(err)
	}
	return true
}

// readCallBody reads a POST's or PATCH's body under the size bound and
// checks its content type and encoding.
func (s *Server) readCallBody(c *call) bool {
	if !sendsBody(c.r.Method) {
		return true
	}
	body, ok := s.readBody(c.w, c.r)
	c.body = body
	return ok
}

// refuseStaleSession refuses a sensitive action of a session not freshly
// signed in (sudo mode), before the idempotency key is claimed.
func (s *Server) refuseStaleSession(c *call) bool {
	return !s.ReauthenticationRefused(c.w, c.r, c.signedIn, c.body)
}

// runCall runs the handler, a POST or PATCH under its Idempotency-Key;
// an error it returns is answered in the envelope.
func (s *Server) runCall(c *call) bool {
	if sendsBody(c.r.Method) {
		s.idempotent(c.w, c.r, c.idempotencyScope(s), c.body, c.ep.handle)
		return false
	}
	if err := c.ep.handle(c.w, c.r); err != nil {
		rest.FailErr(c.w, c.r, err)
	}
	return false
}

// idempotencyScope is whose Idempotency-Keys the call's is among: the
// credential's, the signed-in user's (in the project and environment a
// project route acts in: a key used in sandbox is not the same key in
// live), or for public routes the client address's. Another caller
// sending the same key and body never gets the first caller's response.
func (c *call) idempotencyScope(s *Server) string {
	switch {
	case c.signedIn != nil:
		scope := "user:" + c.signedIn.User.ID
		if c.actor != nil && c.actor.ProjectID != "" {
			scope += "|" + c.actor.ProjectID + "|" + payment.EnvironmentName(c.actor.IsLive)
		}
		return scope
	case c.actor != nil:
		return credentialCounter(*c.actor)
	}
	return "ip:" + s.ClientAddress(c.r)
}

// sendsBody tells the methods whose body the API reads.
func sendsBody(method string) bool {
	return method == http.MethodPost || method == http.MethodPatch
}
