package realtime

import (
	"context"
	"errors"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/live"
)

// LiveSession is the startup config of a GPT-Live session. Model,
// instructions and voice cannot change once it starts; the acknowledgement
// delay can (session.update).
type LiveSession struct {
	Model        string
	Voice        string
	Instructions string
	// AckDelay is how long the voice waits before saying "one moment"
	// about a delegation; any thinking or commentary appended first cancels
	// it.
	AckDelay time.Duration
}

// LivePhoneClientEvents are the only events the phone's data channel may
// send: muting its own microphone. Left out, the API lets a phone append
// instructions or change settings, so the list is always explicit.
func LivePhoneClientEvents() []string {
	return []string{"session.input_audio.mute", "session.input_audio.unmute"}
}

// LivePhoneServerEvents are the events the phone's data channel receives:
// its session's start and end, both transcripts, mute state and errors
// about its own events. Delegations, appends and usage stay on the
// gateway's sideband.
func LivePhoneServerEvents() []string {
	return []string{"session.started", "session.closed", "session.input_transcript.delta",
		"session.output_transcript.delta", "session.input_audio.muted", "session.input_audio.unmuted", "error"}
}

// LiveCall is a created Live session: its id (opaque, kept verbatim) and
// the SDP answer for the phone.
type LiveCall struct {
	ID     string
	Answer string
}

// createLive creates a GPT-Live WebRTC session for the phone's SDP offer
// with the server key: client delegation (voxgate is the backend), nothing
// stored, and explicit data-channel allowlists. Failures go through the one
// classifier; a refused offer is the app's to fix.
func (c *Client) createLive(ctx context.Context, offer string, s LiveSession) (LiveCall, error) {
	var res *live.LiveNewResponse
	err := c.do(ctx, "create a live session", func(ctx context.Context) (err error) {
		res, err = c.oai.Live.New(ctx, live.LiveNewParams{Session: s.param(), Transport: live.LiveNewParamsTransport{Sdp: offer}})
		return err
	})
	if err != nil {
		return LiveCall{}, err
	}
	switch {
	case res.Session.ID == "" || len(res.Session.ID) > 256:
		return LiveCall{}, parseError("create a live session", errors.New("answer without a usable session id"))
	case res.Transport.Sdp == "" || len(res.Transport.Sdp) > MaxAnswerBytes:
		return LiveCall{}, parseError("create a live session", errors.New("answer without a usable SDP"))
	}
	return LiveCall{ID: res.Session.ID, Answer: res.Transport.Sdp}, nil
}

func (s LiveSession) param() live.MediaSessionConfigParam {
	p := live.MediaSessionConfigParam{
		Model: s.Model,
		Store: openai.Bool(false),
		Delegation: live.MediaSessionConfigDelegationUnionParam{OfClient: &live.ClientDelegationParam{
			AcknowledgementDelayMs: openai.Int(s.AckDelay.Milliseconds())}},
		Client: live.ClientConfigParam{DataChannel: live.DataChannelConfigParam{
			AllowedClientEvents: live.DataChannelConfigAllowedClientEventsUnionParam{OfArrayOfStrings: LivePhoneClientEvents()},
		}},
	}
	for _, typ := range LivePhoneServerEvents() {
		p.Client.DataChannel.AllowedServerEvents.OfEventSelectors = append(p.Client.DataChannel.AllowedServerEvents.OfEventSelectors,
			live.ServerEventSelectorParam{Type: typ})
	}
	if s.Instructions != "" {
		p.Instructions = openai.String(s.Instructions)
	}
	if s.Voice != "" {
		p.Audio.Output.Voice = live.MediaSessionConfigAudioOutputVoiceUnionParam{OfString: openai.String(s.Voice)}
	}
	return p
}
