{{- define "corral.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- define "corral.labels" -}}
app.kubernetes.io/name: corral-operator
app.kubernetes.io/part-of: corral
{{- end -}}
