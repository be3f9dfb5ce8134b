-- `:checkhealth stet`: Neovim's version, the server (found, and its version), the client
-- attached to the current buffer, and advice for what is missing.
local M = {}

local INSTALL = "install the server: `pip install stet-lsp` (or `pip install -e .` in a checkout), "
  .. 'or point the plugin at it: vim.lsp.config("stet", { cmd = { "/path/to/stet-lsp" } })'

--- The first line a command prints, or nil with why not.
local function first_line(cmd)
  local ok, process = pcall(vim.system, cmd, { text = true })
  if not ok then
    return nil, tostring(process)
  end
  local done = process:wait(10000)
  local out = vim.trim((done.stdout or "") .. "\n" .. (done.stderr or ""))
  if done.code ~= 0 then
    return nil, ("exit %s: %s"):format(tostring(done.code), out)
  end
  return (vim.split(out, "\n", { plain = true })[1])
end

--- The buffer `:checkhealth` was run from (it runs checks in its own health:// buffer, in a
--- new tab or a split).
local function user_buffer()
  local current = vim.api.nvim_get_current_buf()
  if not vim.startswith(vim.api.nvim_buf_get_name(current), "health://") then
    return current
  end
  local tab = vim.fn.tabpagenr("#")
  if tab > 0 and tab ~= vim.fn.tabpagenr() then
    local tabpage = vim.api.nvim_list_tabpages()[tab]
    if tabpage then
      return vim.api.nvim_win_get_buf(vim.api.nvim_tabpage_get_win(tabpage))
    end
  end
  local previous = vim.fn.win_getid(vim.fn.winnr("#"))
  if previous ~= 0 then
    return vim.api.nvim_win_get_buf(previous)
  end
  return current
end

function M.check()
  local health = vim.health
  health.start("Neovim")
  local version = vim.version()
  local text = ("%d.%d.%d"):format(version.major, version.minor, version.patch)
  if vim.fn.has("nvim-0.11") == 1 then
    health.ok("Neovim " .. text)
  else
    health.error("Neovim " .. text .. ": the plugin needs 0.11 or newer", { "upgrade Neovim" })
  end

  health.start("Server")
  local config = vim.lsp.config and vim.lsp.config.stet or nil
  local cmd = config and config.cmd or nil
  if type(cmd) == "function" then
    health.info("`cmd` is a function: not checked here")
  elseif cmd == nil then
    health.error("no `cmd` in vim.lsp.config.stet (is editors/neovim on 'runtimepath'?)", { INSTALL })
  elseif type(cmd) ~= "table" or not vim.islist(cmd) or type(cmd[1]) ~= "string"
    or #vim.tbl_filter(function(word) return type(word) ~= "string" end, cmd) > 0 then
    health.error(('`cmd` must be a list of strings such as { "stet-lsp" }, not %s'):format(vim.inspect(cmd)),
      { INSTALL })
  elseif vim.fn.executable(cmd[1]) == 0 then
    health.error(("`%s` is not an executable (cmd = %s)"):format(cmd[1], vim.inspect(cmd)), { INSTALL })
  else
    local path = vim.fn.exepath(cmd[1])
    local answer, why = first_line({ path, "--version" })
    if answer then
      health.ok(("%s (%s)"):format(answer, path))
    else
      -- An older server without --version: ask the CLI beside it.
      local cli = vim.fs.joinpath(vim.fs.dirname(path), "stet")
      local cli_answer = vim.fn.executable(cli) == 1 and first_line({ cli, "--version" }) or nil
      if cli_answer then
        health.ok(("%s (%s; version from %s)"):format(path, cli_answer, cli))
      else
        health.warn(("%s found, but its version is unknown: %s"):format(path, why or "?"), { INSTALL })
      end
    end
  end
  local filetypes = config and config.filetypes
  if filetypes ~= nil and (type(filetypes) ~= "table"
    or #vim.tbl_filter(function(name) return type(name) ~= "string" end, filetypes) > 0) then
    health.error(("`filetypes` must be a list of strings, not %s: Neovim starts no server with it"):format(
      vim.inspect(filetypes)), { 'leave `filetypes` out: the server attaches to every file of a repository' })
  end
  if vim.g.stet_enable == false then
    health.warn("vim.g.stet_enable is false: the plugin does not enable the server", {
      'remove it, or call vim.lsp.enable("stet") yourself',
    })
  elseif config and not vim.lsp.is_enabled("stet") then
    health.warn("the stet configuration is not enabled", { 'vim.lsp.enable("stet")' })
  end

  -- What setup() found wrong and what the server said, in full: the message area shows
  -- several of them as one line.
  local said = require("stet").said
  if #said > 0 then
    health.start("Messages")
    for _, message in ipairs(said) do
      local levels = vim.log.levels
      local report = message.level >= levels.ERROR and health.error
        or message.level == levels.WARN and health.warn
        or health.info
      report(message.text)
    end
  end

  health.start("Client")
  local bufnr = user_buffer()
  local stet = require("stet")
  local attached = stet.live_clients(bufnr)[1]
  local any = stet.live_clients(nil)
  if attached then
    health.ok(("attached to %s (client %d, root %s)"):format(
      vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ":~:."), attached.id, attached.root_dir or "none"))
  else
    -- Why, for this buffer: a file outside any repository, a server that did not start or
    -- stopped (a crash), one still starting, or a configuration that cannot start it.
    local why = stet.why_not_attached(bufnr):gsub("see :checkhealth stet and ", "see ")
      :gsub(" %(see :checkhealth stet%)", "")
    local running = #any > 0 and ("%d stet client(s) running, none attached to this buffer"):format(#any)
      or "no stet client running"
    if why:find("not inside a git repository", 1, true) or why == "it is not a file" then
      health.info(("%s: %s; open a file inside a git repository (a folder with .git)"):format(running, why))
    else
      health.warn(("%s: %s"):format(running, why))
    end
  end
end

return M
