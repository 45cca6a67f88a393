package realtime

import (
	"fmt"

	"github.com/voxgate/voxgate/sim/core"
)

// Conversation items: what clients create, retrieve, delete and truncate,
// kept in order in rtSession.items.

func errNoItem(id string) *core.APIError {
	return &core.APIError{Type: "invalid_request_error", Code: "item_not_found", Param: "item_id",
		Message: "Item with item_id not found: " + id}
}

func (ss *rtSession) find(id string) int {
	for i := range ss.items {
		if ss.items[i].item.ID == id {
			return i
		}
	}
	return -1
}

func (ss *rtSession) createItem(ev *clientEvent, from *Sink) *core.APIError {
	it := *ev.Item
	if ss.find(it.ID) >= 0 {
		return core.ErrInvalidValue("item.id", "Item with id '"+it.ID+"' already exists.")
	}
	ci := convItem{item: it, textBytes: len(ev.ItemText)}
	switch it.Type {
	case "message":
		if it.Role == "user" {
			ci.userText = ev.ItemText
		}
	case "function_call":
		ci.textBytes = len(it.Name) + len(*it.Arguments)
	case "function_call_output":
		if !ss.hasCall(it.CallID) {
			return &core.APIError{Type: "invalid_request_error", Code: "invalid_tool_call_id", Param: "item.call_id",
				Message: fmt.Sprintf("Tool call ID '%s' not found in conversation.", it.CallID)}
		}
		ci.textBytes = len(*it.Output)
		if ss.pending[it.CallID] {
			delete(ss.pending, it.CallID)
			path := ""
			if from != nil {
				path = from.Path
			}
			ss.stats.update(func(s *CallStats) { s.ToolOutputs[path]++ })
		}
	}
	prev := ss.lastItemID()
	at := len(ss.items)
	if ev.PreviousItemID != "" {
		if ev.PreviousItemID == "root" {
			at = 0
		} else if i := ss.find(ev.PreviousItemID); i >= 0 {
			at = i + 1
		} else {
			return errNoItem(ev.PreviousItemID)
		}
		prev = ss.idBefore(at)
	}
	ss.items = append(ss.items[:at], append([]convItem{ci}, ss.items[at:]...)...)
	ss.emitConversationItem("added", prev, it)
	ss.emitConversationItem("done", prev, it)
	return nil
}

// hasCall reports a function_call item with this call id in the
// conversation: the only thing a function_call_output may answer.
func (ss *rtSession) hasCall(callID string) bool {
	for i := range ss.items {
		if it := &ss.items[i].item; it.Type == "function_call" && it.CallID == callID {
			return true
		}
	}
	return false
}

func (ss *rtSession) lastItemID() *string { return ss.idBefore(len(ss.items)) }

// idBefore is the id of the item before position at; JSON null at the start.
func (ss *rtSession) idBefore(at int) *string {
	if at == 0 {
		return nil
	}
	return Ptr(ss.items[at-1].item.ID)
}

func (ss *rtSession) truncate(ev *clientEvent) *core.APIError {
	i := ss.find(ev.ItemID)
	if i < 0 {
		return errNoItem(ev.ItemID)
	}
	ci := &ss.items[i]
	if ci.item.Role != "assistant" || ci.audioTok == 0 {
		return core.ErrInvalidValue("item_id", "Only assistant messages with audio can be truncated.")
	}
	ci.audioTok = min(ci.audioTok, audioOutTokens(ev.AudioEndMS))
	out := newEvent("conversation.item.truncated")
	out.ItemID, out.ContentIndex, out.AudioEndMS = ev.ItemID, Ptr(ev.ContentIndex), Ptr(ev.AudioEndMS)
	ss.emit(out)
	return nil
}
