// What shows the target's state (the status bar, the Stet view) listens here; a command that
// may have changed the style sheet or the trajectories says so.
import * as vscode from "vscode";

const listeners: (() => unknown)[] = [];

/** Calls `listener` after each change, in the order the listeners came. */
export function onChange(listener: () => unknown): vscode.Disposable {
  listeners.push(listener);
  return new vscode.Disposable(() => {
    const at = listeners.indexOf(listener);
    if (at >= 0) {
      listeners.splice(at, 1);
    }
  });
}

/** Tells every listener, one after another. */
export async function changed(): Promise<void> {
  for (const listener of [...listeners]) {
    await listener();
  }
}

/** `changed()` a moment later: the sheet's watcher may lag behind a command's answer. */
export function changedSoon(): void {
  setTimeout(() => void changed(), 100);
}
