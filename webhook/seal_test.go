package webhook_test

import (
	"bytes"
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

func TestSealerRoundTrip(t *testing.T) {
	s := newSealer(t, newKey(t))
	for _, plain := range []string{webhook.NewSecret(), "", "ünïcødé ✓", strings.Repeat("x", 10_000)} {
		sealed, err := s.Seal(plain)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(sealed, "v1:") {
			t.Fatalf("sealed %q lacks v1: prefix", sealed)
		}
		if plain != "" && strings.Contains(sealed, plain) {
			t.Fatal("sealed value contains the plaintext")
		}
		got, err := s.Open(sealed)
		if err != nil || got != plain {
			t.Fatalf("Open = %q, %v; want %q", got, err, plain)
		}
	}
	// A fresh nonce each time: equal secrets do not give equal rows.
	a, _ := s.Seal("same")
	b, _ := s.Seal("same")
	if a == b {
		t.Fatal("two seals of the same plaintext are equal")
	}
}

func TestSealerWrongKeyRefused(t *testing.T) {
	sealed, err := newSealer(t, newKey(t)).Seal("whsec_secret")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := newSealer(t, newKey(t)).Open(sealed); err == nil {
		t.Fatalf("opened with the wrong key: %q", got)
	}
}

func TestSealerTamperedRefused(t *testing.T) {
	s := newSealer(t, newKey(t))
	sealed, err := s.Seal("whsec_secret")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(sealed, "v1:"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []string
	for _, i := range []int{0, 11, 12, len(raw) - 1} { // nonce, first ciphertext byte, tag
		b := bytes.Clone(raw)
		b[i] ^= 0x01
		cases = append(cases, "v1:"+base64.StdEncoding.EncodeToString(b))
	}
	cases = append(cases,
		"v1:"+base64.StdEncoding.EncodeToString(raw[:len(raw)-1]), // truncated tag
		"v1:"+base64.StdEncoding.EncodeToString(raw[:10]),         // shorter than a nonce
		"v2:"+strings.TrimPrefix(sealed, "v1:"),                   // unknown version
		strings.TrimPrefix(sealed, "v1:"),                         // no version
		"v1:%%%",                                                  // not base64
		"",
	)
	for _, c := range cases {
		if got, err := s.Open(c); err == nil {
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
