{{- define "voxgate.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "voxgate.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "voxgate.selectorLabels" -}}
app.kubernetes.io/name: {{ include "voxgate.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "voxgate.labels" -}}
{{ include "voxgate.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "voxgate.secretName" -}}
{{- .Values.secrets.existingSecret | default (include "voxgate.fullname" .) -}}
{{- end -}}

{{/* seconds parses a Go duration of whole seconds ("25s", "1m30s", "2m"). */}}
{{- define "voxgate.seconds" -}}
{{- $d := . -}}
{{- $m := 0 -}}
{{- if contains "m" $d -}}
{{- $parts := splitList "m" $d -}}
{{- $m = index $parts 0 | atoi -}}
{{- $d = index $parts 1 -}}
{{- end -}}
{{- add (mul $m 60) ($d | trimSuffix "s" | atoi) -}}
{{- end -}}

{{/* The gateway's voxgate.yaml: the user's config with the chart's own keys set. */}}
{{- define "voxgate.config" -}}
{{- $c := deepCopy .Values.config -}}
{{- $server := dict "addr" ":8080" "metrics_addr" (printf ":%d" (int .Values.metrics.port)) "drain_delay" .Values.shutdown.drainDelay "shutdown_timeout" .Values.shutdown.shutdownTimeout -}}
{{- $_ := set $c "server" (merge $server (get $c "server" | default dict)) -}}
{{- $db := merge (dict "spool_dir" "/var/lib/voxgate/spool") (get $c "database" | default dict) -}}
{{- $_ := set $db "spool_dir" "/var/lib/voxgate/spool" -}}
{{- $_ := set $c "database" $db -}}
{{- if .Values.relay.enabled -}}
{{- $voice := get $c "voice" | default dict -}}
{{- $relay := get $voice "relay" | default dict -}}
{{- $_ := set $relay "udp_addr" (printf "0.0.0.0:%d" (int .Values.relay.udpPort)) -}}
{{- $_ := set $relay "tcp_addr" (printf ":%d" (int .Values.relay.tcpPort)) -}}
{{- if .Values.relay.publicIPs -}}
{{- $_ := set $relay "public_ips" .Values.relay.publicIPs -}}
{{- end -}}
{{- $_ := set $voice "relay" $relay -}}
{{- $_ := set $c "voice" $voice -}}
{{- end -}}
{{- toYaml $c -}}
{{- end -}}
