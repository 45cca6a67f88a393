package realtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"regexp"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/realtime"
)

// MaxAnswerBytes caps an SDP answer read from the provider: a few
// kilobytes in practice, so a megabyte means something is wrong.
const MaxAnswerBytes = 1 << 20

// ErrCallNotFound is the provider not knowing a call: not yet (right after
// it was created, as reported of the API), or not any more.
var ErrCallNotFound = errors.New("realtime: call_id_not_found")

var callIDRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// Call is a WebRTC call the gateway placed for an app's offer.
type Call struct {
	ID     string
	Answer string
}

// createCall places a call for the app's SDP offer with the server key and
// the whole session config s (the multipart form of POST
// /realtime/calls), and returns the SDP answer and the call id from
// Location. Failures are normalized like Mint's.
func (c *Client) createCall(ctx context.Context, offer string, s Session) (Call, error) {
	var res *http.Response
	var answer []byte
	err := c.do(ctx, "create a call", func(ctx context.Context) (err error) {
		res, err = c.oai.Realtime.Calls.New(ctx, realtime.CallNewParams{Sdp: offer, Session: *s.param()}, s.identity()...)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		answer, err = io.ReadAll(io.LimitReader(res.Body, MaxAnswerBytes+1))
		return err
	})
	if err != nil {
		return Call{}, err
	}
	id := path.Base(res.Header.Get("Location"))
	switch {
	case len(answer) > MaxAnswerBytes:
		return Call{}, parseError("create a call", errors.New("SDP answer too large"))
	case res.StatusCode != http.StatusCreated && res.StatusCode != http.StatusOK:
		return Call{}, parseError("create a call", fmt.Errorf("status %d", res.StatusCode))
	case !callIDRE.MatchString(id):
		return Call{}, parseError("create a call", fmt.Errorf("Location %q names no call", res.Header.Get("Location")))
	}
	return Call{ID: id, Answer: string(answer)}, nil
}

// hangup ends a call. A call the provider no longer knows is
// ErrCallNotFound; anything else is normalized.
func (c *Client) hangup(ctx context.Context, callID string) error {
	var notFound bool
	err := c.do(ctx, "hang up a call", func(ctx context.Context) error {
		err := c.oai.Realtime.Calls.Hangup(ctx, callID)
		var apiErr *openai.Error
		if errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusNotFound {
			notFound = true
			return nil
		}
		return err
	})
	if notFound {
		return ErrCallNotFound
	}
	return err
}

// UpdateEvent is the session.update client event that sets s over
// whatever the session holds now, in the GA shape. The model is left out:
// a call keeps the model it was created with.
func (s Session) UpdateEvent() ([]byte, error) {
	p := s.param()
	p.Model = ""
	return json.Marshal(map[string]any{"type": "session.update", "session": p})
}
