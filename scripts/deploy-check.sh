#!/usr/bin/env bash
# Checks deploy/ with tools nobody here wrote, at pinned versions built
# through the Go module proxy and kept in a cache (VOXGATE_TOOLS, default
# $(go env GOPATH)/voxgate-tools), so a second run starts at once:
#   - helm lint and helm template of the chart, with its defaults (plus the
#     one required value) and with ci/production-values.yaml;
#   - kubeconform -strict on every rendered manifest, against schemas made
#     offline from the Kubernetes module's own OpenAPI document and the
#     prometheus-operator module's ServiceMonitor and PrometheusRule CRDs
#     (deploy/kubeschema),
#     and a misspelt field that must fail, so the schemas are known to bite;
#   - promtool check rules and test rules on the alerts, and check rules on
#     the chart's PrometheusRule as rendered (its copy of the alerts must be
#     the file), check config on the compose file's Prometheus;
#   - deploy/compose.yaml loaded by compose-go, the loader of the docker
#     compose CLI (the compose spec's schema), from its own module
#     (deploy/composecheck), with a misspelt key that must fail;
#   - each rendered voxgate.yaml loaded by the binary's own config loader
#     (TestDeployConfigsLoad). TestDeployMetricsExist, which holds the
#     dashboard and the alerts to the metrics the binary exports, runs in
#     go test ./... with the rest.
# Under CI=true a tool that cannot be built is a failure; elsewhere the
# check is skipped and says why.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
HELM_VERSION=v3.22.0
KUBECONFORM_VERSION=v0.8.0
PROMETHEUS_VERSION=v0.316.0     # the Go module version of Prometheus 3.16's promtool
KUBERNETES_VERSION=v1.34.4      # its api/openapi-spec/swagger.json gives the schemas
PROMETHEUS_OPERATOR_VERSION=v0.85.0
KUBE_VERSION=${KUBERNETES_VERSION#v}

tools=${VOXGATE_TOOLS:-$($GO env GOPATH)/voxgate-tools}
mkdir -p "$tools"

skip_or_fail() {
  if [ "${CI:-}" = true ]; then
    echo "deploy-check: $*" >&2
    exit 1
  fi
  echo "deploy-check: $*; skipping the deploy checks" >&2
  exit 0
}

# install NAME PACKAGE VERSION: go install into a directory of its own per
# version, so a pin change never runs a stale binary.
install() {
  local dir="$tools/$1-$3"
  if [ ! -x "$dir/$1" ]; then
    echo "deploy-check: building $1 $3 (once)" >&2
    GOBIN="$dir" GOFLAGS=-mod=mod $GO install "$2@$3" >"$tools/$1.log" 2>&1 ||
      { tail -20 "$tools/$1.log" >&2; skip_or_fail "cannot build $1 $3"; }
  fi
  echo "$dir/$1"
}
helm=$(install helm helm.sh/helm/v3/cmd/helm "$HELM_VERSION" | tail -1)
kubeconform=$(install kubeconform github.com/yannh/kubeconform/cmd/kubeconform "$KUBECONFORM_VERSION" | tail -1)
promtool=$(install promtool github.com/prometheus/prometheus/cmd/promtool "$PROMETHEUS_VERSION" | tail -1)

# moddir MODULE VERSION: the module's files, from the Go module cache.
moddir() {
  GOFLAGS=-mod=mod $GO mod download -json "$1@$2" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}
# The prometheus-operator CRDs the chart renders; part of the cache's name.
crds="servicemonitors prometheusrules"
stamp=$( (cat deploy/kubeschema/main.go; echo "$crds") | sha256sum | cut -c1-12)
schemas="$tools/schemas-$KUBERNETES_VERSION-$PROMETHEUS_OPERATOR_VERSION-$stamp"
if [ ! -f "$schemas/statefulset-apps-v1.json" ]; then
  k8s=$(moddir k8s.io/kubernetes "$KUBERNETES_VERSION") || skip_or_fail "cannot download k8s.io/kubernetes $KUBERNETES_VERSION"
  po=$(moddir github.com/prometheus-operator/prometheus-operator "$PROMETHEUS_OPERATOR_VERSION") ||
    skip_or_fail "cannot download prometheus-operator $PROMETHEUS_OPERATOR_VERSION"
  # A directory of this run's own, renamed into place whole: two checks
  # run at once (two clones on one machine) each build theirs, and the
  # second rename finds the first's in place and drops its own.
  tmp="$schemas.tmp.$$"
  rm -rf "$tmp"
  crdargs=()
  for c in $crds; do
    crdargs+=(-crd "$po/example/prometheus-operator-crd/monitoring.coreos.com_$c.yaml")
  done
  $GO run ./deploy/kubeschema -swagger "$k8s/api/openapi-spec/swagger.json" "${crdargs[@]}" -out "$tmp"
  mv -T "$tmp" "$schemas" 2>/dev/null || rm -rf "$tmp"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chart=deploy/helm/voxgate
validate() {
  "$kubeconform" -strict -summary -kubernetes-version "$KUBE_VERSION" \
    -schema-location "$schemas/{{ .ResourceKind }}{{ .KindSuffix }}.json" "$@"
}
# expect FILE PATTERN WHAT: the rendered manifests say what they must.
expect() {
  grep -qE "$2" "$1" || { echo "deploy-check: $(basename "$1"): $3 (no match for $2)" >&2; exit 1; }
}

"$helm" lint --strict "$chart" --kube-version "$KUBE_VERSION" --set secrets.databaseURL=postgres://voxgate@db/voxgate
"$helm" lint --strict "$chart" --kube-version "$KUBE_VERSION" -f "$chart/ci/production-values.yaml"
"$helm" template voxgate "$chart" --kube-version "$KUBE_VERSION" \
  --set secrets.databaseURL=postgres://voxgate@db/voxgate >"$work/default.yaml"
"$helm" template voxgate "$chart" --kube-version "$KUBE_VERSION" --namespace ai \
  -f "$chart/ci/production-values.yaml" >"$work/production.yaml"
validate "$work/default.yaml" "$work/production.yaml"

# shutdown_timeout + 2 s + the margin: 25+2+5 and 40+2+10.
expect "$work/default.yaml" 'terminationGracePeriodSeconds: 32$' "the grace period does not follow the shutdown"
expect "$work/production.yaml" 'terminationGracePeriodSeconds: 52$' "the grace period does not follow the shutdown"
for k in StatefulSet PodDisruptionBudget Secret ConfigMap; do
  expect "$work/default.yaml" "^kind: $k\$" "no $k"
done
for k in HorizontalPodAutoscaler ServiceMonitor PrometheusRule; do
  expect "$work/production.yaml" "^kind: $k\$" "no $k"
done
expect "$work/default.yaml" 'volumeClaimTemplates:' "no per-replica spool volume"
expect "$work/production.yaml" 'protocol: UDP' "no relay UDP port"
if grep -q '^kind: Secret$' "$work/production.yaml"; then
  echo "deploy-check: production.yaml: a Secret rendered though existingSecret is set" >&2
  exit 1
fi

# The schemas must refuse what Kubernetes refuses: a misspelt field.
sed 's/^  serviceName:/  serviceNmae:/' "$work/default.yaml" >"$work/typo.yaml"
if validate "$work/typo.yaml" >"$work/typo.out" 2>&1; then
  echo "deploy-check: kubeconform accepted a StatefulSet with a misspelt field; the schemas do not bite" >&2
  exit 1
fi
# Without the database URL the chart says so rather than render a pod that cannot start.
if "$helm" template voxgate "$chart" --kube-version "$KUBE_VERSION" >"$work/none.out" 2>&1 ||
  ! grep -q 'secrets.databaseURL' "$work/none.out"; then
  echo "deploy-check: the chart rendered with no database URL and no existing Secret" >&2
  exit 1
fi

"$promtool" check rules deploy/prometheus/alerts.yaml
# The chart's PrometheusRule renders the same rules: its copy is the file,
# and the rendered spec passes promtool as it is.
cmp deploy/prometheus/alerts.yaml "$chart/files/alerts.yaml" ||
  { echo "deploy-check: $chart/files/alerts.yaml differs from deploy/prometheus/alerts.yaml; copy it over" >&2; exit 1; }
"$helm" template voxgate "$chart" --kube-version "$KUBE_VERSION" -f "$chart/ci/production-values.yaml" \
  --show-only templates/prometheusrule.yaml | awk '/^spec:$/{on=1; next} on{sub(/^  /, ""); print}' >"$work/rendered-rules.yaml"
"$promtool" check rules "$work/rendered-rules.yaml"
"$promtool" test rules deploy/prometheus/alerts_test.yaml
cp deploy/compose/prometheus.yml deploy/prometheus/alerts.yaml "$work/"
"$promtool" check config "$work/prometheus.yml"

# The compose file, as docker compose reads it (no engine runs here).
composecheck="$tools/composecheck-$(cat deploy/composecheck/go.sum deploy/composecheck/main.go | sha256sum | cut -c1-12)"
if [ ! -x "$composecheck" ]; then
  (cd deploy/composecheck && $GO build -buildvcs=false -o "$composecheck" .) || skip_or_fail "cannot build deploy/composecheck"
fi
"$composecheck" deploy/compose.yaml
# Beside the real one, so its relative bind mounts resolve.
trap 'rm -rf "$work" deploy/.compose-typo.yaml' EXIT
sed 's/^    stop_grace_period:/    stop_grace_periode:/' deploy/compose.yaml >deploy/.compose-typo.yaml
if "$composecheck" deploy/.compose-typo.yaml >"$work/compose-typo.out" 2>&1 ||
  ! grep -q stop_grace_periode "$work/compose-typo.out"; then
  echo "deploy-check: compose-go accepted a misspelt key; the check does not bite" >&2
  exit 1
fi

# Each rendered voxgate.yaml, through the binary's own loader.
mkdir -p "$work/configs"
for v in default production; do
  awk '/^  voxgate.yaml: \|/{on=1; next} on && /^[^ ]/{on=0} on && /^---/{on=0} on{sub(/^    /, ""); print}' \
    "$work/$v.yaml" >"$work/configs/$v.yaml"
  [ -s "$work/configs/$v.yaml" ] || { echo "deploy-check: no voxgate.yaml in the $v ConfigMap" >&2; exit 1; }
done
VOXGATE_DEPLOY_CONFIGS="$work/configs" $GO test -count=1 -run '^TestDeployConfigsLoad$' ./cmd/voxgate/
echo "deploy-check: ok"
