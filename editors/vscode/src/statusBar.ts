// The status bar item: the target, its open entries, paused or not, a working trajectory.
import * as vscode from "vscode";
import { listEntries, repositoryRoot, targetLabel } from "./entries";
import { TrajectoryRow } from "./results";
import { hasRepository, repositoryArgument } from "./repositories";
import { clientMade, execute, NO_REPOSITORY, serverRunning, serverStarting } from "./server";

/** The status bar item; `seenChange` runs when what it shows changed (the view then refreshes). */
export class StatusBar {
  readonly item = vscode.window.createStatusBarItem("stet.status", vscode.StatusBarAlignment.Left, 10);
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  /** What the last refresh saw: the view is refreshed when it changes. */
  private seen: string | undefined;

  constructor(private readonly seenChange: () => void) {
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
    if (!serverRunning()) {
      // Not running: never started (a window without a git repository), failed to start, or
      // stopped.
      if (!clientMade() && !hasRepository()) {
        this.item.text = "$(note) Stet";
        this.item.tooltip = `Stet: ${NO_REPOSITORY}.`;
      } else if (!serverStarting()) {
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
      let rows: TrajectoryRow[] = [];
      try {
        const { trajectories } = await execute<{ trajectories: TrajectoryRow[] }>(
          "stet.trajectory.list",
          repositoryArgument(),
        );
        rows = trajectories;
        // Its own: another branch's stays in .stet/cache/ until its capstone.
        working = trajectories.some((row) => row.working && row.id === list.target.key);
      } catch {
        // no trajectories: nothing to show
      }
      const label = targetLabel(list);
      const parts = [`$(note) Stet: ${label}`, `${open} open`];
      if (list.paused) {
        parts.push("$(debug-pause) paused");
      }
      if (working) {
        parts.push("$(history) trajectory");
      }
      this.item.text = parts.join(" · ");
      const seen = JSON.stringify([
        list.target.key,
        list.sheet, // the repository too: two on one branch have one target key
        list.paused,
        list.entries.map((entry) => [entry.id, entry.status, entry.text, entry.placement]),
        // Every trajectory as the view shows it: a session imported from outside (the CLI, a
        // harness's hook) into the working one changes its steps, not whether it is there.
        rows.map((row) => [row.id, row.working, row.steps, row.harnesses]),
      ]);
      this.see(seen);
      this.item.tooltip = new vscode.MarkdownString(
        [
          `**Stet** · ${list.target.kind} \`${list.target.label}\``,
          ...(label !== list.target.label ? [`in ${repositoryRoot(list)}`] : []),
          `${open} open entr${open === 1 ? "y" : "ies"} of ${list.entries.length}`,
          list.paused ? `paused${list.paused_until ? ` until ${list.paused_until}` : ""}` : "not paused",
          working ? "a working trajectory is there" : "no working trajectory",
          "",
          "Click to open the Stet view.",
        ].join("\n\n"),
      );
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.item.text = "$(note) Stet";
      this.item.tooltip = `Stet: ${message}`;
      // A refusal is a state of its own: the view lists again when it comes and when it goes
      // (the sheet readable again, as it was before, is a change from the refusal).
      this.see(JSON.stringify(["refused", message]));
    } finally {
      this.busy = false;
    }
  }

  /** Records what a refresh saw, telling `seenChange` when it differs from the last. */
  private see(seen: string): void {
    if (this.seen !== undefined && seen !== this.seen) {
      this.seenChange();
    }
    this.seen = seen;
  }

  dispose(): void {
    clearInterval(this.timer);
    this.item.dispose();
  }
}
