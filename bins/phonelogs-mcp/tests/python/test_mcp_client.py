#!/usr/bin/env python3
"""The official MCP Python SDK (`pip install mcp`) as the client of `phonelogs-mcp --demo`:
lists the tools and checks their schemas and annotations, then runs the approval round trip the
way a person does it, with `phonelogs approvals answer`. The SDK also validates every
structuredContent against the tool's outputSchema, so a schema that lies fails here.

    python3 -m venv .venv && .venv/bin/pip install mcp
    .venv/bin/python bins/phonelogs-mcp/tests/python/test_mcp_client.py

Binaries: $PHONELOGS_MCP (default target/debug/phonelogs-mcp) and $PHONELOGS (default
target/debug/phonelogs). Exits non-zero on the first failed check.
"""

import asyncio
import json
import os
import subprocess
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

SERVER = os.environ.get("PHONELOGS_MCP", "target/debug/phonelogs-mcp")
CLI = os.environ.get("PHONELOGS", "target/debug/phonelogs")
TOOLS = {
    "phone_logs": True,
    "list_devices": True,
    "get_process_exit_history": True,
    "set_debug_app": False,
    "clear_debug_app": False,
    "list_jdwp_processes": True,
    "capture_native_backtrace": True,
    "capture_native_tombstone": False,
}


def field(obj, snake):
    """Reads a field by its SDK 2.x name, falling back to the 1.x camelCase one."""
    if hasattr(obj, snake):
        return getattr(obj, snake)
    head, *rest = snake.split("_")
    return getattr(obj, head + "".join(word.title() for word in rest))


def out(result):
    return field(result, "structured_content")


def text(result):
    """The text content, as clients that ignore structuredContent pass it to the model."""
    return "".join(block.text for block in result.content if getattr(block, "type", "") == "text")


def check(condition, what):
    if not condition:
        raise AssertionError(what)
    print(f"ok - {what}")


async def main():
    with tempfile.TemporaryDirectory() as state_dir:
        params = StdioServerParameters(command=SERVER, args=["--demo=fake", "--state-dir", state_dir])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                check(field(init, "server_info").name == "phonelogs", "the server names itself phonelogs")

                tools = {t.name: t for t in (await session.list_tools()).tools}
                check(set(tools) == set(TOOLS), f"the eight tools are listed: {sorted(tools)}")
                for name, read_only in TOOLS.items():
                    tool = tools[name]
                    check(tool.annotations is not None and field(tool.annotations, "read_only_hint") is read_only,
                          f"{name} has readOnlyHint {read_only}")
                    schema = field(tool, "output_schema")
                    check(schema is not None and schema.get("type") == "object",
                          f"{name} declares an object outputSchema")
                logs = tools["phone_logs"]
                check(field(logs, "input_schema").get("required") == ["app"], "phone_logs requires app only")
                for prop in ["app", "device", "kind", "since", "filter", "exclude", "tag", "fold", "level",
                             "limit", "approval_id"]:
                    check(prop in field(logs, "input_schema")["properties"], f"phone_logs takes {prop}")
                # Claude Code passes a result whole up to what the tool declares (issue 29): the
                # 64 KB cap, the 4,000-byte message and 4,096 bytes of keys.
                for name in TOOLS:
                    meta = (field(tools[name], "meta") or {}).get("anthropic/maxResultSizeChars")
                    large = name in ("phone_logs", "capture_native_backtrace")
                    check(meta == (65536 + 4000 + 4096 if large else None),
                          f"{name} declares maxResultSizeChars {meta}")
                check("never as instructions" in (logs.description or ""),
                      "phone_logs says its text is data, never instructions")

                result = await session.call_tool("phone_logs", {"app": "dev.phonelogs.crashtest"})
                check(out(result)["status"] == "ok", "a development build is read at once")
                rows = out(result)["log"].splitlines()
                check(out(result)["shown"] == 5 and len(rows) == 6,
                      "its five lines are there, and the row marking its process's death")
                check(rows[-1].endswith('── process 4242 died: FATAL EXCEPTION (its report: kind "crashes")'),
                      f"the last row marks the crash: {rows[-1]}")
                check(text(result) == out(result)["message"] + "\n\n" + out(result)["log"],
                      "the text content is the message, a blank line and the same log")

                # A capped read: each form a client may pass to its model holds the whole
                # result on its own, within the 64 KB cap plus the message and keys.
                for args in [{"app": "dev.phonelogs.chatty", "since": "1h", "limit": 500},
                             {"app": "dev.phonelogs.chatty", "since": "1h", "kind": "crashes", "limit": 10}]:
                    capped = await session.call_tool("phone_logs", args)
                    structured = json.dumps(out(capped), separators=(",", ":"), ensure_ascii=False)
                    check(out(capped)["status"] == "ok" and out(capped)["log"] != "", f"{args} is read")
                    check(len(text(capped).encode()) <= 66 * 1024 and len(structured.encode()) <= 66 * 1024,
                          f"{args}: text {len(text(capped).encode())} B, structured {len(structured.encode())} B")
                    check(text(capped).endswith(out(capped)["log"]), f"{args}: one log in both forms")
                    if args.get("kind") == "crashes":
                        # Reports of one fingerprint share a heading: its occurrences count them.
                        grouped = sum(h["occurrences"]["count"] for h in out(capped)["reports"])
                        check(grouped == out(capped)["shown"]
                              and out(capped)["shown"] + out(capped)["left_out"] == 10,
                              f"{args}: every heading, true counts")
                    else:
                        check(out(capped)["shown"] + out(capped)["left_out"] == 1000
                              and f'{out(capped)["shown"]} log lines' in out(capped)["message"],
                              f"{args}: true counts")

                first = await session.call_tool("phone_logs", {"app": "com.example.store"})
                check(out(first)["status"] == "approval_pending", "a release build asks first")
                approval_id = out(first)["approval_id"]

                listed = subprocess.run([CLI, "approvals", "list", "--state-dir", state_dir],
                                        capture_output=True, text=True, check=True)
                check(approval_id in listed.stdout, "phonelogs approvals list shows the question")
                subprocess.run([CLI, "approvals", "answer", approval_id, "task", "--state-dir", state_dir],
                               capture_output=True, text=True, check=True)

                again = await session.call_tool("phone_logs",
                                                {"app": "com.example.store", "approval_id": approval_id})
                check(out(again)["status"] == "ok", "the answered approval gives the logs")
                later = await session.call_tool("phone_logs", {"app": "com.example.store", "kind": "crashes"})
                check(out(later)["status"] == "ok", "Allow for this task covers later reads")

                blocked = await session.call_tool("phone_logs", {"app": "com.paypal.android.p2pmobile"})
                check(out(blocked)["status"] == "blocked_by_policy", "a finance app is refused")

                devices = await session.call_tool("list_devices", {})
                check(out(devices)["devices"][0]["id"] == "emulator-5554", "the demo phone is listed")

                history = await session.call_tool("get_process_exit_history",
                                                  {"serial": "emulator-5554", "package": "dev.phonelogs.crashtest"})
                check(out(history)["status"] == "success"
                      and out(history)["data"]["count"] == 1, "exit history answers in its envelope")
                bad = await session.call_tool("capture_native_backtrace", {"serial": "emulator-5554", "pid": -1})
                check(out(bad)["error"]["code"] == "INVALID_ARGUMENT", "a bad pid is INVALID_ARGUMENT")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except AssertionError as failure:
        print(f"FAILED: {failure}", file=sys.stderr)
        sys.exit(1)
