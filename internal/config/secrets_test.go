package config

import "testing"

func TestSafetyKey(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		s    Secrets
		want string
	}{
		{"its own key", Secrets{SafetyIDKey: "own", JWTSecret: "jwt"}, "own"},
		{"else the JWT secret", Secrets{JWTSecret: "jwt"}, "jwt"},
		{"neither: none", Secrets{OpenAIAPIKey: "sk-x"}, ""},
	}
	for _, c := range cases {
		if got := string(c.s.SafetyKey()); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
