// Stet for VS Code: starts the Stet language server (`stet-lsp`) for every file and adds
// commands and comment threads that call the server's commands. Diagnostics, code actions,
// code lenses and hovers come from the server itself, and so does reading the `stet.*`
// settings: it asks for them (workspace/configuration) and registers for their changes.
import * as vscode from "vscode";
import {
  ExecuteCommandRequest,
  ExecuteCommandSignature,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
  TransportKind,
} from "vscode-languageclient/node";

const KINDS = ["note", "convention", "ruled-out", "clarification", "markup"] as const;

/** The target a command ran on: every command result names it (docs/cli.md). */
interface Target {
  kind: string;
  name: string;
  label: string;
  key: string;
}

/** A style-sheet entry as the server returns it (docs/cli.md, "JSON output"). */
interface Entry {
  id: string;
  kind: string;
  author: string;
  status: string;
  text: string;
  created?: string;
  anchor?: { path: string; line: number; text?: string } | null;
  /** null without an anchor, else the 1-based line where the anchored text is now. */
  placement?: { line: number | null; lost: boolean } | null;
}

/** What `stet.note.add`, `stet.note.edit`, `stet.note.discard` and `stet.note.show` return. */
interface EntryResult {
  version: number;
  target: Target;
  entry: Entry;
}

/** What `stet.brief` returns. */
interface BriefResult {
  version: number;
  target: Target;
  text: string;
  included: number;
  left_out: number;
  tokens: number;
}

/** A session `stet.trajectory.sessions` lists (as `stet trajectory sessions --json`). */
interface SessionRow {
  harness: string;
  session: string;
  started: string | null;
  first_prompt: string | null;
  size: number;
  path: string;
  imported: boolean;
}

/** What `stet.trajectory.import` returns (as `stet trajectory import --json`). */
interface ImportResult {
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
}

/** What `stet.step.mark` returns: the verdict as recorded, and the style-sheet entry made from it. */
interface MarkResult {
  version: number;
  verdict: { trajectory?: string; step?: number; verdict?: string; text?: string };
  entry?: Entry | null;
}

