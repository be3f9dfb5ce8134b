// Which git repository a command is about: the window's folders, the active file, the last
// file of a repository that was active.
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";

export function isFile(path: string): boolean {
  try {
    return fs.statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The root of the git repository holding `fsPath` (a file or folder): the nearest folder, it
 * or above it, holding `.git` (a folder, or a file in a worktree or submodule). */
export function gitRoot(fsPath: string): string | undefined {
  for (let at = path.resolve(fsPath); ; at = path.dirname(at)) {
    if (fs.existsSync(path.join(at, ".git"))) {
      return at;
    }
    if (path.dirname(at) === at) {
      return undefined;
    }
  }
}

/** Whether `inner` is `outer` or inside it. */
function within(inner: string, outer: string): boolean {
  const relative = path.relative(outer, inner);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

/** The window's folders on disk. */
export function fileFolders(): string[] {
  return (vscode.workspace.workspaceFolders ?? [])
    .filter((folder) => folder.uri.scheme === "file")
    .map((folder) => folder.uri.fsPath);
}

/** The git repositories of the window's folders: the one each folder is in, else the ones
 * directly below it (one level down only: a folder holding several checkouts side by side). */
export function folderRepositories(): string[] {
  const found: string[] = [];
  for (const folder of fileFolders()) {
    const root = gitRoot(folder);
    if (root) {
      found.push(root);
      continue;
    }
    let children: fs.Dirent[] = [];
    try {
      children = fs.readdirSync(folder, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const child of children) {
      if (child.isDirectory() && fs.existsSync(path.join(folder, child.name, ".git"))) {
        found.push(path.join(folder, child.name));
      }
    }
  }
  return [...new Set(found)];
}

/** The repository of a document the commands may work on: a file inside a git repository that
 * is one of the window's (it holds a folder of the window or lies inside one); with no folder
 * open, any git repository. Undefined for other files (a library's, opened by go to
 * definition), untitled editors and other schemes. */
export function windowRepository(uri: vscode.Uri | undefined): string | undefined {
  if (uri?.scheme !== "file") {
    return undefined;
  }
  const root = gitRoot(path.dirname(uri.fsPath));
  if (!root) {
    return undefined;
  }
  const folders = fileFolders();
  if (folders.length && !folders.some((folder) => within(folder, root) || within(root, folder))) {
    return undefined;
  }
  return root;
}

/** The last active editor's file that was in one of the window's repositories. */
let lastRepositoryFile: vscode.Uri | undefined;

/** Keeps the last active file of a repository (currentUri's fallback). */
export function followActiveEditor(): vscode.Disposable {
  return vscode.window.onDidChangeActiveTextEditor((editor) => {
    if (editor && windowRepository(editor.document.uri)) {
      lastRepositoryFile = editor.document.uri;
    }
  });
}

/**
 * The `uri` argument of a command about the repository: the active editor's file when it is in
 * one of the window's repositories (windowRepository); else the last such file that was active
 * (a file outside, say a library's opened by go to definition, is not one: the server would
 * refuse it); else the first repository of the window's folders, else its first folder.
 * Undefined when there is none of these (an untitled editor in an empty window): the server
 * then takes the workspace's repository if there is only one.
 */
export function currentUri(): vscode.Uri | undefined {
  const active = vscode.window.activeTextEditor?.document.uri;
  if (active && windowRepository(active)) {
    lastRepositoryFile = active;
    return active;
  }
  if (lastRepositoryFile && windowRepository(lastRepositoryFile)) {
    return lastRepositoryFile;
  }
  const [repository] = folderRepositories();
  if (repository) {
    return vscode.Uri.file(repository);
  }
  return vscode.workspace.workspaceFolders?.find((folder) => folder.uri.scheme === "file")?.uri;
}

/** The name a repository goes by where the window has several (its folder's), so that two
 * on one branch can be told apart; undefined where it has one. */
export function repositoryName(root: string | undefined): string | undefined {
  return root && folderRepositories().length > 1 ? path.basename(root) : undefined;
}

/** The root of the repository currentUri() is in (or is). */
export function currentRoot(): string | undefined {
  const uri = currentUri();
  return uri?.scheme === "file" ? gitRoot(uri.fsPath) : undefined;
}

/** `{uri}` for currentUri(), or no argument at all. */
export function repositoryArgument(): Record<string, unknown> {
  const uri = currentUri();
  return uri ? { uri: uri.toString() } : {};
}

/** Whether the window has a git repository to serve: a folder of the window is inside one (it,
 * or a folder above it, holds `.git`), or holds one directly below it (one level down only), or
 * an open document is a file inside one (a window with no folder, files opened from a
 * repository). */
export function hasRepository(): boolean {
  return (
    folderRepositories().length > 0 ||
    vscode.workspace.textDocuments.some((document) => repositoryFile(document))
  );
}

/** Whether a document is a file inside a git repository. */
export function repositoryFile(document: vscode.TextDocument): boolean {
  return document.uri.scheme === "file" && gitRoot(path.dirname(document.uri.fsPath)) !== undefined;
}

/** Whether a file is Stet's local scratch, `.stet/cache/` of its repository (the style sheet
 * itself, working trajectories): every write or import rewrites it, so no note is anchored
 * there (the server refuses it too). */
export function stetScratch(uri: vscode.Uri): boolean {
  if (uri.scheme !== "file") {
    return false;
  }
  const root = gitRoot(path.dirname(uri.fsPath));
  const parts = root ? path.relative(root, uri.fsPath).split(path.sep) : [];
  return parts.length > 2 && parts[0].toLowerCase() === ".stet" && parts[1].toLowerCase() === "cache";
}
