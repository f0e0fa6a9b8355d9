"""A managed server this process started stays in use while it is busy (`factory eval --runs 2` with the
embedded model: the second run's backend found the server slow to answer /models and launched a second one on
the same port, which exited with code 3)."""

import sys
import time
from pathlib import Path

from factory.llm.servers import ManagedServer
from tests.conftest import free_port

# Answers /models with the model listed; after the first answer every request takes 5 s (a busy llama.cpp).
_SERVER = """
import http.server, json, sys, time
seen = []
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if seen:
            time.sleep(5)
        seen.append(1)
        body = json.dumps({"data": [{"id": "m"}]}).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""


def test_a_busy_server_it_started_is_not_launched_again(tmp_path: Path) -> None:
    port = free_port()
    script = tmp_path / "server.py"
    script.write_text(_SERVER)
    server = ManagedServer(name="fake", base_url=f"http://127.0.0.1:{port}/v1", model="m",
                           command=[sys.executable, str(script), str(port)], state_dir=tmp_path,
                           startup_timeout_s=20)  # fmt: skip
    try:
        assert server.ensure() == "started"
        pid = server.pid
        t0 = time.monotonic()
        assert server.ensure() == "started" and server.pid == pid  # busy now: no health probe, no second launch
        assert time.monotonic() - t0 < 1.0
        assert not server.healthy(timeout=0.5)  # it really is too busy to answer
    finally:
        server.stop(force=True)
