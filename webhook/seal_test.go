package webhook_test

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
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

func newKeyring(t *testing.T, keys ...webhook.Key) *webhook.Sealer {
	t.Helper()
	s, err := webhook.NewKeyring(keys)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A key rotation: the new key seals, values of the old keys still open
// (the legacy key's v1 and v2 values among them), Update moves each value
// to the new key, and once every value is moved the old keys can go.
func TestKeyringRotation(t *testing.T) {
	legacy, k1, k2 := newKey(t), newKey(t), newKey(t)
	before := newSealer(t, legacy) // a deployment from before key IDs
	v2, err := before.Seal(endpointID, "whsec_v2")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(v2, "v2:") {
		t.Fatalf("one bare key seals %q, want the v2: format it always wrote", v2)
	}
	v1 := legacySeal(t, legacy, "whsec_v1")
	first := newKeyring(t, webhook.Key{ID: "k1", Secret: k1}, webhook.Key{ID: webhook.LegacyKeyID, Secret: legacy})
	v3k1, err := first.Seal(endpointID, "whsec_k1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(v3k1, "v3:k1:") {
		t.Fatalf("sealed %q, want v3:k1:", v3k1)
	}

	ring := newKeyring(t, webhook.Key{ID: "k2", Secret: k2}, webhook.Key{ID: "k1", Secret: k1},
		webhook.Key{ID: webhook.LegacyKeyID, Secret: legacy})
	if ring.NewestKeyID() != "k2" {
		t.Fatalf("newest = %q", ring.NewestKeyID())
	}
	values := map[string]string{v1: "whsec_v1", v2: "whsec_v2", v3k1: "whsec_k1"}
	moved := map[string]string{}
	for sealed, plain := range values {
		if got, err := ring.Open(endpointID, sealed); err != nil || got != plain {
			t.Fatalf("Open(%.6s…) = %q, %v; want %q", sealed, got, err, plain)
		}
		if ring.Current(sealed) {
			t.Errorf("%.6s… is current, but is not under k2", sealed)
		}
		out, changed, err := ring.Update(endpointID, sealed)
		if err != nil || !changed || !strings.HasPrefix(out, "v3:k2:") {
			t.Fatalf("Update(%.6s…) = %q, %v, %v", sealed, out, changed, err)
		}
		if again, changed, err := ring.Update(endpointID, out); err != nil || changed || again != out {
			t.Errorf("Update of a current value = %q, %v, %v; want it unchanged", again, changed, err)
		}
		moved[out] = plain
	}
	if out, changed, err := ring.Update(endpointID, ""); out != "" || changed || err != nil {
		t.Errorf("Update(\"\") = %q, %v, %v", out, changed, err)
	}

	// The old keys retired: what was moved opens; what was not names the
	// key it needs.
	retired := newKeyring(t, webhook.Key{ID: "k2", Secret: k2})
	for sealed, plain := range moved {
		if got, err := retired.Open(endpointID, sealed); err != nil || got != plain {
			t.Errorf("after retirement Open = %q, %v; want %q", got, err, plain)
		}
	}
	for sealed, id := range map[string]string{v1: "0", v2: "0", v3k1: "k1"} {
		_, err := retired.Open(endpointID, sealed)
		var unknown *webhook.UnknownKeyError
		if !errors.As(err, &unknown) || unknown.KeyID != id {
			t.Fatalf("Open(%.6s…) with the key retired: %v, want an unknown key %q", sealed, err, id)
		}
		if !strings.Contains(err.Error(), `"`+id+`"`) || !strings.Contains(err.Error(), "k2") {
			t.Errorf("error %q does not name the missing key and the configured ones", err)
		}
		if _, _, err := retired.Update(endpointID, sealed); err == nil {
			t.Errorf("Update(%.6s…) without its key succeeded", sealed)
		}
		if got := retired.Reseal(endpointID, sealed); got != sealed {
			t.Errorf("Reseal without the key changed the value")
		}
	}
}

// A value's key ID is part of what is authenticated only through the
// key itself: naming another configured key, or tampering with the
// ciphertext of a keyed value, makes Open fail without a plaintext.
func TestKeyringTamperedRefused(t *testing.T) {
	ring := newKeyring(t, webhook.Key{ID: "k2", Secret: newKey(t)}, webhook.Key{ID: "k1", Secret: newKey(t)})
	sealed, err := ring.Seal(endpointID, "whsec_secret")
	if err != nil {
		t.Fatal(err)
	}
	body := strings.TrimPrefix(sealed, "v3:k2:")
	raw, _ := base64.StdEncoding.DecodeString(body)
	flipped := bytes.Clone(raw)
	flipped[len(flipped)-1] ^= 1
	for _, c := range []string{
		"v3:k1:" + body, // another configured key
		"v3:k2:" + base64.StdEncoding.EncodeToString(flipped),
		"v3:k2:" + base64.StdEncoding.EncodeToString(raw[:len(raw)-1]),
		"v2:" + body, // the legacy format: no legacy key here
		"v3:" + body, // no key ID
		"v3::" + body,
		"v3:k,2:" + body,
		"v3:k2:%%%",
	} {
		got, err := ring.Open(endpointID, c)
		if err == nil {
			t.Errorf("Open(%q) = %q, want an error", c, got)
			continue
		}
		if strings.Contains(err.Error(), "whsec_secret") {
			t.Errorf("error leaks the secret: %v", err)
		}
	}
	if got, err := ring.Open("we_other", sealed); err == nil {
		t.Errorf("opened for another endpoint: %q", got)
	}
}

func TestNewKeyringRefusesBadKeys(t *testing.T) {
	k := newKey(t)
	for name, keys := range map[string][]webhook.Key{
		"none":         nil,
		"duplicate ID": {{ID: "k1", Secret: k}, {ID: "k1", Secret: newKey(t)}},
		"empty ID":     {{ID: "", Secret: k}},
		"colon in ID":  {{ID: "k:1", Secret: k}},
		"short key":    {{ID: "k1", Secret: k[:16]}},
	} {
		if _, err := webhook.NewKeyring(keys); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestParseKeys(t *testing.T) {
	k0, k1, k2 := newKey(t), newKey(t), newKey(t)
	b64 := base64.StdEncoding.EncodeToString
	for in, want := range map[string][]webhook.Key{
		hex.EncodeToString(k0): {{ID: "0", Secret: k0}},
		b64(k0):                {{ID: "0", Secret: k0}},
		"k2:" + b64(k2) + ", k1:" + hex.EncodeToString(k1) + ",0:" + b64(k0): {
			{ID: "k2", Secret: k2}, {ID: "k1", Secret: k1}, {ID: "0", Secret: k0}},
		"2026-05:" + b64(k2) + "," + b64(k0): {{ID: "2026-05", Secret: k2}, {ID: "0", Secret: k0}},
	} {
		got, err := webhook.ParseKeys(in)
		if err != nil {
			t.Errorf("ParseKeys: %v", err)
			continue
		}
		if len(got) != len(want) {
			t.Errorf("ParseKeys gave %d keys, want %d", len(got), len(want))
			continue
		}
		for i := range want {
			if got[i].ID != want[i].ID || !bytes.Equal(got[i].Secret, want[i].Secret) {
				t.Errorf("key %d = %q, want %q", i, got[i].ID, want[i].ID)
			}
		}
	}
	for _, in := range []string{
		"",
		"k1:" + b64(k1) + ",",
		"k1:" + b64(k1) + ",k1:" + b64(k2),
		b64(k0) + "," + b64(k1), // two bare keys: both would be key 0
		"k 1:" + b64(k1),
		"k1:" + b64(k1[:16]),
		"k1:not a key at all",
	} {
		_, err := webhook.ParseKeys(in)
		if err == nil {
			t.Errorf("ParseKeys(%.20q…) succeeded", in)
			continue
		}
		for _, k := range [][]byte{k0, k1, k2} {
			if strings.Contains(err.Error(), b64(k)) || strings.Contains(err.Error(), b64(k[:16])) {
				t.Errorf("error echoes key material: %v", err)
			}
		}
	}
}
