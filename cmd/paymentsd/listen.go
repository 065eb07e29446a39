package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"time"
)

// runDevListen is `paymentsd dev listen --forward-to URL`: a receiver to
// register as a webhook endpoint while developing, which forwards every
// request it gets — method, headers (webhook-id, webhook-timestamp,
// webhook-signature included), body — unchanged to URL, and relays the
// answer. It re-signs nothing: the application at URL verifies the
// signature with the endpoint's secret as it would in production.
func runDevListen(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("dev listen", flag.ContinueOnError)
	forwardTo := fs.String("forward-to", "", "URL every received request is forwarded to, e.g. http://localhost:3000/webhooks")
	addr := fs.String("addr", "127.0.0.1:8098", "address to listen on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	h, err := forwarder(*forwardTo)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Printf("forwarding every request to %s\nregister %s as the webhook endpoint's url\n", *forwardTo, endpointURL(ln.Addr()))
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// endpointURL is the URL to register for a listener: on every interface
// (--addr :8098), the loopback one.
func endpointURL(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return "http://" + a.String() + "/"
	}
	host := tcp.IP.String()
	if tcp.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(tcp.Port)) + "/"
}

// forwarder forwards every request, whatever its path, to target: the
// method, the headers and the body unchanged, and the answer back.
func forwarder(target string) (http.Handler, error) {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--forward-to must be an http(s) URL, got %q", target)
	}
	return &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			to := *u
			r.Out.URL, r.Out.Host = &to, u.Host
		},
		ModifyResponse: func(res *http.Response) error {
			slog.Info("forwarded", "webhook-id", res.Request.Header.Get("webhook-id"), "status", res.StatusCode)
			return nil
		},
		// The application unreachable is a 502: paymentsd retries it.
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			slog.Warn("not forwarded", "webhook-id", r.Header.Get("webhook-id"), "err", err)
			w.WriteHeader(http.StatusBadGateway)
		},
	}, nil
}
