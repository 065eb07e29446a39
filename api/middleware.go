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
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/api/moneyout"
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
		next.ServeHTTP(w, r.WithContext(contextWith(r, rest.RequestIDKey, id)))
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
				rest.FailErr(w, r, fmt.Errorf("panic: %v", v))
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

// readBody checks the content type and reads a bounded body.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if r.ContentLength == 0 && r.Header.Get("Content-Type") == "" {
		return []byte{}, true // an action without a body (archive, cancel, rotate)
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if (err != nil || mt != "application/json") && !moneyout.CSVBody(r) {
		rest.Fail(w, r, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "Content-Type must be application/json", nil)
		return nil, false
	}
	// REST bodies are small JSON (or a payout batch's CSV): a compressed one is refused rather than
	// read as JSON or expanded (Connect takes gzip, bounded).
	if ce := r.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		rest.Fail(w, r, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "Content-Encoding "+ce+" is not accepted: send the JSON uncompressed", nil)
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		rest.Fail(w, r, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", fmt.Sprintf("Request body exceeds %d bytes", s.maxBody), nil)
		return nil, false
	case err != nil:
		rest.Fail(w, r, http.StatusBadRequest, "BAD_REQUEST", "Could not read the request body", nil)
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
			rest.FailErr(w, r, err)
		}
		return
	}
	if len(key) > 255 {
		rest.Fail(w, r, http.StatusUnprocessableEntity, "VALIDATION_ERROR", "Validation failed",
			[]payment.FieldError{{Field: "Idempotency-Key", Message: "must be at most 255 characters"}})
		return
	}
	sum := sha256.Sum256([]byte(r.Method + " " + r.URL.Path + "\n" + string(body)))
	hash := hex.EncodeToString(sum[:])
	e, id := s.Svc, recordID(scope, key)
	prev, err := e.ClaimIdempotencyKey(r.Context(), id, hash)
	if err != nil {
		rest.FailErr(w, r, err)
		return
	}
	if prev != nil {
		s.replay(w, r, scope, key, hash, prev)
		return
	}
	rec := &recorder{ResponseWriter: w}
	if err := handle(rec, r); err != nil {
		rest.FailErr(rec, r, err)
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
				slog.ErrorContext(ctx, "an Idempotency-Key's claim could not be released: retries of the key get 409 until it expires", "requestId", rest.RequestID(ctx))
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
		rest.Fail(w, r, http.StatusConflict, "CONFLICT", "Idempotency-Key was already used with another request", nil)
	case prev.StatusCode == 0:
		rest.Fail(w, r, http.StatusConflict, "CONFLICT", "A request with this Idempotency-Key is still being processed", nil)
	case prev.Sealed == nil:
		rest.Fail(w, r, http.StatusConflict, "CONFLICT", "Idempotency-Key was already used; its first response is no longer kept, so look the resource up instead", nil)
	default:
		body, err := openResponse(scope, key, prev.Sealed)
		if err != nil {
			slog.ErrorContext(r.Context(), "open idempotent response", "err", err)
			rest.Fail(w, r, http.StatusConflict, "CONFLICT", "Idempotency-Key was already used; its first response cannot be read, so look the resource up instead", nil)
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

func sortStrings(s []string) []string {
	slices.Sort(s)
	return s
}