/** What `stet.graduate` returns (as `stet graduate --json`). */
interface GraduateResult {
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
interface CapstoneResult {
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

const VERDICTS = [
  { label: "wrong", description: "the step went wrong" },
  { label: "clever", description: "the step is worth repeating" },
  { label: "note", description: "a remark on the step (needs a text)" },
] as const;

let client: LanguageClient | undefined;
/** The client's start while it runs: commands wait for it (the palette is usable earlier). */
let starting: Promise<void> | undefined;
let output: vscode.LogOutputChannel | undefined;
/** Where a capstone's result is written (made on first use). */
let capstoneOutput: vscode.OutputChannel | undefined;

function createClient(): LanguageClient {
  const config = vscode.workspace.getConfiguration("stet");
  const command = config.get<string>("server.path", "stet-lsp") || "stet-lsp";
  const args = config.get<string[]>("server.args", []);
  const serverOptions: ServerOptions = {
    run: { command, args, transport: TransportKind.stdio },
    debug: { command, args, transport: TransportKind.stdio },
  };
  const clientOptions: LanguageClientOptions = {
    // Every file, whatever its language: margin notes live in any comment syntax.
    documentSelector: [{ scheme: "file" }, { scheme: "untitled" }],
    outputChannel: output,
    // Server commands run from code actions and lenses (and the palette's Stet: Commit
    // Trajectory, which is the server's own stet.capstone) pass through here: where the
    // server leaves a choice to the client, the client asks, then sends the answer.
    middleware: { executeCommand: interceptCommand },
  };
  return new LanguageClient("stet", "Stet", serverOptions, clientOptions);
}

async function startClient(): Promise<void> {
  client = createClient();
  const start = client.start();
  starting = start;
  try {
    await start;
  } catch (error) {
    const path = vscode.workspace.getConfiguration("stet").get<string>("server.path");
    void vscode.window.showErrorMessage(
      `Stet: could not start the language server '${path}': ${String(error)}. ` +
        "Install it (pip install stet-lsp) or set stet.server.path.",
    );
  } finally {
    if (starting === start) {
      starting = undefined;
    }
  }
}

async function stopClient(): Promise<void> {
  const running = client;
  client = undefined;
  if (running && running.state !== State.Stopped) {
    await running.stop();
  }
}

/** Runs one of the server's commands (workspace/executeCommand with one object argument). */
async function execute<T>(command: string, argument: Record<string, unknown>): Promise<T> {
  // Failing to start was reported when it happened.
  await starting?.catch(() => undefined);
  if (!client || client.state !== State.Running) {
    throw new Error("the Stet language server is not running");
  }
  return (await client.sendRequest(ExecuteCommandRequest.type, {
    command,
    arguments: [argument],
  })) as T;
}

/**
 * The `uri` argument of a command about the repository: the active editor's file, else the
 * first workspace folder. Undefined when there is neither (an untitled editor in an empty
 * window): the server then takes the workspace's repository if there is only one.
 */
function currentUri(): vscode.Uri | undefined {
  const active = vscode.window.activeTextEditor?.document.uri;
  if (active?.scheme === "file") {
    return active;
  }
  return vscode.workspace.workspaceFolders?.find((folder) => folder.uri.scheme === "file")?.uri;
}

/** `{uri}` for currentUri(), or no argument at all. */
function repositoryArgument(): Record<string, unknown> {
  const uri = currentUri();
  return uri ? { uri: uri.toString() } : {};
}

function reportFailure(what: string, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  void vscode.window.showErrorMessage(`Stet: ${what} failed: ${message}`);
}

async function addNote(args?: { text?: string; kind?: string; line?: number }): Promise<Entry | undefined> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showWarningMessage("Stet: open a file to add a note to.");
    return undefined;
  }
  const text =
    args?.text ??
    (await vscode.window.showInputBox({
      title: "Stet: Add Note at Cursor",
      prompt: `A note for the style sheet, anchored at line ${editor.selection.active.line + 1}`,
      ignoreFocusOut: true,
    }));
  if (!text) {
    return undefined;
  }
  const kind =
    args?.kind ??
    (await vscode.window.showQuickPick([...KINDS], { title: "Kind of note", ignoreFocusOut: true }));
  if (!kind) {
    return undefined;
  }
  try {
    const { entry } = await execute<EntryResult>("stet.note.add", {
      uri: editor.document.uri.toString(),
      text,
      kind,
      line: args?.line ?? editor.selection.active.line,
    });
    vscode.window.setStatusBarMessage(`Stet: note ${entry.id} added`, 4000);
    return entry;
  } catch (error) {
    reportFailure("adding the note", error);
    return undefined;
  }
}

async function openSheet(): Promise<void> {
  try {
    const result = await execute<{ uri: string; shown?: boolean }>(
      "stet.sheet.open",
      repositoryArgument(),
    );
    if (!result.shown) {
      await vscode.window.showTextDocument(vscode.Uri.parse(result.uri));
    }
  } catch (error) {
    reportFailure("opening the style sheet", error);
  }
}

async function showBrief(): Promise<void> {
  try {
    // The budget is the server's `stet.brief.budget` setting.
    const brief = await execute<BriefResult>("stet.brief", repositoryArgument());
    const document = await vscode.workspace.openTextDocument({
      language: "markdown",
      content: brief.text,
    });
    await vscode.window.showTextDocument(document, { preview: true });
  } catch (error) {
    reportFailure("the brief", error);
  }
}

async function recordMarginNotes(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showWarningMessage("Stet: open a file with margin notes first.");
    return;
  }
  try {
    await execute("stet.margin.record", { uri: editor.document.uri.toString(), all: true });
  } catch (error) {
    reportFailure("recording the margin notes", error);
  }
}

