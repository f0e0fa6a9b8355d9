"""A stand-in for a demo service left running by an older code version (issue 21, item 11).

`python -m tests.hostile.http_stale_demo <port>` answers `/health` like the demo service, with an
old implementation digest and its own pid, and every other path with 404; it ignores nothing:
SIGTERM ends it.
"""

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802
        if self.path != "/health":
            self.send_error(404)
            return
        body = json.dumps(
            {
                "status": "ok",
                "platforms": [],
                "implementation": "sha256:" + "0" * 64,
                "data": "sha256:old",
                "pid": os.getpid(),
            }  # fmt: skip
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
