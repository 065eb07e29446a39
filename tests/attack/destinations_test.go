package attack

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
)

// Webhook URLs that point inside the engine's network — loopback, private,
// link-local, the cloud metadata address, IPv4-mapped IPv6, and names that
// resolve to such addresses — never get a request: the endpoint can be
// registered (a URL's host can change its address later anyway), but every
// delivery attempt is refused at connect time, and says why.
func TestWebhooksNeverReachInternalAddresses(t *testing.T) {
	w := setup(t)
	var hits atomic.Int64
	inside := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer inside.Close()
	_, port, _ := net.SplitHostPort(inside.Listener.Addr().String())
	urls := []string{
		"http://127.0.0.1:" + port + "/hook",
		"http://localhost:" + port + "/hook",
		"http://loopback.attack.test:" + port + "/hook",
		"http://[::1]:" + port + "/hook",
		"http://[::ffff:127.0.0.1]:" + port + "/hook",
		"http://0.0.0.0:" + port + "/hook",
		"http://10.0.0.5/hook",
		"http://172.16.0.1/hook",
		"http://192.168.1.1/hook",
		"http://100.64.0.1/hook",
		"http://169.254.169.254/latest/meta-data/",
		"http://metadata.attack.test/latest/meta-data/",
		"http://private.attack.test/hook",
		"http://[fe80::1]/hook",
		"http://[fd00:ec2::254]/latest/meta-data/",
	}
	proj := "/api/v1/projects/" + w.victim.Project.ID
	for _, u := range urls {
		res, raw := call(t, "POST", proj+"/webhooks", w.victim.SandboxKey, []byte(`{"url":"`+u+`","enabledEvents":["*"]}`), nil)
		if res.StatusCode == http.StatusUnprocessableEntity {
			tally.add("webhook destinations", "refused at creation (422)")
			continue
		}
		if res.StatusCode != http.StatusCreated {
			t.Errorf("%s: %d %s", u, res.StatusCode, raw)
			continue
		}
		var env struct{ Data map[string]any }
		_ = json.Unmarshal(raw, &env)
		id := str(env.Data["id"])
		secrets.add(str(env.Data["secret"]))
		if res, raw := call(t, "POST", proj+"/webhooks/"+id+"/test", w.victim.SandboxKey, nil, nil); res.StatusCode != http.StatusAccepted {
			t.Fatalf("test event to %s: %d %s", u, res.StatusCode, raw)
		}
		attemptErr := ""
		testwait.Until(t, 30*time.Second, func() (bool, string) {
			_, raw := call(t, "GET", proj+"/webhooks/"+id+"/deliveries", w.victim.SandboxKey, nil, nil)
			var list struct {
				Data []struct {
					Attempts []struct {
						StatusCode *int
						Error      string
					}
				}
			}
			_ = json.Unmarshal(raw, &list)
			if len(list.Data) > 0 && len(list.Data[0].Attempts) > 0 {
				a := list.Data[0].Attempts[0]
				if a.StatusCode != nil {
					t.Fatalf("%s: the attempt got an answer (%d): the request left", u, *a.StatusCode)
				}
				attemptErr = a.Error
			}
			return attemptErr != "", fmt.Sprintf("%s: no attempt recorded", u)
		})
		if !strings.Contains(attemptErr, "destination refused") {
			t.Errorf("%s: the attempt failed with %q; want the destination guard's refusal", u, attemptErr)
		}
		tally.add("webhook destinations", "refused at connect, reason recorded")
		// Delete it: its retries would only be refused again.
		call(t, "DELETE", proj+"/webhooks/"+id, w.victim.SandboxKey, nil, nil)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the internal listener got %d requests", n)
	}
}
