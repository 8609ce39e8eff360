#!/usr/bin/env python3
"""The official MCP Python SDK (`pip install mcp`) as an agent's client of `phonelogs-mcp`,
reading Crash Test on the simulated iPhone (`phonelogs sim --ios --ios-version V --control`)
on iOS 17.2, 18.6 and 26.1 (issue 27):

- the app not running yet is a true 0 that says so;
- without the developer disk image the app's own lines are read (os_trace_relay's PidList),
  its widget's are not, and the message says why and what fixes it;
- with the disk image mounted (17.4 and later, through CoreDevice's tunnel) the widget's lines
  come too; 17.2 has no tunnel over USB, and its message says 17.4 is what helps;
- with Developer Mode off the message names Developer Mode and where to turn it on.

    .venv/bin/python bins/phonelogs-mcp/tests/python/test_mcp_ios_versions.py

Binaries: $PHONELOGS_MCP (default target/debug/phonelogs-mcp) and $PHONELOGS (default
target/debug/phonelogs). Exits non-zero on the first failed check.
"""

import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

SERVER = os.environ.get("PHONELOGS_MCP", "target/debug/phonelogs-mcp")
CLI = os.environ.get("PHONELOGS", "target/debug/phonelogs")
APP = "dev.phonelogs.crashtest"
WIDGET = "dev.phonelogs.crashtest.widget"
SUBSYSTEM = "dev.phonelogs.crashtest"
MOUNT = "pymobiledevice3 mounter auto-mount"


def field(obj, snake):
    """Reads a field by its SDK 2.x name, falling back to the 1.x camelCase one."""
    if hasattr(obj, snake):
        return getattr(obj, snake)
    head, *rest = snake.split("_")
    return getattr(obj, head + "".join(word.title() for word in rest))


def out(result):
    return field(result, "structured_content")


def check(condition, what):
    if not condition:
        raise AssertionError(what)
    print(f"ok - {what}")


