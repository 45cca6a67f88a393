package tools

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Fast-path calls are batched per tool and replica, "group commit" style,
// as quota admissions are. A call's own statement is most of its work, but
// around it each call paid a BEGIN, a lock, the tool_calls insert, a COMMIT
// and its flush, and two round trips. Concurrent calls of one tool now
// share them: a call sends at once when fewer than sqlMaxInFlight batches
// are in flight, taking whatever else is queued along; otherwise it
// queues, and the queue goes as the next batch as soon as a batch returns.
// Nothing waits on a timer: at low load every call is a batch of one.
//
// A batch never holds two calls with the same (session, call_id). A call
// whose key is already queued or in flight is a duplicate in the making:
// it runs alone on its caller's goroutine, where it waits on the owner's
// lock and then replays, without holding up a batch.
type sqlBatcher struct {
	e           *Executor
	maxInFlight int // sqlMaxInFlight; tests lower it

	mu       sync.Mutex
	queue    []*sqlJob
	busy     map[callKey]struct{} // queued or in flight
	inFlight int
}

// Batching limits. Each batch in flight holds one pool connection; two let
// the database run one batch's statements while the other is shaped in
// Go. A batch takes one advisory lock per call, and PostgreSQL's lock
// table has room for 64 per connection by default.
const (
	sqlMaxBatch    = 32
	sqlMaxInFlight = 2
)

type callKey struct{ session, call string }

// What a call does after its batch (sqlJob.next).
type nextStep int

const (
	nextPending   nextStep = iota // not worked out yet
	nextAnswered                  // res is the answer (once stored)
	nextAlone                     // the batch failed first: run again in a batch of one
	nextDuplicate                 // the call has a row: replay or wait
	nextRun                       // the general path, with the tool's Run
	nextTimeout                   // the general path, recording a timeout
	nextFailed                    // err
)

// sqlJob is one fast-path call in a batch. ctx is the caller's, for logs
// only: a batch, once sent, runs to its end or its deadline.
type sqlJob struct {
	ctx   context.Context
	t     *Tool
	c     *Call
	args  []byte
	inv   Invocation
	query string
	qargs []any
	done  chan struct{}

	next    nextStep
	res     Result
	outcome string
	took    time.Duration
	resp    []byte
	status  string
	code    *string
	err     error
}

func newSQLBatcher(e *Executor) *sqlBatcher {
	return &sqlBatcher{e: e, maxInFlight: sqlMaxInFlight, busy: make(map[callKey]struct{})}
}

// do runs j in a batch and returns when its batch has ended. A caller that
// goes away while j still waits in the queue takes it out: nothing of it
// was sent, and it ends with the caller's error. Once sent, it runs to the
// end of its batch, as a claimed call on the general path runs to its
// result.
func (b *sqlBatcher) do(j *sqlJob) {
	key := callKey{j.c.SessionID, j.c.CallID}
	b.mu.Lock()
	if _, dup := b.busy[key]; dup {
		b.mu.Unlock()
		b.e.runBatch([]*sqlJob{j})
		return
	}
	j.done = make(chan struct{})
	b.busy[key] = struct{}{}
	b.queue = append(b.queue, j)
	var batch []*sqlJob
	if b.inFlight < b.maxInFlight {
		batch = b.takeLocked()
		b.inFlight++
	}
	b.mu.Unlock()
	if batch != nil {
		go b.run(batch)
	}
	select {
	case <-j.done:
		return
	case <-j.ctx.Done():
	}
	b.mu.Lock()
	i := slices.Index(b.queue, j)
	if i >= 0 {
		b.queue = slices.Delete(b.queue, i, i+1)
		delete(b.busy, key)
	}
	b.mu.Unlock()
	if i < 0 {
		<-j.done // in flight: it ends with its batch
		return
	}
	j.next, j.err = nextFailed, j.ctx.Err()
}

// takeLocked removes the next batch from the queue. b.mu is held.
func (b *sqlBatcher) takeLocked() []*sqlJob {
	n := min(len(b.queue), sqlMaxBatch)
	if n == 0 {
		return nil
	}
	batch := slices.Clone(b.queue[:n])
	clear(b.queue[:n])
	b.queue = b.queue[n:]
	return batch
}

// run sends batch, then whatever queued meanwhile, until the queue is
// empty.
func (b *sqlBatcher) run(batch []*sqlJob) {
	for batch != nil {
		b.e.runBatch(batch)
		b.mu.Lock()
		for _, j := range batch {
			delete(b.busy, callKey{j.c.SessionID, j.c.CallID})
		}
		ended := batch
		if batch = b.takeLocked(); batch == nil {
			b.inFlight--
		}
		b.mu.Unlock()
		for _, j := range ended {
			close(j.done)
		}
	}
}
