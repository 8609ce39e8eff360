#!/usr/bin/env python3
"""Measures an MCP stdio server the way the issue asks: the time from start to the first
`tools/list` answer, resident memory when idle, and resident memory after N tool calls (to see
growth). Standard library only; Linux (/proc) only.

    python3 bins/phonelogs-mcp/bench/measure.py --calls 1000 -- target/release/phonelogs-mcp --demo=adbsim --state-dir /tmp/pl
    python3 bins/phonelogs-mcp/bench/measure.py --calls 1000 --tool list_devices -- npx -y @mobilenext/mobile-mcp

The first command is phonelogs; the second measures mobile-mcp side by side (its closest tool
to call without a phone is `mobile_list_available_devices`; pass it with --tool). Each figure is
the median of --runs runs.

    python3 bins/phonelogs-mcp/bench/measure.py --sizes -- target/release/phonelogs-mcp --demo=fake --state-dir /tmp/pl [--result-cap 16384]

`--sizes` measures instead what a model receives from a capped `phone_logs` call (the demo's
Chatty app: 1,000 long lines, ten crash reports of 5 to 40 KB), in each of the two client
behaviours: the text content only (most clients), and `JSON.stringify(structuredContent)` only
(Claude Code). Each must be at most the result cap plus 2 KB; it exits non-zero otherwise.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def rss_kib(pid):
    """Resident memory of a process and all its descendants (npx starts node under a shell)."""
    total = 0
    pids = [pid]
    seen = set()
    while pids:
        p = pids.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
            with open(f"/proc/{p}/task/{p}/children") as f:
                pids.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return total


def send(proc, message):
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()


def receive(proc, want_id):
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("the server closed its output")
        message = json.loads(line)
        if message.get("id") == want_id:
            return message


def run_once(command, calls, tool, arguments):
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "measure", "version": "1"}}})
    receive(proc, 1)
    send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    receive(proc, 2)
    first_list_ms = (time.perf_counter() - start) * 1000
    time.sleep(1.0)
    idle = rss_kib(proc.pid)
    call_start = time.perf_counter()
    for i in range(calls):
        send(proc, {"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call",
                    "params": {"name": tool, "arguments": arguments}})
        receive(proc, 10 + i)
    per_call_ms = (time.perf_counter() - call_start) * 1000 / max(calls, 1)
    time.sleep(0.5)
    after = rss_kib(proc.pid)
    proc.stdin.close()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
    return first_list_ms, idle, after, per_call_ms


SIZE_CALLS = {
    "logs (limit 500)": {"app": "dev.phonelogs.chatty", "since": "1h", "limit": 500},
    "crashes (limit 10)": {"app": "dev.phonelogs.chatty", "since": "1h", "kind": "crashes", "limit": 10},
}


def measure_sizes(command):
    """The bytes a model receives from each capped call, in each client behaviour."""
    cap = 65536
    if "--result-cap" in command:
        cap = int(command[command.index("--result-cap") + 1])
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "measure", "version": "1"}}})
    receive(proc, 1)
    send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    figures = {}
    ok = True
    for i, (name, arguments) in enumerate(SIZE_CALLS.items()):
        send(proc, {"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call",
                    "params": {"name": "phone_logs", "arguments": arguments}})
        result = receive(proc, 10 + i)["result"]
        text = "".join(c.get("text", "") for c in result["content"] if c.get("type") == "text")
        structured = result["structuredContent"]
        # JSON.stringify: no spaces, non-ASCII written as is.
        stringified = json.dumps(structured, separators=(",", ":"), ensure_ascii=False)
        text_bytes = len(text.encode())
        structured_bytes = len(stringified.encode())
        within = max(text_bytes, structured_bytes) <= cap + 2048
        ok = ok and within
        figures[name] = {
            "text_content_only_bytes": text_bytes,
            "structured_content_only_bytes": structured_bytes,
            "shown": structured["shown"],
            "left_out": structured["left_out"],
            "cut": structured["cut"],
            "within_cap_plus_2_kib": within,
        }
    proc.stdin.close()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
    print(json.dumps({"command": " ".join(command), "result_cap": cap, "calls": figures}, indent=2))
    return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", action="store_true",
                        help="measure the bytes a model receives from capped calls instead")
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tool", default="phone_logs")
    parser.add_argument("--arguments", default='{"app": "dev.phonelogs.crashtest"}')
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = [c for c in args.command if c != "--"]
    if args.sizes:
        return measure_sizes(command)
    results = [run_once(command, args.calls, args.tool, json.loads(args.arguments)) for _ in range(args.runs)]
    first, idle, after, per_call = (statistics.median(r[i] for r in results) for i in range(4))
    print(json.dumps({
        "command": " ".join(command),
        "first_tools_list_ms": round(first, 1),
        "idle_rss_mib": round(idle / 1024, 1),
        f"rss_after_{args.calls}_calls_mib": round(after / 1024, 1),
        "per_call_ms": round(per_call, 3),
        "runs": args.runs,
    }, indent=2))


if __name__ == "__main__":
    sys.exit(main())
