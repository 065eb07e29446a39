package worker

import (
	"context"
	"net/http"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/payment/views"
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

// A worker starting beside another, or before Temporal is ready, retries
// what Temporal failed for a passing reason, and only that.
func TestStartRetriesWhatMayPass(t *testing.T) {
	calls := 0
	err := retryTransient(context.Background(), func() error {
		if calls++; calls < 3 {
			return serviceerror.NewCanceled("context canceled")
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("two passing failures: %v after %d calls; want success at the third", err, calls)
	}
	calls = 0
	err = retryTransient(context.Background(), func() error {
		calls++
		return serviceerror.NewInvalidArgument("no such workflow type")
	})
	if err == nil || calls != 1 {
		t.Fatalf("a lasting failure: %v after %d calls; want it returned at once", err, calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls = 0
	err = retryTransient(ctx, func() error {
		calls++
		return serviceerror.NewUnavailable("starting")
	})
	if err == nil || calls != 1 {
		t.Fatalf("stopped while starting: %v after %d calls; want the failure at once", err, calls)
	}
}
