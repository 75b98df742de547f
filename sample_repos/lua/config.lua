--- Configuration loading helpers for the inventory service.
-- @module config

local io = require("io")

local M = {}

--- Default settings used when a key is missing.
M.DEFAULTS = { max_items = 100, currency = "USD" }

--- Split one config line into a trimmed key and value.
-- @param line string
-- @return string|nil key
-- @return string|nil value
local function split_line(line)
  return line:match("^%s*([%w_]+)%s*=%s*(.-)%s*$")
end

--- Parse a key=value config file, falling back to defaults.
-- @param path string
-- @return table settings
function M.parse_config(path)
  local settings = {}
  for key, value in pairs(M.DEFAULTS) do
    settings[key] = value
  end
  local file = io.open(path, "r")
  if not file then
    return settings
  end
  for line in file:lines() do
    local key, value = split_line(line)
    if key then
      settings[key] = tonumber(value) or value
    end
  end
  file:close()
  return settings
end

--- Restrict value to the closed interval [low, high].
function M.clamp(value, low, high)
  return math.max(low, math.min(value, high))
end

return M
