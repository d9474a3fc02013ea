#!/usr/bin/python3
"""sqld of platform-test/db-libsql-standin:0.24. A STAND-IN, NOT libsql-server: it answers the
part of sqld's HTTP API that the platform and its tests use, over Debian's SQLite:
  - command line: sqld [--db-path DIR] [--http-listen-addr H:P] [--admin-listen-addr H:P]
    [--grpc-listen-addr H:P] [--enable-namespaces]; the SQLD_DB_PATH, SQLD_HTTP_LISTEN_ADDR,
    SQLD_NODE (primary | replica), SQLD_PRIMARY_URL and SQLD_HTTP_AUTH (basic:<base64 user:pass>)
    variables as sqld reads them. A replica without SQLD_PRIMARY_URL refuses to start.
  - the database is DIR/dbs/default/data (sqld's layout), created on the first start;
  - GET /health (no authentication) and GET /version; POST /v2/pipeline (Hrana over HTTP:
    execute and close requests) and POST / ({"statements": [...]}), both behind basic
    authentication when SQLD_HTTP_AUTH is set (401 otherwise). A replica refuses writes.
  - the admin address answers GET /health; the gRPC address only accepts connections.
It speaks no gRPC and replicates nothing."""
import base64
import json
import os
import socket
import sqlite3
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

VERSION = "sqld 0.24.32 (platform-test stand-in)"


def fail(message):
    print(f"db-libsql-standin: error: {message}", file=sys.stderr, flush=True)
    sys.exit(1)


def parse_args(argv):
    options = {
        "db_path": os.environ.get("SQLD_DB_PATH", "data.sqld"),
        "http": os.environ.get("SQLD_HTTP_LISTEN_ADDR", "127.0.0.1:8080"),
        "admin": os.environ.get("SQLD_ADMIN_LISTEN_ADDR"),
        "grpc": os.environ.get("SQLD_GRPC_LISTEN_ADDR"),
        "namespaces": False,
    }
    flags = {"--db-path": "db_path", "--http-listen-addr": "http", "--admin-listen-addr": "admin",
             "--grpc-listen-addr": "grpc"}
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, _, inline = arg.partition("=")
        if name in flags:
            if inline:
                options[flags[name]] = inline
            else:
                if i + 1 >= len(argv):
                    fail(f"{name} needs a value")
                i += 1
                options[flags[name]] = argv[i]
        elif arg == "--enable-namespaces":
            options["namespaces"] = True
        else:
            fail(f"unknown argument {arg}")
        i += 1
    return options


def address(text):
    host, _, port = text.rpartition(":")
    return (host or "0.0.0.0", int(port))


def value_of(cell):
    if cell is None:
        return {"type": "null"}
    if isinstance(cell, int):
        return {"type": "integer", "value": str(cell)}
    if isinstance(cell, float):
        return {"type": "float", "value": cell}
    if isinstance(cell, bytes):
        return {"type": "blob", "base64": base64.b64encode(cell).decode()}
    return {"type": "text", "value": cell}


def argument(arg):
    kind = arg.get("type")
    if kind == "integer":
        return int(arg["value"])
    if kind == "float":
        return float(arg["value"])
    if kind == "blob":
        return base64.b64decode(arg["base64"])
    if kind == "null":
        return None
    return arg.get("value")


class Database:
    def __init__(self, directory, replica):
        os.makedirs(os.path.join(directory, "dbs", "default"), exist_ok=True)
        self.path = os.path.join(directory, "dbs", "default", "data")
        self.replica = replica
        self.lock = threading.Lock()
        with self.lock:
            connection = sqlite3.connect(self.path)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.close()

    def execute(self, sql, args=()):
        if self.replica and not sql.lstrip().upper().startswith(("SELECT", "PRAGMA", "EXPLAIN", "WITH")):
            raise sqlite3.OperationalError("this node is a replica: writes go to its primary")
        with self.lock:
            connection = sqlite3.connect(self.path, isolation_level=None)
            try:
                cursor = connection.execute(sql, args)
                rows = cursor.fetchall()
                cols = [{"name": d[0], "decltype": None} for d in (cursor.description or [])]
                return {
                    "cols": cols,
                    "rows": [[value_of(c) for c in row] for row in rows],
                    "affected_row_count": max(cursor.rowcount, 0),
                    "last_insert_rowid": str(cursor.lastrowid) if cursor.lastrowid else None,
                }
            finally:
                connection.close()


