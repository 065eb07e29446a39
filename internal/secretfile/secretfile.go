// Package secretfile reads the secrets the configuration's _FILE
// variables name, and refuses a file other users can read: a secret
// others can read is no longer one, and a process that starts on it
// hides the leak.
package secretfile

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"syscall"
)

// Read returns the secret in path, trimmed of the newline an editor
// leaves. setting (DATABASE_URL_FILE, ...) names the variable in errors.
func Read(setting, path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", setting, err)
	}
	defer f.Close()
	info, err := f.Stat() // the file read, not one swapped in after a check
	if err != nil {
		return "", fmt.Errorf("%s: %w", setting, err)
	}
	if err := check(setting, path, info); err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return "", fmt.Errorf("%s: %w", setting, err)
	}
	v := strings.TrimSpace(string(b))
	if v == "" {
		return "", fmt.Errorf("%s: %s is empty", setting, path)
	}
	return v, nil
}

// Check refuses path when users other than this process's can read it:
// any permission for others; a group permission, unless the file belongs
// to another user and its group is one of this process's groups, the
// group then being how this process reads it (a Kubernetes secret volume
// with the pod's fsGroup and defaultMode 0440: root's file, the pod's
// group).
func Check(setting, path string) error {
	info, err := os.Stat(path) // a mounted secret is a symlink to its data
	if err != nil {
		return fmt.Errorf("%s: %w", setting, err)
	}
	return check(setting, path, info)
}

func check(setting, path string, info os.FileInfo) error {
	perm := info.Mode().Perm()
	refuse := perm&0o007 != 0
	if !refuse && perm&0o070 != 0 {
		refuse = !groupIsTheWayIn(info)
	}
	if refuse {
		return fmt.Errorf("%s: %s can be read by others (mode %v): chmod 600 it, or 0440 with a group only this process is in (a Kubernetes secret volume's defaultMode with the pod's fsGroup)", setting, path, perm)
	}
	return nil
}

func groupIsTheWayIn(info os.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) == os.Geteuid() {
		return false
	}
	groups, _ := os.Getgroups()
	return int(st.Gid) == os.Getegid() || slices.Contains(groups, int(st.Gid))
}
