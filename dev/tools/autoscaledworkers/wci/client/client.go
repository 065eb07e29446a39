// Package client is the worker-controller client of Temporal's
// auto-scaled workers, reduced to its interface and a client that answers
// Unimplemented: the dev stack's embedded server runs no worker
// controllers, so it needs none of the compute providers (AWS, Google
// Cloud Run, Kubernetes) whose clients the real package compiles in.
package client

import (
	"context"

	deploymentpb "go.temporal.io/api/deployment/v1"
	"go.temporal.io/api/serviceerror"
	"go.uber.org/fx"
	"google.golang.org/protobuf/types/known/timestamppb"

	"go.temporal.io/auto-scaled-workers/wci/workflow/iface"
	"go.temporal.io/server/common/namespace"
)

// Client is the upstream interface, unchanged.
type Client interface {
	UpdateTaskQueueName(ctx context.Context, newTaskQueueName string) error
	WorkerControllerInstanceExists(ctx context.Context, namespaceEntry *namespace.Namespace, version *deploymentpb.WorkerDeploymentVersion) (bool, error)
	DescribeWorkerControllerInstance(ctx context.Context, namespaceEntry *namespace.Namespace, version *deploymentpb.WorkerDeploymentVersion) (*iface.QueryDescribeWorkerControllerInstanceResponse, []byte, error)
	ListWorkerControllerInstances(ctx context.Context, namespaceEntry *namespace.Namespace, pageSize int, nextPageToken []byte) ([]*WorkerControllerInstanceSummary, []byte, error)
	UpdateWorkerControllerInstance(ctx context.Context, namespaceEntry *namespace.Namespace, version *deploymentpb.WorkerDeploymentVersion, conflictToken []byte, identity string, upsertScalingGroups map[string]iface.ScalingGroupSpecUpdate, removeScalingGroups []string) (*iface.UpdateWorkerControllerInstanceResponse, error)
	ValidateWorkerControllerInstanceSpec(ctx context.Context, namespaceEntry *namespace.Namespace, version *deploymentpb.WorkerDeploymentVersion, identity string, upsertScalingGroups map[string]iface.ScalingGroupSpecUpdate, removeScalingGroups []string) error
	DeleteWorkerControllerInstance(ctx context.Context, namespaceEntry *namespace.Namespace, version *deploymentpb.WorkerDeploymentVersion, identity string) error
	SignalTaskAddEvent(ctx context.Context, namespaceEntry *namespace.Namespace, version *deploymentpb.WorkerDeploymentVersion, request *iface.SignalTaskAddRequest) error
}

// WorkerControllerInstanceSummary is the upstream type, unchanged.
type WorkerControllerInstanceSummary struct {
	DeploymentName string
	BuildId        string
	CreateTime     *timestamppb.Timestamp
}

// Module provides the Client; no task hook joins matching's group.
var Module = fx.Options(fx.Provide(func() Client { return none{} }))

// errNone answers what would configure a worker controller.
var errNone = serviceerror.NewUnimplemented("auto-scaled workers are not part of this development server")

type none struct{}

func (none) UpdateTaskQueueName(context.Context, string) error { return nil }

func (none) WorkerControllerInstanceExists(context.Context, *namespace.Namespace, *deploymentpb.WorkerDeploymentVersion) (bool, error) {
	return false, nil
}

// DescribeWorkerControllerInstance finds none, as the server expects of a
// version whose compute was never configured: describing a deployment
// version goes on without it.
func (none) DescribeWorkerControllerInstance(context.Context, *namespace.Namespace, *deploymentpb.WorkerDeploymentVersion) (*iface.QueryDescribeWorkerControllerInstanceResponse, []byte, error) {
	return nil, nil, serviceerror.NewNotFound("this development server runs no worker controllers")
}

func (none) ListWorkerControllerInstances(context.Context, *namespace.Namespace, int, []byte) ([]*WorkerControllerInstanceSummary, []byte, error) {
	return nil, nil, nil
}

func (none) UpdateWorkerControllerInstance(context.Context, *namespace.Namespace, *deploymentpb.WorkerDeploymentVersion, []byte, string, map[string]iface.ScalingGroupSpecUpdate, []string) (*iface.UpdateWorkerControllerInstanceResponse, error) {
	return nil, errNone
}

func (none) ValidateWorkerControllerInstanceSpec(context.Context, *namespace.Namespace, *deploymentpb.WorkerDeploymentVersion, string, map[string]iface.ScalingGroupSpecUpdate, []string) error {
	return errNone
}

func (none) DeleteWorkerControllerInstance(context.Context, *namespace.Namespace, *deploymentpb.WorkerDeploymentVersion, string) error {
	return nil
}

func (none) SignalTaskAddEvent(context.Context, *namespace.Namespace, *deploymentpb.WorkerDeploymentVersion, *iface.SignalTaskAddRequest) error {
	return nil
}
