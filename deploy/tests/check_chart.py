#!/usr/bin/env python3
"""Assertions on the rendered uptime Helm chart (run by scripts/test-deploy.sh).

Renders the chart with `helm template` in several configurations, validates
every manifest against the Kubernetes OpenAPI schemas (kubernetes-validate),
checks CRD objects (ServiceMonitor) structurally, and asserts the properties
the chart promises: probes, resources, security context, HPA, PDBs, the
migration hook, secret wiring, optional objects and values-schema rejection.

Prints one line per assertion, "PASS <name>" or "FAIL <name>: <why>", and
exits non-zero when any assertion failed. Needs PyYAML and
kubernetes-validate on PYTHONPATH (scripts/install-deploy-tools.sh).
"""

from __future__ import annotations

import argparse
import base64
import os
import subprocess
import sys
from typing import Any, Callable, Iterable

import yaml
import kubernetes_validate
from kubernetes_validate import utils as kv_utils

import ack_links

COMPONENTS = ["api-gateway", "scheduler", "checker", "recorder", "notifier", "status-pages"]
# Kinds that kubernetes-validate has no schema for (CRDs); checked by hand.
CRD_KINDS = {
    ("monitoring.coreos.com/v1", "ServiceMonitor"),
    ("monitoring.coreos.com/v1", "PrometheusRule"),
    ("keda.sh/v1alpha1", "ScaledObject"),
}
# Kubernetes versions every built-in manifest must validate against.
K8S_VERSIONS = os.environ.get("K8S_VERSIONS", "1.31.0 1.33.0").split()
RELEASE = "uptime"

passed = 0
failed = 0


def check(name: str, cond: bool, why: str = "") -> bool:
    global passed, failed
    if cond:
        passed += 1
        print(f"PASS {name}")
    else:
        failed += 1
        print(f"FAIL {name}: {why}" if why else f"FAIL {name}")
    return cond


