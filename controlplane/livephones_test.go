package controlplane_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// The held-live-session benchmark's provider and phones run in a child
// process: this test binary, started again with livePhonesEnv set to the
// simulator's Live config. The simulator's pion peers, its reflected
// audio and the phones' peers are the provider's and the apps' work; in
// one process they were counted with the gateway's.
const livePhonesEnv = "VOXGATE_LIVE_PHONES"

func TestMain(m *testing.M) {
	if raw := os.Getenv(livePhonesEnv); raw != "" {
		os.Exit(runLivePhones(raw))
	}
	os.Exit(m.Run())
}

// phoneCmd is one request to the child, one JSON line on its stdin; the
// child answers each with one phoneReply line on its stdout, in order.
type phoneCmd struct {
	Op    string `json:"op"` // "offer", "accept", "connected", "stats"
	Phone int    `json:"phone,omitempty"`
	SDP   string `json:"sdp,omitempty"`
}

type phoneReply struct {
	Err   string `json:"err,omitempty"`
	URL   string `json:"url,omitempty"` // the first line: the simulator's base URL
	Phone int    `json:"phone,omitempty"`
	SDP   string `json:"sdp,omitempty"`
	// connected and stats
	Connected int `json:"connected,omitempty"`
	// stats: the child's CPU time and memory, and the simulator's live
	// sessions: active ones, their sidebands, the reflected audio sent.
	CPU       time.Duration `json:"cpu,omitempty"`
	Mem       uint64        `json:"mem,omitempty"`
	Active    int           `json:"active,omitempty"`
	Sidebands int64         `json:"sidebands,omitempty"`
	Reflected int64         `json:"reflected,omitempty"`
}

// livePhones is the running child.
type livePhones struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *json.Decoder
	mu  sync.Mutex
	url string
}

func startLivePhones(b *testing.B, lv sim.Live) *livePhones {
	b.Helper()
	raw, err := json.Marshal(lv)
	if err != nil {
		b.Fatal(err)
	}
	c := &livePhones{cmd: exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^$")}
	c.cmd.Env = append(os.Environ(), livePhonesEnv+"="+string(raw))
	c.cmd.Stderr = os.Stderr
	if c.in, err = c.cmd.StdinPipe(); err != nil {
		b.Fatal(err)
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = c.in.Close()
		_ = c.cmd.Wait()
	})
	c.out = json.NewDecoder(stdout)
	var first phoneReply
	if err := c.out.Decode(&first); err != nil || first.URL == "" {
		b.Fatalf("live phones: no simulator: %v %+v", err, first)
	}
	c.url = first.URL
	return c
}

// do sends one request and reads its answer.
func (c *livePhones) do(cmd phoneCmd) (phoneReply, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	raw, _ := json.Marshal(cmd)
	if _, err := c.in.Write(append(raw, '\n')); err != nil {
		return phoneReply{}, err
	}
	var r phoneReply
	if err := c.out.Decode(&r); err != nil {
		return phoneReply{}, err
	}
	if r.Err != "" {
		return r, fmt.Errorf("live phones: %s: %s", cmd.Op, r.Err)
	}
	return r, nil
}

// runLivePhones is the child: a simulator with the Live config raw, and a
// pion phone per offer request, each held until stdin closes.
func runLivePhones(raw string) int {
	var lv sim.Live
	if err := json.Unmarshal([]byte(raw), &lv); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	s, err := sim.New(sim.Config{Live: lv, Latency: &sim.Latency{}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	defer s.Close()
	out := json.NewEncoder(os.Stdout)
	_ = out.Encode(phoneReply{URL: ts.URL})
	var phones []*simtest.Caller
	defer func() {
		for _, p := range phones {
			p.Close()
		}
	}()
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		var cmd phoneCmd
		var r phoneReply
		if err := json.Unmarshal(in.Bytes(), &cmd); err != nil {
			r.Err = err.Error()
		} else {
			r = phoneOp(s, &phones, cmd)
		}
		if err := out.Encode(r); err != nil {
			return 1
		}
	}
	return 0
}

func phoneOp(s *sim.Server, phones *[]*simtest.Caller, cmd phoneCmd) phoneReply {
	fail := func(err error) phoneReply { return phoneReply{Err: err.Error()} }
	switch cmd.Op {
	case "offer":
		p, err := simtest.OpenCaller(sim.LoopbackSettingEngine())
		if err != nil {
			return fail(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		offer, err := p.Offer(ctx)
		if err != nil {
			p.Close()
			return fail(err)
		}
		*phones = append(*phones, p)
		return phoneReply{Phone: len(*phones) - 1, SDP: offer}
	case "accept":
		if cmd.Phone < 0 || cmd.Phone >= len(*phones) {
			return fail(fmt.Errorf("no phone %d", cmd.Phone))
		}
		if err := (*phones)[cmd.Phone].Accept(cmd.SDP); err != nil {
			return fail(err)
		}
		return phoneReply{}
	case "connected":
		n := 0
		for _, p := range *phones {
			if p.PC.ConnectionState() == webrtc.PeerConnectionStateConnected {
				n++
			}
		}
		return phoneReply{Connected: n}
	case "stats":
		r := phoneReply{CPU: processCPU()}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		r.Mem = ms.HeapInuse + ms.StackInuse
		for _, st := range s.LiveSessions() {
			if st.Status == "active" {
				r.Active++
				r.Sidebands += st.Sidebands
				r.Reflected += st.ReflectedAudioBytes
			}
		}
		return r
	}
	return fail(fmt.Errorf("unknown op %q", cmd.Op))
}
