package httpx_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/httpx"
)

// A body with no declared length (chunked) that runs into the server-wide
// cap is 413, like one whose declared length is over it.
func TestDecodeChunkedOverTheServerCap(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest("POST", "/", io.MultiReader(strings.NewReader(`{"name":"`+strings.Repeat("a", 2048)+`"}`)))
	r.ContentLength = -1
	r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, 1024)
	var v body
	err := httpx.Decode(r, &v, httpx.DecodeOptions{MaxBytes: 1 << 20})
	if got := apierr.CodeOf(err); got != apierr.PayloadTooLarge {
		t.Fatalf("code: got %q, want PAYLOAD_TOO_LARGE (err %v)", got, err)
	}
	if msg := apierr.From(err).Message; !strings.Contains(msg, "1024") {
		t.Fatalf("message: got %q, want it to name the 1024-byte cap", msg)
	}
}

// How Error treats a request whose context has ended depends on why it
// ended: a client that went away gets nothing written and nothing logged;
// a deadline or a shutdown is still answered 503.
func TestErrorAfterTheContextEnded(t *testing.T) {
	t.Parallel()
	shutdown := errors.New("shutting down")
	cases := []struct {
		name       string
		end        func(context.Context) context.Context
		wantStatus int // 0: nothing written
		wantLog    bool
	}{
		{"client gone", func(ctx context.Context) context.Context {
			ctx, cancel := context.WithCancel(ctx)
			cancel()
			return ctx
		}, 0, false},
		{"deadline", func(ctx context.Context) context.Context {
			ctx, cancel := context.WithTimeout(ctx, 0)
			t.Cleanup(cancel)
			return ctx
		}, 503, true},
		{"shutdown", func(ctx context.Context) context.Context {
			ctx, cancel := context.WithCancelCause(ctx)
			cancel(shutdown)
			return ctx
		}, 503, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			r := httptest.NewRequest("GET", "/", nil)
			ctx := httpx.WithRequest(r.Context(), "req-1", slog.New(slog.NewJSONHandler(&logs, nil)))
			ctx = tc.end(ctx)
			r = r.WithContext(ctx)
			w := httptest.NewRecorder()
			// What a database call made with that context returns.
			httpx.Error(w, r, database.Error("report", ctx.Err()))
			wrote := w.Body.Len() > 0
			if tc.wantStatus == 0 && wrote {
				t.Fatalf("got %d %s, want nothing written", w.Code, w.Body)
			}
			if tc.wantStatus != 0 && (w.Code != tc.wantStatus || w.Header().Get("Retry-After") == "") {
				t.Fatalf("got %d (Retry-After %q), want %d with Retry-After", w.Code, w.Header().Get("Retry-After"), tc.wantStatus)
			}
			if logged := strings.Contains(logs.String(), "request failed"); logged != tc.wantLog {
				t.Fatalf("logged: got %v, want %v (%s)", logged, tc.wantLog, logs.String())
			}
		})
	}
}

// nested exercises the strict rules below the top level: a struct in a
// pointer, a slice of structs, a map, an embedded struct, free-form values.
type nested struct {
	Inner *body           `json:"inner"`
	List  []body          `json:"list"`
	Map   map[string]body `json:"map"`
	Raw   json.RawMessage `json:"raw"`
	Any   any             `json:"any"`
	Skip  string          `json:"-"`
	Extra map[string]any  `json:"extra,omitempty"`
	embedded
}

type embedded struct {
	Deep string `json:"deep"`
}

