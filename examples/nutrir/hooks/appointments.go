package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// apptView is an appointment as the model reads it.
type apptView struct {
	ID           int       `json:"id"`
	ClientID     int       `json:"client_id"`
	Client       string    `json:"client"`
	Nutritionist string    `json:"nutritionist"`
	Start        time.Time `json:"start_time"`
	End          time.Time `json:"end_time"`
	Type         string    `json:"type"`
	LocationType string    `json:"location_type"`
	Status       string    `json:"status"`
	Notes        string    `json:"notes,omitempty"`
	CancelReason *string   `json:"cancel_reason,omitempty"`
}

const apptCols = `a.id, a.client_id, c.first_name || ' ' || c.last_name, s.first_name || ' ' || s.last_name,
	a.start_time, a.end_time, a.type, a.location_type, a.status, a.notes, a.cancel_reason
	FROM nutrir.appointments a JOIN nutrir.clients c ON c.id = a.client_id JOIN nutrir.staff s ON s.id = a.nutritionist_id`

func appointmentTools() map[string]tool {
	return map[string]tool{
		"list_appointments": {kind: read, run: listAppointments},
		"get_appointment": {kind: read, run: func(ctx context.Context, tx pgx.Tx, _ actor, raw json.RawMessage) (any, ref, error) {
			var a struct{ ID int }
			if err := decode(raw, &a); err != nil {
				return nil, ref{}, err
			}
			v, err := appointment(ctx, tx, a.ID)
			return map[string]any{"appointment": v}, ref{}, err
		}},
		"create_appointment": {kind: write, run: createAppointment},
		"update_appointment": {kind: write, run: updateAppointment},
		"cancel_appointment": {kind: write, run: func(ctx context.Context, tx pgx.Tx, _ actor, raw json.RawMessage) (any, ref, error) {
			var a struct {
				ID     int
				Reason *string
			}
			if err := decode(raw, &a); err != nil {
				return nil, ref{}, err
			}
			err := exec(ctx, tx, "open appointment", a.ID, `UPDATE nutrir.appointments SET status = 'cancelled', cancel_reason = $2
				WHERE id = $1 AND deleted_at IS NULL AND status IN ('scheduled', 'confirmed')`, a.ID, a.Reason)
			if err != nil {
				return nil, ref{}, err
			}
			v, err := appointment(ctx, tx, a.ID)
			return map[string]any{"cancelled": true, "appointment": v}, appointmentRef(a.ID), err
		}},
		"delete_appointment": softDelete("appointment", "nutrir.appointments"),
	}
}

func listAppointments(ctx context.Context, tx pgx.Tx, _ actor, raw json.RawMessage) (any, ref, error) {
	var a struct {
		From     *string `json:"from_date"`
		To       *string `json:"to_date"`
		ClientID *int    `json:"client_id"`
		Status   *string
	}
	if err := decode(raw, &a); err != nil {
		return nil, ref{}, err
	}
	from, err := optTime("from_date", a.From)
	if err != nil {
		return nil, ref{}, err
	}
	to, err := optTime("to_date", a.To)
	if err != nil {
		return nil, ref{}, err
	}
	rows, err := tx.Query(ctx, `SELECT `+apptCols+` WHERE a.deleted_at IS NULL
		AND ($1::timestamptz IS NULL OR a.start_time >= $1) AND ($2::timestamptz IS NULL OR a.start_time < $2)
		AND ($3::int IS NULL OR a.client_id = $3) AND ($4::text IS NULL OR a.status = $4)
		ORDER BY a.start_time LIMIT 50`, from, to, a.ClientID, a.Status)
	if err != nil {
		return nil, ref{}, err
	}
	list, err := pgx.CollectRows(rows, pgx.RowToStructByPos[apptView])
	return map[string]any{"appointments": list, "count": len(list)}, ref{}, err
}

