package controlplane

// PauseUpkeep stands for a lease upkeep under way: until resume, no
// upkeep runs and a hand-over waits (the race an upkeep that began before
// Close would otherwise win).
func (s *Service) PauseUpkeep() (resume func()) {
	s.upkeep.Lock()
	return s.upkeep.Unlock
}
