package chat

import "time"

// SetPingEvery shortens the keep-alive period for tests.
func SetPingEvery(s *Service, d time.Duration) { s.pingEvery = d }

// SetOutputFilter turns the chat turn's output filter on or off, for the
// benchmark that measures what holding a sentence back costs.
func SetOutputFilter(s *Service, on bool) { s.unfiltered.Store(!on) }
