{{/*
Names
*/}}

{{- define "uptime.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Fully qualified app name, truncated to 63 characters (DNS label limit).
If the release name already contains the chart name it is not repeated.
*/}}
{{- define "uptime.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Name of a per-component object: <fullname>-<component>. Call with (dict "root" $ "component" "checker"). */}}
{{- define "uptime.componentName" -}}
{{- printf "%s-%s" (include "uptime.fullname" .root) .component | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "uptime.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The six services. Maps the component (= binary) name to the key of its
section in values.yaml. Every service serves /healthz, /readyz and /metrics
on its "ops" port (UPTIME_OPS__LISTEN); the public ones also serve on their
"http" port: the api-gateway the API (UPTIME_HTTP__LISTEN), status-pages
the status pages and badges (UPTIME_STATUS_PAGES__LISTEN).
*/}}
{{- define "uptime.components" -}}
api-gateway: {values: apiGateway, public: true}
scheduler: {values: scheduler, public: false}
checker: {values: checker, public: false}
recorder: {values: recorder, public: false}
notifier: {values: notifier, public: false}
status-pages: {values: statusPages, public: true}
{{- end }}

{{/*
The checker's Deployments, one per entry of checker.regions, as a YAML list
of {name, region, svc}: svc is the checker section with the entry's own
values (replicas, autoscaling, resources, ...) merged over it. Region
"default" keeps the name "checker" (the Deployment, HPA and PDB of installs
from before regions) and no UPTIME_CHECKER__REGION (its default); any other
region r is "checker-r". Every region must be listed in regions.known.
*/}}
{{- define "uptime.checkerInstances" -}}
{{- $base := .Values.checker }}
{{- $out := list }}
{{- $seen := dict }}
{{- range $r := $base.regions }}
{{- if hasKey $seen $r.name }}
{{- fail (printf "checker.regions: region %q is listed twice" $r.name) }}
{{- end }}
{{- $_ := set $seen $r.name true }}
{{- if not (has $r.name $.Values.regions.known) }}
{{- fail (printf "checker.regions: region %q is not in regions.known %v" $r.name $.Values.regions.known) }}
{{- end }}
{{- $isDefault := eq $r.name "default" }}
{{- $svc := mergeOverwrite (deepCopy (omit $base "regions")) (omit $r "name") }}
{{- $out = append $out (dict "name" (ternary "checker" (printf "checker-%s" $r.name) $isDefault) "region" (ternary "" $r.name $isDefault) "svc" $svc) }}
{{- end }}
{{- toYaml $out }}
{{- end }}

{{/*
Labels
*/}}

{{- define "uptime.labels" -}}
helm.sh/chart: {{ include "uptime.chart" .root }}
{{ include "uptime.selectorLabels" . }}
app.kubernetes.io/version: {{ (.root.Values.image.tag | default .root.Chart.AppVersion) | toString | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: uptime
{{- with .root.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Selector labels; "component" may be empty for chart-wide objects. */}}
{{- define "uptime.selectorLabels" -}}
app.kubernetes.io/name: {{ include "uptime.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
{{- end }}

{{/*
ServiceAccounts
*/}}

{{- define "uptime.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "uptime.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
The migration hook runs before the release's normal objects exist, so when
the chart creates the ServiceAccount the hook gets its own copy.
*/}}
{{- define "uptime.migrationServiceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- include "uptime.componentName" (dict "root" . "component" "migrate") }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
Image
*/}}

{{- /* repository@digest when image.digest is set (the tag is then only a
label for people), repository:tag otherwise. */}}
{{- define "uptime.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion | toString) }}
{{- end }}
{{- end }}

{{/*
Volumes every pod of the services gets besides its /tmp: the NATS
credentials (nats.credentials.existingSecret), then extraVolumes (chart-wide)
and the service's own extraVolumes. "uptime.volumeMounts" mounts them. Takes
(dict "root" $ "svc" $svc).
*/}}
{{- define "uptime.volumes" -}}
{{- with .root.Values.nats.credentials.existingSecret }}
- name: nats-credentials
  secret:
    secretName: {{ . }}
    items:
      - key: {{ $.root.Values.nats.credentials.key }}
        path: nats.creds
{{- end }}
{{- with .root.Values.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- with .svc.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "uptime.volumeMounts" -}}
{{- if .root.Values.nats.credentials.existingSecret }}
- name: nats-credentials
  mountPath: /etc/uptime/nats
  readOnly: true
{{- end }}
{{- with .root.Values.extraVolumeMounts }}
{{ toYaml . }}
{{- end }}
{{- with .svc.extraVolumeMounts }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* UPTIME_NATS__CREDENTIALS_FILE when a credentials Secret is given. */}}
{{- define "uptime.natsEnv" -}}
{{- if .Values.nats.credentials.existingSecret }}
- name: UPTIME_NATS__CREDENTIALS_FILE
  value: /etc/uptime/nats/nats.creds
{{- end }}
{{- end }}

{{/*
Secrets
*/}}

{{/* The Secret the services read: the existing one, or the chart's own. */}}
{{- define "uptime.secretName" -}}
{{- if .Values.secrets.existingSecret }}
{{- .Values.secrets.existingSecret }}
{{- else }}
{{- include "uptime.fullname" . }}
{{- end }}
{{- end }}

{{/* The Secret the migration hook reads (hooks run before the chart's Secret exists). */}}
{{- define "uptime.migrationSecretName" -}}
{{- if .Values.secrets.existingSecret }}
{{- .Values.secrets.existingSecret }}
{{- else }}
{{- include "uptime.componentName" (dict "root" . "component" "migrate") }}
{{- end }}
{{- end }}

{{/*
Secret env entries. Call with (dict "secretName" NAME "root" $ "smtp" BOOL
"sealing" BOOL "ackLinks" BOOL). UPTIME_SMTP__PASSWORD is optional: absent
from the Secret = no SMTP auth. "sealing" adds the keys basic-auth passwords
and alert contacts' provider credentials are sealed with
(UPTIME_SECRETS__KEYS__<ID>: the config crate lowercases the id back).
"ackLinks" adds the key alerts' acknowledge links are signed with; optional
in an existing Secret (absent: alerts carry no link, as before the chart
made one), always present in the chart's own.
*/}}
{{- define "uptime.secretEnv" -}}
- name: UPTIME_DATABASE__URL
  valueFrom:
    secretKeyRef:
      name: {{ .secretName }}
      key: {{ .root.Values.secrets.databaseUrlKey }}
{{- if .smtp }}
- name: UPTIME_SMTP__PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ .secretName }}
      key: {{ .root.Values.secrets.smtpPasswordKey }}
      optional: true
{{- end }}
{{- if .sealing }}
- name: UPTIME_SECRETS__CURRENT_KEY_ID
  value: {{ .root.Values.secrets.sealingCurrentKeyId | quote }}
{{- range .root.Values.secrets.sealingKeyIds }}
- name: UPTIME_SECRETS__KEYS__{{ upper . }}
  valueFrom:
    secretKeyRef:
      name: {{ $.secretName }}
      key: {{ printf "sealing-key-%s" . }}
{{- end }}
{{- end }}
{{- if .ackLinks }}
- name: UPTIME_ACK_LINKS__SECRET
  valueFrom:
    secretKeyRef:
      name: {{ .secretName }}
      key: {{ .root.Values.secrets.ackLinksSecretKey }}
      {{- if .root.Values.secrets.existingSecret }}
      optional: true
      {{- end }}
{{- end }}
{{- end }}

{{/*
Non-secret configuration as a flat map of UPTIME_* variables. Rendered into
the ConfigMap, and inline into the migration hook (which runs before the
ConfigMap exists). Optional strings are left out when empty so that the
services' own defaults apply.
*/}}
{{- define "uptime.configData" -}}
UPTIME_DATABASE__MAX_CONNECTIONS: {{ .Values.database.maxConnections | quote }}
UPTIME_NATS__URL: {{ .Values.nats.url | quote }}
UPTIME_NATS__STREAM_REPLICAS: {{ .Values.nats.streamReplicas | quote }}
{{- /* int64: YAML numbers are floats to Helm, and 4294967296 would print as 4.294967296e+09. */}}
{{- with .Values.nats.streams }}
UPTIME_NATS__STREAMS__CHECKS_MAX_AGE_SECS: {{ .checksMaxAgeSecs | int64 | quote }}
UPTIME_NATS__STREAMS__CHECKS_MAX_BYTES: {{ .checksMaxBytes | int64 | quote }}
UPTIME_NATS__STREAMS__RESULTS_MAX_AGE_SECS: {{ .resultsMaxAgeSecs | int64 | quote }}
UPTIME_NATS__STREAMS__RESULTS_MAX_BYTES: {{ .resultsMaxBytes | int64 | quote }}
UPTIME_NATS__STREAMS__MONITORS_MAX_AGE_SECS: {{ .monitorsMaxAgeSecs | int64 | quote }}
UPTIME_NATS__STREAMS__MONITORS_MAX_BYTES: {{ .monitorsMaxBytes | int64 | quote }}
UPTIME_NATS__STREAMS__EVENTS_MAX_AGE_SECS: {{ .eventsMaxAgeSecs | int64 | quote }}
UPTIME_NATS__STREAMS__EVENTS_MAX_BYTES: {{ .eventsMaxBytes | int64 | quote }}
UPTIME_NATS__STREAMS__DEAD_MAX_AGE_SECS: {{ .deadMaxAgeSecs | int64 | quote }}
UPTIME_NATS__STREAMS__DEAD_MAX_BYTES: {{ .deadMaxBytes | int64 | quote }}
{{- end }}
{{- with .Values.retention }}
UPTIME_RETENTION__RESULTS_DAYS: {{ .resultsDays | int64 | quote }}
UPTIME_RETENTION__ROLLUPS_DAYS: {{ .rollupsDays | int64 | quote }}
UPTIME_RETENTION__DELIVERIES_DAYS: {{ .deliveriesDays | int64 | quote }}
UPTIME_RETENTION__OUTBOX_HOURS: {{ .outboxHours | int64 | quote }}
UPTIME_RETENTION__VERIFICATION_TOKEN_HOURS: {{ .verificationTokenHours | int64 | quote }}
UPTIME_RETENTION__REVOKED_API_KEYS_DAYS: {{ .revokedApiKeysDays | int64 | quote }}
UPTIME_RETENTION__INTERVAL_SECS: {{ .intervalSecs | int64 | quote }}
UPTIME_RETENTION__BATCH_SIZE: {{ .batchSize | int64 | quote }}
{{- end }}
UPTIME_TELEMETRY__LOG_LEVEL: {{ .Values.telemetry.logLevel | quote }}
UPTIME_TELEMETRY__LOG_FORMAT: {{ .Values.telemetry.logFormat | quote }}
{{- with .Values.telemetry.otlpEndpoint }}
UPTIME_TELEMETRY__OTLP_ENDPOINT: {{ . | quote }}
{{- end }}
UPTIME_SAFETY__ALLOW_PRIVATE_TARGETS: {{ .Values.safety.allowPrivateTargets | quote }}
{{- with .Values.http.publicBaseUrl }}
UPTIME_HTTP__PUBLIC_BASE_URL: {{ . | quote }}
{{- /* The acknowledge links the notifier writes into alerts lead to the API. */}}
UPTIME_ACK_LINKS__PUBLIC_BASE_URL: {{ . | quote }}
{{- end }}
{{- with .Values.scheduler }}
UPTIME_SCHEDULER__SHARDS: {{ .shards | int64 | quote }}
UPTIME_SCHEDULER__LEASE_TTL_SECS: {{ .leaseTtlSecs | int64 | quote }}
UPTIME_SCHEDULER__LEASE_RETRY_SECS: {{ .leaseRetrySecs | int64 | quote }}
UPTIME_SCHEDULER__RESUME_MAX_GAP_SECS: {{ .resumeMaxGapSecs | int64 | quote }}
{{- if hasKey . "configCacheBytes" }}
UPTIME_SCHEDULER__CONFIG_CACHE_BYTES: {{ .configCacheBytes | int64 | quote }}
{{- end }}
{{- end }}
UPTIME_CHECKER__CONCURRENCY: {{ .Values.checker.concurrency | quote }}
{{- with .Values.statusPages }}
UPTIME_STATUS_PAGES__REFRESH_MS: {{ .refreshMs | int64 | quote }}
UPTIME_STATUS_PAGES__RATE_LIMIT_PER_SECOND: {{ .rateLimitPerSecond | int64 | quote }}
UPTIME_STATUS_PAGES__RATE_LIMIT_BURST: {{ .rateLimitBurst | int64 | quote }}
UPTIME_STATUS_PAGES__TRUST_FORWARDED_FOR: {{ .trustForwardedFor | quote }}
UPTIME_STATUS_PAGES__PUBLIC_BASE_URL: {{ .publicBaseUrl | quote }}
{{- end }}
{{- with .Values.checker.dnsTenantResolvers }}
UPTIME_CHECKER__DNS__TENANT_RESOLVERS: {{ join "," . | quote }}
{{- end }}
{{- with .Values.regions }}
UPTIME_REGIONS__KNOWN: {{ join "," .known | quote }}
UPTIME_REGIONS__DEFAULT: {{ join "," .default | quote }}
UPTIME_REGIONS__PRESENCE_TTL_SECS: {{ .presenceTtlSecs | int64 | quote }}
{{- end }}
{{- with .Values.smtp.host }}
UPTIME_SMTP__HOST: {{ . | quote }}
{{- end }}
UPTIME_SMTP__PORT: {{ .Values.smtp.port | quote }}
UPTIME_SMTP__TLS: {{ .Values.smtp.tls | quote }}
{{- with .Values.smtp.username }}
UPTIME_SMTP__USERNAME: {{ . | quote }}
{{- end }}
{{- with .Values.smtp.from }}
UPTIME_SMTP__FROM: {{ . | quote }}
{{- end }}
{{- range $key, $value := .Values.extraConfig }}
{{ $key }}: {{ $value | toString | quote }}
{{- end }}
{{- end }}

{{/* Checksums that roll the pods when their configuration changes. */}}
{{- define "uptime.checksums" -}}
checksum/config: {{ include "uptime.configData" . | sha256sum }}
{{- if not .Values.secrets.existingSecret }}
checksum/secret: {{ include (print .Template.BasePath "/secret.yaml") . | sha256sum }}
{{- end }}
{{- end }}

{{/* Egress every service needs: DNS, PostgreSQL and NATS (networkpolicy.yaml). */}}
{{- define "uptime.networkPolicy.baseEgress" -}}
{{- $np := .Values.networkPolicy }}
- ports:
    - {port: 53, protocol: UDP}
    - {port: 53, protocol: TCP}
  {{- with $np.dns.peers }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
- ports:
    - {port: {{ $np.database.port }}, protocol: TCP}
  {{- with $np.database.peers }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
- ports:
    - {port: {{ $np.nats.port }}, protocol: TCP}
  {{- with $np.nats.peers }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
