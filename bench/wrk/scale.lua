-- client_credentials grants spread over every tenant of the scale dataset (tenants.txt: "tenantId clientId secret"),
-- a random tenant per request, so that every tenant's snapshot is on the hot path.
package.path = package.path .. ";bench/wrk/?.lua"
local c = require("common")
local requests = {}

function init(args)
    for _, line in ipairs(c.lines(args[1])) do
        local tenant, client, secret = line:match("^(%S+) (%S+) (%S+)$")
        local body = c.form({ { "grant_type", "client_credentials" }, { "client_id", client }, { "client_secret", secret },
                              { "scope", "api://scale-mail/.default" } })
        requests[#requests + 1] = wrk.format("POST", "/" .. tenant .. "/oauth2/v2.0/token",
                                             { ["Content-Type"] = "application/x-www-form-urlencoded" }, body)
    end
    math.randomseed(os.time())
end

function request()
    return requests[math.random(#requests)]
end
