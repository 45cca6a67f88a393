// Package hooks is Nutrir's reference tool server: the app's side of the
// webhook tools examples/nutrir/voxgate.yaml declares, over the practice's
// staff, clients and appointments (schema.sql). voxgate runs the agent
// loop, asks the user to confirm every write, and posts each call here
// signed; this server plays the app's service layer: it checks the
// signature, finds the acting staff member from the call's user_id, runs
// the tool in one transaction and, for a write, records it in the audit
// log with source AiAssistant under voxgate's call id, so a call delivered
// twice is written once.
//
// It imports nothing from voxgate: an app team copies it, or writes the
// same in its own stack.
package hooks

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// kind is what a tool does, which decides its transaction and who may
// call it; voxgate.yaml gives reads tier none, writes standard and staff
// changes elevated, and the confirmation cards follow from that.
type kind int

const (
	read kind = iota
	write
	adminWrite // staff accounts: admins only, as the seed's user management
)

// tool runs one call inside its transaction. A write returns the entity
// it touched, for the audit log.
type tool struct {
	kind kind
	run  func(ctx context.Context, tx pgx.Tx, a actor, args json.RawMessage) (result any, entity ref, err error)
}

// ref names the entity a write touched.
type ref struct{ Type, ID string }

// actor is the staff member a call acts for.
type actor struct {
	ID, Role string
}

// refusal is an answer the model should read and act on (an unknown id,
// an end before a start, a role that may not do this): it is answered
// 200 with {"error": message}, because voxgate gives the model only the
// status of a non-2xx answer.
type refusal string

func (r refusal) Error() string { return string(r) }

// Server answers voxgate's calls at /hooks/<tool>.
type Server struct {
	db     *pgxpool.Pool
	secret []byte
	tools  map[string]tool
}

// New returns the tool server over db (schema.sql applied) checking
// signatures with secret.
func New(db *pgxpool.Pool, secret []byte) *Server {
	s := &Server{db: db, secret: secret, tools: map[string]tool{}}
	for name, t := range clientTools() {
		s.tools[name] = t
	}
	for name, t := range appointmentTools() {
		s.tools[name] = t
	}
	for name, t := range staffTools() {
		s.tools[name] = t
	}
	return s
}

// call is the body voxgate sends.
type call struct {
	CallID    string          `json:"call_id"`
	UserID    string          `json:"user_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutPrefix(r.URL.Path, "/hooks/")
	t, known := s.tools[name]
	if r.Method != http.MethodPost || !ok || !known {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err != nil {
		http.Error(w, "unreadable body", http.StatusBadRequest)
		return
	}
	if err := verify(s.secret, r.Header.Get("X-Voxgate-Signature"), body, time.Now()); err != nil {
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var c call
	if json.Unmarshal(body, &c) != nil || c.Name != name || c.CallID == "" || c.UserID == "" {
		http.Error(w, "bad call", http.StatusBadRequest)
		return
	}
	result, err := s.run(r.Context(), t, c)
	var refused refusal
	switch {
	case errors.As(err, &refused):
		result = map[string]any{"error": string(refused)}
	case err != nil:
		log.Printf("nutrir hooks: %s: %v", name, err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(result)
}

// run runs one call in a transaction as its actor: a read in a read-only
// one; a write after claiming its call id in the audit log, so that a
// second delivery of the call answers what the first wrote.
func (s *Server) run(ctx context.Context, t tool, c call) (any, error) {
	mode := pgx.ReadWrite
	if t.kind == read {
		mode = pgx.ReadOnly
	}
	tx, err := s.db.BeginTx(ctx, pgx.TxOptions{AccessMode: mode})
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	a, err := staffMember(ctx, tx, c.UserID)
	if err != nil {
		return nil, err
	}
	if t.kind == adminWrite && a.Role != "admin" {
		return nil, refusal("Only a practice admin can change staff accounts.")
	}
	if t.kind != read {
		// A concurrent duplicate waits here on the unique key until the
		// first commits, then reads its answer.
		var claimed bool
		if err := tx.QueryRow(ctx, `INSERT INTO nutrir.audit_log (call_id, actor_id, source, action, entity_type)
			VALUES ($1, $2, 'AiAssistant', $3, '') ON CONFLICT (call_id) DO NOTHING RETURNING true`,
			c.CallID, a.ID, c.Name).Scan(&claimed); errors.Is(err, pgx.ErrNoRows) {
			var stored json.RawMessage
			if err := tx.QueryRow(ctx, `SELECT result FROM nutrir.audit_log WHERE call_id = $1`, c.CallID).Scan(&stored); err != nil {
				return nil, err
			}
			return stored, nil
		} else if err != nil {
			return nil, err
		}
	}
	result, entity, err := t.run(ctx, tx, a, c.Arguments)
	if err != nil {
		return nil, err
	}
	if t.kind != read {
		if _, err := tx.Exec(ctx, `UPDATE nutrir.audit_log SET entity_type = $2, entity_id = $3, result = $4 WHERE call_id = $1`,
			c.CallID, entity.Type, entity.ID, result); err != nil {
			return nil, err
		}
	}
	return result, tx.Commit(ctx)
}

// staffMember is the active staff member whose login is id.
func staffMember(ctx context.Context, tx pgx.Tx, id string) (actor, error) {
	a := actor{ID: id}
	err := tx.QueryRow(ctx, `SELECT role FROM nutrir.staff WHERE id = $1 AND is_active`, id).Scan(&a.Role)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, refusal("You are not an active member of this practice.")
	}
	return a, err
}

// decode reads a call's arguments, which voxgate has checked against the
// tool's schema; a mismatch is the model's to fix.
func decode(args json.RawMessage, v any) error {
	if len(args) == 0 {
		args = []byte("{}")
	}
	if err := json.Unmarshal(args, v); err != nil {
		return refusal("The arguments do not fit this tool.")
	}
	return nil
}

// verify is the receiver's check of docs/tools.md: a timestamp within
// 300 s of now and an HMAC-SHA256 over "t.body", compared in constant time.
func verify(secret []byte, header string, body []byte, now time.Time) error {
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
	if age := now.Sub(time.Unix(t, 0)); age > 300*time.Second || age < -300*time.Second {
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
