package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/voxgate/voxgate/sim/core"
)

// The /sim control API. It has no auth: the simulator is a test tool and
// must never be exposed beyond the machine or network running the tests.

// postFaults installs one fault (a JSON object) or several (an array) and
// answers 201 with what was installed, IDs and defaults filled in.
func (s *Server) postFaults(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		core.WriteAPIError(w, core.ErrTooLarge(1<<20))
		return
	}
	trimmed := bytes.TrimSpace(body)
	var faults []core.Fault
	if len(trimmed) > 0 && trimmed[0] == '[' {
		err = decodeStrict(trimmed, &faults)
	} else {
		var f core.Fault
		err = decodeStrict(trimmed, &f)
		faults = []core.Fault{f}
	}
	if err != nil {
		core.WriteAPIError(w, core.ErrInvalidRequest("", "Invalid fault: "+err.Error()))
		return
	}
	// Check every fault before installing any, so a bad batch changes nothing.
	for i := range faults {
		if faults[i], err = s.env.Faults.Prepare(faults[i]); err != nil {
			core.WriteAPIError(w, core.ErrInvalidRequest("", fmt.Sprintf("Invalid fault [%d]: %v", i, err)))
			return
		}
	}
	added := make([]core.Fault, 0, len(faults))
	for _, f := range faults {
		added = append(added, s.env.Faults.Install(f))
	}
	if trimmed[0] == '[' {
		core.WriteJSON(w, http.StatusCreated, added)
		return
	}
	core.WriteJSON(w, http.StatusCreated, added[0])
}

func (s *Server) getFaults(w http.ResponseWriter, _ *http.Request) {
	core.WriteJSON(w, http.StatusOK, map[string][]core.Fault{"faults": s.env.Faults.List()})
}

func (s *Server) deleteFaults(w http.ResponseWriter, _ *http.Request) {
	s.env.Faults.Clear()
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) getStats(w http.ResponseWriter, _ *http.Request) {
	core.WriteJSON(w, http.StatusOK, s.env.Stats.Snapshot())
}

func (s *Server) deleteStats(w http.ResponseWriter, _ *http.Request) {
	s.env.Stats.Reset()
	w.WriteHeader(http.StatusNoContent)
}

// decodeStrict decodes one JSON value, refusing unknown fields so a typo in
// a fault ("after_chunk") fails loudly instead of being ignored.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("unexpected data after the JSON value")
	}
	return nil
}
