-- The 53005 refusal path: refresh grants of accounts with no enrollment, app protection required. A refused
-- refresh does not consume the token, so the same tokens are reused.
package.path = package.path .. ";bench/wrk/?.lua"
local c = require("common")
local tokens = {}
local next_index = 1

function init(args)
    tokens = c.lines(args[1])
end

function request()
    local token = tokens[next_index]
    next_index = next_index % #tokens + 1
    local body = c.form({ { "grant_type", "refresh_token" }, { "client_id", c.mobile }, { "refresh_token", token }, { "claims", c.claims } })
    return wrk.format("POST", c.token_path, c.ios, body)
end
