package controlplane

// HoldForTest makes s hold session id as well, whoever holds it: two
// holders on one live session see every delegation twice.
func HoldForTest(s *Service, id string) { s.hold(id) }
