package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// staffView is a staff account as the model reads it (no email, as for
// clients).
type staffView struct {
	ID       string `json:"staff_id"`
	Name     string `json:"name"`
	Role     string `json:"role"`
	IsActive bool   `json:"is_active"`
}

const staffCols = `id, first_name || ' ' || last_name, role, is_active FROM nutrir.staff`

// staffTools are the seed's user management (its `user_id` is
// `staff_id` here: voxgate refuses a tool property that names the user,
// who is always the caller) and the dashboard.
func staffTools() map[string]tool {
	return map[string]tool{
		"list_staff": {kind: read, run: func(ctx context.Context, tx pgx.Tx, _ actor, raw json.RawMessage) (any, ref, error) {
			var a struct {
				Search   string
				Role     *string
				IsActive *bool `json:"is_active"`
			}
			if err := decode(raw, &a); err != nil {
				return nil, ref{}, err
			}
			rows, err := tx.Query(ctx, `SELECT `+staffCols+` WHERE ($1 = '' OR first_name || ' ' || last_name ILIKE '%' || $1 || '%')
				AND ($2::text IS NULL OR role = $2) AND ($3::bool IS NULL OR is_active = $3) ORDER BY last_name`, a.Search, a.Role, a.IsActive)
			if err != nil {
				return nil, ref{}, err
			}
			list, err := pgx.CollectRows(rows, pgx.RowToStructByPos[staffView])
			return map[string]any{"staff": list, "count": len(list)}, ref{}, err
		}},
		"get_staff": {kind: read, run: func(ctx context.Context, tx pgx.Tx, _ actor, raw json.RawMessage) (any, ref, error) {
			var a struct {
				ID string `json:"staff_id"`
			}
			if err := decode(raw, &a); err != nil {
				return nil, ref{}, err
			}
			v, err := staffByID(ctx, tx, a.ID)
			return map[string]any{"staff": v}, ref{}, err
		}},
		"get_dashboard": {kind: read, run: dashboard},
		"change_staff_role": {kind: adminWrite, run: func(ctx context.Context, tx pgx.Tx, me actor, raw json.RawMessage) (any, ref, error) {
			var a struct {
				ID      string `json:"staff_id"`
				NewRole string `json:"new_role"`
			}
			if err := decode(raw, &a); err != nil {
				return nil, ref{}, err
			}
			return setStaff(ctx, tx, me, a.ID, `UPDATE nutrir.staff SET role = $2 WHERE id = $1`, a.NewRole)
		}},
		"deactivate_staff": staffChange(`UPDATE nutrir.staff SET is_active = false WHERE id = $1`),
		"reactivate_staff": staffChange(`UPDATE nutrir.staff SET is_active = true WHERE id = $1`),
		// The app's mailer sends the reset email from this mark.
		"reset_staff_password": staffChange(`UPDATE nutrir.staff SET password_reset_requested_at = now() WHERE id = $1`),
	}
}

// staffChange is an admin's tool that runs sql on the staff account its
// one argument names.
func staffChange(sql string) tool {
	return tool{kind: adminWrite, run: func(ctx context.Context, tx pgx.Tx, me actor, raw json.RawMessage) (any, ref, error) {
		var a struct {
			ID string `json:"staff_id"`
		}
		if err := decode(raw, &a); err != nil {
			return nil, ref{}, err
		}
		return setStaff(ctx, tx, me, a.ID, sql)
	}}
}

// setStaff changes another staff member's account and answers it as it
// now is. An admin may not change their own: locking oneself out is the
// one mistake no other admin may be around to undo.
func setStaff(ctx context.Context, tx pgx.Tx, me actor, id, sql string, args ...any) (any, ref, error) {
	if id == me.ID {
		return nil, ref{}, refusal("You cannot change your own account here; ask another admin.")
	}
	if _, err := staffByID(ctx, tx, id); err != nil {
		return nil, ref{}, err
	}
	if _, err := tx.Exec(ctx, sql, append([]any{id}, args...)...); err != nil {
		return nil, ref{}, err
	}
	v, err := staffByID(ctx, tx, id)
	return map[string]any{"updated": true, "staff": v}, ref{"staff", id}, err
}

func staffByID(ctx context.Context, tx pgx.Tx, id string) (staffView, error) {
	rows, err := tx.Query(ctx, `SELECT `+staffCols+` WHERE id = $1`, id)
	if err != nil {
		return staffView{}, err
	}
	v, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[staffView])
	if errors.Is(err, pgx.ErrNoRows) {
		return v, refusal("There is no staff member " + id + ".")
	}
	return v, err
}

// dashboard is the seed's get_dashboard: today's and this week's
// appointments and the practice's active clients.
func dashboard(ctx context.Context, tx pgx.Tx, _ actor, _ json.RawMessage) (any, ref, error) {
	var today, week, clients int
	err := tx.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM nutrir.appointments WHERE deleted_at IS NULL AND status IN ('scheduled', 'confirmed')
			AND start_time >= current_date AND start_time < current_date + 1),
		(SELECT count(*) FROM nutrir.appointments WHERE deleted_at IS NULL AND status IN ('scheduled', 'confirmed')
			AND start_time >= current_date AND start_time < current_date + 7),
		(SELECT count(*) FROM nutrir.clients WHERE deleted_at IS NULL)`).Scan(&today, &week, &clients)
	return map[string]any{"date": time.Now().UTC().Format("2006-01-02"), "appointments_today": today,
		"appointments_next_7_days": week, "active_clients": clients}, ref{}, err
}
