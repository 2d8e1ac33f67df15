-- gateway.lua: the per-request work of an OpenResty-style LLM gateway, for
-- the "nginx-lua" peer of the benchmark (bench/peers/nginx-lua.conf). It
-- does what sluice does per request, the way those gateways do it in Lua:
--
--   access:        SHA-256 of the bearer token looked up in a table of key
--                  hashes (401 if unknown); per-key requests-per-minute and
--                  in-flight counters in a lua_shared_dict; the whole body
--                  read and cjson-decoded for model, stream, user and the
--                  first message (hashed with crc32 for an affinity key);
--                  for streams, stream_options.include_usage set and the
--                  body re-encoded (the known cost); client Authorization
--                  and Cookie cleared, the backend's key set.
--   header/body filters: TTFT at the first body chunk; the usage object
--                  (and finish reason) scraped from the chunks with
--                  string.find/match, without decoding the answer.
--   log:           a ~35-field table, cjson-encoded, one line per request
--                  in @PREFIX@/usage.log (a file opened once per worker,
--                  fully buffered, flushed every second by a timer).

local ngx = ngx
local cjson = require "cjson.safe"
local ok_sha, sha256 = pcall(require, "resty.sha256")
if not ok_sha then
    sha256 = require "nginx.sha256"     -- Debian's lua-nginx-string
end
local ok_str, rstring = pcall(require, "resty.string")
if not ok_str then
    rstring = require "nginx.string"
end

local to_hex = rstring.to_hex
local crc32 = ngx.crc32_long
local find, sub, match = string.find, string.sub, string.match
local tonumber, tostring, type, io_open, floor = tonumber, tostring, type, io.open, math.floor
local ngx_var, ngx_req = ngx.var, ngx.req
local now, update_time = ngx.now, ngx.update_time

-- OpenResty's cjson re-encodes decoded empty arrays as arrays with this;
-- Debian's lua-cjson (upstream 2.1.0) lacks it, so "[]" comes back "{}".
if cjson.decode_array_with_array_mt then
    cjson.decode_array_with_array_mt(true)
end
cjson.encode_sparse_array(true)
local null = cjson.null

local _M = {}

-- API keys: SHA-256 (hex) of the key -> its settings. The benchmark's one
-- key is "sk-bench" (printf %s sk-bench | sha256sum).
local KEYS = {
    ["c00397de4384b5bbaf14c02fe1ec7020d28d1eeab6a722c576c84b6678c41c29"] = {
        name = "bench", rpm = 100000000, max_inflight = 1000000,
    },
}

-- Models -> upstream (the nginx upstream block) and backend key. The
-- affinity hash picks a member of `backends` (one here).
local MODELS = {
    bench = { upstream = "backend", backends = { "b0" }, auth = "Bearer backend-key" },
}

local counters = ngx.shared.gateway_counters
local usage_file

local function flush_usage(premature)
    -- premature: the worker is exiting; log() flushes each line from then on
    if usage_file then
        usage_file:flush()
    end
end

function _M.init()
    -- nothing to precompute beyond the module itself (loaded in the master)
end

function _M.init_worker(path)
    local f, err = io_open(path, "a")
    if not f then
        ngx.log(ngx.ERR, "gateway: cannot open usage log ", path, ": ", err)
        return
    end
    -- Full buffering, 64 KiB, flushed every second by a timer (and when the
    -- worker exits): one write(2) per 64 KiB, like access_log buffer=64k
    -- flush=1s. setvbuf("line") would be a write(2) per request.
    f:setvbuf("full", 65536)
    usage_file = f
    local ok, terr = ngx.timer.every(1, flush_usage)
    if not ok then
        ngx.log(ngx.ERR, "gateway: cannot start the flush timer: ", terr)
    end
end

-- OpenAI-shaped error, ends the request.
local function fail(status, message, etype, param, code)
    local ctx = ngx.ctx
    ctx.error = code
    ngx.status = status
    ngx.header["Content-Type"] = "application/json"
    ngx.print(cjson.encode({ error = {
        message = message, type = etype, param = param or null, code = code,
    } }), "\n")
    return ngx.exit(status)
end

