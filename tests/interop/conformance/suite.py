#!/usr/bin/env python3
"""Runs the official MCP conformance suite scenario by scenario and scores it.

Called by run.sh (which installs Node 22 and the suite and finds the server URL);
standard library only. Each scenario runs as its own
`conformance server --url URL --scenario S --spec-version REV --force -o DIR`
process, so scenarios are independent and may run side by side (--jobs).

A scenario passes when its checks.json has no FAILURE and at least one SUCCESS
(WARNING, INFO and SKIPPED neither fail nor pass a scenario). The exit status is
1 when a scored scenario fails that tests/interop/expected-failures.txt does not
list (lines `conformance <revision> <scenario>  # <owning issue>`), 0 otherwise.
"""

from __future__ import annotations

import argparse
import concurrent.futures as futures
import glob
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field

# The suite's frozen requirement sets (`conformance list --server --requirements REV`),
# less what a tools-only server does not serve (completion, resources, prompts, tasks).
# See CONFORMANCE.md in the shared notes for the reasoning.
SCORED = {
    "2025-11-25": [
        "server-initialize",
        "ping",
        "logging-set-level",
        "tools-list",
        "tools-call-simple-text",
        "tools-call-image",
        "tools-call-audio",
        "tools-call-embedded-resource",
        "tools-call-mixed-content",
        "tools-call-error",
        "tools-call-with-logging",
        "tools-call-with-progress",
        "tools-call-sampling",
        "tools-call-elicitation",
        "elicitation-sep1034-defaults",
        "elicitation-sep1330-enums",
        "server-sse-multiple-streams",
        "dns-rebinding-protection",
    ],
    "2026-07-28": [
        "server-stateless",
        "tools-list",
        "tools-call-simple-text",
        "tools-call-image",
        "tools-call-audio",
        "tools-call-embedded-resource",
        "tools-call-mixed-content",
        "tools-call-error",
        "tools-call-with-progress",
        "server-sse-multiple-streams",
        "dns-rebinding-protection",
        "caching",
        "input-required-result-basic-elicitation",
        "input-required-result-basic-sampling",
        "input-required-result-basic-list-roots",
        "input-required-result-request-state",
        "input-required-result-multiple-input-requests",
        "input-required-result-multi-round",
        "input-required-result-missing-input-response",
        "input-required-result-result-type",
        "input-required-result-unsupported-methods",
        "input-required-result-tampered-state",
        "input-required-result-capability-check",
        "input-required-result-ignore-extra-params",
        "input-required-result-validate-input",
    ],
}
# Run and reported, never scored (the suite marks them pending / added-after-release).
EXTRAS = {
    "2025-11-25": ["server-session-lifecycle", "json-schema-2020-12", "server-sse-polling"],
    "2026-07-28": [
        "json-schema-2020-12",
        "http-header-validation",
        "http-custom-header-server-validation",
    ],
}
REVISIONS = list(SCORED)
MSG_MAX = 400  # characters of a failing check's message shown per line


@dataclass
class Outcome:
    rev: str
    scenario: str
    scored: bool
    passed: bool = False
    counts: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)  # (status, check id, message)
    seconds: float = 0.0
    log: str = ""


def shorten(text: str, limit: int = MSG_MAX) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_message(check: dict) -> str:
    msg = check.get("errorMessage")
    if not msg:
        details = check.get("details")
        if isinstance(details, dict):
            msg = details.get("message") or details.get("reason")
    return shorten(msg or check.get("description") or "")


def evaluate(out: Outcome, checks_path: str | None, rc: int, timed_out: bool) -> None:
    if checks_path is None:
        why = "killed after the hard time limit" if timed_out else f"runner exit code {rc}"
        out.problems.append(("ERROR", "no-checks-json", f"no checks.json ({why}); see {out.log}"))
        return
    try:
        with open(checks_path, encoding="utf-8") as f:
            checks = json.load(f)
        if not isinstance(checks, list):
            raise ValueError("checks.json is not a list")
    except (OSError, ValueError) as e:
        out.problems.append(("ERROR", "bad-checks-json", f"{checks_path}: {e}"))
        return
    for c in checks:
        status = str(c.get("status", "?"))
        out.counts[status] = out.counts.get(status, 0) + 1
        if status in ("FAILURE", "WARNING"):
            out.problems.append((status, str(c.get("id", "?")), check_message(c)))
    out.passed = out.counts.get("FAILURE", 0) == 0 and out.counts.get("SUCCESS", 0) >= 1
    if not out.passed and out.counts.get("FAILURE", 0) == 0:
        out.problems.append(("ERROR", "no-success", "no check succeeded"))


