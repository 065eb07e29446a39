package api

import (
	"compress/gzip"
	"errors"
	"io"
	"net/http"

	"connectrpc.com/connect"
)

// connectBodySlack is what a Connect request body may hold beyond the
// message limit: the gRPC envelope's prefix and gzip's framing of an
// incompressible message, so that a message at the limit always fits.
const connectBodySlack = 4 << 10

// connectLimits are the handler options that bound what one Connect call
// may make the server read and inflate. Connect decodes the message before
// any interceptor runs (so before authentication), which makes these the
// only guard an anonymous caller meets.
func (s *Server) connectLimits() connect.HandlerOption {
	limit := s.maxBody
	return connect.WithHandlerOptions(
		// The decoded (and so the decompressed) message, as REST's body limit.
		connect.WithReadMaxBytes(int(limit)),
		// connect-go stops buffering at the read limit but then inflates the
		// rest of an oversized message into io.Discard to report its size: a
		// small gzip bomb would still cost seconds of CPU. This gzip stops
		// inflating just past the limit instead.
		connect.WithCompression("gzip",
			func() connect.Decompressor { return &boundedGzip{limit: limit} },
			func() connect.Compressor { return gzip.NewWriter(io.Discard) }),
	)
}

// boundBody caps the raw bytes a Connect handler may read from the request
// body, compressed or not, before connect-go sees them.
func (s *Server) boundBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, s.maxBody+connectBodySlack)
		}
		next.ServeHTTP(w, r)
	})
}

// errInflateLimit ends the inflation of a message past the read limit;
// connect-go reports it as resource_exhausted.
var errInflateLimit = errors.New("decompressed message exceeds the size limit")

// boundedGzip is a gzip reader that yields at most limit+1 bytes: one more
// than a message may hold, so the caller still sees that it is too large.
type boundedGzip struct {
	gz    gzip.Reader
	limit int64
	read  int64
}

func (b *boundedGzip) Read(p []byte) (int, error) {
	left := b.limit + 1 - b.read
	if left <= 0 {
		return 0, errInflateLimit
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := b.gz.Read(p)
	b.read += int64(n)
	return n, err
}

func (b *boundedGzip) Reset(r io.Reader) error {
	b.read = 0
	return b.gz.Reset(r)
}

func (b *boundedGzip) Close() error { return b.gz.Close() }
