package safety

import (
	"regexp"
	"strings"
	"testing"
)

func TestIdentifiers(t *testing.T) {
	t.Parallel()
	shape := regexp.MustCompile(`^vg_[0-9a-f]{32}$`)
	a, b := NewIdentifiers([]byte("key-a")), NewIdentifiers([]byte("key-b"))
	cases := []struct {
		name string
		got  string
		ok   func(string) bool
	}{
		{"keyed: the API's shape", a.For("u-42"), shape.MatchString},
		{"never the user id", a.For("u-42"), func(s string) bool { return !strings.Contains(s, "u-42") }},
		{"stable per user", a.For("u-42"), func(s string) bool { return s == a.For("u-42") }},
		{"one per user", a.For("u-42"), func(s string) bool { return s != a.For("u-43") }},
		{"one per key", a.For("u-42"), func(s string) bool { return s != b.For("u-42") }},
		{"no key, none", NewIdentifiers(nil).For("u-42"), func(s string) bool { return s == "" }},
		{"no user, none", a.For(""), func(s string) bool { return s == "" }},
	}
	for _, c := range cases {
		if !c.ok(c.got) {
			t.Errorf("%s: got %q", c.name, c.got)
		}
	}
}
