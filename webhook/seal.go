package webhook

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// KeySize is the length of a Sealer key: AES-256.
const KeySize = 32

// LegacyKeyID is the ID of a key configured without one (WEBHOOK_SECRET_KEY
// holding a bare key, as before keys had IDs): the key that sealed every
// v1 and v2 value.
const LegacyKeyID = "0"

// The sealed format is versioned so that a change of format, cipher or key
// can be rolled out while old rows are still readable:
//   - v3:<key ID>:… — sealed under the key of that ID, the endpoint's ID as
//     associated data (written by Seal when the newest key has an ID);
//   - v2:… — the endpoint's ID as associated data, under the legacy key
//     (written by Seal while the newest key is the legacy key, so a
//     deployment with one key writes what it always wrote);
//   - v1:… — no associated data, under the legacy key (read only, until
//     Reseal replaces it).
const (
	keyedPrefix  = "v3:"
	sealedPrefix = "v2:"
	legacyPrefix = "v1:"
)

// Key is one sealing key and its ID. The ID is stored in every value the
// key seals, so that a value finds its key after newer keys were added.
type Key struct {
	ID     string
	Secret []byte
}

// keyIDPattern is what a key ID may be: short, and free of the separators
// of the configuration (",") and of the sealed format (":").
var keyIDPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,32}$`)

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
// A Sealer holds one key or several (a key rotation): it seals with the
// newest and opens with the one each value names, so the operator can add
// a key, reseal every value (Update) and then retire the old key.
//
// A Sealer is safe for concurrent use.
type Sealer struct {
	newest string // the ID of the key Seal uses
	ids    []string
	aeads  map[string]cipher.AEAD
}

// NewSealer returns a Sealer for one 32-byte key (see ParseKey), the
// legacy key: the configuration of a deployment that never rotated.
func NewSealer(key []byte) (*Sealer, error) {
	return NewKeyring([]Key{{ID: LegacyKeyID, Secret: key}})
}

// NewKeyring returns a Sealer for keys, newest first: it seals with
// keys[0] and opens values sealed under any of them.
func NewKeyring(keys []Key) (*Sealer, error) {
	if len(keys) == 0 {
		return nil, errors.New("new sealer: no key")
	}
	s := &Sealer{newest: keys[0].ID, aeads: make(map[string]cipher.AEAD, len(keys))}
	for _, k := range keys {
		if !keyIDPattern.MatchString(k.ID) {
			return nil, fmt.Errorf("new sealer: key ID %q: want 1 to 32 letters, digits, '_', '.' or '-'", k.ID)
		}
		if _, dup := s.aeads[k.ID]; dup {
			return nil, fmt.Errorf("new sealer: key ID %q given twice", k.ID)
		}
		if len(k.Secret) != KeySize {
			return nil, fmt.Errorf("new sealer: key %q is %d bytes, want %d", k.ID, len(k.Secret), KeySize)
		}
		block, err := aes.NewCipher(k.Secret)
		if err != nil {
			return nil, fmt.Errorf("new sealer: %w", err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("new sealer: %w", err)
		}
		s.aeads[k.ID] = aead
		s.ids = append(s.ids, k.ID)
	}
	return s, nil
}

// NewestKeyID is the ID of the key Seal uses.
func (s *Sealer) NewestKeyID() string { return s.newest }

// KeyIDs are the IDs of the Sealer's keys, newest first.
func (s *Sealer) KeyIDs() []string { return slices.Clone(s.ids) }

// UnknownKeyError is Open's error for a value sealed under a key the
// Sealer does not hold (retired too early, or not configured on this
// process yet). It names the key by its ID, never by its material.
type UnknownKeyError struct {
	KeyID string
	Known []string
}

func (e *UnknownKeyError) Error() string {
	return fmt.Sprintf("open: sealed with key ID %q, which is not configured (configured: %s)", e.KeyID, strings.Join(e.Known, ", "))
}

// ParseKeys decodes the keys of WEBHOOK_SECRET_KEY: either one bare key
// (the legacy key, ID "0"), or a comma-separated list of ID:key entries,
// newest first, such as "k2:<base64>,k1:<base64>,0:<hex>". One entry of a
// list may be a bare key: it is the legacy key. Each key is read as
// ParseKey reads one. Errors name entries by position or ID, never echo
// key material.
func ParseKeys(s string) ([]Key, error) {
	var keys []Key
	seen := map[string]bool{}
	for i, entry := range strings.Split(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			return nil, fmt.Errorf("parse keys: entry %d is empty", i+1)
		}
		id, material, ok := strings.Cut(entry, ":")
		if !ok {
			id, material = LegacyKeyID, entry
		}
		id = strings.TrimSpace(id)
		if !keyIDPattern.MatchString(id) {
			return nil, fmt.Errorf("parse keys: entry %d: a key ID is 1 to 32 letters, digits, '_', '.' or '-'", i+1)
		}
		if seen[id] {
			return nil, fmt.Errorf("parse keys: key ID %q given twice (a bare key is key ID %q)", id, LegacyKeyID)
		}
		seen[id] = true
		key, err := ParseKey(material)
		if err != nil {
			return nil, fmt.Errorf("parse keys: key ID %q: %w", id, err)
		}
		keys = append(keys, Key{ID: id, Secret: key})
	}
	return keys, nil
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

// Seal encrypts plain for the endpoint endpointID under the newest key and
// returns "v3:<key ID>:" + base64(nonce || ciphertext || tag) in the
// standard alphabet ("v2:" + … while the newest key is the legacy key), a
// plain string that fits any text column. Only Open with the same endpoint
// ID opens it.
func (s *Sealer) Seal(endpointID, plain string) (string, error) {
	if endpointID == "" {
		return "", errors.New("seal: no endpoint ID to bind the secret to")
	}
	aead := s.aeads[s.newest]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("seal: nonce: %w", err)
	}
	out := base64.StdEncoding.EncodeToString(aead.Seal(nonce, nonce, []byte(plain), []byte(endpointID)))
	if s.newest == LegacyKeyID {
		return sealedPrefix + out, nil
	}
	return keyedPrefix + s.newest + ":" + out, nil
}

// parsed is a sealed value taken apart: the ID of its key, whether it is
// bound to its endpoint, and the base64 of nonce || ciphertext || tag.
type parsed struct {
	keyID string
	bound bool
	body  string
}

func parse(sealed string) (parsed, error) {
	if rest, ok := strings.CutPrefix(sealed, keyedPrefix); ok {
		id, body, ok := strings.Cut(rest, ":")
		if !ok || !keyIDPattern.MatchString(id) {
			return parsed{}, errors.New("open: v3 value without a valid key ID")
		}
		return parsed{keyID: id, bound: true, body: body}, nil
	}
	if rest, ok := strings.CutPrefix(sealed, sealedPrefix); ok {
		return parsed{keyID: LegacyKeyID, bound: true, body: rest}, nil
	}
	if rest, ok := strings.CutPrefix(sealed, legacyPrefix); ok {
		return parsed{keyID: LegacyKeyID, body: rest}, nil
	}
	return parsed{}, errors.New("open: unknown format, want a v3:, v2: or v1: prefix")
}

// KeyIDOf returns the ID of the key a value is sealed under, read from
// the value itself (no key needed).
func KeyIDOf(sealed string) (string, error) {
	p, err := parse(sealed)
	return p.keyID, err
}

// Open reverses Seal for the endpoint endpointID, with the key the value
// names. It fails if the value was sealed for another endpoint or under a
// key the Sealer does not hold (an *UnknownKeyError), was modified or
// truncated, or is in no known format. A v1 value, sealed before secrets
// were bound to their endpoint, opens for any endpoint until Reseal
// replaces it.
func (s *Sealer) Open(endpointID, sealed string) (string, error) {
	p, err := parse(sealed)
	if err != nil {
		return "", err
	}
	var ad []byte
	if p.bound {
		if endpointID == "" {
			return "", errors.New("open: no endpoint ID")
		}
		ad = []byte(endpointID)
	}
	aead, ok := s.aeads[p.keyID]
	if !ok {
		return "", &UnknownKeyError{KeyID: p.keyID, Known: s.KeyIDs()}
	}
	raw, err := base64.StdEncoding.DecodeString(p.body)
	if err != nil {
		return "", errors.New("open: invalid base64")
	}
	if len(raw) < aead.NonceSize()+aead.Overhead() {
		return "", errors.New("open: sealed value too short")
	}
	nonce, ct := raw[:aead.NonceSize()], raw[aead.NonceSize():]
	plain, err := aead.Open(nil, nonce, ct, ad)
	if err != nil {
		// GCM does not say which; all mean the value must not be trusted.
		return "", fmt.Errorf("open: wrong key (key ID %q), wrong endpoint or tampered value", p.keyID)
	}
	return string(plain), nil
}

// Current reports whether a value is sealed as Seal seals now: under the
// newest key, bound to its endpoint. The empty value (no secret) is
// current: there is nothing to reseal.
func (s *Sealer) Current(sealed string) bool {
	if sealed == "" {
		return true
	}
	p, err := parse(sealed)
	return err == nil && p.bound && p.keyID == s.newest
}

// Update returns sealed as Seal seals now (see Current) for the endpoint
// endpointID, and whether that changed it. A value current already, or
// empty, comes back as it is; a value that does not open is an error and
// is left to the caller.
func (s *Sealer) Update(endpointID, sealed string) (string, bool, error) {
	if s.Current(sealed) {
		return sealed, false, nil
	}
	plain, err := s.Open(endpointID, sealed)
	if err != nil {
		return sealed, false, err
	}
	out, err := s.Seal(endpointID, plain)
	if err != nil {
		return sealed, false, err
	}
	return out, true, nil
}

// Reseal is Update for a row that is written anyway: a value sealed under
// an older key, or before secrets were bound to their endpoint, is sealed
// again under the newest key; any other value (current already, empty, or
// not readable) is returned as it is: nothing is lost by calling it.
func (s *Sealer) Reseal(endpointID, sealed string) string {
	out, _, _ := s.Update(endpointID, sealed)
	return out
}
