package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names defined by the Standard Webhooks specification. http.Header
// canonicalises them on Set/Get, so receivers see e.g. "Webhook-Id"; header
// names are case-insensitive on the wire.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// SecretPrefix marks a signing secret. Standard Webhooks libraries strip it
// before base64-decoding, so secrets are shown to merchants with it.
const SecretPrefix = "whsec_"

// DefaultTolerance is the clock skew Verify accepts when given a
// non-positive tolerance. It matches the reference libraries: wide enough
// for ordinary clock drift, narrow enough that a captured delivery cannot be
// replayed much later.
const DefaultTolerance = 5 * time.Minute

// The specification asks for secrets between 24 and 64 bytes: shorter keys
// are weak, and some receiver libraries reject longer ones.
const (
	minSecretBytes = 24
	maxSecretBytes = 64
	newSecretBytes = 32
)

// Errors returned by Verify; test them with errors.Is.
var (
	ErrMissingHeaders          = errors.New("missing webhook signature headers")
	ErrInvalidTimestamp        = errors.New("invalid webhook timestamp")
	ErrTimestampOutOfTolerance = errors.New("webhook timestamp outside tolerance")
	ErrNoMatchingSignature     = errors.New("no matching webhook signature")
)

// NewSecret returns a fresh signing secret: "whsec_" followed by the standard
// base64 encoding of 32 random bytes. 32 bytes gives the full 256-bit strength
// of HMAC-SHA256 and sits inside the 24–64 bytes the specification asks for.
func NewSecret() string {
	b := make([]byte, newSecretBytes)
	// crypto/rand.Read never returns an error (it crashes the program
	// instead if the OS entropy source fails), so there is nothing to handle.
	_, _ = rand.Read(b)
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// ParseSecret decodes a signing secret into the HMAC key bytes. The "whsec_"
// prefix is optional, as in the reference libraries, so that a secret copied
// without it still works. The secret must decode to 24–64 bytes. Errors
// never echo the secret, since they may end up in logs.
func ParseSecret(s string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, SecretPrefix))
	if err != nil {
		return nil, errors.New("parse secret: not valid base64 after the whsec_ prefix")
	}
	if len(key) < minSecretBytes || len(key) > maxSecretBytes {
		return nil, fmt.Errorf("parse secret: decodes to %d bytes, want %d to %d", len(key), minSecretBytes, maxSecretBytes)
	}
	return key, nil
}

// Sign returns the three Standard Webhooks headers for a delivery of body
// with message id and timestamp ts, with one "v1,<signature>" entry per
// secret. Passing several secrets is how rotation works: while a merchant
// moves from the old secret to the new one, both sign every delivery and the
// receiver accepts the message if any entry matches the secret it holds.
//
// The id should stay the same across retries of one event so that receivers
// can deduplicate; ts is the time of this attempt (whole seconds are signed).
func Sign(id string, ts time.Time, body []byte, secrets ...string) (http.Header, error) {
	if err := checkID(id); err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	if len(secrets) == 0 {
		return nil, errors.New("sign: no secret given")
	}
	unix := ts.Unix()
	sigs := make([]string, 0, len(secrets))
	for i, s := range secrets {
		key, err := ParseSecret(s)
		if err != nil {
			return nil, fmt.Errorf("sign: secret %d: %w", i, err)
		}
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(mac(key, id, unix, body)))
	}
	h := http.Header{}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(unix, 10))
	h.Set(HeaderSignature, strings.Join(sigs, " "))
	return h, nil
}

// Verify checks that header carries a valid v1 signature of body under secret
// and that the signed timestamp is within tolerance of now (in either
// direction; a non-positive tolerance means DefaultTolerance). The signature
// is checked over the timestamp, so a receiver that enforces the tolerance is
// protected against replays of old deliveries. now is a parameter so that
// tests need no clock tricks; pass time.Now() in production.
//
// Production receivers are merchants using any Standard Webhooks library;
// Verify exists for our own tests and consumers.
func Verify(header http.Header, body []byte, secret string, tolerance time.Duration, now time.Time) error {
	id := header.Get(HeaderID)
	tsText := header.Get(HeaderTimestamp)
	sigText := header.Get(HeaderSignature)
	if id == "" || tsText == "" || sigText == "" {
		return fmt.Errorf("verify: %w", ErrMissingHeaders)
	}
	key, err := ParseSecret(secret)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	unix, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return fmt.Errorf("verify: %w: %q", ErrInvalidTimestamp, tsText)
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	ts := time.Unix(unix, 0)
	if skew := now.Sub(ts); skew > tolerance || skew < -tolerance {
		return fmt.Errorf("verify: %w: signed at %s, now %s", ErrTimestampOutOfTolerance,
			ts.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	want := mac(key, id, unix, body)
	for _, entry := range strings.Fields(sigText) {
		version, sig, ok := strings.Cut(entry, ",")
		if !ok || version != "v1" {
			// Unknown versions (e.g. asymmetric "v1a") are skipped, as the
			// specification requires, so senders can add schemes later.
			continue
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err != nil {
			continue
		}
		if hmac.Equal(got, want) {
			return nil
		}
	}
	return fmt.Errorf("verify: %w", ErrNoMatchingSignature)
}

// mac is HMAC-SHA256 over "{id}.{timestamp}.{body}", the signed content the
// specification defines. Binding id and timestamp into the MAC is what stops
// a signature from being reused for another message or another time.
func mac(key []byte, id string, unix int64, body []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(id))
	h.Write([]byte{'.'})
	h.Write(strconv.AppendInt(nil, unix, 10))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// checkID refuses ids that could not travel as a header value or that would
// make the signed content ambiguous to a receiver that trims whitespace.
func checkID(id string) error {
	if id == "" {
		return errors.New("empty message id")
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || c == 0x7f {
			return fmt.Errorf("message id has a space or control character at byte %d", i)
		}
	}
	return nil
}
