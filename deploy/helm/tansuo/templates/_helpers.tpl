{{/*
Chart name, cut to 63 characters: Kubernetes names and label values are DNS labels
(RFC 1123), and those end at 63.
*/}}
{{- define "tansuo.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Fully qualified app name, the prefix of every resource. Cut to 63 characters for the
DNS-label limit, and the release name alone when it already contains the chart name
("tansuo" rather than "tansuo-tansuo").
*/}}
{{- define "tansuo.fullname" -}}
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

{{/*
A component's name: "<fullname>-<component>". The fullname is cut first so that the
suffix always survives: two components must never end up with the same name.
*/}}
{{- define "tansuo.componentName" -}}
{{- $suffix := index . 1 }}
{{- printf "%s-%s" (include "tansuo.fullname" (index . 0) | trunc (int (sub 62 (len $suffix))) | trimSuffix "-") $suffix }}
{{- end }}

{{- define "tansuo.scheduler.fullname" -}}{{ include "tansuo.componentName" (list . "scheduler") }}{{- end }}
{{- define "tansuo.crawler.fullname" -}}{{ include "tansuo.componentName" (list . "crawler") }}{{- end }}
{{- define "tansuo.extractor.fullname" -}}{{ include "tansuo.componentName" (list . "extractor") }}{{- end }}
{{- define "tansuo.indexer.fullname" -}}{{ include "tansuo.componentName" (list . "indexer") }}{{- end }}
{{- define "tansuo.ranker.fullname" -}}{{ include "tansuo.componentName" (list . "ranker") }}{{- end }}
{{- define "tansuo.api.fullname" -}}{{ include "tansuo.componentName" (list . "api") }}{{- end }}
{{- define "tansuo.celeryWorker.fullname" -}}{{ include "tansuo.componentName" (list . "celery-worker") }}{{- end }}
{{- define "tansuo.celeryBeat.fullname" -}}{{ include "tansuo.componentName" (list . "celery-beat") }}{{- end }}

{{/*
Chart label value: "name-version", with "+" (allowed in SemVer build metadata, not in
label values) replaced.
*/}}
{{- define "tansuo.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Labels on every resource.
*/}}
{{- define "tansuo.labels" -}}
helm.sh/chart: {{ include "tansuo.chart" . }}
{{ include "tansuo.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: tansuo
{{- end }}

{{/*
Selector labels of the whole release. They never change after install: a Deployment's
selector is immutable, so adding a label here would break `helm upgrade`.
*/}}
{{- define "tansuo.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tansuo.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
Labels and selector labels of one component; called with (list $ "crawler").
*/}}
{{- define "tansuo.componentLabels" -}}
{{ include "tansuo.labels" (index . 0) }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end }}

{{- define "tansuo.componentSelectorLabels" -}}
{{ include "tansuo.selectorLabels" (index . 0) }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end }}

{{/*
Service account the pods run as.
*/}}
{{- define "tansuo.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "tansuo.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
The Secret holding credentials: the user's own, or the one this chart creates.
*/}}
{{- define "tansuo.secretName" -}}
{{- default (include "tansuo.fullname" .) .Values.secrets.existingSecret }}
{{- end }}

{{- define "tansuo.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{/*
Percent-encoding for a value placed inside a URL's user-info: urlquery escapes every
reserved character and turns a space into "+", which URL parsers read as a literal
plus there, so spaces become %20 instead.
*/}}
{{- define "tansuo.urlEscape" -}}
{{- urlquery . | replace "+" "%20" }}
{{- end }}

{{/*
TANSUO_BUS: kafka://host:port[,host:port...][?prefix=...]. Kafka needs no credentials
in the URL (the bus adapter speaks PLAINTEXT), so this lives in the ConfigMap.
*/}}
{{- define "tansuo.busUrl" -}}
{{- $url := printf "kafka://%s" .Values.kafka.bootstrapServers }}
{{- if .Values.kafka.topicPrefix }}
{{- $url = printf "%s?prefix=%s" $url (urlquery .Values.kafka.topicPrefix) }}
{{- end }}
{{- $url }}
{{- end }}

