-- A Telescope picker over one codesearch search (loaded only when Telescope is installed).
local M = {}

function M.pick(words, opts)
  opts = opts or {}
  local codesearch = require("codesearch")
  local pickers = require("telescope.pickers")
  local finders = require("telescope.finders")
  local conf = require("telescope.config").values

  local function run(query)
    codesearch.search(query, {
      files = opts.files,
      on_results = function(answer, root)
        pickers.new(opts, {
          prompt_title = "codesearch: " .. query,
          finder = finders.new_table({
            results = codesearch.quickfix_items(answer.results, root),
            entry_maker = function(item)
              return {
                value = item,
                display = vim.fn.fnamemodify(item.filename, ":~:.") .. ":" .. item.lnum .. " " .. item.text,
                ordinal = item.text .. " " .. item.filename,
                filename = item.filename,
                lnum = item.lnum,
                col = item.col,
              }
            end,
          }),
          previewer = conf.grep_previewer(opts),
          sorter = conf.generic_sorter(opts),
        }):find()
      end,
    })
  end

  if words and vim.trim(words) ~= "" then
    run(words)
  else
    vim.ui.input({ prompt = "codesearch: " }, function(input)
      if input and vim.trim(input) ~= "" then
        run(input)
      end
    end)
  end
end

return M
