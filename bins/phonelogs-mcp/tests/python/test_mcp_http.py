#!/usr/bin/env python3
"""The official MCP Python SDK (`pip install mcp`) as the client of `phonelogs-mcp --demo=fake
--http 127.0.0.1:0` over Streamable HTTP, with a bearer token in the Authorization header: lists
the tools, reads the demo phone's Crash Test logs, and checks that the agent the token names is
the one the history records. A wrong token gets no session. A client that answers every
elicitation with "Always allow" is never asked over HTTP: its question waits until the person
answers it with `phonelogs approvals answer`, and no rule is written. The 2025-11-25 client
reads in a session (`initialize`, `Mcp-Session-Id`); the same SDK on the 2026-07-28 wire
(`server/discover`) reads statelessly: the wire it sent is recorded and holds no `initialize`
and no session id, its question goes to the person's side, and the retry reads after the
person's answer.

    python3 -m venv .venv && .venv/bin/pip install mcp
    .venv/bin/python bins/phonelogs-mcp/tests/python/test_mcp_http.py

Binaries: $PHONELOGS_MCP (default target/debug/phonelogs-mcp) and $PHONELOGS (default
target/debug/phonelogs). Exits non-zero on the first failed check.
"""

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

SERVER = os.environ.get("PHONELOGS_MCP", "target/debug/phonelogs-mcp")
CLI = os.environ.get("PHONELOGS", "target/debug/phonelogs")
TOKEN = "ci-token-0123456789abcdef0123456789"


def check(condition, what):
    if not condition:
        raise AssertionError(what)
    print(f"ok - {what}")


def field(obj, snake):
    """Reads a field by its SDK 2.x name, falling back to the 1.x camelCase one."""
    if hasattr(obj, snake):
        return getattr(obj, snake)
    head, *rest = snake.split("_")
    return getattr(obj, head + "".join(word.title() for word in rest))