func createAppointment(ctx context.Context, tx pgx.Tx, me actor, raw json.RawMessage) (any, ref, error) {
	var a struct {
		ClientID     int    `json:"client_id"`
		Start        string `json:"start_time"`
		End          string `json:"end_time"`
		Type         string
		LocationType string `json:"location_type"`
		Notes        string
	}
	if err := decode(raw, &a); err != nil {
		return nil, ref{}, err
	}
	start, end, err := span(&a.Start, &a.End)
	if err != nil {
		return nil, ref{}, err
	}
	// The client's primary nutritionist sees them, unless the one booking
	// is a nutritionist.
	var id int
	err = tx.QueryRow(ctx, `INSERT INTO nutrir.appointments (client_id, nutritionist_id, start_time, end_time, type, location_type, notes)
		SELECT c.id, CASE WHEN $7 IN ('nutritionist', 'admin') THEN $6 ELSE c.primary_nutritionist_id END, $2, $3, $4, $5, $8
		FROM nutrir.clients c WHERE c.id = $1 AND c.deleted_at IS NULL RETURNING id`,
		a.ClientID, start, end, a.Type, a.LocationType, me.ID, me.Role, a.Notes).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ref{}, refusal("There is no client " + strconv.Itoa(a.ClientID) + ".")
	}
	if err != nil {
		return nil, ref{}, err
	}
	v, err := appointment(ctx, tx, id)
	return map[string]any{"created": true, "appointment": v}, appointmentRef(id), err
}

func updateAppointment(ctx context.Context, tx pgx.Tx, _ actor, raw json.RawMessage) (any, ref, error) {
	var a struct {
		ID           int
		Start        *string `json:"start_time"`
		End          *string `json:"end_time"`
		Type         *string
		LocationType *string `json:"location_type"`
		Notes        *string
	}
	if err := decode(raw, &a); err != nil {
		return nil, ref{}, err
	}
	cur, err := appointment(ctx, tx, a.ID)
	if err != nil {
		return nil, ref{}, err
	}
	start, end := cur.Start.Format(time.RFC3339), cur.End.Format(time.RFC3339)
	if a.Start != nil {
		start = *a.Start
	}
	if a.End != nil {
		end = *a.End
	}
	s, e, err := span(&start, &end)
	if err != nil {
		return nil, ref{}, err
	}
	if err := exec(ctx, tx, "appointment", a.ID, `UPDATE nutrir.appointments SET start_time = $2, end_time = $3,
		type = coalesce($4, type), location_type = coalesce($5, location_type), notes = coalesce($6, notes)
		WHERE id = $1 AND deleted_at IS NULL`, a.ID, s, e, a.Type, a.LocationType, a.Notes); err != nil {
		return nil, ref{}, err
	}
	v, err := appointment(ctx, tx, a.ID)
	return map[string]any{"updated": true, "appointment": v}, appointmentRef(a.ID), err
}

func appointment(ctx context.Context, tx pgx.Tx, id int) (apptView, error) {
	rows, err := tx.Query(ctx, `SELECT `+apptCols+` WHERE a.id = $1 AND a.deleted_at IS NULL`, id)
	if err != nil {
		return apptView{}, err
	}
	v, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[apptView])
	if errors.Is(err, pgx.ErrNoRows) {
		return v, refusal("There is no appointment " + strconv.Itoa(id) + ".")
	}
	return v, err
}

// span reads a start and an end (RFC 3339, as the instructions ask) and
// refuses an end that is not after the start.
func span(start, end *string) (time.Time, time.Time, error) {
	s, err := optTime("start_time", start)
	if err != nil || s == nil {
		return time.Time{}, time.Time{}, refusal("start_time must be an RFC 3339 timestamp, such as 2026-03-02T09:00:00Z.")
	}
	e, err := optTime("end_time", end)
	if err != nil || e == nil {
		return time.Time{}, time.Time{}, refusal("end_time must be an RFC 3339 timestamp, such as 2026-03-02T09:45:00Z.")
	}
	if !e.After(*s) {
		return time.Time{}, time.Time{}, refusal("end_time must be after start_time.")
	}
	return *s, *e, nil
}

func optTime(name string, s *string) (*time.Time, error) {
	if s == nil {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, *s)
	if err != nil {
		return nil, refusal(name + " must be an RFC 3339 timestamp, such as 2026-03-02T09:00:00Z.")
	}
	return &t, nil
}

func appointmentRef(id int) ref { return ref{"appointment", strconv.Itoa(id)} }
