package randid_test

import (
	"regexp"
	"testing"

	"github.com/voxgate/voxgate/internal/randid"
)

func TestNew(t *testing.T) {
	cases := []struct {
		name, prefix string
		n            int
		want         string
	}{
		{"session", "vs_", 12, `^vs_[0-9a-f]{24}$`},
		{"replica", "vr_", 8, `^vr_[0-9a-f]{16}$`},
		{"no prefix", "", 6, `^[0-9a-f]{12}$`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, b := randid.New(c.prefix, c.n), randid.New(c.prefix, c.n)
			if !regexp.MustCompile(c.want).MatchString(a) {
				t.Fatalf("got %q, want it to match %s", a, c.want)
			}
			if a == b {
				t.Fatalf("got %q twice, want two different ids", a)
			}
		})
	}
}
