package webhook_test

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/webhook"
)

func newKey(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, webhook.KeySize)
	rand.Read(k)
	return k
}

func newSealer(t *testing.T, key []byte) *webhook.Sealer {
	t.Helper()
	s, err := webhook.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const endpointID = "we_01m80h0jzc3psaavehj57fnh3h"

func TestSealerRoundTrip(t *testing.T) {
	s := newSealer(t, newKey(t))
	for _, plain := range []string{webhook.NewSecret(), "", "ünïcødé ✓", strings.Repeat("x", 10_000)} {
		sealed, err := s.Seal(endpointID, plain)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(sealed, "v2:") {
			t.Fatalf("sealed %q lacks v2: prefix", sealed)
		}
		if plain != "" && strings.Contains(sealed, plain) {
			t.Fatal("sealed value contains the plaintext")
		}
		got, err := s.Open(endpointID, sealed)
		if err != nil || got != plain {
			t.Fatalf("Open = %q, %v; want %q", got, err, plain)
		}
	}
	// A fresh nonce each time: equal secrets do not give equal rows.
	a, _ := s.Seal(endpointID, "same")
	b, _ := s.Seal(endpointID, "same")
	if a == b {
		t.Fatal("two seals of the same plaintext are equal")
	}
	if _, err := s.Seal("", "unbound"); err == nil {
		t.Fatal("sealed a secret for no endpoint")
	}
}

// A sealed secret opens only for the endpoint it was sealed for: copied
// into another endpoint's row, it does not open.
func TestSealerBindsTheSecretToItsEndpoint(t *testing.T) {
	s := newSealer(t, newKey(t))
	sealed, err := s.Seal(endpointID, "whsec_secret")
	if err != nil {
		t.Fatal(err)
	}
	for _, other := range []string{"we_01m80h0jzc3psaavehj57fnh3j", endpointID + " ", strings.ToUpper(endpointID), ""} {
		if got, err := s.Open(other, sealed); err == nil {
			t.Errorf("opened for %q: %q", other, got)
		}
	}
	// Nor can the binding be stripped by calling it the unbound format.
	if got, err := s.Open(endpointID, "v1:"+strings.TrimPrefix(sealed, "v2:")); err == nil {
		t.Errorf("opened as v1: %q", got)
	}
}

// legacySeal seals the way secrets were sealed before they were bound to
// their endpoint: "v1:" and no associated data.
func legacySeal(t *testing.T, key []byte, plain string) string {
	t.Helper()
	block, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	nonce := make([]byte, gcm.NonceSize())
	rand.Read(nonce)
	return "v1:" + base64.StdEncoding.EncodeToString(gcm.Seal(nonce, nonce, []byte(plain), nil))
}

// Secrets sealed before the binding still open, and Reseal binds them;
// anything else passes through Reseal unchanged.
func TestSealerOpensAndResealsLegacySecrets(t *testing.T) {
	key := newKey(t)
	s := newSealer(t, key)
	old := legacySeal(t, key, "whsec_old")
	if got, err := s.Open(endpointID, old); err != nil || got != "whsec_old" {
		t.Fatalf("legacy Open = %q, %v", got, err)
	}
	bound := s.Reseal(endpointID, old)
	if !strings.HasPrefix(bound, "v2:") {
		t.Fatalf("Reseal = %q, want v2:", bound)
	}
	if got, err := s.Open(endpointID, bound); err != nil || got != "whsec_old" {
		t.Fatalf("resealed Open = %q, %v", got, err)
	}
	if got, err := s.Open("we_other", bound); err == nil {
		t.Fatalf("resealed secret opened for another endpoint: %q", got)
	}
	current, _ := s.Seal(endpointID, "whsec_new")
	foreign := legacySeal(t, newKey(t), "whsec_x")
	for _, v := range []string{current, "", foreign, "v1:%%%"} {
		if got := s.Reseal(endpointID, v); got != v {
			t.Errorf("Reseal(%q) = %q, want it unchanged", v, got)
		}
	}
}

func TestSealerWrongKeyRefused(t *testing.T) {
	sealed, err := newSealer(t, newKey(t)).Seal(endpointID, "whsec_secret")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := newSealer(t, newKey(t)).Open(endpointID, sealed); err == nil {
		t.Fatalf("opened with the wrong key: %q", got)
	}
}

func TestSealerTamperedRefused(t *testing.T) {
	key := newKey(t)
	s := newSealer(t, key)
	sealed, err := s.Seal(endpointID, "whsec_secret")
	if err != nil {
		t.Fatal(err)
	}
	legacy := legacySeal(t, key, "whsec_secret")
	var cases []string
	for _, v := range []string{sealed, legacy} {
		prefix := v[:3]
		raw, err := base64.StdEncoding.DecodeString(v[3:])
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range []int{0, 11, 12, len(raw) - 1} { // nonce, first ciphertext byte, tag
			b := bytes.Clone(raw)
			b[i] ^= 0x01
			cases = append(cases, prefix+base64.StdEncoding.EncodeToString(b))
		}
		cases = append(cases,
			prefix+base64.StdEncoding.EncodeToString(raw[:len(raw)-1]), // truncated tag
			prefix+base64.StdEncoding.EncodeToString(raw[:10]),         // shorter than a nonce
			"v3:"+v[3:], // unknown version
			v[3:],       // no version
		)
	}
	cases = append(cases, "v2:%%%", "v1:%%%", "")
	for _, c := range cases {
		if got, err := s.Open(endpointID, c); err == nil {
			t.Errorf("Open(%q) = %q, want an error", c, got)
		}
	}
}

func TestNewSealerKeySize(t *testing.T) {
	for _, n := range []int{0, 16, 24, 31, 33} {
		if _, err := webhook.NewSealer(make([]byte, n)); err == nil {
			t.Errorf("NewSealer accepted a %d-byte key", n)
		}
	}
}

func TestParseKey(t *testing.T) {
	key := newKey(t)
	for _, s := range []string{
		hex.EncodeToString(key),
		strings.ToUpper(hex.EncodeToString(key)),
		base64.StdEncoding.EncodeToString(key),
		base64.RawStdEncoding.EncodeToString(key),
		base64.URLEncoding.EncodeToString(key),
		" " + base64.StdEncoding.EncodeToString(key) + "\n",
	} {
		got, err := webhook.ParseKey(s)
		if err != nil || !bytes.Equal(got, key) {
			t.Errorf("ParseKey(%q) = %x, %v; want %x", s, got, err, key)
		}
	}
	for _, s := range []string{
		"",
		hex.EncodeToString(key[:16]),       // 16 bytes of hex
		hex.EncodeToString(key)[:63] + "z", // 64 chars, not hex
		base64.StdEncoding.EncodeToString(key[:16]),       // 16 bytes of base64
		base64.StdEncoding.EncodeToString(append(key, 0)), // 33 bytes
		"correct horse battery staple",
	} {
		_, err := webhook.ParseKey(s)
		if err == nil {
			t.Errorf("ParseKey(%q) succeeded", s)
			continue
		}
		if len(s) > 8 && strings.Contains(err.Error(), s) {
			t.Errorf("ParseKey error echoes the key: %v", err)
		}
	}
}
