// The shapes of the server's command results (docs/commands.md; as `stet … --json` prints them).

export const KINDS = ["note", "convention", "ruled-out", "clarification", "markup"] as const;

/** The target a command ran on: every command result names it (docs/cli.md). */
export interface Target {
  kind: string;
  name: string;
  label: string;
  key: string;
}

/** A style-sheet entry as the server returns it (docs/cli.md, "JSON output"). */
export interface Entry {
  id: string;
  kind: string;
  author: string;
  status: string;
  text: string;
  /** The UTC time the entry was created; null when the sheet stores none. */
  created?: string | null;
  anchor?: { path: string; line: number; text?: string } | null;
  /** null without an anchor, else the 1-based line where the anchored text is now. */
  placement?: { line: number | null; lost: boolean } | null;
}

/** What `stet.note.add`, `stet.note.edit`, `stet.note.discard` and `stet.note.show` return. */
export interface EntryResult {
  version: number;
  target: Target;
  entry: Entry;
}

/** What `stet.brief` returns. */
export interface BriefResult {
  version: number;
  target: Target;
  text: string;
  included: number;
  left_out: number;
  tokens: number;
}

/** A session `stet.trajectory.sessions` lists (as `stet trajectory sessions --json`). */
export interface SessionRow {
  harness: string;
  session: string;
  started: string | null;
  first_prompt: string | null;
  size: number;
  path: string;
  imported: boolean;
  /** The committed trajectories that hold the session, in part or whole. */
  committed?: string[];
}

/** What `stet.trajectory.import` returns (as `stet trajectory import --json`). */
export interface ImportResult {
  version: number;
  trajectory: string;
  folder: string;
  session: string;
  format: string;
  events: number;
  changed: boolean;
  problems: unknown[];
  redaction: Record<string, number>;
  dropped: Record<string, number>;
  outside_repository?: boolean;
  /** The committed trajectories that hold the session's earlier part, left out here. */
  continues?: string[];
}

/** What `stet.step.mark` returns: the verdict as recorded, and the style-sheet entry made from it. */
export interface MarkResult {
  version: number;
  verdict: { trajectory?: string; step?: number; verdict?: string; text?: string };
  entry?: Entry | null;
}

/** What `stet.graduate` returns (as `stet graduate --json`). */
export interface GraduateResult {
  version: number;
  target: Target;
  entry: Entry;
  route: string;
  trajectory: string | null;
  skill: { name: string; path: string; proposed_name: string; created: boolean; added: boolean } | null;
  edited: boolean;
  staged: string[];
}

/** What `stet.capstone` returns (as `stet capstone --json`). */
export interface CapstoneResult {
  version: number;
  target: Target;
  trajectory: string;
  dry_run: boolean;
  changed: boolean;
  commit: string | null;
  parent: string;
  branch: string | null;
  message: string;
  paths: { path: string; status: string }[];
  supersedes: { trajectory: string; commit: string } | null;
  archived: string | null;
  redaction: Record<string, number>;
  warnings: string[];
}

/** What `stet.note.list` returns. */
export interface ListResult {
  version: number;
  target: Target;
  sheet: string;
  paused: boolean;
  paused_until: string | null;
  entries: Entry[];
}

/** A trajectory `stet.trajectory.list` lists (as `stet trajectory list --json`): a working
 * one's id is its target's key. */
export interface TrajectoryRow {
  id: string;
  working: boolean;
  path: string;
  /** The target's name, as `stet capstone --target` takes it. */
  target: string;
  /** A working trajectory whose branch was deleted, or whose detached HEAD was left: only
   * a capstone with its `target` commits it. */
  orphaned: boolean;
  steps: number;
  started: string | null;
  harnesses: string[];
}

/** A step of the server's trajectory outline (`stet.trajectory.outline`): its 0-based line of
 * events.jsonl, and the path and operation of a file change. */
export interface StepRow {
  type: "step";
  step: number;
  kind: string;
  line: number;
  title: string;
  path?: string | null;
  operation?: string | null;
}

/** A session, turn or subagent of the server's trajectory outline. */
export interface OutlineNodeRow {
  type: "session" | "turn" | "subagent";
  name: string;
  detail: string;
  line: number;
  children: (OutlineNodeRow | StepRow)[];
}

export interface OutlineResult {
  trajectory: string;
  uri: string;
  nodes: OutlineNodeRow[];
}

/** A change to a file whose lines provenance could not place (`stet.provenance.unplaced`). */
export interface UnplacedChange {
  id: string;
  step: number;
  lines: number;
  reason: string;
  /** As the lens words it. */
  title: string;
}

export interface UnplacedResult {
  changes: UnplacedChange[];
  picked: { id: string; step: number; uri: string; shown: boolean; line: number } | null;
}
