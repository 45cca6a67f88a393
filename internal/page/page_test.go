package page

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
)

func TestParse(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 22, 10, 0, 0, 123456000, time.UTC)
	good := Cursor(Key{At: at, ID: "42"})
	cases := []struct {
		query     string
		wantLimit int
		wantAfter Key
		bad       bool
	}{
		{"", DefaultLimit, Key{}, false},
		{"limit=1", 1, Key{}, false},
		{"limit=100", 100, Key{}, false},
		{"limit=101", 0, Key{}, true},
		{"limit=0", 0, Key{}, true},
		{"limit=-5", 0, Key{}, true},
		{"limit=ten", 0, Key{}, true},
		{"limit=1.5", 0, Key{}, true},
		{"cursor=" + good, DefaultLimit, Key{At: at, ID: "42"}, false},
		{"cursor=%25%25", 0, Key{}, true},
		{"cursor=bm90LWEtY3Vyc29y", 0, Key{}, true}, // "not-a-cursor"
		{"cursor=MTIz", 0, Key{}, true},             // "123": no id
		{"cursor=", DefaultLimit, Key{}, false},
		{"limit=5;cursor=" + good, 0, Key{}, true}, // r.URL.Query() would drop it all and answer page one
		{"limit=5&limit=50", 0, Key{}, true},
		{"limit=5&sort=asc", 0, Key{}, true},
	}
	for _, tc := range cases {
		r := httptest.NewRequest("GET", "/x?"+tc.query, nil)
		got, err := Parse(r)
		if tc.bad {
			if apierr.CodeOf(err) != apierr.InvalidRequest {
				t.Errorf("%q: error %v, want INVALID_REQUEST", tc.query, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.query, err)
			continue
		}
		if got.Limit != tc.wantLimit || !got.After.At.Equal(tc.wantAfter.At) || got.After.ID != tc.wantAfter.ID {
			t.Errorf("%q: got %+v, want limit %d after %+v", tc.query, got, tc.wantLimit, tc.wantAfter)
		}
	}
}

func TestMake(t *testing.T) {
	t.Parallel()
	key := func(n int) Key { return Key{At: time.Unix(int64(n), 0), ID: "x"} }
	if l := Make([]int(nil), 2, key); l.Items == nil || len(l.Items) != 0 || l.NextCursor != nil {
		t.Fatalf("empty: %+v", l)
	}
	if l := Make([]int{3, 2}, 2, key); len(l.Items) != 2 || l.NextCursor != nil {
		t.Fatalf("exactly a page: %+v", l)
	}
	l := Make([]int{3, 2, 1}, 2, key)
	if len(l.Items) != 2 || l.NextCursor == nil {
		t.Fatalf("more than a page: %+v", l)
	}
	r := httptest.NewRequest("GET", "/x?cursor="+*l.NextCursor, nil)
	req, err := Parse(r)
	if err != nil || req.After.At.Unix() != 2 {
		t.Fatalf("next cursor points at %+v (%v), want the last row returned", req.After, err)
	}
}

func FuzzCursor(f *testing.F) {
	f.Add(Cursor(Key{At: time.Unix(1, 0), ID: "7"}))
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		k, ok := decode(s)
		if !ok {
			return
		}
		back, ok := decode(Cursor(k))
		if !ok || !back.At.Equal(k.At) || back.ID != k.ID {
			t.Fatalf("round trip of %q: %+v → %+v", s, k, back)
		}
	})
}
