// The language server: where it is, starting and stopping it, and sending it commands.
import * as path from "node:path";
import * as readline from "node:readline";
import type { Readable } from "node:stream";
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
import { changed, changedSoon } from "./changes";
import { hasRepository, isFile } from "./repositories";

/** What the rest of the extension gives the client it starts. */
export interface ClientHooks {
  output: vscode.LogOutputChannel;
  /** The middleware for the server's commands run from code actions, lenses and the palette. */
  executeCommand: (command: string, args: unknown[], next: ExecuteCommandSignature) => Promise<unknown>;
}

let client: LanguageClient | undefined;
/** The client's start while it runs: commands wait for it (the palette is usable earlier). */
let starting: Promise<void> | undefined;

/** Where the server was found, for the messages. */
interface ServerCommand {
  command: string;
  args: string[];
  /** How it was found: "stet.server.path", "the Python extension's interpreter", ".venv", "PATH". */
  source: string;
}

const SERVER_NAME = "stet-lsp";
/**
 * How long `stop` waits for the server to answer `shutdown` before ending it. The server
 * answers once a write it runs has answered, and a write may wait up to 15 s for the style
 * sheet's lock (stet_lsp/core/locking.py); the client's default, 2 s, would end the server
 * first (it is killed 2 s after the wait gives up), and its write with it.
 */
const STOP_TIMEOUT_MS = 20_000;
const EXE = process.platform === "win32" ? ".exe" : "";
const BIN = process.platform === "win32" ? "Scripts" : "bin";

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

/** The server's standard error since its last start: a failure to start quotes its last line
 * (a Python traceback ends with the exception), which the language client only logs. */
let stderrTail: string[] = [];
/** Settles when the server's standard error closes (the process ended). */
let stderrClosed: Promise<void> = Promise.resolve();

/** Lines of `input` to `log`, as the language client does by default. */
function lines(input: Readable, log: (line: string) => void): readline.Interface {
  const reader = readline.createInterface({ input, crlfDelay: Infinity, terminal: false, historySize: 0 });
  reader.on("line", log);
  return reader;
}

/** What the server said last on standard error, waiting a moment for it to end; undefined
 * when it said nothing. */
async function lastWords(): Promise<string | undefined> {
  await Promise.race([stderrClosed, new Promise((resolve) => setTimeout(resolve, 1500))]);
  const last = stderrTail.filter((line) => line.trim()).at(-1)?.trim();
  return last && last.length > 300 ? `${last.slice(0, 300)}…` : last;
}

