// Package auth holds the secrets of merchant accounts: passwords,
// hashed with argon2id, and the opaque tokens of dashboard sessions.
package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// argon2id's parameters, OWASP's first recommended configuration (Password
// Storage Cheat Sheet): 19 MiB of memory, two passes, one lane.
const (
	argonMemoryKiB = 19 * 1024
	argonTime      = 2
	argonThreads   = 1
	argonKeyLen    = 32
	saltLen        = 16
)

// Password lengths: NIST SP 800-63B's minimum of 8 is raised to 10, and a
// ceiling keeps hashing bounded.
const (
	MinPasswordLength = 10
	MaxPasswordLength = 256
)

// CheckPasswordRules says what is wrong with a new password, "" when
// nothing is.
func CheckPasswordRules(pw string) string {
	n := utf8.RuneCountInString(pw)
	switch {
	case !utf8.ValidString(pw):
		return "must be valid UTF-8"
	case n < MinPasswordLength || n > MaxPasswordLength:
		return fmt.Sprintf("must be %d to %d characters", MinPasswordLength, MaxPasswordLength)
	}
	return ""
}

// HashPassword hashes pw with argon2id and a fresh salt, in the PHC string
// format ($argon2id$v=19$m=…,t=…,p=…$salt$hash).
func HashPassword(pw string) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := argon2.IDKey([]byte(pw), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyLen)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemoryKiB, argonTime, argonThreads,
		enc.EncodeToString(salt), enc.EncodeToString(key)), nil
}

// CheckPassword reports whether pw matches encoded (a HashPassword
// result, with whatever parameters it was made with). An empty encoded
// (an account without a password) matches nothing.
func CheckPassword(encoded, pw string) bool {
	salt, key, m, t, p, err := parseHash(encoded)
	if err != nil {
		// Spend the same time as a real check, so that the answer's delay
		// does not tell an account without a password from one with.
		argon2.IDKey([]byte(pw), make([]byte, saltLen), argonTime, argonMemoryKiB, argonThreads, argonKeyLen)
		return false
	}
	got := argon2.IDKey([]byte(pw), salt, t, m, p, uint32(len(key)))
	return subtle.ConstantTimeCompare(got, key) == 1
}

var errBadHash = errors.New("not an argon2id hash")

func parseHash(encoded string) (salt, key []byte, m, t uint32, p uint8, err error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" || parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return nil, nil, 0, 0, 0, errBadHash
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m == 0 || t == 0 || p == 0 || m > 1<<22 {
		return nil, nil, 0, 0, 0, errBadHash
	}
	enc := base64.RawStdEncoding
	if salt, err = enc.DecodeString(parts[4]); err != nil {
		return nil, nil, 0, 0, 0, errBadHash
	}
	if key, err = enc.DecodeString(parts[5]); err != nil || len(key) < 16 {
		return nil, nil, 0, 0, 0, errBadHash
	}
	return salt, key, m, t, p, nil
}

// NewToken returns an opaque random token: 32 bytes, hex.
func NewToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
