-- wrk script: tools/call echo in a loop on one open MCP session (Streamable HTTP).
--
--   wrk -t1 -cN -dD --latency URL -s mcp_echo.lua -- URL [mcp|bare|modern] [INIT_URL]
--
-- Each wrk thread sets up its own session in init(): initialize (the answer's
-- Mcp-Session-Id header names the session), then notifications/initialized,
-- both to INIT_URL when given (another node of a cluster), else to URL.
-- wrk's Lua has no sockets of its own, so those two requests go through curl;
-- they are not part of the measurement. Then every request is a tools/call of
-- echo with a unique id, and every answer is checked: status 200 and a
-- "result" in the body (SSE or JSON alike), anything else counts as bad.
--
-- With "bare" as second argument no session is set up: that is the load for
-- the HTTP ceiling (bench/http_ceiling.c), which answers any POST.
--
-- An https URL works as well (wrk speaks TLS itself); the set-up requests go
-- through curl with -k then, since the bench's certificate is a throwaway
-- self-signed one. A header given to wrk with -H 'Authorization: Bearer ...'
-- is sent with every request, the two set-up requests included.
--
-- With "modern" no session is set up either: every request is a stateless POST
-- of revision 2026-07-28, the same tools/call echo carrying the _meta envelope
-- (protocolVersion, clientCapabilities, clientInfo) with the headers
-- MCP-Protocol-Version: 2026-07-28, Mcp-Method: tools/call and Mcp-Name: echo;
-- an answer counts as good only with "resultType":"complete".
--
-- With "taskcreate" every request is the same stateless POST of a tools/call of
-- slow_compute (seconds 0) declaring the tasks extension (io.modelcontextprotocol/tasks):
-- good with "resultType":"task" (a task made, durably, before the answer). With
-- "taskget" init() makes one such task (through curl) and every request is a tasks/get
-- of it (Mcp-Name: its id): good with its taskId and "resultType":"complete".
--
-- done() prints one machine-readable line starting with "BENCH " that
-- bench/run parses.

local url, mode = nil, nil
local sid = nil
counter = 0
bad = 0
good = 0
local threads = {}

local function sh_quote(s)
    return "'" .. string.gsub(s, "'", "'\\''") .. "'"
end

local function post(u, extra_headers, body, want_headers)
    local cmd = "curl -s --max-time 10 -X POST " .. sh_quote(u)
        .. " -H 'Content-Type: application/json'"
        .. " -H 'Accept: application/json, text/event-stream'"
    if string.sub(u, 1, 8) == "https://" then
        cmd = cmd .. " -k"
    end
    if wrk.headers["Authorization"] ~= nil then
        cmd = cmd .. " -H " .. sh_quote("Authorization: " .. wrk.headers["Authorization"])
    end
    for _, h in ipairs(extra_headers) do
        cmd = cmd .. " -H " .. sh_quote(h)
    end
    if want_headers then
        cmd = cmd .. " -D -"
    end
    cmd = cmd .. " -d " .. sh_quote(body)
    local p = io.popen(cmd)
    local out = p:read("*a")
    p:close()
    return out
end

function setup(thread)
    table.insert(threads, thread)
end

