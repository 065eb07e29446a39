package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/dev/freeport"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
)

// dbLink stands between the API and its database, and can go down as a
// restarting database does: every connection dropped, new ones refused.
type dbLink struct {
	addr, to string
	mu       sync.Mutex
	ln       net.Listener
	conns    []net.Conn
}

func (l *dbLink) up(t *testing.T) {
	ln, err := net.Listen("tcp", l.addr)
	if err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	l.ln = ln
	l.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", l.to)
			if err != nil {
				c.Close()
				continue
			}
			l.mu.Lock()
			l.conns = append(l.conns, c, up)
			l.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
}

func (l *dbLink) down() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ln.Close()
	for _, c := range l.conns {
		c.Close()
	}
	l.conns = nil
}

// While the database is down (restarting, failing over) the API answers
// 503 SERVICE_UNAVAILABLE with Retry-After, in the error envelope: the
// request was fine and may be sent again, which then succeeds once the
// database is back. Never a 500.
func TestTheDatabaseDownIsServiceUnavailable(t *testing.T) {
	ctx := context.Background()
	db, err := url.Parse(storetest.NewDB(t))
	if err != nil {
		t.Fatal(err)
	}
	link := &dbLink{addr: fmt.Sprintf("127.0.0.1:%d", freeport.Pick()), to: db.Host}
	link.up(t)
	through := *db
	through.Host = link.addr
	st, err := store.Open(ctx, through.String())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := service.New(service.Deps{Store: st})
	p, err := svc.Checkout().CreateProject(ctx, "Restarted shop")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(svc, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	get := func() (*http.Response, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, ts.URL+"/api/v1/projects/"+p.Project.ID+"/events", nil)
		req.Header.Set("Authorization", "Bearer "+p.SandboxKey)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body map[string]any
		if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		return res, body
	}
	if res, body := get(); res.StatusCode != http.StatusOK {
		t.Fatalf("with the database up: %d %v", res.StatusCode, body)
	}

	link.down()
	res, body := get()
	code, _ := body["error"].(map[string]any)["code"].(string)
	if res.StatusCode != http.StatusServiceUnavailable || code != "SERVICE_UNAVAILABLE" || res.Header.Get("Retry-After") == "" {
		t.Fatalf("with the database down: %d %v, Retry-After %q; want 503 SERVICE_UNAVAILABLE with Retry-After",
			res.StatusCode, body, res.Header.Get("Retry-After"))
	}

	// Back up: the client sends the request again after Retry-After (a
	// connection the pool held from before may fail it once more).
	link.up(t)
	defer link.down()
	testwait.Until(t, 10*time.Second, func() (bool, string) {
		res, body := get()
		if res.StatusCode != http.StatusOK && res.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("with the database back: %d %v", res.StatusCode, body)
		}
		return res.StatusCode == http.StatusOK, fmt.Sprintf("with the database back: %d %v", res.StatusCode, body)
	})
}
