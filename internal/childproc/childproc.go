// Package childproc starts the processes the dev stack runs beside itself
// (btcd, and the tools it builds) so that they do not outlive it: on Linux
// the kernel sends them a signal when their parent dies, however it dies
// (SIGKILL, a crash), and they no longer hold their ports, their data
// folders' locks or their parent's output.
package childproc

import (
	"os/exec"
	"syscall"
)

// Tie makes cmd, not yet started, receive sig when the process that
// starts it dies. On systems without a parent-death signal it does
// nothing.
//
// Linux sends the signal when the thread that started the child exits,
// not the process: start cmd from a goroutine that has not locked its OS
// thread (runtime.LockOSThread), whose thread the Go runtime keeps.
func Tie(cmd *exec.Cmd, sig syscall.Signal) *exec.Cmd {
	tie(cmd, sig)
	return cmd
}
