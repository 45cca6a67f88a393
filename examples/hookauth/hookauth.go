// Package hookauth is the receiver's side of voxgate's webhook signature
// (docs/tools.md, "Webhook tools"), shared by the examples' tool servers.
// It imports nothing from voxgate: an app team copies it, or writes the
// same check in its own stack.
package hookauth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// MaxAge is how far a signature's timestamp may be from now, either way.
const MaxAge = 300 * time.Second

// Verify checks X-Voxgate-Signature ("t=<unix>,v1=<hex>") over body: a
// timestamp within MaxAge of now and an HMAC-SHA256 over "t.body" with
// secret, compared in constant time.
func Verify(secret []byte, header string, body []byte, now time.Time) error {
	var ts, sig string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sig = v
		}
	}
	t, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || sig == "" {
		return errors.New("malformed signature header")
	}
	if age := now.Sub(time.Unix(t, 0)); age > MaxAge || age < -MaxAge {
		return errors.New("signature too old")
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	if !hmac.Equal([]byte(sig), []byte(hex.EncodeToString(mac.Sum(nil)))) {
		return errors.New("signature mismatch")
	}
	return nil
}
