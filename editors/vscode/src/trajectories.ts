// Trajectories from the editor: import an agent session, open a trajectory, mark its steps.
import * as vscode from "vscode";
import { ImportResult, MarkResult, SessionRow, TrajectoryRow, UnplacedResult } from "./results";
import { currentRoot, repositoryArgument, repositoryName } from "./repositories";
import { execute, reportFailure, sendCommand } from "./server";

const VERDICTS = [
  { label: "wrong", description: "the step went wrong" },
  { label: "clever", description: "the step is worth repeating" },
  { label: "note", description: "a remark on the step (needs a text)" },
] as const;

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

/** "Stet: Import Agent Session", naming the repository it goes into when the window has
 * several (the active file's, or the last one used). */
function importTitle(): string {
  const name = repositoryName(currentRoot());
  return name ? `Stet: Import Agent Session into ${name}` : "Stet: Import Agent Session";
}

async function importSession(args?: { path?: string } | string): Promise<ImportResult | undefined> {
  const repository = repositoryArgument();
  const title = importTitle();
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
          title,
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
            title,
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
    // No working trajectory (after a capstone, say): the server asks for a committed one's id,
    // which the palette cannot type; the repository's trajectories are offered instead.
    const picked = argument.id === undefined ? await pickTrajectory(argument, error) : undefined;
    if (picked) {
      await openTrajectory({ ...args, uri: argument.uri as string | undefined, id: picked });
    } else if (picked === undefined) {
      reportFailure("opening the trajectory", error);
    }
  }
}

/** A trajectory of the repository picked, after `refusal` (the server's, for the working one);
 * undefined when there is none to pick, "" on Escape. */
async function pickTrajectory(where: Record<string, unknown>, refusal: unknown): Promise<string | undefined> {
  let rows: TrajectoryRow[];
  try {
    rows = (await execute<{ trajectories: TrajectoryRow[] }>("stet.trajectory.list", where)).trajectories;
  } catch {
    return undefined;
  }
  if (!rows.length) {
    return undefined;
  }
  const reason = refusal instanceof Error ? refusal.message.split(":")[0] : "no working trajectory";
  const picked = await vscode.window.showQuickPick(
    rows.map((row) => ({
      label: `${row.working ? "working " : ""}${row.id}`,
      description: [`${row.steps} steps`, (row.harnesses ?? []).join(", ")].filter(Boolean).join(" · "),
      detail: row.started ?? undefined,
      id: row.id,
    })),
    { title: "Stet: Open Trajectory", placeHolder: `${reason}: pick a trajectory`, ignoreFocusOut: true },
  );
  return picked?.id ?? "";
}

/** `stet.provenance.unplaced` (the lens "agent: N changes that could not be placed"): the
 * server lists the changes and VS Code offers them in a quick pick, worded as their lenses (the
 * server's own offer is a message with a button a change); the one picked opens its step as a
 * single change's lens does. Failures are thrown, for the middleware to report. */
export async function pickUnplaced(args: unknown[]): Promise<unknown> {
  const [argument] = args;
  if (typeof argument !== "object" || argument === null || "pick" in argument) {
    return sendCommand("stet.provenance.unplaced", args); // the server answers as asked
  }
  const request = argument as { uri?: string };
  const listed = (await sendCommand("stet.provenance.unplaced", [{ ...request, pick: false }])) as UnplacedResult;
  if (!listed.changes.length) {
    return listed; // an out-of-date lens: the server told the user so, and no pick is shown
  }
  const where = request.uri ? ` in ${vscode.workspace.asRelativePath(vscode.Uri.parse(request.uri))}` : "";
  const choice = await vscode.window.showQuickPick(
    listed.changes.map((change) => ({ label: change.title, change })),
    {
      title: `Stet: ${listed.changes.length} changes that could not be placed${where}`,
      placeHolder: "Open the step of one",
      ignoreFocusOut: true,
    },
  );
  if (!choice) {
    return listed;
  }
  const { id, step } = choice.change;
  const opened = (await sendCommand("stet.trajectory.open", [{ uri: request.uri, id, step }])) as {
    uri: string;
    shown: boolean;
    line: number;
  };
  if (!opened.shown) {
    const line = new vscode.Range(opened.line, 0, opened.line, 0);
    await vscode.window.showTextDocument(vscode.Uri.parse(opened.uri), { selection: line });
  }
  return { changes: listed.changes, picked: { id, step, ...opened } };
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

export async function markStep(args?: { verdict?: string; text?: string; toSheet?: boolean }): Promise<MarkResult | undefined> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.uri.scheme !== "file" || !TRAJECTORY_FILE.test(editor.document.uri.fsPath)) {
    void vscode.window.showWarningMessage(
      "Stet: open a trajectory (Stet: Open Trajectory) and put the cursor on a step first.",
    );
    return undefined;
  }
  const line = editor.selection.active.line;
  // The prompts' title, naming the step: none are shown when the verdict is given. A line
  // with no step (above the first, a header) is said at once, not after three questions.
  let title = "";
  if (!args?.verdict) {
    const step = await stepAt(editor.document.uri, line);
    if (step === undefined) {
      void vscode.window.showWarningMessage(
        `Stet: no step at line ${line + 1} of ${editor.document.uri.path.split("/").pop()}: put the cursor ` +
          "on a step (its line of events.jsonl, or its section of narration.md) first.",
      );
      return undefined;
    }
    title = `Stet: Mark step ${step}`;
  }
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

export function registerTrajectories(context: vscode.ExtensionContext): void {
  context.subscriptions.push(
    vscode.commands.registerCommand("stet.importSession", importSession),
    vscode.commands.registerCommand("stet.openTrajectory", openTrajectory),
    vscode.commands.registerCommand("stet.markStep", markStep),
  );
}