function init(args)
    url = args[1]
    mode = args[2] or "mcp"
    local init_url = args[3] or url
    wrk.method = "POST"
    wrk.headers["Content-Type"] = "application/json"
    wrk.headers["Accept"] = "application/json, text/event-stream"
    wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
    if mode == "bare" then
        return
    end
    if mode == "modern" then
        wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
        wrk.headers["Mcp-Method"] = "tools/call"
        wrk.headers["Mcp-Name"] = "echo"
        return
    end
    if mode == "taskcreate" or mode == "taskget" then
        wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
        wrk.headers["Mcp-Method"] = "tools/call"
        wrk.headers["Mcp-Name"] = "slow_compute"
        if mode == "taskcreate" then
            return
        end
        local out = post(url, {"MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call",
            "Mcp-Name: slow_compute"}, task_call_body(0), false)
        task_id = string.match(out, '"taskId":"([%w%-%.]+)"')
        if task_id == nil then
            io.stderr:write("mcp_echo.lua: slow_compute made no task:\n" .. out .. "\n")
            os.exit(2)
        end
        wrk.headers["Mcp-Method"] = "tasks/get"
        wrk.headers["Mcp-Name"] = task_id
        return
    end
    local out = post(init_url, {}, '{"jsonrpc":"2.0","id":0,"method":"initialize","params":'
        .. '{"protocolVersion":"2025-11-25","capabilities":{},'
        .. '"clientInfo":{"name":"wrk","version":"0"}}}', true)
    sid = string.match(out, "[Mm][Cc][Pp]%-[Ss][Ee][Ss][Ss][Ii][Oo][Nn]%-[Ii][Dd]: *([%w%-]+)")
    if sid == nil then
        io.stderr:write("mcp_echo.lua: initialize gave no Mcp-Session-Id:\n" .. out .. "\n")
        os.exit(2)
    end
    wrk.headers["Mcp-Session-Id"] = sid
    post(init_url, {"Mcp-Session-Id: " .. sid, "MCP-Protocol-Version: 2025-11-25"},
        '{"jsonrpc":"2.0","method":"notifications/initialized"}', false)
end

local modern_meta = ',"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    .. '"io.modelcontextprotocol/clientCapabilities":{},'
    .. '"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"0"}}'
local task_meta = ',"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    .. '"io.modelcontextprotocol/clientCapabilities":{"extensions":'
    .. '{"io.modelcontextprotocol/tasks":{}}},'
    .. '"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"0"}}'

function task_call_body(id)
    return '{"jsonrpc":"2.0","id":' .. id .. ',"method":"tools/call","params":'
        .. '{"name":"slow_compute","arguments":{"seconds":0}' .. task_meta .. '}}'
end

function request()
    counter = counter + 1
    if mode == "taskcreate" then
        return wrk.format(nil, nil, nil, task_call_body(counter))
    end
    if mode == "taskget" then
        return wrk.format(nil, nil, nil, '{"jsonrpc":"2.0","id":' .. counter
            .. ',"method":"tasks/get","params":{"taskId":"' .. task_id .. '"' .. task_meta .. '}}')
    end
    local body = '{"jsonrpc":"2.0","id":' .. counter
        .. ',"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}'
        .. (mode == "modern" and modern_meta or "") .. '}}'
    return wrk.format(nil, nil, nil, body)
end

function response(status, headers, body)
    local want = mode == "modern" and '"resultType":"complete"'
        or mode == "taskcreate" and '"resultType":"task"'
        or mode == "taskget" and '"resultType":"complete"'
        or '"result"'
    local ok = status == 200 and string.find(body, want, 1, true)
    if ok and mode == "taskget" then
        ok = string.find(body, '"taskId":"' .. task_id .. '"', 1, true)
    end
    if ok then
        good = good + 1
    else
        bad = bad + 1
        if bad <= 3 then
            io.stderr:write("mcp_echo.lua: bad answer " .. status .. ": "
                .. string.sub(body or "", 1, 200) .. "\n")
        end
    end
end

function done(summary, latency, requests)
    local b, g = 0, 0
    for _, t in ipairs(threads) do
        b = b + (t:get("bad") or 0)
        g = g + (t:get("good") or 0)
    end
    io.write(string.format(
        "BENCH requests=%d duration_us=%d p50_us=%d p99_us=%d good=%d bad=%d "
        .. "errors_connect=%d errors_read=%d errors_write=%d errors_status=%d errors_timeout=%d\n",
        summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
        g, b, summary.errors.connect, summary.errors.read, summary.errors.write,
        summary.errors.status, summary.errors.timeout))
end
