-- client_credentials grants whose access tokens are appended to the file given (the introspection of tokens never
-- seen before takes them).
package.path = package.path .. ";bench/wrk/?.lua"
local c = require("common")

local body = c.form({ { "grant_type", "client_credentials" }, { "client_id", "c0000000-0000-4000-8000-000000000001" },
                      { "client_secret", "bench-daemon-secret" }, { "scope", "api://bench-mail/.default" } })
local out

function init(args)
    out = assert(io.open(args[1], "a"))
    out:setvbuf("line")
end

function request()
    return wrk.format("POST", c.token_path, { ["Content-Type"] = "application/x-www-form-urlencoded" }, body)
end

function response(status, headers, body)
    local token = body:match('"access_token":"([^"]+)"')
    if token then out:write(token, "\n") end
end
