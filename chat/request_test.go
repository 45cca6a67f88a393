package chat

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/httpx"
)

func TestRequestNormalize(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		code       apierr.Code
		message    string
	}{
		{"plain", `{"message":"hi"}`, "", "hi"},
		{"controls stripped, line breaks kept", `{"message":" a\u0000b\u200bc\r\nd\u001b "}`, "", "abc\nd"},
		{"2000 characters", `{"message":"` + strings.Repeat("é", 2000) + `"}`, "", strings.Repeat("é", 2000)},
		{"2001 characters is refused, never cut", `{"message":"` + strings.Repeat("é", 2001) + `"}`, apierr.InvalidRequest, ""},
		{"empty", `{"message":"  \u0000 "}`, apierr.InvalidRequest, ""},
		{"confirm needs no message", `{"confirm":{"call_id":"turn_a.1","allow":false}}`, "", ""},
		{"confirm needs allow", `{"confirm":{"call_id":"turn_a.1"}}`, apierr.InvalidRequest, ""},
		{"odd confirm id is unknown", `{"confirm":{"call_id":"../x","allow":true}}`, apierr.NotFound, ""},
		{"odd session id is unknown", `{"message":"hi","session_id":"a b"}`, apierr.NotFound, ""},
		{"context must be an object", `{"message":"hi","context":[1]}`, apierr.InvalidRequest, ""},
		{"unknown field", `{"message":"hi","temperature":2}`, apierr.InvalidRequest, ""},
		{"a key twice", `{"message":"hi","message":"delete my account"}`, apierr.InvalidRequest, ""},
		{"a key of another case", `{"message":"hi","Workflow":"search"}`, apierr.InvalidRequest, ""},
		{"a key twice in the context", `{"message":"hi","context":{"screen":"a","screen":"b"}}`, apierr.InvalidRequest, ""},
		{"a brace after the body", `{"message":"hi"}}`, apierr.InvalidRequest, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var r Request
			err := httpx.Unmarshal([]byte(tc.body), &r, false)
			if err == nil {
				err = r.normalize()
			}
			if got := apierr.CodeOf(err); got != tc.code {
				t.Fatalf("got code %q (%v), want %q", got, err, tc.code)
			}
			if err == nil && r.Message != tc.message {
				t.Errorf("got message %q, want %q", r.Message, tc.message)
			}
		})
	}
}

// FuzzRequest feeds chat request bodies to the decoder and the sanitizer:
// nothing panics, every refusal is a client error, and an accepted
// message is valid UTF-8 of at most 2,000 characters without controls.
func FuzzRequest(f *testing.F) {
	for _, s := range []string{`{"message":"hi"}`, `{"message":"a\u0000b","stream":false,"workflow":"search"}`,
		`{"confirm":{"call_id":"turn_x.1","allow":true},"session_id":"cs_1"}`, `{"message":"x","context":{"screen":"home"}}`,
		`{"message":"\ud800"}`, `[]`, `{"message":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var r Request
		err := httpx.Unmarshal(body, &r, false)
		if err == nil {
			err = r.normalize()
		}
		if err != nil {
			if s := apierr.From(err).Status(); s != 400 && s != 404 {
				t.Fatalf("status %d for %q", s, body)
			}
			return
		}
		if !utf8.ValidString(r.Message) || utf8.RuneCountInString(r.Message) > MaxMessageChars {
			t.Fatalf("accepted message %q", r.Message)
		}
		for _, c := range r.Message {
			if c != '\n' && c != '\t' && (unicode.IsControl(c) || unicode.Is(unicode.Cf, c)) {
				t.Fatalf("control %U kept in %q", c, r.Message)
			}
		}
		if r.Message == "" && r.Confirm == nil {
			t.Fatal("accepted an empty message")
		}
	})
}