def no_adb_port():
    """A loopback port that accepts and closes every connection: the server's Android driver
    finds no adb server there and, since the port answers, starts none."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def serve():
        while True:
            connection, _ = listener.accept()
            connection.close()

    threading.Thread(target=serve, daemon=True).start()
    return listener.getsockname()[1]


class Sim:
    """`phonelogs sim --ios --control` on one iOS release."""

    def __init__(self, version):
        self.process = subprocess.Popen(
            [CLI, "sim", "--ios", "--port", "0", "--control", "--ios-version", version],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.address = None
        while self.address is None:
            line = self.process.stdout.readline().strip()
            if not line:
                raise AssertionError(f"phonelogs sim --ios --ios-version {version} ended")
            if line.startswith("USBMUXD_SOCKET_ADDRESS="):
                self.address = line.split("=", 1)[1]

    def command(self, command):
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        while True:
            line = self.process.stdout.readline().strip()
            # RSD's loopback address is printed after usbmuxd's; it is no answer.
            if "_ADDRESS=" not in line:
                return line

    def pid(self, command):
        answer = self.command(command)
        check(answer.startswith("pid "), f"{command}: {answer}")
        return answer.split()[1]

    def log(self, pid, category, text):
        answer = self.command(f"log {pid} error {SUBSYSTEM} {category} {text}")
        if answer != "ok":
            raise AssertionError(f"logging {text!r}: {answer}")

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=20)


async def read_until(session, device, wanted, seconds=15):
    """phone_logs until its log holds `wanted` (or the time is up); the last result."""
    deadline = time.monotonic() + seconds
    while True:
        result = out(await session.call_tool("phone_logs", {"app": APP, "device": device}))
        if wanted in result["log"] or time.monotonic() > deadline:
            return result
        await asyncio.sleep(0.2)


async def until_streamed(sim, pid, seconds=15):
    deadline = time.monotonic() + seconds
    while sim.command(f"streamed {pid}") != "yes" and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    check(sim.command(f"streamed {pid}") == "yes", f"the follower opened pid {pid}'s stream")


async def one_release(version, adb_port):
    sim = Sim(version)
    try:
        check(sim.command("ddi unmount") == "ok", f"{version}: the disk image unmounted (a restart)")
        env = dict(os.environ, USBMUXD_SOCKET_ADDRESS=sim.address, ANDROID_ADB_SERVER_PORT=str(adb_port))
        with tempfile.TemporaryDirectory() as state_dir:
            params = StdioServerParameters(command=SERVER, args=["--state-dir", state_dir], env=env)
            async with stdio_client(params) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    devices = out(await session.call_tool("list_devices", {}))["devices"]
                    iphones = [d["id"] for d in devices if d["platform"] == "ios"]
                    check(len(iphones) == 1, f"{version}: the iPhone is listed: {devices}")
                    device = iphones[0]

                    idle = out(await session.call_tool("phone_logs", {"app": APP, "device": device}))
                    check(idle["status"] == "ok" and idle["shown"] == 0
                          and "is not running on the phone now" in idle["message"],
                          f"{version}: the app not running is a true 0 that says so: {idle['message']}")

                    app = sim.pid(f"launch {APP}")
                    widget = sim.pid(f"extension {APP} {WIDGET}")
                    await until_streamed(sim, app)
                    sim.log(app, "Net", f"app line on {version}")
                    sim.log(widget, "Widget", f"widget line on {version}")
                    got = await read_until(session, device, f"app line on {version}")
                    check(f"app line on {version}" in got["log"], f"{version}: the app's own line is read without the disk image")
                    check("widget line" not in got["log"], f"{version}: the widget's is not")
                    message = got["message"]
                    check("Lines of the extensions (widgets, share extensions and other app extensions) of Crash Test cannot be read" in message,
                          f"{version}: the message says the extensions' lines are missing: {message}")
                    if version == "17.2":
                        check("update the iPhone to iOS 17.4 or later" in message, f"17.2: the fix is 17.4: {message}")
                    else:
                        check(MOUNT in message, f"{version}: the fix mounts the disk image: {message}")

                    check(sim.command("ddi mount") == "ok", f"{version}: the disk image mounted mid-task")
                    if version != "17.2":
                        await until_streamed(sim, widget, seconds=20)
                        sim.log(widget, "Widget", f"widget after mount on {version}")
                        got = await read_until(session, device, f"widget after mount on {version}", seconds=20)
                        check(f"widget after mount on {version}" in got["log"],
                              f"{version}: with the disk image the widget's lines come too")
                        check("cannot be read" not in got["message"], f"{version}: nothing is said missing: {got['message']}")


        # Developer Mode off (the phone restarts to change it, so the image is gone and every
        # connection with it): a new task reads the app again.
        check(sim.command("developer-mode off") == "ok", f"{version}: Developer Mode turned off")
        with tempfile.TemporaryDirectory() as state_dir:
            params = StdioServerParameters(command=SERVER, args=["--state-dir", state_dir], env=env)
            async with stdio_client(params) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    # The app keeps logging; its lines come once this task's stream is open.
                    deadline = time.monotonic() + 15
                    while True:
                        sim.log(app, "Net", f"after developer mode on {version}")
                        got = out(await session.call_tool("phone_logs", {"app": APP, "device": device}))
                        if "after developer mode" in got["log"] or time.monotonic() > deadline:
                            break
                        await asyncio.sleep(0.5)
                    check("after developer mode" in got["log"], f"{version}: the app's lines still come")
                    if version == "17.2":
                        check("update the iPhone to iOS 17.4 or later" in got["message"],
                              f"17.2: the message still names 17.4: {got['message']}")
                    else:
                        check("Developer Mode is off" in got["message"]
                              and "Settings › Privacy & Security › Developer Mode" in got["message"],
                              f"{version}: the message names Developer Mode and its fix: {got['message']}")
    finally:
        sim.close()


async def main():
    adb_port = no_adb_port()
    for version in ["17.2", "18.6", "26.1"]:
        await one_release(version, adb_port)


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except AssertionError as failure:
        print(f"FAILED: {failure}", file=sys.stderr)
        sys.exit(1)
