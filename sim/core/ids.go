package core

import "math/rand/v2"

// NewRequestID is an x-request-id value.
func NewRequestID() string { return "req_" + RandomID() }

// RandomID returns 24 base-36 characters: unique enough for ids, cheaper
// than crypto/rand, and safe for concurrent use.
func RandomID() string {
	var buf [24]byte
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
	for i := 0; i < len(buf); {
		r := rand.Uint64()
		for j := 0; j < 12 && i < len(buf); j++ {
			buf[i] = alphabet[r%36]
			r /= 36
			i++
		}
	}
	return string(buf[:])
}
