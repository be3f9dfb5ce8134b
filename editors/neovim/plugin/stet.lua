-- Stet for Neovim 0.11: starts the Stet language server for every file buffer and adds
-- user commands for everything the server offers. Code lenses are not refreshed by
-- Neovim 0.11, so each lens action also has a command here.
if vim.g.loaded_stet then
  return
end
vim.g.loaded_stet = true

if vim.fn.has("nvim-0.11") == 0 then
  vim.notify("stet: Neovim 0.11 or newer is needed", vim.log.levels.WARN)
  return
end

local stet = require("stet")

if vim.g.stet_enable ~= false then
  vim.lsp.enable("stet")

  local group = vim.api.nvim_create_augroup("stet", { clear = true })

  -- vim.lsp.enable() starts clients on FileType; a file Neovim gives no filetype (a name
  -- without extension, say) may still hold margin notes.
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
    group = group,
    callback = function(args)
      vim.schedule(function()
        if vim.api.nvim_buf_is_valid(args.buf) and vim.bo[args.buf].filetype == "" then
          stet.start(args.buf)
        end
      end)
    end,
  })

  -- Neovim 0.11 asks for code lenses only when told to: ask when a buffer is shown or saved.
  vim.api.nvim_create_autocmd({ "LspAttach", "BufEnter", "BufWritePost", "InsertLeave" }, {
    group = group,
    callback = function(args)
      if vim.g.stet_codelens == false then
        return
      end
      if #vim.lsp.get_clients({ bufnr = args.buf, name = "stet", method = "textDocument/codeLens" }) > 0 then
        vim.lsp.codelens.refresh({ bufnr = args.buf })
      end
    end,
  })
end

-- The server's code actions and lenses for the skill route leave the name to the client:
-- ask for it (vim.ui.input) before `stet.graduate` runs. A handler set before is kept.
vim.lsp.commands["stet.graduate"] = vim.lsp.commands["stet.graduate"] or stet.graduate_command

local command = vim.api.nvim_create_user_command

command("StetNote", function(opts)
  stet.add_note(opts.args, nil)
end, { nargs = "+", desc = "Stet: add a style-sheet note anchored at the cursor line" })

command("StetNoteKind", function(opts)
  local kind, text = opts.args:match("^(%S+)%s+(.+)$")
  if not kind then
    vim.notify("stet: usage: :StetNoteKind {kind} {text}", vim.log.levels.ERROR)
    return
  end
  stet.add_note(text, kind)
end, {
  nargs = "+",
  complete = function(arg_lead, cmdline)
    if #vim.split(cmdline, "%s+", { trimempty = false }) > 2 then
      return {}
    end
    return vim.tbl_filter(function(kind)
      return vim.startswith(kind, arg_lead)
    end, stet.kinds)
  end,
  desc = "Stet: add a note of a kind (convention, ruled-out, clarification, markup, note)",
})

command("StetRecord", function()
  stet.record(false)
end, { desc = "Stet: record the margin note on the cursor line to the style sheet" })

command("StetRecordAll", function()
  stet.record(true)
end, { desc = "Stet: record every margin note of this buffer to the style sheet" })

command("StetSheet", function()
  stet.open_sheet()
end, { desc = "Stet: open this branch's style sheet" })

command("StetBrief", function(opts)
  stet.brief(tonumber(opts.args))
end, { nargs = "?", desc = "Stet: show the brief for the next agent run [budget]" })

command("StetList", function()
  stet.list()
end, { desc = "Stet: list the style sheet's entries in the quickfix list" })

command("StetEdit", function(opts)
  local id, text = opts.args:match("^(%S+)%s+(.+)$")
  if not id then
    vim.notify("stet: usage: :StetEdit {id} {text}", vim.log.levels.ERROR)
    return
  end
  stet.edit(id, text)
end, { nargs = "+", desc = "Stet: replace an entry's text" })

command("StetDiscard", function(opts)
  stet.discard(opts.args ~= "" and opts.args or nil)
end, { nargs = "?", desc = "Stet: discard an entry (by id, or the one on the cursor line)" })

command("StetPause", function(opts)
  stet.pause(opts.args ~= "" and opts.args or nil)
end, { nargs = "?", desc = "Stet: refuse new agent and margin entries [until DATE]" })

command("StetResume", function()
  stet.resume()
end, { desc = "Stet: end a pause" })

command("StetImport", function(opts)
  stet.import(opts.args ~= "" and opts.args or nil)
end, {
  nargs = "?",
  complete = "file",
  desc = "Stet: import an agent session into the working trajectory (pick one, or a transcript [path])",
})

command("StetTrajectory", function(opts)
  stet.open_trajectory(opts.args ~= "" and opts.args or nil)
end, {
  nargs = "?",
  complete = function(arg_lead)
    return vim.tbl_filter(function(id)
      return vim.startswith(id, arg_lead)
    end, stet.trajectory_ids())
  end,
  desc = "Stet: open a trajectory's narration [id] (default the working trajectory)",
})

command("StetMark", function(opts)
  local verdict, text = opts.args:match("^(%S+)%s*(.*)$")
  if not verdict or not vim.tbl_contains(stet.verdicts, verdict) then
    vim.notify("stet: usage: :StetMark[!] {wrong|clever|note} [text]", vim.log.levels.ERROR)
    return
  end
  stet.mark(verdict, text ~= "" and text or nil, opts.bang)
end, {
  nargs = "+",
  bang = true,
  complete = function(arg_lead, cmdline)
    if #vim.split(cmdline, "%s+", { trimempty = false }) > 2 then
      return {}
    end
    return vim.tbl_filter(function(verdict)
      return vim.startswith(verdict, arg_lead)
    end, stet.verdicts)
  end,
  desc = "Stet: mark the step at the cursor of a trajectory wrong, clever or with a note (! also adds it to the style sheet)",
})

command("StetReview", function()
  stet.review()
end, { desc = "Stet: the graduation review of the open entries (a code action on a line accepts it)" })

command("StetCapstone", function(opts)
  stet.capstone(opts.args ~= "" and opts.args or nil, opts.bang)
end, {
  nargs = "*",
  bang = true,
  desc = "Stet: commit the working trajectory on top of HEAD [message] (! shows what would be committed)",
})
