package httpx_test

import (
	"errors"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/httpx"
)

func TestQuery(t *testing.T) {
	t.Parallel()
	allowed := []string{"user_id", "kind", "limit", "cursor"}
	tests := []struct {
		name, query string
		want        url.Values // nil: refused
		msg         string     // part of the refusal's message
	}{
		{"none", "", url.Values{}, ""},
		{"filters", "user_id=alice&kind=voice&limit=5", url.Values{"user_id": {"alice"}, "kind": {"voice"}, "limit": {"5"}}, ""},
		{"escaped semicolon is a value", "user_id=x%3By", url.Values{"user_id": {"x;y"}}, ""},
		{"empty value kept", "cursor=", url.Values{"cursor": {""}}, ""},
		{"raw semicolon", "user_id=x;y", nil, "does not parse"},
		{"semicolon as separator", "kind=voice;user_id=bob", nil, "does not parse"},
		{"bad escape", "user_id=%zz", nil, "does not parse"},
		{"unknown name", "userid=alice", nil, `Unknown query parameter "userid"`},
		{"long unknown name is cut", strings.Repeat("a", 100) + "=1", nil, strings.Repeat("a", 40) + "…"},
		{"repeated name", "user_id=alice&user_id=bob", nil, `"user_id" is given more than once`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest("GET", "/?"+tc.query, nil)
			got, err := httpx.Query(r, allowed...)
			if tc.want != nil {
				if err != nil || !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("got %v, %v; want %v", got, err, tc.want)
				}
				return
			}
			var e *apierr.Error
			if !errors.As(err, &e) || e.Code != apierr.InvalidRequest || !strings.Contains(e.Message, tc.msg) {
				t.Fatalf("got %v, %v; want INVALID_REQUEST saying %q", got, err, tc.msg)
			}
		})
	}
}

// FuzzQuery: whatever the query string, Query either refuses it as
// INVALID_REQUEST or answers exactly what r.URL.Query() reads, with every
// name allowed and given once: an accepted query never lost a pair.
func FuzzQuery(f *testing.F) {
	for _, s := range []string{"", "user_id=a", "user_id=x;y", "a=1&a=2", "kind=%zz", "cursor=&limit=3", "=", "&&", "user_id=%3B"} {
		f.Add(s)
	}
	allowed := []string{"user_id", "kind", "limit", "cursor"}
	f.Fuzz(func(t *testing.T, raw string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.URL.RawQuery = raw
		got, err := httpx.Query(r, allowed...)
		if err != nil {
			if apierr.CodeOf(err) != apierr.InvalidRequest {
				t.Fatalf("%q: got %v, want INVALID_REQUEST", raw, err)
			}
			return
		}
		if want := r.URL.Query(); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: got %v, but r.URL.Query() reads %v", raw, got, want)
		}
		pairs := 0
		for _, seg := range strings.Split(raw, "&") {
			if seg != "" {
				pairs++
			}
		}
		if pairs != len(got) {
			t.Fatalf("%q: %d pairs but %d parameters read", raw, pairs, len(got))
		}
		for name, vals := range got {
			if len(vals) != 1 {
				t.Fatalf("%q: %s has %d values", raw, name, len(vals))
			}
		}
	})
}
