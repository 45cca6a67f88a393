package controlplane

// HoldForTest makes s hold userID's session id as well, whoever holds it:
// two holders on one live session see every delegation twice.
func HoldForTest(s *Service, id, userID string) { s.hold(id, userID) }
