-- Shared by the scenario scripts: form encoding and reading the dataset's token files.
local M = {}

function M.urlencode(s)
    return (s:gsub("[^%w%-%._~]", function(c) return string.format("%%%02X", string.byte(c)) end))
end

function M.form(fields)
    local parts = {}
    for _, pair in ipairs(fields) do
        parts[#parts + 1] = M.urlencode(pair[1]) .. "=" .. M.urlencode(pair[2])
    end
    return table.concat(parts, "&")
end

function M.lines(path)
    local out = {}
    local file = assert(io.open(path, "r"), "cannot read " .. path)
    for line in file:lines() do
        if #line > 0 then out[#out + 1] = line end
    end
    file:close()
    return out
end

M.mobile = "c0000000-0000-4000-8000-000000000000"
M.claims = '{"access_token":{"xms_cc":{"values":["protapp"]}}}'
M.token_path = "/bench.example/oauth2/v2.0/token"
M.ios = { ["Content-Type"] = "application/x-www-form-urlencoded", ["x-client-SKU"] = "MSAL.iOS", ["x-client-OS"] = "17.4" }

return M