def handler_for(database, auth, admin=False):
    class Handler(BaseHTTPRequestHandler):
        server_version = "sqld-standin"

        def log_message(self, format, *args):
            print(f"db-libsql-standin: {self.address_string()} {format % args}", flush=True)

        def answer(self, status, body):
            data = (json.dumps(body) if not isinstance(body, str) else body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json" if not isinstance(body, str) else "text/plain")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def authorized(self):
            if auth is None:
                return True
            return self.headers.get("Authorization", "") == f"Basic {auth}"

        def do_GET(self):
            if self.path == "/health":
                return self.answer(200, "")
            if self.path == "/version" and not admin:
                return self.answer(200, VERSION)
            return self.answer(404, {"error": "not found"})

        def do_POST(self):
            if admin:
                return self.answer(404, {"error": "not found"})
            if not self.authorized():
                return self.answer(401, {"error": "Unauthorized"})
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                return self.answer(400, {"error": "the body is not JSON"})
            if self.path == "/v2/pipeline":
                results = []
                for request in body.get("requests", []):
                    if request.get("type") == "close":
                        results.append({"type": "ok", "response": {"type": "close"}})
                        continue
                    if request.get("type") != "execute":
                        results.append({"type": "error", "error": {"message": "unsupported request"}})
                        continue
                    stmt = request.get("stmt", {})
                    try:
                        result = database.execute(stmt.get("sql", ""), [argument(a) for a in stmt.get("args", [])])
                        results.append({"type": "ok", "response": {"type": "execute", "result": result}})
                    except sqlite3.Error as error:
                        results.append({"type": "error", "error": {"message": str(error), "code": "SQLITE_ERROR"}})
                return self.answer(200, {"baton": None, "base_url": None, "results": results})
            if self.path == "/":
                answers = []
                for statement in body.get("statements", []):
                    sql = statement if isinstance(statement, str) else statement.get("q", "")
                    try:
                        result = database.execute(sql)
                    except sqlite3.Error as error:
                        return self.answer(400, {"error": str(error)})
                    answers.append({"results": {
                        "columns": [c["name"] for c in result["cols"]],
                        "rows": [[c.get("value") if c["type"] != "integer" else int(c["value"]) for c in row]
                                 for row in result["rows"]],
                    }})
                return self.answer(200, answers)
            return self.answer(404, {"error": "not found"})

    return Handler


def accept_only(addr):
    listener = socket.create_server(address(addr))
    while True:
        connection, _ = listener.accept()
        connection.close()


def main():
    argv = sys.argv[1:]
    if argv and argv[0] in ("sqld", "/bin/sqld"):
        argv = argv[1:]
    options = parse_args(argv)
    node = os.environ.get("SQLD_NODE", "primary")
    if node not in ("primary", "replica"):
        fail(f"SQLD_NODE must be primary or replica, not {node}")
    if node == "replica" and not os.environ.get("SQLD_PRIMARY_URL"):
        fail("SQLD_NODE is replica but SQLD_PRIMARY_URL is not set")
    auth = None
    setting = os.environ.get("SQLD_HTTP_AUTH", "")
    if setting:
        if not setting.startswith("basic:"):
            fail("SQLD_HTTP_AUTH must be basic:<base64 of user:password>")
        auth = setting[len("basic:"):]
    database = Database(options["db_path"], node == "replica")
    if options["admin"]:
        admin = ThreadingHTTPServer(address(options["admin"]), handler_for(database, auth, admin=True))
        threading.Thread(target=admin.serve_forever, daemon=True).start()
    if options["grpc"]:
        threading.Thread(target=accept_only, args=(options["grpc"],), daemon=True).start()
    server = ThreadingHTTPServer(address(options["http"]), handler_for(database, auth))
    print(f"db-libsql-standin: NOT sqld, a stand-in ({node}, namespaces "
          f"{'on' if options['namespaces'] else 'off'}) serving HTTP on {options['http']}, "
          f"database {database.path}", flush=True)
    import signal
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    server.serve_forever()


if __name__ == "__main__":
    main()
