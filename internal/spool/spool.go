// Package spool is the durable path for the database writes that must not
// be lost: what ends a chat turn or a voice session in the database (its
// usage record and its quota settlement), DESIGN §10 "Durability". A job
// is tried against the database a few times with backoff; if the database
// still does not take it, it is written to a local directory (one file,
// 0600, written with fsync and rename) and completed from there when the
// database answers again, by this replica's Run, on recovery and on start.
//
// Every job must be idempotent on its key: a replica that crashes after
// the database committed a job and before its file was removed completes
// it again on start, and that must change nothing.
package spool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/database"
)

// Job is one piece of work that must reach the database.
type Job interface {
	// Key names the work: two jobs with one key are the same work.
	Key() string
	// Complete does the work. Doing it again after it succeeded must
	// change nothing (a unique key, a settlement row). It must honour
	// ctx: an attempt is bounded.
	Complete(ctx context.Context) error
}

// Decoder rebuilds a Job of its kind from what Do stored (the job as
// JSON), wiring in whatever the job needs to run (a pool, a service).
type Decoder func(payload []byte) (Job, error)

// Defaults of Params.
const (
	DefaultRetryFor = 3 * time.Second
	DefaultAttempt  = 2 * time.Second
	firstBackoff    = 50 * time.Millisecond
	maxBackoff      = time.Second // how soon a recovered database is noticed
)

// Params are what a Spool needs.
type Params struct {
	// Dir holds the spooled jobs; New creates it (0700) and checks it can
	// be written. Empty keeps no files: Do retries, then returns the
	// error (for tests and tools that own no durable storage).
	Dir string
	// RetryFor is how long Do keeps trying the database before it
	// spools; Attempt bounds one try.
	RetryFor, Attempt time.Duration
	Registerer        prometheus.Registerer // nil: metrics kept, not exported
	Logger            *slog.Logger
}

// Spool runs jobs against the database and keeps the ones it could not
// run until it can. It is safe for concurrent use.
type Spool struct {
	dir               string
	retryFor, attempt time.Duration
	log               *slog.Logger
	metrics           *metrics
	unlock            func() // lets the directory go (Close)
	lastPending       atomic.Int64

	dmu      sync.RWMutex
	decoders map[string]Decoder

	wake     chan struct{} // something was spooled: drain soon
	stopped  context.Context
	stop     context.CancelFunc
	inflight inflight
	drainMu  sync.Mutex // one drain at a time
}

// New checks p, creates the directory and checks it can be written: a
// replica that could not keep its promise fails at startup.
func New(p Params) (*Spool, error) {
	if p.RetryFor <= 0 {
		p.RetryFor = DefaultRetryFor
	}
	if p.Attempt <= 0 {
		p.Attempt = DefaultAttempt
	}
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	if p.Registerer == nil {
		p.Registerer = prometheus.NewRegistry()
	}
	s := &Spool{dir: p.Dir, retryFor: p.RetryFor, attempt: p.Attempt, log: p.Logger,
		decoders: map[string]Decoder{}, wake: make(chan struct{}, 1), unlock: func() {}}
	s.stopped, s.stop = context.WithCancel(context.Background())
	if s.dir != "" {
		// The lock comes first: prepareDir removes half-written files,
		// which in a directory another process holds are its writes.
		unlock, err := lockDir(s.dir)
		if err != nil {
			return nil, err
		}
		if err := prepareDir(s.dir); err != nil {
			unlock()
			return nil, err
		}
		s.unlock = sync.OnceFunc(unlock)
	}
	m, err := newMetrics(p.Registerer, s.pendingNow, s.oldestNow)
	if err != nil {
		s.unlock()
		return nil, fmt.Errorf("spool: metrics: %w", err)
	}
	s.metrics = m
	return s, nil
}

// Close lets the directory go, so another process may open a spool on
// it. Call it last, after Stop and Wait: a job written after Close may
// be drained by that process while this one still writes.
func (s *Spool) Close() { s.unlock() }

// Register names the decoder of a kind of job. Register every kind before
// Run, so a spooled job of any kind finds its decoder.
func (s *Spool) Register(kind string, d Decoder) {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	s.decoders[kind] = d
}

func (s *Spool) decoder(kind string) Decoder {
	s.dmu.RLock()
	defer s.dmu.RUnlock()
	return s.decoders[kind]
}

