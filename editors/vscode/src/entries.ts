// The target's entries from the editor: pick one, open its anchor, edit, discard, graduate
// it; pause and resume the style sheet.
import * as path from "node:path";
import * as vscode from "vscode";
import { LSPErrorCodes, ResponseError } from "vscode-languageclient/node";
import { changed } from "./changes";
import { graduate } from "./graduation";
import { Entry, EntryResult, GraduateResult, ListResult, Target } from "./results";
import { currentRoot, isFile, repositoryArgument, repositoryName } from "./repositories";
import { execute, reportFailure } from "./server";

const ROUTES = [
  { label: "trajectory", description: "graduate into the working trajectory" },
  { label: "skill", description: "propose as a skill (.stet/skills/NAME/SKILL.md)" },
  { label: "discard", description: "discard the entry" },
] as const;

/** The repository's root folder from the sheet's path (ROOT/.stet/…), else the first folder. */
export function repositoryRoot(list: ListResult | undefined): string | undefined {
  const sheet = list?.sheet;
  const at = sheet ? sheet.lastIndexOf(`${path.sep}.stet${path.sep}`) : -1;
  if (sheet && at > 0) {
    return sheet.slice(0, at);
  }
  return vscode.workspace.workspaceFolders?.find((folder) => folder.uri.scheme === "file")?.uri.fsPath;
}

/** The target's label as the status bar and the view show it: with the repository's folder
 * name first when the window has several repositories (two on `main` look alike else). */
export function targetLabel(list: ListResult): string {
  const name = repositoryName(repositoryRoot(list));
  return name ? `${name} · ${list.target.label}` : list.target.label;
}

function entryLine(entry: Entry): number | undefined {
  const line = entry.placement?.line ?? entry.anchor?.line;
  return typeof line === "number" ? line : undefined;
}

export function entryWhere(entry: Entry): string {
  if (!entry.anchor) {
    return "no anchor";
  }
  if (entry.placement?.lost) {
    return `${entry.anchor.path} (anchor lost)`;
  }
  return `${entry.anchor.path}:${entryLine(entry) ?? "?"}`;
}

/** An entry in the Stet view. */
export class EntryItem extends vscode.TreeItem {
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

/** Opens an entry's anchor: its file at the line where the anchored text is now. */
async function openAnchor(entry: Entry, root?: string): Promise<void> {
  if (!entry.anchor) {
    void vscode.window.showInformationMessage(`Stet: entry ${entry.id} has no anchor.`);
    return;
  }
  const base = root ?? currentRoot();
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

export async function listEntries(status?: string): Promise<ListResult> {
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

export async function graduateEntry(given?: unknown, route?: string): Promise<unknown> {
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
    await changed();
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
    await changed();
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
    await changed();
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

const PAUSE_PROMPT = "Pause until (an ISO date or time, e.g. 2026-12-31); empty: until resumed";

type PauseResult = { target: Target; paused: boolean; paused_until: string | null; was_paused?: boolean };

/** Pauses, asking until when; a date the server refuses (not ISO, in the past) is asked for
 * again with its reason, the text kept. Undefined: the box was closed. */
async function pauseAsked(): Promise<PauseResult | undefined> {
  let until = "";
  let refused: string | undefined;
  for (;;) {
    const typed = await vscode.window.showInputBox({
      title: "Stet: Pause Style Sheet",
      prompt: refused ? `${refused}. ${PAUSE_PROMPT}` : PAUSE_PROMPT,
      value: until,
      ignoreFocusOut: true,
    });
    if (typed === undefined) {
      return undefined;
    }
    until = typed.trim();
    const argument: Record<string, unknown> = { ...repositoryArgument() };
    if (until) {
      argument.until = until;
    }
    try {
      return await execute<PauseResult>("stet.pause", argument);
    } catch (error) {
      if (!(error instanceof ResponseError && error.code === LSPErrorCodes.RequestFailed && until)) {
        throw error;
      }
      refused = error.message;
    }
  }
}

async function setPaused(paused: boolean): Promise<void> {
  try {
    const result = paused
      ? await pauseAsked()
      : await execute<PauseResult>("stet.resume", { ...repositoryArgument() });
    if (!result) {
      return;
    }
    const when = result.paused_until ? ` until ${result.paused_until}` : "";
    const state = result.paused ? `paused${when}` : result.was_paused === false ? "was not paused" : "resumed";
    vscode.window.setStatusBarMessage(`Stet: ${result.target.label} ${state}`, 4000);
  } catch (error) {
    reportFailure(paused ? "pausing" : "resuming", error);
  } finally {
    await changed();
  }
}

export function registerEntries(context: vscode.ExtensionContext): void {
  context.subscriptions.push(
    vscode.commands.registerCommand("stet.openEntry", (given: Entry | EntryItem, root?: string) =>
      given instanceof EntryItem ? openAnchor(given.entry, given.root) : openAnchor(given, root),
    ),
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
  );
}
