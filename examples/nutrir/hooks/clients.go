package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// clientView is a client as the model reads it. Email and phone are left
// out: voxgate refuses an answer that holds personal contact data
// (AI_PII_LEAK), so the app shows them on the client's page instead.
type clientView struct {
	ID                  int       `json:"id"`
	Name                string    `json:"name"`
	DateOfBirth         *string   `json:"date_of_birth,omitempty"`
	PrimaryNutritionist staffRef  `json:"primary_nutritionist"`
	ConsentGiven        bool      `json:"consent_given"`
	Notes               string    `json:"notes,omitempty"`
	Upcoming            []apptRef `json:"upcoming_appointments,omitempty"`
}

type staffRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type apptRef struct {
	ID     int       `json:"id"`
	Start  time.Time `json:"start_time"`
	Type   string    `json:"type"`
	Status string    `json:"status"`
}

const clientCols = `c.id, c.first_name || ' ' || c.last_name, to_char(c.date_of_birth, 'YYYY-MM-DD'),
	s.id, s.first_name || ' ' || s.last_name, c.consent_given, c.notes
	FROM nutrir.clients c JOIN nutrir.staff s ON s.id = c.primary_nutritionist_id`

func scanClient(row pgx.Row) (clientView, error) {
	var v clientView
	err := row.Scan(&v.ID, &v.Name, &v.DateOfBirth, &v.PrimaryNutritionist.ID, &v.PrimaryNutritionist.Name, &v.ConsentGiven, &v.Notes)
	return v, err
}

func clientTools() map[string]tool {
	return map[string]tool{
		"list_clients": {kind: read, run: listClients},
		"get_client":   {kind: read, run: getClient},
		"create_client": {kind: write, run: func(ctx context.Context, tx pgx.Tx, _ actor, raw json.RawMessage) (any, ref, error) {
			var a struct {
				FirstName             string  `json:"first_name"`
				LastName              string  `json:"last_name"`
				DateOfBirth           *string `json:"date_of_birth"`
				PrimaryNutritionistID string  `json:"primary_nutritionist_id"`
				ConsentGiven          bool    `json:"consent_given"`
				Notes                 string
			}
			if err := decode(raw, &a); err != nil {
				return nil, ref{}, err
			}
			if !a.ConsentGiven {
				return nil, ref{}, refusal("A client can only be created once they have given consent.")
			}
			if err := activeNutritionist(ctx, tx, a.PrimaryNutritionistID); err != nil {
				return nil, ref{}, err
			}
			var id int
			err := tx.QueryRow(ctx, `INSERT INTO nutrir.clients (first_name, last_name, date_of_birth, primary_nutritionist_id, consent_given, notes)
				VALUES ($1, $2, $3::date, $4, true, $5) RETURNING id`, a.FirstName, a.LastName, a.DateOfBirth, a.PrimaryNutritionistID, a.Notes).Scan(&id)
			if err != nil {
				return nil, ref{}, err
			}
			v, err := scanClient(tx.QueryRow(ctx, `SELECT `+clientCols+` WHERE c.id = $1`, id))
			return map[string]any{"created": true, "client": v}, clientRef(id), err
		}},
		"update_client": {kind: write, run: func(ctx context.Context, tx pgx.Tx, _ actor, raw json.RawMessage) (any, ref, error) {
			var a struct {
				ID                    int
				FirstName             *string `json:"first_name"`
				LastName              *string `json:"last_name"`
				PrimaryNutritionistID *string `json:"primary_nutritionist_id"`
				Notes                 *string
			}
			if err := decode(raw, &a); err != nil {
				return nil, ref{}, err
			}
			if a.PrimaryNutritionistID != nil {
				if err := activeNutritionist(ctx, tx, *a.PrimaryNutritionistID); err != nil {
					return nil, ref{}, err
				}
			}
			if err := exec(ctx, tx, "client", a.ID, `UPDATE nutrir.clients SET first_name = coalesce($2, first_name),
				last_name = coalesce($3, last_name), primary_nutritionist_id = coalesce($4, primary_nutritionist_id),
				notes = coalesce($5, notes) WHERE id = $1 AND deleted_at IS NULL`,
				a.ID, a.FirstName, a.LastName, a.PrimaryNutritionistID, a.Notes); err != nil {
				return nil, ref{}, err
			}
			v, err := scanClient(tx.QueryRow(ctx, `SELECT `+clientCols+` WHERE c.id = $1`, a.ID))
			return map[string]any{"updated": true, "client": v}, clientRef(a.ID), err
		}},
		"delete_client": softDelete("client", "nutrir.clients"),
	}
}

