// Package kubernetes decodes deploy/kubernetes strictly against the
// Kubernetes API's own types (client-go's scheme: an unknown or misspelt
// field is an error, offline) and holds the manifests to what running the
// engine needs: probes on the routes the API serves, secrets as files the
// configuration reads, selectors that select, and a budget and an
// autoscaler for what they name.
package kubernetes

import (
	"bytes"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/paymentsd/paymentsd/internal/version"
)

const dir = "../../deploy/kubernetes"

// objects decodes every manifest the kustomization lists, strictly; the
// ServiceMonitors and the PrometheusRule (CRDs the scheme does not know)
// are returned apart.
func objects(t *testing.T) ([]runtime.Object, []map[string]any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(raw, &k); err != nil || len(k.Resources) == 0 {
		t.Fatalf("kustomization.yaml: %v %v", k, err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	for _, f := range files {
		if base := filepath.Base(f); base != "kustomization.yaml" && !slices.Contains(k.Resources, base) {
			t.Errorf("%s is not listed in kustomization.yaml", base)
		}
	}
	decoder := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	var objs []runtime.Object
	var monitors []map[string]any
	for _, name := range k.Resources {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("kustomization.yaml lists %s: %v", name, err)
		}
		for i, doc := range bytes.Split(raw, []byte("\n---\n")) {
			if bytes.Contains(doc, []byte("kind: ServiceMonitor")) || bytes.Contains(doc, []byte("kind: PrometheusRule")) {
				var m map[string]any
				if err := yaml.UnmarshalStrict(doc, &m); err != nil {
					t.Fatalf("%s #%d: %v", name, i, err)
				}
				monitors = append(monitors, m)
				continue
			}
			obj, _, err := decoder.Decode(doc, nil, nil)
			if err != nil {
				t.Fatalf("%s #%d: %v", name, i, err)
			}
			objs = append(objs, obj)
		}
	}
	return objs, monitors
}

func find[T runtime.Object](objs []runtime.Object, name string, get func(T) string) T {
	var zero T
	for _, o := range objs {
		if v, ok := o.(T); ok && get(v) == name {
			return v
		}
	}
	return zero
}

func deployment(t *testing.T, objs []runtime.Object, name string) *appsv1.Deployment {
	t.Helper()
	d := find(objs, name, func(d *appsv1.Deployment) string { return d.Name })
	if d == nil {
		t.Fatalf("no Deployment %s", name)
	}
	return d
}

func selects(t *testing.T, what string, sel map[string]string, pod map[string]string) {
	t.Helper()
	if len(sel) == 0 || !labels.SelectorFromSet(sel).Matches(labels.Set(pod)) {
		t.Errorf("%s selects %v, which does not match the pods' labels %v", what, sel, pod)
	}
}

func TestTheManifestsDecodeStrictlyAndHoldTogether(t *testing.T) {
	objs, monitors := objects(t)
	api, worker := deployment(t, objs, "paymentsd-api"), deployment(t, objs, "paymentsd-worker-"+version.Version)
	for _, d := range []*appsv1.Deployment{api, worker} {
		pod := d.Spec.Template
		selects(t, d.Name+"'s selector", d.Spec.Selector.MatchLabels, pod.Labels)
		c := pod.Spec.Containers[0]
		if c.ReadinessProbe == nil || c.LivenessProbe == nil {
			t.Errorf("%s has no readiness or liveness probe", d.Name)
		}
		if sc := pod.Spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
			t.Errorf("%s may run as root", d.Name)
		}
		if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
			t.Errorf("%s lacks resource requests or a memory limit", d.Name)
		}
		// Secrets are files, named by the configuration's _FILE variables.
		mounted := map[string]bool{}
		for _, v := range pod.Spec.Volumes {
			if v.Secret != nil {
				for _, item := range v.Secret.Items {
					mounted["/run/secrets/paymentsd/"+item.Path] = true
				}
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				t.Errorf("%s takes %s from a secret as a variable, not as a file", d.Name, e.Name)
			}
			if strings.HasSuffix(e.Name, "_FILE") && !mounted[e.Value] {
				t.Errorf("%s reads %s from %s, which no volume mounts", d.Name, e.Name, e.Value)
			}
		}
		if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "DATABASE_URL_FILE" }) {
			t.Errorf("%s is not given the database", d.Name)
		}
	}
	if p := api.Spec.Template.Spec.Containers[0]; p.ReadinessProbe.HTTPGet.Path != "/readyz" || p.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("the API's probes: readiness %s, liveness %s; want /readyz and /healthz", p.ReadinessProbe.HTTPGet.Path, p.LivenessProbe.HTTPGet.Path)
	}
	g := worker.Spec.Template.Spec.TerminationGracePeriodSeconds
	if g == nil || *g < 30 {
		t.Fatalf("the worker's grace period %v leaves it no time to stop", g)
	}
	for _, e := range worker.Spec.Template.Spec.Containers[0].Env {
		if d, err := time.ParseDuration(e.Value); e.Name == "WORKER_STOP_TIMEOUT" && (err != nil || d >= time.Duration(*g)*time.Second) {
			t.Errorf("WORKER_STOP_TIMEOUT %s: want a duration below the grace period (%ds), for the kubelet not to kill running activities", e.Value, *g)
		}
	}
	// A Deployment per release, which the next release's starts beside:
	// its pods are one version of the worker deployment, and roll among
	// themselves without a pause.
	if v := worker.Spec.Selector.MatchLabels["app.kubernetes.io/version"]; v != version.Version {
		t.Errorf("the worker's Deployment selects the release %q; want its own, %s, apart from the next release's pods", v, version.Version)
	}
	if s := worker.Spec.Strategy; s.Type != appsv1.RollingUpdateDeploymentStrategyType || s.RollingUpdate == nil ||
		s.RollingUpdate.MaxUnavailable == nil || s.RollingUpdate.MaxUnavailable.IntValue() != 0 {
		t.Errorf("the worker's strategy is %+v; want RollingUpdate with no pod unavailable", s)
	}
	for _, o := range objs {
		switch v := o.(type) {
		case *corev1.Service:
			d := api
			if strings.Contains(v.Name, "worker") {
				d = worker
			}
			selects(t, "Service "+v.Name, v.Spec.Selector, d.Spec.Template.Labels)
		case *policyv1.PodDisruptionBudget:
			d := api
			if strings.Contains(v.Name, "worker") {
				d = worker
			}
			selects(t, "PodDisruptionBudget "+v.Name, v.Spec.Selector.MatchLabels, d.Spec.Template.Labels)
		case *autoscalingv2.HorizontalPodAutoscaler:
			var kinds []string
			for _, m := range v.Spec.Metrics {
				kinds = append(kinds, string(m.Type))
			}
			if v.Spec.ScaleTargetRef.Name != api.Name || !slices.Contains(kinds, "Resource") || !slices.Contains(kinds, "Pods") {
				t.Errorf("the autoscaler scales %s on %v; want the API on CPU and request rate", v.Spec.ScaleTargetRef.Name, kinds)
			}
		case *batchv1.Job:
			if args := v.Spec.Template.Spec.Containers[0].Args; !slices.Equal(args, []string{"migrate"}) {
				t.Errorf("the Job runs %v, not the migrations", args)
			}
		}
	}
	var rules int
	for _, m := range monitors {
		if m["kind"] == "PrometheusRule" {
			rules++
		}
	}
	if len(monitors)-rules != 2 || rules != 1 {
		t.Errorf("%d ServiceMonitors and %d PrometheusRules, want the API's and the worker's, and the engine's alerts", len(monitors)-rules, rules)
	}
}

