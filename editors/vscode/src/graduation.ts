// Graduation from the editor: a skill's name asked for, the review, the capstone; and the
// middleware every server command run from a code action, a lens or the palette goes through.
import * as vscode from "vscode";
import { ExecuteCommandSignature, LSPErrorCodes, ResponseError } from "vscode-languageclient/node";
import { changedSoon } from "./changes";
import { recordedMessage } from "./notes";
import { CapstoneResult, Entry, GraduateResult, ListResult, TrajectoryRow } from "./results";
import { repositoryArgument } from "./repositories";
import { execute, READ_ONLY, reportFailure, sendCommand } from "./server";
import { pickUnplaced } from "./trajectories";

/** Where a capstone's result is written (made on first use). */
let capstoneOutput: vscode.OutputChannel | undefined;

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
export async function interceptCommand(command: string, args: unknown[], _next: ExecuteCommandSignature): Promise<unknown> {
  if (command === "stet.capstone" && args.length === 0) {
    return capstone();
  }
  try {
    if (command === "stet.graduate") {
      return await graduate(args, sendCommand);
    }
    if (command === "stet.provenance.unplaced") {
      return await pickUnplaced(args);
    }
    const result = await sendCommand(command, args);
    // A quick fix that recorded margin notes says so, as Stet: Record Margin Notes in File does.
    // Accepting review lines likewise (the review, redrawn without them, said nothing else).
    const said =
      command === "stet.margin.record"
        ? recordedMessage(result as { recorded?: Entry[] })
        : command === "stet.graduation.apply"
          ? acceptedMessage(result as { results?: { route?: string }[] })
          : undefined;
    if (said) {
      vscode.window.setStatusBarMessage(said, 6000);
    }
    return result;
  } catch (error) {
    if (!(error instanceof ResponseError && error.code === LSPErrorCodes.RequestCancelled)) {
      const message = error instanceof Error ? error.message : String(error);
      void vscode.window.showErrorMessage(`Stet: ${message}`);
    }
    return undefined;
  } finally {
    if (!READ_ONLY.has(command)) {
      changedSoon();
    }
  }
}

const ROUTE_WORDS: Record<string, string> = {
  trajectory: "into the trajectory",
  skill: "into a skill",
  discard: "discarded",
};

/** What a `stet.graduation.apply` result says was accepted, for the status bar. */
export function acceptedMessage(result: { results?: { route?: string }[] } | undefined): string | undefined {
  const results = result?.results ?? [];
  if (!results.length) {
    return undefined;
  }
  const counts = new Map<string, number>();
  for (const row of results) {
    const route = row.route ?? "";
    counts.set(route, (counts.get(route) ?? 0) + 1);
  }
  const parts = [...counts].map(([route, count]) => `${count} ${ROUTE_WORDS[route] ?? route}`);
  return `Stet: ${results.length} entr${results.length === 1 ? "y" : "ies"} accepted: ${parts.join(", ")}`;
}

