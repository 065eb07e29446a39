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
	source, err := os.ReadFile("metrics.go")
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for _, m := range regexp.MustCompile(`"(paymentsd_[a-z_]+)"`).FindAllSubmatch(source, -1) {
		served[string(m[1])] = true
	}
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
