-- Stet for Neovim 0.11: enables the Stet language server for every file buffer and defines
-- `:Stet {subcommand}` and the <Plug>(Stet…) mappings. Nothing else runs at startup: the
-- plugin's Lua (lua/stet/) is required when a command, a mapping or a lens runs.
-- Code lenses are not refreshed by Neovim 0.11, so every lens action is also a subcommand or a
-- code action.
if vim.g.loaded_stet then
  return
end
vim.g.loaded_stet = true

if vim.fn.has("nvim-0.11") == 0 then
  vim.notify("stet: Neovim 0.11 or newer is needed", vim.log.levels.WARN)
  return
end

if vim.g.stet_enable ~= false then
  vim.lsp.enable("stet")

  local group = vim.api.nvim_create_augroup("stet", { clear = true })

  -- vim.lsp.enable() starts clients on FileType; a file Neovim gives no filetype (a name
  -- without extension, say) may still hold margin notes. vim.lsp.enable() also skips a server
  -- that is not executable, or whose `cmd` is not a list, without a word: say so (once a
  -- session) for a repository's file.
  local missing_warned = false
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
    group = group,
    callback = function(args)
      vim.schedule(function()
        if not vim.api.nvim_buf_is_valid(args.buf) or vim.bo[args.buf].buftype ~= "" then
          return
        end
        local config = vim.lsp.config.stet
        local cmd = config and config.cmd
        local startable = type(cmd) == "function"
          or (type(cmd) == "table" and type(cmd[1]) == "string" and vim.fn.executable(cmd[1]) == 1)
        for _, word in ipairs(type(cmd) == "table" and cmd or {}) do
          startable = startable and type(word) == "string"
        end
        -- Neovim skips a configuration whose `filetypes` is not a list, saying so only in its log.
        startable = startable and (config == nil or config.filetypes == nil or type(config.filetypes) == "table")
        if config and not startable then
          if not missing_warned then
            missing_warned = require("stet").warn_missing(args.buf)
          end
        elseif vim.bo[args.buf].filetype == "" then
          require("stet").start(args.buf)
        end
      end)
    end,
  })

  -- Neovim 0.11 keeps the server's work-done progress (a long import, a capstone) but shows it
  -- nowhere: echo it, without adding it to the message history.
  vim.api.nvim_create_autocmd("LspProgress", {
    group = group,
    pattern = { "begin", "report" },
    callback = function(args)
      local client = vim.lsp.get_client_by_id(args.data.client_id)
      local value = args.data.params.value
      if not client or client.name ~= "stet" or type(value) ~= "table" then
        return
      end
      local text = value.title or "Stet"
      if value.message then
        text = text .. ": " .. value.message
      end
      if value.percentage then
        text = text .. (" (%d%%)"):format(value.percentage)
      end
      vim.api.nvim_echo({ { text } }, false, {})
    end,
  })

  -- A style sheet written on disk while a buffer holds it (an agent's note through the CLI):
  -- the current target's sheet with unsaved changes gets the disk's entries merged in by the
  -- server, so the buffer is kept (Neovim would offer W12's "Load File", which drops the
  -- unsaved lines); one without unsaved changes is read again. Any other case (another
  -- target's sheet, which the server does not merge into; no server; a deleted file) is
  -- Neovim's own question.
  vim.api.nvim_create_autocmd("FileChangedShell", {
    group = group,
    pattern = "*/.stet/cache/sheets/*.md",
    callback = function(args)
      if vim.v.fcs_reason == "deleted" then
        vim.v.fcs_choice = "ask"
      elseif not vim.bo[args.buf].modified then
        vim.v.fcs_choice = "reload"
      else
        vim.v.fcs_choice = require("stet").merges_into(args.buf) and "" or "ask"
      end
    end,
  })

  -- Saving that buffer: Neovim would ask "The file has been changed since reading it" (the
  -- disk holds the write the server merged in, and Neovim takes a file's time again only by
  -- reading it). While the file is the one the server last merged into the buffer, it is
  -- written as `:w!` would; a file changed since (not merged yet), another target's sheet or
  -- a write to another file keeps Neovim's question.
  vim.api.nvim_create_autocmd("BufWriteCmd", {
    group = group,
    pattern = "*/.stet/cache/sheets/*.md",
    nested = true, -- the write's own BufWritePre/BufWritePost (the server's didSave) run
    callback = function(args)
      require("stet").write_sheet(args.buf, args.file)
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
vim.lsp.commands["stet.graduate"] = vim.lsp.commands["stet.graduate"]
  or function(command, ctx)
    require("stet").graduate_command(command, ctx)
  end

-- The margin notes' code actions: say what was recorded, as :Stet record does.
vim.lsp.commands["stet.margin.record"] = vim.lsp.commands["stet.margin.record"]
  or function(command, ctx)
    require("stet").record_command(command, ctx)
  end

-- The verdict code actions of a trajectory's file: say what was marked, as :Stet mark does.
vim.lsp.commands["stet.step.mark"] = vim.lsp.commands["stet.step.mark"]
  or function(command, ctx)
    require("stet").mark_command(command, ctx)
  end

-- The graduation review's code actions: read the review again once the server rewrote it.
vim.lsp.commands["stet.graduation.apply"] = vim.lsp.commands["stet.graduation.apply"]
  or function(command, ctx)
    require("stet").apply_review_command(command, ctx)
  end

vim.api.nvim_create_user_command("Stet", function(opts)
  require("stet.commands").run(opts)
end, {
  nargs = "*", -- :Stet alone says which subcommands there are
  bang = true,
  complete = function(lead, cmdline)
    return require("stet.commands").complete(lead, cmdline)
  end,
  desc = "Stet: :Stet {subcommand} [args] (see :help :Stet)",
})

-- <Plug> mappings (no default keys): map them yourself, e.g.
--   vim.keymap.set("n", "<leader>sn", "<Plug>(StetNote)")
local function plug(name, rhs, desc)
  vim.keymap.set("n", "<Plug>(" .. name .. ")", rhs, { desc = "Stet: " .. desc })
end

plug("StetNote", function()
  require("stet").ask_note()
end, "add a note anchored at the cursor line (asks for the text)")
plug("StetRecord", function()
  require("stet").record(false)
end, "record the margin note on the cursor line")
plug("StetRecordAll", function()
  require("stet").record(true)
end, "record every margin note of the buffer")
plug("StetGraduate", function()
  require("stet").graduate(nil, nil)
end, "graduate the entry under the cursor (pick the route)")
plug("StetList", function()
  require("stet").list()
end, "the style sheet's entries in the quickfix list")
plug("StetSheet", function()
  require("stet").open_sheet()
end, "open the style sheet")
plug("StetSteps", function()
  require("stet").steps(nil)
end, "the working trajectory's steps in the quickfix list")
plug("StetMarkWrong", function()
  require("stet").mark("wrong", nil, false)
end, "mark the step at the cursor wrong")
plug("StetMarkClever", function()
  require("stet").mark("clever", nil, false)
end, "mark the step at the cursor clever")
plug("StetMarkNote", function()
  require("stet").ask_mark_note()
end, "mark the step at the cursor with a note (asks for the text)")
