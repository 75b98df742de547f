-- codesearch for Neovim (0.7 and newer): commands that search the project through its daemon.
if vim.g.loaded_codesearch then
  return
end
vim.g.loaded_codesearch = true

local function cs()
  return require("codesearch")
end

vim.api.nvim_create_user_command("CodeSearch", function(o)
  cs().search(o.args, { files = false })
end, { nargs = "+", desc = "codesearch: search the project, results in the quickfix list" })

vim.api.nvim_create_user_command("CodeSearchFiles", function(o)
  cs().search(o.args, { files = true })
end, { nargs = "+", desc = "codesearch: search the project, one result per file" })

vim.api.nvim_create_user_command("CodeSearchCallers", function(o)
  cs().relations("callers", o.args)
end, { nargs = "?", desc = "codesearch: who calls NAME (default: the word under the cursor)" })

vim.api.nvim_create_user_command("CodeSearchCallees", function(o)
  cs().relations("callees", o.args)
end, { nargs = "?", desc = "codesearch: what NAME calls (default: the word under the cursor)" })

vim.api.nvim_create_user_command("CodeSearchStatus", function()
  cs().status()
end, { nargs = 0, desc = "codesearch: what the index holds and whether it is up to date" })
