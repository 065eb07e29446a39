package attack

import (
	"context"
	"net"
	"strings"

	"golang.org/x/net/dns/dnsmessage"
)

// testNames are the host names the test resolver answers: names a merchant
// could register that resolve to addresses the engine must never call.
var testNames = map[string][4]byte{
	"loopback.attack.test.": {127, 0, 0, 1},
	"private.attack.test.":  {10, 0, 0, 5},
	"metadata.attack.test.": {169, 254, 169, 254},
}

// dnsServer is a tiny DNS server over UDP on loopback: A records for
// testNames, nothing else.
type dnsServer struct{ conn net.PacketConn }

func startResolver() (*dnsServer, error) {
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &dnsServer{conn: conn}
	go s.serve()
	return s, nil
}

func (s *dnsServer) Close() { _ = s.conn.Close() }

// Resolver resolves through this server only.
func (s *dnsServer) Resolver() *net.Resolver {
	addr := s.conn.LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "udp", addr)
	}}
}

func (s *dnsServer) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := s.conn.ReadFrom(buf)
		if err != nil {
			return
		}
		var p dnsmessage.Parser
		h, err := p.Start(buf[:n])
		if err != nil {
			continue
		}
		q, err := p.Question()
		if err != nil {
			continue
		}
		b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true})
		b.EnableCompression()
		_ = b.StartQuestions()
		_ = b.Question(q)
		_ = b.StartAnswers()
		if ip, ok := testNames[strings.ToLower(q.Name.String())]; ok && q.Type == dnsmessage.TypeA {
			_ = b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}, dnsmessage.AResource{A: ip})
		}
		out, err := b.Finish()
		if err == nil {
			_, _ = s.conn.WriteTo(out, from)
		}
	}
}
