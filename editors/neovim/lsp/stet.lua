-- The Stet language server, as a Neovim 0.11 `vim.lsp.config` file (the shape nvim-lspconfig
-- uses for `lsp/<name>.lua`). No `filetypes`: every file buffer attaches, whatever its language,
-- because margin notes (`# stet: …`, `// stet(ruled-out): …`) can sit in any comment.
--
-- Override anything with vim.lsp.config("stet", {...}) before the server starts, e.g.
--   vim.lsp.config("stet", { cmd = { "/path/to/venv/bin/stet-lsp" } })

--- Every loaded buffer the client is attached to.
local function attached_buffers(client)
  return vim.tbl_filter(vim.api.nvim_buf_is_loaded, vim.tbl_keys(client.attached_buffers))
end

--- Reads a buffer's file again when it changed on disk and the buffer has no changes of its
--- own ('autoread' on): the server wrote it (the style sheet after a command, a note an agent
--- added with the CLI), and Neovim checks files only on focus or :checktime. With unsaved
--- changes the buffer is left alone: the server merges the disk into it.
---@param bufnr integer
local function reload_if_changed(bufnr)
  local autoread = vim.api.nvim_get_option_value("autoread", { buf = bufnr })
  if autoread == nil then
    autoread = vim.o.autoread
  end
  if autoread and vim.bo[bufnr].buftype == "" and not vim.bo[bufnr].modified then
    pcall(vim.cmd.checktime, bufnr)
  end
end

--- The root of the git repository holding a buffer's file (the nearest folder with `.git`, a
--- folder or, in a worktree or submodule, a file), or nil: the server works on git
--- repositories only, so a file outside one starts no client.
---@param bufnr integer
---@return string?
local function repository_root(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" or name:find("^%a[%w+.-]*://") then
    return nil -- no file, or a URI buffer (health://, fugitive://, …)
  end
  return vim.fs.root(bufnr, { ".git" })
end

--- By a style sheet's URI, the digest the server sent for its next edit ("stet/sheetHolds").
---@type table<string, string>
local sheet_holds = {}

---@type vim.lsp.Config
return {
  cmd = { "stet-lsp" },
  -- A root_dir function rather than root_markers: with markers alone Neovim 0.11 starts a
  -- client with no root for a file in no repository; this calls on_dir only for a repository.
  root_dir = function(bufnr, on_dir)
    local root = repository_root(bufnr)
    if root then
      on_dir(root)
    end
  end,
  -- The server's settings with their defaults (the server's schema, `stet_lsp/server/settings.py`,
  -- which a test checks this table against). The server asks for them with
  -- workspace/configuration, which Neovim answers from `settings`. Change some with
  --   vim.lsp.config("stet", { settings = { stet = { margin = { severity = "information" } } } })
  settings = {
    stet = {
      marker = "stet",
      margin = { removeCommentOnRecord = true, severity = "hint" },
      entries = { severity = "information" },
      brief = { budget = 800 },
      sheet = { ttlDays = 30 },
      gate = { strict = false, envNames = {} },
    },
  },
  -- Neovim 0.11 pulls diagnostics but has no handler for the server asking it to pull again
  -- (nor to refresh code lenses): a note added by a command or by an agent through the CLI
  -- changes no text, so without these it would show only after the next edit.
  capabilities = {
    workspace = {
      diagnostics = { refreshSupport = true },
      codeLens = { refreshSupport = true },
    },
    -- Before each edit of an open style sheet, the server says which text on disk the buffer
    -- is in step with once the edit is applied ("stet/sheetHolds" below).
    experimental = { stetSheetHolds = true },
  },
  handlers = {
    ["workspace/diagnostic/refresh"] = function(_, _, ctx)
      local client = vim.lsp.get_client_by_id(ctx.client_id)
      if client then
        for _, bufnr in ipairs(attached_buffers(client)) do
          reload_if_changed(bufnr)
        end
        for _, bufnr in ipairs(attached_buffers(client)) do
          local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) } }
          client:request("textDocument/diagnostic", params, nil, bufnr)
        end
      end
      return vim.NIL
    end,
    -- Which text on disk a style sheet's buffer is in step with once the edit that follows is
    -- applied (the digest of what the server read and merged into it): saving the buffer
    -- while the file still holds that text is not asked about (require("stet").write_sheet).
    ["stet/sheetHolds"] = function(_, result)
      if type(result) == "table" and type(result.uri) == "string" and type(result.sha256) == "string" then
        sheet_holds[result.uri] = result.sha256
      end
      return vim.NIL
    end,
    ["workspace/applyEdit"] = function(err, result, ctx, config)
      local answer = vim.lsp.handlers["workspace/applyEdit"](err, result, ctx, config)
      local edit = result and result.edit or {}
      local uris = vim.tbl_keys(edit.changes or {})
      for _, change in ipairs(edit.documentChanges or {}) do
        if change.textDocument then
          uris[#uris + 1] = change.textDocument.uri
        end
      end
      for _, uri in ipairs(uris) do
        local holds = sheet_holds[uri]
        sheet_holds[uri] = nil
        local bufnr = vim.uri_to_bufnr(uri)
        if type(answer) == "table" and answer.applied and holds then
          require("stet").merged(bufnr, holds)
        end
      end
      return answer
    end,
    -- The server shows the style sheet, a trajectory's narration at a step, the review: Neovim
    -- shows it in the current window, and fails with E37 when that window's buffer has
    -- unsaved changes that 'hidden' does not keep. Then it opens in a new split instead.
    ["window/showDocument"] = function(err, result, ctx, config)
      local shown_here = type(result) == "table" and not result.external and type(result.uri) == "string"
        and result.takeFocus ~= false and vim.uri_to_bufnr(result.uri) ~= vim.api.nvim_get_current_buf()
      if shown_here and require("stet").window_holds_changes() then
        vim.cmd("split")
      end
      return vim.lsp.handlers["window/showDocument"](err, result, ctx, config)
    end,
    -- Messages that come together (two bad settings at start-up) are one line: Neovim's own
    -- handler shows each on two lines, and asks for Enter.
    ["window/showMessage"] = function(_, result)
      require("stet").server_message(result)
    end,
    ["workspace/codeLens/refresh"] = function(_, _, ctx)
      local client = vim.lsp.get_client_by_id(ctx.client_id)
      if client and vim.g.stet_codelens ~= false then
        for _, bufnr in ipairs(attached_buffers(client)) do
          vim.lsp.codelens.refresh({ bufnr = bufnr })
        end
      end
      return vim.NIL
    end,
  },
}
