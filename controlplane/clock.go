package controlplane

import "time"

// Clock is the time a holder keeps for its call: when the cap notices are
// due, when the reservation runs out, how long the call has been quiet,
// how long a hang-up's drain may last. The database keeps its own clock
// for what is charged; this one only says when to act.
type Clock interface {
	Now() time.Time
	// At returns a channel that receives once the clock reads t or later.
	At(t time.Time) <-chan time.Time
}

// systemClock is the process's clock.
type systemClock struct{}

func (systemClock) Now() time.Time                  { return time.Now() }
func (systemClock) At(t time.Time) <-chan time.Time { return time.After(time.Until(t)) }
