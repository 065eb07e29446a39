package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sethvargo/go-limiter"

	"github.com/paymentsd/paymentsd/internal/observability"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
)

var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// withRequestID takes a valid incoming X-Request-Id or makes one, and sends
// it back.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !requestIDPattern.MatchString(id) {
			id = payment.NewID("req_", time.Now())
		}
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(contextWith(r, RequestIDKey, id)))
	})
}

// withRecover turns a panic into a 500 in the envelope.
func withRecover(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				FailErr(w, r, fmt.Errorf("panic: %v", v))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// authenticate resolves the credential of a request: an API key or an
// OAuth access token, as `Authorization: Bearer <credential>` or an API
// key as `X-API-Key: <key>`.
func (s *Server) authenticate(ctx context.Context, h http.Header) (payment.Principal, error) {
	key := h.Get("X-API-Key")
	if auth := h.Get("Authorization"); auth != "" {
		scheme, token, found := strings.Cut(auth, " ")
		if !found || !strings.EqualFold(scheme, "Bearer") || token == "" {
			return payment.Principal{}, &payment.Error{Kind: payment.KindUnauthenticated, Message: "Authorization header must be \"Bearer <API key or access token>\""}
		}
		key = strings.TrimSpace(token)
	}
	if key == "" {
		return payment.Principal{}, &payment.Error{Kind: payment.KindUnauthenticated, Message: "Missing API key: send \"Authorization: Bearer <API key>\""}
	}
	if strings.HasPrefix(key, payment.OAuthAccessTokenPrefix) {
		p, err := s.Svc.Access().AuthenticateOAuth(ctx, key)
		if errors.Is(err, payment.ErrUnauthorized) {
			return p, &payment.Error{Kind: payment.KindUnauthenticated, Message: "Invalid access token: it is unknown, expired or revoked"}
		}
		return p, err
	}
	if !strings.HasPrefix(key, service.LiveKeyPrefix) && !strings.HasPrefix(key, service.SandboxKeyPrefix) {
		return payment.Principal{}, &payment.Error{Kind: payment.KindUnauthenticated, Message: "Invalid API key"}
	}
	p, err := s.Svc.Checkout().Authenticate(ctx, key)
	if errors.Is(err, payment.ErrUnauthorized) {
		return p, &payment.Error{Kind: payment.KindUnauthenticated, Message: "Invalid API key"}
	}
	return p, err
}

// allows checks what an API key or access token may do on an endpoint:
// an access token only within its scopes (a missing one is 403 with its
// challenge in out, RFC 6750 §3.1), and only as far as its user's role in
// the project goes.
func allows(p payment.Principal, scope string, out http.Header) error {
	if p.GrantID == "" {
		return nil
	}
	if scope == "" {
		return &payment.Error{Kind: payment.KindForbidden, Message: "Access tokens are not accepted here"}
	}
	if !p.HasScope(scope) {
		out.Set("WWW-Authenticate", scopeChallenge(scope))
		return payment.ErrMissingScope(scope)
	}
	if strings.HasSuffix(scope, ":write") && !p.CanWrite() {
		return payment.ErrForbidden
	}
	return nil
}

// credentialCounter is the rate-limit counter and idempotency scope of
// an API key or access token: a token's grant, so that a refresh does
// not start a new budget.
func credentialCounter(p payment.Principal) string {
	if p.GrantID != "" {
		return "grant:" + p.GrantID
	}
	return "key:" + p.KeyID
}

// originOf is the audit origin of a call made with an API key or access
// token.
func (s *Server) originOf(r *http.Request, p payment.Principal) payment.Origin {
	o := payment.Origin{ActorKind: payment.AuditActorAPIKey, ActorID: p.KeyID, IP: s.ClientAddress(r), UserAgent: r.UserAgent()}
	if p.GrantID != "" {
		o.ActorKind, o.ActorID = payment.AuditActorOAuthApp, p.GrantID
	}
	return o
}

// take takes one token of tier for counter, sets the rate-limit headers on
// h and, when none is left, returns a rate-limited error.
func (s *Edge) Take(ctx context.Context, h http.Header, tier Tier, counter string) error {
	return s.TakeFrom(ctx, s.Limiters[tier], h, tier, counter)
}

// takeFrom is take on the store st.
func (s *Edge) TakeFrom(ctx context.Context, st limiter.Store, h http.Header, tier Tier, counter string) error {
	limit, remaining, reset, allowed, err := st.Take(ctx, LimitKey(tier, counter))
	if err != nil {
		// A broken limiter store must not take the API down with it.
		slog.WarnContext(ctx, "rate limiter unavailable", "err", err)
		return nil
	}
	secs := int64(time.Until(time.Unix(0, int64(reset))).Seconds() + 0.999)
	if secs < 1 {
		secs = 1
	}
	for _, prefix := range []string{"RateLimit-", "X-RateLimit-"} {
		h.Set(prefix+"Limit", strconv.FormatUint(limit, 10))
		h.Set(prefix+"Remaining", strconv.FormatUint(remaining, 10))
		h.Set(prefix+"Reset", strconv.FormatInt(secs, 10))
	}
	if !allowed {
		observability.RateLimited.WithLabelValues(string(tier)).Inc()
		h.Set("Retry-After", strconv.FormatInt(secs, 10))
		return &payment.Error{Kind: payment.KindRateLimited,
			Message: fmt.Sprintf("Rate limit of %d requests per minute exceeded; retry in %d s", limit, secs)}
	}
	return nil
}

// limitKey is the key of counter's bucket in tier's store.
func LimitKey(tier Tier, counter string) string { return string(tier) + "|" + counter }

// readBody checks the content type and reads a bounded body.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if r.ContentLength == 0 && r.Header.Get("Content-Type") == "" {
		return []byte{}, true // an action without a body (archive, cancel, rotate)
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if (err != nil || mt != "application/json") && !CSVBody(r) {
		Fail(w, r, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "Content-Type must be application/json", nil)
		return nil, false
	}
	// REST bodies are small JSON (or a payout batch's CSV): a compressed one is refused rather than
	// read as JSON or expanded (Connect takes gzip, bounded).
	if ce := r.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		Fail(w, r, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "Content-Encoding "+ce+" is not accepted: send the JSON uncompressed", nil)
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		Fail(w, r, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", fmt.Sprintf("Request body exceeds %d bytes", s.maxBody), nil)
		return nil, false
	case err != nil:
		Fail(w, r, http.StatusBadRequest, "BAD_REQUEST", "Could not read the request body", nil)
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, true
}

// idempotent runs a POST under its Idempotency-Key, if it has one: the same
// key with the same body replays the first response; with another body it
// is a 409.
func (s *Server) idempotent(w http.ResponseWriter, r *http.Request, scope string, body []byte, handle func(http.ResponseWriter, *http.Request) error) {
	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		if err := handle(w, r); err != nil {
			FailErr(w, r, err)
		}
		return
	}
	if len(key) > 255 {
		Fail(w, r, http.StatusUnprocessableEntity, "VALIDATION_ERROR", "Validation failed",
			[]payment.FieldError{{Field: "Idempotency-Key", Message: "must be at most 255 characters"}})
		return
	}
	sum := sha256.Sum256([]byte(r.Method + " " + r.URL.Path + "\n" + string(body)))
	hash := hex.EncodeToString(sum[:])
	e, id := s.Svc, recordID(scope, key)
	prev, err := e.ClaimIdempotencyKey(r.Context(), id, hash)
	if err != nil {
		FailErr(w, r, err)
		return
	}
	if prev != nil {
		s.replay(w, r, scope, key, hash, prev)
		return
	}
	rec := &recorder{ResponseWriter: w}
	if err := handle(rec, r); err != nil {
		FailErr(rec, r, err)
	}
	ctx := contextWithoutCancel(r)
	if rec.status >= 500 {
		// A server error is worth retrying under the same key.
		s.release(ctx, id)
		return
	}
	sealed, err := sealResponse(scope, key, rec.body.Bytes())
	if err == nil {
		err = e.CompleteIdempotencyKey(ctx, id, rec.status, sealed)
	}
	if err != nil {
		slog.ErrorContext(ctx, "store idempotent response", "err", err)
	}
}