// Do completes j now if the database takes it within RetryFor, else
// spools it and returns spooled true: Run completes it once the database
// answers. An error is one no retry can fix (Complete refused the job), or
// a job neither completed nor spooled (the directory failed, or there is
// none): the caller logs it. After Stop, a failing job is spooled at once.
func (s *Spool) Do(ctx context.Context, kind string, j Job) (spooled bool, err error) {
	if s.decoder(kind) == nil {
		return false, fmt.Errorf("spool: no decoder registered for %q", kind)
	}
	s.inflight.add()
	defer s.inflight.done()
	deadline := time.Now().Add(s.retryFor)
	backoff := firstBackoff
	for {
		// No try runs past RetryFor: the caller's bound is RetryFor and
		// the write, whatever the database does (a try begun just
		// before the deadline would otherwise hold it for Attempt more).
		err = s.try(ctx, j, min(s.attempt, time.Until(deadline)))
		if err == nil {
			return false, nil
		}
		if !Retryable(err) {
			s.metrics.failed.WithLabelValues(kind).Inc()
			return false, err
		}
		if s.stopped.Err() != nil || time.Until(deadline) < backoff {
			break
		}
		select {
		case <-time.After(backoff):
		case <-s.stopped.Done():
		}
		backoff = min(2*backoff, maxBackoff)
	}
	if s.dir == "" {
		return false, err
	}
	if werr := s.write(kind, j); werr != nil {
		return false, errors.Join(err, werr)
	}
	s.metrics.spooled.WithLabelValues(kind).Inc()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return true, nil
}

// try runs one attempt, bounded by limit and ended early by Stop. The
// attempt is detached from ctx's cancellation (a client that left still
// used what it used) but keeps its values. A stopped attempt is given up
// at once; it may still commit, which the job's idempotency absorbs.
func (s *Spool) try(ctx context.Context, j Job, limit time.Duration) error {
	if s.stopped.Err() != nil {
		return fmt.Errorf("spool: stopping: %w", context.Canceled)
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
	done := make(chan error, 1)
	go func() {
		defer cancel()
		done <- j.Complete(actx)
	}()
	select {
	case err := <-done:
		return err
	case <-s.stopped.Done():
		cancel()
		return fmt.Errorf("spool: stopping: %w", context.Canceled)
	}
}

// Retryable reports whether a job that failed with err may succeed later:
// the database was unreachable, slow or going away.
func Retryable(err error) bool {
	if database.Transient(err) {
		return true
	}
	var e *apierr.Error
	return errors.As(err, &e) && e.Code == apierr.Unavailable
}

// Run drains the spool now, and again whenever a job is spooled, retrying
// every second or so while the database refuses, until ctx ends or Stop.
// Not a heartbeat.Every loop: it wakes on a spooled job and backs off.
func (s *Spool) Run(ctx context.Context) {
	if s.dir == "" {
		return
	}
	backoff := firstBackoff
	for {
		n, err := s.Drain(ctx)
		if n > 0 {
			s.log.Info("spool: completed spooled jobs", "jobs", n)
		}
		wait := time.Hour // nothing left: wait for the next spooled job
		if err != nil {
			wait, backoff = backoff, min(2*backoff, maxBackoff)
		} else {
			backoff = firstBackoff
		}
		select {
		case <-ctx.Done():
			return
		case <-s.stopped.Done():
			return
		case <-s.wake:
		case <-time.After(wait):
		}
	}
}

// Hold counts work under way that ends in a Do (a chat turn, a voice
// end), so Wait waits for it too: at shutdown a turn cancelled a moment
// ago has yet to hand its usage over. Call done when the work is over.
func (s *Spool) Hold() (done func()) {
	s.inflight.add()
	var once sync.Once
	return func() { once.Do(s.inflight.done) }
}

// Detach is ctx without its cancellation, bounded by limit, and ended by
// Stop: for work that must outlive its request (a client that left still
// used what it used) but not hold the replica's shutdown.
func (s *Spool) Detach(ctx context.Context, limit time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
	stop := context.AfterFunc(s.stopped, cancel)
	return ctx, func() { stop(); cancel() }
}

// Stop makes the spool stop trying the database: attempts under way are
// given up and their jobs spooled, and Run returns. Call it at shutdown
// before the pool closes, then Wait.
func (s *Spool) Stop() { s.stop() }

// Wait returns when no Do or Hold is under way, or with ctx's error.
func (s *Spool) Wait(ctx context.Context) error {
	idle := s.inflight.idle()
	if idle == nil {
		return nil
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("spool: jobs still being written: %w", ctx.Err())
	}
}

// inflight counts the Do calls and Holds under way. Unlike a WaitGroup it may be
// waited on while calls start.
type inflight struct {
	mu   sync.Mutex
	n    int
	zero chan struct{} // closed when n drops to 0
}

func (f *inflight) add() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 {
		f.zero = make(chan struct{})
	}
	f.n++
}

func (f *inflight) done() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n--; f.n == 0 {
		close(f.zero)
	}
}

// idle is closed once no call is under way; nil if none is now.
func (f *inflight) idle() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 {
		return nil
	}
	return f.zero
}
