package sse

import "time"

// SetPingEvery shortens the keep-alive period for tests.
func SetPingEvery(s *Service, d time.Duration) { s.pingEvery = d }
