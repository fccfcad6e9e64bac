#!/usr/bin/env python3
"""Assertions on the chart's day-two objects (run by scripts/test-deploy.sh).

The PrometheusRule and its rules file, the Grafana dashboard, NetworkPolicies,
KEDA ScaledObjects, the `helm test` pod, image digests, extra volumes, NATS
credentials and the checker's termination grace. Shares check_chart.py's
rendering and reporting; prints "PASS <name>" / "FAIL <name>: <why>" lines
and exits non-zero when any failed.

Every PromQL expression of the dashboard is checked by promtool (written out
as recording rules, `promtool check rules`), so a panel cannot ship a query
Prometheus would refuse.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import subprocess
import sys
import tempfile

import yaml

import check_chart as cc
from check_chart import check, guarded, of_kind, by_component, container, env_map

SERVICES = ["api-gateway", "scheduler", "checker", "recorder", "notifier", "status-pages"]


def component(doc: dict) -> str:
    return doc["metadata"]["labels"].get("app.kubernetes.io/component", "")


def check_rules(chart: cc.Chart, chart_dir: str, promtool: str, runbook: str) -> None:
    rules_file = os.path.join(chart_dir, "files", "prometheus-rules.yaml")
    proc = subprocess.run([promtool, "check", "rules", rules_file], capture_output=True, text=True)
    check("promtool check rules files/prometheus-rules.yaml", proc.returncode == 0,
          proc.stdout + proc.stderr)
    tests = os.path.join(os.path.dirname(os.path.abspath(__file__)), "prometheus-rules.test.yaml")
    proc = subprocess.run([promtool, "test", "rules", tests], capture_output=True, text=True)
    check("promtool test rules (every alert fires on trouble, quiet otherwise)",
          proc.returncode == 0, proc.stdout + proc.stderr)

    check("PrometheusRule off by default", not of_kind(chart.render(), "PrometheusRule"))
    docs = chart.render("--set", "metrics.prometheusRule.enabled=true",
                        "--set", "metrics.prometheusRule.runbookBaseUrl=https://runbooks.example/",
                        "--set", "metrics.prometheusRule.additionalRuleLabels.team=platform")
    rules = of_kind(docs, "PrometheusRule")
    if not check("metrics.prometheusRule.enabled renders one PrometheusRule", len(rules) == 1):
        return
    groups = rules[0]["spec"]["groups"]
    alerts = [r for g in groups for r in g["rules"] if "alert" in r]
    check("PrometheusRule carries every alert of the rules file",
          len(alerts) == sum(1 for g in yaml.safe_load(open(rules_file))["groups"]
                             for r in g["rules"] if "alert" in r), str(len(alerts)))
    with open(runbook) as f:
        anchors = {github_anchor(line) for line in f if line.startswith("#")}
    for r in alerts:
        url = r["annotations"].get("runbook_url", "")
        anchor = url.split("#", 1)[-1]
        check(f"alert {r['alert']}: runbook_url points at a section of docs/runbook.md",
              url.startswith("https://runbooks.example/docs/runbook.md#") and anchor in anchors, url)
        check(f"alert {r['alert']}: severity and additional labels",
              r["labels"].get("severity") in {"warning", "critical"}
              and r["labels"].get("team") == "platform", str(r["labels"]))


def github_anchor(heading: str) -> str:
    """The id GitHub gives a Markdown heading."""
    text = heading.lstrip("#").strip().lower()
    return "".join(c for c in text.replace(" ", "-") if c.isalnum() or c in "-_")


def check_dashboard(chart: cc.Chart, chart_dir: str, promtool: str) -> None:
    check("Grafana dashboard off by default",
          not [c for c in of_kind(chart.render(), "ConfigMap")
               if c["metadata"]["name"].endswith("-dashboard")])
    docs = chart.render("--set", "metrics.grafanaDashboard.enabled=true")
    cms = [c for c in of_kind(docs, "ConfigMap") if c["metadata"]["name"].endswith("-dashboard")]
    if not check("grafanaDashboard.enabled renders the dashboard ConfigMap", len(cms) == 1):
        return
    cm = cms[0]
    check("dashboard ConfigMap carries the sidecar label grafana_dashboard=1",
          cm["metadata"]["labels"].get("grafana_dashboard") == "1", str(cm["metadata"]["labels"]))
    dash = json.loads(cm["data"]["uptime-service.json"])
    panels = [p for p in dash["panels"] if p["type"] != "row"]
    check("dashboard has a uid, a title and panels", bool(dash.get("uid")) and len(panels) >= 15,
          f"{len(panels)} panels")
    exprs = [t["expr"] for p in panels for t in p["targets"]]
    titles = " ".join(p["title"].lower() for p in panels)
    for topic in ["checks per second", "lateness", "consumer lag", "stream fullness", "dead letters",
                  "delivery outcomes", "alert latency", "latency p99", "error ratio", "region"]:
        check(f"dashboard shows {topic}", topic in titles, titles)
    ids = [p["id"] for p in dash["panels"]]
    check("dashboard panel ids are unique", len(ids) == len(set(ids)))
    # Grafana's variables replaced by values Prometheus accepts, then every
    # expression parsed by promtool as a recording rule.
    concrete = [e.replace("$__rate_interval", "5m").replace("$namespace", ".*") for e in exprs]
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"dashboard:expr_{i}", "expr": e} for i, e in enumerate(concrete)]}]}
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        yaml.safe_dump(rules, f)
        path = f.name
    proc = subprocess.run([promtool, "check", "rules", path], capture_output=True, text=True)
    os.unlink(path)
    check(f"every dashboard query ({len(exprs)}) is valid PromQL (promtool)",
          proc.returncode == 0, proc.stdout + proc.stderr)
    known = set(json.load(open(os.path.join(chart_dir, "files", "grafana-dashboard.json")))
                .keys())
    check("the ConfigMap holds files/grafana-dashboard.json verbatim", set(dash) == known)


def check_network_policies(chart: cc.Chart) -> None:
    check("NetworkPolicies off by default", not of_kind(chart.render(), "NetworkPolicy"))
    docs = chart.render(
        "--set", "networkPolicy.enabled=true",
        "--set-json", 'checker.regions=[{"name":"default"},{"name":"eu"}]',
        "--set-json", 'regions.known=["default","eu"]',
        "--set-json", 'networkPolicy.database.podSelector={"matchLabels":{"app":"pg"}}',
        "--set-json", 'networkPolicy.nats.podSelector={"matchLabels":{"app":"nats"}}')
    cc.validate_schemas("networkPolicy", docs)
    pols = {p["metadata"]["name"]: p for p in of_kind(docs, "NetworkPolicy")}
    pods = {component(d): d["spec"]["template"]["metadata"]["labels"]
            for d in of_kind(docs, "Deployment") + of_kind(docs, "Job")}
    test_pod = [d for d in of_kind(docs, "Pod")]
    if test_pod:
        pods["test"] = test_pod[0]["metadata"]["labels"]
    for comp, labels in pods.items():
        selecting = [p for p in pols.values()
                     if cc.matches(p["spec"]["podSelector"].get("matchLabels", {}), labels)]
        check(f"networkPolicy: pods of {comp} are selected by exactly one policy",
              len(selecting) == 1, str([p["metadata"]["name"] for p in selecting]))
        if not selecting:
            continue
        spec = selecting[0]["spec"]
        check(f"networkPolicy: {comp} is default-deny both ways",
              sorted(spec["policyTypes"]) == ["Egress", "Ingress"])
        egress = spec.get("egress", [])
        blocks = [t["ipBlock"] for e in egress for t in e.get("to", []) if "ipBlock" in t]
        wants_internet = comp.startswith("checker") or comp in ("notifier", "api-gateway")
        check(f"networkPolicy: {comp} {'reaches' if wants_internet else 'does not reach'} the internet",
              bool(blocks) == wants_internet, str(blocks))
        for b in blocks:
            net = ipaddress.ip_network(b["cidr"])
            excepted = [ipaddress.ip_network(x) for x in b.get("except", [])]
            forbidden = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.169.254/32",
                         "127.0.0.1/32"] if net.version == 4 else ["fc00::/7", "fe80::/10", "::1/128"]
            for f in map(ipaddress.ip_network, forbidden):
                check(f"networkPolicy: {comp} cannot reach {f}",
                      any(f.subnet_of(x) for x in excepted if x.version == f.version), str(b))
        ports = {p.get("port") for e in egress for p in e.get("ports", [])}
        if comp in SERVICES or comp.startswith("checker"):
            check(f"networkPolicy: {comp} reaches DNS, PostgreSQL and NATS",
                  {53, 5432, 4222} <= ports, str(ports))
            ing = spec.get("ingress", [])
            ops = [r for r in ing if {"port": "ops", "protocol": "TCP"} in r.get("ports", [])]
            check(f"networkPolicy: {comp}'s ops port admits monitoring and the helm test only",
                  len(ops) == 1 and len(ops[0].get("from", [])) == 2, str(ops))
            http = [r for r in ing if {"port": "http", "protocol": "TCP"} in r.get("ports", [])]
            public = comp in ("api-gateway", "status-pages")
            check(f"networkPolicy: {comp} {'opens' if public else 'has no'} its public port",
                  bool(http) == public, str(http))
        if comp == "migrate":
            check("networkPolicy: the migration hook reaches only DNS and PostgreSQL",
                  ports == {53, 5432} and not blocks, str(ports))
    for store, port in [("postgresql", 5432), ("nats", 4222)]:
        p = [x for n, x in pols.items() if n.endswith(f"-{store}-clients")]
        if not check(f"networkPolicy: {store} pods admit only our services", len(p) == 1):
            continue
        rule = p[0]["spec"]["ingress"][0]
        comps = rule["from"][0]["podSelector"]["matchExpressions"][1]["values"]
        check(f"networkPolicy: {store} admits every service (both checker regions) on {port}",
              {"api-gateway", "scheduler", "recorder", "notifier", "checker", "checker-eu"}
              <= set(comps) and rule["ports"] == [{"port": port, "protocol": "TCP"}], str(rule))
        check(f"networkPolicy: only PostgreSQL admits the migration hook",
              ("migrate" in comps) == (store == "postgresql"), str(comps))


def check_keda(chart: cc.Chart) -> None:
    check("KEDA off by default: no ScaledObject", not of_kind(chart.render(), "ScaledObject"))
    docs = chart.render("--set", "checker.keda.enabled=true", "--set", "recorder.keda.enabled=true",
                        "--set-json", 'checker.regions=[{"name":"default"},{"name":"eu"}]',
                        "--set-json", 'regions.known=["default","eu"]')
    scaled = {s["spec"]["scaleTargetRef"]["name"]: s for s in of_kind(docs, "ScaledObject")}
    deploys = {d["metadata"]["name"]: d for d in of_kind(docs, "Deployment")}
    want = {"uptime-checker": "checker", "uptime-checker-eu": "checker-eu", "uptime-recorder": "recorder"}
    check("KEDA: a ScaledObject per checker region and the recorder", set(scaled) == set(want),
          str(sorted(scaled)))
    for name, consumer in want.items():
        s = scaled.get(name)
        if not s:
            continue
        t = s["spec"]["triggers"][0]
        check(f"KEDA: {name} scales on consumer {consumer}'s JetStream lag",
              t["type"] == "nats-jetstream" and t["metadata"]["consumer"] == consumer
              and t["metadata"]["stream"] == ("UPTIME_RESULTS" if consumer == "recorder" else "UPTIME_CHECKS")
              and name in deploys, str(t))
        check(f"KEDA: {name} has no replica count of its own", "replicas" not in deploys[name]["spec"])
    hpas = {h["spec"]["scaleTargetRef"]["name"] for h in of_kind(docs, "HorizontalPodAutoscaler")}
    check("KEDA: no chart HPA on a Deployment KEDA scales", not (hpas & set(scaled)), str(hpas))


def check_helm_test(chart: cc.Chart) -> None:
    docs = chart.render("--set-json", 'checker.regions=[{"name":"default"},{"name":"eu"}]',
                        "--set-json", 'regions.known=["default","eu"]')
    pods = of_kind(docs, "Pod")
    if not check("helm test: one test pod", len(pods) == 1):
        return
    pod = pods[0]
    check("helm test: a helm.sh/hook=test pod",
          cc.hook_annotations(pod).get("helm.sh/hook") == "test")
    script = pod["spec"]["containers"][0]["args"][0]
    ops_services = [s["metadata"]["name"] for s in of_kind(docs, "Service")
                    if any(p["name"] == "ops" for p in s["spec"]["ports"])]
    check("helm test: asks /readyz of every service's ops Service (each checker region's too)",
          "/readyz" in script and len(ops_services) == 7 and all(s in script for s in ops_services),
          f"{ops_services}")
    image = pod["spec"]["containers"][0]["image"]
    check("helm test: runs the chart's own image", image == container(
        by_component(docs, "Deployment")["api-gateway"])["image"], image)
    check("helm test: can be turned off",
          not of_kind(chart.render("--set", "tests.enabled=false"), "Pod"))


def check_pod_options(chart: cc.Chart) -> None:
    digest = "sha256:" + "ab" * 32
    docs = chart.render("--set", f"image.digest={digest}", "--set", "priorityClassName=uptime-high",
                        "--set", "checker.priorityClassName=uptime-critical",
                        "--set", "nats.credentials.existingSecret=nats-user",
                        "--set-json", 'extraVolumes=[{"name":"ca","configMap":{"name":"private-ca"}}]',
                        "--set-json", 'extraVolumeMounts=[{"name":"ca","mountPath":"/etc/uptime/ca"}]')
    cc.validate_schemas("pod options", docs)
    for comp, d in by_component(docs, "Deployment").items():
        spec = d["spec"]["template"]["spec"]
        c = container(d)
        check(f"image.digest: {comp} pulls by digest",
              c["image"] == f"ghcr.io/uptime/uptime@{digest}", c["image"])
        check(f"priorityClassName: {comp}",
              spec.get("priorityClassName") == ("uptime-critical" if comp == "checker" else "uptime-high"),
              str(spec.get("priorityClassName")))
        vols = {v["name"]: v for v in spec["volumes"]}
        mounts = {m["name"]: m for m in c["volumeMounts"]}
        check(f"extraVolumes: {comp} mounts the chart-wide volume",
              "ca" in vols and mounts.get("ca", {}).get("mountPath") == "/etc/uptime/ca")
        env = env_map(c)
        creds = env.get("UPTIME_NATS__CREDENTIALS_FILE", {}).get("value")
        check(f"nats.credentials: {comp} reads the creds file from the Secret",
              vols.get("nats-credentials", {}).get("secret", {}).get("secretName") == "nats-user"
              and creds is not None and creds.startswith(mounts["nats-credentials"]["mountPath"])
              and mounts["nats-credentials"].get("readOnly") is True, f"{creds} {vols.get('nats-credentials')}")
    plain = by_component(chart.render(), "Deployment")
    check("no NATS credentials unless configured",
          not any("UPTIME_NATS__CREDENTIALS_FILE" in env_map(container(d)) for d in plain.values()))
    checker = plain["checker"]
    grace = checker["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
    shutdown = int(env_map(container(checker))["UPTIME_CHECKER__SHUTDOWN_GRACE_SECS"]["value"])
    check("checker: termination grace longer than its shutdown grace", grace > shutdown,
          f"{grace} <= {shutdown}")
    proc = chart.template("--set", "checker.terminationGracePeriodSeconds=30")
    check("checker: a termination grace not above the shutdown grace refuses to render",
          proc.returncode != 0 and "shutdownGraceSeconds" in proc.stderr, proc.stderr[-300:])
    for bad in ["image.digest=latest", "networkPolicy.database.port=0", "tests.timeoutSeconds=0",
                "checker.keda.lagThreshold=0"]:
        proc = chart.template("--set", bad)
        check(f"schema rejects --set {bad}", proc.returncode != 0 and "schema" in proc.stderr,
              f"rc={proc.returncode} {proc.stderr.strip()[:200]}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--helm", required=True)
    ap.add_argument("--chart", required=True)
    ap.add_argument("--promtool", required=True)
    ap.add_argument("--runbook", required=True)
    args = ap.parse_args()
    chart = cc.Chart(args.helm, args.chart)
    guarded("prometheus rules", lambda: check_rules(chart, args.chart, args.promtool, args.runbook))
    guarded("grafana dashboard", lambda: check_dashboard(chart, args.chart, args.promtool))
    guarded("network policies", lambda: check_network_policies(chart))
    guarded("keda", lambda: check_keda(chart))
    guarded("helm test", lambda: check_helm_test(chart))
    guarded("pod options", lambda: check_pod_options(chart))
    print(f"check_operations: {cc.passed} passed, {cc.failed} failed")
    return 1 if cc.failed else 0


if __name__ == "__main__":
    sys.exit(main())
