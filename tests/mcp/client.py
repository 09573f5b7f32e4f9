"""An MCP client (the Python SDK's) that drives `brr mcp` and checks its answers.

    client.py stdio BRR HOT_ID HELPER_ID HOT_LINE HOT_FILE HELPER_LINE RAW_TP_ID
        start `BRR mcp` with the SDK's stdio client, call every tool about
        the fixture programs HOT_ID and HELPER_ID the caller loaded and
        drives (and `cost` about RAW_TP_ID, a raw tracepoint it fires), check the answers, the refusals and a cancel; then check
        that the server exits with 0 when its input ends mid-capture.
    client.py connect BRR SOCKET HOT_ID
        the same SDK client through `BRR mcp --connect SOCKET`.

Prints one `ok ...` line per check and a JSON object of figures (answer
time of each tool, the answers) on the last line; exits 1 on the first
failed check.
"""

import json
import subprocess
import sys
import time

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

TOOLS = ["list_programs", "list_maps", "list_links", "activity", "profile", "cost", "dump",
         "doctor"]
FIGURES = {"seconds": {}, "answers": {}}


def check(cond, what, detail=""):
    if not cond:
        print(f"FAILED: {what}: {detail}"[:4000], flush=True)
        sys.exit(1)
    print(f"ok {what}", flush=True)


async def call(session, tool, args=None, **kw):
    """The tool's answer: (is_error, text, JSON document or None)."""
    start = time.monotonic()
    result = await session.call_tool(tool, args or {}, **kw)
    took = time.monotonic() - start
    text = "".join(c.text for c in result.content if c.type == "text")
    doc = None
    if not result.is_error:
        doc = json.loads(text)
        FIGURES["seconds"].setdefault(tool, round(took, 3))
        FIGURES["answers"].setdefault(tool, doc)
    return result.is_error, text, doc


def program(doc, prog_id):
    return next((p for p in doc.get("items", []) if p.get("id") == prog_id), None)


async def listings(session, hot, helper):
    err, text, doc = await call(session, "list_programs", {"extended": True})
    check(not err, "list_programs answers", text)
    for prog_id in (hot, helper):
        check(program(doc, prog_id) is not None, f"list_programs has program {prog_id}")
    check(program(doc, hot)["name"] == "brr_fx_hot", "the hot fixture by name", program(doc, hot))
    for tool in ("list_maps", "list_links"):
        err, text, doc = await call(session, tool, {"extended": False})
        check(not err and isinstance(doc.get("items"), list), f"{tool} answers a listing", text)


async def activity(session, hot):
    err, text, doc = await call(session, "activity", {"seconds": 1, "limit": 0})
    check(not err, "activity answers", text)
    row = program(doc, hot)
    check(row is not None and row.get("run_count_delta", 0) > 0, "activity counts the hot fixture's runs", row)


async def profile_and_refusals(session, hot, helper, hot_line, hot_file, helper_line):
    args = {"seconds": 3, "kernel_samples": True, "program_ids": [hot, helper],
            "limit": 0, "line_limit": 0}
    async with anyio.create_task_group() as tg:
        answer = {}

        async def first():
            answer["first"] = await call(session, "profile", args)

        tg.start_soon(first)
        await anyio.sleep(1.0)
        err, text, _ = await call(session, "profile", {"seconds": 1})
        check(err and "another profile is running" in text,
              "a concurrent profile is refused with when the first ends", text)
    err, text, doc = answer["first"]
    check(not err, "profile answers", text)
    p = program(doc, hot)
    check(p is not None, "profile reports the hot fixture", text[:2000])
    top = p["hotspots"][0]
    check(top.get("line") == hot_line and top.get("file") == hot_file,
          "the hot line of the hot fixture ranks first", top)
    h = program(doc, helper)
    check(h is not None, "profile reports the helper fixture")
    helpers = [k for k in h.get("kernel_hotspots", []) if k.get("symbol") == "bpf_ktime_get_ns"]
    check(helpers and all(k.get("symbol_kind") == "bpf_helper" and k.get("bpf_line") == helper_line
                          for k in helpers),
          "the helper sits under its line", h.get("kernel_hotspots"))

    err, text, _ = await call(session, "profile", {"seconds": 61})
    check(err and "at most 60" in text, "an out-of-bounds duration is a tool error", text)
    err, text, _ = await call(session, "profile", {"frequency": 10**9, "seconds": 1})
    check(err and "perf_event_max_sample_rate" in text,
          "a rate above the kernel's maximum is a tool error", text)
    err, text, _ = await call(session, "dump", {"program_id": "seven"})
    check(err and "program_id" in text, "a bad argument is a tool error", text)
    err, text, _ = await call(session, "activity", {"window": 3})
    check(err and "unknown argument" in text, "an unknown argument is a tool error", text)
    try:
        await session.call_tool("rm_rf", {})
        check(False, "an unknown tool is refused")
    except MCPError as e:
        check("rm_rf" in str(e), "an unknown tool is a protocol error", e)


