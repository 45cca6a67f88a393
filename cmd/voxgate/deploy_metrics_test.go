package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v3"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/sim"
)

// metricRef is a metric name in a PromQL expression: every metric the
// dashboard and the alerts read is one of voxgate's own.
var metricRef = regexp.MustCompile(`\bvoxgate_[a-zA-Z0-9_:]+`)

// TestDeployMetricsExist boots the real Main with every part on (the
// simulator for each provider kind, a route over all three, voice and the
// lifecycle check), then asks its registry about every metric the Grafana
// dashboard and the alert rules name: a panel or an alert on a metric the
// binary does not export fails here.
func TestDeployMetricsExist(t *testing.T) {
	t.Parallel()
	refs := deployMetricRefs(t)
	if len(refs) < 20 {
		t.Fatalf("only %d metric names found in the dashboard and the rules: the extraction is broken", len(refs))
	}

	s, err := startSim(t.Context(), "127.0.0.1:0", sim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.stop() })
	simURL := s.url + "/v1"
	env := map[string]string{
		"VOXGATE_DATABASE_URL": pgtest.URL(t), "VOXGATE_JWT_SECRET": testSecret, "VOXGATE_ADDR": "127.0.0.1:0",
		"OPENAI_BASE_URL": simURL, "OPENAI_API_KEY": "sk-sim",
		"ANTHROPIC_BASE_URL": s.url, "ANTHROPIC_API_KEY": "sk-sim",
		"GOOGLE_GEMINI_BASE_URL": s.url, "GEMINI_API_KEY": "sk-sim",
	}
	cfg, err := config.Load("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database.MaxConns = 4
	cfg.Database.SpoolDir = t.TempDir()
	cfg.Routes = devRoutes(cfg)
	m := &Main{Config: cfg, Logger: newLogger(&strings.Builder{}), Getenv: func(k string) string { return env[k] }}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	if m.Voice == nil || m.Lifecycle == nil || m.Router == nil {
		t.Fatal("voice, the lifecycle check or the router is off: their metrics would not be registered")
	}
	// VoxgateDatabaseUnreachable reads the probes' own counts.
	if status, _ := get(t, m.URL()+"/readyz", ""); status != 200 {
		t.Fatalf("/readyz: %d", status)
	}

	gathered := map[string]bool{}
	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		gathered[mf.GetName()] = true
		if mf.GetName() == "voxgate_http_requests_total" {
			for _, mt := range mf.GetMetric() {
				for _, l := range mt.GetLabel() {
					if l.GetName() == "route" && l.GetValue() == "GET /readyz" {
						gathered["readyz counted"] = true
					}
				}
			}
		}
	}
	if !gathered["readyz counted"] {
		t.Error(`voxgate_http_requests_total has no route="GET /readyz" series: VoxgateDatabaseUnreachable would never fire`)
	}
	var missing []string
	for name, where := range refs {
		if !exported(m.Registry, gathered, name) {
			missing = append(missing, name+" (in "+where+")")
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("metrics the binary does not export:\n  %s", strings.Join(missing, "\n  "))
	}
	// The probe itself must tell: a name nobody registers is reported missing.
	if exported(m.Registry, gathered, "voxgate_ledger_lag_seconds") {
		t.Fatal("the registry probe takes an unknown name for an exported one")
	}
}

// exported reports whether reg holds name, a histogram's _bucket, _sum or
// _count series naming the histogram. A vector with no series yet is not
// in Gather's answer, so the registry is asked instead: registering a
// collector under a name it already holds is refused.
func exported(reg *prometheus.Registry, gathered map[string]bool, name string) bool {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && (gathered[base] || exported(reg, gathered, base)) {
			return true
		}
	}
	if gathered[name] {
		return true
	}
	probe := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: "deploy test probe"})
	if err := reg.Register(probe); err != nil {
		var already prometheus.AlreadyRegisteredError
		return errors.As(err, &already) || strings.Contains(err.Error(), "previously registered")
	}
	reg.Unregister(probe)
	return false
}

// deployMetricRefs returns each metric name in the dashboard's and the
// rules' expressions, with where it was first seen.
func deployMetricRefs(t *testing.T) map[string]string {
	t.Helper()
	refs := map[string]string{}
	add := func(where, expr string) {
		names := metricRef.FindAllString(expr, -1)
		if len(names) == 0 {
			t.Errorf("%s: %q reads no voxgate metric", where, expr)
		}
		for _, n := range names {
			if _, ok := refs[n]; !ok {
				refs[n] = where
			}
		}
	}

	raw, err := os.ReadFile("../../deploy/grafana/voxgate.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			add("dashboard panel "+p.Title, tg.Expr)
		}
	}

	raw, err = os.ReadFile("../../deploy/prometheus/alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(raw, &rules); err != nil {
		t.Fatalf("alerts: %v", err)
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			add("alert "+r.Alert, r.Expr)
		}
	}
	return refs
}

// TestDeployConfigsLoad loads the gateway files the deploy artefacts ship
// as the binary does (config.Load, unknown keys refused, then validated):
// the compose file's, and each voxgate.yaml the chart rendered when
// scripts/deploy-check.sh names their directory in VOXGATE_DEPLOY_CONFIGS.
func TestDeployConfigsLoad(t *testing.T) {
	t.Parallel()
	env := map[string]string{"VOXGATE_JWT_SECRET": testSecret, "OPENAI_API_KEY": "sk-test",
		"VOXGATE_DATABASE_URL": "postgres://voxgate@db/voxgate"}
	files := []string{"../../deploy/compose/voxgate.yaml"}
	dir := os.Getenv("VOXGATE_DEPLOY_CONFIGS")
	if dir != "" {
		rendered, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil || len(rendered) == 0 {
			t.Fatalf("VOXGATE_DEPLOY_CONFIGS=%s holds no rendered voxgate.yaml (%v)", dir, err)
		}
		files = append(files, rendered...)
	}
	for _, f := range files {
		cfg, err := config.Load(f, func(k string) string { return env[k] })
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if cfg.Server.MetricsAddr == "" || cfg.Server.DrainDelay <= 0 {
			t.Errorf("%s: metrics_addr %q, drain_delay %s: the scrape port and the drain are the deploy's to set",
				f, cfg.Server.MetricsAddr, cfg.Server.DrainDelay)
		}
		if cfg.Database.SpoolDir != config.DefaultSpoolDir {
			t.Errorf("%s: spool_dir %q, want the image's %s, where the volume is mounted", f, cfg.Database.SpoolDir, config.DefaultSpoolDir)
		}
		if cfg.Voice.Mode == "relay" && cfg.Voice.Relay.UDPAddr == "" {
			t.Errorf("%s: relay mode without the shared udp_addr the relay Service points at", f)
		}
	}
}