{{/*
Environment shared by every Tansuo container: the ConfigMap, then the credentials from
the Secret, then the backend URLs built from both. Kubernetes expands $(VAR) only from
variables defined earlier in the list, hence the order.

Every component gets every backend URL on purpose: a process that lacked one would not
fail, it would quietly use an embedded backend inside its own pod. The NetworkPolicies,
not the environment, keep each component to the backends it needs.
*/}}
{{- define "tansuo.env" -}}
{{- $secret := include "tansuo.secretName" . -}}
{{- if .Values.redis.auth.enabled }}
- name: REDIS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: redis-password
{{- end }}
- name: S3_ACCESS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: s3-access-key
- name: S3_SECRET_KEY
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: s3-secret-key
{{- if .Values.elasticsearch.auth.enabled }}
- name: ELASTICSEARCH_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: elasticsearch-password
{{- end }}
{{- with .Values.redis }}
{{- if and .cluster (ne (int .db) 0) }}
{{- fail (printf "redis.db is %d but a Redis Cluster has only database 0" (int .db)) }}
{{- end }}
- name: TANSUO_STATE
  value: {{ printf "%s%s://%s%s:%d/%d%s" (ternary "rediss" "redis" .tls.enabled) (ternary "+cluster" "" .cluster) (ternary ":$(REDIS_PASSWORD)@" "" .auth.enabled) .host (int .port) (int .db) (ternary (printf "?prefix=%s" (urlquery .keyPrefix)) "" (ne .keyPrefix "")) | quote }}
{{- end }}
{{- with .Values.s3 }}
{{- $query := list }}
{{- if .region }}{{ $query = append $query (printf "region=%s" (urlquery .region)) }}{{ end }}
- name: TANSUO_STORE
  value: {{ printf "%s://$(S3_ACCESS_KEY):$(S3_SECRET_KEY)@%s/%s%s%s" (ternary "s3+https" "s3+http" .tls.enabled) .endpoint .bucket (ternary (printf "/%s" (trimAll "/" .prefix)) "" (ne .prefix "")) (ternary (printf "?%s" (join "&" $query)) "" (gt (len $query) 0)) | quote }}
{{- end }}
{{- with .Values.elasticsearch }}
{{- $query := list }}
{{- if and .tls.enabled .tls.caSecret }}{{ $query = append $query "ca_certs=/etc/tansuo/elasticsearch-ca/ca.crt" }}{{ end }}
{{- if and .tls.enabled (not .tls.verifyCerts) }}{{ $query = append $query "verify_certs=false" }}{{ end }}
{{- $auth := ternary (printf "%s:$(ELASTICSEARCH_PASSWORD)@" (include "tansuo.urlEscape" .auth.username)) "" .auth.enabled }}
- name: TANSUO_INDEX
  value: {{ printf "%s://%s%s/%s%s" (ternary "elasticsearchs" "elasticsearch" .tls.enabled) $auth (join "," .hosts) .index (ternary (printf "?%s" (join "&" $query)) "" (gt (len $query) 0)) | quote }}
{{- end }}
{{- end }}

