// Package postgres runs a private PostgreSQL cluster from the machine's own
// PostgreSQL binaries, in a data folder of the project: the database of
// `paymentsd dev` and of the tests when no DATABASE_URL is given.
//
// PostgreSQL refuses to run as root, so under root the cluster runs as the
// postgres user, which cannot reach a folder inside a private home (mode
// 0700, the default for /root). There the cluster's files live in
// RelocatedRoot instead, and the data folder holds a symbolic link to them.
package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// Cluster is a running private cluster.
type Cluster struct {
	Dir  string
	Port int
	// Started is true when Start started the cluster, false when it found
	// it running.
	Started bool
	bin     string
	user    string // the OS user that runs postgres when we are root
}

// URL is the connection URL of the cluster's postgres database.
func (c *Cluster) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.Port)
}

// Start initializes dir if it holds no cluster yet and starts the cluster
// on port, or reuses the one already running there. It holds a file lock
// while it works, so concurrent test processes share one cluster.
func Start(ctx context.Context, dir string, port int) (*Cluster, error) {
	return StartWith(ctx, dir, port, Options{})
}

// Options add to a new cluster's start: server settings (-c name=value)
// and files written into its data folder, readable by the server alone
// (a TLS certificate and its key, which the settings name).
type Options struct {
	Settings map[string]string
	Files    map[string][]byte
	// StandbyOf, when set, makes a new cluster a streaming read replica of
	// the cluster on that local port (pg_basebackup -R) instead of a
	// cluster of its own.
	StandbyOf int
}

// StartWith is Start with options.
func StartWith(ctx context.Context, dir string, port int, o Options) (*Cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)

	c := &Cluster{Dir: dir, Port: port, bin: bin}
	if os.Geteuid() == 0 {
		// PostgreSQL refuses to run as root: run it as the postgres user.
		c.user = "postgres"
		if _, err := user.Lookup(c.user); err != nil {
			return nil, fmt.Errorf("running as root needs the %q user (install the postgresql package): %w", c.user, err)
		}
		if c.Dir, err = c.reachable(ctx, dir); err != nil {
			return nil, err
		}
		dir = c.Dir
	}
	if _, err := os.Stat(filepath.Join(dir, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		if err := c.initdb(ctx, o.StandbyOf); err != nil {
			return nil, err
		}
	}
	for name, content := range o.Files {
		if err := c.writeFile(filepath.Join(dir, name), content); err != nil {
			return nil, err
		}
	}
	if c.run(ctx, "pg_ctl", "-D", dir, "status") == nil {
		// Already running, perhaps on another port than asked: use its own.
		if pid, err := os.ReadFile(filepath.Join(dir, "postmaster.pid")); err == nil {
			if lines := strings.Split(string(pid), "\n"); len(lines) > 3 {
				if p, err := strconv.Atoi(strings.TrimSpace(lines[3])); err == nil {
					c.Port = p
				}
			}
		}
		return c, nil
	}
	settings := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200", port, dir)
	for _, k := range slices.Sorted(maps.Keys(o.Settings)) {
		settings += fmt.Sprintf(" -c %s=%s", k, o.Settings[k])
	}
	err = c.run(ctx, "pg_ctl", "-D", dir, "-w", "-t", "60", "-l", filepath.Join(dir, "postgres.log"), "-o", settings, "start")
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "postgres.log"))
		return nil, fmt.Errorf("start postgres: %w\n%s", err, tail(string(log), 2000))
	}
	c.Started = true
	return c, nil
}

// Stop stops the cluster, keeping its data.
func (c *Cluster) Stop(ctx context.Context) error {
	return c.run(ctx, "pg_ctl", "-D", c.Dir, "-m", "fast", "-w", "stop")
}

// RelocatedRoot holds the files of the clusters whose data folder the
// postgres user cannot reach (see the package comment).
const RelocatedRoot = "/var/lib/paymentsd"