// -- trajectories: import an agent session, open it, mark its steps ----------------------------

function formatSize(size: number): string {
  for (const unit of ["B", "KB", "MB"]) {
    if (size < 1000) {
      return unit === "B" ? `${size} B` : `${size.toFixed(1)} ${unit}`;
    }
    size /= 1000;
  }
  return `${size.toFixed(1)} GB`;
}

/** One line about an import, from the server's result. */
function importMessage(result: ImportResult): string {
  const where = `${result.events} events ${result.changed ? "imported into" : "in"} ${result.folder}`;
  if (!result.changed) {
    return `${result.format} session ${result.session.slice(0, 8)} already imported (${where})`;
  }
  const rules = Object.entries(result.redaction ?? {});
  const total = rules.reduce((sum, [, count]) => sum + count, 0);
  const redacted = total
    ? `redacted ${total} (${rules.map(([rule, count]) => `${rule} ${count}`).join(", ")})`
    : "nothing redacted";
  const problems = result.problems?.length ? `, ${result.problems.length} problem(s)` : "";
  return `${where}, ${redacted}${problems}`;
}

async function importSession(args?: { path?: string } | string): Promise<ImportResult | undefined> {
  const repository = repositoryArgument();
  let path = typeof args === "string" ? args : args?.path;
  try {
    if (!path) {
      const { sessions } = await execute<{ sessions: SessionRow[] }>(
        "stet.trajectory.sessions",
        repository,
      );
      if (!sessions.length) {
        void vscode.window.showInformationMessage(
          "Stet: no agent sessions found for this repository (Claude Code, Codex, Gemini CLI, aider).",
        );
        return undefined;
      }
      const picked = await vscode.window.showQuickPick(
        sessions.map((row) => ({
          label: [row.harness, (row.started ?? "").slice(0, 16).replace("T", " "), row.first_prompt ?? ""]
            .filter(Boolean)
            .join(" · "),
          description: [formatSize(row.size), row.imported ? "imported" : ""].filter(Boolean).join(" · "),
          detail: row.path,
          row,
        })),
        { title: "Stet: Import Agent Session", placeHolder: "an agent session of this repository", ignoreFocusOut: true },
      );
      if (!picked) {
        return undefined;
      }
      path = picked.row.path;
    }
    // The server reports work-done progress for a long import.
    const result = await execute<ImportResult>("stet.trajectory.import", { ...repository, path });
    void vscode.window
      .showInformationMessage(`Stet: ${importMessage(result)}`, "Open Trajectory")
      .then((choice) => (choice ? openTrajectory({ id: result.trajectory }) : undefined));
    return result;
  } catch (error) {
    reportFailure("importing the agent session", error);
    return undefined;
  }
}

async function openTrajectory(args?: { id?: string; file?: string }): Promise<void> {
  const argument: Record<string, unknown> = { ...repositoryArgument() };
  if (args?.id) {
    argument.id = args.id;
  }
  if (args?.file) {
    argument.file = args.file;
  }
  try {
    // The server shows the file itself (window/showDocument) when it can.
    const result = await execute<{ uri: string; shown?: boolean }>("stet.trajectory.open", argument);
    if (!result.shown) {
      await vscode.window.showTextDocument(vscode.Uri.parse(result.uri));
    }
  } catch (error) {
    reportFailure("opening the trajectory", error);
  }
}

/** A trajectory's events.jsonl or narration.md (the working one under .stet/cache/, or a kept one). */
const TRAJECTORY_FILE = /[\\/]\.stet[\\/](?:cache[\\/])?trajectories[\\/][^\\/]+[\\/](?:events\.jsonl|narration\.md)$/;

