package secretfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAFileOthersCanReadIsRefused(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		mode os.FileMode
		ok   bool
	}{
		{0o600, true}, {0o400, true},
		{0o644, false}, {0o604, false}, {0o640, false}, {0o660, false}, {0o444, false}, {0o602, false},
	} {
		path := filepath.Join(dir, c.mode.String())
		if err := os.WriteFile(path, []byte("s3cret\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, c.mode); err != nil {
			t.Fatal(err)
		}
		v, err := Read("DATABASE_URL_FILE", path)
		switch {
		case c.ok && (err != nil || v != "s3cret"):
			t.Errorf("mode %v: %q, %v; want the secret", c.mode, v, err)
		case !c.ok && (err == nil || !strings.Contains(err.Error(), "DATABASE_URL_FILE: "+path+" can be read by others") || !strings.Contains(err.Error(), "chmod 600")):
			t.Errorf("mode %v: %v; want it refused, naming the setting and the fix", c.mode, err)
		}
	}
}

// A group-readable file is this process's way in when another user owns
// it and its group is the process's: the shape of a Kubernetes secret
// volume with the pod's fsGroup. The test can make that shape as root.
func TestAGroupFileOwnedByAnotherUserIsTheWayIn(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a file another user owns needs root")
	}
	path := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(path, []byte("s3cret"), 0o440); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, 65532, os.Getegid()); err != nil {
		t.Fatal(err)
	}
	if v, err := Read("TEMPORAL_API_KEY_FILE", path); err != nil || v != "s3cret" {
		t.Errorf("%q, %v; want the secret", v, err)
	}
	if err := os.Chown(path, 65532, 65532); err != nil {
		t.Fatal(err)
	}
	if _, err := Read("TEMPORAL_API_KEY_FILE", path); err == nil {
		t.Error("a file another user's group can read was accepted")
	}
}
