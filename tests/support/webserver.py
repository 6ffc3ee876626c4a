"""A real catalogue web server on a loopback port, for tests (uvicorn in a thread).

``serve`` runs the app for some settings and yields its base URL; ``serve_catalogue``
runs it over a harvested catalogue and yields a ``WebServer`` (every fixture that
runs a server for a module's tests yields one).
"""

from __future__ import annotations

import contextlib
import pathlib
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import uvicorn

import catalogue
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


@dataclass(frozen=True)
class WebServer:
    """A running catalogue web server and what it serves (tests compare its answers
    with the database opened directly, and with the sources harvested into it)."""

    base: str  #: base URL, http://127.0.0.1:<port>
    db: str  #: the database URL it serves
    sources: list[pathlib.Path]  #: the stores harvested into it, in harvest order
    graphs: dict[str, str]  #: a source folder's name -> the named graph of its harvest
    client: httpx.Client  #: a client for the module's requests

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.client.get(self.base + path, **kwargs)


def harvest(db: str, sources: Iterable[pathlib.Path]) -> None:
    """Harvest ``sources`` into ``db`` in order; each must harvest without errors."""
    with catalogue.open(db) as cat:
        for source in sources:
            report = cat.harvest(str(source))
            assert report.ok, (source, report.errors)


@contextlib.contextmanager
def serve_catalogue(db: str, sources: Sequence[pathlib.Path] = (), *, timeout: float = 30,
                    **settings: Any) -> Iterator[WebServer]:
    """Run the app over ``db`` (already holding ``sources``, harvested in that order) with
    ``Settings(db=db, **settings)``; yields the ``WebServer``, whose graphs are those of each
    source's latest harvest run, and whose client has ``timeout``."""
    latest: dict[str, str] = {}
    with catalogue.open(db) as cat:
        for run in reversed(cat.harvests(None)):  # oldest first: the newest run of a source wins
            latest[run["source"]] = run["graph"]
    graphs = {source.name: latest[source.absolute().as_uri()] for source in sources}
    with serve(Settings(db=db, **settings)) as base, httpx.Client(timeout=timeout) as client:
        yield WebServer(base, db, list(sources), graphs, client)
