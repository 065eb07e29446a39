package e2e

import (
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/keys"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
)

// csvExport reads a list's CSV export (Accept: text/csv).
func csvExport(t *testing.T, base, path, key string) (*http.Response, [][]string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "text/csv")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s as CSV: %d %s", path, res.StatusCode, raw)
	}
	rows, err := csv.NewReader(strings.NewReader(string(raw))).ReadAll()
	if err != nil {
		t.Fatalf("GET %s as CSV: %v\n%s", path, err, raw)
	}
	return res, rows
}

// column returns a CSV row's value by its header's name.
func column(rows [][]string, row int, name string) string {
	i := slices.Index(rows[0], name)
	if i < 0 {
		return "<no column " + name + ">"
	}
	return rows[row][i]
}

// The routes the dashboard reads, on real payments: a session paid in
// full, one underpaid (an exception) and a transfer to an ended session
// (unexpected). The overview sums them up in a time zone; the lists take
// the attention filters and the network; the CSV exports hold every row
// the filters keep with exact amounts and refuse pagination; a session's
// events are its history, and an event lists its deliveries; the views
// name their workflows; the deposit key is shown.
func TestTheRoutesTheDashboardReads(t *testing.T) {
	ts, e, p := projectAPI(t, apiOptions{})
	pk := projectKeys{p.Project.ID, p.SandboxKey}
	base := "/api/v1/projects/" + pk.id
	hooks := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) }))
	mustStatus(t, post(t, ts.URL, base+"/webhooks", pk.key, map[string]any{"url": hooks + "/h", "enabledEvents": []string{"*"}}), http.StatusCreated)

	empty := get(t, ts.URL, base+"/overview?timeZone=Pacific/Auckland", pk.key)
	mustStatus(t, empty, http.StatusOK)
	if o := empty.data(); o["timeZone"] != "Pacific/Auckland" || o["today"].(map[string]any)["paidUsd"] != "0.00" ||
		len(o["sessionsByStatus"].(map[string]any)) != 5 || !strings.HasSuffix(str(o["today"].(map[string]any)["from"]), "Z") {
		t.Fatalf("a new project's overview = %v", o)
	}

	paid := openSession(t, ts.URL, pk, "6", "usdc-devnet")
	paidTx := waitTx(t, ts.URL, pk, payToken(t, 2, str(paid["depositAddress"]), units("6000000")), "finalized")
	under := openSession(t, ts.URL, pk, "6", "usdc-devnet")
	payToken(t, 2, str(under["depositAddress"]), units("4500000"))
	waitSession(t, ts.URL, str(under["token"]), "underpaid", func(s map[string]any) bool { return s["exception"] == "underpaid" })
	short, _ := newAPI(t, apiOptions{lifetime: 2 * time.Second})
	shortLateWindow(t, pk.id)
	ended := openSession(t, short.URL, pk, "5", "usdc-devnet")
	waitWorkflowEnded(t, str(ended["id"]))
	stray := waitTx(t, ts.URL, pk, payToken(t, 2, str(ended["depositAddress"]), units("5000000")), "finalized")

	o := get(t, ts.URL, base+"/overview", pk.key).data()
	today, attention, byStatus := o["today"].(map[string]any), o["needsAttention"].(map[string]any), o["sessionsByStatus"].(map[string]any)
	if o["timeZone"] != "UTC" || today["paidUsd"] != "10.50" || today["payments"] != float64(2) ||
		o["thisMonth"].(map[string]any)["paidUsd"] != "10.50" || attention["exceptions"] != float64(1) ||
		attention["unexpectedTransactions"] != float64(1) || byStatus["completed"] != float64(1) ||
		byStatus["processing"] != float64(1) || byStatus["expired"] != float64(1) || byStatus["open"] != float64(0) {
		t.Fatalf("overview = %v; want 10.50 paid in 2 payments (the stray transfer counts for no session), 1 exception, 1 unexpected", o)
	}
	for _, bad := range []string{"?timeZone=Mars/Olympus_Mons", "?timeZone=", "?tz=UTC"} {
		if r := get(t, ts.URL, base+"/overview"+bad, pk.key); r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("overview%s = %d %s", bad, r.Status, r.Raw)
		}
	}

	// The attention filters and the network.
	if l := get(t, ts.URL, base+"/transactions?unexpected=true", pk.key).list(); len(l) != 1 || l[0].(map[string]any)["id"] != stray["id"] {
		t.Fatalf("unexpected transactions = %v", l)
	}
	if l := get(t, ts.URL, base+"/checkout-sessions?exception=true", pk.key).list(); len(l) != 1 || l[0].(map[string]any)["id"] != under["id"] {
		t.Fatalf("sessions with an exception = %v", l)
	}
	if r := get(t, ts.URL, base+"/transactions?network=devnet", pk.key); r.pagination()["total"] != float64(3) {
		t.Fatalf("devnet's transactions = %s", r.Raw)
	}
	if r := get(t, ts.URL, base+"/transactions?network=moonnet", pk.key); r.Status != http.StatusUnprocessableEntity || !slices.Contains(r.detailFields(), "network") {
		t.Fatalf("an unknown network = %d %s", r.Status, r.Raw)
	}

	// The CSV exports.
	res, rows := csvExport(t, ts.URL, base+"/transactions", pk.key)
	if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") ||
		!strings.Contains(res.Header.Get("Content-Disposition"), `filename="transactions-sandbox-`+time.Now().UTC().Format("2006-01-02")+`.csv"`) {
		t.Fatalf("export headers = %v", res.Header)
	}
	if len(rows) != 4 {
		t.Fatalf("the transactions export has %d rows, want a header and 3: %v", len(rows), rows)
	}
	last := 3 // oldest last: the full payment
	if column(rows, last, "id") != paidTx["id"] || column(rows, last, "amount") != "6" || column(rows, last, "amount_base_units") != "6000000" ||
		column(rows, last, "amount_usd") != "6.00" || column(rows, last, "asset") != "USDC" || column(rows, last, "tx_hash") != paidTx["txHash"] ||
		column(rows, last, "status") != "finalized" || column(rows, last, "checkout_session_id") != paid["id"] || column(rows, last, "network") != "devnet" ||
		column(rows, 1, "unexpected") != "true" {
		t.Fatalf("the transactions export: %v", rows)
	}
	if _, only := csvExport(t, ts.URL, base+"/transactions?unexpected=true", pk.key); len(only) != 2 || column(only, 1, "id") != stray["id"] {
		t.Fatalf("the filtered export: %v", only)
	}
	_, srows := csvExport(t, ts.URL, base+"/checkout-sessions?status=completed", pk.key)
	if len(srows) != 2 || column(srows, 1, "id") != paid["id"] || column(srows, 1, "paid") != "6 USDC on devnet" ||
		column(srows, 1, "amount_paid_usd") != "6.00" || column(srows, 1, "metadata") != "{}" {
		t.Fatalf("the completed sessions' export: %v", srows)
	}
	r := do(t, ts.URL, request{method: http.MethodGet, path: base + "/transactions?page=2", key: pk.key, headers: map[string]string{"Accept": "text/csv"}})
	if r.Status != http.StatusUnprocessableEntity || !slices.Contains(r.detailFields(), "page") {
		t.Fatalf("a paginated export = %d %s", r.Status, r.Raw)
	}
	other := newProject(t, e)
	r = do(t, ts.URL, request{method: http.MethodGet, path: "/api/v1/projects/" + other.Project.ID + "/transactions", key: pk.key, headers: map[string]string{"Accept": "text/csv"}})
	if r.Status != http.StatusNotFound || r.Header.Get("Content-Disposition") != "" {
		t.Fatalf("another project's export = %d %v %s", r.Status, r.Header, r.Raw)
	}

	// A session's events are its history; an event's deliveries.
	evs := get(t, ts.URL, base+"/events?objectId="+str(paid["id"])+"&limit=100", pk.key).list()
	var types []string
	for _, ev := range evs {
		m := ev.(map[string]any)
		if m["data"].(map[string]any)["id"] != paid["id"] {
			t.Fatalf("an event of another object: %v", m)
		}
		types = append(types, str(m["type"]))
	}
	if !slices.Contains(types, "checkout.session.created") || !slices.Contains(types, "checkout.session.completed") {
		t.Fatalf("the paid session's events = %v", types)
	}
	completed := evs[slices.Index(types, "checkout.session.completed")].(map[string]any)
	testwait.Until(t, 30*time.Second, func() (bool, string) {
		d := get(t, ts.URL, base+"/events/"+str(completed["id"])+"/deliveries", pk.key).list()
		return len(d) == 1 && d[0].(map[string]any)["status"] == "delivered" && len(d[0].(map[string]any)["attempts"].([]any)) == 1,
			fmt.Sprintf("the completed event's deliveries = %v", d)
	})
	if r := get(t, ts.URL, "/api/v1/projects/"+other.Project.ID+"/events/"+str(completed["id"])+"/deliveries", other.SandboxKey); r.Status != http.StatusNotFound {
		t.Fatalf("another project's event's deliveries = %d", r.Status)
	}

	// Workflow IDs, the explorer link (none on the dev chain), the deposit key.
	s := get(t, ts.URL, base+"/checkout-sessions/"+str(paid["id"]), pk.key).data()
	tx := get(t, ts.URL, base+"/transactions/"+str(paidTx["id"]), pk.key).data()
	if s["workflowId"] != "checkout-session/"+str(paid["id"]) || tx["workflowId"] != "transaction/1337/"+strings.ToLower(str(paidTx["txHash"])) ||
		tx["explorerUrl"] != nil {
		t.Fatalf("session workflow %v, transaction workflow %v, explorer %v", s["workflowId"], tx["workflowId"], tx["explorerUrl"])
	}
	_, xpub := walletOf(t, pk.id, false)
	// An API key reads the key's fingerprint and first address, never
	// the key (docs/security.md "Tenant isolation of deposit keys").
	dk, _ := keys.ParseKey(xpub)
	first, _ := dk.DeriveAddress(0)
	if k := get(t, ts.URL, base+"/deposit-key", pk.key).data(); k["xpub"] != nil || k["fingerprint"] != dk.Identity() || k["firstAddress"] != first.Hex() ||
		k["environment"] != "sandbox" || k["addressesIssued"] != float64(3) {
		t.Fatalf("deposit key = %v", k)
	}
}
