"""``nbsvm serve``: models behind an HTTP API and a web page (:mod:`nbsvm.serve`)."""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from typing import Any

import typer

from nbsvm.cli._app import app
from nbsvm.cli.common import cli_errors, err_console
from nbsvm.errors import NBSVMError

ANY_ADDRESS = ("0.0.0.0", "::", "")  # --host values that are no Host name


#: the largest --max-body-mb and --max-bodies-mb, 1 TB (1e308 MB, past any integer, was a
#: traceback)
MAX_MB = float(1 << 20)


@app.command("serve")
def serve_command(
    models: list[str] = typer.Argument(
        ...,
        metavar="MODEL",
        help="Model files from `nbsvm train`, as PATH (named after the file) or NAME=PATH.",
    ),
    host: str = typer.Option(
        "127.0.0.1", "--host", help="Address to listen on (0.0.0.0: every interface)."
    ),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="Port to listen on."),
    workers: int = typer.Option(
        1,
        "--workers",
        min=1,
        help="Worker processes (each loads every model; >1 also watches the files for changes).",
    ),
    watch: bool = typer.Option(
        False,
        "--watch",
        help="Reload a model when its file changes (replace it atomically: write, rename).",
    ),
    max_batch: int = typer.Option(
        1000, "--max-batch", min=1, help="Most texts in one request (more: 413)."
    ),
    max_text_chars: int = typer.Option(
        100_000, "--max-text-chars", min=1, help="Longest text in characters (longer: 413)."
    ),
    max_explain_chars: int = typer.Option(
        20_000,
        "--max-explain-chars",
        min=1,
        help="Longest text /explain takes (longer: 413): its answer holds about 200 bytes "
        "per character of English, up to 450 where each character is a token (Chinese).",
    ),
    max_body_mb: float = typer.Option(
        8.0,
        "--max-body-mb",
        min=0.001,
        max=MAX_MB,
        help="Largest request body in MB (larger: 413).",
    ),
    max_bodies_mb: float = typer.Option(
        256.0,
        "--max-bodies-mb",
        min=0.001,
        max=MAX_MB,
        help="Request bodies held at once, in MB, over all connections of a worker "
        "(more: 503 with Retry-After); and the answers held for clients reading slower "
        "than sent (more: the connections holding the most are reset, one is always "
        "served).",
    ),
    allowed_hosts: list[str] = typer.Option(
        [],
        "--allowed-host",
        metavar="HOST",
        help="Also answer requests for this Host name "
        "(repeatable; *.example.com for a domain, '*' "
        "for any). Default: localhost, 127.0.0.1, "
        "::1 and --host; other names get 400 (DNS "
        "rebinding).",
    ),
    allow_reload: bool = typer.Option(
        False,
        "--allow-reload",
        help="Enable POST /models/NAME/reload (403 otherwise): "
        "anyone who reaches the server can then make it "
        "read its files again.",
    ),
    learn: bool = typer.Option(
        False,
        "--learn",
        help="Enable POST /models/NAME/learn: labelled texts, journalled beside the model "
        "and learned in batches by partial_fit; the model file is rewritten at checkpoints "
        "(the file as trained is kept as MODEL.npz.initial.npz). Needs a token.",
    ),
    learn_token: str | None = typer.Option(
        None,
        "--learn-token",
        envvar="NBSVM_LEARN_TOKEN",
        help="What POST /learn's Authorization: Bearer must carry (default: one made up "
        "and printed at start). Prefer the environment variable: a command line is visible.",
    ),
    learn_validation: str | None = typer.Option(
        None,
        "--learn-validation",
        help="Labelled texts (any input format) scored at every checkpoint: GET "
        "/models/NAME shows the accuracy of the model learning.",
    ),
    learn_batch: int = typer.Option(
        1000, "--learn-batch", min=1, help="Most examples learned in one partial_fit."
    ),
    checkpoint_every: int = typer.Option(
        1000, "--checkpoint-every", min=1, help="Write the model after this many examples."
    ),
    checkpoint_seconds: float = typer.Option(
        60.0,
        "--checkpoint-seconds",
        min=0.1,
        help="Write the model when it learned something this long ago.",
    ),
    max_connections: int = typer.Option(
        1000,
        "--max-connections",
        min=1,
        help="Open connections per worker. At the limit a "
        "new one closes the connection idle longest, or "
        "gets 503 when all are busy. Raises the "
        "open-file limit (ulimit -n) if short.",
    ),
    timeout_read: float = typer.Option(
        30.0,
        "--timeout-read",
        min=0.1,
        help="Seconds a client has to send a whole request "
        "(headers and body), from connecting or from its "
        "previous answer; slower: 408 and closed. Also how long a client may stop "
        "reading an answer before it is dropped.",
    ),
    timeout_keep_alive: int = typer.Option(
        5,
        "--timeout-keep-alive",
        min=1,
        help="Seconds a connection may stay idle between requests before it is closed.",
    ),
    log_level: str = typer.Option(
        "warning",
        "--log-level",
        help="uvicorn's log level: critical, error, warning, info, debug, trace.",
    ),
) -> None:
    """Serve models over HTTP: POST /predict, POST /explain, GET /models, /health, /metrics,
    POST /models/NAME/reload (with --allow-reload), a page at / and the OpenAPI schema at
    /openapi.json. Needs pip install 'nbsvm[serve]'.

    POST bodies are JSON, sent as such: curl -H 'Content-Type: application/json' -d
    '{"text": "..."}'. Only the Host names served are answered (localhost by default;
    --allowed-host adds more)."""
    with cli_errors(runs_until_stopped=True):  # Ctrl-C or SIGTERM: its normal end, exit 0
        try:
            import uvicorn  # noqa: F401

            from nbsvm.serve.app import create_app  # noqa: F401 (fastapi missing: said below)
            from nbsvm.serve.connections import ServeConfig, bind_socket, descriptor_room, serve_on
            from nbsvm.serve.limits import LOCAL_HOSTS
            from nbsvm.serve.registry import parse_models
        except ImportError as e:
            raise NBSVMError(f"nbsvm serve needs {e.name}: pip install 'nbsvm[serve]'") from None
        _check_log_level(log_level)
        _check_finite(
            {
                "--max-body-mb": max_body_mb,
                "--max-bodies-mb": max_bodies_mb,
                "--checkpoint-seconds": checkpoint_seconds,
                "--timeout-read": timeout_read,
            }
        )
        named = parse_models(models)
        hosts = [*LOCAL_HOSTS, *([host] if host not in ANY_ADDRESS else []), *allowed_hosts]
        config: dict[str, Any] = dict(
            watch=watch or workers > 1,
            max_batch=max_batch,
            max_text_chars=max_text_chars,
            max_explain_chars=max_explain_chars,
            max_body_bytes=int(max_body_mb * 2**20),
            max_held_bytes=int(max(max_bodies_mb, max_body_mb) * 2**20),
            allowed_hosts=hosts,
            allow_reload=allow_reload,
        )
        sizes = (learn_batch, checkpoint_every, checkpoint_seconds)
        learn_settings = _learn_settings(
            learn, learn_token, sizes, learn_validation, (workers, watch, allow_reload)
        )
        sock = bind_socket(host, port)  # a busy port fails now, before models load
        try:
            target = _application(named, config, learn_settings, workers)
            max_connections, backlog, note = descriptor_room(max_connections)
            _announce(note, named, host, port, workers, allowed_hosts)
            serve_on(
                sock,
                ServeConfig(
                    target,
                    workers=workers,
                    factory=workers > 1,
                    log_level=log_level,
                    timeout_graceful_shutdown=10,
                    timeout_keep_alive=timeout_keep_alive,
                    backlog=backlog,
                    max_connections=max_connections,
                    timeout_read=timeout_read,
                    # answers waiting on slow readers: the budget of the bodies held
                    max_unsent_bytes=config["max_held_bytes"],
                ),
            )
        finally:
            sock.close()
            _forget_workers(config)


