"""Load and soak: ``fairops serve --workers 2`` beside ``mlflow models serve --workers 2`` on the same model.

    python benchmarks/serve_load.py                  # 1, 8 and 32 clients, then a 10-minute soak
    python benchmarks/serve_load.py --quick          # the smoke test's setting: 1 and 8 clients, a 3 s soak,
                                                     # one worker per server

Registers examples/promote_and_monitor.py's logistic regression (features a, b, c) in a fresh SQLite store
and starts both servers on loopback from its registry URI (``models:/serve-load/1``; MLflow's with
``--env-manager local``, the environment running this script). For each number of clients, each server in
turn (the order alternates between levels) gets that many client threads, each holding one keep-alive
``http.client`` connection and POSTing the same body (``--rows`` rows as ``dataframe_split``) until
``--requests`` answers in all or ``--seconds`` have passed, whichever comes first. Reported: answers per
second, p50 and p99 latency, errors (an answer other than 200 with predictions, or a broken connection), the
servers' resident memory after the level (every process of the server: uvicorn's supervisor and its
workers), and the load average at the end of the level. ``x mlflow req/s`` is a server's rate over
``mlflow models serve``'s at the same level, measured in the same run.

The soak then sends ``--soak-clients`` clients to ``fairops serve`` alone for ``--soak-minutes``, sampling
the server's resident memory every ``--sample-seconds``. The bound: after the first tenth of the soak
(warm-up), resident memory never exceeds that first reading by more than ``--growth-mb``; the last line
says whether it held.

The client runs in this process (threads + ``http.client``, no new dependency) on the same machine as
the servers: on 2 cores it takes CPU from the servers' two workers, so the rates are those of this client
and server together, and the load average column shows what else the machine was running.
"""

from __future__ import annotations

import argparse
import http.client
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "promote_and_monitor.py"
NAME = "serve-load"
HEADERS = {"Content-Type": "application/json"}


def register(folder: Path) -> tuple[str, str, list]:
    """``(tracking URI, model URI, feature names)`` of the example's classifier, registered in ``folder``."""
    spec = importlib.util.spec_from_file_location("promote_and_monitor", EXAMPLE)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    uri = f"sqlite:///{folder}/mlflow.db"
    example.register_version(uri, NAME)
    return uri, f"models:/{NAME}/1", example


