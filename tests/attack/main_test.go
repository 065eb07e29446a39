// Package attack attacks the running API as an outsider, another tenant, a
// payer and a webhook receiver would, and asserts the outcome of every
// attempt: a table per class of attack, over every route the router
// serves, so that a new route is attacked without a new line here. It
// runs the whole engine (Postgres, embedded Temporal, dev chain, worker),
// with the webhook destination guard on, and keeps everything the engine
// logs to check that no secret reaches the logs. The counts per class go
// to docs/security.md (ATTACK_REPORT=path writes them as Markdown).
package attack

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	sdklog "go.temporal.io/sdk/log"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/dev/devstack"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/tests/stacktest"
	"github.com/paymentsd/paymentsd/webhook"
)

var (
	stack  *devstack.Stack
	eng    *service.Service
	server *api.Server
	base   string // the API's URL
	logs   = &lockedBuffer{}
	tally  = &counts{m: map[string]map[string]int{}}
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	// Everything the engine and the Temporal client log is kept.
	slog.SetDefault(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	dns, err := startResolver()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer dns.Close()
	var stop func()
	stack, stop, err = stacktest.Start(devstack.StackConfig{
		Logger: sdklog.NewStructuredLogger(slog.Default()),
		// The production guard: no delivery to loopback, private,
		// link-local or metadata addresses, names resolved by the test's
		// resolver.
		WebhookClient: webhook.NewClient(webhook.ClientOptions{Resolver: dns.Resolver(), Timeout: 3 * time.Second}),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop()
	eng = stack.Service(0)
	// Limits high enough not to decide the outcomes (the per-IP budget of
	// failed authentications included): the suite asserts what each
	// attempt gets past the limits.
	limits := map[api.Tier]uint64{}
	for tier := range api.DefaultLimits {
		limits[tier] = 1_000_000
	}
	if server, err = api.New(eng, api.Config{Limits: limits, PublicURL: "https://pay.example.test"}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer server.Close()
	srv := httptest.NewServer(server.Handler())
	defer srv.Close()
	base = srv.URL
	code := m.Run()
	fmt.Println(tally.markdown())
	if path := os.Getenv("ATTACK_REPORT"); path != "" && code == 0 {
		if err := os.WriteFile(path, []byte(tally.markdown()), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return code
}

// lockedBuffer keeps the logs of every goroutine.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// counts tallies attempts by class and outcome.
type counts struct {
	mu sync.Mutex
	m  map[string]map[string]int
}

func (c *counts) add(class, outcome string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m[class] == nil {
		c.m[class] = map[string]int{}
	}
	c.m[class][outcome]++
}

func (c *counts) markdown() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	b.WriteString("| Class | Attempts | Outcomes |\n|---|---:|---|\n")
	classes := make([]string, 0, len(c.m))
	for k := range c.m {
		classes = append(classes, k)
	}
	sort.Strings(classes)
	for _, class := range classes {
		total := 0
		var outs []string
		for o, n := range c.m[class] {
			total += n
			outs = append(outs, fmt.Sprintf("%s × %d", o, n))
		}
		sort.Strings(outs)
		fmt.Fprintf(&b, "| %s | %d | %s |\n", class, total, strings.Join(outs, ", "))
	}
	return b.String()
}

// tenant is a project with its keys and a deposit key per environment.
type tenant struct {
	service.CreatedProject
	sandboxKeyID string
	// The project's owner, signed in: the user's ID, a session's ID and
	// its cookie.
	userID, userSessionID string
	cookie                map[string]string
}

func newTenant(t *testing.T, name string) tenant {
	t.Helper()
	ctx := context.Background()
	p, err := stacktest.Project(eng, name)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := eng.Checkout().Authenticate(ctx, p.SandboxKey)
	if err != nil {
		t.Fatal(err)
	}
	secrets.add(p.SandboxKey, p.LiveKey)
	email := strings.ToLower(strings.ReplaceAll(name, " ", "-")) + "@attack.test"
	u, err := eng.Identity().CreateUser(ctx, email, "the owner's long password")
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Access().AddOwner(ctx, p.Project.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	in, err := eng.Identity().Login(ctx, email, "the owner's long password", service.Client{})
	if err != nil {
		t.Fatal(err)
	}
	secrets.add(in.Token, "the owner's long password")
	return tenant{CreatedProject: p, sandboxKeyID: pr.KeyID, userID: u.ID, userSessionID: in.Session.ID,
		cookie: map[string]string{"Cookie": api.SessionCookie + "=" + in.Token}}
}

// secrets are every key, token and webhook secret the suite made: none may
// appear in the logs.
var secrets = &secretSet{}

type secretSet struct {
	mu  sync.Mutex
	all []string
}

func (s *secretSet) add(v ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range v {
		if x != "" {
			s.all = append(s.all, x)
		}
	}
}

func (s *secretSet) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.all...)
}

// call makes one HTTP request to the API.
func call(t *testing.T, method, path, key string, body []byte, headers map[string]string) (*http.Response, []byte) {
	t.Helper()
	return send(t, base, method, path, key, body, headers)
}

// send makes one HTTP request to the API at url.
func send(t *testing.T, url, method, path, key string, body []byte, headers map[string]string) (*http.Response, []byte) {
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, err := http.NewRequest(method, url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out bytes.Buffer
	_, _ = out.ReadFrom(res.Body)
	return res, out.Bytes()
}

// memberSessions makes a member of the tenant's project for each role,
// signed in, and returns their session cookies by "a <role>'s session".
func (v tenant) memberSessions(t *testing.T, roles ...string) map[string]map[string]string {
	t.Helper()
	ctx := context.Background()
	owner := payment.Principal{ProjectID: v.Project.ID, UserID: v.userID, Role: payment.RoleOwner, SessionID: v.userSessionID}
	out := map[string]map[string]string{}
	for _, role := range roles {
		email := role + "@" + strings.ToLower(v.Project.ID) + ".attack.test"
		_, token, err := eng.Access().Invite(ctx, owner, v.Project.ID, email, role)
		if err != nil {
			t.Fatal(err)
		}
		u, err := eng.Identity().CreateUser(ctx, email, "the member's long password")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := eng.Access().AcceptInvitation(ctx, u, token); err != nil {
			t.Fatal(err)
		}
		in, err := eng.Identity().Login(ctx, email, "the member's long password", service.Client{})
		if err != nil {
			t.Fatal(err)
		}
		secrets.add(in.Token)
		out["a "+role+"'s session"] = map[string]string{"Cookie": api.SessionCookie + "=" + in.Token}
	}
	return out
}
