package spool

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A spooled job is one file, <kind>.<hash of key>.job, holding an
// envelope. The name depends on the key only, so spooling the same work
// twice leaves one file. Files being written start with "." and are never
// read; one left by a crash mid-write was never acknowledged to its caller
// and is removed.
const (
	jobExt     = ".job"
	badExt     = ".bad" // a file that cannot be decoded or whose job is refused: kept for an operator
	tmpPrefix  = ".tmp-"
	envelopeV1 = 1
	// maxFile bounds what Drain reads of one file.
	maxFile = 1 << 20
)

var errNoDecoder = errors.New("spool: no decoder registered for the kind")

type envelope struct {
	V       int             `json:"v"`
	Kind    string          `json:"kind"`
	Key     string          `json:"key"`
	Created time.Time       `json:"created"`
	Job     json.RawMessage `json:"job"`
}

// prepareDir creates dir (0700), removes half-written files and checks a
// file can be written, synced and removed there.
func prepareDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("spool: directory %s: %w", dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("spool: directory %s: %w", dir, err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tmpPrefix) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	probe := filepath.Join(dir, tmpPrefix+"probe")
	f, err := os.OpenFile(probe, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err == nil {
		err = errors.Join(f.Sync(), f.Close(), os.Remove(probe))
	}
	if err != nil {
		return fmt.Errorf("spool: directory %s cannot be written: %w", dir, err)
	}
	return nil
}

func fileName(kind, key string) string {
	sum := sha256.Sum256([]byte(key))
	return kind + "." + hex.EncodeToString(sum[:16]) + jobExt
}

// write stores j atomically: a temporary file (0600), fsync, a link to
// the job's name, fsync of the directory. Once it returns nil the job
// survives a crash of the process or the machine.
func (s *Spool) write(kind string, j Job) error {
	payload, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("spool: encode %s job: %w", kind, err)
	}
	raw, err := json.Marshal(envelope{V: envelopeV1, Kind: kind, Key: j.Key(), Created: time.Now().UTC(), Job: payload})
	if err != nil {
		return fmt.Errorf("spool: encode %s job: %w", kind, err)
	}
	tmp := filepath.Join(s.dir, tmpPrefix+rand.Text())
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("spool: write %s job: %w", kind, err)
	}
	_, err = f.Write(raw)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// A link never replaces: when the same work is already spooled
		// (an end retried during the outage), the first one stands.
		if err = os.Link(tmp, filepath.Join(s.dir, fileName(kind, j.Key()))); errors.Is(err, fs.ErrExist) {
			err = nil
		}
	}
	if rerr := os.Remove(tmp); err == nil {
		err = rerr
	}
	if err == nil {
		err = syncDir(s.dir)
	}
	if err != nil {
		return fmt.Errorf("spool: write %s job: %w", kind, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// decodeEnvelope parses a spooled file. The directory is the replica's
// own, but a file in it may be cut short by a full disk or edited by
// hand, so anything but a whole, known envelope is refused.
func decodeEnvelope(raw []byte) (envelope, error) {
	var e envelope
	if err := json.Unmarshal(raw, &e); err != nil {
		return envelope{}, fmt.Errorf("spool: malformed file: %w", err)
	}
	switch {
	case e.V != envelopeV1:
		return envelope{}, fmt.Errorf("spool: file version %d", e.V)
	case e.Kind == "" || e.Key == "" || len(e.Job) == 0 || string(e.Job) == "null":
		return envelope{}, errors.New("spool: file without kind, key or job")
	}
	return e, nil
}

// Pending is how many jobs wait in the directory.
func (s *Spool) Pending() (int, error) {
	if s.dir == "" {
		return 0, nil
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return 0, fmt.Errorf("spool: %w", err)
	}
	n := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), jobExt) && !strings.HasPrefix(e.Name(), ".") {
			n++
		}
	}
	return n, nil
}

// oldestJob is the modification time of the oldest job file, ok false
// when there is none (or the directory cannot be read).
func (s *Spool) oldestJob() (oldest time.Time, ok bool) {
	if s.dir == "" {
		return oldest, false
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return oldest, false
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), jobExt) || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // drained since the directory was read
		}
		if t := info.ModTime(); !ok || t.Before(oldest) {
			oldest, ok = t, true
		}
	}
	return oldest, ok
}

// Drain completes the spooled jobs, in name order, and removes each
// once done. It stops at the first job the database does not take (it is
// still down) and returns that error with how many it completed. A file
// that cannot be decoded, or whose job is refused for good, is renamed
// *.bad, logged and counted, so it neither blocks the others nor is lost.
func (s *Spool) Drain(ctx context.Context) (int, error) {
	if s.dir == "" {
		return 0, nil
	}
	s.drainMu.Lock()
	defer s.drainMu.Unlock()
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return 0, fmt.Errorf("spool: %w", err)
	}
	done := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, jobExt) || strings.HasPrefix(name, ".") {
			continue
		}
		if ctx.Err() != nil || s.stopped.Err() != nil {
			return done, context.Canceled
		}
		kind, err := s.complete(ctx, filepath.Join(s.dir, name))
		if errors.Is(err, errNoDecoder) {
			// A kind this configuration does not run (say, voice without a
			// provider): kept for a replica that does.
			s.log.Warn("spool: no decoder for a spooled job; left in place", "file", name, "kind", kind)
			continue
		}
		if err != nil && Retryable(err) {
			return done, err
		}
		if err != nil {
			s.metrics.failed.WithLabelValues(kind).Inc()
			s.log.Error("spool: a spooled job was refused; kept as .bad for an operator", "file", name, "err", err)
			err = os.Rename(filepath.Join(s.dir, name), filepath.Join(s.dir, strings.TrimSuffix(name, jobExt)+badExt))
		} else {
			s.metrics.completed.WithLabelValues(kind).Inc()
			done++
			err = os.Remove(filepath.Join(s.dir, name))
		}
		if err == nil {
			err = syncDir(s.dir)
		}
		if err != nil {
			return done, fmt.Errorf("spool: %w", err)
		}
	}
	return done, nil
}

// complete runs the job in file path once.
func (s *Spool) complete(ctx context.Context, path string) (kind string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	raw, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	f.Close()
	if err != nil {
		return "", err
	}
	if len(raw) > maxFile {
		return "", errors.New("spool: file too large")
	}
	env, err := decodeEnvelope(raw)
	if err != nil {
		return "", err
	}
	dec := s.decoder(env.Kind)
	if dec == nil {
		return env.Kind, errNoDecoder
	}
	j, err := dec(env.Job)
	if err != nil {
		return env.Kind, fmt.Errorf("spool: decode %s job: %w", env.Kind, err)
	}
	if j.Key() != env.Key {
		return env.Kind, fmt.Errorf("spool: %s job's key does not match its file", env.Kind)
	}
	return env.Kind, s.try(ctx, j, s.attempt)
}