/** `stet.graduate`: the skill route without a name asks for one, offering the proposal. */
export async function graduate(args: unknown[], next: ExecuteCommandSignature): Promise<unknown> {
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

/** What a capstone can commit: whether the current target has a working trajectory, its
 * label, and the working trajectories a deleted branch or a left detached HEAD left, which
 * only a capstone naming them commits (`stet.trajectory.list` marks them `orphaned`).
 * Undefined when the server could not tell: the capstone then says. */
async function capstoneTargets(
  where: Record<string, unknown>,
): Promise<{ has: boolean; label: string; left: TrajectoryRow[] } | undefined> {
  try {
    const list = await execute<ListResult>("stet.note.list", where);
    const { trajectories } = await execute<{ trajectories: TrajectoryRow[] }>("stet.trajectory.list", where);
    return {
      has: trajectories.some((row) => row.working && row.id === list.target.key),
      label: list.target.label,
      left: trajectories.filter((row) => row.working && row.orphaned),
    };
  } catch {
    return undefined;
  }
}

/** One line about a trajectory's size, for a quick pick. */
function rowDescription(row: TrajectoryRow): string {
  return [`${row.steps} steps`, ...(row.harnesses ?? [])].join(" · ");
}

const CAPSTONE_TITLE = "Stet: Commit Trajectory (Capstone)";

/** Stet: Commit Trajectory (Capstone): the palette's run of the server's `stet.capstone`, and
 * the Stet view's on a left working trajectory (`target`, as `stet capstone --target` takes
 * it; `uri`: the repository the view listed it from). */
async function capstone(args?: { target?: string; uri?: string }): Promise<CapstoneResult | undefined> {
  const where: Record<string, unknown> = args?.uri ? { uri: args.uri } : { ...repositoryArgument() };
  let target = args?.target;
  if (target === undefined) {
    // Nothing to commit is said before the message and the mode are asked for; the working
    // trajectories left by deleted branches are offered after the current target's own.
    const targets = await capstoneTargets(where);
    if (targets?.left.length) {
      const picked = await vscode.window.showQuickPick(
        [
          ...(targets.has
            ? [{ label: `$(git-branch) ${targets.label}`, description: "this branch's working trajectory", target: undefined }]
            : []),
          ...targets.left.map((row) => ({
            label: `$(history) ${row.target}`,
            description: `left · ${rowDescription(row)}`,
            detail: `${row.id}: its branch was deleted or HEAD left it; committed on top of HEAD`,
            target: row.target,
          })),
        ],
        { title: CAPSTONE_TITLE, placeHolder: "the working trajectory to commit", ignoreFocusOut: true },
      );
      if (!picked) {
        return undefined;
      }
      target = picked.target;
    } else if (targets && !targets.has) {
      const choice = await vscode.window.showInformationMessage(
        `Stet: ${targets.label} has no working trajectory to commit: import an agent session or graduate an entry first.`,
        "Import Agent Session…",
      );
      if (choice) {
        await vscode.commands.executeCommand("stet.importSession");
      }
      return undefined;
    }
  }
  const title = target === undefined ? CAPSTONE_TITLE : `${CAPSTONE_TITLE}: ${target}`;
  const message = await vscode.window.showInputBox({
    title,
    prompt:
      "The commit message (empty: 'Trajectory: ' and the first line of the agent's first request, " +
      "else the trajectory's id); Stet's trailers are added",
    ignoreFocusOut: true,
  });
  if (message === undefined) {
    return undefined;
  }
  const which = target === undefined ? "the working trajectory" : `the working trajectory ${target} left`;
  const mode = await vscode.window.showQuickPick(
    [
      { label: "Dry run", description: "show what would be committed; change nothing", dryRun: true },
      { label: "Commit", description: `commit ${which} on top of HEAD`, dryRun: false },
    ],
    { title, ignoreFocusOut: true },
  );
  if (!mode) {
    return undefined;
  }
  const argument: Record<string, unknown> = { ...where };
  if (target !== undefined) {
    argument.target = target;
  }
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

/** The Stet view's "Commit Trajectory (Capstone)…" on a working trajectory a deleted branch
 * or a left detached HEAD left. */
function capstoneOfRow(item?: { row?: TrajectoryRow; where?: Record<string, unknown> }): Promise<CapstoneResult | undefined> {
  const uri = typeof item?.where?.uri === "string" ? item.where.uri : undefined;
  return item?.row ? capstone({ target: item.row.target, uri }) : capstone();
}

export function registerGraduation(context: vscode.ExtensionContext): void {
  context.subscriptions.push(
    vscode.commands.registerCommand("stet.graduationReview", graduationReview),
    vscode.commands.registerCommand("stet.capstoneTrajectory", capstoneOfRow),
    // "stet.capstone" is the server's own command (registered by the language client); the
    // middleware asks for its arguments when the palette runs it without any.
    { dispose: () => capstoneOutput?.dispose() },
  );
}