function _M.access()
    local ctx = ngx.ctx
    ctx.start = ngx_req.start_time()

    -- API key: SHA-256 of the bearer token, looked up by hash.
    local auth = ngx_var.http_authorization
    local token = auth and match(auth, "^[Bb]earer%s+(%S+)%s*$")
    if not token then
        return fail(401, "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
            "invalid_request_error", nil, "invalid_api_key")
    end
    local h = sha256:new()
    h:update(token)
    local hash = to_hex(h:final())
    local key = KEYS[hash]
    if not key then
        return fail(401, "Incorrect API key provided.", "invalid_request_error", nil, "invalid_api_key")
    end
    ctx.key = key
    ctx.key_hash = sub(hash, 1, 12)

    -- Per-key counters: requests this minute (expires with the minute) and
    -- requests in flight (decremented in the log phase).
    local minute = floor(ngx.time() / 60)
    local rpm_key = "rpm:" .. key.name .. ":" .. minute
    local rpm, err = counters:incr(rpm_key, 1, 0, 60)
    if not rpm then
        ngx.log(ngx.ERR, "gateway: rpm counter: ", err)
    elseif rpm > key.rpm then
        return fail(429, "Rate limit reached for requests per minute.", "requests", nil, "rate_limit_exceeded")
    end
    ctx.rpm = rpm
    local ifl_key = "inflight:" .. key.name
    local inflight
    inflight, err = counters:incr(ifl_key, 1, 0)
    if not inflight then
        ngx.log(ngx.ERR, "gateway: in-flight counter: ", err)
    else
        ctx.inflight_key = ifl_key
        ctx.inflight = inflight
        if inflight > key.max_inflight then
            return fail(429, "Too many concurrent requests.", "requests", nil, "rate_limit_exceeded")
        end
    end

    -- The body: read whole, decoded whole.
    ngx_req.read_body()
    local body = ngx_req.get_body_data()
    if not body then
        local path = ngx_req.get_body_file()   -- over client_body_buffer_size
        if path then
            local f = io_open(path, "rb")
            if f then
                body = f:read("*a")
                f:close()
            end
        end
    end
    if not body or body == "" then
        return fail(400, "Request body is empty.", "invalid_request_error", nil, "invalid_body")
    end
    ctx.body_bytes = #body
    local req = cjson.decode(body)
    if type(req) ~= "table" then
        return fail(400, "We could not parse the JSON body of your request.", "invalid_request_error", nil, "invalid_json")
    end

    local model = req.model
    local route = type(model) == "string" and MODELS[model]
    if not route then
        return fail(404, "The model `" .. tostring(model) .. "` does not exist or you do not have access to it.",
            "invalid_request_error", "model", "model_not_found")
    end
    ctx.model = model
    ctx.upstream = route.upstream
    ctx.stream = req.stream == true
    ctx.max_tokens = tonumber(req.max_tokens or req.max_completion_tokens)
    if type(req.user) == "string" then ctx.user = req.user end

    -- The prompt: first message's content (chat), else prompt / input.
    local content
    local messages = req.messages
    if type(messages) == "table" then
        ctx.messages = #messages
        local first = messages[1]
        content = type(first) == "table" and first.content
        if type(content) == "table" then           -- content parts
            local part = content[1]
            content = type(part) == "table" and part.text
        end
    else
        content = req.prompt or req.input
        if type(content) == "table" then content = content[1] end
    end
    if type(content) == "string" then
        ctx.prompt_bytes = #content
        local aff = crc32(content)
        ctx.affinity = aff
        ctx.backend = route.backends[aff % #route.backends + 1]
    else
        ctx.prompt_bytes = 0
        ctx.affinity = 0
        ctx.backend = route.backends[1]
    end

    -- Streams: ask the backend for the usage event, and re-encode.
    if ctx.stream then
        local so = req.stream_options
        if type(so) ~= "table" then
            so = {}
            req.stream_options = so
        end
        if so.include_usage ~= true then
            so.include_usage = true
            ctx.injected_usage = true
        end
        local out = cjson.encode(req)
        ngx_req.set_body_data(out)
        ctx.upstream_body_bytes = #out
    end

    ngx_req.clear_header("Authorization")
    ngx_req.clear_header("Cookie")
    ngx_req.set_header("Authorization", route.auth)
end

function _M.header_filter()
    local ctx = ngx.ctx
    ctx.status = ngx.status
    ctx.content_type = ngx.header["Content-Type"]
end

-- Looks for the usage object (and a finish reason) in s; returns the
-- position to carry from when an object is cut at the end of s.
local function scan(ctx, s)
    local init = 1
    while true do
        local p = find(s, '"finish_reason"', init, true)
        if not p then break end
        local fr = match(s, '^"finish_reason"%s*:%s*"([%w_]+)"', p)
        if fr then ctx.finish_reason = fr end
        init = p + 15
    end
    init = 1
    while true do
        local p = find(s, '"usage"', init, true)
        if not p then return nil end
        local obj = match(s, '^"usage"%s*:%s*(%b{})', p)
        if obj then
            -- the last one wins (a non-stream answer's top-level usage, a
            -- stream's usage event)
            ctx.prompt_tokens = tonumber(match(obj, '"prompt_tokens"%s*:%s*(%d+)'))
            ctx.completion_tokens = tonumber(match(obj, '"completion_tokens"%s*:%s*(%d+)'))
            ctx.total_tokens = tonumber(match(obj, '"total_tokens"%s*:%s*(%d+)'))
        elseif match(s, '^"usage"%s*:%s*{', p) or match(s, '^"usage"%s*:?%s*$', p) then
            return p                        -- cut: wait for the next chunk
        end
        init = p + 7
    end
end

local CARRY_MAX = 4096

function _M.body_filter()
    local ctx = ngx.ctx
    local chunk = ngx.arg[1]
    if not ctx.ttft then
        update_time()
        ctx.ttft = now() - (ctx.start or ngx_req.start_time())
    end
    if chunk ~= "" then
        ctx.chunks = (ctx.chunks or 0) + 1
        local s = chunk
        local carry = ctx.carry
        if carry then s = carry .. chunk end
        local cut = scan(ctx, s)
        if cut and #s - cut < CARRY_MAX then
            ctx.carry = sub(s, cut)
        else
            -- keep a few bytes in case a key is split between chunks
            ctx.carry = #s > 16 and sub(s, -16) or s
        end
    end
end

function _M.log()
    local ctx = ngx.ctx
    if ctx.inflight_key then
        local _, err = counters:incr(ctx.inflight_key, -1, 0)
        if err then ngx.log(ngx.ERR, "gateway: in-flight counter: ", err) end
    end
    if not usage_file then return end
    update_time()
    local t = now()
    local start = ctx.start or ngx_req.start_time()
    local key = ctx.key
    local urt = ngx_var.upstream_response_time
    local rec = {
        request_id = ngx_var.request_id,
        time = ngx.utctime(),
        ts = t,
        worker_pid = ngx.worker.pid(),
        key_name = key and key.name or null,
        key_hash = ctx.key_hash or null,
        method = ngx_req.get_method(),
        endpoint = ngx_var.uri,
        model = ctx.model or null,
        upstream = ctx.upstream or null,
        backend = ctx.backend or null,
        backend_addr = ngx_var.upstream_addr or null,
        status = ngx.status,
        upstream_status = tonumber(ngx_var.upstream_status) or null,
        error = ctx.error or null,
        stream = ctx.stream or false,
        usage_injected = ctx.injected_usage or false,
        prompt_bytes = ctx.prompt_bytes or 0,
        body_bytes = ctx.body_bytes or 0,
        upstream_body_bytes = ctx.upstream_body_bytes or ctx.body_bytes or 0,
        messages = ctx.messages or 0,
        affinity = ctx.affinity or null,
        max_tokens = ctx.max_tokens or null,
        user = ctx.user or null,
        ttft_ms = ctx.ttft and ctx.ttft * 1000 or null,
        duration_ms = (t - start) * 1000,
        upstream_ms = urt and tonumber(urt) and tonumber(urt) * 1000 or null,
        prompt_tokens = ctx.prompt_tokens or null,
        completion_tokens = ctx.completion_tokens or null,
        total_tokens = ctx.total_tokens or null,
        finish_reason = ctx.finish_reason or null,
        chunks = ctx.chunks or 0,
        content_type = ctx.content_type or null,
        bytes_in = tonumber(ngx_var.request_length),
        bytes_out = tonumber(ngx_var.bytes_sent),
        rpm = ctx.rpm or null,
        inflight = ctx.inflight or null,
        client_addr = ngx_var.remote_addr,
        user_agent = ngx_var.http_user_agent or null,
    }
    usage_file:write(cjson.encode(rec), "\n")
    if ngx.worker.exiting() then
        usage_file:flush()
    end
end

return _M
