"""``fairops grpc-proxy``: Optuna's gRPC storage proxy in front of a database, for many tuning workers.

Workers then give ``--storage grpc://<this host>:<port>`` instead of the database URL: the database sees
one client (the proxy) instead of one or more connections per worker. The proxy is Optuna's own
:func:`optuna.storages.run_grpc_proxy_server` over :func:`optuna.storages.get_storage` (the cached
storage Optuna recommends behind it). Heartbeats of ``grpc://`` workers travel as trial attributes
(see :mod:`fairops.jobs._grpc_storage`), so the proxy needs no heartbeat setting of its own.
"""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor

from ..errors import InputError

DEFAULT_PORT = 13000


def serve(storage_url: str, host: str = "0.0.0.0", port: int = DEFAULT_PORT, threads: int = 32, out=None):
    """Serve ``storage_url`` on ``host:port`` until the process is stopped (runs in the foreground)."""
    import warnings

    import optuna

    out = out or sys.stdout
    if storage_url.startswith("grpc://") or storage_url.endswith((".log", ".journal")):
        raise InputError(f"--storage must be a database URL (the proxy serves RDB storages only), got {storage_url!r}")
    if threads < 1:
        raise InputError(f"--threads must be at least 1, got {threads}")
    try:
        storage = optuna.storages.get_storage(storage_url)
    except Exception as error:  # unreachable server, bad URL, missing driver
        raise InputError(f"cannot open the Optuna storage {storage_url!r}: {error}") from error
    print(f"gRPC storage proxy for {storage_url.split('@')[-1]} on {host}:{port} "
          f"({threads} threads); workers use --storage grpc://<host>:{port}", file=out, flush=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        optuna.storages.run_grpc_proxy_server(storage, host=host, port=port,
                                              thread_pool=ThreadPoolExecutor(max_workers=threads))


def _run(args) -> int:
    serve(args.storage, host=args.host, port=args.port, threads=args.threads)
    return 0


def add_parser(subcommands) -> None:
    parser = subcommands.add_parser(
        "grpc-proxy", help="Optuna's gRPC storage proxy in front of a database (many workers, one connection)",
        description=__doc__.split("\n\n")[0])
    parser.add_argument("--storage", required=True, help="database URL, e.g. postgresql+psycopg://user:pw@db/fairops")
    parser.add_argument("--host", default="0.0.0.0", help="address to listen on (default: all)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default: {DEFAULT_PORT})")
    parser.add_argument("--threads", type=int, default=32,
                        help="threads answering workers' calls (each call is short; default: 32)")
    parser.set_defaults(run=_run)
