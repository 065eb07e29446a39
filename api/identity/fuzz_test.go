package identity

import (
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/api/internal/rest/resttest"
)

// The account bodies: credentials, string fields and WebAuthn ceremony
// answers are decoded into a client error or values, never a panic; a
// credential that decodes is an object re-encoded as JSON.
func FuzzDecodeAccountBodies(f *testing.F) {
	for _, seed := range []string{
		`{"email":"a@b.co","password":"long enough pw"}`, `{"email":"a@b.co"}`, `{"email":7,"password":null}`,
		`{"challengeId":"wch_01m80h0jzc3psaavehj57fnh3h","credential":{"id":"x","response":{}},"name":"Laptop"}`,
		`{"challengeId":"x","credential":"not an object"}`, `{"credential":[1,2]}`, `{"role":"owner"}`, `{"xpub":""}`,
		`[]`, `{`, `null`, `{"a":{"b":[[[]]]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		email, password, err := decodeCredentials(body, "email", "password")
		resttest.CheckClientError(t, err)
		if err == nil && (email == "" && !strings.Contains(string(body), `"email":""`) || password == "" && !strings.Contains(string(body), `"password":""`)) {
			t.Fatalf("credentials %q %q decoded from %q", email, password, body)
		}
		fields, err := rest.BodyFields(body, []string{"role"}, "name")
		resttest.CheckClientError(t, err)
		if err == nil && fields["role"] == nil {
			t.Fatalf("a required field missing was accepted: %q", body)
		}
		id, _, credential, err := ceremonyBody(body, true)
		resttest.CheckClientError(t, err)
		if err == nil && (id == "" && !strings.Contains(string(body), `"challengeId":""`) || len(credential) == 0 || credential[0] != '{') {
			t.Fatalf("ceremony %q %q decoded from %q", id, credential, body)
		}
	})
}
