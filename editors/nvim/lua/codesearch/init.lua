-- codesearch for Neovim: search, callers, callees and status through the project's daemon,
-- results in the quickfix list (or a Telescope picker), and a helper for `codesearch lsp`.
local rpc = require("codesearch.rpc")

local M = {}

M.config = {
  cmd = "codesearch", -- the codesearch executable (a path, or a name on $PATH)
  limit = 20, -- results per search
  mode = "hybrid", -- hybrid | vector | keyword | graph
  start_daemon = true, -- start the project's daemon when none runs
  open_quickfix = true, -- open the quickfix window after filling it
  index_dir = nil, -- where the index lives (default: $CODESEARCH_INDEX_DIR, else ROOT/.codesearch)
  timeout_ms = 30000, -- how long a request may take
  start_timeout_ms = 600000, -- how long the first start (and first indexing) may take
  watch_ms = 1000, -- after a partial answer, how often the daemon is asked whether answers are whole again
  -- a daemon the plugin starts stops after this long idle: "auto" (the daemon_idle_minutes setting), minutes, or "never"
  idle_stop = "auto",
}

function M.setup(opts)
  M.config = vim.tbl_extend("force", M.config, opts or {})
end

local function notify(message, level)
  vim.notify("codesearch: " .. message, level or vim.log.levels.INFO)
end

-- A JSON value that is there (null arrives as vim.NIL, which Lua counts as true).
local function given(value)
  return value ~= nil and value ~= vim.NIL
end

-- A share (0 to 1) as a whole percentage, never rounded up to 100 before it is.
local function percent(share)
  return math.floor(100 * (given(share) and share or 0) + 1e-9)
end

-- The project of the current buffer: the nearest folder with an index, else with .git, else cwd.
function M.root()
  local start = vim.fn.expand("%:p:h")
  if start == "" then
    start = vim.fn.getcwd()
  end
  for _, marker in ipairs({ ".codesearch", ".git" }) do
    local found = vim.fn.finddir(marker, start .. ";")
    if found ~= "" then
      return vim.fn.fnamemodify(found, ":p:h:h")
    end
  end
  return vim.fn.getcwd()
end

local function index_dir_of(root)
  local chosen = M.config.index_dir or os.getenv("CODESEARCH_INDEX_DIR")
  if chosen and chosen ~= "" then
    return (vim.fn.fnamemodify(chosen, ":p"):gsub("/$", ""))
  end
  return root .. "/.codesearch"
end

local function socket_of(root)
  return index_dir_of(root) .. "/daemon.sock"
end

local starting = {} -- root -> list of callbacks waiting for its daemon

