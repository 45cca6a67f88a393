package openai

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"time"

	"github.com/voxgate/voxgate/sim/core"
)

// EndpointModels is the endpoint name of GET /v1/models in stats.
const EndpointModels = "/v1/models"

// DefaultShutdownDates returns the shutdown dates used when
// Config.ShutdownDates is nil: OpenAI's announced dates for the models a
// gateway is likely to name (the deprecations page, as openai-go v3.96.0's
// "Announced shutdown date" comments repeat them). A listed model covers
// its dated snapshots.
func DefaultShutdownDates() map[string]string {
	return map[string]string{
		"gpt-5": "2026-12-11", "gpt-5-mini": "2026-12-11", "gpt-5-nano": "2026-12-11",
		"gpt-4.1": "2027-01-14", "gpt-4.1-mini": "2027-01-14", "gpt-4o": "2027-01-14", "gpt-4o-mini": "2027-01-14",
		"gpt-realtime": "2027-01-20", "gpt-realtime-mini": "2027-01-20",
		"whisper-1": "2027-02-26", "gpt-4o-transcribe": "2027-02-26", "gpt-4o-mini-transcribe": "2027-02-26",
	}
}

// currentModels are models the default list carries beside the chat
// aliases and the dated ones: the current chat, Realtime and transcription
// models, none with a shutdown date.
var currentModels = []string{
	"gpt-6-luna", "gpt-6.1-terra", "gpt-6.2-sol",
	"gpt-realtime-2.1", "gpt-realtime-2.1-mini",
	"gpt-transcribe", "gpt-live-transcribe", "gpt-realtime-whisper",
}

// Lifecycle knows which models exist and when each shuts down.
type Lifecycle struct {
	listed   []string             // GET /v1/models, sorted
	shutdown map[string]time.Time // by model; a family covers its snapshots
}

func newLifecycle(models []string, dates, aliases map[string]string) Lifecycle {
	if dates == nil {
		dates = DefaultShutdownDates()
	}
	l := Lifecycle{shutdown: make(map[string]time.Time, len(dates))}
	for m, d := range dates {
		t, _ := time.Parse(time.DateOnly, d) // validate has checked it
		l.shutdown[m] = t
	}
	names := models
	if len(names) == 0 {
		names = slices.Clone(currentModels)
		if aliases == nil {
			aliases = DefaultModelAliases()
		}
		for a, snap := range aliases {
			names = append(names, a, snap)
		}
		for m := range dates {
			names = append(names, m)
		}
		names = append(names, DefaultRealtimeModel)
	}
	slices.Sort(names)
	l.listed = slices.Compact(names)
	return l
}

// DefaultRealtimeModel is the model of a Realtime session that names none
// (the API's default).
const DefaultRealtimeModel = "gpt-realtime"

// snapshotRE matches a dated snapshot name and captures its family.
var snapshotRE = regexp.MustCompile(`^(.+)-\d{4}-\d{2}-\d{2}$`)

// shutdownOf is model's shutdown date: its own, else its family's.
func (l *Lifecycle) shutdownOf(model string) (time.Time, bool) {
	if t, ok := l.shutdown[model]; ok {
		return t, true
	}
	if sub := snapshotRE.FindStringSubmatch(model); sub != nil {
		t, ok := l.shutdown[sub[1]]
		return t, ok
	}
	return time.Time{}, false
}

// Retired reports whether model has reached its shutdown date by now: from
// that day on the API answers model_not_found.
func (l *Lifecycle) Retired(model string, now time.Time) bool {
	t, ok := l.shutdownOf(model)
	if !ok {
		return false
	}
	y, m, d := now.UTC().Date()
	return !time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Before(t)
}

// CheckModel refuses a model the simulator does not serve: one outside
// sim.Config.Models, or one past its shutdown date. Every endpoint that takes a
// model asks it, so a retired model fails the same way everywhere.
func (s *Server) CheckModel(model string) error {
	if s.Models != nil && !s.Models[model] || s.Life.Retired(model, s.env.Now()) {
		return core.ErrModelNotFound(model)
	}
	return nil
}

// modelObject is the spec's Model with the shutdown_date the API sends.
type modelObject struct {
	ID           string  `json:"id"`
	Object       string  `json:"object"`
	Created      int64   `json:"created"`
	OwnedBy      string  `json:"owned_by"`
	ShutdownDate *string `json:"shutdown_date"`
}

// modelsCreated is the created time every listed model reports: a fixed
// instant, so the answer is deterministic.
const modelsCreated = 1_700_000_000

// ListModels serves GET /v1/models: every model the simulator knows, each
// with its shutdown date or null. A model past its date stays listed with
// that date, so a client can tell a retired model from an unknown one.
func (s *Server) ListModels(w http.ResponseWriter, r *http.Request) error {
	if err := s.env.Authorize(r); err != nil {
		return err
	}
	out := struct {
		Object string        `json:"object"`
		Data   []modelObject `json:"data"`
	}{Object: "list", Data: make([]modelObject, 0, len(s.Life.listed))}
	for _, m := range s.Life.listed {
		o := modelObject{ID: m, Object: "model", Created: modelsCreated, OwnedBy: "system"}
		if t, ok := s.Life.shutdownOf(m); ok {
			d := t.Format(time.DateOnly)
			o.ShutdownDate = &d
		}
		out.Data = append(out.Data, o)
	}
	body, err := json.Marshal(out)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
	return nil
}

func ValidateShutdownDates(dates map[string]string) error {
	for m, d := range dates {
		if m == "" {
			return fmt.Errorf("shutdown_dates: empty model name")
		}
		if _, err := time.Parse(time.DateOnly, d); err != nil {
			return fmt.Errorf("shutdown_dates: %s: %q is not a YYYY-MM-DD date", m, d)
		}
	}
	return nil
}

// TTFT is the time to first token of a chat model: its own (or its
// family's) from Latency.ModelTTFT, else Latency.TTFT.
func (s *Server) TTFT(model string) time.Duration {
	if d, ok := s.env.Latency.ModelTTFT[model]; ok {
		return d
	}
	if sub := snapshotRE.FindStringSubmatch(model); sub != nil {
		if d, ok := s.env.Latency.ModelTTFT[sub[1]]; ok {
			return d
		}
	}
	return s.env.Latency.TTFT
}

// DurationBilled reports a transcription model the API bills by the second
// of audio, whose usage comes as {type: duration, seconds}: whisper-1 and
// the newer transcription models (their model pages price them per
// minute).
func DurationBilled(model string) bool {
	switch model {
	case "whisper-1", "gpt-transcribe", "gpt-live-transcribe", "gpt-realtime-whisper":
		return true
	}
	return false
}