// releaseFor is how long a claim whose release failed is tried again in
// the background, once a second: the database that failed the request
// often fails the release too, and a claim left would answer every retry
// of the key with a 409 for a day.
const releaseFor = time.Minute

// release forgets the claim id of a request that failed with a server
// error, so that a retry under the same key runs again: at once, and if
// that fails, again in the background for up to releaseFor.
func (s *Server) release(ctx context.Context, id []byte) {
	attempt := func() error {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return s.Svc.ReleaseIdempotencyKey(ctx, id)
	}
	if attempt() == nil {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(ctx, releaseFor)
		defer cancel()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				slog.ErrorContext(ctx, "an Idempotency-Key's claim could not be released: retries of the key get 409 until it expires", "requestId", RequestID(ctx))
				return
			case <-tick.C:
			}
			if attempt() == nil {
				return
			}
		}
	}()
}

// replay answers a request whose key has a record: the first response, or
// a conflict.
func (s *Server) replay(w http.ResponseWriter, r *http.Request, scope, key, hash string, prev *service.IdempotentResponse) {
	switch {
	case prev.RequestHash != hash:
		Fail(w, r, http.StatusConflict, "CONFLICT", "Idempotency-Key was already used with another request", nil)
	case prev.StatusCode == 0:
		Fail(w, r, http.StatusConflict, "CONFLICT", "A request with this Idempotency-Key is still being processed", nil)
	case prev.Sealed == nil:
		Fail(w, r, http.StatusConflict, "CONFLICT", "Idempotency-Key was already used; its first response is no longer kept, so look the resource up instead", nil)
	default:
		body, err := openResponse(scope, key, prev.Sealed)
		if err != nil {
			slog.ErrorContext(r.Context(), "open idempotent response", "err", err)
			Fail(w, r, http.StatusConflict, "CONFLICT", "Idempotency-Key was already used; its first response cannot be read, so look the resource up instead", nil)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Idempotent-Replayed", "true")
		w.WriteHeader(prev.StatusCode)
		_, _ = w.Write(body)
	}
}

// recorder keeps a copy of the response for the idempotency record.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

// clientIP is the counter of the client that sent r for rate limits: its
// address behind the trusted proxies, or an IPv6 client's /64 (clientKey).
func (s *Edge) ClientIP(r *http.Request) string {
	return clientKey(r, s.Proxies)
}

func sortStrings(s []string) []string {
	slices.Sort(s)
	return s
}
