package attack

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/paymentsd/paymentsd/api"
	v1 "github.com/paymentsd/paymentsd/api/gen/paymentsd/v1"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/tests/stacktest"
)

// The world the attacks are made in: a victim project with a resource of
// every kind, and an attacker's project.
type world struct {
	victim, attacker tenant
	// params are the victim's values of every path parameter.
	params map[string]string
	// victimIDs are the IDs of the victim's sandbox resources: no
	// response to anyone else may hold one.
	victimIDs []string
}

var (
	worldOnce sync.Once
	theWorld  world
)

func setup(t *testing.T) world {
	t.Helper()
	worldOnce.Do(func() {
		w := world{victim: newTenant(t, "Victim shop"), attacker: newTenant(t, "Attacker")}
		key := w.victim.SandboxKey
		proj := "/api/v1/projects/" + w.victim.Project.ID
		plan := mustJSON(t, http.StatusCreated)(call(t, "POST", proj+"/payment-plans", key,
			[]byte(`{"title":"Victim's plan","amountUsd":"10"}`), nil))
		session := mustJSON(t, http.StatusCreated)(call(t, "POST", "/api/v1/checkout/sessions", "",
			[]byte(`{"paymentPlanId":"`+str(plan["id"])+`","email":"buyer@victim.test"}`), nil))
		hook := mustJSON(t, http.StatusCreated)(call(t, "POST", proj+"/webhooks", key,
			[]byte(`{"url":"https://hooks.victim.test/paymentsd","enabledEvents":["*"]}`), nil))
		secrets.add(str(session["token"]), str(hook["secret"]))
		event := mustJSON(t, http.StatusAccepted)(call(t, "POST", proj+"/webhooks/"+str(hook["id"])+"/test", key, nil, nil))
		var delivery string
		testwait.Until(t, 20*time.Second, func() (bool, string) {
			_, raw := call(t, "GET", proj+"/webhooks/"+str(hook["id"])+"/deliveries", key, nil, nil)
			var env struct{ Data []map[string]any }
			_ = json.Unmarshal(raw, &env)
			if len(env.Data) > 0 {
				delivery = str(env.Data[0]["id"])
			}
			return delivery != "", fmt.Sprintf("the victim's test event has no delivery: %s", raw)
		})
		// A refund of the session, paid by a finalized transfer recorded
		// as the scanner would: the refund's routes then name a real one.
		now := time.Now().UTC()
		if err := stack.Store.Payments().InsertTransaction(context.Background(), payment.Transaction{ID: payment.NewID(payment.PrefixTx, now),
			ProjectID: w.victim.Project.ID, CheckoutSessionID: str(session["id"]), PaymentPlanID: str(plan["id"]),
			Status: payment.TxFinalized, Network: "devnet", ChainID: 1337, TxHash: "0x" + strings.Repeat("ab", 32),
			AssetDefinitionID: "usdc-devnet", Symbol: "USDC", Amount: "10", AmountBaseUnits: "10000000",
			AmountUSD: decimal.NewFromInt(10), Version: 1, CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		refund := mustJSON(t, http.StatusCreated)(call(t, "POST", proj+"/refunds", key,
			[]byte(`{"checkoutSessionId":"`+str(session["id"])+`","amount":"4"}`), nil))
		claimToken := str(refund["claimUrl"])[strings.LastIndex(str(refund["claimUrl"]), "/")+1:]
		secrets.add(claimToken)
		// The batch pays from a treasury the victim proved it controls.
		if err := stacktest.ProveAddress(stack.Store, w.victim.Project.ID, "0x00000000000000000000000000000000000000aa"); err != nil {
			t.Fatal(err)
		}
		batch := mustJSON(t, http.StatusCreated)(call(t, "POST", proj+"/payout-batches", key,
			[]byte(`{"fromAddress":"0x00000000000000000000000000000000000000aa","payouts":[`+
				`{"address":"0x000000000000000000000000000000000000bEEF","asset":"usdc-devnet","amount":"1","reference":"victim-supplier"}]}`), nil))
		payout := batch["payouts"].([]any)[0].(map[string]any)
		w.params = map[string]string{
			"refundId":      str(refund["id"]),
			"batchId":       str(batch["id"]),
			"payoutId":      str(payout["id"]),
			"claimToken":    claimToken,
			"projectId":     w.victim.Project.ID,
			"planId":        str(plan["id"]),
			"sessionId":     str(session["id"]),
			"sessionToken":  str(session["token"]),
			"webhookId":     str(hook["id"]),
			"eventId":       str(event["id"]),
			"deliveryId":    delivery,
			"transactionId": payment.NewID(payment.PrefixTx, time.Now()), // none is paid: a well-formed ID
			"keyId":         w.victim.sandboxKeyID,
			"userId":        w.victim.userID,
			"userSessionId": w.victim.userSessionID,
			"passkeyId":     payment.NewID(payment.PrefixPasskey, time.Now()),     // the victim has none: a well-formed ID
			"invitationId":  payment.NewID(payment.PrefixInvitation, time.Now()),  // none pending: a well-formed ID
			"clientId":      payment.NewID(payment.PrefixOAuthClient, time.Now()), // the victim has none: a well-formed ID
			"grantId":       payment.NewID(payment.PrefixOAuthGrant, time.Now()),
			"file":          "qr.png",
			"address":       "0x000000000000000000000000000000000000bEEF", // claimed by nobody: a well-formed address
		}
		w.victimIDs = []string{str(plan["id"]), str(session["id"]), str(hook["id"]), str(event["id"]), delivery, str(refund["id"]),
			str(batch["id"]), str(payout["id"])}
		theWorld = w
	})
	if theWorld.params == nil {
		t.Fatal("the world could not be set up")
	}
	return theWorld
}

var pathParam = regexp.MustCompile(`\{([A-Za-z]+)\}`)

// fill puts the victim's values in a route's pattern; a parameter the
// suite has no value for fails the test, so a new route's parameter is
// given one.
func (w world) fill(t *testing.T, pattern string) string {
	t.Helper()
	return pathParam.ReplaceAllStringFunc(pattern, func(m string) string {
		v, ok := w.params[m[1:len(m)-1]]
		if !ok {
			t.Fatalf("route %s: the attack suite has no value for %s: add one in setup", pattern, m)
		}
		return v
	})
}

// namesResource tells whether a route names one of the project's
// resources (not only the project).
func namesResource(pattern string) bool {
	return len(pathParam.FindAllString(pattern, -1)) > 1
}

// Every keyed REST route refuses a call without a key or with a malformed
// one (401), and answers another project's key as if the victim's
// resources did not exist (404). The victim's own key of the other
// environment sees none of the sandbox resources: 404 for a resource,
// lists without them.
func TestEveryRouteRefusesOtherCallers(t *testing.T) {
	w := setup(t)
	routes := server.Routes()
	if len(routes) < 20 {
		t.Fatalf("the router lists %d routes", len(routes))
	}
	for _, r := range routes {
		if r.Access == "public" {
			tally.add("auth: REST", "public route, no credentials needed")
			continue
		}
		if r.Access == "oauth" {
			// The authorization server authenticates clients, not keys:
			// an API key or a cookie gets no token from it.
			for who, h := range map[string]map[string]string{"the project's API key": {"Authorization": "Bearer " + w.victim.SandboxKey},
				"the owner's cookie": w.victim.cookie} {
				res, raw := call(t, r.Method, r.Pattern, "", nil, h)
				if res.StatusCode >= 500 || strings.Contains(string(raw), "access_token") || strings.Contains(string(raw), `"active":true`) {
					t.Errorf("%s %s with %s: %d %s", r.Method, r.Pattern, who, res.StatusCode, raw)
				}
				tally.add("auth: OAuth endpoints", fmt.Sprintf("%s → %d, no token", who, res.StatusCode))
			}
			continue
		}
		path := w.fill(t, r.Pattern)
		var body []byte
		if r.Method == "POST" || r.Method == "PATCH" {
			body = []byte(`{}`)
		}
		attemptAs := func(who, key string, headers map[string]string, want int) {
			res, raw := call(t, r.Method, path, key, body, headers)
			if res.StatusCode != want {
				t.Errorf("%s %s with %s: %d %s; want %d", r.Method, r.Pattern, who, res.StatusCode, raw, want)
			}
			assertEnvelopeError(t, r.Method+" "+r.Pattern, raw)
			assertNoVictimData(t, w, r.Method+" "+r.Pattern+" with "+who, raw)
			tally.add("auth: REST", fmt.Sprintf("%s → %d", who, res.StatusCode))
		}
		switch r.Access {
		case "session_cookie":
			// A user's own routes: no key signs a user in; another
			// user's cookie finds none of the victim's sessions.
			attemptAs("no cookie", "", nil, http.StatusUnauthorized)
			attemptAs("the project's API key", w.victim.SandboxKey, nil, http.StatusUnauthorized)
			attemptAs("a forged cookie", "", map[string]string{"Cookie": api.SessionCookie + "=" + strings.Repeat("ab", 32)}, http.StatusUnauthorized)
			if strings.Contains(r.Pattern, "{userSessionId}") || strings.Contains(r.Pattern, "{passkeyId}") {
				attemptAs("another user's cookie", "", w.attacker.cookie, http.StatusNotFound)
			}
			continue
		case "session_cookie_member":
			// Keys, members and settings: members only, never a key.
			attemptAs("no credentials", "", nil, http.StatusUnauthorized)
			attemptAs("a malformed key", "svc_test_not-a-key", nil, http.StatusUnauthorized)
			attemptAs("another project's key", w.attacker.SandboxKey, nil, http.StatusNotFound)
			attemptAs("the project's own sandbox key", w.victim.SandboxKey, nil, http.StatusForbidden)
			attemptAs("the project's own live key", w.victim.LiveKey, nil, http.StatusForbidden)
			attemptAs("a non-member's cookie", "", w.attacker.cookie, http.StatusNotFound)
			continue
		}
		attempt := func(who, key string, want int) { attemptAs(who, key, nil, want) }
		if r.Access == "api_key" {
			attempt("no key", "", http.StatusUnauthorized)
		} else {
			attempt("no key (acts anonymously)", "", http.StatusUnprocessableEntity) // {} names no plan
		}
		attempt("a malformed key", "svc_test_not-a-key", http.StatusUnauthorized)
		if r.Access == "api_key_optional" {
			// Creating a session with another project's key for the
			// victim's plan: the plan is not the key's.
			res, raw := call(t, r.Method, path, w.attacker.SandboxKey, []byte(`{"paymentPlanId":"`+w.params["planId"]+`"}`), nil)
			if res.StatusCode != http.StatusUnprocessableEntity {
				t.Errorf("%s %s with another project's key: %d %s", r.Method, r.Pattern, res.StatusCode, raw)
			}
			tally.add("auth: REST", fmt.Sprintf("another project's key → %d", res.StatusCode))
			continue
		}
		attempt("another project's key", w.attacker.SandboxKey, http.StatusNotFound)
		switch {
		case namesResource(r.Pattern):
			attempt("the other environment's key", w.victim.LiveKey, http.StatusNotFound)
		case r.Method == "GET":
			res, raw := call(t, r.Method, path, w.victim.LiveKey, nil, nil)
			if res.StatusCode != http.StatusOK {
				t.Errorf("GET %s with the live key: %d %s", r.Pattern, res.StatusCode, raw)
			}
			assertNoVictimData(t, w, "GET "+r.Pattern+" with the live key", raw)
			tally.add("auth: REST", "the other environment's key → 200 without the other environment's data")
		default:
			tally.add("auth: REST", "the other environment's key → not tried: it creates in its own environment")
		}
	}
}

// The same for every Connect procedure that needs a key.
func TestEveryConnectProcedureRefusesOtherCallers(t *testing.T) {
	w := setup(t)
	svc := v1.File_paymentsd_v1_payments_proto.Services().ByName("PaymentsService")
	methods := svc.Methods()
	if methods.Len() == 0 {
		t.Fatal("no PaymentsService methods")
	}
	for i := range methods.Len() {
		m := methods.Get(i)
		path := "/" + string(svc.FullName()) + "/" + string(m.Name())
		body := connectRequest(w, m.Input())
		attempt := func(who, key string, want int) {
			res, raw := call(t, "POST", path, key, body, nil)
			if res.StatusCode != want {
				t.Errorf("%s with %s: %d %s; want %d", m.Name(), who, res.StatusCode, raw, want)
			}
			assertNoVictimData(t, w, string(m.Name())+" with "+who, raw)
			tally.add("auth: Connect", fmt.Sprintf("%s → %d", who, res.StatusCode))
		}
		attempt("no key", "", http.StatusUnauthorized)
		attempt("a malformed key", "svc_test_not-a-key", http.StatusUnauthorized)
		attempt("another project's key", w.attacker.SandboxKey, http.StatusNotFound)
		switch {
		case strings.HasPrefix(string(m.Name()), "Create"):
			tally.add("auth: Connect", "the other environment's key → not tried: it creates in its own environment")
		case hasResourceField(m.Input()):
			attempt("the other environment's key", w.victim.LiveKey, http.StatusNotFound)
		default:
			attempt("the other environment's key", w.victim.LiveKey, http.StatusOK)
		}
	}
}

// connectRequest is a Connect JSON request naming the victim's resources
// in the fields the procedure's input has.
func connectRequest(w world, in protoreflect.MessageDescriptor) []byte {
	req := map[string]string{}
	for field, param := range map[string]string{"project_id": "projectId", "plan_id": "planId",
		"transaction_id": "transactionId", "session_id": "sessionId", "refund_id": "refundId", "checkout_session_id": "sessionId",
		"batch_id": "batchId", "payout_id": "payoutId"} {
		if f := in.Fields().ByName(protoreflect.Name(field)); f != nil {
			req[f.JSONName()] = w.params[param]
		}
	}
	b, _ := json.Marshal(req)
	return b
}

func hasResourceField(in protoreflect.MessageDescriptor) bool {
	for _, f := range []protoreflect.Name{"plan_id", "transaction_id", "session_id", "refund_id", "checkout_session_id", "batch_id", "payout_id"} {
		if in.Fields().ByName(f) != nil {
			return true
		}
	}
	return false
}

// gzipBomb is a small gzip stream of n zero bytes.
func gzipBomb(n int) []byte {
	var b bytes.Buffer
	z, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	chunk := make([]byte, 1<<20)
	for n > 0 {
		k := min(n, len(chunk))
		_, _ = z.Write(chunk[:k])
		n -= k
	}
	_ = z.Close()
	return b.Bytes()
}

// allocated runs f and returns the bytes the process allocated meanwhile.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

const bombSize = 256 << 20 // expanded; about 250 KiB compressed

// An oversized body is a 413 on every REST route that takes one, a
// compressed body a 415 (REST reads JSON as sent), and a compressed or
// oversized Connect message is refused as resource_exhausted; none is
// expanded: each attempt allocates far less than the bomb's size.
func TestOversizedAndCompressedBodiesAreRefusedWithoutGrowth(t *testing.T) {
	w := setup(t)
	bomb, big := gzipBomb(bombSize), []byte(`{"title":"`+strings.Repeat("x", 2<<20)+`"}`)
	check := func(what string, n uint64) {
		if n > bombSize/4 {
			t.Errorf("%s: %d MiB allocated; the body was expanded", what, n>>20)
		}
	}
	for _, r := range server.Routes() {
		if r.Method != "POST" && r.Method != "PATCH" {
			continue
		}
		path, key, cookie := w.fill(t, r.Pattern), w.victim.SandboxKey, map[string]string(nil)
		if strings.HasPrefix(r.Access, "session_cookie") {
			key, cookie = "", w.victim.cookie
		}
		for _, c := range []struct {
			name    string
			body    []byte
			headers map[string]string
			want    int
		}{
			{"2 MiB body", big, nil, http.StatusRequestEntityTooLarge},
			{"gzip bomb", bomb, map[string]string{"Content-Encoding": "gzip"}, http.StatusUnsupportedMediaType},
		} {
			var res *http.Response
			var raw []byte
			headers := maps.Clone(c.headers)
			if headers == nil {
				headers = map[string]string{}
			}
			maps.Copy(headers, cookie)
			if r.Access == "oauth" {
				headers["Content-Type"] = "application/x-www-form-urlencoded" // the authorization server reads forms
			}
			n := allocated(func() { res, raw = call(t, r.Method, path, key, c.body, headers) })
			if res.StatusCode != c.want {
				t.Errorf("%s %s, %s: %d %.200s; want %d", r.Method, r.Pattern, c.name, res.StatusCode, raw, c.want)
			}
			assertEnvelopeError(t, r.Method+" "+r.Pattern, raw)
			tally.add("bodies: REST", fmt.Sprintf("%s → %d, under %d MiB allocated", c.name, res.StatusCode, bombSize/4>>20))
			check(r.Method+" "+r.Pattern+", "+c.name, n)
		}
	}
	for _, svc := range []protoreflect.ServiceDescriptor{
		v1.File_paymentsd_v1_payments_proto.Services().ByName("PaymentsService"),
		v1.File_paymentsd_v1_payments_proto.Services().ByName("CheckoutService"),
	} {
		for i := range svc.Methods().Len() {
			m := svc.Methods().Get(i)
			path := "/" + string(svc.FullName()) + "/" + string(m.Name())
			for _, c := range []struct {
				name    string
				body    []byte
				headers map[string]string
			}{
				{"2 MiB message", big, nil},
				{"gzip bomb", bomb, map[string]string{"Content-Encoding": "gzip"}},
			} {
				var res *http.Response
				var raw []byte
				n := allocated(func() { res, raw = call(t, "POST", path, w.victim.SandboxKey, c.body, c.headers) })
				var e struct{ Code string }
				_ = json.Unmarshal(raw, &e)
				if e.Code != "resource_exhausted" {
					t.Errorf("%s, %s: %d %.200s; want resource_exhausted", path, c.name, res.StatusCode, raw)
				}
				tally.add("bodies: Connect", fmt.Sprintf("%s → %s, under %d MiB allocated", c.name, e.Code, bombSize/4>>20))
				check(path+", "+c.name, n)
			}
		}
	}
}

// Malformed input never gets a 500: every REST route that takes a body
// answers each malformed one with a 4xx in the error envelope, and every
// GET route each malformed query.
func TestMalformedInputIsAClientError(t *testing.T) {
	w := setup(t)
	deep := strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000)
	bodies := map[string]string{
		"not JSON":          `not json`,
		"truncated JSON":    `{"title":`,
		"an array":          `[1,2]`,
		"wrong types":       `{"title":5,"amountUsd":[],"url":{},"enabledEvents":"*","paymentPlanId":7}`,
		"a huge exponent":   `{"amountUsd":1e400,"title":"x"}`,
		"a 100-digit int":   `{"amountUsd":` + strings.Repeat("9", 100) + `,"title":"x"}`,
		"10,000 levels":     deep,
		"duplicate keys":    `{"title":"a","title":"b","amountUsd":"1","amountUsd":"2"}`,
		"invalid UTF-8":     "{\"title\":\"\xff\xfe\"}",
		"unknown fields":    `{"isAdmin":true,"projectId":"proj_x"}`,
		"null":              `null`,
		"a string":          `"hello"`,
		"a NUL byte":        "{\"title\":\"a\x00b\"}",
		"a 10 KiB key name": `{"` + strings.Repeat("k", 10<<10) + `":1}`,
	}
	for _, r := range server.Routes() {
		if r.Method != "POST" && r.Method != "PATCH" {
			continue
		}
		path, key, cookie := w.fill(t, r.Pattern), w.victim.SandboxKey, map[string]string(nil)
		if strings.HasPrefix(r.Access, "session_cookie") {
			key, cookie = "", w.victim.cookie
		}
		for name, b := range bodies {
			res, raw := call(t, r.Method, path, key, []byte(b), cookie)
			if res.StatusCode < 400 || res.StatusCode >= 500 || res.StatusCode == http.StatusUnauthorized {
				t.Errorf("%s %s with %s: %d %.300s; want a client error", r.Method, r.Pattern, name, res.StatusCode, raw)
			}
			assertEnvelopeError(t, r.Method+" "+r.Pattern+" with "+name, raw)
			tally.add("malformed: REST bodies", fmt.Sprintf("→ %d", res.StatusCode))
		}
	}
	queries := []string{"page=0", "page=-1", "limit=0", "limit=1000000000", "limit=1e9", "page=x", "from=yesterday",
		"to=2026-02-30", "from=2026-02-01&to=2026-01-01", "status=%00", "cursor=abc", "isLive=maybe", "page=1&page=2",
		"limit=" + strings.Repeat("9", 100), "from=" + strings.Repeat("2", 5000)}
	for _, r := range server.Routes() {
		if r.Method != "GET" {
			continue
		}
		path, key, cookie := w.fill(t, r.Pattern), w.victim.SandboxKey, map[string]string(nil)
		switch {
		case r.Access == "public":
			key = ""
		case strings.HasPrefix(r.Access, "session_cookie"):
			key, cookie = "", w.victim.cookie
		}
		for _, q := range queries {
			res, raw := call(t, "GET", path+"?"+q, key, nil, cookie)
			if res.StatusCode >= 500 {
				t.Errorf("GET %s?%s: %d %.300s", r.Pattern, q, res.StatusCode, raw)
			}
			tally.add("malformed: REST queries", fmt.Sprintf("→ %d", res.StatusCode))
		}
	}
	// Malformed IDs in the path.
	for _, r := range server.Routes() {
		if !namesResource(r.Pattern) || r.Access != "api_key" {
			continue
		}
		for _, bad := range []string{"x", "..%2f..%2fetc", strings.Repeat("a", 5000), "plan_" + strings.Repeat("z", 26), "%00"} {
			path := pathParam.ReplaceAllStringFunc(r.Pattern, func(m string) string {
				if m == "{projectId}" {
					return w.victim.Project.ID
				}
				return bad
			})
			var body []byte
			if r.Method == "POST" || r.Method == "PATCH" {
				body = []byte(`{}`)
			}
			res, raw := call(t, r.Method, path, w.victim.SandboxKey, body, nil)
			if res.StatusCode != http.StatusNotFound && res.StatusCode != http.StatusBadRequest {
				t.Errorf("%s %s with the ID %.20q: %d %.300s; want 404", r.Method, r.Pattern, bad, res.StatusCode, raw)
			}
			tally.add("malformed: path IDs", fmt.Sprintf("→ %d", res.StatusCode))
		}
	}
}

// assertEnvelopeError checks an error answer is in the spec's envelope.
func assertEnvelopeError(t *testing.T, what string, raw []byte) {
	t.Helper()
	var env struct {
		Success *bool
		Error   *struct{ Code string }
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		t.Errorf("%s: the answer is not JSON: %.200s", what, raw)
		return
	}
	if env.Success != nil && *env.Success {
		return
	}
	if env.Success == nil || env.Error == nil || env.Error.Code == "" {
		t.Errorf("%s: not the error envelope: %.200s", what, raw)
	}
}

// assertNoVictimData checks an answer holds none of the victim's IDs but
// in meta.path, which repeats the path the caller sent.
func assertNoVictimData(t *testing.T, w world, what string, raw []byte) {
	t.Helper()
	var env map[string]any
	if json.Unmarshal(raw, &env) == nil {
		delete(env, "meta")
		raw, _ = json.Marshal(env)
	}
	for _, id := range w.victimIDs {
		if bytes.Contains(raw, []byte(id)) {
			t.Errorf("%s: the answer holds the victim's %s: %.300s", what, id, raw)
		}
	}
}

func mustJSON(t *testing.T, status int) func(*http.Response, []byte) map[string]any {
	return func(res *http.Response, raw []byte) map[string]any {
		t.Helper()
		if res.StatusCode != status {
			t.Fatalf("%s %s: %d %s; want %d", res.Request.Method, res.Request.URL.Path, res.StatusCode, raw, status)
		}
		var env struct{ Data map[string]any }
		if err := json.Unmarshal(raw, &env); err != nil {
			t.Fatal(err)
		}
		return env.Data
	}
}

func str(v any) string { s, _ := v.(string); return s }

// A revoked key and a key rolled without grace are refused at once on
// REST and Connect alike.
func TestARevokedKeyIsRefused(t *testing.T) {
	w := setup(t)
	proj := "/api/v1/projects/" + w.victim.Project.ID
	for _, end := range []string{"revoke", "roll"} {
		created := mustJSON(t, http.StatusCreated)(call(t, "POST", proj+"/api-keys", "", nil, w.victim.cookie))
		key := str(created["secret"])
		id := str(created["apiKey"].(map[string]any)["id"])
		secrets.add(key)
		mustJSON(t, http.StatusOK)(call(t, "GET", proj, key, nil, nil))
		res, raw := call(t, "POST", proj+"/api-keys/"+id+"/"+end, "", nil, w.victim.cookie)
		if res.StatusCode != http.StatusOK && res.StatusCode != http.StatusCreated {
			t.Fatalf("%s: %d %s", end, res.StatusCode, raw)
		}
		var rolled struct{ Data struct{ Secret string } }
		_ = json.Unmarshal(raw, &rolled)
		secrets.add(rolled.Data.Secret)
		for _, c := range []struct{ method, path string }{{"GET", proj}, {"POST", "/paymentsd.v1.PaymentsService/GetProject"}} {
			var body []byte
			if c.method == "POST" {
				body = []byte(`{"projectId":"` + w.victim.Project.ID + `"}`)
			}
			res, raw := call(t, c.method, c.path, key, body, nil)
			if res.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s %s with a key after %s: %d %s", c.method, c.path, end, res.StatusCode, raw)
			}
			tally.add("auth: ended keys", fmt.Sprintf("%s, %s → %d", end, c.method, res.StatusCode))
		}
	}
}

// The session cookie of a project's owner reads every keyed route as the
// project's sandbox key does: the same status, in both environments.
func TestTheCookieReadsEveryKeyedRouteAsTheKeyDoes(t *testing.T) {
	w := setup(t)
	for _, r := range server.Routes() {
		if r.Access != "api_key" || r.Method != "GET" {
			continue
		}
		path := w.fill(t, r.Pattern)
		for _, env := range []struct{ name, key string }{{"sandbox", w.victim.SandboxKey}, {"live", w.victim.LiveKey}} {
			byKey, rawKey := call(t, "GET", path, env.key, nil, nil)
			headers := maps.Clone(w.victim.cookie)
			headers[api.EnvironmentHeader] = env.name
			byCookie, rawCookie := call(t, "GET", path, "", nil, headers)
			if byKey.StatusCode != byCookie.StatusCode {
				t.Errorf("GET %s in %s: the key gets %d, the cookie %d: %.200s / %.200s", r.Pattern, env.name, byKey.StatusCode, byCookie.StatusCode, rawKey, rawCookie)
			}
			tally.add("auth: the owner's cookie", fmt.Sprintf("as the %s key → %d", env.name, byCookie.StatusCode))
		}
	}
}