async function markStep(args?: { verdict?: string; text?: string; toSheet?: boolean }): Promise<MarkResult | undefined> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.uri.scheme !== "file" || !TRAJECTORY_FILE.test(editor.document.uri.fsPath)) {
    void vscode.window.showWarningMessage(
      "Stet: open a trajectory (Stet: Open Trajectory) and put the cursor on a step first.",
    );
    return undefined;
  }
  const line = editor.selection.active.line;
  const verdict =
    args?.verdict ??
    (
      await vscode.window.showQuickPick([...VERDICTS], {
        title: `Stet: Mark Step (line ${line + 1})`,
        placeHolder: "verdict on the step at the cursor",
        ignoreFocusOut: true,
      })
    )?.label;
  if (!verdict) {
    return undefined;
  }
  let text = args?.text;
  if (text === undefined && !args?.verdict) {
    text = await vscode.window.showInputBox({
      title: `Stet: Mark Step ${verdict}`,
      prompt: verdict === "note" ? "The note on this step" : "What about this step (optional)",
      ignoreFocusOut: true,
    });
    if (text === undefined) {
      return undefined;
    }
  }
  let toSheet = args?.toSheet;
  if (toSheet === undefined && !args?.verdict) {
    const where = await vscode.window.showQuickPick(
      [
        { label: "Mark the step", toSheet: false },
        { label: "Mark the step and add it to the style sheet", description: "for the next agent run", toSheet: true },
      ],
      { title: `Stet: Mark Step ${verdict}`, ignoreFocusOut: true },
    );
    if (!where) {
      return undefined;
    }
    toSheet = where.toSheet;
  }
  const argument: Record<string, unknown> = { uri: editor.document.uri.toString(), line, verdict };
  if (text) {
    argument.text = text;
  }
  if (toSheet) {
    argument.toSheet = true;
  }
  try {
    // The server finds the step at that line of the file.
    const result = await execute<MarkResult>("stet.step.mark", argument);
    const step = result.verdict?.step;
    const sheet = result.entry ? `; style sheet entry ${result.entry.id} added` : "";
    vscode.window.setStatusBarMessage(
      `Stet: step ${step ?? "?"} marked ${result.verdict?.verdict ?? verdict}${sheet}`,
      6000,
    );
    return result;
  } catch (error) {
    reportFailure("marking the step", error);
    return undefined;
  }
}

// -- graduation: a skill's name, the review, the capstone -----------------------------------

/** A skill's name as the Agent Skills format has it: lowercase letters, digits and single
 * hyphens inside, 1 to 64 characters. The message, or undefined when the name is good. */
function skillNameProblem(name: string): string | undefined {
  if (!name.length || name.length > 64) {
    return "1 to 64 characters";
  }
  if (!/^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(name)) {
    return "lowercase letters, digits and hyphens only, no hyphen at either end nor two in a row";
  }
  return undefined;
}

/** The middleware for server commands (workspace/executeCommand). */
async function interceptCommand(command: string, args: unknown[], next: ExecuteCommandSignature): Promise<unknown> {
  if (command === "stet.graduate") {
    return graduate(args, next);
  }
  if (command === "stet.capstone" && args.length === 0) {
    return capstone();
  }
  return next(command, args);
}

/** `stet.graduate`: the skill route without a name asks for one, offering `proposedName`. */
async function graduate(args: unknown[], next: ExecuteCommandSignature): Promise<unknown> {
  const [argument] = args;
  if (
    typeof argument !== "object" ||
    argument === null ||
    (argument as { route?: unknown }).route !== "skill" ||
    (argument as { skill?: unknown }).skill !== undefined
  ) {
    return next("stet.graduate", args);
  }
  const request = argument as { id?: string; proposedName?: string };
  const skill = await vscode.window.showInputBox({
    title: `Stet: Propose entry ${request.id ?? ""} as a skill`,
    prompt: "The skill's name (.stet/skills/NAME/SKILL.md)",
    value: request.proposedName ?? "",
    ignoreFocusOut: true,
    validateInput: (name) => skillNameProblem(name),
  });
  if (skill === undefined) {
    return undefined; // Escape: nothing runs
  }
  const result = (await next("stet.graduate", [{ ...request, skill }, ...args.slice(1)])) as
    | GraduateResult
    | undefined;
  if (result?.skill) {
    const state = result.staged.length ? "staged" : "unchanged";
    vscode.window.setStatusBarMessage(
      `Stet: entry ${result.entry.id} into the skill ${result.skill.name} (${result.skill.path}, ${state})`,
      6000,
    );
  }
  return result;
}

