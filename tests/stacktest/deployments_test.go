package stacktest

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/dev/devstack"
)

// The embedded server runs without Temporal's auto-scaled workers
// (dev/tools/autoscaledworkers): a versioned worker's deployment version
// is still described, as a server without compute configuration does.
func TestTheDevServerDescribesWorkerDeployments(t *testing.T) {
	tc, err := devstack.StartTemporal(devstack.TemporalConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Stop()
	c, err := client.Dial(client.Options{HostPort: tc.Address, Namespace: tc.Namespace})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	version := worker.WorkerDeploymentVersion{DeploymentName: "devcheck", BuildID: "b1"}
	w := worker.New(c, "devcheck", worker.Options{DeploymentOptions: worker.DeploymentOptions{
		UseVersioning: true, Version: version, DefaultVersioningBehavior: workflow.VersioningBehaviorPinned}})
	w.RegisterWorkflowWithOptions(func(workflow.Context) error { return nil }, workflow.RegisterOptions{Name: "noop"})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h := c.WorkerDeploymentClient().GetHandle(version.DeploymentName)
	for {
		d, err := h.DescribeVersion(ctx, client.WorkerDeploymentDescribeVersionOptions{BuildID: version.BuildID})
		if err == nil {
			if d.Info.Version != version {
				t.Fatalf("described %+v, want %+v", d.Info.Version, version)
			}
			return
		}
		var notFound *serviceerror.NotFound
		if !errors.As(err, &notFound) {
			t.Fatalf("describing a deployment version: %v", err)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the version was never registered: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
