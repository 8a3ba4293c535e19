"""A webhook receiver on 127.0.0.1: records each POST and answers scripted statuses."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Receiver:
    """Answers the statuses it is given, in turn (the last one after that)."""

    statuses: list[int] = field(default_factory=lambda: [200])
    got: list[tuple[dict[str, str], bytes]] = field(default_factory=list)
    url: str = ""


@contextlib.contextmanager
def running_receiver() -> Iterator[Receiver]:
    box = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers["Content-Length"]))
            box.got.append((dict(self.headers), body))
            status = box.statuses[min(len(box.got), len(box.statuses)) - 1]
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    box.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    try:
        yield box
    finally:
        server.shutdown()
        server.server_close()