async function graduationReview(): Promise<void> {
  try {
    // The server writes the review and shows it (window/showDocument).
    const result = await execute<{ uri: string; shown?: boolean; entries: number }>(
      "stet.graduation.review",
      repositoryArgument(),
    );
    if (!result.shown) {
      await vscode.window.showTextDocument(vscode.Uri.parse(result.uri));
    }
    vscode.window.setStatusBarMessage(
      `Stet: ${result.entries} open entr${result.entries === 1 ? "y" : "ies"} to review (Ctrl+. on a line accepts it)`,
      6000,
    );
  } catch (error) {
    reportFailure("the graduation review", error);
  }
}

/** A capstone's result as `stet capstone` prints it. */
function capstoneText(result: CapstoneResult): string {
  const where = result.branch ?? "detached HEAD";
  if (!result.changed && !result.dry_run) {
    return `trajectory ${result.trajectory} is already committed; nothing to do\n`;
  }
  const lines = [
    result.dry_run
      ? `would commit trajectory ${result.trajectory} on top of ${result.parent.slice(0, 12)} (${where}):`
      : `committed trajectory ${result.trajectory} as ${(result.commit ?? "").slice(0, 12)} on ${where}:`,
    ...result.paths.map((change) => `  ${change.status.padEnd(8)} ${change.path}`),
  ];
  if (result.supersedes) {
    lines.push(`  follows ${result.supersedes.trajectory} (${result.supersedes.commit.slice(0, 12)})`);
  }
  const rules = Object.entries(result.redaction ?? {});
  if (rules.length) {
    lines.push(`redacted: ${rules.map(([rule, count]) => `${rule} ${count}`).join(", ")}`);
  }
  lines.push("message:", ...result.message.replace(/\n+$/, "").split("\n").map((line) => `  ${line}`.trimEnd()));
  if (result.archived) {
    lines.push(`working trajectory archived to ${result.archived}`);
  }
  lines.push(...(result.warnings ?? []).map((warning) => `warning: ${warning}`));
  return lines.join("\n") + "\n";
}

/** Stet: Commit Trajectory (Capstone): the palette's run of the server's `stet.capstone`. */
async function capstone(): Promise<CapstoneResult | undefined> {
  const message = await vscode.window.showInputBox({
    title: "Stet: Commit Trajectory (Capstone)",
    prompt: "The commit message (empty: the default, 'Trajectory: ID'); the trailers are added",
    ignoreFocusOut: true,
  });
  if (message === undefined) {
    return undefined;
  }
  const mode = await vscode.window.showQuickPick(
    [
      { label: "Dry run", description: "show what would be committed; change nothing", dryRun: true },
      { label: "Commit", description: "commit the working trajectory on top of HEAD", dryRun: false },
    ],
    { title: "Stet: Commit Trajectory (Capstone)", ignoreFocusOut: true },
  );
  if (!mode) {
    return undefined;
  }
  const argument: Record<string, unknown> = { ...repositoryArgument() };
  if (message.trim()) {
    argument.message = message;
  }
  if (mode.dryRun) {
    argument.dryRun = true;
  }
  try {
    // The server reports progress while it runs, and a message with the new commit's id.
    const result = await execute<CapstoneResult>("stet.capstone", argument);
    capstoneOutput ??= vscode.window.createOutputChannel("Stet: Capstone");
    capstoneOutput.appendLine(capstoneText(result));
    if (result.dry_run) {
      capstoneOutput.show(true);
    } else if (!result.changed) {
      void vscode.window.showInformationMessage(`Stet: trajectory ${result.trajectory} is already committed`);
    }
    for (const warning of result.warnings ?? []) {
      void vscode.window.showWarningMessage(`Stet: ${warning}`);
    }
    return result;
  } catch (error) {
    reportFailure("the capstone", error);
    return undefined;
  }
}

