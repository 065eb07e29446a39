package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"golang.org/x/mod/semver"

	"github.com/paymentsd/paymentsd/internal/version"
	"github.com/paymentsd/paymentsd/workflows"
)

// DeploymentName is the Temporal Worker Deployment of the engine's workers:
// each release's workers are one version of it, named by their build ID.
const DeploymentName = "paymentsd"

// BuildID is this binary's build ID in the worker deployment: its release
// and revision (workflows.BuildID).
func BuildID() string {
	return workflows.BuildID(version.Version, version.Revision())
}

// deploymentVersion is the worker deployment version of a worker whose
// build ID is buildID (BuildID when empty).
func deploymentVersion(buildID string) sdkworker.WorkerDeploymentVersion {
	if buildID == "" {
		buildID = BuildID()
	}
	return sdkworker.WorkerDeploymentVersion{DeploymentName: DeploymentName, BuildID: buildID}
}

// promoteTimeout bounds how long a starting worker tries to make its
// version current: its version is registered by its first polls, which
// take a moment to reach the server.
const promoteTimeout = 2 * time.Minute

// Promote makes buildID the worker deployment's current version, unless the
// current one is of a later release: every new execution then starts on
// it, and the unversioned and AutoUpgrade executions move to it, while the
// pinned executions of the releases before drain on their own workers. A
// worker of an earlier release (a rollback, or a pod of the release being
// drained restarting) does not take the deployment back; `paymentsd admin
// worker-deployment --set-current` does that. It returns whether buildID
// is current, retrying while the version is not registered yet or the
// deployment changes under it, until promoteTimeout has passed.
func Promote(ctx context.Context, c client.Client, buildID string) (bool, error) {
	h := c.WorkerDeploymentClient().GetHandle(DeploymentName)
	deadline := time.Now().Add(promoteTimeout)
	for {
		current, err := promoteOnce(ctx, h, buildID)
		if err == nil || ctx.Err() != nil || time.Now().After(deadline) {
			return current, err
		}
		select {
		case <-ctx.Done():
			return false, err
		case <-time.After(time.Second):
		}
	}
}

func promoteOnce(ctx context.Context, h client.WorkerDeploymentHandle, buildID string) (bool, error) {
	d, err := h.Describe(ctx, client.WorkerDeploymentDescribeOptions{})
	if err != nil {
		return false, fmt.Errorf("describe worker deployment %s: %w", DeploymentName, err)
	}
	if cur := d.Info.RoutingConfig.CurrentVersion; cur != nil {
		if cur.BuildID == buildID {
			return true, nil
		}
		if laterRelease(cur.BuildID, buildID) {
			return false, nil
		}
	}
	if _, err := h.SetCurrentVersion(ctx, client.WorkerDeploymentSetCurrentVersionOptions{
		BuildID: buildID, ConflictToken: d.ConflictToken}); err != nil {
		return false, fmt.Errorf("set %s current in worker deployment %s: %w", buildID, DeploymentName, err)
	}
	return true, nil
}

// promote runs Promote for a starting worker and logs what came of it.
func promote(ctx context.Context, c client.Client, buildID string, log *slog.Logger) {
	current, err := Promote(ctx, c, buildID)
	switch {
	case ctx.Err() != nil:
	case err != nil:
		var denied *serviceerror.PermissionDenied
		if errors.As(err, &denied) {
			log.Error("this worker's version is not current, and its credentials may not make it so: run `paymentsd admin worker-deployment --set-current`",
				"deployment", DeploymentName, "buildId", buildID, "err", err)
			return
		}
		log.Error("this worker's version could not be made current", "deployment", DeploymentName, "buildId", buildID, "err", err)
	case current:
		log.Info("this worker's version is current: new executions start on it", "deployment", DeploymentName, "buildId", buildID)
	default:
		log.Warn("a later release's version is current: this worker serves only the executions pinned to its own",
			"deployment", DeploymentName, "buildId", buildID)
	}
}

// laterRelease tells whether build ID a is of a later release than b, by
// their releases' semantic versions (the build's revision after "+" does
// not count, a release candidate comes before its release); a build ID
// that is not one of the engine's is not later.
func laterRelease(a, b string) bool {
	return workflows.FromWorkerDeployment(a) && workflows.FromWorkerDeployment(b) &&
		semver.IsValid(a) && semver.IsValid(b) && semver.Compare(a, b) > 0
}
