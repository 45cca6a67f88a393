package pglocal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A primary and its streaming standby, for failover tests: each a private
// cluster like Start's, on its own loopback port. The standby is a
// pg_basebackup -R copy of the primary, so it has the primary's superuser,
// password and databases, and follows its WAL until Promote.

// StartPrimary starts a fresh cluster under dir that a standby may stream
// from.
func StartPrimary(ctx context.Context, dir string) (*Cluster, error) {
	return startWith(ctx, dir, "-c wal_level=replica -c max_wal_senders=4 -c wal_keep_size=64MB")
}

// StartStandby copies primary with pg_basebackup -R into dir and starts it
// as a hot standby on a free port.
func StartStandby(ctx context.Context, primary *Cluster, dir string) (*Cluster, error) {
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
	pw, err := os.ReadFile(filepath.Join(primary.Dir, "password"))
	if err != nil {
		return nil, fmt.Errorf("pglocal: read password: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "password"), pw, 0o600); err != nil {
		return nil, fmt.Errorf("pglocal: %w", err)
	}
	// application_name names the standby for synchronous_standby_names;
	// -R writes this connection string as primary_conninfo.
	conninfo := fmt.Sprintf("host=127.0.0.1 port=%d user=%s password=%s application_name=standby",
		primary.Port, superuser, strings.TrimSpace(string(pw)))
	data := filepath.Join(dir, "data")
	if err := c.run(ctx, "pg_basebackup", "-D", data, "-d", conninfo, "-R", "-X", "stream", "-c", "fast"); err != nil {
		return nil, fmt.Errorf("pglocal: pg_basebackup: %w", err)
	}
	if err := c.startServer(ctx, data, ""); err != nil {
		return nil, err
	}
	c.setPort(c.Port, string(pw))
	return c, nil
}

// startWith is Start for a fresh cluster with extra server options.
func startWith(ctx context.Context, dir, extra string) (*Cluster, error) {
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
	data, pwFile := filepath.Join(dir, "data"), filepath.Join(dir, "password")
	if err := c.initdb(ctx, data, pwFile); err != nil {
		return nil, err
	}
	pw, err := os.ReadFile(pwFile)
	if err != nil {
		return nil, fmt.Errorf("pglocal: read password: %w", err)
	}
	if err := c.startServer(ctx, data, extra); err != nil {
		return nil, err
	}
	c.setPort(c.Port, string(pw))
	return c, nil
}

// startServer starts the server of data on a free port and records it.
func (c *Cluster) startServer(ctx context.Context, data, extra string) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	opts := fmt.Sprintf("-p %d -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c max_connections=100 %s", port, extra)
	logFile := filepath.Join(c.Dir, "postgres.log")
	if err := c.run(ctx, "pg_ctl", "start", "-w", "-t", "60", "-D", data, "-l", logFile, "-o", opts); err != nil {
		return fmt.Errorf("pglocal: start (see %s): %w", logFile, err)
	}
	c.Port = port
	return nil
}

// Promote makes a standby a primary and waits until it takes writes.
func (c *Cluster) Promote(ctx context.Context) error {
	return c.run(ctx, "pg_ctl", "promote", "-w", "-t", "60", "-D", filepath.Join(c.Dir, "data"))
}

// StopImmediate stops the server without a shutdown checkpoint, as a crash
// would; it reports no error for a server that is not running.
func (c *Cluster) StopImmediate(ctx context.Context) error {
	if _, ok := c.Postmaster(); !ok {
		return nil
	}
	return c.run(ctx, "pg_ctl", "stop", "-m", "immediate", "-w", "-D", filepath.Join(c.Dir, "data"))
}

// Kill sends SIGKILL to the postmaster, the unplanned loss of a primary:
// its backends go on until they notice, and nothing is flushed or sent.
func (c *Cluster) Kill() error {
	pid, ok := c.Postmaster()
	if !ok {
		return fmt.Errorf("pglocal: no server running under %s", c.Dir)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("pglocal: kill %d: %w", pid, err)
	}
	return nil
}

// Postmaster is the pid of the running server's postmaster, if one runs.
func (c *Cluster) Postmaster() (int, bool) {
	b, err := os.ReadFile(filepath.Join(c.Dir, "data", "postmaster.pid"))
	if err != nil {
		return 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		return 0, false
	}
	if syscall.Kill(pid, 0) != nil {
		return 0, false
	}
	// A killed postmaster whose parent (pg_ctl has exited; init) has not
	// reaped it yet is a zombie: gone for every purpose here.
	st, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err == nil {
		if _, rest, ok := strings.Cut(string(st), ") "); ok && strings.HasPrefix(rest, "Z") {
			return 0, false
		}
	}
	return pid, true
}

// WaitGone waits until the postmaster under c.Dir has exited, so a killed
// server's port and data directory are free.
func (c *Cluster) WaitGone(ctx context.Context) error {
	for {
		if _, ok := c.Postmaster(); !ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pglocal: server under %s still running: %w", c.Dir, ctx.Err())
		case <-time.After(20 * time.Millisecond): // polls the process table
		}
	}
}

// Log is the server's log, for a test's failure message.
func (c *Cluster) Log() string {
	b, _ := os.ReadFile(filepath.Join(c.Dir, "postgres.log"))
	return string(b)
}