def guarded(name: str, fn: Callable[[], Any]) -> None:
    """Runs a group of checks; an exception counts as one failure."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - reported, not swallowed
        check(name, False, f"{type(exc).__name__}: {exc}")


class Chart:
    def __init__(self, helm: str, chart: str):
        self.helm = helm
        self.chart = chart

    def template(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [self.helm, "template", RELEASE, self.chart, "--namespace", "uptime", *args],
            capture_output=True,
            text=True,
        )

    def render(self, *args: str) -> list[dict]:
        proc = self.template(*args)
        if proc.returncode != 0:
            raise RuntimeError(f"helm template {' '.join(args)} failed: {proc.stderr.strip()}")
        return [d for d in yaml.safe_load_all(proc.stdout) if d]


# ----------------------------------------------------------------- helpers

def of_kind(docs: Iterable[dict], kind: str) -> list[dict]:
    return [d for d in docs if d.get("kind") == kind]


def by_component(docs: Iterable[dict], kind: str) -> dict[str, dict]:
    out = {}
    for d in of_kind(docs, kind):
        comp = d["metadata"].get("labels", {}).get("app.kubernetes.io/component")
        out[comp] = d
    return out


def container(deploy: dict) -> dict:
    return deploy["spec"]["template"]["spec"]["containers"][0]


def env_map(c: dict) -> dict[str, dict]:
    return {e["name"]: e for e in c.get("env", [])}


def matches(selector: dict, labels: dict) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def hook_annotations(doc: dict) -> dict:
    return doc["metadata"].get("annotations", {}) or {}


# ----------------------------------------------------------------- checks

def validate_schemas(label: str, docs: list[dict]) -> None:
    """kubernetes-validate (strict: unknown fields are errors) on every object."""
    for doc in docs:
        kind, api = doc.get("kind"), doc.get("apiVersion")
        name = f"{label}: k8s schema {kind}/{doc.get('metadata', {}).get('name')}"
        if (api, kind) in CRD_KINDS:
            # A CRD: no OpenAPI schema here; check_service_monitor checks it.
            print(f"SKIP {name} (CRD, checked structurally)")
            continue
        errors = []
        for version in K8S_VERSIONS:
            try:
                kubernetes_validate.validate(doc, version, strict=True)
            except kv_utils.ValidationError as exc:
                path = ".".join(str(p) for p in exc.path)
                errors.append(f"k8s {version}: {path}: {exc.message}")
            except kv_utils.SchemaNotFoundError as exc:
                errors.append(f"k8s {version}: no schema ({exc.message})")
        check(name, not errors, "; ".join(errors))


def check_deployments(label: str, docs: list[dict], ports: dict[str, int]) -> None:
    deploys = by_component(docs, "Deployment")
    check(f"{label}: one Deployment per service", sorted(deploys) == sorted(COMPONENTS),
          f"got {sorted(deploys)}")
    configmaps = {d["metadata"]["name"] for d in of_kind(docs, "ConfigMap")}
    for comp in COMPONENTS:
        d = deploys.get(comp)
        if d is None:
            continue
        pod = d["spec"]["template"]
        spec = pod["spec"]
        c = container(d)
        n = f"{label}: {comp}"

        # Every service (the api-gateway too) serves /healthz, /readyz and
        # /metrics on its "ops" port; the gateway's API is on "http" besides.
        live = c.get("livenessProbe", {}).get("httpGet", {})
        ready = c.get("readinessProbe", {}).get("httpGet", {})
        check(f"{n} liveness probe GET /healthz on ops",
              live.get("path") == "/healthz" and live.get("port") == "ops", str(live))
        check(f"{n} readiness probe GET /readyz on ops",
              ready.get("path") == "/readyz" and ready.get("port") == "ops", str(ready))
        cports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
        expected_ports = {"ops": ports["ops"]}
        if comp in ("api-gateway", "status-pages"):
            expected_ports["http"] = ports["http"]
        check(f"{n} container ports {expected_ports}", cports == expected_ports, str(cports))
        listen = {"UPTIME_OPS__LISTEN": ports["ops"]}
        if comp == "api-gateway":
            listen["UPTIME_HTTP__LISTEN"] = ports["http"]
        if comp == "status-pages":
            listen["UPTIME_STATUS_PAGES__LISTEN"] = ports["http"]
        for listen_env, port in listen.items():
            check(f"{n} {listen_env} matches the port",
                  env_map(c).get(listen_env, {}).get("value") == f"0.0.0.0:{port}",
                  str(env_map(c).get(listen_env)))
        ann = pod["metadata"].get("annotations", {}) or {}
        if "prometheus.io/scrape" in ann:
            check(f"{n} prometheus.io/port is the ops port",
                  ann.get("prometheus.io/port") == str(ports["ops"])
                  and ann.get("prometheus.io/path") == "/metrics", str(ann))

        req = c.get("resources", {}).get("requests", {})
        check(f"{n} resource requests cpu+memory", "cpu" in req and "memory" in req, str(req))
        check(f"{n} memory limit", "memory" in c.get("resources", {}).get("limits", {}))

        psc, csc = spec.get("securityContext", {}), c.get("securityContext", {})
        check(f"{n} runAsNonRoot",
              csc.get("runAsNonRoot", psc.get("runAsNonRoot")) is True, f"{psc} {csc}")
        check(f"{n} readOnlyRootFilesystem, no privilege escalation, drop ALL caps",
              csc.get("readOnlyRootFilesystem") is True
              and csc.get("allowPrivilegeEscalation") is False
              and "ALL" in csc.get("capabilities", {}).get("drop", []), str(csc))

        check(f"{n} runs /usr/local/bin/{comp} serve",
              c.get("command") == [f"/usr/local/bin/{comp}"] and c.get("args") == ["serve"],
              f"{c.get('command')} {c.get('args')}")
        refs = [e.get("configMapRef", {}).get("name") for e in c.get("envFrom", [])]
        check(f"{n} envFrom the chart ConfigMap", any(r in configmaps for r in refs), str(refs))
        db = env_map(c).get("UPTIME_DATABASE__URL", {})
        check(f"{n} UPTIME_DATABASE__URL from a Secret",
              "secretKeyRef" in db.get("valueFrom", {}), str(db))
        check(f"{n} checksum/config pod annotation",
              "checksum/config" in (pod["metadata"].get("annotations") or {}))
        check(f"{n} selector matches pod labels",
              matches(d["spec"]["selector"]["matchLabels"], pod["metadata"]["labels"]))
        check(f"{n} service links disabled", spec.get("enableServiceLinks") is False)

    notifier = deploys.get("notifier")
    if notifier:
        pw = env_map(container(notifier)).get("UPTIME_SMTP__PASSWORD", {})
        check(f"{label}: notifier UPTIME_SMTP__PASSWORD from a Secret",
              "secretKeyRef" in pw.get("valueFrom", {}), str(pw))


def sysctls_of(deploy: dict) -> dict[str, str]:
    psc = deploy["spec"]["template"]["spec"].get("securityContext", {}) or {}
    return {s["name"]: s["value"] for s in psc.get("sysctls", [])}


def check_ping_sysctl(label: str, docs: list[dict], expected: str | None) -> None:
    """icmp monitors use unprivileged ICMP sockets: the checker pods (only
    they) get net.ipv4.ping_group_range, as a pod sysctl."""
    deploys = by_component(docs, "Deployment")
    for comp in COMPONENTS:
        d = deploys.get(comp)
        if d is None:
            continue
        got = sysctls_of(d).get("net.ipv4.ping_group_range")
        want = expected if comp == "checker" else None
        check(f"{label}: {comp} net.ipv4.ping_group_range is {want!r}", got == want, repr(got))


def check_hpa_and_pdbs(label: str, docs: list[dict], hpa_range: tuple[int, int]) -> None:
    deploys = by_component(docs, "Deployment")
    # status-pages has an HPA of its own (check_status_pages).
    hpas = [h for h in of_kind(docs, "HorizontalPodAutoscaler")
            if not h["metadata"]["name"].endswith("-status-pages")]
    checker = deploys.get("checker", {})
    ok = len(hpas) == 1 and hpas[0]["apiVersion"] == "autoscaling/v2"
    check(f"{label}: checker HPA (autoscaling/v2) exists", ok, f"{len(hpas)} HPAs")
    if ok:
        spec = hpas[0]["spec"]
        check(f"{label}: HPA targets the checker Deployment",
              spec["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment",
                                         "name": checker.get("metadata", {}).get("name")},
              str(spec["scaleTargetRef"]))
        check(f"{label}: HPA min/max replicas {hpa_range}",
              (spec.get("minReplicas"), spec.get("maxReplicas")) == hpa_range,
              f"{spec.get('minReplicas')}..{spec.get('maxReplicas')}")
        check(f"{label}: HPA has a CPU utilization target",
              any(m.get("resource", {}).get("name") == "cpu"
                  and m["resource"]["target"].get("type") == "Utilization"
                  for m in spec.get("metrics", [])))
        check(f"{label}: autoscaled checker Deployment leaves replicas to the HPA",
              "replicas" not in checker.get("spec", {}))

    pdbs = of_kind(docs, "PodDisruptionBudget")
    for comp in COMPONENTS:
        d = deploys.get(comp)
        if d is None:
            continue
        labels = d["spec"]["template"]["metadata"]["labels"]
        covering = [p for p in pdbs if p["apiVersion"] == "policy/v1"
                    and matches(p["spec"]["selector"]["matchLabels"], labels)]
        check(f"{label}: {comp} has a policy/v1 PodDisruptionBudget", len(covering) == 1,
              f"{len(covering)} PDBs")


def check_migration_job(label: str, docs: list[dict], secret_name: str | None) -> None:
    jobs = of_kind(docs, "Job")
    if not check(f"{label}: one migration Job", len(jobs) == 1, f"{len(jobs)} Jobs"):
        return
    job = jobs[0]
    ann = hook_annotations(job)
    hooks = set(ann.get("helm.sh/hook", "").split(","))
    check(f"{label}: migration Job is a pre-install,pre-upgrade hook",
          {"pre-install", "pre-upgrade"} <= hooks, str(ann.get("helm.sh/hook")))
    check(f"{label}: migration Job has a hook-delete-policy",
          "before-hook-creation" in ann.get("helm.sh/hook-delete-policy", ""),
          str(ann.get("helm.sh/hook-delete-policy")))
    pod = job["spec"]["template"]["spec"]
    c = pod["containers"][0]
    check(f"{label}: migration Job runs `api-gateway migrate`",
          c.get("command") == ["/usr/local/bin/api-gateway"] and c.get("args") == ["migrate"],
          f"{c.get('command')} {c.get('args')}")
    check(f"{label}: migration Job never restarts in place", pod.get("restartPolicy") == "Never")
    db = env_map(c).get("UPTIME_DATABASE__URL", {}).get("valueFrom", {}).get("secretKeyRef", {})
    check(f"{label}: migration Job reads UPTIME_DATABASE__URL from a Secret", bool(db), str(db))
    check(f"{label}: migration Job has no envFrom (hooks run before the ConfigMap exists)",
          not c.get("envFrom"))

    # Everything the hook references must itself be a hook of lower weight,
    # or exist before the release (existingSecret / external ServiceAccount).
    hook_objs = {(d["kind"], d["metadata"]["name"]): d for d in docs
                 if "helm.sh/hook" in hook_annotations(d)}
    weight = lambda d: int(hook_annotations(d).get("helm.sh/hook-weight", "0"))
    if secret_name:
        check(f"{label}: migration Job uses the existing Secret {secret_name}",
              db.get("name") == secret_name, str(db))
    else:
        s = hook_objs.get(("Secret", db.get("name")))
        check(f"{label}: migration Secret is an earlier hook",
              s is not None and weight(s) < weight(job), str(db.get("name")))
    sa_name = pod.get("serviceAccountName", "default")
    regular_sas = {d["metadata"]["name"] for d in of_kind(docs, "ServiceAccount")
                   if "helm.sh/hook" not in hook_annotations(d)}
    sa = hook_objs.get(("ServiceAccount", sa_name))
    check(f"{label}: migration ServiceAccount exists before the Job",
          (sa is not None and weight(sa) < weight(job))
          or (sa_name not in regular_sas and sa is None),
          f"{sa_name} is created with the release, after the hook")


def port_names(service: dict) -> set[str]:
    return {p.get("name") for p in service["spec"]["ports"]}


def services_of(docs: list[dict], comp: str, port: str) -> list[dict]:
    """The Services of a component that expose the named port."""
    return [s for s in of_kind(docs, "Service")
            if s["metadata"].get("labels", {}).get("app.kubernetes.io/component") == comp
            and port in port_names(s)]


def check_services(label: str, docs: list[dict]) -> None:
    deploys = by_component(docs, "Deployment")
    # Every component has a ClusterIP "ops" Service (metrics are scraped
    # there); the api-gateway also has its traffic Service on "http", which
    # must not carry the ops port (it may be a LoadBalancer).
    wanted = [(comp, "ops") for comp in COMPONENTS] + [("api-gateway", "http"),
                                                       ("status-pages", "http")]
    for comp, port in wanted:
        found = services_of(docs, comp, port)
        if not check(f"{label}: {comp} Service with port {port} exists", len(found) == 1,
                     f"{len(found)} found"):
            continue
        s = found[0]
        targets = [p.get("targetPort") for p in s["spec"]["ports"]]
        check(f"{label}: {comp} {port} Service targets port {port}", port in targets,
              str(targets))
        if port == "ops":
            check(f"{label}: {comp} ops Service is ClusterIP and carries only ops",
                  s["spec"].get("type") == "ClusterIP" and port_names(s) == {"ops"},
                  f"{s['spec'].get('type')} {port_names(s)}")
        else:
            check(f"{label}: {comp} traffic Service does not expose the ops port",
                  port_names(s) == {"http"}, str(port_names(s)))
        d = deploys.get(comp)
        check(f"{label}: {comp} {port} Service selects its pods",
              d is not None and matches(s["spec"]["selector"],
                                        d["spec"]["template"]["metadata"]["labels"]))


def check_service_monitor(label: str, docs: list[dict], expected: bool) -> None:
    sms = of_kind(docs, "ServiceMonitor")
    if not expected:
        check(f"{label}: no ServiceMonitor unless enabled", not sms, f"{len(sms)} rendered")
        return
    if not check(f"{label}: ServiceMonitor rendered when enabled", len(sms) == 1,
                 f"{len(sms)} rendered"):
        return
    sm = sms[0]
    # Structural checks in place of a schema (it is a CRD).
    check(f"{label}: ServiceMonitor apiVersion monitoring.coreos.com/v1",
          sm.get("apiVersion") == "monitoring.coreos.com/v1")
    spec = sm.get("spec", {})
    endpoints = spec.get("endpoints", [])
    check(f"{label}: ServiceMonitor scrapes /metrics on ops ports only",
          [e.get("port") for e in endpoints] == ["ops"]
          and all(e.get("path") == "/metrics" for e in endpoints), str(endpoints))
    sel = spec.get("selector", {}).get("matchLabels", {})
    for comp in COMPONENTS:
        for s in services_of(docs, comp, "ops"):
            check(f"{label}: ServiceMonitor selects Service {s['metadata']['name']}",
                  matches(sel, s["metadata"]["labels"]),
                  f"{sel} vs {s['metadata']['labels']}")


def check_ingress(label: str, docs: list[dict], expected: bool) -> None:
    ings = of_kind(docs, "Ingress")
    if not expected:
        check(f"{label}: no Ingress unless enabled", not ings, f"{len(ings)} rendered")
        return
    if not check(f"{label}: Ingress rendered when enabled", len(ings) == 1):
        return
    gw = (services_of(docs, "api-gateway", "http") or [{}])[0]
    backends = [p["backend"]["service"] for r in ings[0]["spec"]["rules"]
                for p in r["http"]["paths"]]
    check(f"{label}: Ingress routes to the api-gateway http port",
          bool(backends) and all(b["name"] == gw.get("metadata", {}).get("name")
                                 and b["port"].get("name") == "http" for b in backends),
          str(backends))


def check_secrets(label: str, docs: list[dict], existing: str | None) -> None:
    regular = [d for d in of_kind(docs, "Secret") if "helm.sh/hook" not in hook_annotations(d)]
    refs = set()
    for d in of_kind(docs, "Deployment") + of_kind(docs, "Job"):
        for c in d["spec"]["template"]["spec"]["containers"]:
            for e in c.get("env", []):
                ref = e.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    refs.add(ref["name"])
    if existing:
        check(f"{label}: existingSecret {existing} referenced by secretKeyRef",
              refs == {existing}, f"refs={sorted(refs)}")
        check(f"{label}: no chart Secret with existingSecret", not of_kind(docs, "Secret"),
              str([s["metadata"]["name"] for s in of_kind(docs, "Secret")]))
    else:
        names = {s["metadata"]["name"] for s in regular}
        check(f"{label}: chart Secret exists and is referenced",
              len(regular) == 1 and names <= refs, f"secrets={names} refs={sorted(refs)}")


def check_sealing_keys(label: str, docs: list[dict], existing: str | None) -> None:
    """The keys that seal basic-auth passwords and alert contacts' provider
    credentials reach the api-gateway, the checkers and the notifier only,
    from the Secret; the chart's Secret holds a 32-byte key per id."""
    deploys = by_component(docs, "Deployment")
    for comp, d in deploys.items():
        env = env_map(container(d))
        sealing = {k: v for k, v in env.items() if k.startswith("UPTIME_SECRETS__")}
        if comp in ("api-gateway", "checker", "notifier"):
            key = env.get("UPTIME_SECRETS__KEYS__K1", {}).get("valueFrom", {}).get("secretKeyRef", {})
            check(f"{label}: {comp} gets sealing key k1 from the Secret",
                  key.get("key") == "sealing-key-k1"
                  and (existing is None or key.get("name") == existing), str(key))
            current = env.get("UPTIME_SECRETS__CURRENT_KEY_ID", {})
            check(f"{label}: {comp} seals with k1", current.get("value") == "k1", str(current))
        else:
            check(f"{label}: {comp} gets no sealing key", not sealing, str(sorted(sealing)))
    for job in of_kind(docs, "Job"):
        env = env_map(job["spec"]["template"]["spec"]["containers"][0])
        check(f"{label}: the migration Job gets no sealing key",
              not any(k.startswith("UPTIME_SECRETS__") for k in env), str(sorted(env)))
    if existing is None:
        regular = [s for s in of_kind(docs, "Secret") if "helm.sh/hook" not in hook_annotations(s)]
        data = regular[0].get("data", {}) if regular else {}
        raw = base64.b64decode(base64.b64decode(data.get("sealing-key-k1", "")))
        check(f"{label}: chart Secret holds a 32-byte sealing key", len(raw) == 32, f"{len(raw)} bytes")


