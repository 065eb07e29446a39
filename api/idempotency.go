package api

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
)

// An Idempotency-Key's record is kept so that no secret in it is readable
// from the database alone. Responses replayed under a key include secrets
// (a webhook endpoint's signing secret, a checkout session's token), so:
//   - the record is found by recordID, a hash of the caller's scope and the
//     key: the database holds neither;
//   - the response is sealed with AES-256-GCM under a key derived (HKDF) from
//     the Idempotency-Key and the scope, which only the caller holds, with
//     the record's ID as associated data, so a sealed response opens only
//     for the caller that sent the key, and only in its own row.
//
// Keys should be unguessable (a random UUID, as Stripe asks): anyone who can
// read the database and guess a key can open its record.

const sealedResponseVersion = 1

func recordID(scope, key string) []byte {
	sum := sha256.Sum256([]byte(scope + "\n" + key))
	return sum[:]
}

func responseCipher(scope, key string) (cipher.AEAD, error) {
	k, err := hkdf.Key(sha256.New, []byte(key), nil, "paymentsd idempotent response v1\n"+scope, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// sealResponse seals a response body for the record of scope and key.
func sealResponse(scope, key string, body []byte) ([]byte, error) {
	aead, err := responseCipher(scope, key)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 1+aead.NonceSize(), 1+aead.NonceSize()+len(body)+aead.Overhead())
	out[0] = sealedResponseVersion
	if _, err := rand.Read(out[1:]); err != nil {
		return nil, err
	}
	return aead.Seal(out, out[1:], body, recordID(scope, key)), nil
}

// openResponse opens what sealResponse sealed for the same scope and key.
func openResponse(scope, key string, sealed []byte) ([]byte, error) {
	aead, err := responseCipher(scope, key)
	if err != nil {
		return nil, err
	}
	if len(sealed) < 1+aead.NonceSize() || sealed[0] != sealedResponseVersion {
		return nil, errors.New("idempotent response: unknown format")
	}
	nonce := sealed[1 : 1+aead.NonceSize()]
	return aead.Open(nil, nonce, sealed[1+aead.NonceSize():], recordID(scope, key))
}