// reachable returns the folder the cluster of data folder dir lives in
// when it runs as the postgres user: dir itself where that user can reach
// it, else a folder under RelocatedRoot named after dir, which dir then
// links to. A new link starts a new cluster: whatever an earlier data
// folder of the same path left there is removed, so deleting the data
// folder starts over as it does without the link.
func (c *Cluster) reachable(ctx context.Context, dir string) (string, error) {
	if target, err := os.Readlink(dir); err == nil {
		return target, os.MkdirAll(filepath.Dir(target), 0o755)
	}
	if c.run(ctx, "", "test", "-x", filepath.Dir(dir)) == nil {
		return dir, nil
	}
	if _, err := os.Stat(filepath.Join(dir, "PG_VERSION")); err == nil {
		return "", fmt.Errorf("the cluster in %s runs as the postgres user, which cannot reach that folder: move the project to a folder every user can traverse, or delete %s to start a new cluster", dir, dir)
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	sum := sha256.Sum256([]byte(dir))
	target := filepath.Join(RelocatedRoot, hex.EncodeToString(sum[:6])+"-"+filepath.Base(dir))
	if _, err := os.Stat(filepath.Join(target, "postmaster.pid")); err == nil {
		_ = c.run(ctx, "pg_ctl", "-D", target, "-m", "immediate", "-w", "stop")
	}
	if err := os.RemoveAll(target); err != nil {
		return "", err
	}
	if err := os.MkdirAll(RelocatedRoot, 0o755); err != nil {
		return "", err
	}
	if err := os.Symlink(target, dir); err != nil {
		return "", err
	}
	return target, nil
}

// writeFile writes a file the server alone reads: owned by the cluster's
// user, mode 0600.
func (c *Cluster) writeFile(path string, content []byte) error {
	if err := os.WriteFile(path, content, 0o600); err != nil {
		return err
	}
	if c.user == "" {
		return nil
	}
	u, err := user.Lookup(c.user)
	if err != nil {
		return err
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return os.Chown(path, uid, gid)
}

// initdb makes a new cluster in c.Dir: its own, or a copy of the cluster
// on port standbyOf, set up to stream from it.
func (c *Cluster) initdb(ctx context.Context, standbyOf int) error {
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return err
	}
	if c.user != "" {
		u, err := user.Lookup(c.user)
		if err != nil {
			return err
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(c.Dir, uid, gid); err != nil {
			return err
		}
	}
	if standbyOf != 0 {
		if err := c.run(ctx, "pg_basebackup", "-D", c.Dir, "-R", "-X", "stream", "--no-sync", "--checkpoint=fast", "-h", "127.0.0.1",
			"-p", strconv.Itoa(standbyOf), "-U", "postgres"); err != nil {
			return fmt.Errorf("pg_basebackup: %w", err)
		}
		return nil
	}
	if err := c.run(ctx, "initdb", "-D", c.Dir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"); err != nil {
		return fmt.Errorf("initdb: %w", err)
	}
	return nil
}

// run runs one of the PostgreSQL tools (or, with tool "", the command
// args name) as the cluster's user.
func (c *Cluster) run(ctx context.Context, tool string, args ...string) error {
	name := filepath.Join(c.bin, tool)
	if tool == "" {
		name, args, tool = args[0], args[1:], args[0]
	}
	if c.user != "" {
		args = append([]string{"-u", c.user, "--", name}, args...)
		name = "runuser"
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = "/"
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", tool, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// binDir finds the PostgreSQL server binaries: Debian keeps them under
// /usr/lib/postgresql/<version>/bin; elsewhere they are on PATH.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("no PostgreSQL server binaries found (install the postgresql package, or set DATABASE_URL)")
}

// Tool returns the path of a PostgreSQL client tool (pg_dump,
// pg_restore) of the newest version installed, which reads every older
// server's data.
func Tool(name string) (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if p := filepath.Join(d, name); fileExists(p) {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s not found (install the postgresql-client package)", name)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
