package realtime_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/voxgate/voxgate/realtime"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// The relay benchmarks run each side of a call in a process of its own, as
// production does: the phones in the benchmark's process, and in children
// the bare echo, the simulator, and the relay (a replica holding every
// relayed call on shared networks). A figure for one side is then that
// process's CPU and memory alone, and one side's garbage collection does
// not stop another's packets. A child is this test binary run again with
// peerEnv naming its side; it prints where it listens and lives until its
// standard input closes.
const peerEnv = "VOXGATE_BENCH_PEER"

// peerLine starts the one line of a child's output the parent reads.
const peerLine = "voxgate-bench-peer "

// peerURLs is where a child serves: Calls takes offers (the echo's and the
// simulator's /v1/realtime/calls; the relay's answers a phone), Stats its
// figures.
type peerURLs struct {
	Calls, Stats string
}

// peerStats are a child's figures.
type peerStats struct {
	CPU        time.Duration // user and system, since the child started
	Mem        uint64        // heap and stacks in use (after a GC when asked)
	Goroutines int
	// Forward is the relay's forwarding-time histogram over every call it
	// holds, both directions (realtime.ForwardBuckets).
	Forward [len(realtime.ForwardBuckets) + 1]uint64
}

// TestBenchPeerProcess is a benchmark's child process; run directly, it
// skips.
func TestBenchPeerProcess(t *testing.T) {
	side := os.Getenv(peerEnv)
	if side == "" {
		t.Skip("a relay benchmark's child process: the benchmarks start it")
	}
	if cpu, err := strconv.Atoi(os.Getenv("VOXGATE_BENCH_CPU")); err == nil {
		runtime.GOMAXPROCS(1)
		if err := pinTo(cpu); err != nil {
			t.Fatal(err)
		}
	}
	mux := http.NewServeMux()
	var relays relaySet
	var calls string
	switch side {
	case "echo":
		_, ets := simtest.NewBareEcho(t)
		calls = ets.URL
	case "sim":
		_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency()})
		calls = ts.URL
	case "relay":
		relays.serve(t, mux, benchClient(t, os.Getenv("VOXGATE_BENCH_SIM")))
	default:
		t.Fatalf("%s=%q: want echo, sim or relay", peerEnv, side)
	}
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("gc") {
			runtime.GC()
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		s := peerStats{CPU: cpuTime(), Mem: ms.HeapInuse + ms.StackInuse, Goroutines: runtime.NumGoroutine()}
		s.Forward = relays.forward()
		_ = json.NewEncoder(w).Encode(s)
	})
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	if calls == "" {
		calls = srv.URL + "/relay"
	}
	urls, _ := json.Marshal(peerURLs{Calls: calls, Stats: srv.URL + "/stats"})
	fmt.Printf("%s%s\n", peerLine, urls)
	_, _ = io.Copy(io.Discard, os.Stdin) // until the parent closes it, or is gone
}

// relaySet is the relay child's calls.
type relaySet struct {
	mu  sync.Mutex
	all []*realtime.Relay
}

// serve answers POST /relay?sockets=N: a phone's offer in the body, relayed
// to the simulator through c on the network with N UDP sockets (1 or 4).
func (s *relaySet) serve(t *testing.T, mux *http.ServeMux, c *realtime.Client) {
	nets := map[string]*realtime.Network{
		"1": newNetwork(t, realtime.NetworkParams{}, false),
		"4": newNetwork(t, realtime.NetworkParams{UDPAddr: "127.0.0.1:0", UDPSockets: 4}, false),
	}
	mux.HandleFunc("POST /relay", func(w http.ResponseWriter, r *http.Request) {
		n := nets[r.URL.Query().Get("sockets")]
		offer, err := io.ReadAll(r.Body)
		if n == nil || err != nil {
			http.Error(w, "want ?sockets=1 or 4 and an offer", http.StatusBadRequest)
			return
		}
		rl, err := realtime.NewRelay(realtime.RelayParams{Network: n, ReportInterval: realtime.DefaultReportInterval,
			Dial: func(ctx context.Context, offer string) (realtime.Call, error) {
				return c.CreateCall(ctx, offer, session())
			}})
		if err == nil {
			s.mu.Lock()
			s.all = append(s.all, rl)
			s.mu.Unlock()
			t.Cleanup(rl.Close) // before the networks close: cleanups run last first
			var answer string
			if answer, err = rl.Answer(r.Context(), string(offer)); err == nil {
				_, _ = io.WriteString(w, answer)
				return
			}
		}
		http.Error(w, err.Error(), http.StatusBadGateway)
	})
}

func (s *relaySet) forward() (h [len(realtime.ForwardBuckets) + 1]uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.all {
		st := r.Stats()
		for i := range h {
			h[i] += st.Up.Latency[i] + st.Down.Latency[i]
		}
	}
	return h
}

