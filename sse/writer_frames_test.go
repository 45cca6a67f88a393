package sse

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// frame is one parsed server-sent event, or a comment.
type frame struct {
	id, event, data string
	hasData         bool
	comment         string
}

// parseFrames reads an event stream the way a browser's EventSource does
// (lines end at CRLF, LF or CR; a blank line dispatches; "data" lines join
// with "\n"; one space after the colon is dropped), so the tests check the
// writer against the reader, not against its own idea of the format.
// Comments are returned as frames of their own; rest is what follows the
// last blank line.
func parseFrames(t testing.TB, s string) (frames []frame, rest string) {
	t.Helper()
	var cur frame
	var data strings.Builder
	started := false
	for {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			return frames, s
		}
		line := s[:i]
		next := i + 1
		if s[i] == '\r' && next < len(s) && s[next] == '\n' {
			next++
		}
		s = s[next:]
		switch {
		case line == "":
			if started {
				if cur.hasData {
					cur.data = strings.TrimSuffix(data.String(), "\n")
				}
				frames = append(frames, cur)
			}
			cur, started = frame{}, false
			data.Reset()
		case line[0] == ':':
			frames = append(frames, frame{comment: strings.TrimPrefix(line[1:], " ")})
		default:
			name, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			started = true
			switch name {
			case "id":
				cur.id = value
			case "event":
				cur.event = value
			case "data":
				cur.hasData = true
				data.WriteString(value)
				data.WriteByte('\n')
			default:
				t.Errorf("unknown field %q in line %q", name, line)
			}
		}
	}
}

func TestParseFrames(t *testing.T) {
	in := "id: 1\nevent: a\ndata: x\ndata:y\r\n\r: ping\n\nid: 2\rdata: z\n\npartial"
	got, rest := parseFrames(t, in)
	want := []frame{
		{id: "1", event: "a", data: "x\ny", hasData: true},
		{comment: "ping"},
		{id: "2", data: "z", hasData: true},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d frames %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("frame %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if rest != "partial" {
		t.Errorf("rest: got %q, want %q", rest, "partial")
	}
}

// TestEventNames: the Responses API's dotted names go out on the event
// line as they are, the chat turn's plain ones too, and a name that is
// not ^[a-z][a-z0-9_.]*$ is refused with nothing written.
func TestEventNames(t *testing.T) {
	for name, ok := range map[string]bool{
		"content": true, "stream_complete": true, "response.output_text.delta": true, "response.created": true,
		"h2": true, "error": true,
		"": false, "Content": false, ".dot": false, "9lives": false, "a-b": false, "a b": false, "event:x": false,
		"a\nb": false, "a\rb": false, "réponse": false, "response.created\ndata: {}": false,
	} {
		rec := httptest.NewRecorder()
		w, err := NewWriter(rec, httptest.NewRequest(http.MethodPost, "/v1/responses", nil))
		if err != nil {
			t.Fatal(err)
		}
		before := rec.Body.Len()
		err = w.Send(name, map[string]int{"sequence_number": 0})
		w.Close()
		if !ok {
			if err == nil || rec.Body.Len() != before {
				t.Errorf("%q: err %v, body %q; want a refusal writing nothing", name, err, rec.Body)
			}
			continue
		}
		frames, rest := parseFrames(t, rec.Body.String())
		if err != nil || rest != "" || len(frames) != 1 || frames[0].event != name ||
			frames[0].data != `{"type":"`+name+`","sequence_number":0}` {
			t.Errorf("%q: err %v, frames %+v, rest %q", name, err, frames, rest)
		}
	}
}
