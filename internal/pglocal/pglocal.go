// Package pglocal finds or provisions a PostgreSQL server on this machine:
// the zero-setup path of `voxgate dev` and of the test harness on a machine
// where no server runs. It starts a private cluster from the local
// PostgreSQL binaries, listening on 127.0.0.1 only, with a generated
// password kept in a 0600 file.
package pglocal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/randid"
)

// Cluster is a private PostgreSQL cluster under Dir.
type Cluster struct {
	Dir  string
	Port int
	URL  string // to the "postgres" database as the superuser
	bin  string
}

const superuser = "voxgate"

// Reachable reports whether a server answers at url within two seconds.
func Reachable(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return false
	}
	defer conn.Close(ctx)
	return conn.Ping(ctx) == nil
}

// LocalCandidates are the URLs tried for "a PostgreSQL on localhost:5432".
func LocalCandidates() []string {
	out := []string{"postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"}
	if u, err := user.Current(); err == nil && u.Username != "postgres" {
		out = append(out, "postgres://"+u.Username+"@127.0.0.1:5432/postgres?sslmode=disable")
	}
	return out
}

// FindLocal returns the first of LocalCandidates that answers, or "".
func FindLocal(ctx context.Context) string {
	for _, u := range LocalCandidates() {
		if Reachable(ctx, u) {
			return u
		}
	}
	return ""
}

// Binaries finds the directory holding initdb and pg_ctl: PATH first, then
// Debian's /usr/lib/postgresql/<version>/bin, newest version first.
func Binaries() (string, error) {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if _, err := exec.LookPath("initdb"); err == nil {
			// A link on PATH (/usr/local/bin/pg_ctl) points into the
			// directory that holds the other binaries (pg_basebackup).
			if real, err := filepath.EvalSymlinks(p); err == nil {
				p = real
			}
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("pglocal: no PostgreSQL binaries (initdb, pg_ctl) found; install PostgreSQL or set VOXGATE_DATABASE_URL")
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// Start makes sure a cluster lives under dir and is running, creating it on
// first use. Callers that may race (parallel test binaries) serialise with
// Lock.
func Start(ctx context.Context, dir string) (*Cluster, error) {
	bin, err := Binaries()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("pglocal: %w", err)
	}
	c := &Cluster{Dir: dir, bin: bin}
	if err := c.reachableByServer(ctx); err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	pwFile := filepath.Join(dir, "password")
	if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); err != nil {
		if err := c.initdb(ctx, data, pwFile); err != nil {
			return nil, err
		}
	}
	pw, err := os.ReadFile(pwFile)
	if err != nil {
		return nil, fmt.Errorf("pglocal: read password: %w", err)
	}
	if port, ok := runningPort(data); ok && c.answers(ctx, port, string(pw)) {
		c.setPort(port, string(pw))
		return c, nil
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	opts := fmt.Sprintf("-p %d -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c max_connections=200", port)
	logFile := filepath.Join(dir, "postgres.log")
	if err := c.run(ctx, "pg_ctl", "start", "-w", "-t", "60", "-D", data, "-l", logFile, "-o", opts); err != nil {
		return nil, fmt.Errorf("pglocal: start (see %s): %w", logFile, err)
	}
	c.setPort(port, string(pw))
	return c, nil
}

// Stop shuts the cluster down quickly.
func (c *Cluster) Stop(ctx context.Context) error {
	return c.run(ctx, "pg_ctl", "stop", "-m", "fast", "-w", "-D", filepath.Join(c.Dir, "data"))
}

func (c *Cluster) setPort(port int, pw string) {
	c.Port = port
	c.URL = fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/postgres?sslmode=disable", superuser, pw, port)
}

func (c *Cluster) answers(ctx context.Context, port int, pw string) bool {
	return Reachable(ctx, fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/postgres?sslmode=disable", superuser, pw, port))
}

func (c *Cluster) initdb(ctx context.Context, data, pwFile string) error {
	pw := randid.New("", 18)
	if err := os.WriteFile(pwFile, []byte(pw), 0o600); err != nil {
		return fmt.Errorf("pglocal: %w", err)
	}
	// initdb reads the password from a file it must be able to open, which
	// matters when it runs as the postgres user; remove the copy afterwards.
	initPw := filepath.Join(c.Dir, "initdb-password")
	if err := os.WriteFile(initPw, []byte(pw+"\n"), 0o600); err != nil {
		return fmt.Errorf("pglocal: %w", err)
	}
	defer os.Remove(initPw)
	if err := c.chownForServer(initPw); err != nil {
		return err
	}
	if err := c.run(ctx, "initdb", "-D", data, "-U", superuser, "--auth=scram-sha-256",
		"--pwfile="+initPw, "-E", "UTF8", "--locale=C.UTF-8", "--no-instructions"); err != nil {
		_ = os.RemoveAll(data)
		return fmt.Errorf("pglocal: initdb: %w", err)
	}
	return nil
}

// run runs a PostgreSQL binary, as the postgres user when we are root
// (PostgreSQL refuses to run as root).
func (c *Cluster) run(ctx context.Context, name string, args ...string) error {
	path := filepath.Join(c.bin, name)
	var cmd *exec.Cmd
	if os.Geteuid() == 0 {
		if err := c.chownForServer(c.Dir); err != nil {
			return err
		}
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, path, args...)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// pg_ctl's server inherits these; detach so the server outlives us.
	cmd.Stdin = nil
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w: %s", name, err, strings.TrimSpace(out.String()))
	}
	return nil
}

// chownForServer hands path (recursively) to the postgres user when we run
// as root, so the server process can use it.
func (c *Cluster) chownForServer(path string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return errors.New("pglocal: running as root needs a 'postgres' user to run the server as")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return filepath.Walk(path, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}

// reachableByServer checks, when we are root, that the postgres user can
// reach dir: a checkout under a private home directory cannot host the
// cluster, and initdb's own error would not say why.
func (c *Cluster) reachableByServer(ctx context.Context) error {
	if os.Geteuid() != 0 {
		return nil
	}
	if err := c.chownForServer(c.Dir); err != nil {
		return err
	}
	if err := exec.CommandContext(ctx, "runuser", "-u", "postgres", "--", "test", "-w", c.Dir).Run(); err != nil {
		return fmt.Errorf("pglocal: the postgres user cannot write %s (a parent directory is private); set VOXGATE_DATABASE_URL or move the checkout", c.Dir)
	}
	return nil
}

// runningPort reads the port from postmaster.pid when the server process
// recorded there is alive.
func runningPort(data string) (int, bool) {
	b, err := os.ReadFile(filepath.Join(data, "postmaster.pid"))
	if err != nil {
		return 0, false
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 4 {
		return 0, false
	}
	pid, err1 := strconv.Atoi(strings.TrimSpace(lines[0]))
	port, err2 := strconv.Atoi(strings.TrimSpace(lines[3]))
	if err1 != nil || err2 != nil {
		return 0, false
	}
	if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err != nil {
		return 0, false
	}
	return port, true
}

func freePort() (int, error) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pglocal: no free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// WithDatabase returns url pointing at database name instead.
func WithDatabase(dbURL, name string) string {
	u, err := url.Parse(dbURL)
	if err != nil || u.Scheme == "" {
		// A keyword/value DSN: a later dbname wins over an earlier one.
		return strings.TrimSpace(dbURL) + " dbname=" + name
	}
	u.Path = "/" + name
	return u.String()
}