// Every body is exactly one JSON value, with no key twice in an object and
// every key spelled exactly as its field: encoding/json alone accepts all
// of the refused cases below.
func TestStrictJSON(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body   string
		allowUnknown bool
		msg          string // "" accepts
	}{
		{"exact", `{"inner":{"name":"a","Tags":["x"]},"list":[{"count":1}],"map":{"k":{"name":"b"}},"deep":"d"}`, false, ""},
		{"white space after", "{\"inner\":null} \r\n\t", false, ""},
		{"free-form keys of any case", `{"raw":{"A":1,"a":2},"any":{"B":1,"b":2}}`, false, ""},
		{"map keys of any case", `{"map":{"K":{},"k":{}}}`, false, ""},
		{"unknown allowed", `{"other":1}`, true, ""},
		{"trailing brace", `{"inner":null}}`, false, "one JSON value"},
		{"trailing bracket", `{"inner":null}]`, false, "one JSON value"},
		{"trailing value", `{} 1`, false, "one JSON value"},
		{"duplicate", `{"deep":"a","deep":"b"}`, false, `"deep" appears twice`},
		{"duplicate escaped", `{"deep":"a","d\u0065ep":"b"}`, false, `"deep" appears twice`},
		{"duplicate nested", `{"list":[{"name":"a","name":"b"}]}`, false, `"name" appears twice`},
		{"duplicate in free-form", `{"raw":{"x":1,"x":2}}`, false, `"x" appears twice`},
		{"duplicate in map", `{"map":{"k":{},"k":{}}}`, false, `"k" appears twice`},
		{"case variant", `{"Inner":null}`, false, `Unknown field "Inner"`},
		{"case variant nested", `{"inner":{"NAME":"a"}}`, false, `Unknown field "NAME"`},
		{"case variant embedded", `{"DEEP":"a"}`, false, `Unknown field "DEEP"`},
		{"case variant of a Go name", `{"inner":{"tags":[]}}`, false, `Unknown field "tags"`},
		{"case variant with unknown allowed", `{"Inner":null}`, true, `Unknown field "Inner"`},
		{"long s folds", "{\"inner\":{\"Tag\u017f\":[]}}", true, "Unknown field"},
		{"skipped field", `{"Skip":"a"}`, false, "Unknown field"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var v nested
			err := httpx.Unmarshal([]byte(tc.body), &v, tc.allowUnknown)
			switch {
			case tc.msg == "" && err != nil:
				t.Fatalf("got %v, want it accepted", err)
			case tc.msg != "" && apierr.CodeOf(err) != apierr.InvalidRequest:
				t.Fatalf("got %v, want INVALID_REQUEST", err)
			case tc.msg != "" && !strings.Contains(apierr.From(err).Message, tc.msg):
				t.Fatalf("message: got %q, want it to contain %q", apierr.From(err).Message, tc.msg)
			}
		})
	}
}

// FuzzStrictJSON: whatever the body, Unmarshal does not panic; what it
// accepts is one valid JSON value with no key twice in any object, and
// what it refuses is a client-safe INVALID_REQUEST.
func FuzzStrictJSON(f *testing.F) {
	for _, s := range []string{`{"inner":{"name":"a"}}`, `{"a":1}}`, `{"deep":1,"deep":2}`, `{"DEEP":1}`,
		`{"raw":{"x":[{"y":1,"y":2}]}}`, `[]`, `{"list":[{"count":1},{"Tags":null}]}`, `{"map":{"k":{"name":"x"}}} `} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, allowUnknown bool) {
		var v nested
		err := httpx.Unmarshal(data, &v, allowUnknown)
		if err != nil {
			if c := apierr.CodeOf(err); c != apierr.InvalidRequest {
				t.Fatalf("got %s, want INVALID_REQUEST", c)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("accepted %q, which is not one JSON value", data)
		}
		if k, ok := duplicateKey(json.NewDecoder(bytes.NewReader(data))); ok {
			t.Fatalf("accepted %q, which has the key %q twice", data, k)
		}
	})
}

// duplicateKey finds a key that appears twice in one object, reading the
// value with the tokenizer alone (an independent check of the decoder).
func duplicateKey(dec *json.Decoder) (string, bool) {
	type frame struct {
		keys  map[string]bool
		isObj bool
		key   bool // the next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if s, ok := tok.(string); ok && top != nil && top.isObj && top.key {
			if top.keys[s] {
				return s, true
			}
			top.keys[s] = true
			top.key = false
			continue
		}
		if top != nil && top.isObj {
			top.key = true
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]bool{}, isObj: true, key: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1].isObj {
				stack[len(stack)-1].key = true
			}
		}
	}
}