// Every variable the manifests set is one the configuration reference
// (docs/configuration.md) documents.
func TestTheManifestsVariablesAreDocumented(t *testing.T) {
	objs, _ := objects(t)
	reference, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("`([A-Z][A-Z0-9_]+)`").FindAllStringSubmatch(string(reference), -1) {
		documented[m[1]] = true
	}
	var vars []string
	for _, o := range objs {
		switch v := o.(type) {
		case *corev1.ConfigMap:
			for k := range v.Data {
				vars = append(vars, k)
			}
		case *appsv1.Deployment:
			for _, e := range v.Spec.Template.Spec.Containers[0].Env {
				vars = append(vars, e.Name)
			}
		}
	}
	for _, v := range vars {
		if name := strings.TrimSuffix(v, "_FILE"); !documented[v] && !documented[name] {
			t.Errorf("the manifests set %s, which docs/configuration.md does not document", v)
		}
	}
}

// Closed by default: the API trusts X-Forwarded-For from the ingress
// controller alone and only it (and the monitoring) reaches the API's
// port; the engine speaks TLS to Temporal with its API key from the
// secret's file; the secret files are the pods' group's alone; and
// Temporal's frontend takes the engine's pods and its own, no other.
func TestTheManifestsAreClosedByDefault(t *testing.T) {
	objs, _ := objects(t)
	cm := find(objs, "paymentsd-config", func(c *corev1.ConfigMap) string { return c.Name })
	if cm == nil {
		t.Fatal("no ConfigMap paymentsd-config")
	}
	proxies := strings.Split(cm.Data["TRUSTED_PROXIES"], ",")
	for _, p := range proxies {
		prefix, err := netip.ParsePrefix(strings.TrimSpace(p))
		if err != nil || prefix.Bits() <= 16 {
			t.Errorf("TRUSTED_PROXIES %q: want the ingress controller's own range, narrower than a pod network (/16), not %q (%v)", cm.Data["TRUSTED_PROXIES"], p, err)
		}
	}
	if cm.Data["TEMPORAL_TLS"] != "true" {
		t.Errorf("TEMPORAL_TLS is %q; want true", cm.Data["TEMPORAL_TLS"])
	}

	pods := map[string]corev1.PodSpec{}
	for _, o := range objs {
		switch v := o.(type) {
		case *appsv1.Deployment:
			pods[v.Name] = v.Spec.Template.Spec
		case *batchv1.Job:
			pods[v.Name] = v.Spec.Template.Spec
		}
	}
	for name, pod := range pods {
		mounts := map[string]string{}
		for _, m := range pod.Containers[0].VolumeMounts {
			mounts[m.Name] = m.MountPath
		}
		files := map[string]bool{}
		for _, v := range pod.Volumes {
			switch {
			case v.Secret != nil:
				m := v.Secret.DefaultMode
				if m == nil || *m&^0o440 != 0 || (*m&0o070 != 0 && (pod.SecurityContext == nil || pod.SecurityContext.FSGroup == nil)) {
					t.Errorf("%s: the secret volume's files can be read by others (defaultMode %v, fsGroup %v): the engine refuses them", name, m, pod.SecurityContext.FSGroup)
				}
				for _, item := range v.Secret.Items {
					files[mounts[v.Name]+"/"+item.Path] = true
				}
			case v.ConfigMap != nil:
				for _, item := range v.ConfigMap.Items {
					files[mounts[v.Name]+"/"+item.Path] = true
				}
			}
		}
		if !files[cm.Data["TEMPORAL_TLS_CA_FILE"]] {
			t.Errorf("%s: TEMPORAL_TLS_CA_FILE %s is mounted by no volume", name, cm.Data["TEMPORAL_TLS_CA_FILE"])
		}
		if name == "paymentsd-migrate" {
			continue
		}
		if !slices.ContainsFunc(pod.Containers[0].Env, func(e corev1.EnvVar) bool {
			return e.Name == "TEMPORAL_API_KEY_FILE" && files[e.Value]
		}) {
			t.Errorf("%s is not given Temporal's API key as a file of the secret", name)
		}
	}

	api := deployment(t, objs, "paymentsd-api")
	var apiPolicies int
	for _, o := range objs {
		np, ok := o.(*networkingv1.NetworkPolicy)
		if !ok || !labels.SelectorFromSet(np.Spec.PodSelector.MatchLabels).Matches(labels.Set(api.Spec.Template.Labels)) {
			continue
		}
		for _, rule := range np.Spec.Ingress {
			apiPolicies++
			if len(rule.From) == 0 {
				t.Errorf("%s lets anyone reach the API", np.Name)
			}
			// The ingress controller reaches the API's port alone, the
			// monitoring namespace the metrics' port alone.
			want := map[string]int{"ingress-nginx": 8080, "monitoring": 9464}
			for _, peer := range rule.From {
				ns := ""
				if peer.NamespaceSelector != nil {
					ns = peer.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"]
				}
				port, known := want[ns]
				if !known {
					t.Errorf("%s lets %+v reach the API; want the ingress controller's namespace (and the monitoring's)", np.Name, peer)
					continue
				}
				if len(rule.Ports) != 1 || rule.Ports[0].Port.IntValue() != port {
					t.Errorf("%s opens %v to %s; want port %d alone", np.Name, rule.Ports, ns, port)
				}
			}
		}
	}
	if apiPolicies == 0 {
		t.Error("no NetworkPolicy limits who reaches the API's port")
	}

	// Temporal's side, applied in its namespace.
	raw, err := os.ReadFile(filepath.Join(dir, "temporal", "network-policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	decoder := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	obj, _, err := decoder.Decode(raw, nil, nil)
	if err != nil {
		t.Fatalf("temporal/network-policy.yaml: %v", err)
	}
	np, ok := obj.(*networkingv1.NetworkPolicy)
	if !ok || np.Namespace != "temporal" || np.Spec.PodSelector.MatchLabels["app.kubernetes.io/component"] != "frontend" {
		t.Fatalf("temporal/network-policy.yaml is not a policy on Temporal's frontend: %#v", obj)
	}
	engine := false
	for _, rule := range np.Spec.Ingress {
		for _, peer := range rule.From {
			switch {
			case peer.NamespaceSelector == nil && peer.PodSelector != nil && len(peer.PodSelector.MatchLabels) == 0:
				// Temporal's own pods, in its namespace.
			case peer.NamespaceSelector != nil && peer.PodSelector != nil:
				selects(t, "the frontend's policy", peer.PodSelector.MatchLabels, api.Spec.Template.Labels)
				if peer.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] != "paymentsd" || len(rule.Ports) != 1 || rule.Ports[0].Port.IntValue() != 7233 {
					t.Errorf("the frontend's policy lets %+v in on %v; want the paymentsd namespace's engine pods on 7233", peer, rule.Ports)
				}
				engine = true
			default:
				t.Errorf("the frontend's policy lets %+v in", peer)
			}
		}
	}
	if !engine {
		t.Error("the frontend's policy does not let the engine in")
	}
}
