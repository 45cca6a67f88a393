package billing

import (
	"strings"
	"testing"
)

func TestSafeCell(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"empty", "", ""},
		{"number", "75240", "75240"},
		{"plain text", "alice", "alice"},
		{"inner minus", "a-b", "a-b"},
		{"inner equals", "a=b", "a=b"},
		{"separator then letter", "a;b,c", "a;b,c"},
		{"leading equals", "=1+1", "'=1+1"},
		{"leading plus", "+1", "'+1"},
		{"leading minus", "-2", "'-2"},
		{"leading at", "@SUM(A1)", "'@SUM(A1)"},
		{"leading tab", "\tx", "'\tx"},
		{"leading carriage return", "\rx", "'\rx"},
		{"spaces then formula", "  =1", "'  '=1"},
		{"formula after semicolon", "x;=cmd|' /C calc'!A0", "'x;'=cmd|' /C calc'!A0"},
		{"formula after comma", "x,+1", "'x,'+1"},
		{"formula after comma and spaces", "x,  @A1", "'x,  '@A1"},
		{"formula after tab", "x\t-1", "'x\t'-1"},
		{"formula after newline", "x\n=1", "'x\n'=1"},
		{"formula after carriage return", "x\r=1", "'x\r'=1"},
		{"formulas in several pieces", "=a;=b,c;@d", "'=a;'=b,c;'@d"},
		{"separator at the end", "x;", "x;"},
		{"tab piece after a separator", "x;\t=1", "'x;'\t'=1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := safeCell(tc.in); got != tc.want {
				t.Errorf("safeCell(%q): got %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzSafeCell: whatever the cell, no piece of the guarded cell a
// spreadsheet could make by splitting on ',' ';' tab or a line break
// starts (after spaces) with a formula character, and the guard only ever
// inserts quotes: deleting them gives the cell back.
func FuzzSafeCell(f *testing.F) {
	for _, s := range []string{"", "alice", "=1", "a;=b", "a, -b", "\t\t=", " ;@", "x\r\n+y", "'=a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := safeCell(s)
		for _, piece := range strings.FieldsFunc("\n"+got, func(r rune) bool { return strings.ContainsRune(",;\t\n\r", r) }) {
			p := strings.TrimLeft(piece, " ")
			if p != "" && strings.ContainsRune("=+-@", rune(p[0])) {
				t.Fatalf("safeCell(%q) = %q: piece %q starts a formula", s, got, piece)
			}
		}
		if got != s && got[0] != '\'' {
			t.Fatalf("safeCell(%q) = %q: changed without a leading quote", s, got)
		}
		// got must be s with quotes inserted.
		j := 0
		for i := 0; i < len(got); i++ {
			if j < len(s) && got[i] == s[j] {
				j++
			} else if got[i] != '\'' {
				t.Fatalf("safeCell(%q) = %q: byte %d changed", s, got, i)
			}
		}
		if j != len(s) {
			t.Fatalf("safeCell(%q) = %q: lost bytes", s, got)
		}
	})
}
