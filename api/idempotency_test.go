package api

import (
	"bytes"
	"testing"
)

func TestASealedResponseOpensOnlyForItsCallerAndKey(t *testing.T) {
	body := []byte(`{"data":{"token":"cst_secret"}}`)
	sealed, err := sealResponse("ip:192.0.2.1", "order-1", body)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("cst_secret")) {
		t.Fatal("the sealed response holds the token in plaintext")
	}
	if got, err := openResponse("ip:192.0.2.1", "order-1", sealed); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("open = %q, %v; want the response", got, err)
	}
	for _, c := range []struct{ scope, key string }{{"ip:192.0.2.2", "order-1"}, {"ip:192.0.2.1", "order-2"}, {"key:key_x", "order-1"}} {
		if _, err := openResponse(c.scope, c.key, sealed); err == nil {
			t.Fatalf("the response opened for scope %q and key %q", c.scope, c.key)
		}
	}
	sealed[len(sealed)-1] ^= 1
	if _, err := openResponse("ip:192.0.2.1", "order-1", sealed); err == nil {
		t.Fatal("a modified record opened")
	}
}