function createClient(server: ServerCommand, hooks: ClientHooks): LanguageClient {
  const { command, args } = server;
  const serverOptions: ServerOptions = {
    run: { command, args, transport: TransportKind.stdio },
    debug: { command, args, transport: TransportKind.stdio },
  };
  const clientOptions: LanguageClientOptions = {
    // Every file, whatever its language: margin notes live in any comment syntax.
    documentSelector: [{ scheme: "file" }, { scheme: "untitled" }],
    outputChannel: hooks.output,
    // Server commands run from code actions and lenses (and the palette's Stet: Commit
    // Trajectory, which is the server's own stet.capstone) pass through here: where the
    // server leaves a choice to the client, the client asks, then sends the answer.
    middleware: { executeCommand: hooks.executeCommand },
    stdioOptions: {
      stdout: (input, channel) => void lines(input, (line) => channel.info(line)),
      stderr: (input, channel) => {
        stderrTail = [];
        const reader = lines(input, (line) => {
          channel.error(line);
          stderrTail.push(line);
          stderrTail.splice(0, stderrTail.length - 20);
        });
        stderrClosed = new Promise((resolve) => reader.on("close", () => resolve()));
      },
    },
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

/** Starts the server; the status bar and the view then show how that went. */
export async function startClient(hooks: ClientHooks): Promise<void> {
  try {
    await begin(hooks);
  } finally {
    void changed();
  }
}

async function begin(hooks: ClientHooks): Promise<void> {
  const { output } = hooks;
  const problem = serverSettingsProblem();
  if (problem) {
    output.error(problem);
    void vscode.window.showErrorMessage(`Stet: ${problem}: the language server was not started.`);
    return;
  }
  const server = await findServer();
  if (!server) {
    output.error(`stet-lsp not found (stet.server.path, the Python environment, .venv, PATH)`);
    void vscode.window.showErrorMessage(`Stet: the language server (stet-lsp) was not found. ${INSTALL_MESSAGE}`);
    return;
  }
  output.info(`starting ${server.command} (from ${server.source})`);
  stderrTail = []; // not a server's of before (a path that names no file starts none)
  stderrClosed = Promise.resolve();
  client = createClient(server, hooks);
  const started = client;
  started.onDidChangeState((event) => {
    if (client === started) {
      setServerRunning(event.newState === State.Running);
      if (event.newState === State.Running) {
        // Also after the language client started a server that ended again on its own: what
        // the view and the status bar listed while it was down was nothing.
        void changed();
      }
    }
  });
  const start = client.start();
  starting = start;
  try {
    await start;
  } catch (error) {
    // A server that ended at once (a broken install) fails the start with the pipe's error
    // ("write EPIPE"): its own last words say why.
    const said = await lastWords();
    const why = said ? `it ended saying '${said}'` : error instanceof Error ? error.message : String(error);
    void vscode.window
      .showErrorMessage(
        `Stet: could not start the language server '${server.command}' (from ${server.source}): ${why}. ` +
          INSTALL_MESSAGE,
        "Show Output",
      )
      .then((choice) => choice && output.show());
  } finally {
    if (starting === start) {
      starting = undefined;
    }
  }
}

export async function stopClient(): Promise<void> {
  const running = client;
  client = undefined;
  setServerRunning(false);
  const start = starting;
  // A client can only be stopped once it runs: one still starting is waited for, and one
  // that failed to start (or stopped) has nothing to stop.
  await start?.catch(() => undefined);
  if (running?.state === State.Running) {
    await running.stop(STOP_TIMEOUT_MS);
  }
}

/** Whether a client was made (it may have failed to start, or stopped since). */
export function clientMade(): boolean {
  return client !== undefined;
}

/** Whether the server runs. */
export function serverRunning(): boolean {
  return client?.state === State.Running;
}

/** Whether the server is on its way up. */
export function serverStarting(): boolean {
  return starting !== undefined || client?.state === State.Starting;
}

/** Whether the server runs, once a start under way has ended (a failure to start was reported
 * when it happened). */
export async function whenStarted(): Promise<boolean> {
  await starting?.catch(() => undefined);
  return serverRunning();
}

/** Why a window has no server, said to the user: no git repository is open in it. */
export const NO_REPOSITORY =
  "no git repository is open in this window: Stet works on the files of a git repository " +
  "(open a folder inside one, or a file of one; git init makes one)";

/** Sends workspace/executeCommand to the server; a failure is thrown, never shown. */
export async function sendCommand(command: string, args: unknown[]): Promise<unknown> {
  if (!(await whenStarted()) || !client) {
    // A window without a repository starts no server: that, not the server, is the reason.
    throw new Error(client || hasRepository() ? "the Stet language server is not running" : NO_REPOSITORY);
  }
  return client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
}

/** Runs one of the server's commands (workspace/executeCommand with one object argument). */
export async function execute<T>(command: string, argument: Record<string, unknown>): Promise<T> {
  const result = (await sendCommand(command, [argument])) as T;
  if (!READ_ONLY.has(command)) {
    changedSoon(); // the status bar and the view show it
  }
  return result;
}

/** Commands that change nothing: no refresh after them. */
export const READ_ONLY = new Set([
  "stet.graduate.proposal",
  "stet.note.list",
  "stet.note.show",
  "stet.trajectory.list",
  "stet.trajectory.sessions",
  "stet.trajectory.open",
  "stet.trajectory.outline",
  "stet.provenance.unplaced",
  "stet.brief",
  "stet.sheet.open",
]);

export function reportFailure(what: string, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  void vscode.window.showErrorMessage(`Stet: ${what} failed: ${message}`);
}

/** Tells the palette whether the language server runs: "Stet: Commit Trajectory (Capstone)"
 * is the server's own command, there only while it runs (package.json's when-clause). */
function setServerRunning(running: boolean): void {
  void vscode.commands.executeCommand("setContext", "stet.serverRunning", running);
}
