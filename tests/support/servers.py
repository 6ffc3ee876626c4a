"""Real servers on the loopback interface for the remote-store tests.

``http_server(root)`` serves a folder over HTTP the way a static file server
or an object store's HTTP endpoint does (404 for missing files, byte ranges,
no listings), and can be told to misbehave for chosen paths: fail with a
status a few times, fail always, or hang past the client's timeout.
``s3_server()`` runs moto's S3 in server mode, so s3fs talks real HTTP to it.

Both bind 127.0.0.1 on a random port, and both stop their threads (and close
their sockets) when the ``with`` block ends, whatever happened inside it: a
test run leaves no server behind.
"""

from __future__ import annotations

import collections
import contextlib
import email.utils
import hashlib
import http.server
import logging
import posixpath
import re
import socket
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

#: The longest a hanging response waits before the server gives up on it, so
#: no handler thread outlives a test by more than this.
MAX_HANG_SECONDS = 10.0

_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


@dataclass
class HTTPServerControl:
    """What a test sees of a running ``http_server``: its URL, its request log, its faults.

    Paths are relative to the served folder, without a leading slash
    (``"a.zarr/.zmetadata"``).  The fault maps may be changed while the
    server runs.
    """

    url: str
    #: path -> how many more times to answer 500 before serving the file.
    fail_times: dict[str, int] = field(default_factory=dict)
    #: path -> a status to answer every time (e.g. 401, 403, 503).
    status: dict[str, int] = field(default_factory=dict)
    #: paths whose requests hang (until the client gives up, at most MAX_HANG_SECONDS).
    hang: set[str] = field(default_factory=set)
    #: seconds every request waits before it is answered (makes overlap measurable).
    delay: float = 0.0
    #: answer 200 with the whole file even when a Range was asked for (as simple servers do).
    ignore_ranges: bool = False
    #: path -> number of requests seen (any method), faults included.
    counts: collections.Counter[str] = field(default_factory=collections.Counter)
    #: every request as (method, path), in order of arrival.
    log: list[tuple[str, str]] = field(default_factory=list)
    #: requests waiting for their answer right now, and the most seen at once.
    in_flight: int = 0
    max_in_flight: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _stopping: threading.Event = field(default_factory=threading.Event, repr=False)
    _connections: set[socket.socket] = field(default_factory=set, repr=False)

    def reset_counts(self) -> None:
        """Forget the requests seen so far (e.g. after a warm-up harvest)."""
        with self._lock:
            self.counts.clear()
            self.log.clear()
            self.max_in_flight = self.in_flight


