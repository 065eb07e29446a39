package observability

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The Grafana dashboard in deploy/ charts only series the processes serve:
// a metric renamed or dropped here fails until the dashboard follows.
func TestTheDashboardChartsServedSeries(t *testing.T) {
	dashboard, err := os.ReadFile("../../deploy/grafana/paymentsd.json")
	if err != nil {
		t.Fatal(err)
	}
	served := servedSeries(t)
	charted := regexp.MustCompile(`paymentsd_[a-z_]+`).FindAllString(string(dashboard), -1)
	if len(charted) < 10 {
		t.Fatalf("the dashboard charts %d paymentsd series; want the engine's main ones", len(charted))
	}
	for _, name := range charted {
		if base := strings.TrimSuffix(name, "_bucket"); !served[base] {
			t.Errorf("the dashboard charts %s, which no process serves", name)
		}
	}
}

// The alerting rules in deploy/ watch only series the processes serve,
// among them the reversal of a finalized payment (a reorg deeper than
// finality), which must never go unnoticed.
func TestTheAlertRulesWatchServedSeries(t *testing.T) {
	rules, err := os.ReadFile("../../deploy/kubernetes/alert-rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	served := servedSeries(t)
	watched := regexp.MustCompile(`expr: .*?(paymentsd_[a-z_]+)`).FindAllSubmatch(rules, -1)
	for _, m := range watched {
		if !served[string(m[1])] {
			t.Errorf("an alert watches %s, which no process serves", m[1])
		}
	}
	if !strings.Contains(string(rules), "paymentsd_payments_reversed_total") {
		t.Error("no alert on a finalized payment reversed past finality")
	}
}

// servedSeries are the paymentsd series metrics.go declares.
func servedSeries(t *testing.T) map[string]bool {
	t.Helper()
	source, err := os.ReadFile("metrics.go")
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for _, m := range regexp.MustCompile(`"(paymentsd_[a-z_]+)"`).FindAllSubmatch(source, -1) {
		served[string(m[1])] = true
	}
	return served
}
