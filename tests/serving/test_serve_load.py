"""`fairops serve --workers 2` under 8 concurrent clients: every answer a 200 with predictions, memory bounded.

The short version of benchmarks/serve_load.py's soak (its functions, the real command, loopback HTTP): a
registered classifier, 8 client threads with keep-alive connections, 6 rounds of 300 requests. Resident
memory of the server (supervisor and workers) is read after each round and may not grow by more than 50 MB
past its reading after the first.
"""

import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import serve_load  # noqa: E402

ROUNDS, REQUESTS, CLIENTS, GROWTH_MB = 6, 300, 8, 50


def test_eight_clients_get_every_answer_and_the_memory_stays_bounded(tmp_path):
    tracking_uri, model_uri, example = serve_load.register(tmp_path)
    body = serve_load.request_body(example, 10)
    port, log = serve_load.free_port(), tmp_path / "serve.log"
    process = serve_load.start_server("fairops serve", model_uri, tracking_uri, port, log)
    try:
        serve_load.wait_ready(port, process, log)
        rounds = []
        for _ in range(ROUNDS):
            result = serve_load.run_load(port, body, CLIENTS, REQUESTS, seconds=300)
            rounds.append({**result, "rss_mb": serve_load.resident_mb(process.pid)})
    finally:
        serve_load.stop(process)
    assert [r["requests"] for r in rounds] == [REQUESTS] * ROUNDS  # the bound on time was never reached
    assert sum(r["errors"] for r in rounds) == 0, rounds
    readings = [r["rss_mb"] for r in rounds]
    assert readings[0] > 100  # the readings are of the server's processes (importing MLflow alone takes more)
    assert max(readings[1:]) - readings[0] <= GROWTH_MB, readings
