package responses_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	oresp "github.com/openai/openai-go/v3/responses"

	"github.com/voxgate/voxgate/sim/simtest"
)

// streamed is what a stream sent: each event's type, its raw data, and
// the text its deltas add up to.
type streamed struct {
	types []string
	raw   []string
	text  strings.Builder
	args  strings.Builder
	last  oresp.ResponseStreamEventUnion
}

func collect(t *testing.T, st interface {
	Next() bool
	Current() oresp.ResponseStreamEventUnion
	Err() error
}) *streamed {
	t.Helper()
	s := &streamed{}
	for st.Next() {
		ev := st.Current()
		s.types = append(s.types, ev.Type)
		s.raw = append(s.raw, ev.RawJSON())
		switch ev.Type {
		case "response.output_text.delta":
			s.text.WriteString(ev.Delta)
		case "response.function_call_arguments.delta":
			s.args.WriteString(ev.Delta)
		}
		s.last = ev
	}
	if err := st.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	return s
}

// check holds a stream to the spec: every event validates as a
// ResponseStreamEvent, numbered 0, 1, 2… in order.
func (s *streamed) check(t *testing.T) {
	t.Helper()
	spec := simtest.Spec(t)
	for i, raw := range s.raw {
		if err := spec.Validate("ResponseStreamEvent", []byte(raw)); err != nil {
			t.Errorf("event %d: %v\n%s", i, err, raw)
		}
		var n struct {
			Seq int `json:"sequence_number"`
		}
		if json.Unmarshal([]byte(raw), &n) != nil || n.Seq != i {
			t.Errorf("event %d has sequence_number %d", i, n.Seq)
		}
	}
}

// TestStreamedText: the typed events in the API's order, the streamed
// text equal to the completed response's and to the whole answer's.
func TestStreamedText(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	ctx := context.Background()
	cl := f.client("u-stream")
	whole, err := cl.Responses.New(ctx, oresp.ResponseNewParams{Model: "chat", Input: text("Hi")})
	if err != nil {
		t.Fatal(err)
	}
	s := collect(t, cl.Responses.NewStreaming(ctx, oresp.ResponseNewParams{Model: "chat", Input: text("Hi")}))
	s.check(t)
	want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"}
	if len(s.types) < 8 || !slices.Equal(s.types[:4], want) {
		t.Fatalf("events: %v", s.types)
	}
	tail := []string{"response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}
	if !slices.Equal(s.types[len(s.types)-4:], tail) {
		t.Errorf("events end %v", s.types)
	}
	for _, typ := range s.types[4 : len(s.types)-4] {
		if typ != "response.output_text.delta" {
			t.Errorf("between the part's start and end: %s", typ)
		}
	}
	done := s.last.Response
	if s.text.String() != whole.OutputText() || done.OutputText() != whole.OutputText() || done.Status != "completed" {
		t.Errorf("streamed %q, completed %q (%s), whole %q", s.text.String(), done.OutputText(), done.Status, whole.OutputText())
	}
	if done.Usage.OutputTokens == 0 || done.Model != model {
		t.Errorf("completed response: %s", done.RawJSON())
	}
	stored, err := cl.Responses.Get(ctx, done.ID, oresp.ResponseGetParams{})
	if err != nil || stored.OutputText() != whole.OutputText() {
		t.Errorf("stored streamed response: %v %q", err, stored.OutputText())
	}
}

// TestStreamedFunctionCall: text, then the call's item with its
// argument deltas adding up to its done event's arguments.
func TestStreamedFunctionCall(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	s := collect(t, f.client("u-stream-call").Responses.NewStreaming(context.Background(), oresp.ResponseNewParams{Model: "chat",
		Input: text("What's the weather in Paris?"), Tools: []oresp.ToolUnionParam{weatherTool}}))
	s.check(t)
	at := func(typ string) int { return slices.Index(s.types, typ) }
	order := []string{"response.output_text.done", "response.function_call_arguments.delta",
		"response.function_call_arguments.done", "response.completed"}
	for i := 1; i < len(order); i++ {
		if at(order[i-1]) < 0 || at(order[i-1]) >= at(order[i]) {
			t.Fatalf("%s not before %s: %v", order[i-1], order[i], s.types)
		}
	}
	var done struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	if err := json.Unmarshal([]byte(s.raw[at("response.function_call_arguments.done")]), &done); err != nil {
		t.Fatal(err)
	}
	if done.Name != "get_weather" || done.Arguments != `{"city":"Paris"}` || s.args.String() != done.Arguments {
		t.Errorf("call %+v, deltas %q", done, s.args.String())
	}
	if s.text.String() != "Checking. " {
		t.Errorf("text %q", s.text.String())
	}
}

// TestStreamEndsWithError: personal data in an answer ends the begun
// stream with an error event, then response.failed, both per the spec;
// the answer's usage is still recorded. On the wire every frame names
// its event as OpenAI's stream does ("event: response.output_text.delta"),
// the same name as its data's type.
func TestStreamEndsWithError(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	body := `{"model":"chat","input":"Who is my coach?","stream":true}`
	req, err := http.NewRequest(http.MethodPost, f.gateway+"/v1/responses", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Test-User", "u-leak")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	s := &streamed{}
	sc := bufio.NewScanner(res.Body)
	var name string // the frame's event line
	for sc.Scan() {
		if n, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			name = n
		}
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var ev struct {
				Type  string `json:"type"`
				Code  string `json:"code"`
				Delta string `json:"delta"`
			}
			if err := json.Unmarshal([]byte(d), &ev); err != nil {
				t.Fatal(err)
			}
			if name != ev.Type {
				t.Errorf("frame named %q carries type %q", name, ev.Type)
			}
			name = ""
			s.types, s.raw = append(s.types, ev.Type), append(s.raw, d)
			s.text.WriteString(ev.Delta)
			if ev.Type == "error" && ev.Code != "AI_PII_LEAK" {
				t.Errorf("error event %s", d)
			}
		}
	}
	s.check(t)
	n := len(s.types)
	if n < 4 || s.types[n-2] != "error" || s.types[n-1] != "response.failed" {
		t.Fatalf("events: %v", s.types)
	}
	if strings.Contains(s.text.String(), leakEmail) {
		t.Errorf("the address went out: %q", s.text.String())
	}
	var failed struct {
		Response struct {
			Status string `json:"status"`
			Error  struct {
				Code string `json:"code"`
			} `json:"error"`
		} `json:"response"`
	}
	if err := json.Unmarshal([]byte(s.raw[n-1]), &failed); err != nil || failed.Response.Status != "failed" || failed.Response.Error.Code == "" {
		t.Errorf("response.failed: %s", s.raw[n-1])
	}
	if recs := f.records(t, "u-leak"); len(recs) != 1 || recs[0].Usage.TextOut == 0 {
		t.Errorf("records: %+v", recs)
	}
	if n := f.count(t, `SELECT count(*) FROM stored_responses WHERE user_id = 'u-leak'`); n != 0 {
		t.Errorf("a failed response was stored")
	}
	_ = openai.String
}
