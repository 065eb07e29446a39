//go:build linux

package childproc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
)

// When CHILDPROC_PARENT is set the test binary is the parent: it starts a
// child as the dev stack starts btcd, prints the child's pid and waits on
// the child (five minutes), to be killed before then.
func TestMain(m *testing.M) {
	if sig := os.Getenv("CHILDPROC_PARENT"); sig != "" {
		n, _ := strconv.Atoi(sig)
		cmd := Tie(exec.Command("sleep", "300"), syscall.Signal(n))
		if err := cmd.Start(); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println(cmd.Process.Pid)
		_ = cmd.Wait()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// alive tells whether pid runs: a zombie no one reaps (the container's
// init may not) has exited.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

// A parent killed with SIGKILL, which it cannot catch, leaves no child
// behind: the kernel signals the child as the parent dies.
func TestAKilledParentLeavesNoChild(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			parent := exec.Command(os.Args[0], "-test.run=^$")
			parent.Env = append(os.Environ(), "CHILDPROC_PARENT="+strconv.Itoa(int(sig)))
			out, err := parent.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := parent.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			child, perr := strconv.Atoi(strings.TrimSpace(line))
			if err != nil || perr != nil {
				_ = parent.Process.Kill()
				t.Fatalf("the parent printed %q: %v %v", line, err, perr)
			}
			t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
			if !alive(child) {
				t.Fatalf("the child %d is not running before its parent is killed", child)
			}
			if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = parent.Wait()
			testwait.Until(t, 5*time.Second, func() (bool, string) {
				return !alive(child), fmt.Sprintf("the child %d still runs after its parent was killed", child)
			})
		})
	}
}

// The test's own control: a child started without Tie outlives its killed
// parent, which is what the dev stack's btcd did.
func TestWithoutTieTheChildOutlivesItsParent(t *testing.T) {
	// Started by a shell that is then killed: the shell is the parent.
	sh := exec.Command("sh", "-c", "sleep 300 & echo $!; wait")
	out, err := sh.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	child, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("the shell printed %q", line)
	}
	defer syscall.Kill(child, syscall.SIGKILL)
	_ = sh.Process.Signal(syscall.SIGKILL)
	_ = sh.Wait()
	time.Sleep(300 * time.Millisecond) // not a wait: time for a death that must not come (the tied child's comes within it)
	if !alive(child) {
		t.Fatal("an untied child died with its parent: the test above proves nothing")
	}
}
