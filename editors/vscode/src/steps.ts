// A step of a trajectory opened from the Stet view: at its line of events.jsonl, or a file
// change as a diff of two read-only documents built from the step's unified diff.
import * as vscode from "vscode";
import { markStep } from "./trajectories";
import { StepRow } from "./results";

/** A step as the view shows it: its trajectory, the events.jsonl it is on, its row there. */
export interface ShownStep {
  trajectory: string;
  file: vscode.Uri;
  row: StepRow;
}

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

/** Opens a file change of the tree as a diff: "<path> (step N)", from the step's line of
 * events.jsonl. */
async function openStepDiff(diffDocuments: DiffDocuments, item: ShownStep): Promise<void> {
  const change = await changeOf(item);
  if (!change) {
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
async function changeOf(item: ShownStep): Promise<{ path: string; diff: string; content?: string } | undefined> {
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

/** Opens a step: the trajectory's events.jsonl at the step's line. */
async function openStep(item: ShownStep): Promise<vscode.TextEditor> {
  const position = new vscode.Position(item.row.line, 0);
  return vscode.window.showTextDocument(item.file, { selection: new vscode.Range(position, position) });
}

export function registerSteps(context: vscode.ExtensionContext): void {
  const diffDocuments = new DiffDocuments();
  context.subscriptions.push(
    vscode.commands.registerCommand("stet.openStep", openStep),
    vscode.commands.registerCommand("stet.openStepDiff", (item: ShownStep) => openStepDiff(diffDocuments, item)),
    vscode.workspace.registerTextDocumentContentProvider(DIFF_SCHEME, diffDocuments),
    vscode.commands.registerCommand("stet.markStepInTree", async (item: ShownStep) => {
      await openStep(item);
      await markStep();
    }),
  );
}