async def cancel(session):
    start = time.monotonic()
    try:
        await session.call_tool("profile", {"seconds": 30}, read_timeout_seconds=1.5)
        check(False, "a 30 s profile answered within 1.5 s")
    except MCPError:
        pass
    # Had the cancel not stopped the capture, this one would be refused as busy.
    err, text, doc = await call(session, "profile", {"seconds": 1})
    took = time.monotonic() - start
    check(not err and took < 20, f"a cancel stops the capture (next profile answered after {took:.1f} s)",
          text[:500])


async def cost(session, raw_tp):
    err, text, doc = await call(session, "cost", {"seconds": 2, "program_ids": [raw_tp]})
    check(not err, "cost answers", text[:500])
    check("host_total" in doc.get("metadata", {}), "cost has the host total", text[:500])
    row = program(doc, raw_tp)
    check(row is not None and row.get("runs_per_sec", 0) > 0
          and row["samples"]["program"] + row["samples"]["dispatch"] > 0
          and row["cpu_percent"]["total"] > 0 and "task_rename" in row.get("hook", ""),
          "cost splits the raw tracepoint fixture", text[:2000])
    err, text, _ = await call(session, "cost", {"seconds": 61})
    check(err and "at most 60" in text, "a 61 s cost is refused", text)


async def dump_and_doctor(session, hot, hot_line):
    err, text, doc = await call(session, "dump", {"program_id": hot, "jited": True})
    check(not err, "dump answers", text[:500])
    check(f'"line":{hot_line}' in text.replace(" ", ""), "dump shows the hot line", text[:2000])
    err, text, doc = await call(session, "doctor")
    check(not err and "checks" in json.dumps(doc), "doctor answers", text[:500])


async def stdio(brr, hot, helper, hot_line, hot_file, helper_line, raw_tp):
    server = StdioServerParameters(command=brr, args=["mcp"])
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            check(init.server_info.name == "brr", "initialize names brr", init)
            tools = await session.list_tools()
            names = [t.name for t in tools.tools]
            check(names == TOOLS, "tools/list lists the tools", names)
            check(all(t.input_schema.get("type") == "object" for t in tools.tools),
                  "every tool has an input schema")
            await listings(session, hot, helper)
            await activity(session, hot)
            await profile_and_refusals(session, hot, helper, hot_line, hot_file, helper_line)
            await cancel(session)
            await cost(session, raw_tp)
            await dump_and_doctor(session, hot, hot_line)
    eof_mid_capture(brr)


def eof_mid_capture(brr):
    """Input that ends while a capture runs: the server stops it and exits 0."""
    p = subprocess.Popen([brr, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "profile", "arguments": {"seconds": 30}}},
    ]
    for m in lines:
        p.stdin.write((json.dumps(m) + "\n").encode())
    p.stdin.write(b"{not json\n")
    p.stdin.flush()
    time.sleep(1.5)
    start = time.monotonic()
    p.stdin.close()
    code = p.wait(timeout=25)
    took = time.monotonic() - start
    out = [json.loads(l) for l in p.stdout.read().decode().splitlines()]
    check(code == 0 and took < 15, f"EOF mid-capture: exit {code} after {took:.1f} s",
          p.stderr.read())
    check(any(m.get("id") is None and m.get("error", {}).get("code") == -32700 for m in out),
          "a malformed line is answered with a parse error", out)


async def connect(brr, socket, hot):
    server = StdioServerParameters(command=brr, args=["mcp", "--connect", socket])
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            check(init.server_info.name == "brr", "initialize through the socket")
            err, text, doc = await call(session, "list_programs")
            check(not err and program(doc, hot) is not None,
                  "list_programs through the socket has the hot fixture", text[:500])
            err, text, doc = await call(session, "profile", {"seconds": 1, "program_ids": [hot]})
            check(not err and program(doc, hot) is not None,
                  "profile through the socket", text[:500])


def main():
    mode, brr = sys.argv[1], sys.argv[2]
    if mode == "stdio":
        hot, helper, hot_line = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
        hot_file, helper_line, raw_tp = sys.argv[6], int(sys.argv[7]), int(sys.argv[8])
        anyio.run(stdio, brr, hot, helper, hot_line, hot_file, helper_line, raw_tp)
    else:
        anyio.run(connect, brr, sys.argv[3], int(sys.argv[4]))
    print(json.dumps(FIGURES), flush=True)


if __name__ == "__main__":
    main()
