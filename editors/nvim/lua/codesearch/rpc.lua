-- JSON-RPC to the codesearch daemon over its Unix socket: newline-delimited messages, one
-- connection per request, everything in libuv callbacks (typing never waits on a search).
local M = {}

local uv = vim.loop

-- Send `method(params)` to the daemon listening on `sock`; `callback(err, result)` runs on the
-- main loop. `err` is a table {kind = "connect" | "timeout" | "rpc" | "protocol", message, code}.
function M.request(sock, method, params, callback, timeout_ms)
  local pipe = uv.new_pipe(false)
  local done = false
  local chunks = {}
  local timer = uv.new_timer()

  local function finish(err, result)
    if done then
      return
    end
    done = true
    timer:stop()
    timer:close()
    if not pipe:is_closing() then
      pipe:close()
    end
    vim.schedule(function()
      callback(err, result)
    end)
  end

  timer:start(timeout_ms or 30000, 0, function()
    finish({ kind = "timeout", message = "the daemon did not answer in time" })
  end)

  pipe:connect(sock, function(connect_err)
    if connect_err then
      finish({ kind = "connect", message = connect_err })
      return
    end
    local message = vim.json.encode({ jsonrpc = "2.0", id = 1, method = method, params = params or vim.empty_dict() })
    pipe:write(message .. "\n")
    pipe:read_start(function(read_err, data)
      if read_err then
        finish({ kind = "connect", message = read_err })
        return
      end
      if not data then
        finish({ kind = "protocol", message = "the daemon closed the connection without an answer" })
        return
      end
      table.insert(chunks, data)
      if data:find("\n", 1, true) then
        local line = table.concat(chunks):match("^[^\n]*")
        -- vim.json.decode may not be called in a fast event on 0.7: decode on the main loop
        vim.schedule(function()
          local ok, reply = pcall(vim.json.decode, line)
          if not ok or type(reply) ~= "table" then
            finish({ kind = "protocol", message = "the daemon's answer is not JSON" })
          elseif reply.error then
            finish({ kind = "rpc", message = reply.error.message, code = reply.error.code })
          else
            finish(nil, reply.result)
          end
        end)
      end
    end)
  end)
end

return M