def _application(named: dict, config: dict, learn_settings, workers: int) -> Any:
    """What uvicorn serves: the app itself (a bad model file fails here; a learning model
    replays its journal), or with workers the factory's import string, the models checked
    once first and the settings handed over in ``NBSVM_SERVE``."""
    from nbsvm.serve.app import create_app

    if workers == 1:
        return create_app(named, **config, learn=learn_settings)
    create_app(named, **config)
    # the workers' metrics, summed by /metrics: the folder is named before they start
    # (prometheus_client reads it when it is imported); removed when the server stops
    metrics_dir = os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="nbsvm-metrics-")
    config["metrics_dir"] = metrics_dir
    os.environ["NBSVM_SERVE"] = json.dumps(dict(config, models=named))
    return "nbsvm.serve.app:app_from_environment"


def _forget_workers(config: dict) -> None:
    """After a server of workers: the metrics folder removed, and the variables that named
    it and the settings to the workers."""
    if "metrics_dir" in config:
        shutil.rmtree(config["metrics_dir"], ignore_errors=True)
        os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
        os.environ.pop("NBSVM_SERVE", None)


def _learn_settings(
    learn: bool, token: str | None, sizes: tuple, validation: str | None, others: tuple
):
    """``--learn``'s settings (None without it; a token made up here is printed);
    ``sizes``: the batch and the checkpoints' examples and seconds; ``others``: --workers,
    --watch and --allow-reload, which it does not go with."""
    from nbsvm.serve.learning import LearnSettings

    if not learn:
        if validation is not None:
            raise NBSVMError("--learn-validation goes with --learn")
        return None
    workers, watch, allow_reload = others
    if workers > 1 or watch or allow_reload:
        raise NBSVMError(
            "--learn needs one worker, no --watch and no --allow-reload: one process learns "
            "and writes the file, and a reload would put back a checkpoint over what it learned"
        )
    if not token:
        import secrets

        token = secrets.token_urlsafe(24)
        typer.echo(f"learning: POST /models/NAME/learn with Authorization: Bearer {token}")
    scored = None
    if validation is not None:
        from nbsvm.io.readers import read_inputs

        docs = list(read_inputs([validation]))
        scored = ([d.text for d in docs], [str(d.label) for d in docs])
    batch, every, seconds = sizes
    return LearnSettings(token, batch, every, seconds, validation=scored)