def check_configmap(label: str, docs: list[dict], expect: dict[str, str]) -> None:
    cms = of_kind(docs, "ConfigMap")
    if not check(f"{label}: one ConfigMap", len(cms) == 1, f"{len(cms)}"):
        return
    data = cms[0].get("data", {})
    check(f"{label}: ConfigMap values are all strings",
          all(isinstance(v, str) for v in data.values()))
    check(f"{label}: ConfigMap keys are UPTIME_<SECTION>__<KEY>",
          all(k.startswith("UPTIME_") and "__" in k for k in data), str(list(data)))
    check(f"{label}: no secret in the ConfigMap",
          not any(k in data for k in ("UPTIME_DATABASE__URL", "UPTIME_SMTP__PASSWORD"))
          and not any(k.startswith("UPTIME_SECRETS__") for k in data))
    for k, v in expect.items():
        check(f"{label}: ConfigMap {k}={v}", data.get(k) == v, repr(data.get(k)))


def check_full(label: str, docs: list[dict], *, hpa_range, existing_secret, service_monitor,
               ingress, config) -> None:
    ports = {"http": 8080, "ops": 9090}
    check(f"{label}: rendered objects", len(docs) > 10, f"{len(docs)}")
    for name, fn in [
        ("k8s schemas", lambda: validate_schemas(label, docs)),
        ("deployments", lambda: check_deployments(label, docs, ports)),
        ("ping sysctl", lambda: check_ping_sysctl(label, docs, "0 2147483647")),
        ("hpa/pdb", lambda: check_hpa_and_pdbs(label, docs, hpa_range)),
        ("migration job", lambda: check_migration_job(label, docs, existing_secret)),
        ("services", lambda: check_services(label, docs)),
        ("service monitor", lambda: check_service_monitor(label, docs, service_monitor)),
        ("ingress", lambda: check_ingress(label, docs, ingress)),
        ("secrets", lambda: check_secrets(label, docs, existing_secret)),
        ("sealing keys", lambda: check_sealing_keys(label, docs, existing_secret)),
        ("ack links key", lambda: ack_links.check_wiring(sys.modules[__name__], label, docs,
                                                         existing_secret)),
        ("configmap", lambda: check_configmap(label, docs, config)),
    ]:
        guarded(f"{label}: {name}", fn)


