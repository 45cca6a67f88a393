package realtime

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"time"

	"github.com/pion/sdp/v3"
	"github.com/voxgate/voxgate/sim/core"
)

// Endpoint names of the Realtime routes in faults and stats.
const (
	EndpointRealtimeClientSecrets = "/v1/realtime/client_secrets"
	EndpointRealtimeCalls         = "/v1/realtime/calls"
	EndpointRealtimeHangup        = "/v1/realtime/calls/{call_id}/hangup"
	EndpointRealtime              = "/v1/realtime"
)

// HTTPFaultKinds replace a whole HTTP answer.
func HTTPFaultKinds() []core.FaultKind {
	return []core.FaultKind{core.FaultRateLimit, core.FaultServerError, core.FaultUnavailable, core.FaultTimeout}
}

func FaultKinds() map[string][]core.FaultKind {
	return map[string][]core.FaultKind{
		EndpointRealtimeClientSecrets: HTTPFaultKinds(),
		EndpointRealtimeCalls:         append(HTTPFaultKinds(), core.FaultSDPReject, core.FaultDataChannelClose, core.FaultNoResponse, core.FaultContentFilter, FaultResponseFailed, FaultTranscriptionFailed),
		EndpointRealtime:              append(HTTPFaultKinds(), core.FaultSidebandDrop, FaultSidebandNotFound, core.FaultNoResponse, core.FaultContentFilter, FaultResponseFailed, FaultTranscriptionFailed),
		EndpointRealtimeHangup:        {core.FaultServerError},
	}
}

// FaultSidebandNotFound answers a sideband attach to a live call with 404
// call_id_not_found, as the API has been reported to do right after a call
// is created: a gateway must attach with backoff. Count N fails the next N
// attaches.
const FaultSidebandNotFound core.FaultKind = "sideband_not_found"

// callIDPrefix starts every call id, as in the API's ids ("rtc_u1_…"), so
// a gateway that parses or validates them sees the real shape.
const callIDPrefix = "rtc_u1_"

// MaxCallBytes caps a call's body (SDP offer plus session): offers are a few
// KB, so anything near this is a client bug, not an offer.
const MaxCallBytes = 512 << 10

// CreateCall serves POST /v1/realtime/calls in both of the API's forms: an
// application/sdp offer authenticated by a client secret (the session comes
// from the secret), or multipart sdp + session with an API key.
func (s *Server) CreateCall(w http.ResponseWriter, r *http.Request) error {
	cfg, err := s.authorizeRealtime(core.Bearer(r))
	if err != nil {
		return err
	}
	if wantsBeta(r) {
		return errBetaShape()
	}
	body, err := s.env.ReadBodyLimit(w, r, min(s.env.MaxBody, MaxCallBytes))
	if err != nil {
		return err
	}
	offer, update, err := parseCallBody(r.Header.Get("Content-Type"), body)
	if err != nil {
		return err
	}
	if isSDP(r.Header.Get("Content-Type")) {
		if err := s.requireSecret(core.Bearer(r)); err != nil {
			return err
		}
	}
	if cfg == nil {
		cfg = newSessionConfig(&s.rt.cfg)
	}
	if update != nil {
		if err := checkSession(update, "session"); err != nil {
			return err
		}
		cfg.apply(update, &s.rt.cfg)
	}
	model := cfg.view().model
	if err := s.oa.CheckModel(model); err != nil {
		return err
	}
	if err := CheckOffer(offer); err != nil {
		return err
	}
	c := &call{id: callIDPrefix + core.RandomID(), model: model, rt: s.rt, echo: s.rt.cfg.Audio == AudioEcho, dropAfter: -1,
		ended: make(chan struct{})}
	if f := s.env.Faults.Take(EndpointRealtimeCalls, model, append(HTTPFaultKinds(), core.FaultSDPReject, core.FaultDataChannelClose)...); f != nil {
		s.env.Stats.Fault(EndpointRealtimeCalls, f.Kind)
		switch f.Kind {
		case core.FaultSDPReject:
			return ErrInvalidSDP("the simulator rejected the offer (sdp_reject fault)")
		case core.FaultDataChannelClose:
			c.dropAfter = max(1, f.AfterChunks)
		default:
			_, err := s.oa.ResponseFault(r.Context(), f, false)
			return err
		}
	}
	c.sess = s.newRTSession(cfg, EndpointRealtimeCalls, c)
	c.peer = c.newPeer()
	now := time.Now()
	c.sess.stats.update(func(st *CallStats) {
		st.ID, st.SessionID, st.Model, st.Status, st.CreatedAt = c.id, cfg["id"].(string), model, "active", now
	})
	answer, err := c.peer.Answer(r.Context(), s.rt.api, offer)
	if err == nil && !s.rt.startCall(c) {
		err = core.ErrUnavailable(1) // the simulator is shutting down
	}
	if err != nil {
		c.once.Do(func() {}) // never started: nothing for end to stop
		c.peer.Close()
		if apiErr, ok := err.(*core.APIError); ok {
			return apiErr
		}
		return ErrInvalidSDP(err.Error())
	}
	w.Header().Set("Location", "/v1/realtime/calls/"+c.id)
	w.Header().Set("Content-Type", "application/sdp")
	w.WriteHeader(http.StatusCreated)
	_, _ = io.WriteString(w, answer)
	return nil
}

