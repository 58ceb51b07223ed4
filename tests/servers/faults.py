#!/usr/bin/env python3
"""An MCP server (2025-11-25, standard library only) whose tools misbehave on purpose, for the
fault matrix (tests/matrix.rs). Over stdio by default; `--http PORT` serves Streamable HTTP on
127.0.0.1 instead (JSON or SSE answers, a session id). `--pid-file F` writes its pid (and a
grandchild's, for `grandchild`) so that the test can check nothing is left.

Every tool answers `{"content": [{"type": "text", "text": "ok <name>"}]}` unless its fault
says otherwise:

  echo          answers at once (the control)
  crash         the process exits (status 3) without answering
  hang          never answers
  garbage       a non-JSON line first (stdio) or a non-JSON SSE event (HTTP), then the answer
  partial       the answer written in three pieces, 50 ms apart
  endless       a line that never ends: 64 MiB without a newline, then the process sleeps
  badutf8       the answer carries bytes that are not UTF-8 inside a JSON string
  huge          a 200 MiB answer line (written in pieces: the server itself stays small)
  deaf          stops reading stdin for 2 s (the host's writes fill the pipe), then answers
  closein       closes its stdin, then answers (the host's next writes fail)
  ignoreterm    ignores SIGTERM from now on, then answers (shutdown must use SIGKILL)
  grandchild    starts a grandchild in a session of its own (setsid, sleeps 600 s), then
                answers
  unknownid     an answer to an id never sent, then the answer
  duplicate     the answer twice
  aftercancel   answers only once the call was cancelled (a late answer)
  storm         1,000 notifications/tools/list_changed, then the answer
HTTP only:
  dropsse       an SSE stream that closes mid-event, before the answer
  status500     HTTP 500 with a text body
  stall         accepts the request and sends no headers for 30 s
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time

TOOLS = [
    "echo", "crash", "hang", "garbage", "partial", "endless", "badutf8", "huge", "deaf",
    "closein", "ignoreterm", "grandchild", "unknownid", "duplicate", "aftercancel", "storm",
    "dropsse", "status500", "stall",
]
PID_FILE = None
waiting = {}  # aftercancel: request id -> True


def line(message):
    return (json.dumps(message, separators=(",", ":")) + "\n").encode()


def result(id_, value):
    return {"jsonrpc": "2.0", "id": id_, "result": value}


def text(value):
    return {"content": [{"type": "text", "text": value}]}


def note_pid(pid):
    if PID_FILE:
        with open(PID_FILE, "a") as f:
            f.write(f"{pid}\n")


def grandchild():
    child = subprocess.Popen(
        ["sleep", "600"], start_new_session=True,
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    note_pid(child.pid)


def handle(message):
    """The answer lines (bytes, one per item; an item may be raw bytes) for a request, or a
    special action."""
    method = message.get("method")
    id_ = message.get("id")
    if method == "initialize":
        return [line(result(id_, {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "faults", "version": "1"},
        }))]
    if method == "server/discover":
        return [line({"jsonrpc": "2.0", "id": id_, "error": {"code": -32601, "message": "no"}})]
    if method == "tools/list":
        tools = [{"name": t, "inputSchema": {"type": "object"}} for t in TOOLS]
        return [line(result(id_, {"tools": tools}))]
    if method == "ping":
        return [line(result(id_, {}))]
    if method == "notifications/cancelled":
        req = (message.get("params") or {}).get("requestId")
        if waiting.pop(req, None):
            return [line(result(req, text("ok aftercancel")))]
        return []
    if id_ is None:
        return []
    if method != "tools/call":
        return [line({"jsonrpc": "2.0", "id": id_, "error": {"code": -32601, "message": method}})]
    name = message["params"]["name"]
    ok = line(result(id_, text("ok " + name)))
    if name == "crash":
        os._exit(3)
    if name == "hang":
        return []
    if name == "garbage":
        return [b"this is not json\n", ok]
    if name == "partial":
        return [("partial", ok)]
    if name == "endless":
        return [("endless", None)]
    if name == "badutf8":
        return [b'{"jsonrpc":"2.0","id":' + json.dumps(id_).encode()
                + b',"result":{"content":[{"type":"text","text":"bad \xff\xfe here"}]}}\n']
    if name == "huge":
        return [("huge", id_)]
    if name == "deaf":
        return [("deaf", ok)]
    if name == "closein":
        return [("closein", ok)]
    if name == "ignoreterm":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        return [ok]
    if name == "grandchild":
        grandchild()
        return [ok]
    if name == "unknownid":
        return [line(result(987654321, text("nobody asked"))), ok]
    if name == "duplicate":
        return [ok, ok]
    if name == "aftercancel":
        waiting[id_] = True
        return []
    if name == "storm":
        n = line({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return [n * 1000, ok]
    return [ok]


def serve_stdio():
    out = sys.stdout.buffer
    stdin = sys.stdin.buffer
    while True:
        raw = stdin.readline()
        if not raw:
            return
        try:
            message = json.loads(raw)
        except ValueError:
            continue
        for item in handle(message):
            if isinstance(item, tuple):
                kind, payload = item
                if kind == "partial":
                    for i in range(3):
                        out.write(payload[i * len(payload) // 3:(i + 1) * len(payload) // 3])
                        out.flush()
                        time.sleep(0.05)
                elif kind == "endless":
                    chunk = b"y" * (1 << 20)
                    for _ in range(64):
                        out.write(chunk)
                    out.flush()
                    time.sleep(600)
                elif kind == "huge":
                    head = json.dumps(result(payload, text("@")), separators=(",", ":"))
                    before, after = head.split("@")
                    out.write(before.encode())
                    chunk = b"x" * (1 << 20)
                    for _ in range(200):
                        out.write(chunk)
                    out.write(after.encode() + b"\n")
                elif kind == "deaf":
                    time.sleep(2)
                    out.write(payload)
                elif kind == "closein":
                    os.close(0)
                    out.write(payload)
                    out.flush()
                    # Nothing more can be read: wait to be ended.
                    signal.pause()
                continue
            out.write(item)
        out.flush()


def serve_http(port):
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_DELETE(self):
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self):
            self.send_response(405)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            message = json.loads(body)
            name = (message.get("params") or {}).get("name") if message.get("method") == "tools/call" else None
            if name == "stall":
                time.sleep(30)
                return
            if name == "status500":
                payload = b"the server broke"
                self.send_response(500)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                return
            if name == "hang":
                time.sleep(600)
                return
            if name == "crash":
                os._exit(3)
            if name == "dropsse":
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self.wfile.write(b'event: message\ndata: {"jsonrpc":"2.0","met')
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(2)
                return
            lines = handle(message)
            if "id" not in message or message.get("method", "").startswith("notifications/"):
                self.send_response(202)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            events = []
            for item in lines:
                if isinstance(item, tuple):
                    item = item[1] or b""
                for one in item.splitlines():
                    events.append(b"event: message\ndata: " + one + b"\n\n")
            payload = b"".join(events)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            if message.get("method") == "initialize":
                self.send_header("Mcp-Session-Id", "fault-session")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    class Server(ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request, client_address):
            pass  # a client that went away mid-answer: expected here

    server = Server(("127.0.0.1", port), Handler)
    server.serve_forever()


def main():
    global PID_FILE
    args = sys.argv[1:]
    port = None
    while args:
        flag = args.pop(0)
        if flag == "--http":
            port = int(args.pop(0))
        elif flag == "--pid-file":
            PID_FILE = args.pop(0)
    note_pid(os.getpid())
    if port is None:
        serve_stdio()
    else:
        serve_http(port)


if __name__ == "__main__":
    main()
