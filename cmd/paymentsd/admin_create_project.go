package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/paymentsd/paymentsd/service"
)

// runCreateProject is `paymentsd admin create-project`: a project with a
// live and a sandbox API key.
func runCreateProject(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("create-project", flag.ContinueOnError)
	name := fs.String("name", "", "project name")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := fs.Parse(args); err != nil {
		return err
	}
	e, closeStore, err := adminService(ctx)
	if err != nil {
		return err
	}
	defer closeStore()
	p, err := e.Checkout().CreateProject(ctx, *name)
	if err != nil {
		return err
	}
	printProject(p, *asJSON)
	return nil
}

func printProject(p service.CreatedProject, asJSON bool) {
	if asJSON {
		_ = json.NewEncoder(os.Stdout).Encode(map[string]string{
			"projectId": p.Project.ID, "liveKey": p.LiveKey, "sandboxKey": p.SandboxKey})
		return
	}
	fmt.Printf("project:     %s (%s)\nlive key:    %s\nsandbox key: %s\nThe keys are shown once; store them now.\n",
		p.Project.ID, p.Project.Name, p.LiveKey, p.SandboxKey)
}