def _check_finite(options: dict[str, float]) -> None:
    """Refuse nan and inf, which typer's ``min=`` lets through (nan is never below it):
    ``--max-body-mb nan`` was a traceback, ``--timeout-read nan`` timed every connection
    out at once."""
    for name, value in options.items():
        if not math.isfinite(value):
            raise NBSVMError(f"{name} must be a finite number, got {value}")


def _check_log_level(log_level: str) -> None:
    """Refuse a log level uvicorn does not know."""
    if log_level not in ("critical", "error", "warning", "info", "debug", "trace"):
        raise NBSVMError(
            f"unknown log level {log_level!r}; allowed: critical, error, "
            "warning, info, debug, trace"
        )


def _announce(
    note: str | None, named: dict, host: str, port: int, workers: int, allowed_hosts: list[str]
) -> None:
    """On stderr: the note on the open-file limit, the Host names answered when listening
    on every interface, and where the models are served."""
    if note:
        err_console.print(note, soft_wrap=True)
    if host in ANY_ADDRESS and not allowed_hosts:
        err_console.print(
            "listening on every interface, answering only Host "
            "localhost: add --allowed-host NAME for the names clients "
            "use",
            soft_wrap=True,
        )
    shown = f"[{host}]" if ":" in host else host
    err_console.print(
        f"serving {', '.join(named)} on http://{shown}:{port} "
        f"({workers} worker{'s' if workers > 1 else ''}); Ctrl+C stops",
        soft_wrap=True,
    )