def request_body(example, rows: int) -> bytes:
    frame = example.make_rows(7, rows)[example.FEATURES]
    return json.dumps({"dataframe_split": frame.to_dict(orient="split", index=False)}).encode()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(kind: str, model_uri: str, tracking_uri: str, port: int, log: Path, workers: int = 2):
    """``fairops serve`` or ``mlflow models serve`` in a process group of its own (stopped by its id)."""
    bin_dir = Path(sys.executable).parent
    if kind == "fairops serve":
        command = [sys.executable, "-m", "fairops.cli", "serve", model_uri, "--tracking-uri", tracking_uri,
                   "--workers", str(workers), "--port", str(port)]
    else:
        command = [str(bin_dir / "mlflow"), "models", "serve", "-m", model_uri, "--env-manager", "local",
                   "--workers", str(workers), "--host", "127.0.0.1", "--port", str(port)]
    env = {**os.environ, "MLFLOW_TRACKING_URI": tracking_uri, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    with open(log, "w") as handle:
        return subprocess.Popen(command, env=env, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True)


def wait_ready(port: int, process, log: Path, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", "/ping")
            if connection.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"server on port {port} not ready after {timeout} s:\n{log.read_text()[-3000:]}")


def stop(process) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def resident_mb(group: int) -> float:
    """Resident memory (MiB) of every process in the process group ``group`` (a server and its workers)."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            if int(fields[2]) != group:  # the fifth field of stat: the process group
                continue
            with open(f"/proc/{entry}/status") as handle:
                total += next(int(line.split()[1]) for line in handle if line.startswith("VmRSS:"))
        except (OSError, StopIteration, IndexError, ValueError):  # the process ended meanwhile
            continue
    return total / 1024


def _client(port: int, body: bytes, budget: list, deadline: float, lock, results: list) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    while True:
        with lock:
            if budget[0] <= 0 or time.monotonic() > deadline:
                break
            budget[0] -= 1
        began = time.perf_counter()
        try:
            connection.request("POST", "/invocations", body, HEADERS)
            answer = connection.getresponse()
            ok = answer.status == 200 and answer.read().startswith(b'{"predictions"')
        except (OSError, http.client.HTTPException):
            ok = False
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        results.append((time.perf_counter() - began, ok))
    connection.close()


def run_load(port: int, body: bytes, clients: int, requests: int, seconds: float) -> dict:
    """``clients`` threads POSTing ``body`` until ``requests`` answers or ``seconds``: rate, latency, errors."""
    budget, lock, results = [requests], threading.Lock(), []
    began = time.perf_counter()
    deadline = time.monotonic() + seconds
    threads = [threading.Thread(target=_client, args=(port, body, budget, deadline, lock, results))
               for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    latencies = sorted(latency for latency, _ in results)
    return {"requests": len(results), "errors": sum(not ok for _, ok in results), "seconds": elapsed,
            "per_second": len(results) / elapsed if elapsed else 0.0,
            "p50_ms": 1000 * _quantile(latencies, 0.50), "p99_ms": 1000 * _quantile(latencies, 0.99)}


def _quantile(ordered: list, q: float) -> float:
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def load_table(servers: dict, body: bytes, levels, requests: int, seconds: float) -> list[dict]:
    """Each level of clients against each server (order alternating), with memory and load average after it."""
    rows = []
    for index, clients in enumerate(levels):
        kinds = list(servers) if index % 2 == 0 else list(servers)[::-1]
        for kind in kinds:
            port, process = servers[kind]
            result = run_load(port, body, clients, requests, seconds)
            rows.append({"server": kind, "clients": clients, **result, "rss_mb": resident_mb(process.pid),
                         "load": os.getloadavg()[0]})
    return rows


def soak(port: int, process, body: bytes, clients: int, minutes: float, sample_seconds: float) -> list[dict]:
    """``clients`` clients for ``minutes``, one sample of rate, errors and resident memory per ``sample_seconds``."""
    samples, end = [], time.monotonic() + 60 * minutes
    while time.monotonic() < end:
        result = run_load(port, body, clients, 10**9, min(sample_seconds, end - time.monotonic()))
        samples.append({"at_s": 60 * minutes - (end - time.monotonic()), **result,
                        "rss_mb": resident_mb(process.pid), "load": os.getloadavg()[0]})
    return samples


def memory_held(samples: list[dict], growth_mb: float) -> dict:
    """The soak's bound: after the first tenth (warm-up), memory stays within ``growth_mb`` of its first reading."""
    after = samples[max(1, len(samples) // 10):] or samples
    baseline, peak = after[0]["rss_mb"], max(s["rss_mb"] for s in after)
    return {"baseline_mb": baseline, "peak_mb": peak, "last_mb": after[-1]["rss_mb"], "bound_mb": growth_mb,
            "held": peak - baseline <= growth_mb}


def print_load(rows: list[dict]) -> None:
    anchor = {row["clients"]: row["per_second"] for row in rows if row["server"] == "mlflow models serve"}
    print("| server | clients | requests | errors | req/s | p50 ms | p99 ms | x mlflow req/s | RSS MB | load avg |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        ratio = row["per_second"] / anchor[row["clients"]] if anchor.get(row["clients"]) else float("nan")
        print(f"| {row['server']} | {row['clients']} | {row['requests']} | {row['errors']} | {row['per_second']:.1f} "
              f"| {row['p50_ms']:.1f} | {row['p99_ms']:.1f} | {ratio:.2f} | {row['rss_mb']:.0f} | {row['load']:.2f} |")


def print_soak(samples: list[dict], verdict: dict) -> None:
    print("| at s | requests | errors | req/s | p99 ms | RSS MB | load avg |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for sample in samples:
        print(f"| {sample['at_s']:.0f} | {sample['requests']} | {sample['errors']} | {sample['per_second']:.1f} "
              f"| {sample['p99_ms']:.1f} | {sample['rss_mb']:.0f} | {sample['load']:.2f} |")
    print(f"soak: {sum(s['requests'] for s in samples)} requests, {sum(s['errors'] for s in samples)} errors; "
          f"resident memory after warm-up {verdict['baseline_mb']:.0f} MB, peak {verdict['peak_mb']:.0f} MB, last "
          f"{verdict['last_mb']:.0f} MB; bound +{verdict['bound_mb']:.0f} MB: "
          f"{'held' if verdict['held'] else 'NOT held'}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="1 and 8 clients, 20 requests each, a 3 s soak, one worker per server")
    parser.add_argument("--workers", type=int, default=2, help="worker processes of each server")
    parser.add_argument("--levels", default="1,8,32", help="numbers of concurrent clients")
    parser.add_argument("--requests", type=int, default=4000, help="answers per level and server, at most")
    parser.add_argument("--seconds", type=float, default=60, help="seconds per level and server, at most")
    parser.add_argument("--rows", type=int, default=10, help="rows per request")
    parser.add_argument("--soak-minutes", type=float, default=10)
    parser.add_argument("--soak-clients", type=int, default=8)
    parser.add_argument("--sample-seconds", type=float, default=30)
    parser.add_argument("--growth-mb", type=float, default=50, help="the soak's bound on resident memory growth")
    args = parser.parse_args(argv)
    if args.quick:
        args.levels, args.requests, args.seconds = "1,8", 20, 5
        args.soak_minutes, args.sample_seconds, args.workers = 3 / 60, 1, 1
    levels = [int(level) for level in args.levels.split(",")]
    with tempfile.TemporaryDirectory(prefix="serve-load-") as scratch:
        folder = Path(scratch)
        tracking_uri, model_uri, example = register(folder)
        body = request_body(example, args.rows)
        servers = {}
        try:
            logs = {}
            for kind in ("fairops serve", "mlflow models serve"):  # both start at once: neither is timed yet
                port, logs[kind] = free_port(), folder / f"{kind.split()[0]}.log"
                servers[kind] = (port, start_server(kind, model_uri, tracking_uri, port, logs[kind], args.workers))
            for kind, (port, process) in servers.items():
                wait_ready(port, process, logs[kind])
                run_load(port, body, 2, 40, 30)  # warm-up: every worker has answered
            print(f"{model_uri}: {args.rows} rows per request, {args.workers} workers per server, {os.cpu_count()} "
                  f"cores, load average at start {os.getloadavg()[0]:.2f}")
            print_load(load_table(servers, body, levels, args.requests, args.seconds))
            stop(servers.pop("mlflow models serve")[1])
            port, process = servers["fairops serve"]
            samples = soak(port, process, body, args.soak_clients, args.soak_minutes, args.sample_seconds)
            print()
            print_soak(samples, memory_held(samples, args.growth_mb))
        finally:
            for _, process in servers.values():
                stop(process)
    return 0


if __name__ == "__main__":
    sys.exit(main())
