"""PERFORMANCE.md, "P3b", driver: run the four clients on one machine state and tabulate them.

Called by scripts/big-answers.sh (which builds the binaries and installs the deps); stdlib only.

For each size, in rounds, the clients run one after the other (ringmcp, rmcp, TypeScript SDK,
Python SDK), so every client sees the same machine state. Each run is one process: it spawns
`ringmcp serve`, initializes, calls `blob` once and prints one JSON line (see benches/big_answers.rs).
The driver adds:

* `wall_seconds`: the client process from exec to exit (runtime start-up, spawn, initialize,
  call, shutdown);
* `tree_peak_rss_kib`: `ru_maxrss` from wait4, which also covers any child the client reaped
  (the server): kept for reference only; the table uses the client's own `peak_rss_kib`;
* `load1` and `builds`: the 1-minute load average and the number of cargo/rustc processes
  running when the run started, to flag a noisy machine.

A client that fails at a size is not run again at that size nor at larger ones ("skipped").
A client is not repeated at a size once its runs there took `--rep-budget` seconds in total.
A run is killed (with the server: each run is its own process group) `--grace` seconds after
`--limit`; the clients stop waiting for the answer at `--limit` themselves.
"""

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

CLIENTS = ("ringmcp", "rmcp", "ts-sdk", "python-sdk")
LABELS = {
    "ringmcp": "ringmcp",
    "rmcp": "rmcp 3.11 (Rust SDK)",
    "ts-sdk": "TypeScript SDK",
    "python-sdk": "Python SDK",
}


def parse_size(text: str) -> int:
    units = {"GiB": 1 << 30, "MiB": 1 << 20, "KiB": 1 << 10, "GB": 10**9, "MB": 10**6, "KB": 10**3, "B": 1}
    for unit, factor in units.items():
        if text.endswith(unit):
            return int(float(text[: -len(unit)]) * factor)
    return int(text)


def size_label(n: int) -> str:
    for unit, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("GB", 10**9), ("MB", 10**6)):
        if n >= factor and n % factor == 0:
            return f"{n // factor} {unit}"
    return f"{n:,} B"


def builds_running() -> int:
    """cargo/rustc processes on the machine (other engineers' builds make the numbers noisy)."""
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() in ("cargo", "rustc"):
                    count += 1
            except OSError:
                pass
    return count


def load1() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def command(client: str, args: argparse.Namespace, n: int) -> list[str]:
    common = ["--server", args.server, "--bytes", str(n), "--timeout", str(args.limit)]
    if client in ("ringmcp", "rmcp"):
        return [args.client_bin, client, *common]
    if client == "ts-sdk":
        return ["node", str(args.here / "client.mjs"), *common, "--node-modules", f"{args.deps}/npm/node_modules"]
    return [f"{args.deps}/venv/bin/python", str(args.here / "client.py"), *common]


def run_once(client: str, n: int, args: argparse.Namespace, log) -> dict:
    """One client process; its JSON line plus what the driver measured, or a failure record."""
    cmd = command(client, args, n)
    state = {"load1": load1(), "builds": builds_running()}
    log.write(f"\n### {client} {n} bytes: {' '.join(cmd)}\n")
    log.flush()
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, start_new_session=True)
    killed = threading.Event()

    def kill() -> None:
        killed.set()
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    timer = threading.Timer(args.limit + args.grace, kill)
    timer.start()
    chunks: list[bytes] = []
    reader = threading.Thread(target=lambda: chunks.append(proc.stdout.read()))
    reader.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    timer.cancel()
    # The server may outlive a killed or careless client: it is in the same process group.
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    reader.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    text = b"".join(chunks).decode(errors="replace").strip().splitlines()
    record = {"client": client, "bytes": n, "ok": False, "seconds": None, "error": None}
    if killed.is_set():
        record["error"] = f"did not finish in {args.limit:.0f} s (killed by the driver after {wall:.0f} s)"
    elif not text:
        record["error"] = f"exited with status {proc.returncode} without a result (see the log)"
    else:
        try:
            record = json.loads(text[-1])
        except json.JSONDecodeError:
            record["error"] = f"unreadable result line: {text[-1][:200]!r}"
    record.update(wall_seconds=wall, tree_peak_rss_kib=usage.ru_maxrss, exit=proc.returncode, **state)
    return record


def measure(args: argparse.Namespace, results, log) -> list[dict]:
    records: list[dict] = []
    failed: dict[str, str] = {}  # client -> "failed at SIZE"

    def emit(record: dict) -> None:
        records.append(record)
        results.write(json.dumps(record) + "\n")
        results.flush()
        shown = "ok" if record.get("ok") else (record.get("error") or "failed")
        secs = record.get("seconds")
        print(
            f"[big-answers] {size_label(record['bytes']):>8} {record['client']:<11} "
            f"{'' if secs is None else f'{secs:9.3f} s '}{shown}",
            file=sys.stderr,
            flush=True,
        )

    for n in args.sizes:
        spent = dict.fromkeys(CLIENTS, 0.0)
        done_here: set[str] = set()
        for client in CLIENTS:
            if client in failed:
                emit({"client": client, "bytes": n, "ok": False, "skipped": True, "error": f"skipped: {failed[client]}"})
                done_here.add(client)
        for _ in range(args.reps):
            for client in CLIENTS:
                if client in done_here:
                    continue
                record = run_once(client, n, args, log)
                emit(record)
                spent[client] += record["wall_seconds"]
                if not record.get("ok"):
                    failed[client] = f"failed at {size_label(n)}"
                    done_here.add(client)
                elif spent[client] > args.rep_budget:
                    done_here.add(client)
    return records


def fmt_secs(s: float) -> str:
    return f"{s:.3f}" if s < 10 else f"{s:.1f}"


