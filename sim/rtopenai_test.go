package sim_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/respjson"
	"github.com/openai/openai-go/v3/realtime"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// TestOpenAIClientSecret: openai-go mints a client secret against the
// simulator, decodes it, and the secret opens a call carrying its session.
func TestOpenAIClientSecret(t *testing.T) {
	t.Parallel()
	_, base := newRealtimeSim(t, sim.Realtime{})
	ctx := testCtx(t)
	client := simtest.Client(base)
	before := time.Now()
	res, err := client.Realtime.ClientSecrets.New(ctx, realtime.ClientSecretNewParams{
		ExpiresAfter: realtime.ClientSecretNewParamsExpiresAfter{Anchor: "created_at", Seconds: openai.Int(60)},
		Session: realtime.ClientSecretNewParamsSessionUnion{OfRealtime: &realtime.RealtimeSessionCreateRequestParam{
			Model:        "gpt-realtime",
			Instructions: openai.String(testInstructions),
			Tools: realtime.RealtimeToolsConfigParam{{OfFunction: &realtime.RealtimeFunctionToolParam{
				Type: "function", Name: openai.String("search_recipes"), Description: openai.String("Search recipes by keyword"),
				Parameters: map[string]any{"type": "object", "properties": map[string]any{"query": map[string]any{"type": "string"}}},
			}}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Value, "ek_") {
		t.Errorf("value = %q, want ek_…", res.Value)
	}
	if exp := time.Unix(res.ExpiresAt, 0); exp.Before(before.Add(59*time.Second)) || exp.After(time.Now().Add(61*time.Second)) {
		t.Errorf("expires_at = %v, want about 60 s from now", exp)
	}
	sess := res.Session.AsRealtime()
	if sess.Instructions != testInstructions || !strings.HasPrefix(sess.ID, "sess_") || len(sess.Tools) != 1 ||
		sess.Tools[0].Name != "search_recipes" || sess.Model != "gpt-realtime" {
		t.Errorf("session = %+v, want the requested config", sess)
	}

	c := simtest.NewCaller(t)
	if _, err := c.Dial(ctx, base, res.Value); err != nil {
		t.Fatal(err)
	}
	created := expectEvent(t, ctx, c, "session.created")
	if !strings.Contains(string(created.Raw), `"search_recipes"`) {
		t.Errorf("session.created does not carry the secret's session: %s", created.Raw)
	}
}

// TestOpenAIMintFaults: mint failures reach openai-go as *openai.Error.
func TestOpenAIMintFaults(t *testing.T) {
	t.Parallel()
	s, base := newRealtimeSim(t, sim.Realtime{})
	client := simtest.Client(base)
	for _, tc := range []struct {
		kind   sim.FaultKind
		status int
	}{{sim.FaultRateLimit, 429}, {sim.FaultServerError, 500}} {
		if _, err := s.AddFault(sim.Fault{Endpoint: sim.EndpointRealtimeClientSecrets, Kind: tc.kind}); err != nil {
			t.Fatal(err)
		}
		_, err := client.Realtime.ClientSecrets.New(t.Context(), realtime.ClientSecretNewParams{})
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != tc.status {
			t.Errorf("%s: err = %v, want *openai.Error %d", tc.kind, err, tc.status)
		}
	}
}

// TestOpenAIRealtimeSocket: openai-go's Realtime WebSocket client connects
// to ?model= and decodes every event of a scripted turn with its types,
// the GA item events and rate_limits.updated among them.
func TestOpenAIRealtimeSocket(t *testing.T) {
	t.Parallel()
	_, base := newRealtimeSim(t, sim.Realtime{})
	ctx := testCtx(t)
	client := simtest.Client(base)
	conn, err := client.Realtime.Connect(ctx, realtime.RealtimeConnectionOptions{}, option.WithQuery("model", "gpt-realtime"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ev, err := conn.Recv(ctx)
	if err != nil || ev.Type != "session.created" {
		t.Fatalf("first event = %q, %v; want session.created", ev.Type, err)
	}
	if err := conn.SendRaw(ctx, []byte(`{"type":"session.update","session":`+recipeSession+`}`)); err != nil {
		t.Fatal(err)
	}
	pcm := base64.StdEncoding.EncodeToString(make([]byte, 48000))
	if err := conn.SendRaw(ctx, []byte(`{"type":"input_audio_buffer.append","audio":"`+pcm+`"}`)); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for {
		ev, err := conn.Recv(ctx)
		if err != nil {
			t.Fatal(err)
		}
		seen[ev.Type] = true
		switch ev.Type {
		case "conversation.item.added":
			if it := ev.AsConversationItemAdded().Item; it.Type == "" || it.AsAny() == nil {
				t.Errorf("conversation.item.added decoded as %+v", it)
			}
		case "conversation.item.done":
			it := ev.AsConversationItemDone().Item
			if call := it.AsRealtimeConversationItemFunctionCall(); it.Type == "function_call" &&
				(call.ID == "" || call.Name != "search_recipes" || call.Status != "completed") {
				t.Errorf("conversation.item.done decoded as %+v", call)
			}
		case "rate_limits.updated":
			if rl := ev.AsRateLimitsUpdatedEvent().RateLimits; len(rl) != 2 || rl[0].Limit == 0 {
				t.Errorf("rate_limits.updated decoded as %+v", rl)
			}
		}
		if ev.Type != "response.done" {
			continue
		}
		for _, typ := range []string{"conversation.item.added", "conversation.item.done", "rate_limits.updated"} {
			if !seen[typ] {
				t.Errorf("no %s before response.done", typ)
			}
		}
		done := ev.AsResponseDoneEvent()
		u := done.Response.Usage
		if len(done.Response.Output) != 1 || done.Response.Output[0].AsRealtimeConversationItemFunctionCall().Name != "search_recipes" ||
			u.InputTokenDetails.AudioTokens != 10 || u.TotalTokens != u.InputTokens+u.OutputTokens {
			t.Fatalf("response.done decoded as %+v", done.Response)
		}
		return
	}
}

// checkOpenAIDecode decodes one server event with openai-go's union type and
// its variant, and reports every field openai-go could not decode as its
// declared type and every required field it found missing: what a gateway
// written with openai-go would trip over.
func checkOpenAIDecode(t *testing.T, e simtest.Event) {
	t.Helper()
	var u realtime.RealtimeServerEventUnion
	if err := json.Unmarshal(e.Raw, &u); err != nil {
		t.Errorf("%s: openai-go: %v", e.Type, err)
		return
	}
	v := u.AsAny()
	if v == nil {
		t.Errorf("%s: openai-go has no variant for this type", e.Type)
		return
	}
	for _, p := range decodeProblems(reflect.ValueOf(v), e.Type, false) {
		if openAIGap(p) {
			continue
		}
		t.Errorf("openai-go decoding %s: %s\n%s", e.Type, p, e.Raw)
	}
}

// openAIGap reports the places where openai-go's types disagree with the
// spec, so the sim follows the spec and the check lets them pass:
// RealtimeResponse.status_details is an object in the spec (and on the
// wire), a string enum (RealtimeResponseStatus) in openai-go. A gateway reads
// it from RawJSON.
func openAIGap(problem string) bool {
	return strings.Contains(problem, ".response.status_details: not a valid realtime.RealtimeResponseStatus")
}

var respField = reflect.TypeFor[respjson.Field]()

// decodeProblems walks a decoded openai-go value through its JSON metadata.
// Union structs (and the variant fields they inline) carry every variant's
// fields, so only their type mismatches count, not missing "required" ones.
func decodeProblems(v reflect.Value, path string, inUnion bool) []string {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return decodeProblems(v.Elem(), path, inUnion)
	case reflect.Slice:
		var out []string
		for i := range v.Len() {
			out = append(out, decodeProblems(v.Index(i), fmt.Sprintf("%s[%d]", path, i), false)...)
		}
		return out
	case reflect.Struct:
	default:
		return nil
	}
	meta := v.FieldByName("JSON")
	if !meta.IsValid() || meta.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	typ := v.Type()
	union := inUnion || strings.HasSuffix(typ.Name(), "Union")
	for i := range typ.NumField() {
		sf := typ.Field(i)
		if !sf.IsExported() || sf.Name == "JSON" {
			continue
		}
		m := meta.FieldByName(sf.Name)
		if !m.IsValid() || m.Type() != respField {
			continue
		}
		name := strings.Split(sf.Tag.Get("json"), ",")[0]
		f := m.Interface().(respjson.Field)
		switch raw := f.Raw(); {
		case raw == "" && !union && strings.Contains(sf.Tag.Get("api"), "required"):
			out = append(out, fmt.Sprintf("%s.%s: required but missing", path, name))
		case raw == "" || raw == "null":
		case !f.Valid():
			out = append(out, fmt.Sprintf("%s.%s: not a valid %s: %s", path, name, sf.Type, raw))
		default:
			out = append(out, decodeProblems(v.Field(i), path+"."+name, name == "" && union)...)
		}
	}
	return out
}
