package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/paymentsd/paymentsd/internal/version"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/store/storetest"
)

// healthyTemporal is a Temporal client whose server answers.
type healthyTemporal struct{ client.Client }

func (healthyTemporal) CheckHealth(context.Context, *client.CheckHealthRequest) (*client.CheckHealthResponse, error) {
	return &client.CheckHealthResponse{}, nil
}

// /readyz says which release answers.
func TestReadinessNamesTheVersion(t *testing.T) {
	s, err := New(service.New(service.Deps{Store: storetest.NewStore(t), Temporal: healthyTemporal{}}), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	var body struct {
		Data struct{ Status, Version string }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("GET /readyz: %d %s", rec.Code, rec.Body)
	}
	if body.Data.Status != "ready" || body.Data.Version != version.Version || version.Version == "" {
		t.Fatalf("GET /readyz: %s; want status ready and version %s", rec.Body, version.Version)
	}
}
