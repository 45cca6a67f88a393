package openai

import (
	"encoding/json"
)

// respWhole reads a whole Response (llm.Request.Whole) as the stream
// decoder's events, in the stream's order, so one set of rules holds for
// both: each reasoning item as it ends, each call as it is added
// (arguments whole), each message's text as one delta, then the final
// response.
type respWhole struct {
	*respDecoder
	wholeBody
}

func (d *respWhole) Take() error {
	body, err := d.body(d.Classify, d.Invalid)
	if err != nil {
		return err
	}
	var r respObject
	if err := json.Unmarshal(body, &r); err != nil {
		return d.Invalid(err)
	}
	for i := range r.Output {
		if err := d.item(i, &r.Output[i]); err != nil {
			return err
		}
	}
	last := "response." + r.Status
	if r.Status != "failed" {
		last = "response.completed"
		if r.Status == "incomplete" {
			last = "response.incomplete"
		}
	}
	return d.event(respEvent{Type: last, Response: &r})
}

// item replays one output item as the events that would have carried it.
func (d *respWhole) item(at int, it *respItem) error {
	switch it.Type {
	case "reasoning":
		return d.event(respEvent{Type: "response.output_item.done", OutputIndex: at, Item: it})
	case "function_call":
		return d.event(respEvent{Type: "response.output_item.added", OutputIndex: at, Item: it})
	case "message":
		for _, c := range it.Content {
			if c.Type == "output_text" {
				if err := d.event(respEvent{Type: "response.output_text.delta", OutputIndex: at, Delta: c.Text}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Next and Close are the body's, over the emitter's.
func (d *respWhole) Next() (bool, error) { return d.wholeBody.next() }
func (d *respWhole) Close()              { d.wholeBody.close() }