def start(state_dir):
    tokens = os.path.join(state_dir, "tokens")
    with open(tokens, "w") as f:
        f.write(f"{TOKEN} ci-agent\n")
    os.chmod(tokens, 0o600)
    proc = subprocess.Popen(
        [SERVER, "--demo=fake", "--state-dir", state_dir, "--http", "127.0.0.1:0", "--token-file", tokens],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        prefix = "phonelogs-mcp: serving MCP on "
        if line.startswith(prefix):
            return proc, line[len(prefix):].strip()
    raise AssertionError("the server ended before naming its address")


class Wire:
    """What went over HTTP: each request's JSON-RPC method, and every Mcp-Session-Id seen."""

    def __init__(self):
        self.methods = []
        self.session_ids = []

    async def on_request(self, request):
        if "mcp-session-id" in request.headers:
            self.session_ids.append(request.headers["mcp-session-id"])
        if request.method == "POST":
            try:
                self.methods.append(json.loads(request.content).get("method"))
            except (ValueError, AttributeError):
                pass

    async def on_response(self, response):
        if "mcp-session-id" in response.headers:
            self.session_ids.append(response.headers["mcp-session-id"])


async def session_with(url, token, body, elicitation_callback=None, stateless=False, wire=None):
    """A session of the SDK: 2025-11-25 through `initialize`, or with `stateless` 2026-07-28
    through `server/discover` (no handshake, no session)."""
    client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    if wire is not None:
        client.event_hooks = {"request": [wire.on_request], "response": [wire.on_response]}
    async with client:
        async with streamable_http_client(url, http_client=client) as (read, write):
            async with ClientSession(read, write, elicitation_callback=elicitation_callback) as session:
                if stateless:
                    await session.discover()
                else:
                    await session.initialize()
                return await body(session)


async def main():
    with tempfile.TemporaryDirectory() as state_dir:
        proc, url = start(state_dir)
        try:
            async def agent(session):
                tools = {t.name for t in (await session.list_tools()).tools}
                check({"phone_logs", "list_devices"} <= tools, f"the tools are listed over HTTP: {sorted(tools)}")
                # `since: "10m"`: the demo's lines start a second after the server does, and a
                # task reads from its own start by default, so without it the first line is
                # shown only when the client's first request came within that second.
                result = await session.call_tool("phone_logs", {"app": "dev.phonelogs.crashtest", "since": "10m"})
                out = field(result, "structured_content")
                check(out["status"] == "ok" and out["shown"] == 5, "the demo phone's Crash Test lines are read")
                devices = field(await session.call_tool("list_devices", {}), "structured_content")
                check(devices["devices"][0]["id"] == "emulator-5554", "the demo phone is listed")
            legacy = Wire()
            await session_with(url, TOKEN, agent, wire=legacy)
            check("initialize" in legacy.methods and legacy.session_ids,
                  f"the 2025-11-25 client read in a session: {legacy.methods}")

            # A scripted client answering "Always allow" to everything: never asked over HTTP.
            asked = []

            async def always(context, params):
                asked.append(params)
                return types.ElicitResult(action="accept", content={"decision": "always"})

            async def scripted(session):
                first = field(await session.call_tool("phone_logs", {"app": "com.example.store"}), "structured_content")
                check(first["status"] == "approval_pending", f"the release build's read waits: {first['status']}")
                check(not asked, "the agent's own client is never asked over HTTP")
                db = sqlite3.connect(os.path.join(state_dir, "phonelogs.db"))
                rules = db.execute("SELECT count(*) FROM standing_rules").fetchone()[0]
                check(rules == 0, "no Always-allow rule was written")
                approval_id = first["approval_id"]
                subprocess.run([CLI, "approvals", "answer", approval_id, "once", "--state-dir", state_dir],
                               check=True, capture_output=True)
                done = field(await session.call_tool("phone_logs", {"app": "com.example.store", "approval_id": approval_id}),
                             "structured_content")
                check(done["status"] == "ok", "after the person's answer on their side, the retry reads")
                check(not asked, "still nothing asked of the agent's client")
            await session_with(url, TOKEN, scripted, elicitation_callback=always)

            # The same SDK on the 2026-07-28 wire: server/discover, then every request on its
            # own, no initialize and no session id; asked on the person's side only; the
            # person's answer lets the retry read.
            modern = Wire()

            async def stateless(session):
                version = field(session.discover_result, "supported_versions")
                check("2026-07-28" in version, f"server/discover names 2026-07-28: {version}")
                first = field(await session.call_tool("phone_logs", {"app": "com.example.store", "kind": "crashes"}),
                              "structured_content")
                check(first["status"] == "approval_pending", f"the stateless read waits for the person: {first}")
                check(not asked, "the stateless client is never asked over HTTP")
                approval_id = first["approval_id"]
                subprocess.run([CLI, "approvals", "answer", approval_id, "task", "--state-dir", state_dir],
                               check=True, capture_output=True)
                done = field(await session.call_tool("phone_logs", {"app": "com.example.store", "kind": "crashes",
                                                                    "approval_id": approval_id}),
                             "structured_content")
                check(done["status"] == "ok", f"after the person's answer, the stateless retry reads: {done}")
                again = field(await session.call_tool("phone_logs", {"app": "com.example.store"}), "structured_content")
                check(again["status"] == "ok", f"Allow for this task covers the token's next request: {again}")
            await session_with(url, TOKEN, stateless, elicitation_callback=always, stateless=True, wire=modern)
            check("server/discover" in modern.methods and "initialize" not in modern.methods,
                  f"no initialize on the 2026-07-28 wire: {modern.methods}")
            check(not modern.session_ids, f"no session id on the 2026-07-28 wire: {modern.session_ids}")
            check(not asked, "nothing asked of any client")

            refused = False
            try:
                await asyncio.wait_for(session_with(url, TOKEN[:-1] + "x", lambda s: s.list_tools()), 30)
            except Exception:  # the SDK raises its own error kinds for a 401
                refused = True
            check(refused, "a wrong token gets no session")

            db = sqlite3.connect(os.path.join(state_dir, "phonelogs.db"))
            agents = {row[0] for row in db.execute("SELECT DISTINCT agent FROM history")}
            check(agents == {"ci-agent"}, f"the history names the token's agent: {agents}")
        finally:
            proc.terminate()
            proc.wait(10)


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except AssertionError as failure:
        print(f"FAILED: {failure}", file=sys.stderr)
        sys.exit(1)
