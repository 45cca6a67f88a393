package main

import (
	"context"
	"net/http"

	"github.com/voxgate/voxgate/internal/apierr"
)

// voiceService is what the gateway needs of voice: its routes' handlers
// and its background work. It is the control plane, or off.
type voiceService interface {
	HandleAction(http.ResponseWriter, *http.Request) error
	HandleStart(http.ResponseWriter, *http.Request) error
	HandleList(http.ResponseWriter, *http.Request) error
	HandleGet(http.ResponseWriter, *http.Request) error
	HandleToolCall(http.ResponseWriter, *http.Request) error
	HandleSDP(http.ResponseWriter, *http.Request) error
	HandleEnd(http.ResponseWriter, *http.Request) error
	Run(context.Context)
	// Close hands the calls this replica holds to another replica.
	Close()
}

// chatService is what the gateway needs of chat: the chat service, or off.
type chatService interface {
	HandleChat(http.ResponseWriter, *http.Request) error
	HandleList(http.ResponseWriter, *http.Request) error
	HandleMessages(http.ResponseWriter, *http.Request) error
	HandleDelete(http.ResponseWriter, *http.Request) error
	Run(context.Context)
}

// completionsService is what the gateway needs of the OpenAI-compatible
// endpoints: the completions service, or off (with chat: they share its
// route and its providers).
type completionsService interface {
	HandleCompletions(http.ResponseWriter, *http.Request) error
	HandleModels(http.ResponseWriter, *http.Request) error
	HandleModel(http.ResponseWriter, *http.Request) error
}

// responsesService is what the gateway needs of the Responses endpoint:
// the responses service, or off with chat (they share its route). Its Run
// purges stored responses past chat.retention_days.
type responsesService interface {
	HandleCreate(http.ResponseWriter, *http.Request) error
	HandleGet(http.ResponseWriter, *http.Request) error
	HandleDelete(http.ResponseWriter, *http.Request) error
	HandleInputItems(http.ResponseWriter, *http.Request) error
	Run(context.Context)
}

// off stands in for a feature with no provider configured: every one of
// its routes answers 503 AI_FEATURE_DISABLED naming the feature, reading
// and ending included (with no provider there is nothing to read or end),
// and it has no background work. One value serves voice and chat, so the
// answer is written once.
type off struct {
	feature string // "Voice" or "Chat", as the message says it
}

var (
	_ voiceService       = off{}
	_ chatService        = off{}
	_ completionsService = off{}
	_ responsesService   = off{}
)

func (o off) refuse(http.ResponseWriter, *http.Request) error {
	return apierr.New(apierr.AIFeatureDisabled, o.feature+" is not set up on this server.")
}

func (o off) HandleAction(w http.ResponseWriter, r *http.Request) error   { return o.refuse(w, r) }
func (o off) HandleStart(w http.ResponseWriter, r *http.Request) error    { return o.refuse(w, r) }
func (o off) HandleList(w http.ResponseWriter, r *http.Request) error     { return o.refuse(w, r) }
func (o off) HandleGet(w http.ResponseWriter, r *http.Request) error      { return o.refuse(w, r) }
func (o off) HandleToolCall(w http.ResponseWriter, r *http.Request) error { return o.refuse(w, r) }
func (o off) HandleSDP(w http.ResponseWriter, r *http.Request) error      { return o.refuse(w, r) }
func (o off) HandleEnd(w http.ResponseWriter, r *http.Request) error      { return o.refuse(w, r) }
func (o off) HandleChat(w http.ResponseWriter, r *http.Request) error     { return o.refuse(w, r) }
func (o off) HandleMessages(w http.ResponseWriter, r *http.Request) error { return o.refuse(w, r) }
func (o off) HandleDelete(w http.ResponseWriter, r *http.Request) error   { return o.refuse(w, r) }
func (o off) HandleCompletions(w http.ResponseWriter, r *http.Request) error {
	return o.refuse(w, r)
}
func (o off) HandleCreate(w http.ResponseWriter, r *http.Request) error { return o.refuse(w, r) }
func (o off) HandleModels(w http.ResponseWriter, r *http.Request) error { return o.refuse(w, r) }
func (o off) HandleModel(w http.ResponseWriter, r *http.Request) error  { return o.refuse(w, r) }
func (o off) HandleInputItems(w http.ResponseWriter, r *http.Request) error {
	return o.refuse(w, r)
}

// Run returns at once: a feature that is off has nothing to sweep or purge.
func (off) Run(context.Context) {}

// Close has no calls to hand over.
func (off) Close() {}
