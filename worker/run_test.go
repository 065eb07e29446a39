package worker

import (
	"net/http"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/internal/views"
)

// The activities get the webhook settings, and a delivering client of
// their own when none is given.
func TestActivitiesCarryTheWebhookSettings(t *testing.T) {
	d := Deps{Chains: chainwatch.Chains{}, Webhooks: Webhooks{DisableAfter: time.Hour, Shape: views.Shape("second")}}
	a := d.Activities()
	if a.Webhooks.Client == nil || a.Webhooks.DisableAfter != time.Hour || a.Webhooks.Shape != "second" || a.Chains == nil {
		t.Fatalf("activities = %+v", a)
	}
	mine := &http.Client{}
	d.Webhooks.Client = mine
	if d.Activities().Webhooks.Client != mine {
		t.Fatal("the given client is not the one that delivers")
	}
}
