-- Client side of the Stet language server: every action is a workspace/executeCommand
-- with one object argument, as the server defines them.
local M = {}

M.kinds = { "convention", "ruled-out", "clarification", "markup", "note" }

local function notify(message, level)
  vim.notify("stet: " .. message, level or vim.log.levels.INFO)
end

--- The Stet client attached to a buffer, or nil (with a message).
---@param bufnr integer
---@return vim.lsp.Client?
function M.client(bufnr)
  local client = vim.lsp.get_clients({ bufnr = bufnr, name = "stet" })[1]
  if not client then
    notify("the stet language server is not attached to this buffer", vim.log.levels.WARN)
  end
  return client
end

--- Starts (or reuses) the Stet client for a file buffer, whatever its filetype.
---@param bufnr integer
function M.start(bufnr)
  if vim.bo[bufnr].buftype ~= "" or vim.api.nvim_buf_get_name(bufnr) == "" then
    return
  end
  if #vim.lsp.get_clients({ bufnr = bufnr, name = "stet" }) > 0 then
    return
  end
  local config = vim.lsp.config.stet
  if not config then
    return
  end
  config = vim.deepcopy(config)
  if not config.root_dir and config.root_markers then
    config.root_dir = vim.fs.root(bufnr, config.root_markers)
  end
  vim.lsp.start(config, { bufnr = bufnr })
end

--- Runs a server command; `on_result(result)` gets the decoded result on success.
---@param name string the command, e.g. "stet.note.add"
---@param argument table its single object argument
---@param on_result fun(result: any, client: vim.lsp.Client)?
---@param bufnr integer?
function M.execute(name, argument, on_result, bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  if not client then
    return
  end
  client:request("workspace/executeCommand", { command = name, arguments = { argument } }, function(err, result)
    if err then
      notify(name .. " failed: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    if on_result then
      on_result(result, client)
    end
  end, bufnr)
end

local function here()
  local bufnr = vim.api.nvim_get_current_buf()
  return bufnr, vim.uri_from_bufnr(bufnr), vim.api.nvim_win_get_cursor(0)[1] - 1
end

function M.add_note(text, kind)
  local bufnr, uri, line = here()
  local argument = { uri = uri, text = text, line = line }
  if kind then
    argument.kind = kind
  end
  M.execute("stet.note.add", argument, function(entry)
    local id = type(entry) == "table" and (entry.id or (entry.entry or {}).id) or nil
    notify(("note %s added"):format(id or ""))
  end, bufnr)
end

function M.record(all)
  local bufnr, uri, line = here()
  local argument = all and { uri = uri, all = true } or { uri = uri, line = line }
  M.execute("stet.margin.record", argument, function()
    notify(all and "margin notes recorded" or "margin note recorded")
  end, bufnr)
end

function M.open_sheet()
  local bufnr, uri = here()
  M.execute("stet.sheet.open", { uri = uri }, function(result)
    local sheet = type(result) == "table" and result.uri or nil
    if not sheet then
      return
    end
    vim.schedule(function()
      -- The server asks the client to show the sheet (window/showDocument); edit it here
      -- only when that did not happen.
      if vim.uri_from_bufnr(vim.api.nvim_get_current_buf()) ~= sheet then
        vim.cmd.edit(vim.fn.fnameescape(vim.uri_to_fname(sheet)))
      end
    end)
  end, bufnr)
end

--- A scratch buffer in a split holding `text`.
function M.scratch(name, text, filetype)
  vim.cmd("botright new")
  local bufnr = vim.api.nvim_get_current_buf()
  vim.bo[bufnr].buftype = "nofile"
  vim.bo[bufnr].bufhidden = "wipe"
  vim.bo[bufnr].swapfile = false
  pcall(vim.api.nvim_buf_set_name, bufnr, name)
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, vim.split(text, "\n", { plain = true }))
  vim.bo[bufnr].modifiable = false
  vim.bo[bufnr].filetype = filetype or "markdown"
  return bufnr
end

function M.brief(budget)
  local bufnr, uri = here()
  local argument = { uri = uri }
  if budget then
    argument.budget = budget
  end
  M.execute("stet.brief", argument, function(result)
    local text = type(result) == "table" and result.text or tostring(result or "")
    vim.schedule(function()
      M.scratch("stet://brief", text, "markdown")
    end)
  end, bufnr)
end

function M.list()
  local bufnr, uri = here()
  M.execute("stet.note.list", { uri = uri }, function(result)
    local items = {}
    local root = vim.lsp.get_clients({ bufnr = bufnr, name = "stet" })[1]
    root = root and root.root_dir or vim.fn.getcwd()
    for _, entry in ipairs((result or {}).entries or {}) do
      local anchor = entry.anchor
      -- `line`: where the anchored line is now (1-based; null when the anchor is lost).
      local line = entry.line
      if type(line) ~= "number" then
        line = anchor and anchor.line or 0
      end
      local item = {
        text = ("[%s %s %s] %s"):format(entry.id, entry.kind, entry.status or "open", entry.text or ""),
        lnum = line,
      }
      if anchor and anchor.path then
        item.filename = vim.fs.joinpath(root, anchor.path)
      else
        item.filename = vim.api.nvim_buf_get_name(bufnr)
        item.lnum = 0
      end
      items[#items + 1] = item
    end
    vim.schedule(function()
      vim.fn.setqflist({}, " ", { title = "stet style sheet", items = items })
      if #items > 0 then
        vim.cmd("botright copen")
      else
        notify("the style sheet has no entries")
      end
    end)
  end, bufnr)
end

function M.edit(id, text)
  local bufnr, uri = here()
  M.execute("stet.note.edit", { uri = uri, id = id, text = text }, function()
    notify(("note %s edited"):format(id))
  end, bufnr)
end

--- The id of the first style-sheet entry diagnostic on the cursor line.
local function entry_at_cursor(bufnr, line)
  for _, diagnostic in ipairs(vim.diagnostic.get(bufnr, { lnum = line })) do
    local data = diagnostic.user_data and diagnostic.user_data.lsp and diagnostic.user_data.lsp.data
    if diagnostic.source == "stet" and type(data) == "table" and data.entryId then
      return data.entryId
    end
  end
end

function M.discard(id)
  local bufnr, uri, line = here()
  id = id or entry_at_cursor(bufnr, line)
  if not id then
    notify("no style-sheet entry on this line; give an id", vim.log.levels.WARN)
    return
  end
  M.execute("stet.note.discard", { uri = uri, id = id }, function()
    notify(("note %s discarded"):format(id))
  end, bufnr)
end

function M.pause(until_date)
  local bufnr, uri = here()
  M.execute("stet.pause", { uri = uri, ["until"] = until_date }, function()
    notify("paused" .. (until_date and (" until " .. until_date) or ""))
  end, bufnr)
end

function M.resume()
  local bufnr, uri = here()
  M.execute("stet.resume", { uri = uri }, function()
    notify("resumed")
  end, bufnr)
end

return M