OPERATOR_ON = ("--set", "operator.enabled=true", "--set", "operator.apiKey.existingSecret=uptime-operator")


def check_operator(chart: Chart) -> None:
    """The optional operator: absent by default; enabled, its CRDs, RBAC
    (least privilege) and Deployment, cluster-wide or in one namespace."""
    docs = chart.render()
    check("operator: off by default",
          not by_component(docs, "Deployment").get("operator")
          and not of_kind(docs, "CustomResourceDefinition"))

    docs = chart.render(*OPERATOR_ON)
    validate_schemas("operator", docs)
    deploy = by_component(docs, "Deployment").get("operator")
    if not check("operator: a Deployment", deploy is not None):
        return
    spec = deploy["spec"]
    pod = spec["template"]["spec"]
    c = container(deploy)
    env = env_map(c)
    sa_name = pod["serviceAccountName"]
    check("operator: one replica, recreated (never two reconcilers)",
          spec.get("replicas") == 1 and spec["strategy"]["type"] == "Recreate")
    check("operator: runs uptime-operator", c["command"] == ["/usr/local/bin/uptime-operator"])
    check("operator: its own ServiceAccount with a token",
          pod.get("automountServiceAccountToken") is True
          and any(d["metadata"]["name"] == sa_name for d in of_kind(docs, "ServiceAccount")))
    key = env.get("UPTIME_OPERATOR__API_KEY", {}).get("valueFrom", {}).get("secretKeyRef", {})
    check("operator: the API key from a Secret", key == {"name": "uptime-operator", "key": "api-key"}, str(key))
    check("operator: the API URL is the release's gateway",
          env.get("UPTIME_OPERATOR__API_URL", {}).get("value") == "http://uptime-api-gateway:80",
          str(env.get("UPTIME_OPERATOR__API_URL")))
    check("operator: probes on the ops port",
          c["livenessProbe"]["httpGet"]["path"] == "/healthz"
          and c["readinessProbe"]["httpGet"]["path"] == "/readyz")

    crds = {d["metadata"]["name"]: d for d in of_kind(docs, "CustomResourceDefinition")}
    check("operator: both CRDs", sorted(crds) == ["alertcontacts.uptime.dev", "monitors.uptime.dev"],
          str(sorted(crds)))
    for name, crd in crds.items():
        version = crd["spec"]["versions"][0]
        check(f"operator: {name} is v1alpha1 with a status subresource",
              version["name"] == "v1alpha1" and "status" in version.get("subresources", {}))
        check(f"operator: {name} is kept on uninstall",
              crd["metadata"].get("annotations", {}).get("helm.sh/resource-policy") == "keep")

    roles = of_kind(docs, "ClusterRole")
    bindings = of_kind(docs, "ClusterRoleBinding")
    if check("operator: a ClusterRole and its binding (every namespace)", len(roles) == 1 and len(bindings) == 1):
        rules = roles[0]["rules"]
        verbs = {(g, r): set(rule["verbs"]) for rule in rules
                 for g in rule["apiGroups"] for r in rule["resources"]}
        check("operator: watches and patches the custom resources",
              verbs.get(("uptime.dev", "monitors")) == {"get", "list", "watch", "patch"}
              and verbs.get(("uptime.dev", "alertcontacts")) == {"get", "list", "watch", "patch"})
        check("operator: patches their status",
              "patch" in verbs.get(("uptime.dev", "monitors/status"), set())
              and "patch" in verbs.get(("uptime.dev", "alertcontacts/status"), set()))
        check("operator: reads Secrets, never lists or writes them",
              verbs.get(("", "secrets")) == {"get"})
        check("operator: records Events", "create" in verbs.get(("events.k8s.io", "events"), set()))
        check("operator: no wildcard",
              not any("*" in rule["verbs"] or "*" in rule["resources"] for rule in rules))
        subject = bindings[0]["subjects"][0]
        check("operator: the binding names its ServiceAccount",
              subject["name"] == sa_name and subject["namespace"] == "uptime"
              and bindings[0]["roleRef"]["name"] == roles[0]["metadata"]["name"])

    docs = chart.render(*OPERATOR_ON, "--set", "operator.watchNamespace=team-a",
                        "--set", "operator.installCRDs=false")
    validate_schemas("operator (one namespace)", docs)
    role = of_kind(docs, "Role")
    check("operator (one namespace): a Role and RoleBinding there, no ClusterRole",
          not of_kind(docs, "ClusterRole") and len(role) == 1
          and role[0]["metadata"]["namespace"] == "team-a"
          and of_kind(docs, "RoleBinding")[0]["metadata"]["namespace"] == "team-a")
    env = env_map(container(by_component(docs, "Deployment")["operator"]))
    check("operator (one namespace): told its namespace",
          env.get("UPTIME_OPERATOR__WATCH_NAMESPACE", {}).get("value") == "team-a")
    check("operator: installCRDs=false leaves the CRDs out",
          not of_kind(docs, "CustomResourceDefinition"))

    proc = chart.template("--set", "operator.enabled=true")
    check("operator: refuses to render without an API key Secret",
          proc.returncode != 0 and "operator.apiKey.existingSecret" in proc.stderr,
          proc.stderr.strip()[:200])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--helm", required=True)
    ap.add_argument("--chart", required=True)
    ap.add_argument("--ci-values", required=True)
    args = ap.parse_args()
    chart = Chart(args.helm, args.chart)

    for v in K8S_VERSIONS:
        check(f"kubernetes-validate knows Kubernetes {v}",
              kv_utils.major_minor(v) <= kubernetes_validate.latest_version()
              and kv_utils.major_minor(v) in {kv_utils.major_minor(x)
                                              for x in kv_utils.all_versions()})

    # 1. Default values.
    guarded("default: render", lambda: check_full(
        "default", chart.render(), hpa_range=(2, 10), existing_secret=None,
        service_monitor=False, ingress=False,
        config={"UPTIME_NATS__STREAM_REPLICAS": "1", "UPTIME_TELEMETRY__LOG_FORMAT": "json",
                "UPTIME_SAFETY__ALLOW_PRIVATE_TARGETS": "false",
                # Written out in full, not as 4.294967296e+09.
                "UPTIME_NATS__STREAMS__RESULTS_MAX_BYTES": "4294967296",
                "UPTIME_NATS__STREAMS__EVENTS_MAX_AGE_SECS": "604800",
                # The dead-letter stream (docs/operations.md, dead letters).
                "UPTIME_NATS__STREAMS__DEAD_MAX_AGE_SECS": "604800",
                "UPTIME_NATS__STREAMS__DEAD_MAX_BYTES": "268435456",
                # Retention, for the recorder (docs/operations.md, Retention).
                "UPTIME_RETENTION__RESULTS_DAYS": "90",
                "UPTIME_RETENTION__ROLLUPS_DAYS": "1830",
                "UPTIME_RETENTION__DELIVERIES_DAYS": "30",
                "UPTIME_RETENTION__OUTBOX_HOURS": "24",
                "UPTIME_RETENTION__VERIFICATION_TOKEN_HOURS": "168",
                "UPTIME_RETENTION__REVOKED_API_KEYS_DAYS": "30",
                "UPTIME_RETENTION__INTERVAL_SECS": "300",
                "UPTIME_RETENTION__BATCH_SIZE": "1000"}))

    # 2. The production-like values file.
    ci_values = yaml.safe_load(open(args.ci_values))
    guarded("ci: render", lambda: check_full(
        "ci", chart.render("-f", args.ci_values), hpa_range=(2, 20),
        existing_secret=ci_values["secrets"]["existingSecret"],
        service_monitor=True, ingress=True,
        config={"UPTIME_NATS__STREAM_REPLICAS": "3",
                "UPTIME_TELEMETRY__OTLP_ENDPOINT": ci_values["telemetry"]["otlpEndpoint"],
                "UPTIME_HTTP__PUBLIC_BASE_URL": ci_values["http"]["publicBaseUrl"]}))

    # 3. Variations.
    def fixed_checkers() -> None:
        docs = chart.render("--set", "checker.autoscaling.enabled=false",
                            "--set", "checker.replicas=5")
        check("checker.replicas: no checker HPA when autoscaling is off",
              not [h for h in of_kind(docs, "HorizontalPodAutoscaler")
                   if "checker" in h["metadata"]["name"]])
        d = by_component(docs, "Deployment")["checker"]
        check("checker.replicas: Deployment gets replicas 5", d["spec"].get("replicas") == 5,
              str(d["spec"].get("replicas")))
    guarded("checker.replicas", fixed_checkers)

    def ping_group_range() -> None:
        docs = chart.render("--set", "checker.pingGroupRange=10001 10001")
        check_ping_sysctl("checker.pingGroupRange=10001 10001", docs, "10001 10001")
        docs = chart.render("--set", "checker.pingGroupRange=")
        check_ping_sysctl("checker.pingGroupRange empty", docs, None)
        # Sysctls given for every pod are kept; the checker's is added to them.
        docs = chart.render("--set", "podSecurityContext.sysctls[0].name=net.ipv4.tcp_syncookies",
                            "--set-string", "podSecurityContext.sysctls[0].value=1")
        d = by_component(docs, "Deployment")["checker"]
        check("podSecurityContext.sysctls: kept, and the checker's ping_group_range added",
              sysctls_of(d) == {"net.ipv4.tcp_syncookies": "1",
                                "net.ipv4.ping_group_range": "0 2147483647"},
              str(sysctls_of(d)))
        validate_schemas("podSecurityContext.sysctls", docs)
    guarded("ping group range", ping_group_range)

    def single_replica() -> None:
        docs = chart.render("--set", "scheduler.replicas=1")
        pdbs = by_component(docs, "PodDisruptionBudget")
        check("scheduler.replicas=1: no PDB for a single pod", "scheduler" not in pdbs,
              str(sorted(pdbs)))
    guarded("single replica", single_replica)

    def monitor_on() -> None:
        docs = chart.render("--set", "metrics.serviceMonitor.enabled=true")
        check("serviceMonitor.enabled=true renders a ServiceMonitor",
              len(of_kind(docs, "ServiceMonitor")) == 1)
    guarded("service monitor toggle", monitor_on)

    def config_rolls_pods() -> None:
        ann = lambda docs: by_component(docs, "Deployment")["checker"]["spec"]["template"][
            "metadata"]["annotations"]["checksum/config"]
        before = ann(chart.render())
        after = ann(chart.render("--set", "telemetry.logLevel=debug"))
        check("changing config changes checksum/config (pods roll)", before != after)
    guarded("checksum", config_rolls_pods)

    def retention_values() -> None:
        docs = chart.render("--set", "retention.deliveriesDays=7",
                            "--set", "retention.rollupsDays=3650")
        data = of_kind(docs, "ConfigMap")[0]["data"]
        check("retention values reach the ConfigMap",
              data.get("UPTIME_RETENTION__DELIVERIES_DAYS") == "7"
              and data.get("UPTIME_RETENTION__ROLLUPS_DAYS") == "3650",
              str({k: v for k, v in data.items() if k.startswith("UPTIME_RETENTION__")}))
    guarded("retention values", retention_values)

    def dns_tenant_resolvers() -> None:
        # Unset: left out, so the checker asks its own resolver (its default).
        data = of_kind(chart.render(), "ConfigMap")[0]["data"]
        check("checker.dnsTenantResolvers default: no UPTIME_CHECKER__DNS__TENANT_RESOLVERS",
              "UPTIME_CHECKER__DNS__TENANT_RESOLVERS" not in data)
        docs = chart.render("--set-json",
                            'checker.dnsTenantResolvers=["9.9.9.9", "[2620:fe::fe]:53"]')
        check_configmap("checker.dnsTenantResolvers", docs, {
            "UPTIME_CHECKER__DNS__TENANT_RESOLVERS": "9.9.9.9,[2620:fe::fe]:53"})
    guarded("dns tenant resolvers", dns_tenant_resolvers)

    def migrations_off() -> None:
        docs = chart.render("--set", "migrations.enabled=false")
        # `helm test`'s pod is a hook too (helm.sh/hook: test), not a migration.
        check("migrations.enabled=false: no hook objects",
              not [d for d in docs if "helm.sh/hook" in hook_annotations(d)
                   and hook_annotations(d)["helm.sh/hook"] != "test"])
    guarded("migrations off", migrations_off)

    def no_sa() -> None:
        docs = chart.render("--set", "serviceAccount.create=false",
                            "--set", "serviceAccount.name=uptime-irsa")
        check("serviceAccount.create=false: no ServiceAccount rendered",
              not of_kind(docs, "ServiceAccount"))
        check("serviceAccount.name used by every pod",
              {d["spec"]["template"]["spec"]["serviceAccountName"]
               for d in of_kind(docs, "Deployment") + of_kind(docs, "Job")} == {"uptime-irsa"})
    guarded("service account", no_sa)

    def checker_regions() -> None:
        # Default: one region "default", the checker objects of before regions.
        docs = chart.render()
        deploys = by_component(docs, "Deployment")
        check("regions default: one checker Deployment, named as before regions",
              [c for c in deploys if c.startswith("checker")] == ["checker"]
              and deploys["checker"]["metadata"]["name"] == f"{RELEASE}-checker",
              str(sorted(deploys)))
        check("regions default: no UPTIME_CHECKER__REGION (the checker's default)",
              "UPTIME_CHECKER__REGION" not in env_map(container(deploys["checker"])))
        check_configmap("regions default", docs, {
            "UPTIME_REGIONS__KNOWN": "default", "UPTIME_REGIONS__DEFAULT": "default",
            "UPTIME_REGIONS__PRESENCE_TTL_SECS": "30"})

        args = ["--set-json", 'checker.regions=[{"name": "default"},'
                ' {"name": "eu", "autoscaling": {"minReplicas": 1, "maxReplicas": 4}},'
                ' {"name": "us", "replicas": 3, "autoscaling": {"enabled": false}}]',
                "--set-json", 'regions.known=["default", "eu", "us", "ap"]',
                "--set-json", 'regions.default=["eu", "us"]',
                "--set", "regions.presenceTtlSecs=12"]
        docs = chart.render(*args)
        validate_schemas("checker.regions", docs)
        deploys = by_component(docs, "Deployment")
        checkers = sorted(c for c in deploys if c.startswith("checker"))
        check("checker.regions: a Deployment per region", checkers == ["checker", "checker-eu",
                                                                        "checker-us"], str(checkers))
        for comp, region in [("checker-eu", "eu"), ("checker-us", "us")]:
            d = deploys.get(comp)
            if d is None:
                continue
            c = container(d)
            check(f"checker.regions: {comp} is named {RELEASE}-{comp}",
                  d["metadata"]["name"] == f"{RELEASE}-{comp}", d["metadata"]["name"])
            check(f"checker.regions: {comp} runs the checker binary in region {region}",
                  c["command"] == ["/usr/local/bin/checker"]
                  and env_map(c).get("UPTIME_CHECKER__REGION", {}).get("value") == region,
                  f"{c['command']} {env_map(c).get('UPTIME_CHECKER__REGION')}")
            check(f"checker.regions: {comp} pods get the ping sysctl too",
                  "net.ipv4.ping_group_range" in sysctls_of(d))
            ops = services_of(docs, comp, "ops")
            check(f"checker.regions: {comp} has its ops Service (metrics)",
                  len(ops) == 1 and matches(ops[0]["spec"]["selector"],
                                            d["spec"]["template"]["metadata"]["labels"]),
                  f"{len(ops)} found")
        check("checker.regions: the default region's Deployment is unchanged",
              "UPTIME_CHECKER__REGION" not in env_map(container(deploys["checker"])))
        check("checker.regions: a fixed-size region gets its replicas",
              deploys["checker-us"]["spec"].get("replicas") == 3,
              str(deploys["checker-us"]["spec"].get("replicas")))
        hpas = {h["spec"]["scaleTargetRef"]["name"]: h["spec"]
                for h in of_kind(docs, "HorizontalPodAutoscaler")}
        check("checker.regions: an HPA per autoscaled region, with its own bounds",
              {n: (h["minReplicas"], h["maxReplicas"]) for n, h in hpas.items()}
              == {f"{RELEASE}-checker": (2, 10), f"{RELEASE}-checker-eu": (1, 4),
                  f"{RELEASE}-status-pages": (2, 10)}, str(hpas))
        # Selectors must not overlap: each region's pods are its own Deployment's.
        for comp in checkers:
            labels = deploys[comp]["spec"]["template"]["metadata"]["labels"]
            owners = [c for c in checkers
                      if matches(deploys[c]["spec"]["selector"]["matchLabels"], labels)]
            pdbs = [p for p in of_kind(docs, "PodDisruptionBudget")
                    if matches(p["spec"]["selector"]["matchLabels"], labels)]
            check(f"checker.regions: {comp} pods are selected by their Deployment and one PDB",
                  owners == [comp] and len(pdbs) == 1, f"{owners} {len(pdbs)} PDBs")
        check_configmap("checker.regions", docs, {
            "UPTIME_REGIONS__KNOWN": "default,eu,us,ap", "UPTIME_REGIONS__DEFAULT": "eu,us",
            "UPTIME_REGIONS__PRESENCE_TTL_SECS": "12"})

        # Only regional checkers (the default region's run elsewhere, or none).
        docs = chart.render("--set-json", 'checker.regions=[{"name": "eu"}]',
                            "--set-json", 'regions.known=["eu"]',
                            "--set-json", 'regions.default=["eu"]')
        checkers = sorted(c for c in by_component(docs, "Deployment") if c.startswith("checker"))
        check("checker.regions without default: only that region's checker",
              checkers == ["checker-eu"], str(checkers))

        for why, bad in [
            ("a region not in regions.known",
             ["--set-json", 'checker.regions=[{"name": "eu"}]']),
            ("a region listed twice",
             ["--set-json", 'checker.regions=[{"name": "default"}, {"name": "default"}]']),
        ]:
            proc = chart.template(*bad)
            check(f"checker.regions: {why} is refused",
                  proc.returncode != 0 and "checker.regions" in proc.stderr,
                  f"rc={proc.returncode} {proc.stderr.strip()[:200]}")
    guarded("checker regions", checker_regions)

    # Sealing keys: a second id (rotation) reaches both services; a current
    # id that is not listed refuses to render.
    def sealing_rotation() -> None:
        docs = chart.render("--set", "secrets.sealingKeyIds={k1,k2}",
                            "--set", "secrets.sealingCurrentKeyId=k2")
        for comp in ("api-gateway", "checker"):
            env = env_map(container(by_component(docs, "Deployment")[comp]))
            check(f"rotation: {comp} gets k1 and k2, sealing with k2",
                  "UPTIME_SECRETS__KEYS__K1" in env and "UPTIME_SECRETS__KEYS__K2" in env
                  and env["UPTIME_SECRETS__CURRENT_KEY_ID"].get("value") == "k2", str(sorted(env)))
        proc = chart.template("--set", "secrets.sealingCurrentKeyId=k9")
        check("an unlisted current sealing key refuses to render",
              proc.returncode != 0 and "sealingCurrentKeyId" in proc.stderr,
              f"rc={proc.returncode} {proc.stderr.strip()[:200]}")
    guarded("sealing rotation", sealing_rotation)
    guarded("ack links key", lambda: ack_links.check_variations(sys.modules[__name__], chart))

    # Status pages: their own HPA (on CPU), and an Ingress for the service's
    # hosts and the pages' custom domains, routed to its http port.
    def status_pages() -> None:
        docs = chart.render("--set", "statusPages.ingress.enabled=true",
                            "--set", "statusPages.ingress.hosts={status.example.com}",
                            "--set", "statusPages.ingress.customDomains={status.customer.example}")
        hpas = {h["spec"]["scaleTargetRef"]["name"]: h["spec"]
                for h in of_kind(docs, "HorizontalPodAutoscaler")}
        spec = hpas.get(f"{RELEASE}-status-pages", {})
        check("statusPages: an HPA on CPU scales its Deployment",
              any(m.get("resource", {}).get("name") == "cpu" for m in spec.get("metrics", [])),
              str(spec))
        check("statusPages: the autoscaled Deployment leaves replicas to the HPA",
              "replicas" not in by_component(docs, "Deployment")["status-pages"]["spec"])
        ings = [i for i in of_kind(docs, "Ingress")
                if i["metadata"]["name"] == f"{RELEASE}-status-pages"]
        if check("statusPages: the Ingress renders when enabled", len(ings) == 1):
            rules = ings[0]["spec"]["rules"]
            svc = (services_of(docs, "status-pages", "http") or [{}])[0]
            check("statusPages: the Ingress routes its hosts and custom domains to the pages",
                  [r["host"] for r in rules] == ["status.example.com", "status.customer.example"]
                  and all(p["backend"]["service"] == {"name": svc["metadata"]["name"],
                                                      "port": {"name": "http"}}
                          for r in rules for p in r["http"]["paths"]), str(rules))
        config = of_kind(docs, "ConfigMap")[0]["data"]
        check("statusPages: its settings reach the pods",
              config.get("UPTIME_STATUS_PAGES__REFRESH_MS") == "2000"
              and config.get("UPTIME_STATUS_PAGES__TRUST_FORWARDED_FOR") == "true", str(config))
    guarded("status pages", status_pages)

    guarded("operator", lambda: check_operator(chart))

    # 4. values.schema.json rejects bad values.
    for bad in ["checker.replicas=notanumber", "telemetry.logFormat=xml", "smtp.tls=ssl",
                "image.pullPolicy=Sometimes", "checker.autoscaling.maxReplicas=0",
                "nats.url=http://nats:4222", "checker.replica=3",
                "nats.streams.checksMaxBytes=0", "nats.streams.eventsMaxAgeSecs=60",
                "retention.batchSize=0", "retention.deliveriesDays=-1",
                "retention.intervalSecs=1", "retention.outboxDays=1",
                "checker.pingGroupRange=all", "checker.regions[0].name=EU",
                "regions.presenceTtlSecs=0", "regions.known[0]=eu.west",
                "checker.regions[0].colour=red", "checker.dnsTenantResolvers[0]=dns.quad9.net",
                "secrets.sealingKeyIds[0]=K-1", "secrets.sealingCurrentKeyId=k.2",
                "statusPages.refreshMs=10", "statusPages.ingress.hosts[0]=",
                "operator.watchNamespace=Team_A", "operator.reapplySecs=1",
                "operator.refPrefix=Prod."]:
        proc = chart.template("--set", bad)
        check(f"schema rejects --set {bad}",
              proc.returncode != 0 and "schema" in proc.stderr,
              f"rc={proc.returncode} {proc.stderr.strip()[:200]}")

    print(f"check_chart: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
