{{/*
Naming and labels follow NVIDIA's gpu-operator chart so that selectors and `kubectl get -l`
commands written against the real chart work against this stand-in.
*/}}
{{- define "gpu-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "gpu-operator.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "gpu-operator.labels" -}}
app.kubernetes.io/name: {{ include "gpu-operator.name" . }}
helm.sh/chart: {{ include "gpu-operator.chart" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- if .Chart.AppVersion }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.operator.labels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "gpu-operator.operand-labels" -}}
helm.sh/chart: {{ include "gpu-operator.chart" . }}
app.kubernetes.io/managed-by: {{ include "gpu-operator.name" . }}
{{- with .Values.daemonsets.labels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "gpu-operator.fullimage" -}}
{{- .Values.operator.repository -}}/{{- .Values.operator.image -}}:{{- .Values.operator.version | default .Chart.AppVersion -}}
{{- end -}}

{{/*
The image fields every operand of the ClusterPolicy shares. Called with a dict holding the
component's values as "c"; prints nothing for an empty field, as NVIDIA's template does.
*/}}
{{- define "gpu-operator.operand-image" -}}
{{- with .c.repository }}
repository: {{ . }}
{{- end }}
{{- with .c.image }}
image: {{ . }}
{{- end }}
{{- with .c.version }}
version: {{ . | quote }}
{{- end }}
{{- with .c.imagePullPolicy }}
imagePullPolicy: {{ . }}
{{- end }}
{{- with .c.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .c.resources }}
resources:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .c.env }}
env:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .c.args }}
args:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
