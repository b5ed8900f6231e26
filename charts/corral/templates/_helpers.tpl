{{- define "corral.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- /* The install's own labels (the same as kustomize's) and Helm's standard ones. */}}
{{- define "corral.labels" -}}
app.kubernetes.io/name: corral-operator
app.kubernetes.io/part-of: corral
{{ include "corral.helmLabels" . }}
{{- end -}}

{{- define "corral.helmLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
{{- end -}}

{{- /* A file of files/ as an object, its labels merged with the chart's. */}}
{{- define "corral.fromFile" -}}
{{- $obj := .root.Files.Get .path | fromYaml }}
{{- $labels := merge ($obj.metadata.labels | default dict) (include "corral.labels" .root | fromYaml) }}
{{- $_ := set $obj.metadata "labels" $labels }}
{{- toYaml $obj }}
{{- end -}}

{{- define "corral.webhookSecret" -}}
{{- if .Values.webhook.certManager.enabled }}corral-webhook-cert{{ else }}corral-webhook-tls{{ end }}
{{- end -}}

{{- /* A Namespace this release owns: releases of charts up to 0.1.0 rendered one (value
createNamespace) and ran the operator there, with the release itself often in another namespace
(`helm install` without -n). "" if none, and always under `helm template` (no cluster). */}}
{{- define "corral.ownedNamespace" -}}
{{- range (lookup "v1" "Namespace" "" "").items }}
{{- $a := .metadata.annotations | default dict }}
{{- if and (eq (get $a "meta.helm.sh/release-name") $.Release.Name) (eq (get $a "meta.helm.sh/release-namespace") $.Release.Namespace) }}
{{- .metadata.name }}
{{- end }}
{{- end }}
{{- end -}}

{{- /* Where the operator's objects go: the value `namespace`, else a Namespace this release
already owns (so upgrading a 0.1.0 release moves nothing), else the release's namespace. */}}
{{- define "corral.namespace" -}}
{{- .Values.namespace | default (include "corral.ownedNamespace" .) | default .Release.Namespace }}
{{- end -}}
