package e2e

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// The hosted checkout page is served at the session's url, with a QR code
// of each payment option's EIP-681 request, and the public lookup it reads
// carries the plan's title and redirect.
func TestHostedCheckoutPage(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	plan := post(t, ts.URL, "/api/v1/projects/"+keys.id+"/payment-plans", keys.key, map[string]any{
		"title": "Annual plan", "amountUsd": "99", "redirectUrl": "https://shop.example/thanks",
		"merchantInfo": map[string]any{"name": "Example Shop"}})
	mustStatus(t, plan, http.StatusCreated)
	cs := post(t, ts.URL, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": plan.data()["id"]})
	mustStatus(t, cs, http.StatusCreated)
	token := str(cs.data()["token"])

	page, err := http.Get(ts.URL + "/checkout/" + token)
	if err != nil {
		t.Fatal(err)
	}
	html, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if page.StatusCode != 200 || !strings.HasPrefix(page.Header.Get("Content-Type"), "text/html") ||
		!bytes.Contains(html, []byte(`id="address"`)) || page.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("page: %d %s", page.StatusCode, page.Header)
	}
	// No other site may frame the page (clickjacking).
	if csp := page.Header.Get("Content-Security-Policy"); !slices.Contains(strings.Split(csp, "; "), "frame-ancestors 'none'") ||
		page.Header.Get("X-Frame-Options") != "DENY" {
		t.Fatalf("framing: Content-Security-Policy %q, X-Frame-Options %q", csp, page.Header.Get("X-Frame-Options"))
	}

	lookup := get(t, ts.URL, "/api/v1/checkout/sessions/"+token, "")
	summary := lookup.data()["paymentPlan"].(map[string]any)
	if summary["title"] != "Annual plan" || summary["redirectUrl"] != "https://shop.example/thanks" ||
		summary["merchantInfo"].(map[string]any)["name"] != "Example Shop" {
		t.Fatalf("plan summary = %v", summary)
	}

	opt := cs.data()["paymentOptions"].([]any)[0].(map[string]any)
	img, err := http.Get(ts.URL + "/checkout/" + token + "/qr/" + str(opt["assetDefinitionId"]) + ".png")
	if err != nil {
		t.Fatal(err)
	}
	png, _ := io.ReadAll(img.Body)
	img.Body.Close()
	if img.StatusCode != 200 || img.Header.Get("Content-Type") != "image/png" || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("qr: %d %s", img.StatusCode, img.Header.Get("Content-Type"))
	}
	for _, path := range []string{"/checkout/not-a-token", "/checkout/" + strings.Repeat("0", 64) + "/qr/usdc-devnet.png",
		"/checkout/" + token + "/qr/doge.png"} {
		if r, _ := http.Get(ts.URL + path); r.StatusCode != 404 {
			t.Errorf("%s: %d", path, r.StatusCode)
		}
	}
}
