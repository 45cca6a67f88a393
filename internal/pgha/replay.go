package pgha

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Replay control on the standby, for tests of reads that may lag (finance
// on a replica): pause replay so the standby holds still at a known point
// while the primary moves on, and wait for the standby to receive or
// replay what the primary has written.

// PauseReplay pauses the standby's replay and waits until it has stopped:
// from then on it shows nothing the primary commits, though it still
// receives the WAL.
func (p *Pair) PauseReplay(ctx context.Context) error {
	if err := exec(ctx, p.Standby.URL, `SELECT pg_wal_replay_pause()`); err != nil {
		return fmt.Errorf("pgha: pause replay: %w", err)
	}
	return p.pollStandby(ctx, "replay to pause", `SELECT pg_get_wal_replay_pause_state() = 'paused'`)
}

// ResumeReplay resumes the standby's replay.
func (p *Pair) ResumeReplay(ctx context.Context) error {
	if err := exec(ctx, p.Standby.URL, `SELECT pg_wal_replay_resume()`); err != nil {
		return fmt.Errorf("pgha: resume replay: %w", err)
	}
	return nil
}

// WaitReceived waits until the standby has received (not necessarily
// replayed) everything the primary has written so far.
func (p *Pair) WaitReceived(ctx context.Context) error {
	lsn, err := p.primaryLSN(ctx)
	if err != nil {
		return err
	}
	return p.pollStandby(ctx, "the standby to receive "+lsn, `SELECT pg_last_wal_receive_lsn() >= '`+lsn+`'::pg_lsn`)
}

// WaitReplayed waits until the standby has replayed everything the
// primary has written so far.
func (p *Pair) WaitReplayed(ctx context.Context) error {
	lsn, err := p.primaryLSN(ctx)
	if err != nil {
		return err
	}
	return p.pollStandby(ctx, "the standby to replay "+lsn, `SELECT pg_last_wal_replay_lsn() >= '`+lsn+`'::pg_lsn`)
}

func (p *Pair) primaryLSN(ctx context.Context) (string, error) {
	conn, err := pgx.Connect(ctx, p.Primary.URL)
	if err != nil {
		return "", fmt.Errorf("pgha: %w", err)
	}
	defer conn.Close(ctx)
	var lsn string
	if err := conn.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&lsn); err != nil {
		return "", fmt.Errorf("pgha: %w", err)
	}
	return lsn, nil
}

// pollStandby runs cond, a query of one boolean, on the standby until it
// is true or ctx ends.
func (p *Pair) pollStandby(ctx context.Context, what, cond string) error {
	conn, err := pgx.Connect(ctx, p.Standby.URL)
	if err != nil {
		return fmt.Errorf("pgha: %w", err)
	}
	defer conn.Close(ctx)
	for {
		var ok bool
		if err := conn.QueryRow(ctx, cond).Scan(&ok); err != nil {
			return fmt.Errorf("pgha: waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pgha: waiting for %s: %w", what, ctx.Err())
		case <-time.After(10 * time.Millisecond): // polls the standby's progress
		}
	}
}
