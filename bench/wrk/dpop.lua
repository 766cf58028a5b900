-- client_credentials with a DPoP proof (PROTOCOL §15): the same grant as client_credentials.lua, each request with a
-- proof of its own, made ahead of the run by `portcullis-bench dpop-proofs` (wrk cannot sign). Run with one wrk thread
-- (-t1): the pool is per thread. A run must start within a minute of making the proofs (their iat window).
package.path = package.path .. ";bench/wrk/?.lua"
local c = require("common")
local pool = {}
local body = c.form({ { "grant_type", "client_credentials" }, { "client_id", "c0000000-0000-4000-8000-000000000001" },
                      { "client_secret", "bench-daemon-secret" }, { "scope", "api://bench-mail/.default" } })

function init(args)
    pool = c.lines(args[1])
end

function request()
    local proof = table.remove(pool) or "pool-exhausted"
    return wrk.format("POST", c.token_path, { ["Content-Type"] = "application/x-www-form-urlencoded", ["DPoP"] = proof }, body)
end
