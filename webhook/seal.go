package webhook

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the length of a Sealer key: AES-256.
const KeySize = 32

// The sealed format is versioned so that a change of format, cipher or key
// can be rolled out while old rows are still readable:
//   - v2: the endpoint's ID is the associated data, so a value opens only in
//     the row of the endpoint it was sealed for (written by Seal);
//   - v1: no associated data (read only, until Reseal replaces it).
const (
	sealedPrefix = "v2:"
	legacyPrefix = "v1:"
)

// Sealer encrypts webhook signing secrets for storage. We must be able to
// recover the secret to sign deliveries, so it cannot be hashed like a
// password; sealing it means a leaked database dump or backup alone does not
// let anyone forge webhooks to merchants. Each secret is bound to its
// endpoint: someone who can write the database but not read the key cannot
// move a secret to another endpoint's row (to have the engine sign that
// endpoint's deliveries with a secret they chose or know).
//
// It uses AES-256-GCM with a random 96-bit nonce per message. GCM
// authenticates as well as encrypts, so a wrong key or any modification of
// the stored value makes Open fail instead of returning garbage. Random nonces
// are safe for up to about 2^32 seals under one key, far beyond the number of
// webhook secrets we will ever store.
//
// A Sealer is safe for concurrent use.
type Sealer struct {
	aead cipher.AEAD
}

// NewSealer returns a Sealer for a 32-byte key (see ParseKey).
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("new sealer: key is %d bytes, want %d", len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("new sealer: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("new sealer: %w", err)
	}
	return &Sealer{aead: aead}, nil
}

// ParseKey decodes a Sealer key from configuration: 64 hex digits or the
// base64 (standard or URL alphabet, padded or not) of 32 bytes, surrounding
// whitespace ignored. Both forms are accepted because operators generate keys
// with either `openssl rand -hex 32` or `openssl rand -base64 32`. Errors
// never echo the input, since it is key material.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("parse key: empty key")
	}
	// 64 characters cannot be 32 bytes of base64 (that is 43 or 44), so a
	// 64-character value is only ever hex.
	if len(s) == 2*KeySize {
		key, err := hex.DecodeString(s)
		if err != nil {
			return nil, errors.New("parse key: 64 characters but not valid hex")
		}
		return key, nil
	}
	for _, enc := range []*base64.Encoding{
		base64.StdEncoding, base64.RawStdEncoding,
		base64.URLEncoding, base64.RawURLEncoding,
	} {
		key, err := enc.DecodeString(s)
		if err != nil {
			continue
		}
		if len(key) != KeySize {
			return nil, fmt.Errorf("parse key: base64 decodes to %d bytes, want %d", len(key), KeySize)
		}
		return key, nil
	}
	return nil, fmt.Errorf("parse key: want %d bytes as 64 hex digits or base64, got %d characters of neither", KeySize, len(s))
}

// Seal encrypts plain for the endpoint endpointID and returns "v2:" +
// base64(nonce || ciphertext || tag) in the standard alphabet, a plain
// string that fits any text column. Only Open with the same endpoint ID
// opens it.
func (s *Sealer) Seal(endpointID, plain string) (string, error) {
	if endpointID == "" {
		return "", errors.New("seal: no endpoint ID to bind the secret to")
	}
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("seal: nonce: %w", err)
	}
	out := s.aead.Seal(nonce, nonce, []byte(plain), []byte(endpointID))
	return sealedPrefix + base64.StdEncoding.EncodeToString(out), nil
}

// Open reverses Seal for the endpoint endpointID. It fails if the value was
// sealed for another endpoint or under another key, was modified or
// truncated, or is in no known format. A v1 value, sealed before secrets
// were bound to their endpoint, opens for any endpoint until Reseal
// replaces it.
func (s *Sealer) Open(endpointID, sealed string) (string, error) {
	var ad []byte
	rest, ok := strings.CutPrefix(sealed, sealedPrefix)
	if ok {
		if endpointID == "" {
			return "", errors.New("open: no endpoint ID")
		}
		ad = []byte(endpointID)
	} else if rest, ok = strings.CutPrefix(sealed, legacyPrefix); !ok {
		return "", errors.New("open: unknown format, want a v2: or v1: prefix")
	}
	raw, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return "", errors.New("open: invalid base64")
	}
	if len(raw) < s.aead.NonceSize()+s.aead.Overhead() {
		return "", errors.New("open: sealed value too short")
	}
	nonce, ct := raw[:s.aead.NonceSize()], raw[s.aead.NonceSize():]
	plain, err := s.aead.Open(nil, nonce, ct, ad)
	if err != nil {
		// GCM does not say which; all mean the value must not be trusted.
		return "", errors.New("open: wrong key, wrong endpoint or tampered value")
	}
	return string(plain), nil
}

// Reseal returns a v1 value sealed again for the endpoint endpointID, so
// that rows written before secrets were bound to their endpoint become
// bound the next time they are written. Any other value (v2 already, empty,
// or not readable) is returned as it is: nothing is lost by calling it.
func (s *Sealer) Reseal(endpointID, sealed string) string {
	if !strings.HasPrefix(sealed, legacyPrefix) {
		return sealed
	}
	plain, err := s.Open(endpointID, sealed)
	if err != nil {
		return sealed
	}
	out, err := s.Seal(endpointID, plain)
	if err != nil {
		return sealed
	}
	return out
}
