package controlplane

import (
	"encoding/json"
	"testing"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/apierr"
)

func TestParseUsage(t *testing.T) {
	t.Parallel()
	u, err := parseUsage(json.RawMessage(`{"total_tokens":3,"input_tokens":2,"output_tokens":1,"extra":[1,2],
		"input_token_details":{"text_tokens":2,"audio_tokens":0,"image_tokens":7,"cached_tokens":1,
			"cached_tokens_details":{"text_tokens":1,"image_tokens":2},"novel":true},
		"output_token_details":{"text_tokens":1,"audio_tokens":0},
		"transcription":{"type":"duration","seconds":42}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := ReportedUsage{
		Session:       billing.Usage{TextIn: 2, TextCachedIn: 1, TextOut: 1, ImageIn: 7, ImageCachedIn: 2},
		Transcription: billing.Usage{AudioMillis: 42_000},
	}
	if *u != want {
		t.Fatalf("got %+v, want %+v", *u, want)
	}
	if u, err := parseUsage(nil); u != nil || err != nil {
		t.Fatalf("absent usage: %v, %v", u, err)
	}
	for _, bad := range []string{
		`[]`, `5`, `{"input_tokens":-1}`, `{"input_tokens":1e3}`, `{"input_tokens":"7"}`,
		`{"output_token_details":{"audio_tokens":1000000000001}}`,
		`{"input_token_details":{"text_tokens":1,"cached_tokens_details":{"text_tokens":2}}}`,
		`{"transcription":{"type":"vibes"}}`, `{"transcription":{"type":"duration","seconds":-0.5}}`,
		`{"transcription":{"type":"duration","seconds":"2.5"}}`, `{"transcription":{"type":"duration","seconds":1e10}}`,
		`{"input_token_details":{"text_tokens":true}}`,
	} {
		if _, err := parseUsage(json.RawMessage(bad)); apierr.CodeOf(err) != apierr.Validation {
			t.Errorf("%s: error %v, want VALIDATION_ERROR (422)", bad, err)
		}
	}
}

// Duration-billed transcription reports fractional seconds: kept as whole
// milliseconds, rounded half up from the exact decimal.
func TestParseUsageSeconds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		seconds string
		want    int64
	}{
		{"0.5", 500}, {"2.61", 2610}, {"1.01", 1010}, {"0.0005", 1}, {"0.0004999", 0},
		{"1.0015", 1002}, {"3", 3000}, {"2.5e1", 25_000}, {"0", 0}, {"999999999", 999_999_999_000},
	} {
		u, err := parseUsage(json.RawMessage(`{"transcription":{"type":"duration","seconds":` + tc.seconds + `}}`))
		if err != nil {
			t.Errorf("%s s: %v", tc.seconds, err)
			continue
		}
		if got := u.Transcription.AudioMillis; got != tc.want {
			t.Errorf("%s s: got %d ms, want %d", tc.seconds, got, tc.want)
		}
	}
}

// FuzzParseUsage: any usage either is refused with a 422 or holds counts a
// record can store.
func FuzzParseUsage(f *testing.F) {
	f.Add([]byte(`{"input_token_details":{"text_tokens":5,"cached_tokens_details":{"text_tokens":2}},"output_token_details":{"audio_tokens":3}}`))
	f.Add([]byte(`{"transcription":{"input_tokens":4,"output_tokens":1}}`))
	f.Add([]byte(`{"input_tokens":999999999999999999999}`))
	f.Add([]byte(`{"transcription":{"type":"duration","seconds":2.6125}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		u, err := parseUsage(raw)
		if err != nil {
			if apierr.CodeOf(err) != apierr.Validation {
				t.Fatalf("%q: error %v, want VALIDATION_ERROR", raw, err)
			}
			return
		}
		if u == nil {
			return
		}
		if u.Session.Check() != nil || u.Transcription.Check() != nil {
			t.Fatalf("%q: accepted counts a record refuses: %+v", raw, *u)
		}
	})
}

// The usage object goes through the one strict decoder: a count given
// twice, or under a key of another case, is refused, not silently read.
func TestUsageIsStrictJSON(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		`{"input_token_details":{"audio_tokens":1,"audio_tokens":900}}`,
		`{"Input_Token_Details":{"audio_tokens":900}}`,
		`{"input_token_details":{"audio_tokens":1}}}`,
	} {
		if _, err := parseUsage(json.RawMessage(raw)); err == nil {
			t.Errorf("%s: got it accepted, want it refused", raw)
		}
	}
}
