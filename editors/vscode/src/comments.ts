// Comment threads: the style sheet's anchored entries, one thread per line.
//
// The server publishes a diagnostic per open entry anchored in a document, at the line where
// its anchor is now (source "stet", data {type: "entry", entryId}, message
// "style sheet (<kind>, <author>, <id>): <text>"). The threads mirror those: one thread per
// line carrying entries (a comment per entry), made when the diagnostics arrive, moved when
// they move, gone with the entry. Replying adds a note at the line; a comment can be edited,
// discarded and graduated from its title bar.
import * as path from "node:path";
import * as vscode from "vscode";
import { graduateEntry } from "./entries";
import { Entry, EntryResult, GraduateResult } from "./results";
import { gitRoot, stetScratch } from "./repositories";
import { execute, reportFailure } from "./server";

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

export function registerComments(context: vscode.ExtensionContext): void {
  const controller = vscode.comments.createCommentController("stet", "Stet style sheet");
  controller.options = {
    prompt: "Add a note to the style sheet",
    placeHolder: "A note for the next agent run (it stays out of the repository)",
  };
  controller.commentingRangeProvider = {
    provideCommentingRanges(document: vscode.TextDocument): vscode.Range[] {
      // Only where a note can be anchored: a file of a git repository (not a library's opened
      // by go to definition, which the server would refuse after the note was typed), and not
      // Stet's scratch (the style sheet itself).
      if (
        document.uri.scheme !== "file" ||
        document.lineCount === 0 ||
        !gitRoot(path.dirname(document.uri.fsPath)) ||
        stetScratch(document.uri)
      ) {
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
