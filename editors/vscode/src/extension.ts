// Stet for VS Code: starts the Stet language server (`stet-lsp`) for every file and adds
// commands, comment threads and a view that call the server's commands. Diagnostics, code
// actions, code lenses and hovers come from the server itself, and so does reading the
// `stet.*` settings: it asks for them (workspace/configuration) and registers for their
// changes. Each module below owns one feature and registers its own commands.
import * as vscode from "vscode";
import { registerComments } from "./comments";
import { registerEntries } from "./entries";
import { interceptCommand, registerGraduation } from "./graduation";
import { registerNotes } from "./notes";
import { folderRepositories, followActiveEditor, hasRepository, repositoryFile } from "./repositories";
import { ClientHooks, clientMade, startClient, stopClient } from "./server";
import { registerSteps } from "./steps";
import { registerTrajectories } from "./trajectories";
import { registerViews } from "./view";

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel("Stet", { log: true });
  const hooks: ClientHooks = { output, executeCommand: interceptCommand };
  const restart = async () => {
    await stopClient();
    await startClient(hooks);
  };
  context.subscriptions.push(
    output,
    vscode.commands.registerCommand("stet.restartServer", restart),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration("stet.server")) {
        await restart();
      }
    }),
    { dispose: () => void stopClient() },
    // The repository commands' fallback when the active file is not in one (currentUri).
    followActiveEditor(),
  );
  registerNotes(context);
  registerTrajectories(context);
  registerGraduation(context);
  registerEntries(context);
  registerComments(context);
  registerSteps(context);
  registerViews(context, output);
  if (!hasRepository()) {
    // A window with no git repository (the extension activates in every window once it has
    // started): no server until a folder in (or holding) one is added, or a file inside one
    // is opened.
    output.info(
      "no git repository is open: the language server starts when a folder in one is added or a file in one is opened",
    );
    const waiting: vscode.Disposable[] = [];
    let begun = false;
    const startNow = async () => {
      if (!begun && !clientMade()) {
        begun = true;
        waiting.forEach((listener) => listener.dispose());
        await startClient(hooks);
      }
    };
    waiting.push(
      vscode.workspace.onDidChangeWorkspaceFolders(async () => {
        if (folderRepositories().length) {
          await startNow();
        }
      }),
      vscode.workspace.onDidOpenTextDocument(async (document) => {
        if (repositoryFile(document)) {
          await startNow();
        }
      }),
    );
    context.subscriptions.push(...waiting);
    return;
  }
  await startClient(hooks);
}

export async function deactivate(): Promise<void> {
  await stopClient();
}
