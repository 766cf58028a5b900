-- client_credentials grant for the bench daemon with a client assertion (PROTOCOL §21) instead of its secret. The first
-- argument is a file of assertions: with a second argument "fresh" each is used once (a new jti each time, as a client
-- that signs per request); otherwise the first is sent again and again (as MSAL reuses one for ten minutes).
package.path = package.path .. ";bench/wrk/?.lua"
local c = require("common")
local pool = {}
local fresh = false
local failures = 0

function init(args)
    pool = c.lines(args[1])
    fresh = args[2] == "fresh"
end

local function body(assertion)
    return c.form({ { "grant_type", "client_credentials" }, { "client_id", "c0000000-0000-4000-8000-000000000001" },
                    { "client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" },
                    { "client_assertion", assertion }, { "scope", "api://bench-mail/.default" } })
end

function request()
    local assertion = fresh and table.remove(pool) or pool[1]
    return wrk.format("POST", c.token_path, { ["Content-Type"] = "application/x-www-form-urlencoded" }, body(assertion or "pool-exhausted"))
end

function response(status, headers, body)
    if status ~= 200 then failures = failures + 1 end
end
