package sim

import (
	"testing"
)

// FuzzParseConfig checks the config parser refuses bad input with an error,
// never a panic, and that what it accepts builds a server.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("latency: {ttft: 10ms}\nscript: {rules: [{when: {contains: [x]}, reply: {text: y}}]}\n"))
	f.Add([]byte(`{"faults":[{"kind":"timeout"}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		cfg, err := parseConfig(raw)
		if err != nil {
			return
		}
		s, err := New(cfg)
		if err != nil && len(cfg.Faults) == 0 {
			t.Fatalf("parsed config %q but New failed: %v", raw, err)
		}
		if s != nil {
			_ = s.Close()
		}
	})
}
