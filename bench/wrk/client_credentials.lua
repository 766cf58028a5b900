-- client_credentials grant for the bench daemon (app-only token for the mail API).
package.path = package.path .. ";bench/wrk/?.lua"
local c = require("common")
wrk.method = "POST"
wrk.path = c.token_path
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.body = c.form({ { "grant_type", "client_credentials" }, { "client_id", "c0000000-0000-4000-8000-000000000001" },
                    { "client_secret", "bench-daemon-secret" }, { "scope", "api://bench-mail/.default" } })
