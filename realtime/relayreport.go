package realtime

import (
	"container/heap"
	"math/rand/v2"
	"sync"
	"time"
)

// reporter sends the RTCP reports of every relayed call on a Network from
// one goroutine, each call every ReportInterval. pion's report
// interceptors would give every leg two tickers and two goroutines that
// wake whether the call carries audio or not; one schedule for the
// replica holds no timer per call (docs/voice.md, "Relay"). The goroutine
// starts with the first call and stops with the Network.
type reporter struct {
	mu      sync.Mutex
	due     dueRelays
	wake    chan struct{} // a call was added ahead of the goroutine's wait
	stop    chan struct{}
	running bool
	stopped bool
}

// add schedules r's first reports at a random point within its interval,
// so calls started together do not report together (RFC 3550 6.3.5).
func (p *reporter) add(r *Relay) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped || r.reportAt >= 0 {
		return
	}
	r.nextReport = time.Now().Add(rand.N(r.p.ReportInterval) + time.Millisecond)
	heap.Push(&p.due, r)
	if !p.running {
		p.running, p.wake, p.stop = true, make(chan struct{}, 1), make(chan struct{})
		go p.run(p.wake, p.stop)
	}
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// remove unschedules r; its legs are closing.
func (p *reporter) remove(r *Relay) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r.reportAt >= 0 {
		heap.Remove(&p.due, r.reportAt)
	}
}

// close stops the goroutine; calls still held send no more reports.
func (p *reporter) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.stopped && p.running {
		close(p.stop)
	}
	p.stopped = true
}

func (p *reporter) run(wake, stop chan struct{}) {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	var batch []*Relay
	for {
		batch = batch[:0]
		p.mu.Lock()
		now := time.Now()
		for len(p.due) > 0 && !p.due[0].nextReport.After(now) {
			r := p.due[0]
			batch = append(batch, r)
			r.nextReport = r.nextReport.Add(r.p.ReportInterval)
			if r.nextReport.Before(now) { // the goroutine fell behind: no burst to catch up
				r.nextReport = now.Add(r.p.ReportInterval)
			}
			heap.Fix(&p.due, 0)
		}
		wait := time.Hour
		if len(p.due) > 0 {
			wait = p.due[0].nextReport.Sub(now)
		}
		p.mu.Unlock()
		for _, r := range batch {
			r.report()
		}
		t.Reset(wait)
		select {
		case <-t.C:
		case <-wake:
		case <-stop:
			return
		}
	}
}

// dueRelays is a heap of calls by their next report; each call's
// reportAt is its index, -1 when not scheduled.
type dueRelays []*Relay

func (d dueRelays) Len() int           { return len(d) }
func (d dueRelays) Less(i, j int) bool { return d[i].nextReport.Before(d[j].nextReport) }
func (d dueRelays) Swap(i, j int) {
	d[i], d[j] = d[j], d[i]
	d[i].reportAt, d[j].reportAt = i, j
}
func (d *dueRelays) Push(x any) {
	r := x.(*Relay)
	r.reportAt = len(*d)
	*d = append(*d, r)
}
func (d *dueRelays) Pop() any {
	old := *d
	r := old[len(old)-1]
	old[len(old)-1] = nil
	r.reportAt = -1
	*d = old[:len(old)-1]
	return r
}
