package main

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
)

// otlpReceiver is an OTLP/HTTP trace endpoint: it decodes each export with
// the protocol's own generated types and keeps the spans.
type otlpReceiver struct {
	url   string
	mu    sync.Mutex
	spans []*tracepb.Span
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	rc := &otlpReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "not an OTLP/HTTP protobuf trace export", http.StatusBadRequest)
			return
		}
		body, err := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(body, &req)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rc.mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				rc.spans = append(rc.spans, ss.Spans...)
			}
		}
		rc.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	rc.url = srv.URL
	return rc
}

// trace is the spans received of one trace id, by name.
func (rc *otlpReceiver) trace(id string) map[string][]*tracepb.Span {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := map[string][]*tracepb.Span{}
	for _, s := range rc.spans {
		if hex.EncodeToString(s.TraceId) == id {
			out[s.Name] = append(out[s.Name], s)
		}
	}
	return out
}

func attr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			switch v := kv.Value.Value.(type) {
			case *commonpb.AnyValue_StringValue:
				return v.StringValue
			}
			return kv.Value.String()
		}
	}
	return ""
}

// TestTracesOfAChatTurn: with the OTEL_* variables naming an endpoint, a
// chat turn whose primary fails over and whose context tool is a webhook
// exports one trace continuing the app's traceparent: the request's server
// span, the admission, each router attempt with its outcome, the tool call
// and the settlement under it; the webhook is called with the same trace.
// Not parallel: the exporter reads the process's environment.
func TestTracesOfAChatTurn(t *testing.T) {
	rc := newOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rc.url)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	hooks := &hookCalls{}
	hook := httptest.NewServer(hooks)
	t.Cleanup(hook.Close)
	rt, rtURL := newRealtimeSim(t)
	g := startGatewayWith(t, nil, tracedVoice(hook.URL, rtURL), withHookSecret)
	g.primary.fault(t, sim.Fault{Kind: sim.FaultUnavailable, Fraction: 1})

	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	// A probe, even one carrying the trace's context, makes no span.
	for _, path := range []string{"/healthz", "/readyz"} {
		probe, _ := http.NewRequest("GET", g.m.URL()+path, nil)
		probe.Header.Set("Traceparent", "00-"+traceID+"-"+parentID+"-01")
		if resp, err := http.DefaultClient.Do(probe); err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s: %v %v", path, resp, err)
		} else {
			resp.Body.Close()
		}
	}
	req, _ := http.NewRequest("POST", g.m.URL()+"/v1/chat", strings.NewReader(`{"message":"what should I eat?"}`))
	req.Header.Set("Authorization", "Bearer "+mint(t, "u-traced", "", "pro"))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Traceparent", "00-"+traceID+"-"+parentID+"-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if names := eventNames(t, resp); resp.StatusCode != 200 || len(names) == 0 || names[len(names)-1] != "done" {
		t.Fatalf("POST /v1/chat: got %d %v, want 200 ending in done", resp.StatusCode, names)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var spans map[string][]*tracepb.Span
	testkit.Eventually(t, ctx, "the turn's spans", func() bool {
		spans = rc.trace(traceID)
		return len(spans["POST /v1/chat"]) == 1 && len(spans["settle"]) == 1
	})
	if n := len(spans["GET /healthz"]) + len(spans["GET /readyz"]); n != 0 {
		t.Errorf("the probes made %d spans, want none", n)
	}
	root := spans["POST /v1/chat"][0]
	if hex.EncodeToString(root.ParentSpanId) != parentID || root.Kind != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("the request's span: parent %x, kind %v; want the app's span %s, server", root.ParentSpanId, root.Kind, parentID)
	}
	if got := attr(root, "http.route"); got != "POST /v1/chat" {
		t.Errorf("http.route %q", got)
	}
	under := func(name string) []*tracepb.Span {
		var out []*tracepb.Span
		for _, s := range spans[name] {
			if string(s.ParentSpanId) == string(root.SpanId) {
				out = append(out, s)
			}
		}
		return out
	}
	if n := len(under("quota admit")); n != 1 {
		t.Errorf("admission spans under the request: %d, want 1", n)
	}
	if n := len(under("settle")); n != 1 {
		t.Errorf("settle spans under the request: %d, want 1", n)
	}
	primary, fallback := under("chat "+primaryModel), under("chat "+fallbackModel)
	if len(primary) != 2 || len(fallback) != 1 {
		t.Fatalf("attempt spans: %d of the primary, %d of the fallback; want its try and retry, then one", len(primary), len(fallback))
	}
	for _, s := range primary {
		if attr(s, "voxgate.attempt.outcome") != "PROVIDER_UNAVAILABLE" || s.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
			t.Errorf("the primary's attempt: outcome %q, status %v", attr(s, "voxgate.attempt.outcome"), s.Status)
		}
	}
	fb := fallback[0]
	if attr(fb, "voxgate.attempt.outcome") != "success" || attr(fb, "gen_ai.provider.name") != "gcp.gemini" ||
		attr(fb, "gen_ai.request.model") != fallbackModel || attr(fb, "gen_ai.usage.output_tokens") == "" {
		t.Errorf("the fallback's attempt: %v", fb.Attributes)
	}
	tool := spans["execute_tool profile_hook"]
	if len(tool) != 1 || attr(tool[0], "gen_ai.tool.name") != "profile_hook" {
		t.Fatalf("tool spans %v", tool)
	}
	got := hooks.of("/profile")
	if want := "00-" + traceID + "-" + hex.EncodeToString(tool[0].SpanId) + "-01"; len(got) != 1 || got[0] != want {
		t.Errorf("the webhook's traceparents %q, want %q: the tool call's span", got, want)
	}
	for name, ss := range spans {
		for _, s := range ss {
			for _, kv := range s.Attributes {
				if strings.Contains(kv.Value.String(), "what should I eat") || strings.Contains(kv.Value.String(), "u-traced") {
					t.Errorf("span %q carries the user's text or id in %s", name, kv.Key)
				}
			}
		}
	}

	// The request-duration histogram points at the turn's trace: its
	// exemplar, served to a scraper that asks for OpenMetrics.
	mreq, _ := http.NewRequestWithContext(ctx, "GET", g.m.URL()+"/metrics", nil)
	mreq.Header.Set("Accept", "application/openmetrics-text; version=1.0.0")
	mresp, err := http.DefaultClient.Do(mreq)
	if err != nil {
		t.Fatal(err)
	}
	scraped, _ := io.ReadAll(mresp.Body)
	mresp.Body.Close()
	exemplar := false
	for _, line := range strings.Split(string(scraped), "\n") {
		exemplar = exemplar || strings.HasPrefix(line, "voxgate_http_request_duration_seconds_bucket{") &&
			strings.Contains(line, `route="POST /v1/chat"`) && strings.Contains(line, `# {trace_id="`+traceID+`"}`)
	}
	if !exemplar {
		t.Errorf("no bucket of voxgate_http_request_duration_seconds{route=\"POST /v1/chat\"} has the turn's trace %s as its exemplar", traceID)
	}

	// A second replica on the same database, for the voice call's
	// adoption.
	b := startGatewayWith(t, nil, func(cfg *config.Config) {
		tracedVoice(hook.URL, rtURL)(cfg)
		cfg.Database.URL = g.m.Config.Database.URL
	}, withHookSecret)
	traceSidebandCall(t, rc, g, b, rt, hooks)
}
