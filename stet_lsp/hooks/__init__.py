"""Harness hooks: the brief goes into a new agent session, and a finished session goes into
the target's working trajectory, without the agent being told how (docs/agents.md).

- `claude_code`: merges three hooks into `.claude/settings.local.json` (never the committed
  `settings.json`) and takes exactly them out again.
- `codex`: Codex CLI's `notify` program in `$CODEX_HOME/config.toml`, and this repository's
  consent to imports of Codex turns.
- `run`: what the harnesses run (`stet hooks run …`): fast, never blocking a session,
  always exiting 0; the imports run in a detached worker.
- `repository`: the repository and target of a hook's working folder, read without libgit2
  when HEAD names a branch.
- `files`: Stet's own files for all of this, under `.stet/cache/hooks/` (never committed).
"""
