// The style sheet from the editor: a note at the cursor, the sheet, the brief, margin notes.
import * as path from "node:path";
import * as vscode from "vscode";
import { ResponseError } from "vscode-languageclient/node";
import { onChange } from "./changes";
import { BriefResult, Entry, EntryResult, KINDS } from "./results";
import { gitRoot, repositoryArgument, stetScratch } from "./repositories";
import { execute, reportFailure } from "./server";

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
  if (stetScratch(uri)) {
    return (
      `${path.basename(uri.fsPath)} is Stet's local scratch (.stet/cache/: the style sheet, working ` +
      "trajectories): anchor the note in a file of the repository, type it into the style sheet, or " +
      "mark a trajectory's step (Stet: Mark Step…)."
    );
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
  /** `{uri}` of the repository the brief was asked for. */
  where: Record<string, unknown> = {};
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  provideTextDocumentContent(): string {
    return this.text;
  }

  update(text: string): void {
    this.text = text;
    this.changed.fire(BriefDocument.uri);
  }

  /** Asks for the brief again while its tab is open: the entries changed. */
  async follow(): Promise<void> {
    const open = vscode.workspace.textDocuments.some(
      (document) => document.uri.toString() === BriefDocument.uri.toString(),
    );
    if (!open) {
      return;
    }
    try {
      const brief = await execute<BriefResult>("stet.brief", this.where);
      if (brief.text !== this.text) {
        this.update(brief.text);
      }
    } catch {
      // the tab keeps the last brief; showing it again says what failed
    }
  }

  dispose(): void {
    this.changed.dispose();
  }
}

async function showBrief(briefDocument: BriefDocument): Promise<void> {
  try {
    // The budget is the server's `stet.brief.budget` setting.
    briefDocument.where = repositoryArgument();
    const brief = await execute<BriefResult>("stet.brief", briefDocument.where);
    briefDocument.update(brief.text);
    const document = await vscode.workspace.openTextDocument(BriefDocument.uri);
    await vscode.window.showTextDocument(document, { preview: false });
  } catch (error) {
    reportFailure("the brief", error);
  }
}

/** What a `stet.margin.record` result says was recorded, for the status bar (as Neovim says it). */
export function recordedMessage(result: { recorded?: Entry[] } | undefined): string | undefined {
  const ids = (result?.recorded ?? []).map((entry) => entry.id);
  if (!ids.length) {
    return undefined;
  }
  return ids.length === 1
    ? `Stet: margin note recorded as entry ${ids[0]}`
    : `Stet: ${ids.length} margin notes recorded as entries ${ids.join(", ")}`;
}

async function recordMarginNotes(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showWarningMessage("Stet: open a file with margin notes first.");
    return;
  }
  try {
    const result = await execute<{ recorded?: Entry[] }>("stet.margin.record", {
      uri: editor.document.uri.toString(),
      all: true,
    });
    const said = recordedMessage(result);
    if (said) {
      vscode.window.setStatusBarMessage(said, 6000);
    }
  } catch (error) {
    // A file without margin notes is no failure: the server says which file and what a note is.
    if (error instanceof ResponseError && (error.data as { reason?: unknown } | undefined)?.reason === "no-margin-note") {
      void vscode.window.showInformationMessage(`Stet: ${error.message}.`);
      return;
    }
    reportFailure("recording the margin notes", error);
  }
}

export function registerNotes(context: vscode.ExtensionContext): void {
  const briefDocument = new BriefDocument();
  context.subscriptions.push(
    vscode.commands.registerCommand("stet.addNote", addNote),
    vscode.commands.registerCommand("stet.openSheet", openSheet),
    briefDocument,
    vscode.workspace.registerTextDocumentContentProvider(BRIEF_SCHEME, briefDocument),
    vscode.commands.registerCommand("stet.showBrief", () => showBrief(briefDocument)),
    onChange(() => briefDocument.follow()),
    vscode.commands.registerCommand("stet.recordMarginNotes", recordMarginNotes),
  );
}
