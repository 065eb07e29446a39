package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// workerProcess runs `paymentsd worker` as its own OS process and keeps it
// running, as a service manager would: Kill sends SIGKILL (the crash the
// run injects) and starts it again after a pause; an exit nobody asked for
// is counted and restarted too.
type workerProcess struct {
	bin string
	env []string
	log *os.File

	killMu sync.Mutex // one kill and restart at a time

	mu       sync.Mutex
	cmd      *exec.Cmd
	done     chan struct{} // closed when cmd has exited
	killed   bool          // the current process was killed on purpose
	stopped  bool
	starts   int
	kills    int
	crashes  int
	downtime time.Duration
}

func startWorker(bin string, env []string, logPath string) (*workerProcess, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	w := &workerProcess{bin: bin, env: env, log: f}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.spawn(); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// spawn starts a process; w.mu is held.
func (w *workerProcess) spawn() error {
	cmd := exec.Command(w.bin, "worker")
	cmd.Env = w.env
	cmd.Stdout, cmd.Stderr = w.log, w.log
	// The worker dies with the run, however the run ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	w.starts++
	fmt.Fprintf(w.log, "--- chaos: worker started (pid %d, start %d) at %s\n", cmd.Process.Pid, w.starts, time.Now().Format(time.RFC3339Nano))
	w.cmd, w.killed = cmd, false
	done := make(chan struct{})
	w.done = done
	go func() {
		err := cmd.Wait()
		close(done)
		w.mu.Lock()
		defer w.mu.Unlock()
		fmt.Fprintf(w.log, "--- chaos: worker (pid %d) exited at %s: %v\n", cmd.Process.Pid, time.Now().Format(time.RFC3339Nano), err)
		if w.stopped || w.killed || w.cmd != cmd {
			return
		}
		// It exited by itself (for instance it could not start during an
		// outage): start it again, as a service manager would.
		w.crashes++
		go w.restartAfter(cmd, 2*time.Second)
	}()
	return nil
}

func (w *workerProcess) restartAfter(old *exec.Cmd, pause time.Duration) {
	start := time.Now()
	time.Sleep(pause) // not a wait: a service manager's pause before it restarts a crashed worker
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped || w.cmd != old {
		return
	}
	if err := w.spawn(); err != nil {
		fmt.Fprintf(w.log, "--- chaos: %v\n", err)
		return
	}
	w.downtime += time.Since(start)
}

// Kill kills the worker with SIGKILL and starts a new one after pause.
func (w *workerProcess) Kill(ctx context.Context, pause time.Duration) error {
	w.killMu.Lock()
	defer w.killMu.Unlock()
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		return nil
	}
	cmd, done := w.cmd, w.done
	w.killed = true
	w.kills++
	fmt.Fprintf(w.log, "--- chaos: SIGKILL to pid %d at %s\n", cmd.Process.Pid, time.Now().Format(time.RFC3339Nano))
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		w.mu.Unlock()
		return fmt.Errorf("kill worker: %w", err)
	}
	w.mu.Unlock()
	start := time.Now()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-time.After(pause):
	case <-ctx.Done():
		return ctx.Err()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped || w.cmd != cmd {
		return nil
	}
	w.downtime += time.Since(start)
	return w.spawn()
}

// Stop stops the worker: SIGTERM, then SIGKILL after ten seconds.
func (w *workerProcess) Stop() {
	w.mu.Lock()
	w.stopped = true
	cmd, done := w.cmd, w.done
	w.mu.Unlock()
	stopProcess(cmd, done)
	w.log.Close()
}

type workerStats struct {
	Starts, Kills, Crashes int
	Downtime               time.Duration
}

func (w *workerProcess) Stats() workerStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return workerStats{w.starts, w.kills, w.crashes, w.downtime}
}

// stopProcess stops cmd, if any, whose done is closed once it has exited:
// SIGTERM, then SIGKILL after ten seconds.
func stopProcess(cmd *exec.Cmd, done <-chan struct{}) {
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-done
	}
}
