"""A real catalogue web server on a loopback port, for tests (uvicorn in a thread)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

import uvicorn

from catalogue.web.app import create_app
from catalogue.web.settings import Settings


@contextlib.contextmanager
def serve(settings: Settings) -> Iterator[str]:
    """Run the app for ``settings`` on 127.0.0.1 (a free port); yields its base URL."""
    config = uvicorn.Config(create_app(settings), host="127.0.0.1", port=0, log_level="warning",
                            lifespan="on", access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="catalogue-web-test", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test web server did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)
