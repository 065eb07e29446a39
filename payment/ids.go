package payment

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
)

// Prefixes of the engine's identifiers.
const (
	PrefixProject  = "proj_"
	PrefixPlan     = "plan_"
	PrefixSession  = "cs_"
	PrefixTx       = "tx_"
	PrefixAPIKey   = "key_"
	PrefixWebhook  = "we_"
	PrefixEvent    = "evt_"
	PrefixDelivery = "whd_"
	PrefixAudit    = "aud_"
)

// NewID returns a prefixed, opaque, time-ordered identifier: the prefix and
// a lowercase ULID, so that IDs sort by creation time.
func NewID(prefix string, now time.Time) string {
	return prefix + strings.ToLower(ulid.MustNew(ulid.Timestamp(now), rand.Reader).String())
}

// ValidID reports whether id has the given prefix followed by a ULID.
func ValidID(prefix, id string) bool {
	rest, ok := strings.CutPrefix(id, prefix)
	if !ok || len(rest) != ulid.EncodedSize {
		return false
	}
	_, err := ulid.ParseStrict(strings.ToUpper(rest))
	return err == nil
}

// SessionTokenLength is the length of a checkout session token (spec, section 8).
const SessionTokenLength = 64

// NewSessionToken returns a checkout session token: 256 random bits as 64
// lowercase hexadecimal characters.
func NewSessionToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// ValidSessionToken reports whether s has the form of a session token.
func ValidSessionToken(s string) bool {
	if len(s) != SessionTokenLength {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// HashSecret returns the hex SHA-256 of a secret (a session token or an API
// key); only the hash is stored. The secrets carry 256 random bits, so a
// fast hash is enough.
func HashSecret(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// EnvironmentName is an environment's name: live or sandbox.
func EnvironmentName(isLive bool) string {
	if isLive {
		return "live"
	}
	return "sandbox"
}