func listClients(ctx context.Context, tx pgx.Tx, _ actor, raw json.RawMessage) (any, ref, error) {
	var a struct {
		SearchTerm string `json:"search_term"`
	}
	if err := decode(raw, &a); err != nil {
		return nil, ref{}, err
	}
	rows, err := tx.Query(ctx, `SELECT `+clientCols+` WHERE c.deleted_at IS NULL
		AND ($1 = '' OR c.first_name || ' ' || c.last_name ILIKE '%' || $1 || '%') ORDER BY c.last_name, c.first_name LIMIT 50`, a.SearchTerm)
	if err != nil {
		return nil, ref{}, err
	}
	clients, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (clientView, error) { return scanClient(r) })
	return map[string]any{"clients": clients, "count": len(clients)}, ref{}, err
}

func getClient(ctx context.Context, tx pgx.Tx, _ actor, raw json.RawMessage) (any, ref, error) {
	var a struct{ ID int }
	if err := decode(raw, &a); err != nil {
		return nil, ref{}, err
	}
	v, err := scanClient(tx.QueryRow(ctx, `SELECT `+clientCols+` WHERE c.id = $1 AND c.deleted_at IS NULL`, a.ID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ref{}, refusal("There is no client " + strconv.Itoa(a.ID) + ".")
	}
	if err != nil {
		return nil, ref{}, err
	}
	rows, err := tx.Query(ctx, `SELECT id, start_time, type, status FROM nutrir.appointments
		WHERE client_id = $1 AND deleted_at IS NULL AND start_time > now() AND status IN ('scheduled', 'confirmed')
		ORDER BY start_time LIMIT 10`, a.ID)
	if err != nil {
		return nil, ref{}, err
	}
	v.Upcoming, err = pgx.CollectRows(rows, pgx.RowToStructByPos[apptRef])
	return map[string]any{"client": v}, ref{}, err
}

// activeNutritionist refuses an id that is no active nutritionist or
// admin: a client's primary nutritionist must be one.
func activeNutritionist(ctx context.Context, tx pgx.Tx, id string) error {
	var ok bool
	err := tx.QueryRow(ctx, `SELECT true FROM nutrir.staff WHERE id = $1 AND is_active AND role IN ('nutritionist', 'admin')`, id).Scan(&ok)
	if errors.Is(err, pgx.ErrNoRows) {
		return refusal("There is no active nutritionist " + id + ".")
	}
	return err
}

// exec runs a write that must touch exactly the entity named: none is the
// model's wrong id.
func exec(ctx context.Context, tx pgx.Tx, entity string, id int, sql string, args ...any) error {
	tag, err := tx.Exec(ctx, sql, args...)
	if err == nil && tag.RowsAffected() == 0 {
		return refusal("There is no " + entity + " " + strconv.Itoa(id) + ".")
	}
	return err
}

func clientRef(id int) ref { return ref{"client", strconv.Itoa(id)} }

// softDelete is a delete tool of the entity's table: the row is marked
// deleted, as the app's service layer does, and reads skip it.
func softDelete(entity, table string) tool {
	return tool{kind: write, run: func(ctx context.Context, tx pgx.Tx, _ actor, raw json.RawMessage) (any, ref, error) {
		var a struct{ ID int }
		if err := decode(raw, &a); err != nil {
			return nil, ref{}, err
		}
		err := exec(ctx, tx, entity, a.ID, `UPDATE `+table+` SET deleted_at = now() WHERE id = $1 AND deleted_at IS NULL`, a.ID)
		return map[string]any{"deleted": err == nil, entity + "_id": a.ID}, ref{entity, strconv.Itoa(a.ID)}, err
	}}
}
