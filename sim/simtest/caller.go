package simtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"
	"github.com/voxgate/voxgate/sim"
)

// Caller plays the app's side of a Realtime WebRTC call on loopback: an Opus
// track to send packets on, and the oai-events data channel. Gateway tests
// can point it at the gateway's SDP endpoint just as well as at the sim.
type Caller struct {
	PC    *webrtc.PeerConnection
	track *webrtc.TrackLocalStaticRTP
	dc    *webrtc.DataChannel

	events   chan Event
	open     chan struct{}
	closed   chan struct{}
	received atomic.Int64

	sendMu sync.Mutex
	seq    uint16
	ts     uint32
}

// Event is one Realtime server event as received.
type Event struct {
	Type string
	Raw  []byte
}

// Map decodes the event for ad-hoc field checks.
func (e Event) Map() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(e.Raw, &m)
	return m
}

// NewCaller builds a caller with the loopback-only ICE settings; it is
// closed when the test ends.
func NewCaller(tb testing.TB) *Caller {
	tb.Helper()
	return NewCallerWith(tb, sim.LoopbackSettingEngine())
}

// NewCallerWith builds a caller with the given ICE settings (a phone
// allowed ICE over TCP only, or one on a CutConn).
func NewCallerWith(tb testing.TB, se webrtc.SettingEngine) *Caller {
	tb.Helper()
	c, err := OpenCaller(se)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Close)
	return c
}

// OpenCaller builds a caller with the given ICE settings outside a test (a
// benchmark's child process holds hundreds); whoever opens it closes it.
func OpenCaller(se webrtc.SettingEngine) (*Caller, error) {
	api, err := sim.NewOpusAPI(se)
	if err != nil {
		return nil, err
	}
	pc, err := api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		return nil, err
	}
	c := &Caller{PC: pc, events: make(chan Event, 4096), open: make(chan struct{}), closed: make(chan struct{})}
	fail := func(err error) (*Caller, error) {
		c.Close()
		return nil, err
	}
	if c.track, err = webrtc.NewTrackLocalStaticRTP(sim.OpusCapability(), "audio", "caller"); err != nil {
		return fail(err)
	}
	if _, err := pc.AddTrack(c.track); err != nil {
		return fail(err)
	}
	pc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		buf := make([]byte, 1500)
		for {
			if _, _, err := tr.Read(buf); err != nil {
				return
			}
			c.received.Add(1)
		}
	})
	if c.dc, err = pc.CreateDataChannel(sim.DataChannelLabel, nil); err != nil {
		return fail(err)
	}
	var openOnce, closeOnce sync.Once
	c.dc.OnOpen(func() { openOnce.Do(func() { close(c.open) }) })
	c.dc.OnClose(func() { closeOnce.Do(func() { close(c.closed) }) })
	c.dc.OnMessage(func(m webrtc.DataChannelMessage) {
		var head struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(m.Data, &head)
		select {
		case c.events <- Event{Type: head.Type, Raw: m.Data}:
		default: // a test that stopped reading; drop rather than stall pion
		}
	})
	return c, nil
}

// Offer returns the caller's SDP offer with its candidates gathered.
func (c *Caller) Offer(ctx context.Context) (string, error) {
	offer, err := c.PC.CreateOffer(nil)
	if err != nil {
		return "", err
	}
	gathered := webrtc.GatheringCompletePromise(c.PC)
	if err := c.PC.SetLocalDescription(offer); err != nil {
		return "", err
	}
	select {
	case <-gathered:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	return c.PC.LocalDescription().SDP, nil
}

// Accept applies the SDP answer.
func (c *Caller) Accept(answer string) error {
	return c.PC.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer})
}

// Dial creates a call at baseURL (…/v1/realtime/calls) with an
// application/sdp offer and returns the call id from Location. Use an
// ephemeral key, as an app would.
func (c *Caller) Dial(ctx context.Context, baseURL, key string) (string, error) {
	offer, err := c.Offer(ctx)
	if err != nil {
		return "", err
	}
	return c.post(ctx, baseURL, key, "application/sdp", []byte(offer))
}

// DialMultipart creates a call with the multipart form (sdp + session), as
// a server holding the API key does. session may be "".
func (c *Caller) DialMultipart(ctx context.Context, baseURL, key, session string) (string, error) {
	offer, err := c.Offer(ctx)
	if err != nil {
		return "", err
	}
	body, ctype := CallForm(offer, session)
	return c.post(ctx, baseURL, key, ctype, body)
}

// CallForm builds the multipart body of POST /v1/realtime/calls.
func CallForm(offer, session string) ([]byte, string) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	part := func(name, ctype, data string) {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q`, name))
		h.Set("Content-Type", ctype)
		w, _ := mw.CreatePart(h)
		_, _ = io.WriteString(w, data)
	}
	part("sdp", "application/sdp", offer)
	if session != "" {
		part("session", "application/json", session)
	}
	_ = mw.Close()
	return b.Bytes(), mw.FormDataContentType()
}

func (c *Caller) post(ctx context.Context, baseURL, key, ctype string, body []byte) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+"/v1/realtime/calls", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", ctype)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("create call: %d: %s", resp.StatusCode, answer)
	}
	id := strings.TrimPrefix(resp.Header.Get("Location"), "/v1/realtime/calls/")
	return id, c.Accept(string(answer))
}

// WaitOpen waits for the oai-events channel to open.
func (c *Caller) WaitOpen(ctx context.Context) error {
	select {
	case <-c.open:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("oai-events did not open: %w", ctx.Err())
	}
}

// Send sends a client event (any JSON value) on the data channel.
func (c *Caller) Send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.dc.SendText(string(b))
}

// SendRaw sends bytes as they are, for malformed-event tests.
func (c *Caller) SendRaw(b []byte) error { return c.dc.SendText(string(b)) }

// ErrClosed is returned by Next once the stream has ended.
var ErrClosed = errors.New("simtest: event stream closed")

// Next returns the next server event.
func (c *Caller) Next(ctx context.Context) (Event, error) {
	select {
	case e := <-c.events:
		return e, nil
	case <-c.closed:
		select {
		case e := <-c.events:
			return e, nil
		default:
			return Event{}, ErrClosed
		}
	case <-ctx.Done():
		return Event{}, ctx.Err()
	}
}

// ChannelClosed is closed when the oai-events channel closes.
func (c *Caller) ChannelClosed() <-chan struct{} { return c.closed }

// SendAudio sends n Opus-silence packets paced 20 ms apart, as a real
// microphone would; interval 0 sends them back to back.
func (c *Caller) SendAudio(ctx context.Context, n int, interval time.Duration) error {
	var tick <-chan time.Time
	if interval > 0 {
		t := time.NewTicker(interval)
		defer t.Stop()
		tick = t.C
	}
	for i := range n {
		if tick != nil && i > 0 {
			select {
			case <-tick:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err := c.SendPacket(); err != nil {
			return err
		}
	}
	return nil
}

// SendPacket sends one 20 ms Opus-silence packet.
func (c *Caller) SendPacket() error {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	c.seq++
	c.ts += 960
	return c.track.WriteRTP(&rtp.Packet{Header: rtp.Header{Version: 2, SequenceNumber: c.seq, Timestamp: c.ts},
		Payload: sim.OpusSilence()})
}

// PacketsReceived counts RTP packets received from the far end.
func (c *Caller) PacketsReceived() int64 { return c.received.Load() }

// Close closes the peer connection.
func (c *Caller) Close() { _ = c.PC.Close() }
