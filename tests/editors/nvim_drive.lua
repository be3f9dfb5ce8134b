-- Drives headless Neovim 0.11 through the Stet plugin like a reviewer would, and writes what
-- it saw as JSON for test_editor_neovim.py to assert on. Configuration comes from the JSON
-- file named by $STET_NVIM_TEST (plugin folder, server command, file, output path).
local config = vim.json.decode(table.concat(vim.fn.readfile(vim.env.STET_NVIM_TEST), "\n"))
local TIMEOUT = config.timeout_ms or 30000

vim.opt.runtimepath:prepend(config.plugin)
vim.opt.swapfile = false
vim.opt.shadafile = "NONE"
-- The server comes from this test's interpreter; everything else is the plugin's own config.
vim.lsp.config("stet", { cmd = config.cmd })
vim.cmd.runtime("plugin/stet.lua")

local result = { steps = {}, notifications = {} }
local started = vim.uv.hrtime()

local function step(name)
  result.steps[#result.steps + 1] = { name = name, ms = math.floor((vim.uv.hrtime() - started) / 1e6) }
end

vim.notify = function(message, level)
  result.notifications[#result.notifications + 1] = { message = message, level = level }
end
-- What the server shows the user (window/showMessage, which the plugin's handler shows): a
-- warning there is a failure.
result.server_messages = {}
require("stet").server_message = function(params)
  result.server_messages[#result.server_messages + 1] = { type = params.type, message = params.message }
end

local function finish()
  vim.fn.writefile({ vim.json.encode(result) }, config.out)
  vim.cmd("qall!")
end

local function wait_for(what, predicate)
  local ok = vim.wait(TIMEOUT, predicate, 50)
  if not ok then
    error("timed out waiting for " .. what)
  end
  step(what)
end

-- Waits until the stet client is attached to `bufnr` and initialized; returns it.
local function attached(bufnr, what)
  local client
  wait_for("client on " .. what, function()
    client = vim.lsp.get_clients({ bufnr = bufnr, name = "stet" })[1]
    return client ~= nil and client.initialized
  end)
  return client
end

local function stet_diagnostics(bufnr)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.source == "stet" then
      local lsp = d.user_data and d.user_data.lsp or {}
      out[#out + 1] = {
        lnum = d.lnum,
        col = d.col,
        end_col = d.end_col,
        severity = d.severity,
        code = d.code,
        message = d.message,
        data = lsp.data,
        lsp = lsp,
      }
    end
  end
  return out
end

local function find(list, predicate)
  for _, item in ipairs(list) do
    if predicate(item) then
      return item
    end
  end
end

local function buffer_text(bufnr)
  return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n")
end

local function run_notes()
  vim.cmd.edit(vim.fn.fnameescape(config.file))
  local bufnr = vim.api.nvim_get_current_buf()
  local uri = vim.uri_from_bufnr(bufnr)
  result.uri = uri

  -- 1. The client attaches to a Python buffer (no filetype restriction).
  local client
  wait_for("client initialized", function()
    client = vim.lsp.get_clients({ bufnr = bufnr, name = "stet" })[1]
    return client ~= nil and client.initialized
  end)
  result.root_dir = client.root_dir
  result.commands = (client.server_capabilities.executeCommandProvider or {}).commands

  -- 2. The margin comment is a Hint diagnostic.
  local margin
  wait_for("margin-note diagnostic", function()
    margin = find(stet_diagnostics(bufnr), function(d)
      return d.code == "margin-note"
    end)
    return margin ~= nil
  end)
  result.margin = margin

  -- 3. Its code actions.
  local line = margin.lnum
  local params = {
    textDocument = { uri = uri },
    range = { start = { line = line, character = 0 }, ["end"] = { line = line, character = 0 } },
    context = { diagnostics = { margin.lsp }, only = { "quickfix" } },
  }
  local responses = vim.lsp.buf_request_sync(bufnr, "textDocument/codeAction", params, TIMEOUT) or {}
  result.actions = {}
  for _, response in pairs(responses) do
    for _, action in ipairs(response.result or {}) do
      result.actions[#result.actions + 1] = { title = action.title, kind = action.kind, command = action.command }
    end
  end
  step("code actions")

  -- 4. Apply "Record margin note to style sheet" the way a user does (:lua vim.lsp.buf.code_action()).
  vim.api.nvim_win_set_cursor(0, { line + 1, 0 })
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(action)
      return action.title == "Record margin note to style sheet"
    end,
  })
  wait_for("margin comment removed", function()
    return not buffer_text(bufnr):find("stet:", 1, true)
  end)
  result.after_record = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  wait_for("recording confirmed", function()
    return find(result.notifications, function(n)
      return n.message:find("recorded", 1, true) ~= nil
    end) ~= nil
  end)
  -- Keep the buffer and the file in step, as a user would (:write).
  vim.cmd("silent write")
  wait_for("margin diagnostic gone", function()
    return find(stet_diagnostics(bufnr), function(d)
      return d.code == "margin-note"
    end) == nil
  end)

  -- 5. :Stet note on another line becomes an anchored Information diagnostic.
  local target = config.note_line
  vim.api.nvim_win_set_cursor(0, { target + 1, 0 })
  vim.cmd("Stet note " .. config.note_text)
  local note
  wait_for("note diagnostic", function()
    note = find(stet_diagnostics(bufnr), function(d)
      return d.severity == vim.diagnostic.severity.INFO and d.message:find(config.note_text, 1, true) ~= nil
    end)
    return note ~= nil
  end)
  result.note = note
  result.diagnostics = stet_diagnostics(bufnr)

  -- 6. The code lens and the hover on the note's line (best effort: reported, asserted loosely).
  local lens_params = { textDocument = { uri = uri } }
  local lens_responses = vim.lsp.buf_request_sync(bufnr, "textDocument/codeLens", lens_params, TIMEOUT) or {}
  result.lenses = {}
  for _, response in pairs(lens_responses) do
    for _, lens in ipairs(response.result or {}) do
      result.lenses[#result.lenses + 1] = {
        line = lens.range.start.line,
        title = lens.command and lens.command.title,
        command = lens.command and lens.command.command,
      }
    end
  end
  local hover_params = { textDocument = { uri = uri }, position = { line = note.lnum, character = 0 } }
  local hover_responses = vim.lsp.buf_request_sync(bufnr, "textDocument/hover", hover_params, TIMEOUT) or {}
  for _, response in pairs(hover_responses) do
    if response.result and response.result.contents then
      local contents = response.result.contents
      result.hover = type(contents) == "table" and (contents.value or vim.inspect(contents)) or contents
    end
  end
  step("lens and hover")

  -- 7. :Stet brief shows the brief in a scratch buffer.
  vim.cmd("Stet brief")
  wait_for("brief buffer", function()
    return vim.api.nvim_buf_get_name(0):find("stet://brief", 1, true) ~= nil
  end)
  result.brief = buffer_text(0)
  vim.cmd("close")

  -- 8. :Stet sheet opens the style sheet.
  vim.api.nvim_set_current_buf(bufnr)
  vim.cmd("Stet sheet")
  wait_for("sheet buffer", function()
    return vim.api.nvim_buf_get_name(0):find("/.stet/cache/sheets/", 1, true) ~= nil
  end)
  result.sheet_buffer = vim.api.nvim_buf_get_name(0)

  -- 9. An agent writes through the CLI: the open buffer shows the new entry without any edit.
  vim.api.nvim_set_current_buf(bufnr)
  local cli = vim.list_extend(vim.deepcopy(config.stet_cli), {
    "note", "add", config.agent_text, "--author", "agent", "--kind", "convention",
    "--file", config.file, "--line", tostring(config.agent_line + 1),
  })
  local done = vim.system(cli, { cwd = config.root_dir, text = true }):wait(TIMEOUT)
  if done.code ~= 0 then
    error("stet note add failed: " .. (done.stderr or ""))
  end
  local written = vim.uv.hrtime()
  wait_for("agent note diagnostic", function()
    return find(stet_diagnostics(bufnr), function(d)
      return d.message:find(config.agent_text, 1, true) ~= nil
    end) ~= nil
  end)
  result.agent_refresh_ms = math.floor((vim.uv.hrtime() - written) / 1e6)
  result.agent = find(stet_diagnostics(bufnr), function(d)
    return d.message:find(config.agent_text, 1, true) ~= nil
  end)

  -- 10. :Stet list puts the entries in the quickfix list.
  vim.cmd("Stet list")
  wait_for("quickfix list", function()
    return #vim.fn.getqflist() >= 3
  end)
  result.quickfix = {}
  for _, item in ipairs(vim.fn.getqflist()) do
    result.quickfix[#result.quickfix + 1] = { file = vim.api.nvim_buf_get_name(item.bufnr), lnum = item.lnum, text = item.text }
  end
  vim.cmd("cclose")

  -- 11. :Stet discard on the agent note's line discards it; its diagnostic goes.
  vim.api.nvim_set_current_buf(bufnr)
  vim.api.nvim_win_set_cursor(0, { config.agent_line + 1, 0 })
  vim.cmd("Stet discard")
  wait_for("discarded note gone", function()
    return find(stet_diagnostics(bufnr), function(d)
      return d.message:find(config.agent_text, 1, true) ~= nil
    end) == nil
  end)

  -- 12. :Stet pause with a date and :Stet resume report what the server answered.
  local function notified(prefix)
    return find(result.notifications, function(n)
      return vim.startswith(n.message, prefix)
    end)
  end
  vim.cmd("Stet pause " .. config.pause_until)
  wait_for("paused", function()
    return notified("stet: paused") ~= nil
  end)
  vim.cmd("Stet resume")
  wait_for("resumed", function()
    return notified("stet: resumed") ~= nil
  end)
  vim.cmd("Stet resume")
  wait_for("resumed when not paused", function()
    return notified("stet: the style sheet of main was not paused") ~= nil
  end)

  -- 13. Completion of :Stet's subcommands and arguments.
  vim.api.nvim_set_current_buf(bufnr)
  result.completion = {
    subcommands = vim.fn.getcompletion("Stet ", "cmdline"),
    note = vim.fn.getcompletion("Stet note c", "cmdline"),
    graduate = vim.fn.getcompletion("Stet graduate ", "cmdline"),
    mark = vim.fn.getcompletion("Stet! mark ", "cmdline"),
    ids = vim.fn.getcompletion("Stet discard ", "cmdline"),
  }

  -- 14. :checkhealth stet, from the source buffer.
  vim.cmd("checkhealth stet")
  result.health = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  result.ok = true
end

-- Opens config.file and waits for the Stet client; returns the buffer and the client.
local function open_file()
  vim.cmd.edit(vim.fn.fnameescape(config.file))
  local bufnr = vim.api.nvim_get_current_buf()
  local client
  wait_for("client initialized", function()
    client = vim.lsp.get_clients({ bufnr = bufnr, name = "stet" })[1]
    return client ~= nil and client.initialized
  end)
  result.root_dir = client.root_dir
  return bufnr, client
end

-- Every workspace/executeCommand the plugin sends, as sent.
local function record_commands(client)
  result.sent = {}
  local request = client.request
  client.request = function(self, method, params, ...)
    if method == "workspace/executeCommand" then
      result.sent[#result.sent + 1] = vim.deepcopy(params)
    end
    return request(self, method, params, ...)
  end
end

local function notified(pattern)
  return find(result.notifications, function(n)
    return n.message:find(pattern) ~= nil
  end)
end

-- The first error shown to the user (a command the server refused), or nil.
local function error_notified()
  return find(result.notifications, function(n)
    return n.level == vim.log.levels.ERROR
  end)
end

-- :Stet import (pick the session), :Stet import {path} (already imported), :Stet trajectory.
local function run_import()
  local _, client = open_file()
  record_commands(client)

  -- vim.ui.select as a user answers it: the offered items as shown, the session picked.
  result.offered = {}
  vim.ui.select = function(items, opts, on_choice)
    local picked
    for _, item in ipairs(items) do
      result.offered[#result.offered + 1] = { label = opts.format_item(item), path = item.path }
      if item.path == config.session_path then
        picked = item
      end
    end
    result.select_prompt = opts.prompt
    on_choice(picked)
  end
  vim.cmd("Stet import")
  wait_for("import notified", function()
    return notified("events imported into") ~= nil
  end)
  result.imported = notified("events imported into").message

  vim.cmd("Stet import " .. vim.fn.fnameescape(config.session_path))
  wait_for("second import notified", function()
    return notified("already imported") ~= nil
  end)
  result.again = notified("already imported").message

  vim.cmd("Stet trajectory")
  wait_for("narration buffer", function()
    return vim.api.nvim_buf_get_name(0):find("narration.md", 1, true) ~= nil
  end)
  result.trajectory_buffer = vim.api.nvim_buf_get_name(0)
  result.trajectory_lines = vim.api.nvim_buf_get_lines(0, 0, 3, false)

  -- :Stet steps: the steps under their session and turn headings.
  vim.cmd("Stet steps")
  wait_for("steps in quickfix", function()
    return #vim.fn.getqflist() > 0
  end)
  result.steps_list = {}
  for _, item in ipairs(vim.fn.getqflist()) do
    result.steps_list[#result.steps_list + 1] = { text = item.text, lnum = item.lnum, valid = item.valid }
  end
  result.ok = true
end

-- :Stet trajectory, then :Stet! mark on a step's line of the narration.
local function run_mark()
  local bufnr, client = open_file()
  record_commands(client)

  -- Outside a trajectory file the command refuses before asking the server.
  vim.cmd("Stet mark wrong not here")
  wait_for("refused outside a trajectory", function()
    return notified("open a trajectory") ~= nil
  end)

  vim.cmd("Stet trajectory")
  wait_for("narration buffer", function()
    return vim.api.nvim_buf_get_name(0):find("narration.md", 1, true) ~= nil
  end)
  local narration = vim.api.nvim_get_current_buf()
  result.trajectory_buffer = vim.api.nvim_buf_get_name(narration)
  local line = find(vim.fn.range(vim.api.nvim_buf_line_count(narration)), function(n)
    return vim.api.nvim_buf_get_lines(narration, n, n + 1, false)[1]:find(config.mark_heading, 1, true) ~= nil
  end)
  if not line then
    error("no line holding " .. config.mark_heading .. " in " .. result.trajectory_buffer)
  end
  result.mark_line = line
  vim.api.nvim_win_set_cursor(0, { line + 1, 0 })
  vim.cmd("Stet! mark wrong " .. config.mark_text)
  wait_for("mark notified", function()
    return notified("^stet: step ") ~= nil or error_notified() ~= nil
  end)
  result.marked = (notified("^stet: step ") or error_notified()).message
  result.ok = notified("^stet: step ") ~= nil
  if not result.ok then
    result.error = result.marked
  end
  vim.api.nvim_set_current_buf(bufnr)
end

-- :Stet graduate on the entry anchored at the cursor line of the source (route picked:
-- trajectory), then in the sheet on the entry's line (route skill; the name asked for, the
-- server's proposal offered, a bad name first and then a good one); :Stet steps,
-- :Stet! capstone and :Stet capstone {message}.
local function run_graduate()
  local source, client = open_file()
  record_commands(client)

  -- vim.ui.select and vim.ui.input as a user answers them.
  result.selects = {}
  local routes = { "trajectory", "skill" }
  vim.ui.select = function(items, opts, on_choice)
    local shown = {}
    for _, item in ipairs(items) do
      shown[#shown + 1] = opts.format_item and opts.format_item(item) or item
    end
    result.selects[#result.selects + 1] = { prompt = opts.prompt, items = items, shown = shown }
    on_choice(table.remove(routes, 1))
  end
  result.prompts = {}
  local answers = { config.bad_name, config.skill_name }
  vim.ui.input = function(opts, on_confirm)
    result.prompts[#result.prompts + 1] = { prompt = opts.prompt, default = opts.default }
    on_confirm(table.remove(answers, 1))
  end

  -- 1. In the source, on the anchored entry's line (found through stet.note.list).
  vim.api.nvim_win_set_cursor(0, { config.anchored_line + 1, 0 })
  vim.cmd("Stet graduate")
  wait_for("anchored entry graduated", function()
    return notified("into the trajectory") ~= nil or error_notified() ~= nil or notified("no style%-sheet entry") ~= nil
  end)
  result.graduated_anchored = (notified("into the trajectory") or error_notified() or notified("no style%-sheet entry")).message

  -- 2. In the sheet, on the entry's line.
  vim.cmd("Stet sheet")
  wait_for("sheet buffer", function()
    return vim.api.nvim_buf_get_name(0):find("/.stet/cache/sheets/", 1, true) ~= nil
  end)
  local sheet = vim.api.nvim_get_current_buf()
  wait_for("client on the sheet", function()
    return vim.lsp.get_clients({ bufnr = sheet, name = "stet" })[1] ~= nil
  end)
  local line = find(vim.fn.range(vim.api.nvim_buf_line_count(sheet)), function(n)
    return vim.api.nvim_buf_get_lines(sheet, n, n + 1, false)[1]:find("id=" .. config.entry_id, 1, true) ~= nil
  end)
  if not line then
    error("no line of entry " .. config.entry_id .. " in " .. vim.api.nvim_buf_get_name(sheet))
  end
  vim.api.nvim_win_set_cursor(0, { line + 1, 0 })
  vim.cmd("Stet graduate")
  wait_for("graduation notified", function()
    return notified("into the skill") ~= nil or error_notified() ~= nil
  end)
  result.graduated = (notified("into the skill") or error_notified()).message
  result.bad_name = (notified("is not a skill name") or {}).message

  -- 3. :Stet steps: the working trajectory's steps in the quickfix list.
  vim.api.nvim_set_current_buf(source)
  vim.cmd("Stet steps")
  wait_for("steps in quickfix", function()
    return #vim.fn.getqflist() > 0
  end)
  result.steps_title = vim.fn.getqflist({ title = 1 }).title
  result.quickfix = {}
  for _, item in ipairs(vim.fn.getqflist()) do
    local file = item.bufnr > 0 and vim.api.nvim_buf_get_name(item.bufnr) or ""
    result.quickfix[#result.quickfix + 1] = { file = file, lnum = item.lnum, text = item.text, valid = item.valid }
  end
  vim.cmd("cclose")
  vim.api.nvim_set_current_buf(source)

  -- 4. :Stet! capstone shows what would be committed; :Stet capstone {message} commits it.
  vim.cmd("Stet! capstone")
  wait_for("dry run buffer", function()
    return vim.api.nvim_buf_get_name(0):find("stet://capstone", 1, true) ~= nil
  end)
  result.dry_run = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  vim.cmd("close")

  local shown_before = #result.notifications
  vim.cmd("Stet capstone " .. config.capstone_message)
  wait_for("capstone message", function()
    return find(result.server_messages, function(m)
      return m.message:find("committed as", 1, true) ~= nil
    end) ~= nil or error_notified() ~= nil
  end)
  result.committed = (find(result.server_messages, function(m)
    return m.message:find("committed as", 1, true) ~= nil
  end) or error_notified()).message
  -- Whatever the plugin itself said once the commit was made.
  vim.wait(300, function()
    return false
  end)
  result.capstone_notifications = vim.list_slice(result.notifications, shown_before + 1)
  result.ok = error_notified() == nil
end

-- The notes and stet diagnostics of a buffer whose message holds `text`.
local function diagnostic_with(bufnr, text)
  return find(stet_diagnostics(bufnr), function(d)
    return d.message:find(text, 1, true) ~= nil
  end)
end

-- A paused sheet refuses the margin note (:Stet record) and says so; :Stet list's title says
-- it is paused; :Stet resume, then :Stet record records it; :Stet edit {id} {text} changes an
-- entry's text; :Stet graduate discard on its line discards it.
local function run_upkeep()
  local bufnr = open_file()
  wait_for("margin and entry diagnostics", function()
    return diagnostic_with(bufnr, "margin note") ~= nil and diagnostic_with(bufnr, config.entry_text) ~= nil
  end)
  result.entry_before = diagnostic_with(bufnr, config.entry_text)

  vim.cmd("Stet pause")
  wait_for("paused", function()
    return notified("^stet: paused") ~= nil
  end)
  result.paused = notified("^stet: paused").message
  vim.cmd("Stet list")
  wait_for("quickfix title", function()
    return vim.fn.getqflist({ title = 1 }).title:find("paused", 1, true) ~= nil
  end)
  result.list_title = vim.fn.getqflist({ title = 1 }).title
  vim.cmd("cclose")
  vim.api.nvim_set_current_buf(bufnr)

  vim.api.nvim_win_set_cursor(0, { config.margin_line + 1, 0 })
  vim.cmd("Stet record")
  wait_for("record refused", function()
    return error_notified() ~= nil or notified("margin note recorded") ~= nil
  end)
  result.refused = (error_notified() or notified("margin note recorded")).message
  result.buffer_paused = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  result.margin_while_paused = diagnostic_with(bufnr, "margin note")

  vim.cmd("Stet resume")
  wait_for("resumed", function()
    return notified("^stet: resumed") ~= nil
  end)
  vim.api.nvim_win_set_cursor(0, { config.margin_line + 1, 0 })
  vim.cmd("Stet record")
  wait_for("margin note recorded", function()
    return notified("^stet: margin note recorded") ~= nil and not buffer_text(bufnr):find("stet:", 1, true)
  end)
  result.recorded = notified("^stet: margin note recorded").message
  vim.cmd("silent write")
  result.after_record = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)

  vim.cmd("Stet edit " .. config.entry_id .. " " .. config.edited_text)
  wait_for("edited diagnostic", function()
    return diagnostic_with(bufnr, config.edited_text) ~= nil
  end)
  result.edited = diagnostic_with(bufnr, config.edited_text)
  result.edited_notice = (notified("^stet: note .* edited") or {}).message

  vim.api.nvim_win_set_cursor(0, { result.edited.lnum + 1, 0 })
  vim.cmd("Stet graduate discard")
  wait_for("discarded entry gone", function()
    return notified("^stet: entry .* discarded") ~= nil and diagnostic_with(bufnr, config.edited_text) == nil
  end)
  result.discarded = notified("^stet: entry .* discarded").message
  result.diagnostics = stet_diagnostics(bufnr)
  result.ok = true
end

-- The floating window vim.lsp.buf.hover() opened: its lines (then it is closed).
local function hover_shown(what)
  local lines
  wait_for(what, function()
    vim.lsp.buf.hover()
    local found = vim.wait(1000, function()
      for _, win in ipairs(vim.api.nvim_list_wins()) do
        if vim.api.nvim_win_get_config(win).relative ~= "" then
          lines = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false)
          pcall(vim.api.nvim_win_close, win, true)
          return true
        end
      end
      return false
    end, 50)
    return found
  end)
  return lines
end

-- The code lenses the plugin shows in a buffer (vim.lsp.codelens.get), once there are some.
local function lenses_shown(bufnr, what)
  local lenses
  wait_for(what, function()
    lenses = {}
    for _, lens in ipairs(vim.lsp.codelens.get(bufnr)) do
      lenses[#lenses + 1] = {
        line = lens.range.start.line,
        title = lens.command and lens.command.title,
        command = lens.command and lens.command.command,
        arguments = lens.command and lens.command.arguments,
      }
    end
    if #lenses == 0 then
      vim.lsp.codelens.refresh({ bufnr = bufnr })
    end
    return #lenses > 0
  end)
  table.sort(lenses, function(a, b)
    return a.line < b.line
  end)
  return lenses
end

-- A trajectory's events.jsonl: the outline (vim.lsp.buf.document_symbol), the lenses, the
-- hover on a step's line and its code actions; then, in a file a step wrote, the provenance
-- lens and hover, and the step opened by the lens, by the code action and by :Stet trajectory.
local function run_trajectory()
  vim.cmd.edit(vim.fn.fnameescape(config.events))
  local events = vim.api.nvim_get_current_buf()
  attached(events, "events.jsonl")
  result.lenses = lenses_shown(events, "step lenses")
  wait_for("outline", function()
    vim.lsp.buf.document_symbol({
      on_list = function(list)
        result.outline = {}
        for _, item in ipairs(list.items) do
          result.outline[#result.outline + 1] = { lnum = item.lnum, text = item.text }
        end
      end,
    })
    return vim.wait(2000, function()
      return result.outline ~= nil
    end, 50)
  end)
  vim.api.nvim_win_set_cursor(0, { config.step_line + 1, 0 })
  result.step_hover = hover_shown("step hover")
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(events) },
    range = { start = { line = config.step_line, character = 0 }, ["end"] = { line = config.step_line, character = 0 } },
    context = { diagnostics = {} },
  }
  result.actions = {}
  for _, response in pairs(vim.lsp.buf_request_sync(events, "textDocument/codeAction", params, TIMEOUT) or {}) do
    for _, action in ipairs(response.result or {}) do
      result.actions[#result.actions + 1] = { title = action.title, command = action.command }
    end
  end
  result.events_diagnostics = stet_diagnostics(events)

  vim.cmd.edit(vim.fn.fnameescape(config.written))
  local written = vim.api.nvim_get_current_buf()
  attached(written, "the written file")
  result.written_lenses = lenses_shown(written, "provenance lens")
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  result.provenance_hover = hover_shown("provenance hover")
  -- Running the lens (as a user would, :lua vim.lsp.codelens.run()) opens the step.
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  vim.lsp.codelens.run()
  wait_for("the lens's step open", function()
    return vim.api.nvim_buf_get_name(0):find("narration.md", 1, true) ~= nil
  end)
  result.opened = vim.api.nvim_buf_get_name(0)
  result.opened_line = vim.api.nvim_buf_get_lines(0, vim.api.nvim_win_get_cursor(0)[1] - 1, vim.api.nvim_win_get_cursor(0)[1], false)[1]

  -- Without lenses: the code action on a line the step wrote (its second line, not the
  -- lens's) opens the same step (`gra`, or vim.lsp.buf.code_action(), as a user would).
  local function narration_closed()
    vim.cmd("silent! bwipeout! " .. vim.fn.bufnr(result.opened))
    vim.api.nvim_set_current_buf(written)
  end
  local function step_opened(what)
    wait_for(what, function()
      return vim.api.nvim_buf_get_name(0):find("narration.md", 1, true) ~= nil
    end)
    local row = vim.api.nvim_win_get_cursor(0)[1]
    return { name = vim.api.nvim_buf_get_name(0), line = vim.api.nvim_buf_get_lines(0, row - 1, row, false)[1] }
  end
  narration_closed()
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  result.written_actions = {}
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(action)
      result.written_actions[#result.written_actions + 1] = { title = action.title, kind = action.kind, command = action.command }
      return action.command ~= nil and action.command.command == "stet.trajectory.open"
    end,
  })
  result.action_opened = step_opened("the code action's step open")

  -- And :Stet trajectory {id} {step}.
  narration_closed()
  vim.cmd("Stet trajectory " .. config.trajectory .. " " .. config.step)
  result.command_opened = step_opened(":Stet trajectory's step open")
  result.ok = true
end

-- :Stet review shows the graduation review; the code action on one line accepts its proposal;
-- the review, read again, holds the other line; "Accept every proposal" accepts it.
local function run_review()
  open_file()
  vim.cmd("Stet review")
  wait_for("review buffer", function()
    return vim.api.nvim_buf_get_name(0):find("/.stet/cache/graduation/", 1, true) ~= nil
  end)
  local review = vim.api.nvim_get_current_buf()
  result.review_buffer = vim.api.nvim_buf_get_name(review)
  result.review_lines = vim.api.nvim_buf_get_lines(review, 0, -1, false)
  result.review_notice = (notified("to review") or {}).message
  wait_for("client on the review", function()
    return vim.lsp.get_clients({ bufnr = review, name = "stet" })[1] ~= nil
  end)
  local line = find(vim.fn.range(vim.api.nvim_buf_line_count(review)), function(n)
    return result.review_lines[n + 1]:find(config.accept_id, 1, true) ~= nil
  end)
  if not line then
    error("no line of entry " .. config.accept_id .. " in the review")
  end
  vim.api.nvim_win_set_cursor(0, { line + 1, 0 })
  local title = "Accept the proposal for entry " .. config.accept_id
  local offered = {}
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(action)
      offered[#offered + 1] = action.title
      return action.title == title
    end,
  })
  result.offered = offered
  local path = result.review_buffer
  wait_for("accepted entry left the review", function()
    return not table.concat(vim.fn.readfile(path), "\n"):find(config.accept_id, 1, true)
  end)
  -- The buffer follows the file the server wrote again (no :edit! needed), or the next
  -- action would read the stale buffer.
  wait_for("review buffer read again", function()
    return not buffer_text(review):find(config.accept_id, 1, true)
  end)
  result.review_after = vim.api.nvim_buf_get_lines(review, 0, -1, false)
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(action)
      return action.title == "Accept every proposal"
    end,
  })
  wait_for("every proposal accepted", function()
    return not table.concat(vim.fn.readfile(path), "\n"):find(config.other_id, 1, true)
      or error_notified() ~= nil
  end)
  wait_for("review buffer read again after all", function()
    return not buffer_text(review):find(config.other_id, 1, true)
  end)
  result.review_shown = vim.api.nvim_buf_get_lines(review, 0, -1, false)
  result.review_last = vim.fn.readfile(path)
  result.ok = true
end

-- The style sheet itself, holding a pasted secret and an entry whose anchored line is gone:
-- its diagnostics and per-entry lenses, then the quick fix "Redact now" (one workspace edit,
-- recorded as the server sent it), the file on disk before and after :write.
local function run_sheet()
  result.applied_edits = {}
  local apply_edit = vim.lsp.handlers["workspace/applyEdit"]
  vim.lsp.handlers["workspace/applyEdit"] = function(err, params, ctx, ...)
    result.applied_edits[#result.applied_edits + 1] = vim.deepcopy(params)
    return apply_edit(err, params, ctx, ...)
  end

  vim.cmd.edit(vim.fn.fnameescape(config.file))
  local sheet = vim.api.nvim_get_current_buf()
  attached(sheet, "the sheet")
  local function with_code(code)
    return find(stet_diagnostics(sheet), function(d)
      return d.code == code
    end)
  end
  wait_for("secret and lost-anchor diagnostics", function()
    return with_code("github-token") ~= nil and with_code("anchor-lost") ~= nil
  end)
  result.diagnostics = stet_diagnostics(sheet)
  result.lenses = lenses_shown(sheet, "sheet lenses")
  result.before = vim.api.nvim_buf_get_lines(sheet, 0, -1, false)

  -- "Redact now" from the code actions at the secret, as a user picks it (vim.lsp.buf.code_action).
  local secret = with_code("github-token")
  vim.api.nvim_win_set_cursor(0, { secret.lnum + 1, secret.col })
  local offered = {}
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(action)
      offered[#offered + 1] = action.title
      return vim.startswith(action.title, "Redact now")
    end,
  })
  result.offered = offered
  wait_for("secret replaced in the buffer", function()
    return vim.api.nvim_buf_get_lines(sheet, secret.lnum, secret.lnum + 1, false)[1]:find("[REDACTED:", 1, true) ~= nil
  end)
  result.redacted_line = vim.api.nvim_buf_get_lines(sheet, secret.lnum, secret.lnum + 1, false)[1]
  result.modified = vim.bo[sheet].modified
  result.disk_before_write = vim.fn.readfile(config.file)
  wait_for("secret diagnostic gone", function()
    return with_code("github-token") == nil
  end)
  result.diagnostics_after = stet_diagnostics(sheet)
  vim.cmd("silent write")
  result.buffer_written = vim.api.nvim_buf_get_lines(sheet, 0, -1, false)
  result.ok = true
end

-- Go to definition from a step of a trajectory's events.jsonl, as a user does
-- (:lua vim.lsp.buf.definition() on the step's line): what the server answered, and where
-- the window went.
local function run_definition()
  vim.cmd.edit(vim.fn.fnameescape(config.events))
  local events = vim.api.nvim_get_current_buf()
  attached(events, "events.jsonl")
  -- The step lenses show the server has indexed the file.
  lenses_shown(events, "step lenses")
  vim.api.nvim_win_set_cursor(0, { config.step_line + 1, 0 })
  local params = vim.lsp.util.make_position_params(0, "utf-16")
  result.locations = {}
  for _, response in pairs(vim.lsp.buf_request_sync(events, "textDocument/definition", params, TIMEOUT) or {}) do
    for _, location in ipairs(response.result or {}) do
      result.locations[#result.locations + 1] = location
    end
  end
  vim.lsp.buf.definition()
  wait_for("the step's file open", function()
    return vim.api.nvim_get_current_buf() ~= events
  end)
  result.landed = vim.api.nvim_buf_get_name(0)
  result.cursor = vim.api.nvim_win_get_cursor(0)
  result.landed_line = vim.api.nvim_get_current_line()
  result.landed_modified = vim.bo.modified
  result.events_modified = vim.bo[events].modified
  result.ok = true
end

-- A trajectory file the server finds fault with (a schema error, a secret): its stet
-- diagnostics once the one of config.code is there, and whether the buffer stayed unmodified.
local function run_trajectory_diagnostics()
  vim.cmd.edit(vim.fn.fnameescape(config.events))
  local events = vim.api.nvim_get_current_buf()
  attached(events, "events.jsonl")
  wait_for(config.code .. " diagnostic", function()
    return find(stet_diagnostics(events), function(d)
      return d.code == config.code
    end) ~= nil
  end)
  -- What vim.diagnostic shows the user on that line (the float's text, as :lua
  -- vim.diagnostic.open_float() would), and every stet diagnostic of the buffer.
  result.diagnostics = {}
  for _, d in ipairs(stet_diagnostics(events)) do
    d.lsp = nil
    result.diagnostics[#result.diagnostics + 1] = d
  end
  vim.api.nvim_win_set_cursor(0, { config.line + 1, 0 })
  local _, win = vim.diagnostic.open_float({ bufnr = events, scope = "line" })
  if win then
    result.float = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false)
    vim.api.nvim_win_close(win, true)
  end
  result.modified = vim.bo[events].modified
  result.ok = true
end

local scenarios = {
  notes = run_notes,
  import = run_import,
  mark = run_mark,
  graduate = run_graduate,
  upkeep = run_upkeep,
  trajectory = run_trajectory,
  review = run_review,
  sheet = run_sheet,
  definition = run_definition,
  trajectory_diagnostics = run_trajectory_diagnostics,
}
local run = scenarios[config.scenario or "notes"]

vim.api.nvim_create_autocmd("VimEnter", {
  once = true,
  nested = true, -- :edit inside must fire FileType (and so start the client)
  callback = function()
    local ok, err = xpcall(run, debug.traceback)
    if not ok then
      result.ok = false
      result.error = tostring(err)
      local bufnr = vim.fn.bufnr(config.file)
      if bufnr > 0 then
        result.buffer = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
        result.diagnostics = stet_diagnostics(bufnr)
      end
    end
    result.total_ms = math.floor((vim.uv.hrtime() - started) / 1e6)
    finish()
  end,
})
