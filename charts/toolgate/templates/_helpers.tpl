{{/* Names: the usual chart conventions, truncated to the 63 characters labels allow. */}}
{{- define "toolgate.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "toolgate.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "toolgate.webhookName" -}}
{{- printf "%s-injector" (include "toolgate.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "toolgate.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "toolgate.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "toolgate.selectorLabels" -}}
app.kubernetes.io/name: {{ include "toolgate.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: injector
{{- end -}}

{{/* repository:tag or repository@digest. Call with (dict "image" $image "fallback" .Values.image "chart" .Chart). */}}
{{- define "toolgate.imageRef" -}}
{{- $repo := default .fallback.repository .image.repository -}}
{{- $digest := default .fallback.digest .image.digest -}}
{{- if $digest -}}
{{- printf "%s@%s" $repo $digest -}}
{{- else -}}
{{- printf "%s:%s" $repo (default .chart.AppVersion (default .fallback.tag .image.tag)) -}}
{{- end -}}
{{- end -}}

{{/*
The hardened container securityContext. The webhook container uses it here;
the injector applies the same settings to every sidecar (src/inject/sidecar.ts),
so both kinds of toolgate container run alike.
*/}}
{{- define "toolgate.containerSecurityContext" -}}
runAsNonRoot: true
readOnlyRootFilesystem: true
allowPrivilegeEscalation: false
privileged: false
capabilities:
  drop: [ALL]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "toolgate.podSecurityContext" -}}
runAsNonRoot: true
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* TOOLGATE_REDIS_* variables for the sidecars, from .Values.redis. */}}
{{- define "toolgate.redisEnv" -}}
{{- $r := .Values.redis -}}
{{- $env := list (dict "name" "TOOLGATE_REDIS_MODE" "value" $r.mode) -}}
{{- $scheme := ternary "rediss" "redis" $r.tls.enabled -}}
{{- if eq $r.mode "standalone" -}}
{{- $env = append $env (dict "name" "TOOLGATE_REDIS_URL" "value" (printf "%s://%s:%d/%d" $scheme $r.standalone.host (int $r.standalone.port) (int $r.standalone.db))) -}}
{{- else if eq $r.mode "sentinel" -}}
{{- $env = append $env (dict "name" "TOOLGATE_REDIS_SENTINELS" "value" (join "," $r.sentinel.nodes)) -}}
{{- $env = append $env (dict "name" "TOOLGATE_REDIS_SENTINEL_MASTER" "value" $r.sentinel.masterName) -}}
{{- $env = append $env (dict "name" "TOOLGATE_REDIS_DB" "value" (toString (int $r.sentinel.db))) -}}
{{- else -}}
{{- $env = append $env (dict "name" "TOOLGATE_REDIS_CLUSTER_NODES" "value" (join "," $r.cluster.nodes)) -}}
{{- end -}}
{{- $env = append $env (dict "name" "TOOLGATE_REDIS_KEY_PREFIX" "value" $r.keyPrefix) -}}
{{- if $r.tls.enabled -}}
{{- $env = append $env (dict "name" "TOOLGATE_REDIS_TLS" "value" "true") -}}
{{- if $r.tls.serverName -}}
{{- $env = append $env (dict "name" "TOOLGATE_REDIS_TLS_SERVER_NAME" "value" $r.tls.serverName) -}}
{{- end -}}
{{- if $r.tls.caSecret.name -}}
{{- $env = append $env (dict "name" "TOOLGATE_REDIS_TLS_CA_FILE" "value" (printf "/etc/toolgate/redis-ca/%s" $r.tls.caSecret.key)) -}}
{{- end -}}
{{- end -}}
{{- if $r.auth.username -}}
{{- $env = append $env (dict "name" "TOOLGATE_REDIS_USERNAME" "value" $r.auth.username) -}}
{{- end -}}
{{- if $r.auth.existingSecret -}}
{{- $env = append $env (dict "name" "TOOLGATE_REDIS_PASSWORD" "valueFrom" (dict "secretKeyRef" (dict "name" $r.auth.existingSecret "key" $r.auth.passwordKey))) -}}
{{- end -}}
{{- toYaml $env -}}
{{- end -}}

{{/* The injector's config.yaml (parsed by src/inject/config.ts): what every injected sidecar looks like. */}}
{{- define "toolgate.injectorConfig" -}}
{{- $s := .Values.sidecar -}}
{{- $env := list -}}
{{- if .Values.redis.enabled -}}
{{- $env = fromYamlArray (include "toolgate.redisEnv" .) -}}
{{- end -}}
{{- range $s.extraEnv -}}
{{- $env = append $env . -}}
{{- end -}}
{{- $volumes := list -}}
{{- $mounts := list -}}
{{- if and .Values.redis.enabled .Values.redis.tls.enabled .Values.redis.tls.caSecret.name -}}
{{- $volumes = append $volumes (dict "name" "toolgate-redis-ca" "secret" (dict "secretName" .Values.redis.tls.caSecret.name "items" (list (dict "key" .Values.redis.tls.caSecret.key "path" .Values.redis.tls.caSecret.key)))) -}}
{{- $mounts = append $mounts (dict "name" "toolgate-redis-ca" "mountPath" "/etc/toolgate/redis-ca" "readOnly" true) -}}
{{- end -}}
{{- $a := .Values.approvals -}}
{{- if $a.enabled -}}
{{- $env = append $env (dict "name" "TOOLGATE_APPROVAL_PORT" "value" (toString $a.port)) -}}
{{- with $a.publicUrl }}{{ $env = append $env (dict "name" "TOOLGATE_APPROVAL_PUBLIC_URL" "value" .) }}{{ end -}}
{{- with $a.trustedHeader }}{{ $env = append $env (dict "name" "TOOLGATE_APPROVAL_TRUSTED_HEADER" "value" .) }}{{ end -}}
{{- with $a.trustedScopesHeader }}{{ $env = append $env (dict "name" "TOOLGATE_APPROVAL_TRUSTED_SCOPES_HEADER" "value" .) }}{{ end -}}
{{- if $a.secret.name -}}
{{- $volumes = append $volumes (dict "name" "toolgate-approval-key" "secret" (dict "secretName" $a.secret.name "items" (list (dict "key" $a.secret.key "path" "approval.key")))) -}}
{{- $mounts = append $mounts (dict "name" "toolgate-approval-key" "mountPath" "/etc/toolgate/approval" "readOnly" true) -}}
{{- $env = append $env (dict "name" "TOOLGATE_APPROVAL_SECRET_FILE" "value" "/etc/toolgate/approval/approval.key") -}}
{{- end -}}
{{- if $a.webhook.url -}}
{{- if not $a.webhook.secret.name -}}{{- fail "approvals.webhook.url needs approvals.webhook.secret.name (the webhook is always signed)" -}}{{- end -}}
{{- $volumes = append $volumes (dict "name" "toolgate-approval-webhook" "secret" (dict "secretName" $a.webhook.secret.name "items" (list (dict "key" $a.webhook.secret.key "path" "webhook.key")))) -}}
{{- $mounts = append $mounts (dict "name" "toolgate-approval-webhook" "mountPath" "/etc/toolgate/approval-webhook" "readOnly" true) -}}
{{- $env = append $env (dict "name" "TOOLGATE_APPROVAL_WEBHOOK_URL" "value" $a.webhook.url) -}}
{{- $env = append $env (dict "name" "TOOLGATE_APPROVAL_WEBHOOK_SECRET_FILE" "value" "/etc/toolgate/approval-webhook/webhook.key") -}}
{{- end -}}
{{- end -}}
{{- $config := dict
  "image" (include "toolgate.imageRef" (dict "image" $s.image "fallback" .Values.image "chart" .Chart))
  "imagePullPolicy" (default .Values.image.pullPolicy $s.image.pullPolicy)
  "sidecarMode" $s.mode
  "proxyPort" $s.proxyPort
  "adminPort" $s.adminPort
  "portName" $s.portName
  "resources" $s.resources
  "env" $env
  "volumes" $volumes
  "volumeMounts" $mounts -}}
{{- if $s.redirect.enabled -}}
{{- $_ := set $config "redirect" (dict "image" $s.redirect.image "imagePullPolicy" $s.redirect.pullPolicy) -}}
{{- end -}}
{{- toYaml $config -}}
{{- end -}}

{{/* Native sidecars (init containers with restartPolicy Always) are on by default from Kubernetes 1.29. */}}
{{- define "toolgate.checkSidecarMode" -}}
{{- if and (eq .Values.sidecar.mode "native") (semverCompare "<1.29.0-0" .Capabilities.KubeVersion.Version) -}}
{{- fail (printf "sidecar.mode=native needs Kubernetes 1.29 or later (native sidecar containers); this cluster is %s: set sidecar.mode=plain" .Capabilities.KubeVersion.Version) -}}
{{- end -}}
{{- end -}}

{{/*
An operator's kind can only be installed where its CRD is served; without this check Helm's own error
names the kind ("no matches for kind PodMonitor") but not the value that asked for it. Only a live
server's capabilities can tell: offline (helm template, helm lint) they are client-go's built-in list,
which lacks the aggregator's APIService that every real API server serves, and the object is rendered.
Arguments: (list $ "monitoring.coreos.com/v1/PodMonitor" "metrics.podMonitor.enabled=false" "prometheus-operator").
*/}}
{{- define "toolgate.requireKind" -}}
{{- $ctx := index . 0 -}}{{- $kind := index . 1 -}}{{- $instead := index . 2 -}}{{- $operator := index . 3 -}}
{{- $live := $ctx.Capabilities.APIVersions.Has "apiregistration.k8s.io/v1/APIService" -}}
{{- if and $live (not ($ctx.Capabilities.APIVersions.Has $kind)) -}}
{{- fail (printf "this cluster does not serve %s: install the %s CRDs first, or set %s" $kind $operator $instead) -}}
{{- end -}}
{{- end -}}

{{/* The host of webhook.url, as the serving certificate must name it: (dict "ip" bool "host" string), or an empty host. */}}
{{- define "toolgate.webhookUrlHost" -}}
{{- with .Values.webhook.url -}}
{{- $host := (urlParse .).hostname -}}
{{- toJson (dict "host" $host "ip" (regexMatch "^[0-9.]+$|:" $host)) -}}
{{- else -}}
{{- toJson (dict "host" "" "ip" false) -}}
{{- end -}}
{{- end -}}
