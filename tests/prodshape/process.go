package prodshape

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Process is a running paymentsd command.
type Process struct {
	Cmd *exec.Cmd
	// Log is the file its output goes to; URL its API (empty for a
	// worker), MetricsURL where it serves /metrics.
	Log, URL, MetricsURL string
	// Done is closed once it has exited.
	Done chan struct{}
}

func start(bin, command, logPath string, env []string, url, metricsURL string) (*Process, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, command)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, f, f
	// It dies with whoever started it, however that ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	p := &Process{Cmd: cmd, Log: logPath, URL: url, MetricsURL: metricsURL, Done: make(chan struct{})}
	go func() { _ = cmd.Wait(); f.Close(); close(p.Done) }()
	return p, nil
}

// halt stops the process at the end of a run: SIGTERM, then SIGKILL if
// it has not exited within 10 s.
func (p *Process) halt() {
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.Done:
	case <-time.After(10 * time.Second):
		_ = p.Cmd.Process.Kill()
		<-p.Done
	}
}

// Kill kills the process (SIGKILL) and waits for it to end.
func (p *Process) Kill() error {
	if err := p.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	<-p.Done
	return nil
}

// Stop stops the process with SIGTERM and waits for it to exit, which it
// must do with status 0.
func (p *Process) Stop() error {
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	if err := p.Exit(); err != nil {
		return fmt.Errorf("%s stopped by SIGTERM: %w", p.Log, err)
	}
	return nil
}

// Exit waits for the process to end and says how: nil for status 0.
func (p *Process) Exit() error {
	<-p.Done
	if s := p.Cmd.ProcessState; s == nil || !s.Success() {
		return errors.New(s.String())
	}
	return nil
}

// Exited tells whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.Done:
		return true
	default:
		return false
	}
}

// Tail is the last n bytes of its log.
func (p *Process) Tail(n int) string {
	out, _ := os.ReadFile(p.Log)
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return string(out)
}

// WaitReady waits for an API process's /readyz to answer 200, for up to
// 4 minutes; a process that exits meanwhile is an error with its log.
func (p *Process) WaitReady(ctx context.Context) error {
	return p.waitOK(ctx, p.URL+"/readyz")
}

// WaitMetrics waits for the process's /metrics to answer, as WaitReady.
func (p *Process) WaitMetrics(ctx context.Context) error {
	return p.waitOK(ctx, p.MetricsURL+"/metrics")
}

func (p *Process) waitOK(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	for {
		if p.Exited() {
			return fmt.Errorf("%s exited:\n%s", p.Log, p.Tail(4000))
		}
		if res, err := http.Get(url); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", url, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Response is an API's answer: its status, the envelope's data, the body
// as sent and the headers.
type Response struct {
	Status int
	Data   map[string]any
	Raw    string
	Header http.Header
}

// Call calls the API with a JSON body (nil for none) and, when key is
// set, the API key; headers are added as given (an Idempotency-Key).
func (p *Process) Call(ctx context.Context, method, path, key string, body any, headers ...string) (Response, error) {
	return Call(ctx, http.DefaultClient, p.URL, method, path, key, body, headers...)
}

// Call calls the API at base with client; see Process.Call.
func Call(ctx context.Context, client *http.Client, base, method, path, key string, body any, headers ...string) (Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return Response{}, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return Response{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := client.Do(req)
	if err != nil {
		return Response{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return Response{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	var env struct {
		Data map[string]any `json:"data"`
	}
	_ = json.Unmarshal(raw, &env)
	return Response{Status: res.StatusCode, Data: env.Data, Raw: string(raw), Header: res.Header}, nil
}
