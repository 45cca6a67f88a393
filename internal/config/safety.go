package config

import "time"

// Safety is the safety section (DESIGN §12, docs/safety.md). Today it
// holds the optional second opinion only; the filters themselves have no
// settings.
type Safety struct {
	Judge Judge `yaml:"judge"`
}

// Judge configures the claim detector's optional judge: a route asked
// about the sentences the claim model is unsure of. Route "" (the
// default) asks nobody.
type Judge struct {
	// Route is the route (routes) the questions go to.
	Route string `yaml:"route"`
	// Budget bounds one question; past it the model's verdict stands.
	// 0 is the judge's default (800 ms).
	Budget time.Duration `yaml:"budget"`
	// Band is how far from the model's threshold a sentence counts as
	// unsure, in the model's score; 0 is the filter's default (1.0).
	Band float32 `yaml:"band"`
}

// checkSafety refuses a judge naming no route of the file, a negative
// budget or band, or a budget long enough to stall a stream's sentence
// past any provider's own first-chunk wait.
func (c *Config) checkSafety(routes map[string]bool, names []string, bad func(key, format string, args ...any)) {
	j := c.Safety.Judge
	if j.Route != "" && !routes[j.Route] {
		bad("safety.judge.route", "%q is not among routes (have %v)", j.Route, names)
	}
	if j.Budget < 0 || j.Budget > 10*time.Second {
		bad("safety.judge.budget", "must be between 0 and 10s")
	}
	if j.Band < 0 || j.Band > 10 {
		bad("safety.judge.band", "must be between 0 and 10")
	}
}
