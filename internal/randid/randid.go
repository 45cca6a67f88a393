// Package randid makes the gateway's random hex strings: session, turn,
// call and replica ids, the request-id prefix, and generated secrets. They
// come from crypto/rand, so an id seen by one user says nothing about
// another's.
package randid

import (
	"crypto/rand"
	"encoding/hex"
)

// New is prefix followed by n random bytes in lower-case hex.
// crypto/rand.Read does not return an error: it ends the program when the
// system's source fails, so there is nothing for a caller to handle.
func New(prefix string, n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}