// peer is a running child process.
type peer struct {
	peerURLs
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// startPeer runs the child for side; env adds to its environment. With
// pinned (pinWorld), the relay runs on CPU 1 and every other side on CPU
// 0, each with one Go processor.
func startPeer(tb testing.TB, side string, pinned bool, env ...string) *peer {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestBenchPeerProcess$")
	cmd.Env = append(append(os.Environ(), peerEnv+"="+side), env...)
	if pinned {
		cpu := "0"
		if side == "relay" {
			cpu = "1"
		}
		cmd.Env = append(cmd.Env, "VOXGATE_BENCH_CPU="+cpu)
	}
	if testing.Verbose() {
		cmd.Stderr = os.Stderr
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	p := &peer{cmd: cmd, stdin: stdin}
	tb.Cleanup(p.stop)
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), peerLine); ok {
			if err := json.Unmarshal([]byte(line), &p.peerURLs); err != nil {
				tb.Fatal(err)
			}
			break
		}
	}
	if p.Stats == "" {
		tb.Fatalf("the %s process ended before it listened: %v", side, sc.Err())
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return p
}

// stop closes the child's input and waits for it to close its calls; one
// that takes longer than a minute is killed.
func (p *peer) stop() {
	_ = p.stdin.Close()
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// stats reads the child's figures; gc collects garbage first, for memory.
func (p *peer) stats(tb testing.TB, gc bool) peerStats {
	tb.Helper()
	u := p.Stats
	if gc {
		u += "?gc"
	}
	resp, err := http.Get(u)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	var s peerStats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		tb.Fatal(err)
	}
	return s
}

// profile writes the child's pprof profile name (with query q) to file:
// "profile", "seconds=10" is its CPU over 10 s; "goroutine", "debug=1"
// its goroutines by stack.
func (p *peer) profile(name, q, file string) error {
	resp, err := http.Get(strings.TrimSuffix(p.Stats, "/stats") + "/debug/pprof/" + name + "?" + q)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// relay connects phone p through the relay child on the network with
// sockets UDP sockets.
func (p *peer) relay(ctx context.Context, tb testing.TB, ph *phone, sockets int) {
	tb.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.Calls+"?sockets="+strconv.Itoa(sockets), strings.NewReader(ph.offer(tb)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("relay: %s: %s", resp.Status, answer)
	}
	ph.accept(tb, string(answer), false)
	select {
	case <-ph.open:
	case <-ctx.Done():
		tb.Fatal("the relayed phone's oai-events channel did not open")
	}
}

// pinWorld, under VOXGATE_RELAY_PIN=1 on a machine of two or more CPUs,
// gives the relay a core of its own, as a replica has in production: this
// process (the phones) and the echo and simulator children share CPU 0,
// the relay child (startPeer) takes CPU 1. It says whether it pinned; the
// cleanup gives this process every CPU back.
func pinWorld(tb testing.TB) bool {
	tb.Helper()
	if os.Getenv("VOXGATE_RELAY_PIN") == "" {
		return false
	}
	if runtime.NumCPU() < 2 {
		tb.Log("VOXGATE_RELAY_PIN: fewer than two CPUs, not pinned")
		return false
	}
	procs := runtime.GOMAXPROCS(1)
	if err := pinTo(0); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		runtime.GOMAXPROCS(procs)
		if err := pinTo(-1); err != nil {
			tb.Error(err)
		}
	})
	return true
}

// pinTo keeps every thread of this process on cpu (-1: on every CPU). A
// thread starts on its parent's CPUs, so once every thread is pinned, so
// are those started after; the threads are read again until none is new.
func pinTo(cpu int) error {
	var set unix.CPUSet
	if cpu < 0 {
		for i := range runtime.NumCPU() {
			set.Set(i)
		}
	} else {
		set.Set(cpu)
	}
	done := map[int]bool{}
	for {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return err
		}
		fresh := 0
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil || done[tid] {
				continue
			}
			fresh++
			done[tid] = true
			if err := unix.SchedSetaffinity(tid, &set); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("pin thread %d: %w", tid, err)
			}
		}
		if fresh == 0 {
			return nil
		}
	}
}

// histPct is the upper bound of the bucket holding the p quantile of h
// (realtime.ForwardBuckets; past the last, the last bound doubled).
func histPct(h [len(realtime.ForwardBuckets) + 1]uint64, p float64) time.Duration {
	var total uint64
	for _, n := range h {
		total += n
	}
	if total == 0 {
		return 0
	}
	want, seen := uint64(float64(total)*p+0.5), uint64(0)
	for i, n := range h {
		if seen += n; seen >= want && i < len(realtime.ForwardBuckets) {
			return realtime.ForwardBuckets[i]
		}
	}
	return 2 * realtime.ForwardBuckets[len(realtime.ForwardBuckets)-1]
}
