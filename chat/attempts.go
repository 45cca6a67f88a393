package chat

import (
	"github.com/voxgate/voxgate/unit"
)

// attempts are the ledger records of the turn's failed attempts its
// providers may bill (unit.AttemptRecords, over every call of the turn).
func (t *turn) attempts() []unit.Record {
	return unit.AttemptRecords(t.traces.All(), t.traces.Inputs(), t.p.UserID, t.sessionID, t.turnID)
}
