"""The acknowledge links' signing key in the chart (check_chart.py runs these
with itself as `h`, for its counters and helpers): the chart's Secret makes
one once and keeps it, a value brings your own, an existing Secret may hold
it, and only the api-gateway (which checks links) and the notifier (which
signs them) get it."""

from __future__ import annotations

import base64
import os
import re
from types import ModuleType

KEY = "ack-links-secret"
VAR = "UPTIME_ACK_LINKS__SECRET"
HOLDERS = ("api-gateway", "notifier")


def _chart_secret_data(h: ModuleType, docs: list[dict]) -> dict:
    regular = [s for s in h.of_kind(docs, "Secret") if "helm.sh/hook" not in h.hook_annotations(s)]
    return regular[0].get("data", {}) if regular else {}


def check_wiring(h: ModuleType, label: str, docs: list[dict], existing: str | None) -> None:
    for comp, d in h.by_component(docs, "Deployment").items():
        env = h.env_map(h.container(d))
        ref = env.get(VAR, {}).get("valueFrom", {}).get("secretKeyRef", {})
        if comp in HOLDERS:
            h.check(f"{label}: {comp} gets the ack links key from the Secret",
                    ref.get("key") == KEY
                    and ref.get("name") == (existing or h.RELEASE)
                    # An existing Secret from before the chart knew the key
                    # still starts the pods (no key: no links).
                    and bool(ref.get("optional")) == bool(existing), str(ref))
        else:
            h.check(f"{label}: {comp} gets no ack links key", VAR not in env, str(sorted(env)))
    for job in h.of_kind(docs, "Job"):
        env = h.env_map(job["spec"]["template"]["spec"]["containers"][0])
        h.check(f"{label}: the migration Job gets no ack links key", VAR not in env)
    if existing is None:
        raw = base64.b64decode(base64.b64decode(_chart_secret_data(h, docs).get(KEY, "")))
        h.check(f"{label}: chart Secret holds a 32-byte ack links key", len(raw) == 32,
                f"{len(raw)} bytes")


def check_variations(h: ModuleType, chart) -> None:
    given = base64.b64encode(bytes(range(32))).decode()
    data = _chart_secret_data(h, chart.render("--set", f"secrets.ackLinksSecret={given}"))
    h.check("ack links: a key given in the values is the Secret's",
            base64.b64decode(data.get(KEY, "")).decode() == given, str(data.get(KEY)))
    for bad in ("secrets.ackLinksSecret=tooshort", "secrets.ackLinksSecretKey="):
        proc = chart.template("--set", bad)
        h.check(f"schema rejects --set {bad}", proc.returncode != 0 and "schema" in proc.stderr,
                f"rc={proc.returncode} {proc.stderr.strip()[:200]}")
    # Kept across upgrades: `helm template` has no cluster to look the
    # Secret up in, so this reads the template: the key this release's
    # Secret already holds comes before a new random one.
    text = open(os.path.join(chart.chart, "templates", "secret.yaml")).read()
    h.check("ack links: the chart's Secret keeps the key it holds (lookup) before making one",
            re.search(r'lookup "v1" "Secret"', text) is not None
            and re.search(r"index \$held \$ackKey \| default \(randBytes 32", text) is not None)
    docs = chart.render("--set", "http.publicBaseUrl=https://uptime.example.com")
    config = h.of_kind(docs, "ConfigMap")[0]["data"]
    h.check("ack links: the links lead to http.publicBaseUrl",
            config.get("UPTIME_ACK_LINKS__PUBLIC_BASE_URL") == "https://uptime.example.com",
            repr(config.get("UPTIME_ACK_LINKS__PUBLIC_BASE_URL")))
