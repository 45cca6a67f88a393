package safety

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// identifierDomain separates this use of a key from any other use of the
// same secret (the JWT secret it may be derived from).
const identifierDomain = "voxgate safety identifier v1\x00"

// Identifiers make the salted hash of a user a provider may see as its
// safety identifier (DESIGN §11): stable per user and deployment, so the
// provider can tell one abusive user from the rest, and useless for
// learning who the user is without the key. Chat and voice both use it.
type Identifiers struct {
	key []byte
}

// NewIdentifiers keys identifiers with key; an empty key makes none, and
// nothing is sent.
func NewIdentifiers(key []byte) Identifiers {
	if len(key) == 0 {
		return Identifiers{}
	}
	return Identifiers{key: append([]byte(nil), key...)}
}

// For is userID's identifier: "vg_" and 32 hex digits of an HMAC-SHA256
// (well within the API's 64 characters), or "" without a key.
func (ids Identifiers) For(userID string) string {
	if len(ids.key) == 0 || userID == "" {
		return ""
	}
	m := hmac.New(sha256.New, ids.key)
	m.Write([]byte(identifierDomain))
	m.Write([]byte(userID))
	return "vg_" + hex.EncodeToString(m.Sum(nil)[:16])
}