// -- comment threads: a reviewer writes a note on a line, it goes to the style sheet -----------

class NoteComment implements vscode.Comment {
  mode = vscode.CommentMode.Preview;
  contextValue = "stet-entry";
  constructor(
    public body: string | vscode.MarkdownString,
    public author: vscode.CommentAuthorInformation,
    public label: string | undefined,
    public readonly entryId: string,
  ) {}
}

function registerComments(context: vscode.ExtensionContext): void {
  const controller = vscode.comments.createCommentController("stet", "Stet style sheet");
  controller.options = {
    prompt: "Add a note to the style sheet",
    placeHolder: "A note for the next agent run (it stays out of the repository)",
  };
  controller.commentingRangeProvider = {
    provideCommentingRanges(document: vscode.TextDocument): vscode.Range[] {
      if (document.uri.scheme !== "file" || document.lineCount === 0) {
        return [];
      }
      return [new vscode.Range(0, 0, document.lineCount - 1, 0)];
    },
  };
  context.subscriptions.push(
    controller,
    vscode.commands.registerCommand("stet.comment.add", async (reply: vscode.CommentReply) => {
      const thread = reply.thread;
      const line = thread.range?.start.line ?? 0;
      try {
        const { entry } = await execute<EntryResult>("stet.note.add", {
          uri: thread.uri.toString(),
          text: reply.text,
          kind: "note",
          line,
        });
        thread.comments = [
          new NoteComment(reply.text, { name: "style sheet" }, `${entry.kind} · ${entry.id}`, entry.id),
        ];
        thread.label = `Stet note ${entry.id}`;
        thread.contextValue = "stet-entry";
        thread.canReply = false;
        thread.collapsibleState = vscode.CommentThreadCollapsibleState.Collapsed;
      } catch (error) {
        reportFailure("adding the note", error);
      }
    }),
    vscode.commands.registerCommand("stet.comment.discard", async (thread: vscode.CommentThread) => {
      const comment = thread.comments[0];
      if (!(comment instanceof NoteComment)) {
        thread.dispose();
        return;
      }
      try {
        await execute("stet.note.discard", { uri: thread.uri.toString(), id: comment.entryId });
        thread.dispose();
      } catch (error) {
        reportFailure("discarding the note", error);
      }
    }),
  );
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel("Stet", { log: true });
  context.subscriptions.push(
    output,
    vscode.commands.registerCommand("stet.addNote", addNote),
    vscode.commands.registerCommand("stet.openSheet", openSheet),
    vscode.commands.registerCommand("stet.showBrief", showBrief),
    vscode.commands.registerCommand("stet.recordMarginNotes", recordMarginNotes),
    vscode.commands.registerCommand("stet.importSession", importSession),
    vscode.commands.registerCommand("stet.openTrajectory", openTrajectory),
    vscode.commands.registerCommand("stet.markStep", markStep),
    vscode.commands.registerCommand("stet.graduationReview", graduationReview),
    // "stet.capstone" is the server's own command (registered by the language client); the
    // middleware asks for its arguments when the palette runs it without any.
    vscode.commands.registerCommand("stet.restartServer", async () => {
      await stopClient();
      await startClient();
    }),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration("stet.server")) {
        await stopClient();
        await startClient();
      }
    }),
    { dispose: () => void stopClient() },
    { dispose: () => capstoneOutput?.dispose() },
  );
  registerComments(context);
  await startClient();
}

export async function deactivate(): Promise<void> {
  await stopClient();
}
