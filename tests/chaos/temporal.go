package chaos

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/paymentsd/paymentsd/dev/devstack"
	"github.com/paymentsd/paymentsd/dev/freeport"
)

// TemporalServerCommand is the chaos command's subcommand that runs the
// run's Temporal server in a process of its own: the run starts its own
// binary with it, so that killing the server (temporal-restart) kills its
// frontend and history services as a crash of a deployed server does.
const TemporalServerCommand = "temporal-server"

// ServeTemporal is the temporal-server subcommand: it starts the embedded
// Temporal server (devstack.StartTemporal) on 127.0.0.1:-port, its state
// in the SQLite file -db, prints "ready" once the frontend serves, and
// runs until it is signalled (or killed).
func ServeTemporal(args []string) error {
	fs := flag.NewFlagSet(TemporalServerCommand, flag.ContinueOnError)
	port := fs.Int("port", 0, "the frontend's port on 127.0.0.1")
	db := fs.String("db", "", "the SQLite file that keeps the server's state across restarts")
	namespace := fs.String("namespace", "default", "the namespace")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *port == 0 || *db == "" {
		return errors.New("-port and -db are required")
	}
	t, err := devstack.StartTemporal(devstack.TemporalConfig{DBFile: *db, Port: *port, Namespace: *namespace})
	if err != nil {
		return err
	}
	fmt.Println("ready", t.Address)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
	t.Stop()
	return nil
}

// temporalProcess is the run's Temporal server: this binary's
// temporal-server subcommand, on one address and one SQLite file for the
// whole run, so that a restart finds the history it had.
type temporalProcess struct {
	Address   string
	Namespace string
	port      int
	db        string
	log       *os.File

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// startTemporal starts the run's Temporal server, its state in db and its
// log appended to logPath.
func startTemporal(ctx context.Context, db, logPath string) (*temporalProcess, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	t := &temporalProcess{Namespace: "default", db: db, log: f}
	// Another process may take the picked port before the server binds
	// it: pick again then. Later starts keep the address.
	for attempt := 0; ; attempt++ {
		t.port = freeport.Pick()
		t.Address = fmt.Sprintf("127.0.0.1:%d", t.port)
		err = t.spawn(ctx)
		if err == nil || attempt == 2 || !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return t, nil
}

// spawn starts the server process and waits until it serves.
func (t *temporalProcess) spawn(ctx context.Context) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe, TemporalServerCommand, "-port", fmt.Sprint(t.port), "-db", t.db, "-namespace", t.Namespace)
	cmd.Stderr = t.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // it dies with the run
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the Temporal server: %w", err)
	}
	fmt.Fprintf(t.log, "--- chaos: Temporal server started (pid %d) at %s\n", cmd.Process.Pid, time.Now().Format(time.RFC3339Nano))
	ready := make(chan struct{})
	go func() {
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			fmt.Fprintln(t.log, lines.Text())
			if strings.HasPrefix(lines.Text(), "ready") {
				close(ready)
				break
			}
		}
		_, _ = io.Copy(t.log, out)
	}()
	done := make(chan struct{})
	go func() {
		err := cmd.Wait()
		fmt.Fprintf(t.log, "--- chaos: Temporal server (pid %d) exited at %s: %v\n", cmd.Process.Pid, time.Now().Format(time.RFC3339Nano), err)
		close(done)
	}()
	select {
	case <-ready:
	case <-done:
		return fmt.Errorf("the Temporal server exited before it served: %s", tailOf(t.log.Name(), 600))
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		return errors.New("the Temporal server did not serve within 2m")
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		return ctx.Err()
	}
	t.mu.Lock()
	t.cmd, t.done = cmd, done
	t.mu.Unlock()
	return nil
}

// Restart kills the server with SIGKILL (its frontend and history with
// it), waits pause, and starts it again on the same address and the same
// state. It returns once the new server serves.
func (t *temporalProcess) Restart(ctx context.Context, pause time.Duration) error {
	t.mu.Lock()
	cmd, done := t.cmd, t.done
	t.mu.Unlock()
	fmt.Fprintf(t.log, "--- chaos: SIGKILL to pid %d at %s\n", cmd.Process.Pid, time.Now().Format(time.RFC3339Nano))
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill the Temporal server: %w", err)
	}
	<-done
	if err := sleep(ctx, pause); err != nil {
		return err
	}
	return t.spawn(ctx)
}

// Stop stops the server: SIGTERM, then SIGKILL after ten seconds.
func (t *temporalProcess) Stop() {
	t.mu.Lock()
	cmd, done := t.cmd, t.done
	t.mu.Unlock()
	stopProcess(cmd, done)
	t.log.Close()
}

// tailOf is the end of a file, for an error.
func tailOf(path string, n int) string {
	b, _ := os.ReadFile(path)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}