-- Start the daemon of `root` (non-blocking); `callback(err)` once it is ready or failed.
local function start_daemon(root, callback)
  if vim.fn.executable(M.config.cmd) ~= 1 then
    callback("the `" .. M.config.cmd .. "` command was not found; install codesearch or set "
      .. "require('codesearch').setup({ cmd = '/path/to/codesearch' })")
    return
  end
  if starting[root] then
    table.insert(starting[root], callback)
    return
  end
  starting[root] = { callback }
  local fresh = vim.fn.isdirectory(index_dir_of(root)) == 0
  if fresh then
    notify("no index for " .. root .. " yet: building it (the first time takes a while)")
  end
  local output = {}
  local function collect(_, data)
    for _, line in ipairs(data or {}) do
      if line ~= "" then
        table.insert(output, line)
      end
    end
  end
  local timeout_s = tostring(math.floor(M.config.start_timeout_ms / 1000))
  local command = { M.config.cmd, "daemon", "start", root, "--timeout", timeout_s, "--index-dir", index_dir_of(root),
    "--idle-stop", tostring(M.config.idle_stop) }
  local ok, job = pcall(vim.fn.jobstart, command, {
    stdout_buffered = true,
    stderr_buffered = true,
    on_stdout = collect,
    on_stderr = collect,
    on_exit = function(_, code)
      local waiting = starting[root]
      starting[root] = nil
      local err = nil
      if code ~= 0 then
        err = "the daemon could not start: " .. (output[#output] or ("exit code " .. code))
      end
      for _, cb in ipairs(waiting) do
        cb(err)
      end
    end,
  })
  if not ok or job <= 0 then
    starting[root] = nil
    callback("could not run `" .. M.config.cmd .. "`")
  end
end

-- `method(params)` on the daemon of the current project, starting it when needed;
-- `on_result(result)` on success, a message otherwise.
function M.request(method, params, on_result, root)
  root = root or M.root()
  local sock = socket_of(root)
  local function attempt(retry)
    rpc.request(sock, method, params, function(err, result)
      if not err then
        on_result(result, root)
      elseif err.kind == "connect" and retry and M.config.start_daemon then
        start_daemon(root, function(start_err)
          if start_err then
            notify(start_err, vim.log.levels.ERROR)
          else
            attempt(false)
          end
        end)
      elseif err.kind == "connect" then
        notify("no daemon serves " .. root .. "; start one with: " .. M.config.cmd .. " daemon start " .. root,
          vim.log.levels.WARN)
      else
        notify(err.message or "request failed", vim.log.levels.ERROR)
      end
    end, M.config.timeout_ms)
  end
  attempt(true)
end

local function first_line(text)
  return ((text or ""):match("^%s*([^\n]*)") or ""):sub(1, 200)
end

-- Quickfix items from search or relation results (paths are relative to `root`).
function M.quickfix_items(results, root)
  local items = {}
  for _, r in ipairs(results) do
    local line = r.name_line or r.start_line
    local col = r.name_column or 1
    if r.kind == "file" then
      line, col = r.snippet_line or r.start_line, 1
    end
    local label = r.kind .. " " .. (r.qualified_name ~= "" and r.qualified_name or r.name)
    table.insert(items, {
      filename = root .. "/" .. r.path,
      lnum = line,
      col = col,
      text = label .. " — " .. first_line(r.snippet),
    })
  end
  return items
end

local function show(title, results, root)
  local items = M.quickfix_items(results, root)
  vim.fn.setqflist({}, " ", { title = title, items = items })
  if #items == 0 then
    notify("nothing found for " .. title)
  elseif M.config.open_quickfix then
    vim.cmd("copen")
  end
end

function M.search(words, opts)
  opts = opts or {}
  if not words or vim.trim(words) == "" then
    notify("what should I search for? :CodeSearch {words}", vim.log.levels.WARN)
    return
  end
  local params = { query = words, limit = opts.limit or M.config.limit, mode = opts.mode or M.config.mode,
    files = opts.files and true or false }
  M.request("search", params, function(answer, root)
    if opts.on_results then
      opts.on_results(answer, root)
      return
    end
    local title = (opts.files and "CodeSearchFiles " or "CodeSearch ") .. words
    if answer.partial then
      title = title .. string.format(" (partial: %d%% of chunks have vectors)", percent(answer.embedded_share))
      if given(answer.note) then
        notify(answer.note)
      end
      M.watch_until_whole(root)
    end
    show(title, answer.results, root)
  end)
end

local watching = {} -- root -> the timer that watches its daemon after a partial answer

-- After a partial answer: look at the daemon's status every `watch_ms` until its answers are
-- whole again (the model loaded, every vector made) or cannot be (no model), then say so once.
function M.watch_until_whole(root)
  if watching[root] then
    return
  end
  local timer = vim.loop.new_timer()
  watching[root] = timer
  local sock = socket_of(root)
  local asking = false
  local function stop(message)
    if watching[root] ~= timer then
      return
    end
    watching[root] = nil
    timer:stop()
    timer:close()
    if message then
      notify(message)
    end
  end
  timer:start(M.config.watch_ms, M.config.watch_ms, vim.schedule_wrap(function()
    if asking or watching[root] ~= timer then
      return
    end
    asking = true
    rpc.request(sock, "status", nil, function(err, s)
      asking = false
      if err then
        return
      end
      if s.dormant then -- asleep until the next request: nothing will change meanwhile
        stop(nil)
      elseif given(s.model_error) then
        stop("no embedding model (" .. s.model_error .. "): results come from keyword and graph")
      elseif s.model_ready and (s.embedding or {}).chunks_without_vectors == 0 then
        stop(string.format("vectors ready (%d%% embedded): search again for complete results",
          percent(s.embedded_share)))
      end
    end, M.config.timeout_ms)
  end))
end

function M.relations(direction, name)
  if not name or vim.trim(name) == "" then
    name = vim.fn.expand("<cword>")
  end
  if name == "" then
    notify("no name under the cursor", vim.log.levels.WARN)
    return
  end
  M.request(direction, { name = name }, function(answer, root)
    if #answer.targets == 0 then
      notify(answer.note or ("no definition named " .. name), vim.log.levels.WARN)
      vim.fn.setqflist({}, " ", { title = direction .. " " .. name, items = {} })
      return
    end
    show((direction == "callers" and "CodeSearchCallers " or "CodeSearchCallees ") .. name, answer.results, root)
  end)
end

-- The daemon's status in a line: its own share of vectors (what its answers use) and what it waits for.
function M.status_line(s, root)
  local embedding = s.embedding or {}
  local waiting = ""
  if s.dormant then
    waiting = ", dormant until the next request"
  elseif given(s.model_error) then
    waiting = ", no embedding model (" .. s.model_error .. ")"
  elseif not s.model_ready and (s.vectors > 0 or (embedding.chunks_without_vectors or 0) > 0) then
    waiting = ", the embedding model is loading"
  elseif given(embedding.eta_seconds) then
    waiting = string.format(", %d left, about %d s to go", embedding.chunks_without_vectors, math.ceil(embedding.eta_seconds))
  end
  return string.format("%s: %d files, %d chunks, %d%% embedded%s, %d changes pending%s", root, s.files, s.chunks,
    percent(s.embedded_share), waiting, s.pending_changes, s.ready and "" or " (still starting)")
end

function M.status()
  M.request("status", nil, function(s, root)
    notify(M.status_line(s, root))
  end)
end

-- Attach `codesearch lsp` to the current buffer with the built-in client (0.7's start_client).
function M.lsp_start(opts)
  opts = opts or {}
  if vim.fn.executable(M.config.cmd) ~= 1 then
    notify("the `" .. M.config.cmd .. "` command was not found", vim.log.levels.ERROR)
    return nil
  end
  local root = opts.root or M.root()
  M._lsp_clients = M._lsp_clients or {}
  local id = M._lsp_clients[root]
  if not id or not vim.lsp.get_client_by_id(id) then
    id = vim.lsp.start_client({
      name = "codesearch",
      cmd = { M.config.cmd, "lsp", "--index-dir", index_dir_of(root) },
      root_dir = root,
      workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    })
    M._lsp_clients[root] = id
  end
  if id then
    vim.lsp.buf_attach_client(opts.bufnr or 0, id)
  end
  return id
end

-- A Telescope picker over a search, when Telescope is installed (never required).
function M.telescope(words, opts)
  local ok = pcall(require, "telescope")
  if not ok then
    notify("Telescope is not installed; :CodeSearch fills the quickfix list instead", vim.log.levels.WARN)
    return
  end
  require("codesearch.telescope").pick(words, opts)
end

return M