func isSDP(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt == "application/sdp"
}

// parseCallBody returns the SDP offer and, for the multipart form, the
// session object (nil when absent).
func parseCallBody(contentType string, body []byte) (string, map[string]any, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = contentType
	}
	switch mt {
	case "application/sdp":
		return string(body), nil, nil
	case "multipart/form-data":
	default:
		return "", nil, core.ErrInvalidRequest("", fmt.Sprintf("Unsupported content type: '%s'. This endpoint expects 'application/sdp' or 'multipart/form-data'.", contentType))
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var offer *string
	var session map[string]any
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", nil, core.ErrInvalidRequest("", "Could not parse the multipart body: "+err.Error())
		}
		data, err := io.ReadAll(p)
		if err != nil {
			return "", nil, core.ErrInvalidRequest("", "Could not parse the multipart body: "+err.Error())
		}
		switch name := p.FormName(); name {
		case "sdp":
			offer = Ptr(string(data))
		case "session":
			var apiErr *core.APIError
			if session, apiErr = decodeObject(data, "session", true); apiErr != nil {
				return "", nil, apiErr
			}
		default:
			return "", nil, core.ErrInvalidRequest(name, fmt.Sprintf("Unknown parameter: '%s'.", name))
		}
	}
	if offer == nil {
		return "", nil, core.ErrMissingParam("sdp")
	}
	return *offer, session, nil
}

// CheckOffer refuses text that is not an SDP offer before pion sees it, so
// the error names the problem.
func CheckOffer(offer string) error {
	var sd sdp.SessionDescription
	if err := sd.UnmarshalString(offer); err != nil {
		return ErrInvalidSDP(err.Error())
	}
	if len(sd.MediaDescriptions) == 0 {
		return ErrInvalidSDP("the offer has no media sections")
	}
	return nil
}

func ErrInvalidSDP(detail string) *core.APIError {
	return &core.APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: "sdp", Code: "invalid_offer",
		Message: "Invalid SDP offer: " + detail}
}

func errCallNotFound(id string) *core.APIError {
	return &core.APIError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: "call_id", Code: "call_id_not_found",
		Message: fmt.Sprintf("No active call found with id '%s'.", id)}
}

// Hangup serves POST /v1/realtime/calls/{call_id}/hangup: the data channel
// and every sideband socket close, then the peer connection.
func (s *Server) Hangup(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.authorizeRealtime(core.Bearer(r)); err != nil {
		return err
	}
	if wantsBeta(r) {
		return errBetaShape()
	}
	if err := s.requireAPIKey(core.Bearer(r), "hanging up a call"); err != nil {
		return err
	}
	id := r.PathValue("call_id")
	c := s.rt.live(id)
	if c == nil {
		return errCallNotFound(id)
	}
	if f := s.env.Faults.Take(EndpointRealtimeHangup, c.model); f != nil {
		s.env.Stats.Fault(EndpointRealtimeHangup, f.Kind)
		return core.ErrServer()
	}
	c.end("hangup")
	w.WriteHeader(http.StatusOK)
	return nil
}
