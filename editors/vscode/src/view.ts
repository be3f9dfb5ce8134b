// The Stet view: "Entries" (by kind) and "Trajectories" (sessions → turns → steps, subagents a
// level of their own), and the status bar item beside it.
import * as path from "node:path";
import * as vscode from "vscode";
import { changed, onChange } from "./changes";
import { EntryItem, repositoryRoot, targetLabel } from "./entries";
import { Entry, KINDS, ListResult, OutlineNodeRow, OutlineResult, StepRow, TrajectoryRow } from "./results";
import { repositoryArgument } from "./repositories";
import { execute, whenStarted } from "./server";
import { StatusBar } from "./statusBar";

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
    if (row.working && row.orphaned) {
      // Its branch was deleted, or HEAD left its detached HEAD: only a capstone naming it
      // commits it (the row's "Commit Trajectory (Capstone)…").
      this.label = `left ${row.id}`;
      this.description = `left by ${row.target} · ${this.description}`;
      this.tooltip = `${row.target} is gone or HEAD left it: Commit Trajectory (Capstone)… commits this working trajectory on top of HEAD`;
      this.contextValue = "stet-trajectory-left";
    }
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

class StetTree implements vscode.TreeDataProvider<Node> {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  constructor(private readonly output: vscode.LogOutputChannel) {}

  readonly onDidChangeTreeData = this.changed.event;
  list: ListResult | undefined;
  /** `{uri}` the tree's root was listed with: its trajectories come from the same repository. */
  private where: Record<string, unknown> = {};
  /** Each trajectory's outline by its events.jsonl's time and size: a refresh of the view
   * (any change of the sheet) gives the same items back while the file is unchanged, so a
   * click on a row is never lost to a row that was just replaced. */
  private readonly outlines = new Map<string, { stamp: string; items: OutlineItem[] }>();

  refresh(): void {
    this.recheck = 0;
    this.changed.fire(undefined);
  }

  /** Ids of the nodes shown expanded (the groups start so). */
  private readonly expanded = new Set<string>(["group:entries", "group:trajectories"]);
  /** Since the tree's root was last listed: the ids listed, and those whose children were
   * asked for. */
  private listed = new Set<string>();
  private asked = new Set<string>();
  private checkTimer: NodeJS.Timeout | undefined;
  private recheck = 0;

  /** Follows what is expanded in `view`, and makes sure each expanded node's children
   * are shown: when a refresh lands while VS Code asks for the children of the nodes it
   * just listed, it answers that request itself with none ("No tree item with id … found"
   * in the extension host's log) and shows the node empty until the next refresh. */
  follow(view: vscode.TreeView<Node>): vscode.Disposable {
    return vscode.Disposable.from(
      view.onDidExpandElement(({ element }) => element.id && this.expanded.add(element.id)),
      view.onDidCollapseElement(({ element }) => element.id && this.expanded.delete(element.id)),
      new vscode.Disposable(() => clearTimeout(this.checkTimer)),
    );
  }

  /** Records that VS Code asks for `node`'s children (the root's when undefined). */
  private asking(node: Node | undefined): void {
    if (!node) {
      this.listed.clear();
      this.asked.clear();
    } else if (node.id) {
      this.asked.add(node.id);
    }
  }

  /** Records a listing and checks, once the tree is still for a moment, that every expanded
   * node listed had its children asked for. */
  private listing(children: Node[]): Node[] {
    children.forEach((child) => child.id && this.listed.add(child.id));
    clearTimeout(this.checkTimer);
    this.checkTimer = setTimeout(() => this.check(), 1500);
    return children;
  }

  private check(): void {
    const dropped = [...this.listed].filter((id) => this.expanded.has(id) && !this.asked.has(id));
    this.recheck = dropped.length ? this.recheck + 1 : 0;
    if (this.recheck > 3) {
      // Never asked for after three listings: collapsed in a state VS Code restored (the
      // groups start expanded only in a new workspace), or the view is hidden.
      dropped.forEach((id) => this.expanded.delete(id));
      this.recheck = 0;
    } else if (dropped.length) {
      this.output.info("the Stet view: listed again (VS Code dropped an expanded node's children)");
      this.changed.fire(undefined);
    }
  }

  getTreeItem(node: Node): vscode.TreeItem {
    return node;
  }

  /** Sessions, turns and subagents with their steps, as the server's outline places them. */
  private async outline(row: TrajectoryRow, where: Record<string, unknown>): Promise<OutlineItem[]> {
    const stamp = await this.eventsStamp(row);
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

  /** The time and size of a trajectory's events.jsonl; undefined when it cannot be told. */
  private async eventsStamp(row: TrajectoryRow): Promise<string | undefined> {
    const root = repositoryRoot(this.list);
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

  async getChildren(node?: Node): Promise<Node[]> {
    this.asking(node);
    return this.listing(await this.children(node));
  }

  private async children(node?: Node): Promise<Node[]> {
    if (!(await whenStarted())) {
      return [];
    }
    try {
      if (!node) {
        this.where = repositoryArgument();
        this.list = await execute<ListResult>("stet.note.list", this.where);
        const entries = new GroupItem(`Entries · ${targetLabel(this.list)}`, "entries", this.list.entries);
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
      const message = error instanceof Error ? error.message : String(error);
      this.output.warn(`the Stet view: ${message}`);
      // Said in the view itself: an empty one shows "the server is starting, or this folder is
      // not in a git repository", which is neither when the server refused (an unreadable sheet).
      const problem = new vscode.TreeItem(message, vscode.TreeItemCollapsibleState.None);
      problem.iconPath = new vscode.ThemeIcon("error");
      problem.tooltip = `Stet: ${message}`;
      problem.contextValue = "stet-problem";
      return [problem];
    }
    return [];
  }
}

export function registerViews(context: vscode.ExtensionContext, output: vscode.LogOutputChannel): void {
  const view = new StetTree(output);
  // What the status bar item sees change (a CLI or an agent wrote the sheet, a session was
  // imported) is a change for every listener: the view, an open brief.
  const statusBar = new StatusBar(() => void changed());
  const tree = vscode.window.createTreeView("stet.tree", { treeDataProvider: view, showCollapseAll: true });
  context.subscriptions.push(
    statusBar,
    onChange(() => statusBar.refresh()),
    onChange(() => view.refresh()),
    tree,
    view.follow(tree),
    vscode.commands.registerCommand("stet.showView", () => vscode.commands.executeCommand("stet.tree.focus")),
    vscode.commands.registerCommand("stet.refreshView", changed),
    vscode.workspace.onDidSaveTextDocument(() => void changed()),
  );
}
