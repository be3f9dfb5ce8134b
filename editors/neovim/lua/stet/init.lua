-- Client side of the Stet language server: every action is a workspace/executeCommand
-- with one object argument, as the server defines them. Results have the shapes of
-- `stet … --json` (docs/cli.md): `{version, target, …}`, with the entry under `entry`.
-- Loaded on first use (`:Stet`, a <Plug> mapping, `require("stet").setup()`); the
-- subcommands of `:Stet` are in lua/stet/commands.lua.
local M = {}

--- The plugin's settings (`require("stet").setup({...})`); all optional.
M.config = {
  -- Ask the server for code lenses on attach, BufEnter, BufWritePost and InsertLeave.
  codelens = true,
}

M.kinds = { "convention", "ruled-out", "clarification", "markup", "note" }

local function notify(message, level)
  vim.notify("stet: " .. message, level or vim.log.levels.INFO)
end

--- What setup() found wrong and what the server said (window/showMessage), each in full and
--- in order, for :checkhealth stet: the message area shows several of them as one line.
---@type { text: string, level: integer }[]
M.said = {}

--- Keeps `text` for :checkhealth stet (the last 50).
local function keep_said(text, level)
  M.said[#M.said + 1] = { text = text, level = level }
  if #M.said > 50 then
    table.remove(M.said, 1)
  end
end

--- `text` cut to `width` columns, ending in "…" when cut ("" when no room is left).
---@param text string
---@param width integer
---@return string
local function cut(text, width)
  if vim.fn.strdisplaywidth(text) <= width then
    return text
  end
  local kept = vim.fn.strcharpart(text, 0, math.max(width - 1, 0))
  while kept ~= "" and vim.fn.strdisplaywidth(kept .. "…") > width do
    kept = vim.fn.strcharpart(kept, 0, vim.fn.strchars(kept) - 1)
  end
  return width > 0 and kept .. "…" or ""
end

--- `texts` after `prefix` as one line that fits on the command line (`v:echospace`): all of
--- them joined by "; " when they fit, else the first cut short and where :checkhealth stet
--- has them in full (a single text too). A message wider than the command line takes two
--- lines, as two messages at once do, and Neovim then asks for Enter before anything else can
--- be done.
---@param prefix string
---@param texts string[]
---@return string
function M.one_line(prefix, texts)
  local room = vim.v.echospace
  local whole = prefix .. table.concat(texts, "; ")
  if vim.fn.strdisplaywidth(whole) <= room then
    return whole
  end
  local more = #texts == 1 and " (in full: :checkhealth stet)"
    or (" (%d more: :checkhealth stet)"):format(#texts - 1)
  local left = room - vim.fn.strdisplaywidth(prefix .. more)
  if left < 2 then -- a window too narrow to say where the rest is
    return cut(whole, room)
  end
  return prefix .. cut(texts[1], left) .. more
end

--- The server's messages that came within a moment of each other, not shown yet.
---@type { type: integer, message: string }[]?
local pending_messages

--- Shows messages that came together as one line, at the gravest type among them.
local function show_messages()
  local batch = pending_messages or {}
  pending_messages = nil
  if #batch == 0 then
    return
  end
  local gravest = math.min(unpack(vim.tbl_map(function(said)
    return said.type
  end, batch)))
  local texts = vim.tbl_map(function(said)
    return (said.message:gsub("^Stet: ", ""))
  end, batch)
  local text = M.one_line("stet: ", texts)
  if gravest == 1 then
    vim.api.nvim_echo({ { text } }, true, { err = true })
  else
    vim.api.nvim_echo({ { text, gravest == 2 and "WarningMsg" or nil } }, true, {})
  end
end

--- The handler of the server's window/showMessage. Neovim 0.11's own ends each message with
--- a newline, so that even one message takes two lines and asks for Enter; two bad settings
--- at start-up are two messages at once. The messages that come within 100 ms of the first
--- are shown together, in one line (see M.one_line), and kept for :checkhealth stet.
---@param params lsp.ShowMessageParams
function M.server_message(params)
  if type(params) ~= "table" or type(params.message) ~= "string" then
    return
  end
  local kind = tonumber(params.type) or 4
  local levels = vim.log.levels
  keep_said(params.message, ({ levels.ERROR, levels.WARN, levels.INFO })[kind] or levels.DEBUG)
  if not pending_messages then
    pending_messages = {}
    vim.defer_fn(show_messages, 100)
  end
  pending_messages[#pending_messages + 1] = { type = kind, message = params.message }
end

--- Why `cmd` cannot be the command that starts the server (a list of strings, or a
--- function), or nil.
---@param cmd any
---@param name string what `cmd` is called in the message
---@return string?
local function cmd_shape_problem(cmd, name)
  if type(cmd) == "function" then
    return nil
  end
  local list = type(cmd) == "table" and type(cmd[1]) == "string" and vim.islist(cmd)
  for _, word in ipairs(list and cmd or {}) do
    list = list and type(word) == "string"
  end
  if not list then
    return ('%s must be a list of strings such as { "stet-lsp" } (or a function), not %s'):format(
      name, vim.inspect(cmd))
  end
end

--- The type each field of a `vim.lsp.config` table must have, for the fields whose wrong
--- type keeps the server from starting (Neovim says so only in its log, or with an error
--- from its own code), and what it is called in a message.
local LSP_FIELDS = {
  filetypes = { check = "strings", text = 'a list of strings such as { "python" }' },
  root_markers = { check = "list", text = 'a list such as { ".git" }' },
  root_dir = { check = { "function", "string" }, text = "a function or a string" },
  settings = { check = { "table" }, text = "a table" },
  handlers = { check = { "table" }, text = "a table" },
  capabilities = { check = { "table" }, text = "a table" },
  init_options = { check = { "table" }, text = "a table" },
  reuse_client = { check = { "function" }, text = "a function" },
}

--- Why `v`, the value of field `key` of a `vim.lsp.config` table, would keep the server from
--- starting, or nil.
---@param key string
---@param v any
---@return string?
local function lsp_field_problem(key, v)
  if key == "cmd" then
    return cmd_shape_problem(v, "`lsp.cmd`")
  end
  local field = LSP_FIELDS[key]
  if not field or v == nil then
    return nil
  end
  local ok
  if field.check == "strings" or field.check == "list" then
    ok = type(v) == "table" and vim.islist(v)
    for _, item in ipairs(ok and v or {}) do
      ok = ok and (field.check == "list" or type(item) == "string")
    end
  else
    ok = vim.tbl_contains(field.check, type(v))
  end
  if not ok then
    return ("`lsp.%s` must be %s, not %s"):format(key, field.text, vim.inspect(v))
  end
end

--- Optional: changes settings, and the server's configuration with `lsp` (passed to
--- `vim.lsp.config("stet", …)`, e.g. `{ cmd = {…}, settings = { stet = {…} } }`). An unknown
--- option or a value of the wrong type is reported and left out; the others are applied.
--- The problems of one call are one message (see M.one_line).
---@param opts table?
function M.setup(opts)
  if opts ~= nil and type(opts) ~= "table" then
    local problem = ("setup() takes a table of options, not %s"):format(vim.inspect(opts))
    keep_said(problem, vim.log.levels.WARN)
    notify(problem, vim.log.levels.WARN)
    return
  end
  opts = opts or {}
  -- Warnings, not errors: what is wrong is left out and the rest applies, and an error given
  -- while Neovim reads its configuration takes a second line ("Error detected while
  -- processing …"), which asks for Enter.
  local problems = {}
  local function problem(text)
    problems[#problems + 1] = text
    keep_said("setup(): " .. text, vim.log.levels.WARN)
  end
  for key in pairs(opts) do
    if key ~= "lsp" and key ~= "codelens" then
      problem(("unknown option %s (the options are codelens and lsp)"):format(vim.inspect(key)))
    end
  end
  local lsp = opts.lsp
  if lsp ~= nil and type(lsp) ~= "table" then
    problem(('`lsp` must be a table for vim.lsp.config("stet", …), not %s'):format(vim.inspect(lsp)))
  elseif lsp ~= nil then
    local keys = vim.tbl_keys(lsp)
    table.sort(keys, function(a, b)
      return tostring(a) < tostring(b)
    end)
    local kept = lsp
    for _, key in ipairs(keys) do
      local wrong = lsp[key] ~= nil and lsp_field_problem(key, lsp[key])
      if wrong then
        problem(wrong)
        kept = kept == lsp and vim.deepcopy(lsp) or kept
        kept[key] = nil
      end
    end
    vim.lsp.config("stet", kept)
  end
  if opts.codelens ~= nil and type(opts.codelens) ~= "boolean" then
    problem(("`codelens` must be true or false, not %s"):format(vim.inspect(opts.codelens)))
  elseif opts.codelens ~= nil then
    M.config.codelens = opts.codelens
    vim.g.stet_codelens = opts.codelens
  end
  if #problems > 0 then
    vim.notify(M.one_line("stet: setup(): ", problems), vim.log.levels.WARN)
  end
end

--- A JSON value that may be null (vim.NIL once decoded) as nil.
local function value(v)
  if v == vim.NIL then
    return nil
  end
  return v
end

--- Shows a command's error as the server words it; which command it was goes to the LSP log
--- (:LspLog).
---@param command string
---@param err lsp.ResponseError
local function report_failure(command, err)
  local message = err.message or vim.inspect(err)
  vim.lsp.log.warn(("stet: %s failed: %s"):format(command, message))
  notify(message, vim.log.levels.ERROR)
end

--- Why the configuration's command cannot start the server: it is not a list of strings (nor
--- a function), or its program is not executable (`stet-lsp` not installed, or not on PATH);
--- else nil.
---@param config vim.lsp.Config?
---@return string?
function M.cmd_problem(config)
  local cmd = config and config.cmd
  local problem = cmd_shape_problem(cmd, "`cmd` of vim.lsp.config.stet")
  if problem then
    return problem
  end
  local filetypes = config and lsp_field_problem("filetypes", config.filetypes)
  if filetypes then
    return (filetypes:gsub("^`lsp%.filetypes`", "`filetypes` of vim.lsp.config.stet"))
  end
  if type(cmd) == "table" and vim.fn.executable(cmd[1]) ~= 1 then
    return ("`%s` is not executable"):format(cmd[1])
  end
end

--- The root a configuration gives a buffer: its `root_dir` (a function is asked, and counts
--- only when it answers at once, as ours does), else the nearest `root_markers` folder.
---@param config vim.lsp.Config
---@param bufnr integer
---@return string?
local function root_of(config, bufnr)
  if type(config.root_dir) == "function" then
    local found
    config.root_dir(bufnr, function(dir)
      found = dir
    end)
    return found
  end
  if type(config.root_dir) == "string" then
    return config.root_dir
  end
  return config.root_markers and vim.fs.root(bufnr, config.root_markers) or nil
end

local missing_warned = false

--- Says once a session that the server cannot start, when `bufnr` is a file of a repository
--- (one the server would attach to): Neovim itself skips such a server silently.
---@param bufnr integer
---@return boolean warned whether the message has been given (now or before)
function M.warn_missing(bufnr)
  local config = vim.lsp.config.stet
  local problem = M.cmd_problem(config)
  if missing_warned or not problem or not root_of(config, bufnr) then
    return missing_warned
  end
  missing_warned = true
  notify(("%s, so the language server cannot start; see :checkhealth stet"):format(problem), vim.log.levels.WARN)
  return true
end

--- The Stet clients of a buffer (all: `bufnr` nil) that are not stopping: one being stopped
--- (vim.lsp.stop_client, a restart) stays listed until its server exits, and answers every
--- request with "the server is shut down". `uninitialized`: also those still starting.
---@param bufnr integer?
---@param uninitialized boolean?
---@return vim.lsp.Client[]
function M.live_clients(bufnr, uninitialized)
  return vim.tbl_filter(function(client)
    return not client:is_stopped()
  end, vim.lsp.get_clients({ bufnr = bufnr, name = "stet", _uninitialized = uninitialized }))
end
local live_clients = M.live_clients

--- Why no Stet client will attach to a buffer, or nil when one should (it may not have yet).
---@param bufnr integer
---@return string?
local function attach_blocker(bufnr)
  local config = vim.lsp.config.stet
  if not config then
    return "there is no vim.lsp.config for stet (is editors/neovim on 'runtimepath'?)"
  end
  local problem = M.cmd_problem(config)
  if problem then
    return problem .. " (see :checkhealth stet)"
  end
  if vim.bo[bufnr].buftype ~= "" or vim.api.nvim_buf_get_name(bufnr) == "" then
    return "it is not a file"
  end
  if not root_of(config, bufnr) then
    return "its file is not inside a git repository"
  end
  if not vim.lsp.is_enabled("stet") then
    return 'the server is not enabled (vim.g.stet_enable = false; vim.lsp.enable("stet") enables it)'
  end
end

--- Why no Stet client is attached to a buffer (for the message of a command that needs one).
---@param bufnr integer
---@return string
function M.why_not_attached(bufnr)
  local blocker = attach_blocker(bufnr)
  if blocker then
    return blocker
  end
  if live_clients(bufnr, true)[1] then
    return "the server is still starting (see :LspLog if it does not finish)"
  end
  -- A client of another repository running says nothing of this one's.
  local root = vim.fs.normalize(root_of(vim.lsp.config.stet, bufnr))
  local of_root = vim.tbl_filter(function(client)
    return client.root_dir ~= nil and vim.fs.normalize(client.root_dir) == root
  end, live_clients(nil))
  if #of_root == 0 then
    return "the server did not start or has stopped (see :checkhealth stet and :LspLog; :edit starts it again)"
  end
  return "the server has not attached it yet (see :checkhealth stet)"
end

--- The Stet client attached to a buffer, or nil (with a message saying why).
---@param bufnr integer
---@return vim.lsp.Client?
function M.client(bufnr)
  local client = live_clients(bufnr)[1]
  if not client then
    notify("the stet language server is not attached to this buffer: " .. M.why_not_attached(bufnr),
      vim.log.levels.WARN)
  end
  return client
end

--- How long a command waits for a server that is still starting (ms).
M.start_timeout = 30000

--- How long a command waits for a client to appear for a buffer one should attach to (ms):
--- Neovim starts it a tick after the buffer is read (the configuration's root_dir answers
--- through vim.schedule), so `:edit file | Stet note …` runs before there is one.
M.attach_timeout = 500

--- Calls `on_client(client)` with the Stet client of a buffer once it is initialized: at once
--- when it is; when it is about to start or still starting (a command run right after the file
--- opened, while the server answers `initialize`, about a second), once it has started,
--- without blocking the editor; else, or when it stops or does not start in time, says why
--- there is none (as M.client).
---@param bufnr integer
---@param on_client fun(client: vim.lsp.Client)
function M.when_ready(bufnr, on_client)
  local started = vim.uv.now()
  local function attempt()
    local ready = live_clients(bufnr)[1]
    if ready then
      on_client(ready)
      return
    end
    -- `_uninitialized`: Neovim's own filter for clients whose `initialize` is not answered yet.
    local starting = live_clients(bufnr, true)[1]
    local waited = vim.uv.now() - started
    local wait
    if starting then
      wait = not starting:is_stopped() and waited < M.start_timeout
    else
      wait = vim.api.nvim_buf_is_valid(bufnr) and attach_blocker(bufnr) == nil and waited < M.attach_timeout
    end
    if wait then
      vim.defer_fn(attempt, 20)
    elseif vim.api.nvim_buf_is_valid(bufnr) then
      M.client(bufnr) -- says why
    end
  end
  attempt()
end

--- Starts (or reuses) the Stet client for a file buffer, whatever its filetype, when the file
--- is inside a repository (the configuration's root) and the server is executable (else it
--- says so, once: see warn_missing).
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
  if M.cmd_problem(config) then
    M.warn_missing(bufnr)
    return
  end
  config = vim.deepcopy(config)
  local function start(root)
    if root and vim.api.nvim_buf_is_valid(bufnr) then
      config.root_dir = root
      vim.lsp.start(config, { bufnr = bufnr })
    end
  end
  if type(config.root_dir) == "function" then
    config.root_dir(bufnr, function(root)
      vim.schedule(function()
        start(root)
      end)
    end)
  else
    start(root_of(config, bufnr))
  end
end

--- Runs a server command; `on_result(result)` gets the decoded result on success.
---@param name string the command, e.g. "stet.note.add"
---@param argument table its single object argument
---@param on_result fun(result: any, client: vim.lsp.Client)?
---@param bufnr integer?
function M.execute(name, argument, on_result, bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  M.when_ready(bufnr, function(client)
    client:request("workspace/executeCommand", { command = name, arguments = { argument } }, function(err, result)
      if err then
        report_failure(name, err)
        return
      end
      if on_result then
        on_result(result, client)
      end
    end, bufnr)
  end)
end

--- The item under the cursor when the current window is a quickfix or location list, else nil.
---@return table?
function M.list_item()
  local window = vim.api.nvim_get_current_win()
  local info = vim.fn.getwininfo(window)[1]
  if not info or info.quickfix ~= 1 then
    return nil
  end
  local items = info.loclist == 1 and vim.fn.getloclist(window) or vim.fn.getqflist()
  return items[vim.fn.line(".")]
end

--- The style-sheet entry of the quickfix item under the cursor (`:Stet list` gives each item
--- its entry's id), or nil.
---@return string?
local function listed_entry()
  local item = M.list_item()
  local data = item and item.user_data
  return type(data) == "table" and type(data.stet_entry) == "string" and data.stet_entry or nil
end

--- The window a command about the repository works from, when it is not the current one:
--- the window the cursor came from, when the current window holds no file of the server's
--- (the quickfix list `:Stet steps` filled, the brief) and that one does; else nil.
---@return integer?
function M.repository_window()
  local function attached(bufnr)
    return #vim.lsp.get_clients({ bufnr = bufnr, name = "stet" }) > 0
  end
  if not attached(0) and vim.fn.winnr("#") > 0 then
    local window = vim.fn.win_getid(vim.fn.winnr("#"))
    if attached(vim.api.nvim_win_get_buf(window)) then
      return window
    end
  end
end

--- The buffer a command about the repository works from (see M.repository_window).
---@return integer
local function repository_buffer()
  local window = M.repository_window()
  return window and vim.api.nvim_win_get_buf(window) or vim.api.nvim_get_current_buf()
end

--- For a command about an entry run in a quickfix list (:Stet list): the buffer and URI of
--- the file's repository it works in, and the entry of the item under the cursor unless `id`
--- is given; elsewhere what it was given. The fourth value: whether it runs in the list.
---@param bufnr integer
---@param uri string
---@param id string?
---@return integer bufnr
---@return string uri
---@return string? id
---@return boolean in_list
local function from_list(bufnr, uri, id)
  if vim.bo[bufnr].buftype ~= "quickfix" then
    return bufnr, uri, id, false
  end
  local file = repository_buffer()
  return file, vim.uri_from_bufnr(file), id or listed_entry(), true
end

--- The current buffer, its URI and the cursor's line (0-based). `repository`: the command is
--- about the repository, not the cursor; run from a window holding no file of the server's
--- (the quickfix list `:Stet steps` filled, the brief), it works from the window the cursor
--- came from, and goes back there, so that what it opens does not replace the list.
---@param repository boolean?
local function here(repository)
  local window = repository and M.repository_window()
  if window then
    vim.api.nvim_set_current_win(window)
  end
  local bufnr = vim.api.nvim_get_current_buf()
  return bufnr, vim.uri_from_bufnr(bufnr), vim.api.nvim_win_get_cursor(0)[1] - 1
end

function M.add_note(text, kind)
  local bufnr, uri, line = here()
  local argument = { uri = uri, text = text, line = line }
  if kind then
    argument.kind = kind
  end
  M.execute("stet.note.add", argument, function(result)
    local entry = type(result) == "table" and result.entry or {}
    notify(("note %s added"):format(entry.id or ""))
  end, bufnr)
end

--- How many ids the message about recorded margin notes names.
local RECORDED_IDS_SHOWN = 5

--- What a `stet.margin.record` result (`{recorded = {entry, …}, removed}`) says was recorded.
---@param result table
---@return string
function M.recorded_message(result)
  local recorded = type(result) == "table" and value(result.recorded) or {}
  local ids = vim.tbl_map(function(entry)
    return entry.id
  end, recorded)
  if #ids == 1 then
    return ("margin note recorded as entry %s"):format(ids[1])
  end
  -- A file's many notes recorded at once: the first ids only, the message stays one line.
  local shown = RECORDED_IDS_SHOWN
  if #ids > shown + 1 then
    return ("%d margin notes recorded as entries %s and %d more (:Stet list shows them)"):format(
      #ids, table.concat(vim.list_slice(ids, 1, shown), ", "), #ids - shown)
  end
  return ("%d margin notes recorded as entries %s"):format(#ids, table.concat(ids, ", "))
end

function M.record(all)
  local bufnr, uri, line = here()
  local argument = all and { uri = uri, all = true } or { uri = uri, line = line }
  M.execute("stet.margin.record", argument, function(result)
    notify(M.recorded_message(result))
  end, bufnr)
end

--- The handler of the server's `stet.margin.record` (vim.lsp.commands), which the margin
--- notes' code actions run: it reports what was recorded, as :Stet record does.
---@param command lsp.Command
---@param ctx table
function M.record_command(command, ctx)
  M.execute(command.command, (command.arguments or {})[1] or {}, function(result)
    notify(M.recorded_message(result))
  end, ctx.bufnr)
end

--- Whether showing another buffer in the current window would fail with E37 ("No write
--- since last change"): the current buffer has unsaved changes, this is its only window,
--- and neither 'hidden' (or 'bufhidden' "hide") nor 'autowrite' lets it go.
---@return boolean
function M.window_holds_changes()
  local bufnr = vim.api.nvim_get_current_buf()
  if not vim.bo[bufnr].modified or #vim.fn.win_findbuf(bufnr) > 1 then
    return false
  end
  local bufhidden = vim.bo[bufnr].bufhidden
  local hides = bufhidden == "hide" or (bufhidden == "" and vim.o.hidden)
  return not (hides or vim.o.autowrite or vim.o.autowriteall)
end

--- Opens a file in the current window, or in a new split when the current buffer's unsaved
--- changes keep the window from showing another (see M.window_holds_changes).
---@param path string
function M.show_file(path)
  if vim.fs.normalize(vim.api.nvim_buf_get_name(0)) ~= vim.fs.normalize(path) and M.window_holds_changes() then
    vim.cmd.split(vim.fn.fnameescape(path))
  else
    vim.cmd.edit(vim.fn.fnameescape(path))
  end
end

function M.open_sheet()
  local bufnr, uri = here(true)
  M.execute("stet.sheet.open", { uri = uri }, function(result)
    local sheet = type(result) == "table" and result.uri or nil
    if not sheet then
      return
    end
    vim.schedule(function()
      -- The server asks the client to show the sheet (window/showDocument); edit it here
      -- only when that did not happen (`shown`): the user may have gone elsewhere since.
      if result.shown ~= true and vim.uri_from_bufnr(vim.api.nvim_get_current_buf()) ~= sheet then
        M.show_file(vim.uri_to_fname(sheet))
      end
    end)
  end, bufnr)
end

--- A scratch buffer in a split holding `text`; the one named `name` already (the brief shown
--- before) is shown and holds the new text instead.
function M.scratch(name, text, filetype)
  local bufnr
  for _, existing in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(existing) and vim.api.nvim_buf_get_name(existing) == name then
      bufnr = existing
    end
  end
  local window = bufnr and vim.fn.win_findbuf(bufnr)[1]
  if window then
    vim.api.nvim_set_current_win(window)
  elseif bufnr then
    vim.cmd("botright split")
    vim.api.nvim_win_set_buf(0, bufnr)
  else
    vim.cmd("botright new")
    bufnr = vim.api.nvim_get_current_buf()
    vim.bo[bufnr].buftype = "nofile"
    vim.bo[bufnr].bufhidden = "wipe"
    vim.bo[bufnr].swapfile = false
    pcall(vim.api.nvim_buf_set_name, bufnr, name)
  end
  vim.bo[bufnr].modifiable = true
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, vim.split(text, "\n", { plain = true }))
  vim.bo[bufnr].modifiable = false
  vim.bo[bufnr].filetype = filetype or "markdown"
  return bufnr
end

function M.brief(budget)
  local bufnr, uri = here(true)
  local argument = { uri = uri }
  if budget then
    argument.budget = budget
  end
  M.execute("stet.brief", argument, function(result)
    local text = type(result) == "table" and result.text or tostring(result or "")
    vim.schedule(function()
      M.scratch("stet://brief", text, "markdown")
      -- A budget too small for even the line saying what was left out gives no text at all.
      local left_out = type(result) == "table" and tonumber(value(result.left_out)) or 0
      if vim.trim(text) == "" and left_out > 0 then
        notify(("the brief is empty: %d entr%s left out to fit %s; :Stet brief {budget} with more tokens shows them")
          :format(left_out, left_out == 1 and "y" or "ies", budget and (budget .. " tokens") or "the budget (stet.brief.budget)"),
          vim.log.levels.WARN)
      end
    end)
  end, bufnr)
end

--- The quickfix items of a `stet.note.list` result: each entry at its anchor (where the
--- anchored text is now), unanchored ones and the sheet's problems in the sheet itself.
---@param result table
---@param root string the repository's root
---@return table[] items
function M.list_items(result, root)
  local items = {}
  local sheet = value(result.sheet)
  for _, entry in ipairs(value(result.entries) or {}) do
    local anchor = value(entry.anchor)
    -- `placement`: null without an anchor, else `{line, lost}`, `line` the 1-based line
    -- where the anchored text is now (null once it is gone).
    local placement = value(entry.placement)
    local text = ("[%s %s %s] %s"):format(entry.id, entry.kind, entry.status or "open", entry.text or "")
    local item = { text = text, lnum = 1, user_data = { stet_entry = entry.id } }
    if anchor and anchor.path then
      item.filename = vim.fs.joinpath(root, anchor.path)
      item.lnum = placement and value(placement.line) or anchor.line or 1
      if placement and placement.lost then
        item.text = text .. " (anchor lost)"
        item.type = "W"
      end
    elseif sheet then
      item.filename = sheet
    end
    if item.filename then
      items[#items + 1] = item
    end
  end
  for _, problem in ipairs(value(result.problems) or {}) do
    if sheet then
      items[#items + 1] = {
        filename = sheet,
        lnum = value(problem.line) or 1,
        text = ("[%s] %s"):format(problem.code or "problem", problem.message or ""),
        type = "W",
      }
    end
  end
  return items
end

function M.list()
  local bufnr, uri = here(true)
  M.execute("stet.note.list", { uri = uri }, function(result, client)
    result = type(result) == "table" and result or {}
    -- Anchors are relative to the repository's root, which holds the sheet under .stet/.
    local sheet = type(result.sheet) == "string" and result.sheet or ""
    local root = sheet:match("^(.*)[/\\]%.stet[/\\]cache[/\\]sheets[/\\][^/\\]+$")
    local items = M.list_items(result, root or client.root_dir or vim.fn.getcwd())
    local target = type(result.target) == "table" and result.target.label or nil
    local title = "stet style sheet" .. (target and (" (" .. target .. ")") or "")
    if result.paused == true then
      local until_time = value(result.paused_until)
      title = title .. (until_time and (" paused until " .. until_time) or " paused")
    end
    vim.schedule(function()
      vim.fn.setqflist({}, " ", { title = title, items = items })
      if #items > 0 then
        vim.cmd("botright copen")
      else
        notify("the style sheet has no entries")
      end
    end)
  end, bufnr)
end

function M.edit(id, text)
  local bufnr, uri = here(true)
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

--- Whether the server merges what is written on disk into this style sheet's buffer: it is
--- attached to it, and the sheet is the current target's (another target's carries the
--- server's `other-target` note).
---@param bufnr integer
---@return boolean
function M.merges_into(bufnr)
  if #vim.lsp.get_clients({ bufnr = bufnr, name = "stet" }) == 0 then
    return false
  end
  for _, found in ipairs(vim.diagnostic.get(bufnr)) do
    if found.code == "other-target" then
      return false
    end
  end
  return true
end

--- The SHA-256 of a buffer's file with its line breaks as "\n" (as the server digests the
--- text it read), or nil when it cannot be read.
---@param bufnr integer
---@return string?
local function file_digest(bufnr)
  local file = io.open(vim.api.nvim_buf_get_name(bufnr), "rb")
  if not file then
    return nil
  end
  local text = file:read("*a")
  file:close()
  return text and vim.fn.sha256((text:gsub("\r\n", "\n"))) or nil
end

--- The buffer is in step with the style sheet on disk whose digest is `digest`: the server
--- merged that text into it (lsp/stet.lua's "stet/sheetHolds" and workspace/applyEdit).
---@param bufnr integer
---@param digest string
function M.merged(bufnr, digest)
  vim.b[bufnr].stet_merged = digest
end

--- Writes a style sheet's buffer for the BufWriteCmd of plugin/stet.lua: as `:w!` when it
--- goes to the buffer's own file, the server merges into it, and the file still holds the
--- text the server last merged (nothing on disk is written over that the buffer does not
--- hold, by its content: not its time, which a write landing while the edit was on its way
--- would have); else as asked, with Neovim's questions.
---@param bufnr integer
---@param file string the file written
function M.write_sheet(bufnr, file)
  local own = vim.fn.fnamemodify(file, ":p") == vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ":p")
  local merged = vim.b[bufnr].stet_merged
  local force = vim.v.cmdbang == 1
    or (own and merged ~= nil and merged == file_digest(bufnr) and M.merges_into(bufnr))
  local command = ("%s%s %s"):format(force and "write!" or "write", vim.v.cmdarg, vim.fn.fnameescape(file))
  local ignored = vim.o.eventignore
  vim.o.eventignore = ignored == "" and "BufWriteCmd" or ignored .. ",BufWriteCmd"
  local ok, err = pcall(vim.api.nvim_buf_call, bufnr, function()
    vim.cmd(command)
  end)
  vim.o.eventignore = ignored
  if not ok then
    error(err, 0)
  end
end

function M.discard(id)
  local bufnr, uri, line = here()
  local in_list
  bufnr, uri, id, in_list = from_list(bufnr, uri, id)
  M.when_ready(bufnr, function() -- else says why no server is attached
    id = id or (not in_list and entry_at_cursor(bufnr, line) or nil)
    if not id then
      notify(
        "no style-sheet entry on this line: put the cursor on one (:Stet sheet, :Stet list) or give its id (:Stet discard ID)",
        vim.log.levels.WARN
      )
      return
    end
    M.execute("stet.note.discard", { uri = uri, id = id }, function()
      notify(("note %s discarded"):format(id))
    end, bufnr)
  end)
end

function M.pause(until_date)
  local bufnr, uri = here(true)
  M.execute("stet.pause", { uri = uri, ["until"] = until_date }, function(result)
    local until_time = type(result) == "table" and value(result.paused_until) or nil
    notify("paused" .. (until_time and (" until " .. until_time) or ""))
  end, bufnr)
end

function M.resume()
  local bufnr, uri = here(true)
  M.execute("stet.resume", { uri = uri }, function(result)
    if type(result) == "table" and result.was_paused == false then
      notify("the style sheet of " .. result.target.label .. " was not paused")
    else
      notify("resumed")
    end
  end, bufnr)
end

-- Trajectories: import an agent session, open a trajectory, mark its steps. -----------------

M.verdicts = { "wrong", "clever", "note" }

--- A size in bytes as people read it.
local function size_text(size)
  size = tonumber(size) or 0
  for _, unit in ipairs({ "B", "KB", "MB" }) do
    if size < 1000 then
      return unit == "B" and ("%d B"):format(size) or ("%.1f %s"):format(size, unit)
    end
    size = size / 1000
  end
  return ("%.1f GB"):format(size)
end

--- How a session of `stet.trajectory.sessions` is offered: harness, start, first prompt;
--- its size and whether it was imported already, or committed (importing it brings what came since).
---@param row table
---@return string
function M.session_label(row)
  local started = value(row.started)
  started = started and started:sub(1, 16):gsub("T", " ") or nil
  local parts = { row.harness, started, value(row.first_prompt) }
  local label = table.concat(vim.tbl_filter(function(part)
    return part ~= nil and part ~= ""
  end, parts), " · ")
  local size = size_text(row.size)
  local state = ""
  if row.imported == true then
    state = ", imported"
  elseif type(value(row.committed)) == "table" and #row.committed > 0 then
    state = ", committed"
  end
  return label .. "  (" .. size .. state .. ")"
end

--- One line about an import, from the server's result (`stet trajectory import --json`).
---@param result table
---@return string
function M.import_message(result)
  local where = ("%d events %s %s"):format(result.events or 0, result.changed and "imported into" or "in", result.folder or "?")
  if not result.changed then
    return ("%s session %s already imported (%s)"):format(result.format or "?", (result.session or ""):sub(1, 8), where)
  end
  local total, rules = 0, {}
  for rule, count in pairs(value(result.redaction) or {}) do
    total = total + count
    rules[#rules + 1] = ("%s %d"):format(rule, count)
  end
  table.sort(rules)
  local redacted = total > 0 and ("redacted %d (%s)"):format(total, table.concat(rules, ", ")) or "nothing redacted"
  local problems = #(value(result.problems) or {})
  local outside = result.outside_repository == true and "; the session worked outside this repository" or ""
  local continues = value(result.continues)
  local since = ""
  if type(continues) == "table" and #continues > 0 then
    since = "; what came after " .. table.concat(continues, ", ")
  end
  return where .. ", " .. redacted .. (problems > 0 and (", %d problem(s)"):format(problems) or "") .. outside .. since
end

--- Imports a transcript file (`path`), or the session picked from those the server finds.
---@param path string?
function M.import(path)
  local bufnr, uri = here(true)
  local function import(file)
    M.execute("stet.trajectory.import", { uri = uri, path = file }, function(result)
      notify(M.import_message(type(result) == "table" and result or {}))
    end, bufnr)
  end
  if path then
    -- `~` and environment variables expanded, not wildcards: a name holding `[1]` or `{a,b}`
    -- is the file's own (expand() turned it into other files, or several names in one).
    import(vim.fn.fnamemodify(vim.fs.normalize(path), ":p"))
    return
  end
  M.execute("stet.trajectory.sessions", { uri = uri }, function(result)
    local sessions = type(result) == "table" and value(result.sessions) or {}
    vim.schedule(function()
      if #sessions == 0 then
        notify("no agent sessions found for this repository (Claude Code, Codex, Gemini CLI, Qwen Code, "
          .. "aider, OpenHands V1); :Stet import PATH imports a transcript file")
        return
      end
      vim.ui.select(sessions, { prompt = "Import agent session", format_item = M.session_label, kind = "stet.session" },
        function(choice)
          if choice then
            import(choice.path)
          end
        end)
    end)
  end, bufnr)
end

--- Opens a trajectory's narration (`id` or prefix; default the working trajectory), at
--- `step` when given (the cursor on the step's line).
---@param id string?
---@param file string? "narration", "events" or "meta"
---@param step integer?
function M.open_trajectory(id, file, step)
  local bufnr, uri = here(true)
  M.execute("stet.trajectory.open", { uri = uri, id = id, file = file, step = step }, function(result)
    local target = type(result) == "table" and result.uri or nil
    if not target then
      return
    end
    vim.schedule(function()
      -- The server asks the client to show it (window/showDocument, the step's line
      -- selected); edit it here when that did not happen (`shown`: the user may have gone
      -- elsewhere since).
      if result.shown ~= true and vim.uri_from_bufnr(vim.api.nvim_get_current_buf()) ~= target then
        M.show_file(vim.uri_to_fname(target))
        local line = tonumber(value(result.line))
        if step and line then
          pcall(vim.api.nvim_win_set_cursor, 0, { line + 1, 0 })
        end
      end
    end)
  end, bufnr)
end

--- The rows of `stet.trajectory.list` (for completion; empty when the server is slow).
---@return table[]
local function trajectory_rows()
  local bufnr = repository_buffer()
  local client = vim.lsp.get_clients({ bufnr = bufnr, name = "stet" })[1]
  if not client then
    return {}
  end
  local params = { command = "stet.trajectory.list", arguments = { { uri = vim.uri_from_bufnr(bufnr) } } }
  local response = client:request_sync("workspace/executeCommand", params, 1000, bufnr)
  return response and type(response.result) == "table" and value(response.result.trajectories) or {}
end

--- The ids of the repository's trajectories (for completion; empty when the server is slow).
---@return string[]
function M.trajectory_ids()
  local rows = trajectory_rows()
  return vim.tbl_map(function(row)
    return row.id
  end, rows)
end

--- The targets whose working trajectory nothing else commits (for completion of `:Stet
--- capstone --target`): the deleted branches and left detached HEADs that
--- `stet.trajectory.list` marks `orphaned`, by the name its `target` gives them. Empty when
--- the server is slow.
---@return string[]
function M.capstone_targets()
  local rows = trajectory_rows()
  local names = {}
  for _, row in ipairs(rows) do
    if row.working and row.orphaned == true and type(row.target) == "string" then
      names[#names + 1] = row.target
    end
  end
  return names
end

--- Whether a file is one of a trajectory's (events.jsonl or narration.md under
--- .stet/cache/trajectories/<id>/ or .stet/trajectories/<id>/).
---@param name string
---@return boolean
function M.is_trajectory_file(name)
  name = name:gsub("\\", "/")
  for _, pattern in ipairs({
    "/%.stet/cache/trajectories/[^/]+/events%.jsonl$",
    "/%.stet/cache/trajectories/[^/]+/narration%.md$",
    "/%.stet/trajectories/[^/]+/events%.jsonl$",
    "/%.stet/trajectories/[^/]+/narration%.md$",
  }) do
    if name:find(pattern) then
      return true
    end
  end
  return false
end

--- The step under the cursor of a quickfix or location list (the one `:Stet steps` fills):
--- the buffer of its trajectory file and its line (0-based), or nil.
---@return integer? bufnr
---@return integer? line
local function listed_step()
  local item = M.list_item()
  if item and item.valid == 1 and item.bufnr > 0 and M.is_trajectory_file(vim.api.nvim_buf_get_name(item.bufnr)) then
    return item.bufnr, item.lnum - 1
  end
end

--- Records a verdict on the step at the cursor of an open trajectory file; the server finds
--- the step at that line. `to_sheet` also adds it to the style sheet.
---@param verdict string wrong, clever or note
---@param text string?
---@param to_sheet boolean?
function M.mark(verdict, text, to_sheet)
  local bufnr, uri, line = here()
  local file = bufnr
  local listed, listed_line = listed_step()
  if listed then
    -- The server reads the step's file from disk when no buffer of it is open.
    file, line, uri = listed, listed_line, vim.uri_from_bufnr(listed)
    bufnr = #vim.lsp.get_clients({ bufnr = listed, name = "stet" }) > 0 and listed or repository_buffer()
  elseif vim.bo[bufnr].buftype == "quickfix" then
    notify("put the cursor on a step of the list (:Stet steps), or open a trajectory (:Stet trajectory)",
      vim.log.levels.WARN)
    return
  end
  M.when_ready(bufnr, function() -- else says why no server is attached
    if not M.is_trajectory_file(vim.api.nvim_buf_get_name(file)) then
      notify("open a trajectory (:Stet trajectory) and put the cursor on a step first", vim.log.levels.WARN)
      return
    end
    local argument = { uri = uri, line = line, verdict = verdict }
    if text and text ~= "" then
      argument.text = text
    end
    if to_sheet then
      argument.toSheet = true
    end
    M.execute("stet.step.mark", argument, function(result)
      notify(M.marked_message(result, verdict))
    end, bufnr)
  end)
end

--- Asks for a note's text (vim.ui.input) and marks the step at the cursor with it, for
--- <Plug>(StetMarkNote): off a trajectory's file it says so before asking, so that nothing
--- typed is thrown away.
function M.ask_mark_note()
  if not M.is_trajectory_file(vim.api.nvim_buf_get_name(0)) and not listed_step() then
    notify("open a trajectory (:Stet trajectory) and put the cursor on a step first", vim.log.levels.WARN)
    return
  end
  vim.ui.input({ prompt = "Note on this step: " }, function(text)
    if text and vim.trim(text) ~= "" then
      M.mark("note", text, false)
    end
  end)
end

--- Asks for a note's text (vim.ui.input) and adds it at the cursor line, for
--- <Plug>(StetNote): in a buffer no server will attach to (not a file, outside any
--- repository, no server) it says why before asking.
function M.ask_note()
  local blocker = attach_blocker(vim.api.nvim_get_current_buf())
  if blocker then
    notify("the stet language server is not attached to this buffer: " .. blocker, vim.log.levels.WARN)
    return
  end
  vim.ui.input({ prompt = "Stet note: " }, function(text)
    if text and vim.trim(text) ~= "" then
      M.add_note(text, nil)
    end
  end)
end

--- What a `stet.step.mark` result (`{verdict, entry}`) says was recorded.
---@param result table
---@param verdict string the verdict asked for
---@return string
function M.marked_message(result, verdict)
  result = type(result) == "table" and result or {}
  local marked = value(result.verdict) or {}
  local entry = value(result.entry)
  local sheet = type(entry) == "table" and ("; style sheet entry %s added"):format(entry.id) or ""
  return ("step %s marked %s%s"):format(marked.step or "?", marked.verdict or verdict, sheet)
end

--- The handler of the server's `stet.step.mark` (vim.lsp.commands), which the verdict code
--- actions of a trajectory's file run: it reports the verdict, as :Stet mark does.
---@param command lsp.Command
---@param ctx table
function M.mark_command(command, ctx)
  local argument = (command.arguments or {})[1] or {}
  M.execute(command.command, argument, function(result)
    notify(M.marked_message(result, argument.verdict or "?"))
  end, ctx.bufnr)
end

-- Graduation: a skill's name, the review, the capstone. --------------------------------------

--- Why `name` is not a skill name (the Agent Skills format: 1 to 64 characters, lowercase
--- letters, digits and single hyphens inside), or nil when it is one.
---@param name string
---@return string?
function M.skill_name_problem(name)
  if #name == 0 or #name > 64 then
    return "1 to 64 characters"
  end
  if not name:find("^[a-z0-9%-]+$") or name:find("^%-") or name:find("%-$") or name:find("%-%-") then
    return "lowercase letters, digits and hyphens only, no hyphen at either end nor two in a row"
  end
end

--- One line about a `stet.graduate` result (as `stet graduate` prints it).
---@param result table
---@return string
function M.graduation_message(result)
  local entry = type(result.entry) == "table" and result.entry.id or "?"
  local edited = result.edited == true and " (text edited)" or ""
  if result.route == "discard" then
    return ("entry %s discarded"):format(entry)
  end
  local skill = value(result.skill)
  if result.route == "skill" and type(skill) == "table" then
    local staged = #(value(result.staged) or {}) > 0 and "staged" or "unchanged"
    return ("entry %s into the skill %s (%s, %s)%s"):format(entry, skill.name, skill.path, staged, edited)
  end
  return ("entry %s into the trajectory %s%s"):format(entry, value(result.trajectory) or "?", edited)
end

--- The handler of the server's `stet.graduate` (vim.lsp.commands), which code actions and the
--- sheet's lenses run: the skill route without a `skill` asks for the name (vim.ui.input,
--- offering the server's `proposedName`; cancelling runs nothing, an empty answer lets the
--- server propose the name). Every route then goes to the server as workspace/executeCommand.
---@param command lsp.Command
---@param ctx table
function M.graduate_command(command, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if not client then
    return
  end
  local function run(arguments)
    local params = { command = command.command, arguments = arguments }
    client:request("workspace/executeCommand", params, function(err, result)
      if err then
        report_failure(command.command, err)
      elseif type(result) == "table" then
        notify(M.graduation_message(result))
      end
    end, ctx.bufnr)
  end
  local arguments = command.arguments or {}
  local argument = arguments[1]
  if type(argument) ~= "table" or argument.route ~= "skill" or value(argument.skill) ~= nil then
    run(arguments)
    return
  end
  local function ask(default)
    local prompt = ("Skill name for entry %s: "):format(argument.id or "?")
    vim.ui.input({ prompt = prompt, default = default }, function(name)
      if name == nil then
        return -- cancelled: nothing runs
      end
      if vim.trim(name) == "" then
        run(arguments) -- the server proposes the name
        return
      end
      local problem = M.skill_name_problem(name)
      if problem then
        notify(("%q is not a skill name: %s"):format(name, problem), vim.log.levels.WARN)
        vim.schedule(function()
          ask(name)
        end)
        return
      end
      local answered = vim.deepcopy(arguments)
      answered[1].skill = name
      run(answered)
    end)
  end
  ask(value(argument.proposedName))
end

--- Writes the graduation review of the open entries and shows it; each line's code action
--- accepts its proposal (`stet.graduation.apply`).
function M.review()
  local bufnr, uri = here(true)
  M.execute("stet.graduation.review", { uri = uri }, function(result)
    local target = type(result) == "table" and result.uri or nil
    if not target then
      return
    end
    vim.schedule(function()
      -- Shown by the server's window/showDocument unless `shown` says otherwise.
      if result.shown ~= true and vim.uri_from_bufnr(vim.api.nvim_get_current_buf()) ~= target then
        M.show_file(vim.uri_to_fname(target))
      end
      local count = tonumber(result.entries) or 0
      notify(("%d open entr%s to review (code action on a line accepts it)"):format(count, count == 1 and "y" or "ies"))
    end)
  end, bufnr)
end

--- The handler of the server's `stet.graduation.apply` (vim.lsp.commands), which the review's
--- code actions run: the command goes to the server, which carries out the accepted lines and
--- writes the review again without them; the review's buffer is then read again (when it has
--- no changes of its own), so that its lines and the next code action match the file, and
--- each graduation is reported.
---@param command lsp.Command
---@param ctx table
function M.apply_review_command(command, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if not client then
    return
  end
  local argument = (command.arguments or {})[1]
  local params = { command = command.command, arguments = command.arguments }
  client:request("workspace/executeCommand", params, function(err, result)
    if err then
      report_failure(command.command, err)
      return
    end
    vim.schedule(function()
      local uri = type(argument) == "table" and argument.uri or nil
      local review = uri and vim.fn.bufnr(vim.uri_to_fname(uri)) or -1
      if review > 0 and vim.api.nvim_buf_is_loaded(review) then
        if vim.bo[review].modified then
          notify("the review was written again: :edit! reads it", vim.log.levels.WARN)
        else
          vim.api.nvim_buf_call(review, function()
            vim.cmd("silent edit!")
          end)
        end
      end
      local results = type(result) == "table" and value(result.results) or {}
      local lines = vim.tbl_map(M.graduation_message, results)
      notify(#lines > 0 and table.concat(lines, "; ") or "no proposal accepted")
    end)
  end, ctx.bufnr)
end

--- A capstone's result as `stet capstone` prints it.
---@param result table
---@return string[]
function M.capstone_lines(result)
  local where = value(result.branch) or "detached HEAD"
  if not result.changed and not result.dry_run then
    local lines = { ("trajectory %s is already committed; nothing to commit"):format(result.trajectory) }
    if value(result.archived) then
      lines[2] = "working trajectory archived to " .. result.archived
    end
    return lines
  end
  local lines = {}
  if result.dry_run then
    lines[1] = ("would commit trajectory %s on top of %s (%s):"):format(result.trajectory, (result.parent or ""):sub(1, 12), where)
  else
    lines[1] = ("committed trajectory %s as %s on %s:"):format(result.trajectory, (value(result.commit) or ""):sub(1, 12), where)
  end
  for _, change in ipairs(value(result.paths) or {}) do
    lines[#lines + 1] = ("  %-8s %s"):format(change.status, change.path)
  end
  local supersedes = value(result.supersedes)
  if type(supersedes) == "table" then
    lines[#lines + 1] = ("  follows %s (%s)"):format(supersedes.trajectory, supersedes.commit:sub(1, 12))
  end
  local rules = {}
  for rule, count in pairs(value(result.redaction) or {}) do
    rules[#rules + 1] = ("%s %d"):format(rule, count)
  end
  if #rules > 0 then
    table.sort(rules)
    lines[#lines + 1] = "redacted: " .. table.concat(rules, ", ")
  end
  lines[#lines + 1] = "message:"
  for _, line in ipairs(vim.split(((result.message or ""):gsub("\n+$", "")), "\n", { plain = true })) do
    lines[#lines + 1] = (("  " .. line):gsub("%s+$", ""))
  end
  if value(result.archived) then
    lines[#lines + 1] = "working trajectory archived to " .. result.archived
  end
  for _, warning in ipairs(value(result.warnings) or {}) do
    lines[#lines + 1] = "warning: " .. warning
  end
  return lines
end

--- Commits the working trajectory on top of HEAD (`message`: the commit message, default the
--- server's); `dry_run` shows what would be committed in a scratch buffer and changes nothing.
--- `target`: the working trajectory of that target instead, as `stet capstone --target NAME`
--- takes it (a deleted branch's, a left detached HEAD's: see M.capstone_targets).
---@param message string?
---@param dry_run boolean?
---@param target string?
function M.capstone(message, dry_run, target)
  local bufnr, uri = here(true)
  local argument = { uri = uri }
  if message and message ~= "" then
    argument.message = message
  end
  if dry_run then
    argument.dryRun = true
  end
  if target then
    argument.target = target
  end
  -- The server reports progress while it runs, and announces the new commit (or that HEAD
  -- held the trajectory already) itself.
  M.execute("stet.capstone", argument, function(result)
    result = type(result) == "table" and result or {}
    vim.schedule(function()
      for _, warning in ipairs(value(result.warnings) or {}) do
        notify(warning, vim.log.levels.WARN)
      end
      if result.dry_run then
        M.scratch("stet://capstone", table.concat(M.capstone_lines(result), "\n"), "text")
      end
    end)
  end, bufnr)
end

-- The entry under the cursor, graduation from a command, the steps in quickfix. ------------

M.routes = { "trajectory", "skill", "discard" }

--- The id of the style-sheet entry written on `line` (0-based) of a sheet buffer: the
--- `<!-- stet id=… -->` of that line, or of the entry the line continues.
---@param bufnr integer
---@param line integer
---@return string?
function M.sheet_entry_at(bufnr, line)
  local lines = vim.api.nvim_buf_get_lines(bufnr, line, line + 20, false)
  for index, text in ipairs(lines) do
    if index > 1 and (text:find("^%s*%- ") or text:find("^#")) then
      return nil
    end
    local id = text:match("<!%-%- stet id=([%w%-_]+)")
    if id then
      return id
    end
  end
end

--- Whether a buffer is a style sheet (.stet/cache/sheets/*.md).
local function is_sheet(bufnr)
  return vim.api.nvim_buf_get_name(bufnr):gsub("\\", "/"):find("/%.stet/cache/sheets/[^/]+%.md$") ~= nil
end

--- Finds the entry under the cursor and calls `on_id(id)` (nil when there is none): in the
--- style sheet the entry on the cursor line; elsewhere a style-sheet diagnostic on the cursor
--- line, else the open entry anchored at it (`stet.note.list`, `placement.line`).
---@param on_id fun(id: string?)
function M.entry_at_cursor(on_id)
  local bufnr, uri, line = here()
  if is_sheet(bufnr) then
    on_id(M.sheet_entry_at(bufnr, line))
    return
  end
  local id = entry_at_cursor(bufnr, line)
  if id then
    on_id(id)
    return
  end
  M.execute("stet.note.list", { uri = uri, status = "open" }, function(result)
    local name = vim.fs.normalize(vim.api.nvim_buf_get_name(bufnr))
    for _, entry in ipairs(type(result) == "table" and value(result.entries) or {}) do
      local anchor = value(entry.anchor)
      local placement = value(entry.placement)
      if anchor and placement and value(placement.line) == line + 1
        and vim.endswith(name, "/" .. anchor.path) then
        vim.schedule(function()
          on_id(entry.id)
        end)
        return
      end
    end
    vim.schedule(function()
      on_id(nil)
    end)
  end, bufnr)
end

--- The arguments of the server's "Propose entry ID as a skill" code action on the cursor
--- line (they carry `proposedName`), or nil.
local function skill_action_arguments(bufnr, client, id)
  local line = vim.api.nvim_win_get_cursor(0)[1] - 1
  local diagnostics = {}
  for _, diagnostic in ipairs(vim.diagnostic.get(bufnr, { lnum = line })) do
    local lsp = diagnostic.user_data and diagnostic.user_data.lsp
    if lsp then
      diagnostics[#diagnostics + 1] = lsp
    end
  end
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = { start = { line = line, character = 0 }, ["end"] = { line = line, character = 0 } },
    context = { diagnostics = diagnostics },
  }
  local response = client:request_sync("textDocument/codeAction", params, 3000, bufnr)
  for _, action in ipairs(response and type(response.result) == "table" and response.result or {}) do
    local command = type(action.command) == "table" and action.command or {}
    local argument = type(command.arguments) == "table" and command.arguments[1] or nil
    if command.command == "stet.graduate" and type(argument) == "table" and argument.id == id
      and argument.route == "skill" then
      return argument
    end
  end
end

--- Graduates an entry (`id`, default the entry under the cursor) by `route` (default: asked
--- with vim.ui.select). The skill route asks for the name, offering the server's proposal.
---@param route string?
---@param id string?
function M.graduate(route, id)
  local bufnr, uri = here()
  local in_list
  bufnr, uri, id, in_list = from_list(bufnr, uri, id)
  M.when_ready(bufnr, function(client) -- else says why no server is attached
    local function go(entry)
      local function with_route(chosen)
        if not chosen then
          return
        end
        local argument = { uri = uri, id = entry, route = chosen }
        local function run()
          M.graduate_command({ command = "stet.graduate", arguments = { argument } }, { client_id = client.id, bufnr = bufnr })
        end
        if chosen ~= "skill" then
          run()
          return
        end
        -- The name to offer: the code action's on the cursor line, else (the entry is not
        -- there) the server's proposal for it (stet.graduate.proposal).
        local proposed = skill_action_arguments(bufnr, client, entry)
        argument.proposedName = proposed and value(proposed.proposedName) or nil
        if argument.proposedName then
          run()
          return
        end
        M.execute("stet.graduate.proposal", { uri = uri, id = entry }, function(result)
          if type(result) == "table" and type(value(result.proposed_name)) == "string" then
            argument.proposedName = result.proposed_name
          end
          vim.schedule(run)
        end, bufnr)
      end
      if route then
        with_route(route)
        return
      end
      local labels = {
        trajectory = "graduate into the trajectory",
        skill = "propose as a skill",
        discard = "discard",
      }
      vim.ui.select(M.routes, {
        prompt = ("Graduate entry %s"):format(entry),
        format_item = function(item)
          return labels[item] or item
        end,
        kind = "stet.route",
      }, with_route)
    end
    if id then
      go(id)
      return
    end
    local function found_at_cursor(found)
      if not found then
        notify(
          "no style-sheet entry under the cursor: put the cursor on one (:Stet sheet, :Stet list) or give its id (:Stet graduate ROUTE ID)",
          vim.log.levels.WARN
        )
        return
      end
      go(found)
    end
    if in_list then
      found_at_cursor(nil) -- not an entry's item (a sheet's problem)
      return
    end
    M.entry_at_cursor(found_at_cursor)
  end)
end

--- The quickfix items of a trajectory's outline (`stet.trajectory.outline`): each session,
--- turn and subagent a heading line, its steps after it ("step N kind title", at their line
--- of `path`), in the server's order.
---@param nodes table[]
---@param path string the trajectory's events.jsonl
---@param items table[]? added to
---@param depth integer?
---@return table[]
function M.tree_items(nodes, path, items, depth)
  items = items or {}
  depth = depth or 0
  for _, node in ipairs(nodes) do
    if node.type == "step" then
      local text = ("step %s %s"):format(tostring(node.step), node.kind)
      local title = value(node.title)
      if type(title) == "string" and title ~= "" then
        text = text .. " " .. title
      end
      items[#items + 1] = { filename = path, lnum = node.line + 1, col = 1, text = text }
    else
      local detail = value(node.detail)
      local heading = ("%s%s %s"):format(("│ "):rep(depth), node.type, node.name)
      if type(detail) == "string" and detail ~= "" then
        heading = heading .. " (" .. detail .. ")"
      end
      items[#items + 1] = { text = heading, valid = 0 }
      M.tree_items(node.children or {}, path, items, depth + 1)
    end
  end
  return items
end

--- Fills the quickfix list with a trajectory's steps (`id` or prefix; default the working
--- trajectory), under its sessions, turns and subagents as the server's outline groups them.
---@param id string?
function M.steps(id)
  local bufnr, uri = here(true)
  M.execute("stet.trajectory.outline", { uri = uri, id = id }, function(result)
    local target = type(result) == "table" and result.uri or nil
    if not target then
      return
    end
    vim.schedule(function()
      local path = vim.uri_to_fname(target)
      local items = M.tree_items(result.nodes or {}, path)
      local name = vim.fs.basename(vim.fs.dirname(path))
      vim.fn.setqflist({}, " ", { title = "stet trajectory " .. name, items = items })
      if #items > 0 then
        vim.cmd("botright copen")
      else
        notify("the trajectory has no steps")
      end
    end)
  end, bufnr)
end

--- The ids of the open entries (for completion; empty when the server is slow).
---@return string[]
function M.entry_ids()
  local bufnr = repository_buffer()
  local client = vim.lsp.get_clients({ bufnr = bufnr, name = "stet" })[1]
  if not client then
    return {}
  end
  local params = { command = "stet.note.list", arguments = { { uri = vim.uri_from_bufnr(bufnr), status = "open" } } }
  local response = client:request_sync("workspace/executeCommand", params, 1000, bufnr)
  local entries = response and type(response.result) == "table" and value(response.result.entries) or {}
  return vim.tbl_map(function(entry)
    return entry.id
  end, entries)
end
return M
