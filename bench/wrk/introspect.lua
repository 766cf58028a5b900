-- RFC 7662 introspection of a valid access token by its resource (the bench mail API). With a second argument "each",
-- every token of the file in turn (a different token each time); else the first one again and
-- again (what a resource server does with the token of each call it serves).
package.path = package.path .. ";bench/wrk/?.lua"
local c = require("common")

local prepared = {}
local turn = 0

function init(args)
    local tokens = c.lines(args[1])
    local count = args[2] == "each" and #tokens or 1
    for index = 1, count do
        local body = c.form({ { "client_id", "c0000000-0000-4000-8000-000000000002" }, { "client_secret", "bench-mail-api-secret" },
                              { "token", tokens[index] } })
        prepared[index] = wrk.format("POST", "/bench.example/oauth2/v2.0/introspect", { ["Content-Type"] = "application/x-www-form-urlencoded" }, body)
    end
end

function request()
    turn = turn % #prepared + 1
    return prepared[turn]
end
