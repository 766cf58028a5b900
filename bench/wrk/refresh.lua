-- refresh_token grant with rotation, conditional access (app protection required for the mail API on
-- iOS) and a compliant enrollment: the hot path of a protected mobile app. Every response's new refresh
-- token goes back in the pool; each token is used once.
package.path = package.path .. ";bench/wrk/?.lua"
local c = require("common")
local pool = {}
local failures = 0

local headers = c.ios

-- Run with one wrk thread (-t1): the pool is per thread. A second argument "plain" sends no platform
-- headers, so app protection (iOS/Android only) does not apply: rotation and conditional access alone.
function init(args)
    pool = c.lines(args[1])
    if args[2] == "plain" then headers = { ["Content-Type"] = "application/x-www-form-urlencoded" } end
end

function request()
    local token = table.remove(pool)
    if token == nil then
        -- The pool ran dry (a response without a refresh token): keep going, visibly, as a counted failure.
        token = "pool-exhausted"
    end
    local body = c.form({ { "grant_type", "refresh_token" }, { "client_id", c.mobile }, { "refresh_token", token }, { "claims", c.claims } })
    return wrk.format("POST", c.token_path, headers, body)
end

function response(status, headers, body)
    local token = body:match('"refresh_token":"([^"]+)"')
    if token then pool[#pool + 1] = token elseif status ~= 200 or body:find("error") then failures = failures + 1 end
end