def fmt_rate(bytes_per_s: float) -> str:
    mb = bytes_per_s / 1e6
    return f"{mb:,.0f}" if mb >= 100 else f"{mb:.3g}"


def collapse(error: str) -> str:
    """'x | x | x' -> 'x (3 times)': a message repeated once per chunk says nothing more."""
    for marker in ("onerror: ", "logged: "):  # what the clients put before the SDK's messages
        if marker in error:
            head, tail = error.split(marker, 1)
            return head + marker + collapse(tail)
    parts: list[list] = []
    for part in error.split(" | "):
        if parts and parts[-1][0] == part:
            parts[-1][1] += 1
        else:
            parts.append([part, 1])
    return " | ".join(p if k == 1 else f"{p} ({k} times)" for p, k in parts)


def table(records: list[dict], sizes: list[int]) -> str:
    lines = [
        "| size | client | runs | call s, median (min–max) | MB/s | × ringmcp time | process wall s | client peak RSS |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for n in sizes:
        by_client = {c: [r for r in records if r["bytes"] == n and r["client"] == c] for c in CLIENTS}
        ok_ring = [r["seconds"] for r in by_client["ringmcp"] if r.get("ok")]
        ring = statistics.median(ok_ring) if ok_ring else None
        for client in CLIENTS:
            runs = by_client[client]
            if not runs:
                continue
            ok = [r for r in runs if r.get("ok")]
            bad = [r for r in runs if not r.get("ok")]
            head = f"| {size_label(n)} | {LABELS[client]} |"
            if bad and bad[0].get("skipped"):
                lines.append(f"{head} 0 | not run: {bad[0]['error'].removeprefix('skipped: ')} | — | — | — | — |")
                continue
            if bad:
                text = collapse(bad[0]["error"]).replace("|", "\\|")
                secs = bad[0].get("seconds")
                after = "" if secs is None else f" (after {fmt_secs(secs)} s)"
                rss = bad[0].get("peak_rss_kib")
                rss = f"{rss / 1024:.0f} MiB" if rss else "—"
                lines.append(f"{head} {len(runs)} | **failed**: {text}{after} | — | — | — | {rss} |")
                continue
            secs = [r["seconds"] for r in ok]
            med = statistics.median(secs)
            wall = statistics.median(r["wall_seconds"] for r in ok)
            rss = max(r["peak_rss_kib"] for r in ok) / 1024
            ratio = f"×{med / ring:.2f}" if ring else "—"
            spread = f" ({fmt_secs(min(secs))}–{fmt_secs(max(secs))})" if len(secs) > 1 else ""
            lines.append(
                f"{head} {len(ok)} | {fmt_secs(med)}{spread} | {fmt_rate(n / med)} | {ratio} | {fmt_secs(wall)} | {rss:.0f} MiB |"
            )
    return "\n".join(lines) + "\n"


def report(header: dict, records: list[dict], footer: dict) -> str:
    sizes = sorted({r["bytes"] for r in records})
    runs = [r for r in records if "wall_seconds" in r]
    noisy = sum(1 for r in runs if r["builds"] > 0)
    return table(records, sizes) + (
        f"\nStarted {header['started']}, finished {footer['finished']}. Load (1 min) at the start of each run: "
        f"{min(r['load1'] for r in runs):.2f}–{max(r['load1'] for r in runs):.2f}; "
        f"{noisy} of {len(runs)} runs started while cargo/rustc processes were running. "
        f"ringmcp spill folder: {header['spill_dir']}.\n"
    )


def render(path: str) -> str:
    """The table of an earlier run, from its results.jsonl."""
    header, footer, records = {}, {}, []
    for line in Path(path).read_text().splitlines():
        item = json.loads(line)
        header = item.get("header", header)
        footer = item.get("footer", footer)
        if "client" in item:
            records.append(item)
    return report(header, records, footer)


def main() -> int:
    parser = argparse.ArgumentParser(description="P3b: ringmcp vs rmcp vs TS SDK vs Python SDK")
    parser.add_argument("--server", help="the ringmcp binary (`ringmcp serve` is the server)")
    parser.add_argument("--client-bin", help="the built benches/big_answers.rs binary")
    parser.add_argument("--deps", help="the .deps folder (npm/, venv/)")
    parser.add_argument("--sizes", default="10MB,100MB,1GiB")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--limit", type=float, default=300.0, help="seconds a call may take")
    parser.add_argument("--grace", type=float, default=60.0, help="seconds past --limit before a kill")
    parser.add_argument("--rep-budget", type=float, default=150.0, help="stop repeating past this many s")
    parser.add_argument("--out", help="folder for results.jsonl, table.md, clients.log")
    parser.add_argument("--render", metavar="RESULTS_JSONL", help="only print the table of an earlier run")
    args = parser.parse_args()
    if args.render:
        print(render(args.render))
        return 0
    if not (args.server and args.client_bin and args.deps and args.out):
        parser.error("--server, --client-bin, --deps and --out are required to run")
    args.here = Path(__file__).resolve().parent
    args.sizes = [parse_size(s) for s in args.sizes.split(",")]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    header = {
        "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "load1": load1(),
        "builds": builds_running(),
        "spill_dir": (os.environ.get("XDG_RUNTIME_DIR") or "/tmp") + "/ringmcp",
    }
    with open(out / "results.jsonl", "w") as results, open(out / "clients.log", "w") as log:
        results.write(json.dumps({"header": header}) + "\n")
        records = measure(args, results, log)
        footer = {"finished": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "load1": load1(), "builds": builds_running()}
        results.write(json.dumps({"footer": footer}) + "\n")
    md = report(header, records, footer)
    (out / "table.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
