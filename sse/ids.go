package sse

import "github.com/voxgate/voxgate/internal/randid"

// newID is a chat id (session, turn, message): prefix and 12 random bytes.
func newID(prefix string) string { return randid.New(prefix, 12) }
