package observability

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/version"
)

// /metrics names the build: paymentsd_build_info is 1 with its version
// and revision.
func TestTheMetricsNameTheBuild(t *testing.T) {
	rec := httptest.NewRecorder()
	Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	want := `paymentsd_build_info{revision="` + version.Revision() + `",version="` + version.Version + `"} 1`
	if !strings.Contains(string(body), want+"\n") {
		t.Fatalf("no %s in /metrics:\n%s", want, body)
	}
}