{{/*
Pod-level pieces shared by every Deployment; called with (list $ $componentValues).
*/}}
{{- define "tansuo.podSpecCommon" -}}
{{- $root := index . 0 }}
{{- $c := index . 1 }}
serviceAccountName: {{ include "tansuo.serviceAccountName" $root }}
# Tansuo never calls the Kubernetes API: no token in the pods.
automountServiceAccountToken: false
{{- with $root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $root.Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
securityContext:
  {{- toYaml $root.Values.podSecurityContext | nindent 2 }}
terminationGracePeriodSeconds: {{ $root.Values.terminationGracePeriodSeconds }}
{{- with (default $root.Values.nodeSelector $c.nodeSelector) }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (default $root.Values.tolerations $c.tolerations) }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (default $root.Values.affinity $c.affinity) }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
volumes:
  # The root filesystem is read-only: scratch space for Python, Scrapy and Celery,
  # and TANSUO_DATA_DIR, which cluster mode leaves nearly empty.
  - name: tmp
    emptyDir:
      sizeLimit: {{ $root.Values.emptyDirSizeLimit }}
  - name: data
    emptyDir:
      sizeLimit: {{ $root.Values.emptyDirSizeLimit }}
{{- if and $root.Values.elasticsearch.tls.enabled $root.Values.elasticsearch.tls.caSecret }}
  - name: elasticsearch-ca
    secret:
      secretName: {{ $root.Values.elasticsearch.tls.caSecret }}
      items:
        - key: {{ $root.Values.elasticsearch.tls.caKey }}
          path: ca.crt
{{- end }}
{{- end }}

{{/*
Container-level pieces shared by every Tansuo container; called with
(list $ $componentValues $moreEnv), $moreEnv a list of env entries of that component.
*/}}
{{- define "tansuo.containerCommon" -}}
{{- $root := index . 0 }}
{{- $c := index . 1 }}
{{- $moreEnv := index . 2 }}
image: {{ include "tansuo.image" $root }}
imagePullPolicy: {{ $root.Values.image.pullPolicy }}
securityContext:
  {{- toYaml $root.Values.securityContext | nindent 2 }}
envFrom:
  - configMapRef:
      name: {{ include "tansuo.fullname" $root }}
env:
  {{- include "tansuo.env" $root | trim | nindent 2 }}
  {{- with $moreEnv }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
  {{- with $c.extraEnv }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
resources:
  {{- toYaml $c.resources | nindent 2 }}
volumeMounts:
  - name: tmp
    mountPath: /tmp
  - name: data
    mountPath: /var/lib/tansuo
{{- if and $root.Values.elasticsearch.tls.enabled $root.Values.elasticsearch.tls.caSecret }}
  - name: elasticsearch-ca
    mountPath: /etc/tansuo/elasticsearch-ca
    readOnly: true
{{- end }}
{{- end }}

{{/*
HTTP probes on a named port: /livez restarts a wedged process, /readyz only takes the
pod out of rotation while a backend is down (a Kafka outage must not restart every
pod). The startup probe gives the first import of Scrapy, SciPy and the clients time
before liveness counts.
*/}}
{{- define "tansuo.httpProbes" -}}
{{- $root := index . 0 }}
{{- $port := index . 1 }}
startupProbe:
  httpGet:
    path: /livez
    port: {{ $port }}
  periodSeconds: {{ $root.Values.probes.startup.periodSeconds }}
  failureThreshold: {{ $root.Values.probes.startup.failureThreshold }}
  timeoutSeconds: {{ $root.Values.probes.startup.timeoutSeconds }}
livenessProbe:
  httpGet:
    path: /livez
    port: {{ $port }}
  periodSeconds: {{ $root.Values.probes.liveness.periodSeconds }}
  failureThreshold: {{ $root.Values.probes.liveness.failureThreshold }}
  timeoutSeconds: {{ $root.Values.probes.liveness.timeoutSeconds }}
readinessProbe:
  httpGet:
    path: /readyz
    port: {{ $port }}
  periodSeconds: {{ $root.Values.probes.readiness.periodSeconds }}
  failureThreshold: {{ $root.Values.probes.readiness.failureThreshold }}
  timeoutSeconds: {{ $root.Values.probes.readiness.timeoutSeconds }}
{{- end }}

{{/*
Pod annotations: the user's, plus checksums of the ConfigMap and Secret so that a
`helm upgrade` that changes a setting restarts the pods that read it.
*/}}
{{- define "tansuo.podAnnotations" -}}
checksum/config: {{ include (print .Template.BasePath "/configmap.yaml") . | sha256sum }}
{{- if not .Values.secrets.existingSecret }}
checksum/secret: {{ include (print .Template.BasePath "/secret.yaml") . | sha256sum }}
{{- end }}
{{- with .Values.podAnnotations }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
Distinct ports of "host:port" strings, as a JSON list (templates return strings).
*/}}
{{- define "tansuo.portsOf" -}}
{{- $ports := list }}
{{- range . }}
{{- $ports = append $ports (int (regexFind "[0-9]+$" .)) }}
{{- end }}
{{- $ports | uniq | toJson }}
{{- end }}

{{/*
Every backend: the ports a component dials and the peers the user allows there.
*/}}
{{- define "tansuo.backendPorts" -}}
{{- $v := .Values }}
{{- dict
    "kafka" (include "tansuo.portsOf" (splitList "," $v.kafka.bootstrapServers) | fromJsonArray)
    "redis" (list (int $v.redis.port))
    "s3" (include "tansuo.portsOf" (list $v.s3.endpoint) | fromJsonArray)
    "elasticsearch" (include "tansuo.portsOf" $v.elasticsearch.hosts | fromJsonArray)
  | toJson }}
{{- end }}

{{/*
NetworkPolicy of one component: called with (list $ "crawler" (list "kafka" "redis")).
Ingress is closed except the metrics (or HTTP) port; egress is DNS plus the named
backends, each restricted to its ports and, when given, to its peers.
*/}}
{{- define "tansuo.networkPolicy" -}}
{{- $root := index . 0 }}
{{- $component := index . 1 }}
{{- $backends := index . 2 }}
{{- $ingressPort := index . 3 }}
{{- $np := $root.Values.networkPolicy }}
{{- $ports := include "tansuo.backendPorts" $root | fromJson }}
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "tansuo.componentName" (list $root $component) }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "tansuo.componentLabels" (list $root $component) | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- include "tansuo.componentSelectorLabels" (list $root $component) | nindent 6 }}
  policyTypes:
    - Ingress
    - Egress
  {{- if $ingressPort }}
  ingress:
    - ports:
        - port: {{ $ingressPort }}
          protocol: TCP
      {{- with (ternary $np.api.ingressFrom $np.metricsFrom (eq $component "api")) }}
      from:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    {{- if eq $component "api" }}
    {{- /* the API serves /metrics on the health port, like every component: Prometheus only */}}
    - ports:
        - port: {{ $root.Values.healthPort }}
          protocol: TCP
      {{- with $np.metricsFrom }}
      from:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    {{- end }}
  {{- else }}
  ingress: []
  {{- end }}
  egress:
    # DNS: the cluster resolver, whichever pod or node serves it.
    - ports:
        - port: 53
          protocol: UDP
        - port: 53
          protocol: TCP
      {{- with $np.dnsPeers }}
      to:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    {{- range $backend := $backends }}
    # {{ $backend }}
    - ports:
        {{- range (get $ports $backend) }}
        - port: {{ . }}
          protocol: TCP
        {{- end }}
      {{- with (get $np.backendPeers $backend) }}
      to:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    {{- end }}
    {{- with $np.extraEgress }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end }}

