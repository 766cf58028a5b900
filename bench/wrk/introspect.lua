-- RFC 7662 introspection of a valid access token by its resource (the bench mail API).
package.path = package.path .. ";bench/wrk/?.lua"
local c = require("common")

local prepared

function init(args)
    local body = c.form({ { "client_id", "c0000000-0000-4000-8000-000000000002" }, { "client_secret", "bench-mail-api-secret" },
                          { "token", c.lines(args[1])[1] } })
    prepared = wrk.format("POST", "/bench.example/oauth2/v2.0/introspect", { ["Content-Type"] = "application/x-www-form-urlencoded" }, body)
end

function request()
    return prepared
end
