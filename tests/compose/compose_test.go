// Package compose reads docker-compose.yml as a user's docker compose
// would, and holds it to what running it needs: images pinned, a health
// check on every long-running service, one-shot set-up services finished
// before what needs them, and the configuration docs/configuration.md documents.
package compose

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

type service struct {
	Image       string
	Build       any
	Entrypoint  []string
	Environment map[string]any
	DependsOn   map[string]struct{ Condition string } `yaml:"depends_on"`
	Healthcheck *struct{ Test []string }
	Volumes     []string
	Ports       []string
}

func load(t *testing.T) map[string]service {
	t.Helper()
	raw, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Services map[string]service }
	if err := yaml.Unmarshal(raw, &f); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	if len(f.Services) == 0 {
		t.Fatal("docker-compose.yml has no services")
	}
	return f.Services
}

var pinned = regexp.MustCompile(`^[a-z0-9./-]+:[0-9][A-Za-z0-9._-]*$`)

func TestTheComposeFileRunsAsDocumented(t *testing.T) {
	services := load(t)
	// The one-shot services: what others wait to have completed.
	oneShot := map[string]bool{}
	for name, s := range services {
		for dep, d := range s.DependsOn {
			if _, ok := services[dep]; !ok {
				t.Errorf("%s depends on %s, which is no service", name, dep)
			}
			if d.Condition == "service_completed_successfully" {
				oneShot[dep] = true
			}
			if d.Condition == "service_healthy" && services[dep].Healthcheck == nil {
				t.Errorf("%s waits for %s to be healthy, which has no health check", name, dep)
			}
		}
	}
	for name, s := range services {
		switch {
		case s.Image == "" && s.Build == nil:
			t.Errorf("%s has neither an image nor a build", name)
		case s.Image != "" && !pinned.MatchString(s.Image):
			t.Errorf("%s: image %q is not pinned to a version", name, s.Image)
		case strings.Contains(s.Image, "auto-setup"):
			t.Errorf("%s: %s is deprecated and no longer built", name, s.Image)
		}
		if !oneShot[name] && s.Healthcheck == nil {
			t.Errorf("%s runs on but has no health check", name)
		}
	}
	for _, name := range []string{"api", "worker"} {
		s := services[name]
		for _, dep := range []string{"migrate", "temporal-namespace"} {
			if s.DependsOn[dep].Condition != "service_completed_successfully" {
				t.Errorf("%s does not wait for %s to complete", name, dep)
			}
		}
	}
	if services["temporal"].DependsOn["temporal-schema"].Condition != "service_completed_successfully" {
		t.Error("the Temporal server does not wait for its schema")
	}
	for _, name := range []string{"temporal-schema", "temporal-namespace"} {
		for _, v := range services[name].Volumes {
			src := strings.SplitN(v, ":", 2)[0]
			if _, err := os.Stat("../../" + src); err != nil {
				t.Errorf("%s mounts %s: %v", name, src, err)
			}
		}
		if len(services[name].Entrypoint) < 2 {
			t.Errorf("%s runs no script", name)
		} else if _, err := os.Stat("../../deploy/compose/" + strings.TrimPrefix(services[name].Entrypoint[1], "/scripts/")); err != nil {
			t.Errorf("%s runs %s: %v", name, services[name].Entrypoint[1], err)
		}
	}
}

// Every variable the api and the worker are given is one the
// configuration reference (docs/configuration.md) documents.
func TestTheComposeFilesVariablesAreDocumented(t *testing.T) {
	services := load(t)
	reference, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("`([A-Z][A-Z0-9_]+)`").FindAllStringSubmatch(string(reference), -1) {
		documented[m[1]] = true
	}
	for _, name := range []string{"api", "worker", "migrate"} {
		var vars []string
		for v := range services[name].Environment {
			vars = append(vars, v)
		}
		if len(vars) == 0 {
			t.Errorf("%s has no environment", name)
		}
		slices.Sort(vars)
		for _, v := range vars {
			if !documented[v] {
				t.Errorf("%s is given %s, which docs/configuration.md does not document", name, v)
			}
		}
	}
}

// Closed by default: every published port binds 127.0.0.1. Temporal's
// gRPC port and UI take no credentials (a signal sent there could mark a
// session paid), and the dev chain mines and funds on request.
func TestThePublishedPortsAreThisMachinesAlone(t *testing.T) {
	services := load(t)
	for name, s := range services {
		for _, p := range s.Ports {
			if !strings.HasPrefix(p, "127.0.0.1:") || strings.Count(p, ":") != 2 {
				t.Errorf("%s publishes %q; want 127.0.0.1:<host port>:<container port>", name, p)
			}
		}
	}
	for _, name := range []string{"temporal", "temporal-ui", "devchain"} {
		if len(services[name].Ports) == 0 {
			t.Errorf("%s publishes no port: the test above proves nothing for it", name)
		}
	}
}
