package api

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"testing"
)

// The gzip reader of Connect calls stops one byte past the limit, so
// connect-go still sees an oversized message but never inflates the rest
// of it to measure it.
func TestBoundedGzipStopsPastTheLimit(t *testing.T) {
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	_, _ = zw.Write(make([]byte, 64<<20))
	_ = zw.Close()

	b := &boundedGzip{limit: 1 << 20}
	if err := b.Reset(bytes.NewReader(zipped.Bytes())); err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, b)
	if !errors.Is(err, errInflateLimit) || n != 1<<20+1 {
		t.Fatalf("inflated %d bytes, err %v; want %d and the limit error", n, err, 1<<20+1)
	}

	// Reused from the pool, it reads a message under the limit whole.
	var ok bytes.Buffer
	zw = gzip.NewWriter(&ok)
	_, _ = zw.Write([]byte(`{"projectId":"proj_x"}`))
	_ = zw.Close()
	if err := b.Reset(bytes.NewReader(ok.Bytes())); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(b)
	if err != nil || string(got) != `{"projectId":"proj_x"}` {
		t.Fatalf("read %q, %v", got, err)
	}
}