{{/*
PodDisruptionBudget of a component with more than one pod: a budget on a single pod
either blocks every node drain (minAvailable 1) or says nothing.
*/}}
{{- define "tansuo.pdb" -}}
{{- $root := index . 0 }}
{{- $component := index . 1 }}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "tansuo.componentName" (list $root $component) }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "tansuo.componentLabels" (list $root $component) | nindent 4 }}
spec:
  maxUnavailable: {{ $root.Values.podDisruptionBudget.maxUnavailable }}
  selector:
    matchLabels:
      {{- include "tansuo.componentSelectorLabels" (list $root $component) | nindent 6 }}
{{- end }}

{{/*
A headless Service for a worker's metrics port: ServiceMonitors find pods through
Services, and nobody else calls a worker, so no virtual IP is needed.
*/}}
{{- define "tansuo.metricsService" -}}
{{- $root := index . 0 }}
{{- $component := index . 1 }}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "tansuo.componentName" (list $root $component) }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "tansuo.componentLabels" (list $root $component) | nindent 4 }}
spec:
  clusterIP: None
  ports:
    - name: metrics
      port: {{ $root.Values.healthPort }}
      targetPort: metrics
      protocol: TCP
  selector:
    {{- include "tansuo.componentSelectorLabels" (list $root $component) | nindent 4 }}
{{- end }}

{{/*
Fails the render when a consumer group would have more pods than its topic has
partitions: Kafka gives each partition to one consumer of a group, so the extra pods
would sit idle, holding connections and a share of every rebalance.
*/}}
{{- define "tansuo.checkPartitions" -}}
{{- $root := index . 0 }}
{{- $what := index . 1 }}
{{- $n := int (index . 2) }}
{{- $partitions := int $root.Values.kafka.topicPartitions }}
{{- if gt $n $partitions }}
{{- fail (printf "%s is %d but kafka.topicPartitions is %d: Kafka gives each partition to one consumer of a group, so pods beyond the partition count would sit idle. Lower %s, or create the topics with more partitions and raise kafka.topicPartitions." $what $n $partitions $what) }}
{{- end }}
{{- end }}
