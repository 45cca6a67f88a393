package spool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
)

// store stands in for the database: it takes a job's key once (a unique
// key) while it is up, and answers UNAVAILABLE while it is down.
type store struct {
	mu      sync.Mutex
	down    bool
	hang    chan struct{} // non-nil: every Complete waits on it or its ctx
	entered chan struct{} // with hang: told when a Complete starts waiting
	taken   map[string]int
}

func newStore() *store { return &store{taken: map[string]int{}} }

func (st *store) setDown(down bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.down = down
}

func (st *store) count(key string) int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.taken[key]
}

type testJob struct {
	ID     string `json:"id"`
	Refuse bool   `json:"refuse"`
	st     *store
}

func (j *testJob) Key() string { return "test:" + j.ID }

func (j *testJob) Complete(ctx context.Context) error {
	st := j.st
	st.mu.Lock()
	hang := st.hang
	st.mu.Unlock()
	if hang != nil {
		st.entered <- struct{}{}
		select {
		case <-hang:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	switch {
	case st.down:
		return apierr.New(apierr.Unavailable, "")
	case j.Refuse:
		return errors.New("refused for good")
	}
	if st.taken[j.Key()] == 0 { // idempotent on the key, as a unique index is
		st.taken[j.Key()] = 1
	}
	return nil
}

func decodeTestJob(st *store) Decoder {
	return func(raw []byte) (Job, error) {
		j := &testJob{st: st}
		return j, json.Unmarshal(raw, j)
	}
}

func newTestSpool(t *testing.T, st *store, dir string) *Spool {
	t.Helper()
	s, err := New(Params{Dir: dir, RetryFor: 200 * time.Millisecond, Attempt: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	s.Register("test", decodeTestJob(st))
	return s
}

func jobFiles(t *testing.T, dir, ext string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+ext))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestDo(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		down        bool
		refuse      bool
		wantSpooled bool
		wantErr     bool
		wantTaken   int
		wantFiles   int
	}{
		{name: "database up: done at once", wantTaken: 1},
		{name: "database down: spooled", down: true, wantSpooled: true, wantFiles: 1},
		{name: "refused for good: an error, not spooled", refuse: true, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st, dir := newStore(), t.TempDir()
			st.setDown(tc.down)
			s := newTestSpool(t, st, dir)
			j := &testJob{ID: "a", Refuse: tc.refuse, st: st}
			spooled, err := s.Do(context.Background(), "test", j)
			if spooled != tc.wantSpooled || (err != nil) != tc.wantErr {
				t.Fatalf("Do: got spooled %v, err %v; want spooled %v, error %v", spooled, err, tc.wantSpooled, tc.wantErr)
			}
			if got := st.count(j.Key()); got != tc.wantTaken {
				t.Errorf("taken: got %d, want %d", got, tc.wantTaken)
			}
			files := jobFiles(t, dir, jobExt)
			if len(files) != tc.wantFiles {
				t.Fatalf("spool files: got %v, want %d", files, tc.wantFiles)
			}
			for _, f := range files {
				fi, err := os.Stat(f)
				if err != nil {
					t.Fatal(err)
				}
				if fi.Mode().Perm() != 0o600 {
					t.Errorf("%s: mode %v, want 0600", f, fi.Mode().Perm())
				}
			}
		})
	}
}

// The same work spooled twice (an end retried during the outage) keeps
// the first job.
func TestSpoolingTheSameKeyKeepsTheFirst(t *testing.T) {
	t.Parallel()
	st, dir := newStore(), t.TempDir()
	st.setDown(true)
	s := newTestSpool(t, st, dir)
	for _, refuse := range []bool{false, true} {
		if spooled, err := s.Do(context.Background(), "test", &testJob{ID: "same", Refuse: refuse, st: st}); !spooled || err != nil {
			t.Fatalf("Do: got spooled %v, err %v; want spooled", spooled, err)
		}
	}
	files := jobFiles(t, dir, jobExt)
	if len(files) != 1 {
		t.Fatalf("spool files: got %v, want 1", files)
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"refuse":false`) {
		t.Errorf("spooled job: got %s, want the first one", raw)
	}
}

// A job spooled while the database is down is completed by Run once it is
// back, exactly once, and its file removed; a restart after a crash
// between the commit and the removal completes it again without a second
// effect.
func TestRunCompletesSpooledJobsOnRecovery(t *testing.T) {
	t.Parallel()
	st, dir := newStore(), t.TempDir()
	st.setDown(true)
	s := newTestSpool(t, st, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan struct{})
	go func() { s.Run(ctx); close(ran) }()
	for i := range 3 {
		if spooled, err := s.Do(ctx, "test", &testJob{ID: fmt.Sprint(i), st: st}); !spooled || err != nil {
			t.Fatalf("job %d: got spooled %v, err %v; want spooled", i, spooled, err)
		}
	}
	st.setDown(false)
	deadline := time.After(10 * time.Second)
	for {
		if n, _ := s.Pending(); n == 0 && st.count("test:2") == 1 {
			break
		}
		select {
		case <-deadline:
			t.Fatal("spooled jobs not completed 10s after the database came back")
		case <-time.After(20 * time.Millisecond): // polls what Run does on its own
		}
	}
	for i := range 3 {
		if got := st.count(fmt.Sprintf("test:%d", i)); got != 1 {
			t.Errorf("job %d: taken %d times, want 1", i, got)
		}
	}
	cancel()
	<-ran
	s.Close()

	// The crash: the job's file is back after its commit. A new spool on
	// the directory completes it again, which changes nothing.
	crashed := &testJob{ID: "1", st: st}
	if err := s.write("test", crashed); err != nil {
		t.Fatal(err)
	}
	s2 := newTestSpool(t, st, dir)
	if n, err := s2.Drain(context.Background()); n != 1 || err != nil {
		t.Fatalf("Drain after the crash: got %d, %v; want 1, nil", n, err)
	}
	if got := st.count(crashed.Key()); got != 1 {
		t.Errorf("replayed job: taken %d times, want 1", got)
	}
}

// Stop gives up an attempt stuck on a hanging database at once and spools
// its job, so shutdown is not held by the database.
func TestStopSpoolsAHangingAttempt(t *testing.T) {
	t.Parallel()
	st, dir := newStore(), t.TempDir()
	st.hang, st.entered = make(chan struct{}), make(chan struct{}, 1)
	s, err := New(Params{Dir: dir, RetryFor: time.Minute, Attempt: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	s.Register("test", func(raw []byte) (Job, error) { return &testJob{st: st}, nil })
	type result struct {
		spooled bool
		err     error
	}
	res := make(chan result, 1)
	go func() {
		spooled, err := s.Do(context.Background(), "test", &testJob{ID: "h", st: st})
		res <- result{spooled, err}
	}()
	<-st.entered
	s.Stop()
	select {
	case r := <-res:
		if !r.spooled || r.err != nil {
			t.Fatalf("Do after Stop: got spooled %v, err %v; want spooled", r.spooled, r.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Do still waits on the hanging database 5s after Stop")
	}
	if err := s.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if files := jobFiles(t, dir, jobExt); len(files) != 1 {
		t.Fatalf("spool files after Stop: got %v, want 1", files)
	}
}

func TestDrainSetsAsideWhatItCannotRun(t *testing.T) {
	t.Parallel()
	st, dir := newStore(), t.TempDir()
	files := map[string]string{
		"test.garbage" + jobExt:  "{not json",
		"test.refused" + jobExt:  `{"v":1,"kind":"test","key":"test:r","job":{"id":"r","refuse":true}}`,
		"test.wrongkey" + jobExt: `{"v":1,"kind":"test","key":"test:other","job":{"id":"x"}}`,
		"other.kind" + jobExt:    `{"v":1,"kind":"other","key":"k","job":{}}`,
		"test.good" + jobExt:     `{"v":1,"kind":"test","key":"test:g","job":{"id":"g"}}`,
		tmpPrefix + "half":       `{"v":1,`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := newTestSpool(t, st, dir) // a start removes the half-written file
	n, err := s.Drain(context.Background())
	if n != 1 || err != nil {
		t.Fatalf("Drain: got %d, %v; want 1 completed, nil", n, err)
	}
	if got := st.count("test:g"); got != 1 {
		t.Errorf("good job: taken %d times, want 1", got)
	}
	var bad []string
	for _, f := range jobFiles(t, dir, badExt) {
		bad = append(bad, filepath.Base(f))
	}
	if want := "test.garbage.bad test.refused.bad test.wrongkey.bad"; strings.Join(bad, " ") != want {
		t.Errorf(".bad files: got %v, want %s", bad, want)
	}
	if left := jobFiles(t, dir, jobExt); len(left) != 1 || filepath.Base(left[0]) != "other.kind"+jobExt {
		t.Errorf("left in place: got %v, want only the job of a kind without a decoder", left)
	}
	if _, err := os.Stat(filepath.Join(dir, tmpPrefix+"half")); !os.IsNotExist(err) {
		t.Errorf("half-written file: got %v, want it removed at start", err)
	}
}

func TestNewRefusesAnUnwritableDirectory(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Params{Dir: filepath.Join(file, "spool")}); err == nil {
		t.Fatal("New under a regular file: got nil, want an error")
	}
}

func FuzzDecodeEnvelope(f *testing.F) {
	f.Add([]byte(`{"v":1,"kind":"chat_turn","key":"k","created":"2026-01-01T00:00:00Z","job":{"a":1}}`))
	f.Add([]byte(`{"v":2}`))
	f.Add([]byte(`{"v":1,"kind":"","key":"k","job":null}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		e, err := decodeEnvelope(raw)
		if err != nil {
			return
		}
		if e.V != envelopeV1 || e.Kind == "" || e.Key == "" || len(e.Job) == 0 || string(e.Job) == "null" {
			t.Fatalf("accepted an incomplete envelope: %+v", e)
		}
	})
}
