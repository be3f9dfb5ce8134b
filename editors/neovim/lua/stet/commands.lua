-- The subcommands of `:Stet {subcommand} [args]` (see `:help :Stet`): each runs a function of
-- lua/stet/init.lua, and completes its arguments. Loaded on the first `:Stet` or completion.
local stet = require("stet")

local M = {}

local function usage(text)
  vim.notify("stet: usage: :Stet " .. text, vim.log.levels.ERROR)
end

--- The candidates starting with `lead`.
local function matching(candidates, lead)
  return vim.tbl_filter(function(candidate)
    return vim.startswith(candidate, lead)
  end, candidates)
end

--- `args` (what follows the subcommand) as its first word and the rest.
local function first_word(args)
  local word, rest = args:match("^(%S+)%s*(.-)%s*$")
  return word, rest or ""
end

local function optional(args)
  return args ~= "" and args or nil
end

---@class stet.Subcommand
---@field run fun(args: string, opts: table) `args`: the text after the subcommand; `opts`: :command's
---@field complete? fun(lead: string, words: string[], cmdline: string): string[] `words`: the arguments before `lead`

---@type table<string, stet.Subcommand>
M.subcommands = {
  note = {
    -- :Stet note [{kind}] {text}
    run = function(args)
      local kind, text = first_word(args)
      if kind and vim.tbl_contains(stet.kinds, kind) then
        if text == "" then
          return usage("note " .. kind .. " {text} (the note's text after its kind)")
        end
        stet.add_note(text, kind)
      elseif args ~= "" then
        stet.add_note(args, nil)
      else
        usage("note [kind] {text}")
      end
    end,
    complete = function(lead, words)
      return #words == 0 and matching(stet.kinds, lead) or {}
    end,
  },
  record = {
    -- :Stet record [all]
    run = function(args)
      if args ~= "" and args ~= "all" then
        return usage("record [all] (the note on the cursor line, or all of the buffer's)")
      end
      stet.record(args == "all")
    end,
    complete = function(lead, words)
      return #words == 0 and matching({ "all" }, lead) or {}
    end,
  },
  sheet = {
    run = function(args)
      if args ~= "" then
        return usage("sheet (it takes no arguments)")
      end
      stet.open_sheet()
    end,
  },
  brief = {
    -- :Stet brief [budget]
    run = function(args)
      local budget = tonumber(args:match("^%d+$"))
      if args ~= "" and not (budget and budget > 0) then
        return usage("brief [budget] (a budget is a whole number of tokens, 1 or more)")
      end
      stet.brief(budget)
    end,
  },
  list = {
    run = function(args)
      if args ~= "" then
        return usage("list (it takes no arguments)")
      end
      stet.list()
    end,
  },
  edit = {
    -- :Stet edit {id} {text}
    run = function(args)
      local id, text = first_word(args)
      if not id or text == "" then
        return usage("edit {id} {text}")
      end
      stet.edit(id, text)
    end,
    complete = function(lead, words)
      return #words == 0 and matching(stet.entry_ids(), lead) or {}
    end,
  },
  discard = {
    -- :Stet discard [id]
    run = function(args)
      stet.discard(optional(args))
    end,
    complete = function(lead, words)
      return #words == 0 and matching(stet.entry_ids(), lead) or {}
    end,
  },
  pause = {
    -- :Stet pause [until]
    run = function(args)
      stet.pause(optional(args))
    end,
  },
  resume = {
    run = function(args)
      if args ~= "" then
        return usage("resume (it takes no arguments)")
      end
      stet.resume()
    end,
  },
  import = {
    -- :Stet import [path]
    run = function(args)
      stet.import(optional(args))
    end,
    complete = function(lead, _, cmdline)
      -- The path is all the text after `import`, spaces included; Vim replaces only `lead`
      -- (what follows the last space) with what is chosen, so each name is offered from there.
      local typed = cmdline:match("%simport%s+(.*)$") or lead
      local before = typed:sub(1, #typed - #lead)
      local names = {}
      for _, name in ipairs(vim.fn.getcompletion(typed, "file")) do
        if vim.startswith(name, before) then
          names[#names + 1] = name:sub(#before + 1)
        end
      end
      return names
    end,
  },
  trajectory = {
    -- :Stet trajectory [id] [step]
    run = function(args)
      local id, step = first_word(args)
      if step ~= "" and not step:match("^%d+$") then
        return usage("trajectory [id] [step] (a step is a number)")
      end
      stet.open_trajectory(id, nil, tonumber(step))
    end,
    complete = function(lead, words)
      return #words == 0 and matching(stet.trajectory_ids(), lead) or {}
    end,
  },
  steps = {
    -- :Stet steps [id]
    run = function(args)
      stet.steps(optional(args))
    end,
    complete = function(lead, words)
      return #words == 0 and matching(stet.trajectory_ids(), lead) or {}
    end,
  },
  mark = {
    -- :Stet[!] mark {wrong|clever|note} [text]
    run = function(args, opts)
      local verdict, text = first_word(args)
      if not verdict or not vim.tbl_contains(stet.verdicts, verdict) then
        return usage("mark {wrong|clever|note} [text] (:Stet! mark also adds it to the style sheet)")
      end
      stet.mark(verdict, optional(text), opts.bang)
    end,
    complete = function(lead, words)
      return #words == 0 and matching(stet.verdicts, lead) or {}
    end,
  },
  graduate = {
    -- :Stet graduate [trajectory|skill|discard] [id]
    run = function(args)
      local route, id = first_word(args)
      if route and not vim.tbl_contains(stet.routes, route) then
        return usage("graduate [trajectory|skill|discard] [id]")
      end
      stet.graduate(route, optional(id))
    end,
    complete = function(lead, words)
      if #words == 0 then
        return matching(stet.routes, lead)
      end
      return #words == 1 and matching(stet.entry_ids(), lead) or {}
    end,
  },
  review = {
    run = function(args)
      if args ~= "" then
        return usage("review (it takes no arguments)")
      end
      stet.review()
    end,
  },
  capstone = {
    -- :Stet[!] capstone [--dry-run] [--target {name}] [message]
    run = function(args, opts)
      local dry_run, target = opts.bang, nil
      local word, rest = first_word(args)
      while word == "--dry-run" or word == "--target" or (word and vim.startswith(word, "--target=")) do
        if word == "--dry-run" then
          dry_run = true
        elseif word == "--target" then
          word, rest = first_word(rest)
          if not word then
            return usage("capstone [--dry-run] [--target {name}] [message] (the name of a deleted branch or a left detached HEAD; <Tab> lists them)")
          end
          target = word
        else
          target = word:sub(#"--target=" + 1)
        end
        args = rest
        word, rest = first_word(args)
      end
      stet.capstone(optional(args), dry_run, target)
    end,
    complete = function(lead, words)
      if words[#words] == "--target" then
        return matching(stet.capstone_targets(), lead)
      end
      -- Options come before the message.
      for index, word in ipairs(words) do
        local option = word == "--dry-run" or word == "--target" or vim.startswith(word, "--target=")
        if not option and words[index - 1] ~= "--target" then
          return {}
        end
      end
      local options = vim.tbl_filter(function(option)
        return not vim.tbl_contains(words, option)
      end, { "--dry-run", "--target" })
      return matching(options, lead)
    end,
  },
}

--- The subcommands' names, sorted.
---@return string[]
function M.names()
  local names = vim.tbl_keys(M.subcommands)
  table.sort(names)
  return names
end

--- Runs `:Stet {subcommand} [args]` (`opts` as nvim_create_user_command gives them).
---@param opts table
function M.run(opts)
  local name, args = first_word(opts.args)
  local subcommand = name and M.subcommands[name]
  if not subcommand then
    local known = table.concat(M.names(), ", ")
    vim.notify(
      ("stet: %s; one of %s"):format(name and ("unknown subcommand " .. name) or "a subcommand is needed", known),
      vim.log.levels.ERROR
    )
    return
  end
  subcommand.run(args, opts)
end

--- Completion of `:Stet …`: the subcommands, then each one's arguments.
---@param lead string
---@param cmdline string
---@return string[]
function M.complete(lead, cmdline)
  local words = vim.split(cmdline, "%s+", { trimempty = true })
  -- The command's own word ("Stet", "Stet!" or an abbreviation such as "Ste"), after any
  -- modifiers (`:vertical Stet brief`, `:silent Stet …`); the word being typed is `lead`
  -- (empty after a space).
  for index, word in ipairs(words) do
    local name = word:gsub("!$", "")
    if #name >= 3 and vim.startswith("Stet", name) then
      words = vim.list_slice(words, index)
      break
    end
  end
  table.remove(words, 1)
  if lead ~= "" then
    table.remove(words)
  end
  if #words == 0 then
    return matching(M.names(), lead)
  end
  local subcommand = M.subcommands[words[1]]
  if not subcommand or not subcommand.complete then
    return {}
  end
  return subcommand.complete(lead, vim.list_slice(words, 2), cmdline)
end

return M
