// Stet for VS Code: starts the Stet language server (`stet-lsp`) for every file and adds
// commands and comment threads that call the server's commands. Diagnostics, code actions,
// code lenses and hovers come from the server itself, and so does reading the `stet.*`
// settings: it asks for them (workspace/configuration) and registers for their changes.
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import {
  ExecuteCommandRequest,
  ExecuteCommandSignature,
  LanguageClient,
  LanguageClientOptions,
  LSPErrorCodes,
  ResponseError,
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
  /** The UTC time the entry was created; null when the sheet stores none. */
  created?: string | null;
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
  /** The committed trajectories that hold the session, in part or whole. */
  committed?: string[];
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
  outside_repository?: boolean;
  /** The committed trajectories that hold the session's earlier part, left out here. */
  continues?: string[];
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

/** Where the server was found, for the messages. */
interface ServerCommand {
  command: string;
  args: string[];
  /** How it was found: "stet.server.path", "the Python extension's interpreter", ".venv", "PATH". */
  source: string;
}

const SERVER_NAME = "stet-lsp";
const EXE = process.platform === "win32" ? ".exe" : "";
const BIN = process.platform === "win32" ? "Scripts" : "bin";

function isFile(path: string): boolean {
  try {
    return fs.statSync(path).isFile();
  } catch {
    return false;
  }
}

/** `name` looked up on PATH (with PATHEXT's extensions on Windows), or undefined. */
function onPath(name: string): string | undefined {
  if (path.isAbsolute(name) || name.includes("/") || name.includes("\\")) {
    return isFile(name) ? name : undefined;
  }
  const extensions = process.platform === "win32" ? (process.env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";") : [""];
  for (const folder of (process.env.PATH ?? "").split(path.delimiter).filter(Boolean)) {
    for (const extension of ["", ...extensions]) {
      const candidate = path.join(folder, name + extension);
      if (isFile(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}

/** The folder of the Python interpreter the Python extension has selected, when it is there. */
async function pythonExtensionBin(folder: vscode.Uri | undefined): Promise<string | undefined> {
  try {
    const extension = vscode.extensions.getExtension("ms-python.python");
    if (!extension) {
      return undefined;
    }
    const api = (extension.isActive ? extension.exports : await extension.activate()) as
      | {
          environments?: { getActiveEnvironmentPath?: (resource?: vscode.Uri) => { path?: string } | undefined };
          settings?: { getExecutionDetails?: (resource?: vscode.Uri) => { execCommand?: string[] } | undefined };
        }
      | undefined;
    const interpreter =
      api?.environments?.getActiveEnvironmentPath?.(folder)?.path ??
      api?.settings?.getExecutionDetails?.(folder)?.execCommand?.[0];
    if (!interpreter) {
      return undefined;
    }
    // A venv's interpreter is bin/python (Scripts\python.exe): the script is next to it. The
    // path may also be the environment's folder.
    return isFile(interpreter) ? path.dirname(interpreter) : path.join(interpreter, BIN);
  } catch {
    return undefined;
  }
}

/**
 * The server to start: `stet.server.path` when set (other than the bare default name), else
 * the workspace's Python environment (the Python extension's interpreter, a `.venv` or `venv`
 * folder), else `stet-lsp` on PATH. Undefined when none is there.
 */
async function findServer(): Promise<ServerCommand | undefined> {
  const config = vscode.workspace.getConfiguration("stet");
  const configured = (config.get<string>("server.path", "") ?? "").trim();
  const args = config.get<string[]>("server.args", []) ?? [];
  if (configured && configured !== SERVER_NAME) {
    // Set by the user: used as it is (a name is looked up on PATH by the spawn).
    return { command: configured, args, source: "stet.server.path" };
  }
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((folder) => folder.uri.scheme === "file");
  for (const folder of folders.length ? folders : [undefined]) {
    const bin = await pythonExtensionBin(folder?.uri);
    if (bin && isFile(path.join(bin, SERVER_NAME + EXE))) {
      return { command: path.join(bin, SERVER_NAME + EXE), args, source: "the Python extension's interpreter" };
    }
  }
  for (const folder of folders) {
    for (const venv of [".venv", "venv"]) {
      const candidate = path.join(folder.uri.fsPath, venv, BIN, SERVER_NAME + EXE);
      if (isFile(candidate)) {
        return { command: candidate, args, source: venv };
      }
    }
  }
  const found = onPath(SERVER_NAME);
  return found ? { command: found, args, source: "PATH" } : undefined;
}

/** What is wrong with the settings the extension reads itself (the server checks the others),
 * or undefined: settings.json takes values of any type, and a path that is no string or
 * arguments that are not a list of strings would keep the server from starting. */
function serverSettingsProblem(): string | undefined {
  const config = vscode.workspace.getConfiguration("stet");
  const serverPath = config.get<unknown>("server.path");
  if (serverPath !== undefined && serverPath !== null && typeof serverPath !== "string") {
    return `stet.server.path must be a string (the stet-lsp executable), not ${JSON.stringify(serverPath)}`;
  }
  const args = config.get<unknown>("server.args");
  if (args !== undefined && args !== null && !(Array.isArray(args) && args.every((arg) => typeof arg === "string"))) {
    return `stet.server.args must be a list of strings (such as ["--flag"]), not ${JSON.stringify(args)}`;
  }
  return undefined;
}

const INSTALL_MESSAGE =
  "Install it into the workspace's Python environment (pip install stet-lsp, or pip install -e . in a " +
  "checkout of Stet), or set stet.server.path to the stet-lsp executable.";

function createClient(server: ServerCommand): LanguageClient {
  const { command, args } = server;
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
  return new StetClient("stet", "Stet", serverOptions, clientOptions);
}

/** The language client, but a failure to start is reported once, by startClient (which says
 * where the server was found and how to install it): the client's own notification for it is
 * only logged to the Output channel. */
class StetClient extends LanguageClient {
  override error(message: string, data?: unknown, showNotification?: boolean | "force"): void {
    const starting = this.state === State.Starting || this.state === State.StartFailed;
    super.error(message, data, starting ? false : showNotification);
  }
}

async function startClient(): Promise<void> {
  const problem = serverSettingsProblem();
  if (problem) {
    output?.error(problem);
    void vscode.window.showErrorMessage(`Stet: ${problem}: the language server was not started.`);
    return;
  }
  const server = await findServer();
  if (!server) {
    output?.error(`stet-lsp not found (stet.server.path, the Python environment, .venv, PATH)`);
    void vscode.window.showErrorMessage(`Stet: the language server (stet-lsp) was not found. ${INSTALL_MESSAGE}`);
    return;
  }
  output?.info(`starting ${server.command} (from ${server.source})`);
  client = createClient(server);
  const started = client;
  started.onDidChangeState((event) => {
    if (client === started) {
      setServerRunning(event.newState === State.Running);
    }
  });
  const start = client.start();
  starting = start;
  try {
    await start;
  } catch (error) {
    void vscode.window.showErrorMessage(
      `Stet: could not start the language server '${server.command}' (from ${server.source}): ${String(error)}. ` +
        INSTALL_MESSAGE,
    );
  } finally {
    if (starting === start) {
      starting = undefined;
    }
  }
  stetView?.refresh();
}

async function stopClient(): Promise<void> {
  const running = client;
  client = undefined;
  setServerRunning(false);
  const start = starting;
  // A client can only be stopped once it runs: one still starting is waited for, and one
  // that failed to start (or stopped) has nothing to stop.
  await start?.catch(() => undefined);
  if (running?.state === State.Running) {
    await running.stop();
  }
}

/** Sends workspace/executeCommand to the server; a failure is thrown, never shown. */
async function sendCommand(command: string, args: unknown[]): Promise<unknown> {
  // Failing to start was reported when it happened.
  await starting?.catch(() => undefined);
  if (!client || client.state !== State.Running) {
    throw new Error("the Stet language server is not running");
  }
  return client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
}

/** Runs one of the server's commands (workspace/executeCommand with one object argument). */
async function execute<T>(command: string, argument: Record<string, unknown>): Promise<T> {
  const result = (await sendCommand(command, [argument])) as T;
  if (!READ_ONLY.has(command)) {
    // The status bar and the view show the change (the sheet's watcher may lag).
    setTimeout(() => void afterChange(), 100);
  }
  return result;
}

/** Commands that change nothing: no refresh after them. */
const READ_ONLY = new Set([
  "stet.graduate.proposal",
  "stet.note.list",
  "stet.note.show",
  "stet.trajectory.list",
  "stet.trajectory.sessions",
  "stet.trajectory.open",
  "stet.trajectory.outline",
  "stet.brief",
  "stet.sheet.open",
]);

// -- which repository a command is about ---------------------------------------------------------

/** The root of the git repository holding `fsPath` (a file or folder): the nearest folder, it
 * or above it, holding `.git` (a folder, or a file in a worktree or submodule). */
function gitRoot(fsPath: string): string | undefined {
  for (let at = path.resolve(fsPath); ; at = path.dirname(at)) {
    if (fs.existsSync(path.join(at, ".git"))) {
      return at;
    }
    if (path.dirname(at) === at) {
      return undefined;
    }
  }
}

/** Whether `inner` is `outer` or inside it. */
function within(inner: string, outer: string): boolean {
  const relative = path.relative(outer, inner);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

/** The window's folders on disk. */
function fileFolders(): string[] {
  return (vscode.workspace.workspaceFolders ?? [])
    .filter((folder) => folder.uri.scheme === "file")
    .map((folder) => folder.uri.fsPath);
}

/** The git repositories of the window's folders: the one each folder is in, else the ones
 * directly below it (one level down only: a folder holding several checkouts side by side). */
function folderRepositories(): string[] {
  const found: string[] = [];
  for (const folder of fileFolders()) {
    const root = gitRoot(folder);
    if (root) {
      found.push(root);
      continue;
    }
    let children: fs.Dirent[] = [];
    try {
      children = fs.readdirSync(folder, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const child of children) {
      if (child.isDirectory() && fs.existsSync(path.join(folder, child.name, ".git"))) {
        found.push(path.join(folder, child.name));
      }
    }
  }
  return [...new Set(found)];
}

/** The repository of a document the commands may work on: a file inside a git repository that
 * is one of the window's (it holds a folder of the window or lies inside one); with no folder
 * open, any git repository. Undefined for other files (a library's, opened by go to
 * definition), untitled editors and other schemes. */
function windowRepository(uri: vscode.Uri | undefined): string | undefined {
  if (uri?.scheme !== "file") {
    return undefined;
  }
  const root = gitRoot(path.dirname(uri.fsPath));
  if (!root) {
    return undefined;
  }
  const folders = fileFolders();
  if (folders.length && !folders.some((folder) => within(folder, root) || within(root, folder))) {
    return undefined;
  }
  return root;
}

/** The last active editor's file that was in one of the window's repositories. */
let lastRepositoryFile: vscode.Uri | undefined;

/**
 * The `uri` argument of a command about the repository: the active editor's file when it is in
 * one of the window's repositories (windowRepository); else the last such file that was active
 * (a file outside, say a library's opened by go to definition, is not one: the server would
 * refuse it); else the first repository of the window's folders, else its first folder.
 * Undefined when there is none of these (an untitled editor in an empty window): the server
 * then takes the workspace's repository if there is only one.
 */
function currentUri(): vscode.Uri | undefined {
  const active = vscode.window.activeTextEditor?.document.uri;
  if (active && windowRepository(active)) {
    lastRepositoryFile = active;
    return active;
  }
  if (lastRepositoryFile && windowRepository(lastRepositoryFile)) {
    return lastRepositoryFile;
  }
  const [repository] = folderRepositories();
  if (repository) {
    return vscode.Uri.file(repository);
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
  const problem = noteProblem(editor.document.uri);
  if (problem) {
    void vscode.window.showWarningMessage(`Stet: ${problem}`);
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

/** Why a note cannot be anchored in a document, or undefined when it can: a note's anchor is a
 * file of a git repository. */
function noteProblem(uri: vscode.Uri): string | undefined {
  if (uri.scheme === "untitled") {
    return "an untitled editor has no file to anchor a note to: save it inside a git repository first.";
  }
  if (uri.scheme !== "file") {
    return `a note is anchored to a file on disk, not to ${uri.scheme}: documents.`;
  }
  if (!gitRoot(path.dirname(uri.fsPath))) {
    return `${path.basename(uri.fsPath)} is not inside a git repository: a note is anchored to a file of one.`;
  }
  return undefined;
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

const BRIEF_SCHEME = "stet-brief";

/** The brief as a read-only Markdown document: one, shown again (with the new text) by each run. */
class BriefDocument implements vscode.TextDocumentContentProvider {
  static readonly uri = vscode.Uri.from({ scheme: BRIEF_SCHEME, path: "/Stet brief.md" });
  private text = "";
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  provideTextDocumentContent(): string {
    return this.text;
  }

  update(text: string): void {
    this.text = text;
    this.changed.fire(BriefDocument.uri);
  }

  dispose(): void {
    this.changed.dispose();
  }
}

let briefDocument: BriefDocument | undefined;

async function showBrief(): Promise<void> {
  try {
    // The budget is the server's `stet.brief.budget` setting.
    const brief = await execute<BriefResult>("stet.brief", repositoryArgument());
    briefDocument?.update(brief.text);
    const document = await vscode.workspace.openTextDocument(BriefDocument.uri);
    await vscode.window.showTextDocument(document, { preview: false });
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

/** Whether a session was imported, or committed (importing it brings what came since). */
function sessionState(row: SessionRow): string {
  return row.imported ? "imported" : row.committed?.length ? "committed" : "";
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
  const outside = result.outside_repository ? "; the session worked outside this repository" : "";
  const since = result.continues?.length ? `; what came after ${result.continues.join(", ")}` : "";
  return `${where}, ${redacted}${problems}${outside}${since}`;
}

/** The harnesses whose sessions the server finds for a repository (stet trajectory sessions). */
const HARNESS_NAMES = "Claude Code, Codex, Gemini CLI, Qwen Code, aider, OpenHands V1";

async function importSession(args?: { path?: string } | string): Promise<ImportResult | undefined> {
  const repository = repositoryArgument();
  let path = typeof args === "string" ? args : args?.path;
  try {
    if (!path) {
      const { sessions } = await execute<{ sessions: SessionRow[] }>(
        "stet.trajectory.sessions",
        repository,
      );
      const chooseFile = { label: "$(folder-opened) Choose a transcript file…", row: undefined };
      const picked = await vscode.window.showQuickPick(
        [
          ...sessions.map((row) => ({
            label: [row.harness, (row.started ?? "").slice(0, 16).replace("T", " "), row.first_prompt ?? ""]
              .filter(Boolean)
              .join(" · "),
            description: [formatSize(row.size), sessionState(row)].filter(Boolean).join(" · "),
            detail: row.path,
            row,
          })),
          chooseFile,
        ],
        {
          title: "Stet: Import Agent Session",
          placeHolder: sessions.length
            ? "an agent session of this repository, or a transcript file"
            : `no agent sessions found for this repository (${HARNESS_NAMES}): choose a transcript file`,
          ignoreFocusOut: true,
        },
      );
      if (!picked) {
        return undefined;
      }
      if (picked.row) {
        path = picked.row.path;
      } else {
        const [file] =
          (await vscode.window.showOpenDialog({
            title: "Stet: Import Agent Session",
            openLabel: "Import",
            canSelectMany: false,
          })) ?? [];
        if (!file) {
          return undefined;
        }
        path = file.fsPath;
      }
    }
    // The server reports work-done progress for a long import.
    const result = await execute<ImportResult>("stet.trajectory.import", { ...repository, path });
    void vscode.window
      .showInformationMessage(`Stet: ${importMessage(result)}`, "Open Trajectory")
      .then((choice) => (choice ? openTrajectory({ ...repository, id: result.trajectory }) : undefined));
    return result;
  } catch (error) {
    reportFailure("importing the agent session", error);
    return undefined;
  }
}

async function openTrajectory(args?: { id?: string; file?: string; uri?: string }): Promise<void> {
  // `uri`: the repository the trajectory was imported into (else the current one).
  const argument: Record<string, unknown> = args?.uri ? { uri: args.uri } : { ...repositoryArgument() };
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

/** The step the server finds at a line of a trajectory file: the one its quick fixes there
 * ("Mark step N as wrong") name; undefined when it names none. */
async function stepAt(uri: vscode.Uri, line: number): Promise<number | undefined> {
  const actions =
    (await vscode.commands.executeCommand<(vscode.CodeAction | vscode.Command)[] | undefined>(
      "vscode.executeCodeActionProvider",
      uri,
      new vscode.Range(line, 0, line, 0),
      vscode.CodeActionKind.QuickFix.value,
    )) ?? [];
  for (const action of actions) {
    const found = /^Mark step (\d+) as /.exec(action.title);
    if (found) {
      return Number(found[1]);
    }
  }
  return undefined;
}

/** "step N" for the step at a line of a trajectory file, else "the step at line L". */
async function stepName(uri: vscode.Uri, line: number): Promise<string> {
  const step = await stepAt(uri, line);
  return step !== undefined ? `step ${step}` : `the step at line ${line + 1}`;
}

async function markStep(args?: { verdict?: string; text?: string; toSheet?: boolean }): Promise<MarkResult | undefined> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.uri.scheme !== "file" || !TRAJECTORY_FILE.test(editor.document.uri.fsPath)) {
    void vscode.window.showWarningMessage(
      "Stet: open a trajectory (Stet: Open Trajectory) and put the cursor on a step first.",
    );
    return undefined;
  }
  const line = editor.selection.active.line;
  // The prompts' title: none are shown when the verdict is given.
  const title = args?.verdict ? "" : `Stet: Mark ${await stepName(editor.document.uri, line)}`;
  const verdict =
    args?.verdict ??
    (
      await vscode.window.showQuickPick([...VERDICTS], {
        title,
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
      title: `${title} ${verdict}`,
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
      { title: `${title} ${verdict}`, ignoreFocusOut: true },
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

/**
 * The middleware for server commands (workspace/executeCommand): code actions, lenses and the
 * palette's Stet: Commit Trajectory. A command that fails is reported here, once, with the
 * server's message. The request is sent directly, not through `next`: the language client's
 * `next` shows its own notification for a failed request, and VS Code another one for the
 * error it then throws.
 */
async function interceptCommand(command: string, args: unknown[], _next: ExecuteCommandSignature): Promise<unknown> {
  if (command === "stet.capstone" && args.length === 0) {
    return capstone();
  }
  try {
    return command === "stet.graduate" ? await graduate(args, sendCommand) : await sendCommand(command, args);
  } catch (error) {
    if (!(error instanceof ResponseError && error.code === LSPErrorCodes.RequestCancelled)) {
      const message = error instanceof Error ? error.message : String(error);
      void vscode.window.showErrorMessage(`Stet: ${message}`);
    }
    return undefined;
  } finally {
    if (!READ_ONLY.has(command)) {
      setTimeout(() => void afterChange(), 100);
    }
  }
}

/** `stet.graduate`: the skill route without a name asks for one, offering the proposal. */
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
  const request = argument as { id?: string; uri?: string; proposedName?: string };
  // The server's code actions and lenses carry its proposal; for the Stet view's and a
  // comment's "Propose as a Skill…" it is asked for. Without one, an empty name leaves the
  // choice to the server, as `stet graduate --to skill` without `--skill` does.
  const proposed = request.proposedName ?? (await skillProposal(request));
  const skill = await vscode.window.showInputBox({
    title: `Stet: Propose entry ${request.id ?? ""} as a skill`,
    prompt: proposed
      ? "The skill's name (.stet/skills/NAME/SKILL.md)"
      : "The skill's name (.stet/skills/NAME/SKILL.md); empty: the name Stet proposes from the entry's text",
    placeHolder: proposed ? undefined : "empty: the name Stet proposes",
    value: proposed ?? "",
    ignoreFocusOut: true,
    validateInput: (name) => (!name && !proposed ? undefined : skillNameProblem(name)),
  });
  if (skill === undefined) {
    return undefined; // Escape: nothing runs
  }
  const sent = skill ? { ...request, skill } : request;
  const result = (await next("stet.graduate", [sent, ...args.slice(1)])) as GraduateResult | undefined;
  if (result?.skill) {
    const state = result.staged.length ? "staged" : "unchanged";
    vscode.window.setStatusBarMessage(
      `Stet: entry ${result.entry.id} into the skill ${result.skill.name} (${result.skill.path}, ${state})`,
      6000,
    );
  }
  return result;
}

/** The skill name the server proposes for an entry (`stet.graduate.proposal`), or none. */
async function skillProposal(request: { id?: string; uri?: string }): Promise<string | undefined> {
  if (!request.id) {
    return undefined;
  }
  const where = request.uri ? { uri: request.uri } : repositoryArgument();
  try {
    const answer = await execute<{ proposed_name?: string }>("stet.graduate.proposal", {
      ...where,
      id: request.id,
    });
    return answer.proposed_name || undefined;
  } catch {
    return undefined; // the box then leaves the name to the server
  }
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
    const archived = result.archived ? `working trajectory archived to ${result.archived}\n` : "";
    return `trajectory ${result.trajectory} is already committed; nothing to commit\n${archived}`;
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
    prompt:
      "The commit message (empty: 'Trajectory: ' and the first line of the agent's first request, " +
      "else the trajectory's id); Stet's trailers are added",
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
    // The server reports progress while it runs, and a message with the new commit's id (or
    // that HEAD held the trajectory already).
    const result = await execute<CapstoneResult>("stet.capstone", argument);
    capstoneOutput ??= vscode.window.createOutputChannel("Stet: Capstone");
    capstoneOutput.appendLine(capstoneText(result));
    if (result.dry_run) {
      capstoneOutput.show(true);
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

// -- comment threads: the style sheet's anchored entries, one thread per line ------------------
//
// The server publishes a diagnostic per open entry anchored in a document, at the line where
// its anchor is now (source "stet", data {type: "entry", entryId}, message
// "style sheet (<kind>, <author>, <id>): <text>"). The threads mirror those: one thread per
// line carrying entries (a comment per entry), made when the diagnostics arrive, moved when
// they move, gone with the entry. Replying adds a note at the line; a comment can be edited,
// discarded and graduated from its title bar.

/** An entry as its diagnostic shows it. */
interface PlacedEntry {
  id: string;
  kind: string;
  author: string;
  text: string;
  line: number;
}

const ENTRY_MESSAGE = /^style sheet \(([^,()]+), ([^,()]+), ([^()\s]+)\): ([\s\S]*)$/;

/** The entries the server shows in a document, from its diagnostics. */
function placedEntries(uri: vscode.Uri): PlacedEntry[] {
  const found: PlacedEntry[] = [];
  for (const diagnostic of vscode.languages.getDiagnostics(uri)) {
    if (diagnostic.source !== "stet") {
      continue;
    }
    const match = ENTRY_MESSAGE.exec(diagnostic.message);
    if (!match) {
      continue;
    }
    const data = (diagnostic as vscode.Diagnostic & { data?: { type?: string; entryId?: unknown } }).data;
    if (data && data.type !== undefined && data.type !== "entry") {
      continue;
    }
    const id = typeof data?.entryId === "string" ? data.entryId : match[3];
    found.push({ id, kind: match[1], author: match[2], text: match[4], line: diagnostic.range.start.line });
  }
  return found;
}

class NoteComment implements vscode.Comment {
  mode = vscode.CommentMode.Preview;
  contextValue = "stet-entry";
  /** The text before an edit started (restored on cancel). */
  saved: string;
  constructor(
    public body: string | vscode.MarkdownString,
    public author: vscode.CommentAuthorInformation,
    public label: string | undefined,
    public readonly entryId: string,
    public thread: vscode.CommentThread,
  ) {
    this.saved = typeof body === "string" ? body : body.value;
  }
}

function noteComment(entry: { id: string; kind: string; author: string; text: string }, thread: vscode.CommentThread) {
  return new NoteComment(entry.text, { name: entry.author }, `${entry.kind} · ${entry.id}`, entry.id, thread);
}

/** The mirrored threads of every document. */
class CommentMirror {
  /** uri → the document's threads, each with the line it is on and what it shows. */
  private readonly threads = new Map<
    string,
    { thread: vscode.CommentThread; line: number; shown: string; pendingUntil?: number }[]
  >();

  constructor(private readonly controller: vscode.CommentController) {}

  /** Takes a thread made through the comment UI as the mirror of the entry just added there. */
  adopt(thread: vscode.CommentThread, entry: Entry, line: number): void {
    this.prepare(thread);
    thread.comments = [...thread.comments, noteComment(entry, thread)];
    const list = this.threads.get(thread.uri.toString()) ?? [];
    if (!list.some((known) => known.thread === thread)) {
      // Kept until the entry's diagnostic comes (the server publishes it after the write).
      list.push({ thread, line, shown: "", pendingUntil: Date.now() + 15000 });
      this.threads.set(thread.uri.toString(), list);
    }
  }

  private prepare(thread: vscode.CommentThread): void {
    thread.contextValue = "stet-entry";
    thread.label = "Stet style sheet";
    thread.canReply = true;
  }

  /** Brings a document's threads in line with its diagnostics. */
  update(uri: vscode.Uri): void {
    if (uri.scheme !== "file") {
      return;
    }
    const key = uri.toString();
    const byLine = new Map<number, PlacedEntry[]>();
    for (const entry of placedEntries(uri)) {
      byLine.set(entry.line, [...(byLine.get(entry.line) ?? []), entry]);
    }
    const known = this.threads.get(key) ?? [];
    const kept: typeof known = [];
    const free = [...known];
    for (const [line, entries] of [...byLine].sort((a, b) => a[0] - b[0])) {
      const ids = new Set(entries.map((entry) => entry.id));
      // The thread that showed one of these entries (it moved with them), else a new one.
      let at = free.findIndex(({ thread }) =>
        thread.comments.some((comment) => comment instanceof NoteComment && ids.has(comment.entryId)),
      );
      if (at < 0) {
        at = free.findIndex((known) => known.line === line);
      }
      let slot = at >= 0 ? free.splice(at, 1)[0] : undefined;
      if (!slot) {
        const thread = this.controller.createCommentThread(uri, new vscode.Range(line, 0, line, 0), []);
        thread.collapsibleState = vscode.CommentThreadCollapsibleState.Collapsed;
        slot = { thread, line, shown: "" };
      }
      const { thread } = slot;
      slot.pendingUntil = undefined;
      this.prepare(thread);
      if (slot.line !== line || !thread.range || thread.range.start.line !== line) {
        thread.range = new vscode.Range(line, 0, line, 0);
        slot.line = line;
      }
      const shown = JSON.stringify(entries.map((entry) => [entry.id, entry.kind, entry.author, entry.text]));
      const editing = thread.comments.some((comment) => comment.mode === vscode.CommentMode.Editing);
      if (shown !== slot.shown && !editing) {
        thread.comments = entries.map((entry) => noteComment(entry, thread));
        slot.shown = shown;
      }
      kept.push(slot);
    }
    for (const slot of free) {
      if (slot.pendingUntil !== undefined && Date.now() < slot.pendingUntil) {
        kept.push(slot);
      } else {
        slot.thread.dispose();
      }
    }
    if (kept.length) {
      this.threads.set(key, kept);
    } else {
      this.threads.delete(key);
    }
  }

  /** Forgets a thread disposed elsewhere. */
  forget(thread: vscode.CommentThread): void {
    for (const [key, list] of this.threads) {
      const left = list.filter((known) => known.thread !== thread);
      if (left.length) {
        this.threads.set(key, left);
      } else {
        this.threads.delete(key);
      }
    }
  }

  dispose(): void {
    for (const list of this.threads.values()) {
      for (const { thread } of list) {
        thread.dispose();
      }
    }
    this.threads.clear();
  }
}

/** The comment a comment-title action was run on (VS Code passes the comment itself). */
function commentArgument(given: unknown): NoteComment | undefined {
  return given instanceof NoteComment ? given : undefined;
}

/** Redraws a thread's comments (a comment's mode or body changed). */
function redraw(thread: vscode.CommentThread): void {
  thread.comments = [...thread.comments];
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
  const mirror = new CommentMirror(controller);
  const update = (uris: readonly vscode.Uri[]) => uris.forEach((uri) => mirror.update(uri));
  context.subscriptions.push(
    controller,
    mirror,
    vscode.languages.onDidChangeDiagnostics((event) => update(event.uris)),
    // A new thread, or a reply on a mirrored one: a note at the thread's line.
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
        // The entry's diagnostic follows: this thread is the one that mirrors it.
        mirror.adopt(thread, entry, line);
        thread.collapsibleState = vscode.CommentThreadCollapsibleState.Expanded;
      } catch (error) {
        reportFailure("adding the note", error);
      }
    }),
    // The thread's title: discard every entry it shows (an empty thread is just closed).
    vscode.commands.registerCommand("stet.comment.discard", async (thread: vscode.CommentThread) => {
      const notes = thread.comments.filter((comment): comment is NoteComment => comment instanceof NoteComment);
      if (!notes.length) {
        mirror.forget(thread);
        thread.dispose();
        return;
      }
      try {
        for (const note of notes) {
          await execute("stet.note.discard", { uri: thread.uri.toString(), id: note.entryId });
        }
        mirror.forget(thread);
        thread.dispose();
      } catch (error) {
        reportFailure("discarding the note", error);
      }
    }),
    vscode.commands.registerCommand("stet.comment.edit", (given: unknown) => {
      const comment = commentArgument(given);
      if (!comment) {
        return;
      }
      comment.saved = typeof comment.body === "string" ? comment.body : comment.body.value;
      comment.mode = vscode.CommentMode.Editing;
      comment.contextValue = "stet-entry-editing";
      redraw(comment.thread);
    }),
    vscode.commands.registerCommand("stet.comment.cancelEdit", (given: unknown) => {
      const comment = commentArgument(given);
      if (!comment) {
        return;
      }
      comment.body = comment.saved;
      comment.mode = vscode.CommentMode.Preview;
      comment.contextValue = "stet-entry";
      redraw(comment.thread);
    }),
    vscode.commands.registerCommand("stet.comment.save", async (given: unknown) => {
      const comment = commentArgument(given);
      if (!comment) {
        return;
      }
      const text = (typeof comment.body === "string" ? comment.body : comment.body.value).trim();
      if (!text) {
        void vscode.window.showWarningMessage("Stet: a note cannot be empty.");
        return;
      }
      try {
        const { entry } = await execute<EntryResult>("stet.note.edit", {
          uri: comment.thread.uri.toString(),
          id: comment.entryId,
          text,
        });
        comment.body = entry.text;
        comment.saved = entry.text;
        comment.mode = vscode.CommentMode.Preview;
        comment.contextValue = "stet-entry";
        redraw(comment.thread);
        vscode.window.setStatusBarMessage(`Stet: entry ${entry.id} edited`, 4000);
      } catch (error) {
        reportFailure("editing the note", error);
      }
    }),
    vscode.commands.registerCommand("stet.comment.discardEntry", async (given: unknown) => {
      const comment = commentArgument(given);
      if (!comment) {
        return;
      }
      try {
        const { entry } = await execute<EntryResult>("stet.note.discard", {
          uri: comment.thread.uri.toString(),
          id: comment.entryId,
        });
        dropComment(mirror, comment);
        vscode.window.setStatusBarMessage(`Stet: entry ${entry.id} discarded`, 4000);
      } catch (error) {
        reportFailure("discarding the note", error);
      }
    }),
    ...(["trajectory", "skill", "discard"] as const).map((route) =>
      vscode.commands.registerCommand(`stet.comment.graduate.${route}`, async (given: unknown) => {
        const comment = commentArgument(given);
        if (!comment) {
          return;
        }
        const result = (await graduateEntry(
          { id: comment.entryId, uri: comment.thread.uri.toString() },
          route,
        )) as GraduateResult | undefined;
        if (result?.entry && result.entry.status !== "open") {
          dropComment(mirror, comment);
        }
      }),
    ),
  );
  // Documents open before the extension started.
  update(vscode.workspace.textDocuments.map((document) => document.uri));
}

/** Takes a comment off its thread once its entry is no longer open (the thread goes when empty). */
function dropComment(mirror: CommentMirror, comment: NoteComment): void {
  const thread = comment.thread;
  thread.comments = thread.comments.filter((other) => other !== comment);
  if (!thread.comments.length) {
    mirror.forget(thread);
    thread.dispose();
  }
}

// -- the target at a glance: status bar, entries, the tree view -----------------------------------

/** What `stet.note.list` returns. */
interface ListResult {
  version: number;
  target: Target;
  sheet: string;
  paused: boolean;
  paused_until: string | null;
  entries: Entry[];
}

/** A trajectory `stet.trajectory.list` lists (as `stet trajectory list --json`): a working
 * one's id is its target's key. */
interface TrajectoryRow {
  id: string;
  working: boolean;
  path: string;
  steps: number;
  started: string | null;
  harnesses: string[];
}

/** A step of the server's trajectory outline (`stet.trajectory.outline`): its 0-based line of
 * events.jsonl, and the path and operation of a file change. */
interface StepRow {
  type: "step";
  step: number;
  kind: string;
  line: number;
  title: string;
  path?: string | null;
  operation?: string | null;
}

/** A session, turn or subagent of the server's trajectory outline. */
interface OutlineNodeRow {
  type: "session" | "turn" | "subagent";
  name: string;
  detail: string;
  line: number;
  children: (OutlineNodeRow | StepRow)[];
}

interface OutlineResult {
  trajectory: string;
  uri: string;
  nodes: OutlineNodeRow[];
}

const ROUTES = [
  { label: "trajectory", description: "graduate into the working trajectory" },
  { label: "skill", description: "propose as a skill (.stet/skills/NAME/SKILL.md)" },
  { label: "discard", description: "discard the entry" },
] as const;

let stetView: StetTree | undefined;

/** The repository's root folder from the sheet's path (ROOT/.stet/…), else the first folder. */
function repositoryRoot(list: ListResult | undefined): string | undefined {
  const sheet = list?.sheet;
  const at = sheet ? sheet.lastIndexOf(`${path.sep}.stet${path.sep}`) : -1;
  if (sheet && at > 0) {
    return sheet.slice(0, at);
  }
  return vscode.workspace.workspaceFolders?.find((folder) => folder.uri.scheme === "file")?.uri.fsPath;
}

function entryLine(entry: Entry): number | undefined {
  const line = entry.placement?.line ?? entry.anchor?.line;
  return typeof line === "number" ? line : undefined;
}

function entryWhere(entry: Entry): string {
  if (!entry.anchor) {
    return "no anchor";
  }
  if (entry.placement?.lost) {
    return `${entry.anchor.path} (anchor lost)`;
  }
  return `${entry.anchor.path}:${entryLine(entry) ?? "?"}`;
}

/** Opens an entry's anchor: its file at the line where the anchored text is now. */
async function openAnchor(entry: Entry, root?: string): Promise<void> {
  if (!entry.anchor) {
    void vscode.window.showInformationMessage(`Stet: entry ${entry.id} has no anchor.`);
    return;
  }
  const base = root ?? repositoryRoot(stetView?.list);
  if (!base) {
    return;
  }
  const file = path.join(base, entry.anchor.path);
  if (!isFile(file)) {
    // Deleted or renamed since the entry was written: say so, not VS Code's "Unable to read file".
    void vscode.window.showInformationMessage(
      `Stet: entry ${entry.id} is anchored in ${entry.anchor.path}, which is no longer there.`,
    );
    return;
  }
  const line = Math.max(0, (entryLine(entry) ?? 1) - 1);
  const document = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
  const position = new vscode.Position(Math.min(line, Math.max(0, document.lineCount - 1)), 0);
  await vscode.window.showTextDocument(document, { selection: new vscode.Range(position, position) });
}

async function listEntries(status?: string): Promise<ListResult> {
  const argument: Record<string, unknown> = { ...repositoryArgument() };
  if (status) {
    argument.status = status;
  }
  return execute<ListResult>("stet.note.list", argument);
}

/** A quick pick of the target's entries (open ones unless `all`); undefined on Escape. */
async function pickEntry(title: string, all = false): Promise<{ entry: Entry; list: ListResult } | undefined> {
  const list = await listEntries(all ? undefined : "open");
  if (!list.entries.length) {
    void vscode.window.showInformationMessage(`Stet: no ${all ? "" : "open "}entries on ${list.target.label}.`);
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    list.entries.map((entry) => ({
      label: entry.text.split("\n")[0],
      description: `${entry.kind} · ${entry.author} · ${entry.id}${all ? ` · ${entry.status}` : ""}`,
      detail: entryWhere(entry),
      entry,
    })),
    { title, matchOnDescription: true, matchOnDetail: true, ignoreFocusOut: true },
  );
  return picked ? { entry: picked.entry, list } : undefined;
}

/** An entry given by the tree (its item) or a command argument ({id, uri?}), else picked;
 * `uri` is a document or the root of the repository it came from (undefined: the current
 * one, repositoryArgument()). */
async function entryArgument(
  given: unknown,
  title: string,
): Promise<{ id: string; text?: string; uri?: string } | undefined> {
  if (given instanceof EntryItem) {
    return { ...given.entry, uri: given.root ? vscode.Uri.file(given.root).toString() : undefined };
  }
  if (typeof given === "object" && given !== null && typeof (given as { id?: unknown }).id === "string") {
    return given as { id: string; text?: string; uri?: string };
  }
  const picked = await pickEntry(title);
  const root = picked && repositoryRoot(picked.list);
  return picked && { ...picked.entry, uri: root ? vscode.Uri.file(root).toString() : undefined };
}

/** `{uri}` of the repository an entry came from, else of the current one. */
function entryRepository(entry: { uri?: string }): Record<string, unknown> {
  return entry.uri ? { uri: entry.uri } : repositoryArgument();
}

async function afterChange(): Promise<void> {
  await statusBar?.refresh();
  stetView?.refresh();
}

async function graduateEntry(given?: unknown, route?: string): Promise<unknown> {
  try {
    const entry = await entryArgument(given, "Stet: Graduate Entry");
    if (!entry) {
      return undefined;
    }
    const picked =
      route ??
      (await vscode.window.showQuickPick([...ROUTES], { title: `Stet: Graduate entry ${entry.id}`, ignoreFocusOut: true }))
        ?.label;
    if (!picked) {
      return undefined;
    }
    // Through graduate(), so the skill route asks for the name as the server's code actions
    // do (middleware), and straight to the server: a failure is reported once, here (the
    // command, run through vscode.commands, showed the language client's message as well).
    const argument = { ...entryRepository(entry), id: entry.id, route: picked };
    const result = (await graduate([argument], (command, args) =>
      execute(command, args[0] as Record<string, unknown>),
    )) as GraduateResult | undefined;
    if (result?.entry && picked !== "skill") {
      vscode.window.setStatusBarMessage(`Stet: entry ${result.entry.id} is now ${result.entry.status}`, 6000);
    }
    return result;
  } catch (error) {
    reportFailure("graduating the entry", error);
    return undefined;
  } finally {
    await afterChange();
  }
}

async function editNote(given?: unknown, newText?: string): Promise<Entry | undefined> {
  try {
    const entry = await entryArgument(given, "Stet: Edit Note");
    if (!entry) {
      return undefined;
    }
    const text =
      newText ??
      (await vscode.window.showInputBox({
        title: `Stet: Edit entry ${entry.id}`,
        value: entry.text ?? "",
        ignoreFocusOut: true,
        validateInput: (value) => (value.trim() ? undefined : "the text cannot be empty"),
      }));
    if (!text) {
      return undefined;
    }
    const result = await execute<EntryResult>("stet.note.edit", { ...entryRepository(entry), id: entry.id, text });
    vscode.window.setStatusBarMessage(`Stet: entry ${result.entry.id} edited`, 4000);
    return result.entry;
  } catch (error) {
    reportFailure("editing the note", error);
    return undefined;
  } finally {
    await afterChange();
  }
}

async function discardNote(given?: unknown): Promise<Entry | undefined> {
  try {
    const entry = await entryArgument(given, "Stet: Discard Note");
    if (!entry) {
      return undefined;
    }
    const result = await execute<EntryResult>("stet.note.discard", { ...entryRepository(entry), id: entry.id });
    vscode.window.setStatusBarMessage(`Stet: entry ${result.entry.id} discarded`, 4000);
    return result.entry;
  } catch (error) {
    reportFailure("discarding the note", error);
    return undefined;
  } finally {
    await afterChange();
  }
}

async function showEntries(): Promise<void> {
  try {
    const picked = await pickEntry("Stet: List Entries", true);
    if (picked) {
      await openAnchor(picked.entry, repositoryRoot(picked.list));
    }
  } catch (error) {
    reportFailure("listing the entries", error);
  }
}

async function setPaused(paused: boolean): Promise<void> {
  try {
    let until: string | undefined;
    if (paused) {
      until = await vscode.window.showInputBox({
        title: "Stet: Pause Style Sheet",
        prompt: "Pause until (an ISO date or time, e.g. 2026-12-31); empty: until resumed",
        ignoreFocusOut: true,
      });
      if (until === undefined) {
        return;
      }
    }
    const argument: Record<string, unknown> = { ...repositoryArgument() };
    if (until?.trim()) {
      argument.until = until.trim();
    }
    const result = await execute<{
      target: Target;
      paused: boolean;
      paused_until: string | null;
      was_paused?: boolean;
    }>(paused ? "stet.pause" : "stet.resume", argument);
    const when = result.paused_until ? ` until ${result.paused_until}` : "";
    const state = result.paused ? `paused${when}` : result.was_paused === false ? "was not paused" : "resumed";
    vscode.window.setStatusBarMessage(`Stet: ${result.target.label} ${state}`, 4000);
  } catch (error) {
    reportFailure(paused ? "pausing" : "resuming", error);
  } finally {
    await afterChange();
  }
}

/** The status bar item: target, open entries, paused, working trajectory. */
class StatusBar {
  readonly item = vscode.window.createStatusBarItem("stet.status", vscode.StatusBarAlignment.Left, 10);
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  /** What the last refresh saw: the view is refreshed when it changes. */
  private seen: string | undefined;

  constructor() {
    this.item.name = "Stet";
    this.item.command = "stet.showView";
    this.item.text = "$(note) Stet";
    this.item.tooltip = "Stet: starting the language server";
    this.item.show();
    this.timer = setInterval(() => void this.refresh(), 4000);
  }

  async refresh(): Promise<void> {
    if (this.busy) {
      return;
    }
    if (client?.state !== State.Running) {
      // Not running: never started, failed to start, or stopped.
      if (!starting && client?.state !== State.Starting) {
        this.item.text = "$(warning) Stet";
        this.item.tooltip = "Stet: the language server is not running (Stet: Restart Language Server)";
      }
      return;
    }
    this.busy = true;
    try {
      const list = await listEntries();
      const open = list.entries.filter((entry) => entry.status === "open").length;
      let working = false;
      try {
        const { trajectories } = await execute<{ trajectories: TrajectoryRow[] }>(
          "stet.trajectory.list",
          repositoryArgument(),
        );
        // Its own: another branch's stays in .stet/cache/ until its capstone.
        working = trajectories.some((row) => row.working && row.id === list.target.key);
      } catch {
        // no trajectories: nothing to show
      }
      const parts = [`$(note) Stet: ${list.target.label}`, `${open} open`];
      if (list.paused) {
        parts.push("$(debug-pause) paused");
      }
      if (working) {
        parts.push("$(history) trajectory");
      }
      this.item.text = parts.join(" · ");
      const seen = JSON.stringify([
        list.target.key,
        list.paused,
        list.entries.map((entry) => [entry.id, entry.status, entry.text, entry.placement]),
        working,
      ]);
      if (this.seen !== undefined && seen !== this.seen) {
        stetView?.refresh();
      }
      this.seen = seen;
      this.item.tooltip = new vscode.MarkdownString(
        [
          `**Stet** · ${list.target.kind} \`${list.target.label}\``,
          `${open} open entr${open === 1 ? "y" : "ies"} of ${list.entries.length}`,
          list.paused ? `paused${list.paused_until ? ` until ${list.paused_until}` : ""}` : "not paused",
          working ? "a working trajectory is there" : "no working trajectory",
          "",
          "Click to open the Stet view.",
        ].join("\n\n"),
      );
    } catch (error) {
      this.item.text = "$(note) Stet";
      this.item.tooltip = `Stet: ${error instanceof Error ? error.message : String(error)}`;
    } finally {
      this.busy = false;
    }
  }

  dispose(): void {
    clearInterval(this.timer);
    this.item.dispose();
  }
}

let statusBar: StatusBar | undefined;

// The tree: "Entries" (by kind) and "Trajectories" (sessions → turns → steps, subagents a level of their own).

class GroupItem extends vscode.TreeItem {
  constructor(
    label: string,
    readonly group: "entries" | "trajectories" | "kind",
    readonly entries: Entry[] = [],
  ) {
    super(label, vscode.TreeItemCollapsibleState.Expanded);
    this.contextValue = `stet-${group}`;
  }
}

class EntryItem extends vscode.TreeItem {
  constructor(
    readonly entry: Entry,
    /** The root of the repository the tree listed it from. */
    readonly root: string | undefined,
  ) {
    super(entry.text.split("\n")[0], vscode.TreeItemCollapsibleState.None);
    this.id = `entry:${entry.id}`;
    this.description = `${entry.status} · ${entryWhere(entry)}`;
    this.tooltip = new vscode.MarkdownString(
      `**${entry.kind}** · ${entry.author} · \`${entry.id}\` · ${entry.status}\n\n${entry.text}\n\n${entryWhere(entry)}`,
    );
    this.contextValue = entry.status === "open" ? "stet-entry-open" : "stet-entry";
    this.iconPath = new vscode.ThemeIcon(entry.status === "open" ? "note" : "pass");
    this.command = { command: "stet.openEntry", title: "Open Anchor", arguments: [entry, root] };
  }
}

class TrajectoryItem extends vscode.TreeItem {
  constructor(
    readonly row: TrajectoryRow,
    /** `{uri}` of the repository the tree listed it from. */
    readonly where: Record<string, unknown>,
  ) {
    super(`${row.working ? "working " : ""}${row.id}`, vscode.TreeItemCollapsibleState.Collapsed);
    this.id = `trajectory:${row.id}`;
    this.description = `${row.steps} steps · ${(row.harnesses ?? []).join(", ")}`;
    this.contextValue = "stet-trajectory";
    this.iconPath = new vscode.ThemeIcon(row.working ? "history" : "git-commit");
  }
}

/** A session, a turn (a request of the user and what followed) or a subagent in the tree. */
class OutlineItem extends vscode.TreeItem {
  readonly children: (OutlineItem | StepRow)[] = [];
  constructor(
    readonly trajectory: string,
    readonly file: vscode.Uri,
    readonly level: "session" | "turn" | "subagent",
    key: string,
    readonly line: number,
    label: string,
  ) {
    super(label, vscode.TreeItemCollapsibleState.Collapsed);
    this.id = `${level}:${trajectory}:${key}`;
    this.contextValue = `stet-${level}`;
    this.iconPath = new vscode.ThemeIcon(
      level === "session" ? "terminal" : level === "turn" ? "comment-discussion" : "hubot",
    );
  }

  /** The steps under it, its subagents' included. */
  count(): number {
    return this.children.reduce((sum, child) => sum + (child instanceof OutlineItem ? child.count() : 1), 0);
  }

  /** Sets the descriptions once the children are in. */
  finish(): void {
    const steps = this.count();
    const parts = [`${steps} step${steps === 1 ? "" : "s"}`];
    if (this.detail) {
      parts.push(this.detail);
    }
    this.description = parts.join(" · ");
    this.children.forEach((child) => child instanceof OutlineItem && child.finish());
  }

  /** What the server's outline says of it (a turn's number, a subagent's step). */
  detail?: string;

  /** Its rows in the view, made once. */
  rows?: Node[];
}

class StepItem extends vscode.TreeItem {
  constructor(readonly trajectory: string, readonly file: vscode.Uri, readonly row: StepRow) {
    super(`${row.step} · ${row.kind}`, vscode.TreeItemCollapsibleState.None);
    this.id = `step:${trajectory}:${row.step}:${row.line}`;
    this.description = row.title;
    const change = row.kind === "file_change" && typeof row.path === "string";
    this.contextValue = change ? "stet-step-change" : "stet-step";
    this.iconPath = new vscode.ThemeIcon(change ? "diff" : "debug-stackframe-dot");
    this.command = change
      ? { command: "stet.openStepDiff", title: "Open Diff", arguments: [this] }
      : { command: "stet.openStep", title: "Open Step", arguments: [this] };
  }
}

type Node = GroupItem | EntryItem | TrajectoryItem | OutlineItem | StepItem | vscode.TreeItem;

/** The tree of a trajectory's outline node: its child nodes and steps, in the server's order. */
function outlineItem(trajectory: string, file: vscode.Uri, node: OutlineNodeRow): OutlineItem {
  const label = node.type === "session" ? node.name || `session ${node.detail.slice(0, 12)}` : node.name;
  const item = new OutlineItem(trajectory, file, node.type, `${node.detail}:${node.line}`, node.line, label);
  item.detail = node.type === "session" ? `session ${node.detail.slice(0, 8)}`.trim() : node.detail;
  for (const child of node.children) {
    item.children.push(child.type === "step" ? child : outlineItem(trajectory, file, child));
  }
  return item;
}

// -- a file change's diff: two read-only documents built from the step's unified diff ----------

/** The two sides of a unified diff: context and removed lines; context and added lines. */
function diffSides(diff: string): { left: string; right: string } {
  const left: string[] = [];
  const right: string[] = [];
  let inHunk = false;
  for (const line of diff.split("\n")) {
    if (line.startsWith("@@")) {
      inHunk = true;
      continue;
    }
    if (!inHunk || line.startsWith("\\")) {
      continue; // the file header, "\ No newline at end of file"
    }
    if (line.startsWith("+")) {
      right.push(line.slice(1));
    } else if (line.startsWith("-")) {
      left.push(line.slice(1));
    } else if (line.startsWith(" ") || line === "") {
      left.push(line.slice(1));
      right.push(line.slice(1));
    }
  }
  // The diff's last line ends with a newline: its empty tail is not a line of the file.
  while (left.length && right.length && left[left.length - 1] === "" && right[right.length - 1] === "") {
    left.pop();
    right.pop();
  }
  return { left: left.join("\n"), right: right.join("\n") };
}

const DIFF_SCHEME = "stet-diff";
const KEPT_DIFFS = 20;

/** The documents of the `stet-diff` scheme: `stet-diff:/<key>/<side>/<path>`. Each opening
 * gets a key of its own (a step's change may have been imported again since, and step numbers
 * may repeat), and only the last few are kept. */
class DiffDocuments implements vscode.TextDocumentContentProvider {
  private readonly sides = new Map<string, { left: string; right: string }>();
  private opened = 0;

  provideTextDocumentContent(uri: vscode.Uri): string {
    const [, key, side] = uri.path.split("/");
    const sides = this.sides.get(key);
    return sides ? (side === "left" ? sides.left : sides.right) : "";
  }

  /** The left and right URIs of a step's change (`diff`, and `content` when the diff is
   * empty: a created file stored whole). */
  add(
    trajectory: string,
    row: StepRow,
    change: { path: string; diff: string; content?: string },
  ): { left: vscode.Uri; right: vscode.Uri } {
    let sides = diffSides(change.diff);
    if (!change.diff.trim() && change.content !== undefined) {
      sides = { left: "", right: change.content };
    }
    const key = `${trajectory}.${row.line}.${++this.opened}`;
    this.sides.set(key, sides);
    for (const old of this.sides.keys()) {
      if (this.sides.size <= KEPT_DIFFS) {
        break;
      }
      this.sides.delete(old);
    }
    const path = change.path.replace(/^\/+/, "");
    return {
      left: vscode.Uri.from({ scheme: DIFF_SCHEME, path: `/${key}/left/${path}` }),
      right: vscode.Uri.from({ scheme: DIFF_SCHEME, path: `/${key}/right/${path}` }),
    };
  }
}

let diffDocuments: DiffDocuments | undefined;

/** Opens a file change of the tree as a diff: "<path> (step N)", from the step's line of
 * events.jsonl. */
async function openStepDiff(item: StepItem): Promise<void> {
  const change = await changeOf(item);
  if (!change || !diffDocuments) {
    await openStep(item);
    return;
  }
  const { left, right } = diffDocuments.add(item.trajectory, item.row, change);
  await vscode.commands.executeCommand("vscode.diff", left, right, `${change.path} (step ${item.row.step})`, {
    preview: true,
  });
}

/** The change a file_change step's line of events.jsonl holds; undefined when the line is not
 * one (the file changed since the tree was built). */
async function changeOf(item: StepItem): Promise<{ path: string; diff: string; content?: string } | undefined> {
  const text = new TextDecoder().decode(await vscode.workspace.fs.readFile(item.file));
  let event: Record<string, unknown>;
  try {
    event = JSON.parse(text.split("\n")[item.row.line] ?? "") as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (typeof event !== "object" || event === null || event.kind !== "file_change" || typeof event.path !== "string") {
    return undefined;
  }
  return {
    path: event.path,
    diff: typeof event.diff === "string" ? event.diff : "",
    content: typeof event.content === "string" ? event.content : undefined,
  };
}

class StetTree implements vscode.TreeDataProvider<Node> {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  list: ListResult | undefined;
  /** `{uri}` the tree's root was listed with: its trajectories come from the same repository. */
  private where: Record<string, unknown> = {};
  /** Each trajectory's outline by its events.jsonl's time and size: a refresh of the view
   * (any change of the sheet) gives the same items back while the file is unchanged, so a
   * click on a row is never lost to a row that was just replaced. */
  private readonly outlines = new Map<string, { stamp: string; items: OutlineItem[] }>();

  refresh(): void {
    this.changed.fire(undefined);
  }

  getTreeItem(node: Node): vscode.TreeItem {
    return node;
  }

  /** Sessions, turns and subagents with their steps, as the server's outline places them. */
  private async outline(row: TrajectoryRow, where: Record<string, unknown>): Promise<OutlineItem[]> {
    const stamp = await eventsStamp(row);
    const known = this.outlines.get(row.id);
    if (stamp !== undefined && known?.stamp === stamp) {
      return known.items;
    }
    // The repository the tree was listed from, not the one active now (multi-root).
    const outline = await execute<OutlineResult>("stet.trajectory.outline", { ...where, id: row.id });
    const file = vscode.Uri.parse(outline.uri);
    const items = outline.nodes.map((child) => outlineItem(row.id, file, child));
    items.forEach((item) => item.finish());
    if (stamp !== undefined) {
      this.outlines.set(row.id, { stamp, items });
    }
    return items;
  }

  async getChildren(node?: Node): Promise<Node[]> {
    if (!client || client.state !== State.Running) {
      await starting?.catch(() => undefined);
      if (!client || client.state !== State.Running) {
        return [];
      }
    }
    try {
      if (!node) {
        this.where = repositoryArgument();
        this.list = await execute<ListResult>("stet.note.list", this.where);
        const entries = new GroupItem(`Entries · ${this.list.target.label}`, "entries", this.list.entries);
        entries.id = "group:entries";
        entries.description = `${this.list.entries.filter((entry) => entry.status === "open").length} open${
          this.list.paused ? " · paused" : ""
        }`;
        const trajectories = new GroupItem("Trajectories", "trajectories");
        trajectories.id = "group:trajectories";
        return [entries, trajectories];
      }
      if (node instanceof GroupItem && node.group === "entries") {
        const kinds = [...new Set([...KINDS, ...node.entries.map((entry) => entry.kind)])];
        return kinds
          .map((kind) => {
            const entries = node.entries.filter((entry) => entry.kind === kind);
            const group = new GroupItem(kind, "kind", entries);
            group.id = `kind:${kind}`;
            group.description = `${entries.length}`;
            return group;
          })
          .filter((group) => group.entries.length);
      }
      if (node instanceof GroupItem && node.group === "kind") {
        const root = repositoryRoot(this.list);
        return node.entries.map((entry) => new EntryItem(entry, root));
      }
      if (node instanceof GroupItem && node.group === "trajectories") {
        const where = this.where;
        const { trajectories } = await execute<{ trajectories: TrajectoryRow[] }>("stet.trajectory.list", where);
        if (!trajectories.length) {
          const none = new vscode.TreeItem("no trajectories yet: Stet: Import Agent Session…");
          none.command = { command: "stet.importSession", title: "Import Agent Session" };
          return [none];
        }
        // The target's working trajectory first, then other branches' working ones.
        const key = this.list?.target.key;
        const rank = (row: TrajectoryRow) => (row.working ? (row.id === key ? 2 : 1) : 0);
        return [...trajectories]
          .sort((a, b) => rank(b) - rank(a))
          .map((row) => new TrajectoryItem(row, where));
      }
      if (node instanceof TrajectoryItem) {
        return await this.outline(node.row, node.where);
      }
      if (node instanceof OutlineItem) {
        node.rows ??= node.children.map((child) =>
          child instanceof OutlineItem ? child : new StepItem(node.trajectory, node.file, child),
        );
        return node.rows;
      }
    } catch (error) {
      output?.warn(`the Stet view: ${error instanceof Error ? error.message : String(error)}`);
    }
    return [];
  }
}

/** The time and size of a trajectory's events.jsonl; undefined when it cannot be told. */
async function eventsStamp(row: TrajectoryRow): Promise<string | undefined> {
  const root = repositoryRoot(stetView?.list);
  if (!root) {
    return undefined;
  }
  try {
    const found = await vscode.workspace.fs.stat(vscode.Uri.file(path.resolve(root, row.path, "events.jsonl")));
    return `${found.mtime}:${found.size}`;
  } catch {
    return undefined;
  }
}

/** Opens a step of the tree: the trajectory's events.jsonl at the step's line. */
async function openStep(item: StepItem): Promise<vscode.TextEditor> {
  const position = new vscode.Position(item.row.line, 0);
  return vscode.window.showTextDocument(item.file, { selection: new vscode.Range(position, position) });
}

function registerViews(context: vscode.ExtensionContext): void {
  statusBar = new StatusBar();
  stetView = new StetTree();
  diffDocuments = new DiffDocuments();
  const tree = vscode.window.createTreeView("stet.tree", { treeDataProvider: stetView, showCollapseAll: true });
  context.subscriptions.push(
    statusBar,
    tree,
    vscode.commands.registerCommand("stet.showView", () => vscode.commands.executeCommand("stet.tree.focus")),
    vscode.commands.registerCommand("stet.refreshView", afterChange),
    vscode.commands.registerCommand("stet.openEntry", (entry: Entry | EntryItem, root?: string) =>
      openAnchor(entry instanceof EntryItem ? entry.entry : entry, root),
    ),
    vscode.commands.registerCommand("stet.openStep", openStep),
    vscode.commands.registerCommand("stet.openStepDiff", openStepDiff),
    vscode.workspace.registerTextDocumentContentProvider(DIFF_SCHEME, diffDocuments),
    vscode.commands.registerCommand("stet.markStepInTree", async (item: StepItem) => {
      await openStep(item);
      await markStep();
    }),
    vscode.commands.registerCommand("stet.pauseSheet", () => setPaused(true)),
    vscode.commands.registerCommand("stet.resumeSheet", () => setPaused(false)),
    vscode.commands.registerCommand("stet.graduateEntry", (given?: unknown, route?: string) =>
      graduateEntry(given, route),
    ),
    vscode.commands.registerCommand("stet.graduateEntry.trajectory", (given?: unknown) =>
      graduateEntry(given, "trajectory"),
    ),
    vscode.commands.registerCommand("stet.graduateEntry.skill", (given?: unknown) => graduateEntry(given, "skill")),
    vscode.commands.registerCommand("stet.graduateEntry.discard", (given?: unknown) =>
      graduateEntry(given, "discard"),
    ),
    vscode.commands.registerCommand("stet.editNote", (given?: unknown, text?: string) => editNote(given, text)),
    vscode.commands.registerCommand("stet.discardNote", (given?: unknown) => discardNote(given)),
    vscode.commands.registerCommand("stet.listEntries", showEntries),
    vscode.workspace.onDidSaveTextDocument(() => void afterChange()),
  );
}

/** Whether the window has a git repository to serve: a folder of the window is inside one (it,
 * or a folder above it, holds `.git`), or holds one directly below it (one level down only), or
 * an open document is a file inside one (a window with no folder, files opened from a
 * repository). */
function hasRepository(): boolean {
  return (
    folderRepositories().length > 0 ||
    vscode.workspace.textDocuments.some((document) => repositoryFile(document))
  );
}

/** Whether a document is a file inside a git repository. */
function repositoryFile(document: vscode.TextDocument): boolean {
  return document.uri.scheme === "file" && gitRoot(path.dirname(document.uri.fsPath)) !== undefined;
}

/** Tells the palette whether the language server runs: "Stet: Commit Trajectory (Capstone)"
 * is the server's own command, there only while it runs (package.json's when-clause). */
function setServerRunning(running: boolean): void {
  void vscode.commands.executeCommand("setContext", "stet.serverRunning", running);
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel("Stet", { log: true });
  context.subscriptions.push(
    output,
    vscode.commands.registerCommand("stet.addNote", addNote),
    vscode.commands.registerCommand("stet.openSheet", openSheet),
    (briefDocument = new BriefDocument()),
    vscode.workspace.registerTextDocumentContentProvider(BRIEF_SCHEME, briefDocument),
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
  registerViews(context);
  context.subscriptions.push(
    // The repository commands' fallback when the active file is not in one (currentUri).
    vscode.window.onDidChangeActiveTextEditor((editor) => {
      if (editor && windowRepository(editor.document.uri)) {
        lastRepositoryFile = editor.document.uri;
      }
    }),
  );
  if (!hasRepository()) {
    // A window with no git repository (the extension activates in every window once it has
    // started): no server until a folder in (or holding) one is added, or a file inside one
    // is opened.
    output.info(
      "no git repository is open: the language server starts when a folder in one is added or a file in one is opened",
    );
    const waiting: vscode.Disposable[] = [];
    let begun = false;
    const startNow = async () => {
      if (!begun && !client) {
        begun = true;
        waiting.forEach((listener) => listener.dispose());
        await startClient();
        void statusBar?.refresh();
      }
    };
    waiting.push(
      vscode.workspace.onDidChangeWorkspaceFolders(async () => {
        if (folderRepositories().length) {
          await startNow();
        }
      }),
      vscode.workspace.onDidOpenTextDocument(async (document) => {
        if (repositoryFile(document)) {
          await startNow();
        }
      }),
    );
    context.subscriptions.push(...waiting);
    return;
  }
  await startClient();
  void statusBar?.refresh();
}

export async function deactivate(): Promise<void> {
  await stopClient();
}
