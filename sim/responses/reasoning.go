package responses

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"

	"github.com/voxgate/voxgate/sim/core"
)

// Reasoning items carried by the client (docs/sim.md, "Responses API",
// "Reasoning across requests"). A reasoning model's item is handed out
// with an opaque encrypted_content when the request includes
// "reasoning.encrypted_content"; a later request may carry the item back
// in its input, as a stateless client (store: false) must for the model
// to keep its reasoning across tool calls. The real content is encrypted
// for the organization; the simulator's is a MAC over the item's id and
// the API key under a secret of the server's, so a tampered blob, one
// from another key, or one from another simulator fails as the API's
// does, with its 400 invalid_encrypted_content.

// IncludeEncrypted is the include value that asks for encrypted_content.
const IncludeEncrypted = "reasoning.encrypted_content"

// sealPrefix starts every blob, as the API's Fernet tokens start "gAAAAA".
const sealPrefix = "gAAAAA"

// sealer makes and checks encrypted_content.
type sealer struct{ secret [32]byte }

func newSealer() *sealer {
	s := &sealer{}
	_, _ = rand.Read(s.secret[:]) // crypto/rand never fails on supported platforms
	return s
}

func (s *sealer) mac(apiKey, id string) []byte {
	m := hmac.New(sha256.New, s.secret[:])
	m.Write([]byte(apiKey))
	m.Write([]byte{0})
	m.Write([]byte(id))
	return m.Sum(nil)
}

// seal is the encrypted_content of reasoning item id for apiKey.
func (s *sealer) seal(apiKey, id string) string {
	blob := append([]byte(id+"\x00"), s.mac(apiKey, id)...)
	return sealPrefix + base64.RawURLEncoding.EncodeToString(blob)
}

// open reports whether content is a blob this server sealed for apiKey,
// and the id of the item it was sealed for.
func (s *sealer) open(apiKey, content string) (string, bool) {
	rest, ok := strings.CutPrefix(content, sealPrefix)
	if !ok {
		return "", false
	}
	blob, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || len(blob) < sha256.Size+1 {
		return "", false
	}
	head, sum := blob[:len(blob)-sha256.Size], blob[len(blob)-sha256.Size:]
	id, found := strings.CutSuffix(string(head), "\x00")
	if !found || !hmac.Equal(sum, s.mac(apiKey, id)) {
		return "", false
	}
	return id, true
}

// includes reports whether the request's include names v.
func (r *createRequest) includes(v string) bool {
	for _, in := range r.Include {
		if in == v {
			return true
		}
	}
	return false
}

// checkReasoning checks the reasoning items of the request's own input
// (a continuation's earlier items were the simulator's own) as the API
// does, and returns how many it accepted: one with encrypted_content must
// have been sealed for this key; one without must name an item of a
// stored response of this key; either must be followed by another item
// (the message or call it preceded).
func (s *Server) checkReasoning(apiKey string, items []item) (int, error) {
	n := 0
	for i, it := range items {
		if it.Type != "reasoning" {
			continue
		}
		if i == len(items)-1 {
			return 0, core.ErrInvalidRequest("input", fmt.Sprintf("Item '%s' of type 'reasoning' was provided without its required following item.", it.ID))
		}
		if it.Encrypted != "" {
			if _, ok := s.sealer.open(apiKey, it.Encrypted); !ok {
				return 0, encryptedNotVerified(it.Encrypted)
			}
		} else if !s.store.hasItem(apiKey, it.ID) {
			return 0, itemNotFound(it.ID)
		}
		n++
	}
	return n, nil
}

// encryptedNotVerified is the API's 400 for encrypted_content it cannot
// decrypt for the organization: the message shows the blob's first and
// last four characters (openai/codex#8145).
func encryptedNotVerified(content string) *core.APIError {
	shown := content
	if len(content) > 8 {
		shown = content[:4] + "..." + content[len(content)-4:]
	}
	return &core.APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "invalid_encrypted_content",
		Message: fmt.Sprintf("The encrypted content %s could not be verified.", shown)}
}

// itemNotFound is the API's 404 for an item referred to by id alone that
// it did not keep (as users meet it: can1357/oh-my-pi#41, vercel/ai#7543).
func itemNotFound(id string) *core.APIError {
	return &core.APIError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: "input",
		Message: fmt.Sprintf("Item with id '%s' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.", id)}
}
