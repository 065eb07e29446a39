package e2e

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// Connect calls are read under the REST side's 1 MiB limit, compressed or
// not, before anything decodes them: a caller without credentials cannot
// make the server buffer a large body or inflate a small gzip bomb.
func TestConnectRequestsAreBounded(t *testing.T) {
	ts, _ := newAPI(t, apiOptions{})
	url := ts.URL + "/paymentsd.v1.PaymentsService/GetProject"
	message := func(n int) []byte { return []byte(`{"projectId":"` + strings.Repeat("a", n) + `"}`) }
	const inflated = 128 << 20
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	_, _ = zw.Write(message(inflated))
	_ = zw.Close()
	bomb := zipped.Bytes()
	if len(bomb) >= 1<<20 {
		t.Fatalf("the bomb is %d bytes compressed, want under 1 MiB", len(bomb))
	}
	// A gRPC-Web message: a compressed-flag byte and a big-endian length.
	framed := append([]byte{1, 0, 0, 0, 0}, bomb...)
	binary.BigEndian.PutUint32(framed[1:5], uint32(len(bomb)))

	cases := []struct {
		name    string
		body    []byte
		headers map[string]string
	}{
		{"Connect JSON over 1 MiB", message(2 << 20), map[string]string{"Content-Type": "application/json"}},
		{"Connect gzip inflating to 128 MiB", bomb, map[string]string{"Content-Type": "application/json", "Content-Encoding": "gzip"}},
		{"gRPC-Web gzip inflating to 128 MiB", framed, map[string]string{"Content-Type": "application/grpc-web+json", "Grpc-Encoding": "gzip"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range c.headers {
				req.Header.Set(k, v)
			}
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(res.Body)
			res.Body.Close()
			runtime.ReadMemStats(&after)

			code := res.Header.Get("Grpc-Status") // gRPC-Web, trailers-only
			if strings.Contains(string(raw), "grpc-status:") {
				code = strings.TrimSpace(strings.SplitN(strings.SplitN(string(raw), "grpc-status:", 2)[1], "\r\n", 2)[0])
			}
			if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
				var body struct{ Code string }
				_ = json.Unmarshal(raw, &body)
				code = body.Code
			}
			// Everything the process allocated meanwhile (the server, and
			// whatever else runs in it) stays far below what the message
			// would inflate to.
			allocated := after.TotalAlloc - before.TotalAlloc
			t.Logf("HTTP %d, %s; allocated %d KiB, heap %d -> %d KiB", res.StatusCode, code, allocated>>10,
				before.HeapAlloc>>10, after.HeapAlloc>>10)
			if allocated > inflated/4 {
				t.Errorf("the call allocated %d MiB", allocated>>20)
			}
			if code != "resource_exhausted" && code != "8" {
				t.Errorf("answer %d %q %.200s, want resource_exhausted", res.StatusCode, code, raw)
			}
		})
	}
}