def _make_handler(root: Path, control: HTTPServerControl) -> type[http.server.BaseHTTPRequestHandler]:
    root = root.resolve()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as aiohttp expects of real servers
        # Headers and body go out in separate writes: with Nagle's algorithm on, the body
        # waited for the client's delayed ACK of the headers, 40 ms per response on a
        # kept-alive connection (real servers set TCP_NODELAY, as this does).
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: pytest output should show test failures, not access logs."""

        def setup(self) -> None:
            super().setup()
            with control._lock:
                control._connections.add(self.connection)

        def finish(self) -> None:
            with control._lock:
                control._connections.discard(self.connection)
            super().finish()

        def do_HEAD(self) -> None:
            self._tracked(body=False)

        def do_GET(self) -> None:
            self._tracked(body=True)

        def _tracked(self, *, body: bool) -> None:
            # counted until the answer starts, so the client cannot see it and send
            # its next request before this one stops counting
            with control._lock:
                control.in_flight += 1
                control.max_in_flight = max(control.max_in_flight, control.in_flight)
            try:
                if control.delay:
                    control._stopping.wait(min(control.delay, MAX_HANG_SECONDS))
            finally:
                with control._lock:
                    control.in_flight -= 1
            self._serve(body=body)

        # ------------------------------------------------------------------
        def _serve(self, *, body: bool) -> None:
            rel = unquote(urlsplit(self.path).path).lstrip("/")
            with control._lock:
                control.counts[rel] += 1
                control.log.append((self.command, rel))
                fail = control.fail_times.get(rel, 0)
                if fail:
                    control.fail_times[rel] = fail - 1
                fixed = control.status.get(rel)
                hang = rel in control.hang
            if hang:
                self._hang()
                return
            if fail:
                self._reply(500, b"injected failure\n", body=body)
                return
            if fixed is not None:
                self._reply(fixed, f"injected status {fixed}\n".encode(), body=body)
                return
            target = (root / rel).resolve()
            if not target.is_relative_to(root) or not target.is_file():
                # folders too: a static server without index pages cannot list
                self._reply(404, b"not found\n", body=body)
                return
            data = target.read_bytes()
            stat = target.stat()
            headers = {
                "ETag": '"' + hashlib.md5(data).hexdigest() + '"',
                "Last-Modified": email.utils.formatdate(stat.st_mtime, usegmt=True),
                "Accept-Ranges": "none" if control.ignore_ranges else "bytes",
            }
            wanted = self.headers.get("Range")
            if wanted is None or control.ignore_ranges:
                self._reply(200, data, body=body, headers=headers)
                return
            span = self._range(wanted, len(data))
            if span is None:
                self._reply(416, b"", body=body, headers={"Content-Range": f"bytes */{len(data)}"})
                return
            start, end = span
            headers["Content-Range"] = f"bytes {start}-{end - 1}/{len(data)}"
            self._reply(206, data[start:end], body=body, headers=headers)

        @staticmethod
        def _range(header: str, size: int) -> tuple[int, int] | None:
            """[start, end) of a single ``bytes=`` range (RFC 9110 14.1.2), None if unsatisfiable."""
            match = _RANGE.match(header.strip())
            if match is None or match.groups() == ("", ""):
                return None
            first, last = match.groups()
            if first == "":  # suffix: the last N bytes
                n = int(last)
                return (max(size - n, 0), size) if n > 0 and size > 0 else None
            start = int(first)
            end = size if last == "" else min(int(last) + 1, size)
            return (start, end) if start < size and start < end else None

        def _reply(self, status: int, data: bytes, *, body: bool, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            if body:
                self.wfile.write(data)

        def _hang(self) -> None:
            """Say nothing until the client gives up (bounded, and cut short when the server stops)."""
            control._stopping.wait(MAX_HANG_SECONDS)
            self.close_connection = True

    return Handler


class _Server(http.server.ThreadingHTTPServer):
    #: socketserver's default backlog of 5 drops the SYNs of a burst of new
    #: connections (a concurrent harvest opens 16 at once), which the client
    #: then retries after a second: real servers accept far more.
    request_queue_size = 128


@contextmanager
def http_server(root: Path) -> Iterator[HTTPServerControl]:
    """Serve ``root`` over HTTP on 127.0.0.1 (random port) for the ``with`` block.

    Supports GET and HEAD, single byte ranges (``Range: bytes=a-b``, ``a-``,
    ``-n``; 206 with ``Content-Range``, 416 when unsatisfiable), and answers
    404 for anything that is not a file below ``root`` (folders included:
    the store cannot be listed).  Files carry ``ETag`` and ``Last-Modified``.
    """
    control = HTTPServerControl(url="")
    server = _Server(("127.0.0.1", 0), _make_handler(Path(root), control))
    server.daemon_threads = False  # so server_close() joins every handler thread
    control.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              name=f"http_server:{control.url}", daemon=True)
    thread.start()
    try:
        yield control
    finally:
        control._stopping.set()  # hanging and delayed handlers return at once
        server.shutdown()
        with control._lock:
            for conn in control._connections:  # idle keep-alive connections: wake their readers
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
        server.server_close()  # joins the handler threads
        thread.join(timeout=MAX_HANG_SECONDS)


def closed_port_url() -> str:
    """An http URL on 127.0.0.1 where nothing listens (the port was just released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


# ----------------------------------------------------------------------- S3


@dataclass
class S3ServerControl:
    """A running moto S3 server: where it is and how to reach it with s3fs."""

    endpoint_url: str
    key: str = "testing-key"
    secret: str = "testing-secret"
    region: str = "us-east-1"

    @property
    def storage_options(self) -> dict[str, Any]:
        """fsspec/s3fs options for this server: endpoint, dummy credentials, region."""
        return {
            "endpoint_url": self.endpoint_url,
            "key": self.key,
            "secret": self.secret,
            "client_kwargs": {"region_name": self.region},
        }

    def filesystem(self) -> Any:
        """A fresh (uncached) s3fs filesystem on this server."""
        import s3fs

        return s3fs.S3FileSystem(skip_instance_cache=True, **self.storage_options)

    def bucket(self, name: str | None = None) -> str:
        """Create a bucket (a fresh random name unless given) and return its name."""
        name = name or f"test-{uuid.uuid4().hex[:12]}"
        fs = self.filesystem()
        if not fs.exists(name):
            # not fs.mkdir: s3fs sends a LocationConstraint, which us-east-1 refuses
            fs.call_s3("create_bucket", Bucket=name)
            fs.invalidate_cache()
        return name

    def upload(self, local: Path, url: str) -> str:
        """Copy a local store folder to ``s3://bucket/prefix`` (bucket created on demand); returns ``url``."""
        fs = self.filesystem()
        bucket, _, prefix = url.removeprefix("s3://").partition("/")
        self.bucket(bucket)
        for path in sorted(Path(local).rglob("*")):
            if path.is_file():
                key = posixpath.join(bucket, prefix, path.relative_to(local).as_posix())
                fs.pipe_file(key, path.read_bytes())
        return url


@contextmanager
def s3_server() -> Iterator[S3ServerControl]:
    """moto's S3 in server mode on 127.0.0.1 (random port) for the ``with`` block.

    The server is in-process (a thread), but clients reach it over real HTTP.
    Its state lives in moto's process-wide backend, so the server is reset
    when the block ends; tests use fresh bucket names (``control.bucket()``).
    """
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no access log in test output
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    control = S3ServerControl(endpoint_url=f"http://{host}:{port}")
    try:
        yield control
    finally:
        try:
            import urllib.request

            urllib.request.urlopen(
                urllib.request.Request(f"{control.endpoint_url}/moto-api/reset", method="POST"), timeout=5
            ).close()
        finally:
            server.stop()
            inner = getattr(server, "_server", None)
            if inner is not None:
                inner.server_close()
