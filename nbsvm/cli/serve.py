"""``nbsvm serve``: models behind an HTTP API and a web page (:mod:`nbsvm.serve`)."""
from __future__ import annotations

import json
import os
from typing import List

import typer

from nbsvm.errors import NBSVMError
from nbsvm.cli import app
from nbsvm.cli.common import cli_errors, err_console


@app.command("serve")
def serve_command(
    models: List[str] = typer.Argument(..., metavar="MODEL",
                                       help="Model files from `nbsvm train`, as PATH (named "
                                            "after the file) or NAME=PATH."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (0.0.0.0: "
                                                          "every interface)."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="Port to listen on."),
    workers: int = typer.Option(1, "--workers", min=1, help="Worker processes (each loads "
                                                             "every model; >1 also watches "
                                                             "the files for changes)."),
    watch: bool = typer.Option(False, "--watch", help="Reload a model when its file changes "
                                                      "(replace it atomically: write, rename)."),
    max_batch: int = typer.Option(1000, "--max-batch", min=1,
                                  help="Most texts in one request (more: 413)."),
    max_text_chars: int = typer.Option(100_000, "--max-text-chars", min=1,
                                       help="Longest text in characters (longer: 413)."),
    max_body_mb: float = typer.Option(8.0, "--max-body-mb", min=0.001,
                                      help="Largest request body in MB (larger: 413)."),
    log_level: str = typer.Option("warning", "--log-level",
                                  help="uvicorn's log level: critical, error, warning, info, "
                                       "debug, trace."),
):
    """Serve models over HTTP: POST /predict, POST /explain, GET /models, /health, /metrics,
    POST /models/NAME/reload, a page at / and the OpenAPI schema at /openapi.json.
    Needs pip install 'nbsvm[serve]'."""
    with cli_errors():
        try:
            import uvicorn
            from nbsvm.serve.app import create_app
            from nbsvm.serve.registry import parse_models
        except ImportError as e:
            raise NBSVMError(f"nbsvm serve needs {e.name}: pip install 'nbsvm[serve]'") from None
        if log_level not in ("critical", "error", "warning", "info", "debug", "trace"):
            raise NBSVMError(f"unknown log level {log_level!r}; allowed: critical, error, "
                             "warning, info, debug, trace")
        named = parse_models(models)
        config = dict(watch=watch or workers > 1, max_batch=max_batch,
                      max_text_chars=max_text_chars, max_body_bytes=int(max_body_mb * 2**20))
        if workers == 1:
            target = create_app(named, **config)     # a bad model file fails here, clearly
        else:
            create_app(named, **config)               # checked once before the workers start
            os.environ["NBSVM_SERVE"] = json.dumps(dict(config, models=named))
            target = "nbsvm.serve.app:app_from_environment"
        err_console.print(f"serving {', '.join(named)} on http://{host}:{port} "
                          f"({workers} worker{'s' if workers > 1 else ''}); Ctrl+C stops")
        uvicorn.run(target, host=host, port=port, workers=workers, factory=workers > 1,
                    log_level=log_level, timeout_graceful_shutdown=10)