def run_one(args, rev: str, scenario: str, scored: bool) -> Outcome:
    out = Outcome(rev, scenario, scored)
    result_dir = os.path.join(args.out, rev, scenario)
    os.makedirs(result_dir, exist_ok=True)
    for old in glob.glob(os.path.join(result_dir, "*", "checks.json")):
        os.remove(old)
    out.log = os.path.join(result_dir, "runner.log")
    cmd = [
        args.node, args.cli, "server",
        "--url", args.url,
        "--scenario", scenario,
        "--spec-version", rev,
        "--force",
        "--timeout", str(args.timeout_ms),
        "-o", result_dir,
    ]
    # The suite bounds each scenario itself (--timeout); this is only a backstop.
    hard_limit = args.timeout_ms / 1000 + 30
    start = time.monotonic()
    rc, timed_out = -1, False
    with open(out.log, "wb") as log:
        try:
            proc = subprocess.run(
                cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                timeout=hard_limit, env={**os.environ, "NO_COLOR": "1", "FORCE_COLOR": "0"},
            )
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            timed_out = True
    out.seconds = time.monotonic() - start
    found = sorted(glob.glob(os.path.join(result_dir, "*", "checks.json")))
    evaluate(out, found[-1] if found else None, rc, timed_out)
    return out


def read_expected(path: str) -> dict:
    """`conformance <rev> <scenario>  # title` lines -> {(rev, scenario): title}."""
    expected = {}
    if not os.path.exists(path):
        return expected
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            body, _, comment = line.partition("#")
            words = body.split()
            if not words or words[0] != "conformance":
                continue
            if len(words) != 3:
                print(f"warning: {path}:{lineno}: expected `conformance <revision> <scenario>  # <issue>`")
                continue
            expected[(words[1], words[2])] = comment.strip()
    return expected


def describe(o: Outcome) -> str:
    order = ("SUCCESS", "FAILURE", "WARNING", "INFO", "SKIPPED")
    parts = [f"{o.counts[k]} {k.lower()}" for k in order if o.counts.get(k)]
    parts += [f"{v} {k.lower()}" for k, v in o.counts.items() if k not in order]
    return f"{', '.join(parts) or 'no checks'}; {o.seconds:.1f}s"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", required=True)
    ap.add_argument("--node", required=True)
    ap.add_argument("--cli", required=True, help="path of the suite's dist/index.js")
    ap.add_argument("--out", required=True, help="results folder")
    ap.add_argument("--expected", required=True, help="expected-failures.txt")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout-ms", type=int, default=30000)
    ap.add_argument("--only", default="", help="regex on '<rev> <scenario>' to run a subset")
    ap.add_argument("--no-extras", action="store_true")
    args = ap.parse_args()

    plan = [(rev, s, True) for rev in REVISIONS for s in SCORED[rev]]
    if not args.no_extras:
        plan += [(rev, s, False) for rev in REVISIONS for s in EXTRAS[rev]]
    filtered = bool(args.only)
    if filtered:
        pat = re.compile(args.only)
        plan = [p for p in plan if pat.search(f"{p[0]} {p[1]}")]

    expected = read_expected(args.expected)
    for rev, scen in expected:
        if scen not in SCORED.get(rev, []):
            print(f"warning: {args.expected} lists `conformance {rev} {scen}`, which is not a scored scenario")

    started = time.monotonic()
    with futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        jobs = [pool.submit(run_one, args, rev, s, scored) for rev, s, scored in plan]
        results = [j.result() for j in jobs]  # plan order, whatever the finishing order
    total = time.monotonic() - started

    unexpected, fixed = [], []
    for o in results:
        key = (o.rev, o.scenario)
        tag = ""
        if o.scored:
            if not o.passed and key in expected:
                tag = f"  [expected: {expected[key]}]"
            elif not o.passed:
                tag = "  [UNEXPECTED]"
                unexpected.append(o)
            elif key in expected:
                tag = "  [expected to fail, now passes]"
                fixed.append(o)
        else:
            tag = "  (extra, not scored)"
        print(f"{'PASS' if o.passed else 'FAIL'} conformance {o.rev} {o.scenario} ({describe(o)}){tag}")
        for status, cid, msg in o.problems:
            if o.passed and status != "WARNING":
                continue
            print(f"    {status} {cid}: {msg}")

    print()
    for o in fixed:
        print(f"NOTICE: conformance {o.rev} {o.scenario} passes now: remove its line from {args.expected}")
    for o in unexpected:
        print(f"ERROR: conformance {o.rev} {o.scenario} failed and is not listed in {args.expected} (log: {o.log})")
    for rev in REVISIONS:
        scored = [o for o in results if o.scored and o.rev == rev]
        if not scored:
            continue
        denominator = len(scored) if filtered else len(SCORED[rev])
        note = " (filtered run)" if filtered else ""
        print(f"conformance {rev}: {sum(o.passed for o in scored)}/{denominator} scored scenarios passed{note}")
    extras = [o for o in results if not o.scored]
    if extras:
        print(f"conformance extras: {sum(o.passed for o in extras)}/{len(extras)} passed (not scored)")
    print(f"conformance: {len(results)} scenario runs in {total:.1f}s with {args.jobs} job(s); results in {args.out}")
    scored = [o for o in results if o.scored]
    # The closing line counts scored scenarios like run_clients.sh counts its runs:
    # "skipped" are the failures listed as expected.
    print(f"conformance: {sum(o.passed for o in scored)} passed, {len(unexpected)} failed, "
          f"{sum(not o.passed for o in scored) - len(unexpected)} skipped")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
