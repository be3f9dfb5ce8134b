// Drives VS Code (code-server) in Debian's Chromium like a reviewer, and writes what it saw as
// JSON for test_editor_vscode.py to assert on. config.scenario picks what it does:
// - "notes" (the default): opens a file with a margin comment, checks the Problems panel,
//   records the note through the quick fix (Ctrl+. and Enter), adds a note with "Stet: Add Note
//   at Cursor" and one through a comment thread, changes a stet.* setting in the Settings editor;
// - "mark": "Stet: Open Trajectory", then "Stet: Mark Step…" on a line of the narration;
// - "graduate": "Stet: Open Style Sheet", Ctrl+. on an entry: "Propose entry ID as a skill" with
//   the name typed, then "Stet: Commit Trajectory (Capstone)" as a dry run and for real;
// - "sidebar": the status bar item (branch, open entries), a click opens the Stet view, a click
//   on the entry in its tree opens the anchor;
// - "threads": entries recorded before the window opened are comment threads (the Comments
//   panel lists them with their lines), follow lines inserted above them, and are edited,
//   replied to, discarded and graduated from the thread;
// - "scenario": the whole review in one window: the margin note in the Problems panel,
//   recorded with the quick fix; the entry in the side bar and, once the file is opened
//   again, in a comment thread; "Stet: Import Agent Session…" from the quick pick and its
//   narration; a step opened from the tree (events.jsonl at its line) and a file change's
//   diff; the provenance hover on a line the agent wrote; the entry graduated from the tree's
//   context menu; "Stet: Commit Trajectory (Capstone)" and the commit's id;
// - "upkeep": "Stet: Pause Style Sheet…", "Stet: Edit Note…", "Stet: Discard Entry…" and
//   "Stet: Resume Style Sheet" from the palette; the status bar and the Problems panel after;
// - "sheetfile": the style sheet holding a pasted secret and a lost anchor: the Problems panel,
//   the lenses, "Redact now" (the editor, the tab, the file on disk), then Ctrl+S;
// - "outside": a file outside the repository active: the status bar, "Stet: Open Style Sheet"
//   and "Stet: Add Note at Cursor" (which says why it adds nothing there);
// - "tree": the Stet view's trajectory tree, its rows (config.expand, in order) expanded; returns
//   every row's level, label and description (a tall viewport keeps every row drawn);
// - "commentranges": the comment gutter in a file of the repository and in one outside it;
// - "opencommitted": "Stet: Open Trajectory" with only a committed trajectory;
// - "viewproblem": the Stet view when the server refuses to list the style sheet;
// - "multiroot": a window of two repositories on one branch, a file of each active in turn;
// - "capstonenone": the capstone with no working trajectory;
// - "capstonetarget": working trajectories deleted branches left: the Stet view's row of one,
//   "Commit Trajectory (Capstone)…" from its context menu (refused: the git index is locked),
//   then, the lock gone, "Stet: Commit Trajectory (Capstone)" with another picked;
// - "outsideimport": a session imported from the command line while the view shows the
//   working trajectory;
// - "recordall": "Stet: Record Margin Notes in File", twice;
// - "marknostep": "Stet: Mark Step…" on a line of the narration above every step;
// - "scratchnote": "Stet: Add Note at Cursor" in the style sheet itself;
// - "crashedstart": a server that ends at once: the notification and its "Show Output";
// - "norepo": a folder in no git repository: the status bar item and a command's message;
// - "viewheal": the Stet view while the server is killed and started again;
// - "viewrecover": the Stet view while the style sheet is for a while one the server refuses;
// - "unplaced": the lens of a file's changes provenance could not place, their quick pick;
// - "failedstart", "pausedrecord", "importfile", "messages", "dirtysheet", "listgone", "branchswitch": see
//   their functions below.
// Usage: node vscode_drive.mjs CONFIG.json   (url, scenario, file, marginLine, noteLine, noteText,
// commentLine, commentText, root, stetCli, agentLine, agentText, sessionPrompt, markLine,
// markText, entryId, entryLine, entryText, branch, otherBranch, stepLabel, stepLine, sessionLabel, changeLabel,
// diffTitle, diffShows, provenanceFile, provenanceFileName, threadEntries, editedText, replyText,
// badName, skillName, capstoneMessage, pauseUntil, editText, discardText, expand, viewportHeight,
// secretNote, secretLine, secretId, sheetPath, lensCount, outsideFile, outsideName, outsideShows,
// sheetName, briefTab, briefShows, toastShows, fileShows, lensTitle, pickTitle, typed, startLog, serverPath, transcript, screenshots, out, chromium,
// timeoutMs).
import { execFileSync } from "node:child_process";
import { readFileSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const TIMEOUT = config.timeoutMs ?? 30000;
const result = { steps: [], screenshots: [] };
const started = Date.now();
let shot = 0;

function step(name) {
  result.steps.push({ name, ms: Date.now() - started });
}

async function screenshot(page, name) {
  shot += 1;
  const path = join(config.screenshots, `${String(shot).padStart(2, "0")}-${name}.png`);
  await page.screenshot({ path });
  result.screenshots.push(path);
  return path;
}

/** Waits until `probe()` returns something truthy, polling; returns it. */
async function until(what, probe, timeout = TIMEOUT) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = await probe();
    if (value) {
      step(what);
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

/**
 * Does `act`, then waits until `probe()` returns something truthy; while it does not, does
 * `act` again every `every` ms: under load a click can be lost, or land on a row that the
 * view was drawing again. An `act` that throws (its element not there yet) is tried again.
 */
async function acting(what, act, probe, { every = 2000, timeout = TIMEOUT } = {}) {
  await act().catch(() => undefined);
  let acted = Date.now();
  return until(
    what,
    async () => {
      const value = await probe();
      if (value) {
        return value;
      }
      if (Date.now() - acted >= every) {
        await act().catch(() => undefined);
        acted = Date.now();
      }
      return null;
    },
    timeout,
  );
}

/**
 * Right-clicks `row` (again while its menu does not show `item`: a right-click elsewhere
 * closes an open menu and opens the row's); returns the menu's item. No Escape in between:
 * in a comment thread it would close the thread.
 */
async function contextMenuItem(page, what, row, item) {
  const menuItem = page.locator(".context-view .action-item", { hasText: item }).first();
  await acting(
    what,
    () => row.click({ button: "right", timeout: 5000 }),
    () => menuItem.isVisible(),
    { every: 3000 },
  );
  return menuItem;
}

/**
 * Chooses a context menu's item: a click, then Enter on the item (which the pointer has
 * focused) while the menu still shows after it: a click on a menu item is sometimes taken by
 * an overlay and does nothing.
 */
async function chooseMenuItem(page, menuItem) {
  await menuItem.click();
  const menu = page.locator(".context-view .monaco-menu");
  for (let tries = 0; tries < 3; tries++) {
    await page.waitForTimeout(700);
    if (!(await menu.isVisible().catch(() => false))) {
      return;
    }
    await menuItem.hover().catch(() => undefined);
    await page.keyboard.press("Enter");
  }
}

/** Clicks the Stet status bar item (again while the view does not list the entry); the rows. */
async function viewFromStatusBar(item, rows) {
  return acting(
    "entry in the Stet view",
    () => item.first().locator("a, .statusbar-item-label").first().click({ timeout: 5000 }),
    async () => {
      const found = await texts(rows);
      return found.some((t) => t.includes(config.entryText)) ? found : null;
    },
  );
}

const texts = (locator) => locator.evaluateAll((nodes) => nodes.map((n) => n.textContent ?? ""));

/**
 * The quick fixes (Ctrl+.) at the cursor, once one of them includes `title`. A menu opened
 * before the server had the document (or its diagnostics) lists other fixes and stays as it
 * is: it is closed and asked for again, at most every 1.5 s, until the deadline. Ctrl+. is
 * never pressed on an open menu (closed with Escape first): there it may apply the menu's
 * first fix (a graduation into the trajectory, on a style sheet entry).
 */
async function quickFixes(page, what, title) {
  const actions = page.locator(".action-widget .monaco-list-row");
  let asked = 0;
  return until(what, async () => {
    const found = await texts(actions);
    if (found.some((t) => t.includes(title))) {
      return found;
    }
    if (Date.now() - asked < 1500) {
      return null; // the menu asked for may still be opening or filling in
    }
    await page.keyboard.press("Escape");
    await page.keyboard.press("Control+.");
    asked = Date.now();
    return null;
  });
}

async function editorText(page) {
  return (await texts(page.locator(".editor-instance .monaco-editor .view-lines"))).join("\n");
}

/**
 * Runs a command from the command palette (F1), by its title. Right after the workbench shows,
 * the extensions' commands may not be listed yet: the palette is opened again until they are.
 */
async function runCommand(page, title) {
  const input = page.locator(".quick-input-widget input");
  const focused = page.locator(".quick-input-list .monaco-list-row.focused");
  await until(`palette shows ${title}`, async () => {
    await page.keyboard.press("F1");
    await input.waitFor({ state: "visible", timeout: TIMEOUT });
    await input.fill(`>${title}`);
    for (let i = 0; i < 10; i += 1) {
      if ((await texts(focused)).some((t) => t.includes(title))) {
        return true;
      }
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    await page.keyboard.press("Escape");
    return false;
  });
  await page.keyboard.press("Enter");
}

async function goToLine(page, line) {
  await page.keyboard.press("Control+G");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible", timeout: TIMEOUT });
  await input.fill(`:${line}`);
  await page.keyboard.press("Enter");
  await input.waitFor({ state: "hidden", timeout: TIMEOUT });
}

async function openWorkbench(page) {
  await page.goto(config.url, { timeout: TIMEOUT });
  await page.locator(".monaco-workbench").waitFor({ timeout: TIMEOUT * 2 });
  step("workbench");
}

async function runNotes(page) {
  await openWorkbench(page);

  // Open the file through quick open (Ctrl+P), as a user would.
  await until("quick open", async () => {
    await page.keyboard.press("Control+P");
    return page.locator(".quick-input-widget input").isVisible();
  });
  await page.locator(".quick-input-widget input").fill(config.file);
  await until("quick open lists the file", async () =>
    (await texts(page.locator(".quick-input-list .monaco-list-row"))).some((t) => t.includes(config.fileName)),
  );
  await page.keyboard.press("Enter");
  await until("file open", async () => (await editorText(page)).includes("stet:"));
  await screenshot(page, "file-open");

  // The margin comment in the Problems panel.
  await page.keyboard.press("Control+Shift+M");
  const rows = page.locator(".markers-panel .monaco-list-row");
  result.problems = await until(
    "margin note in Problems",
    async () => {
      const found = await texts(rows);
      return found.some((t) => t.includes("margin note")) ? found : null;
    },
    TIMEOUT * 2,
  );
  await screenshot(page, "problems");

  // Ctrl+. on the comment's line, pick "Record margin note to style sheet", Enter.
  await page.locator(".editor-instance .monaco-editor textarea").first().focus();
  await goToLine(page, config.marginLine + 1);
  result.actions = await quickFixes(page, "quick fixes", "Record margin note to style sheet");
  await screenshot(page, "quick-fix");
  for (let i = 0; i < 20; i += 1) {
    const focused = await texts(page.locator(".action-widget .monaco-list-row.focused"));
    if (focused.some((t) => t.includes("Record margin note to style sheet"))) {
      break;
    }
    await page.keyboard.press("ArrowDown");
  }
  await page.keyboard.press("Enter");
  await until("margin comment removed", async () => !(await editorText(page)).includes("stet:"));
  await page.keyboard.press("Control+S");
  result.afterRecord = await editorText(page);
  result.problemsAfterRecord = await until("entry in Problems", async () => {
    const found = await texts(rows);
    return found.some((t) => t.includes("style sheet")) && !found.some((t) => t.includes("margin note"))
      ? found
      : null;
  });

  // The entry's code lens on its line.
  result.lenses = await until("code lens", async () => {
    const found = await texts(page.locator(".codelens-decoration"));
    return found.some((t) => t.includes("style sheet:")) ? found : null;
  });
  await screenshot(page, "recorded");

  // "Stet: Add Note at Cursor" from the command palette: text, then kind.
  await page.locator(".editor-instance .monaco-editor textarea").first().focus();
  await goToLine(page, config.noteLine + 1);
  await runCommand(page, "Stet: Add Note at Cursor");
  const input = page.locator(".quick-input-widget input");
  await until("note input box", async () =>
    (await page.locator(".quick-input-widget .quick-input-title, .quick-input-widget .quick-input-message").allTextContents())
      .join(" ")
      .includes("Note"),
  );
  await input.fill(config.noteText);
  await page.keyboard.press("Enter");
  await until("kind picker", async () =>
    (await texts(page.locator(".quick-input-list .monaco-list-row"))).some((t) => t.includes("convention")),
  );
  await input.fill("convention");
  await page.keyboard.press("Enter");
  // The extension names the new entry in the status bar (for 4 s), from the command's result.
  result.noteStatus = await until("note added in the status bar", async () => {
    const found = await texts(page.locator(".statusbar .statusbar-item"));
    return found.find((t) => /note \S+ added/.test(t)) ?? null;
  });
  result.problemsAfterNote = await until("note in Problems", async () => {
    const found = await texts(rows);
    return found.some((t) => t.includes(config.noteText)) ? found : null;
  });
  await screenshot(page, "note-added");

  // A comment thread on a line ("Comments: Add Comment on Current Selection", then Ctrl+Enter,
  // which runs the thread's first action, "Add to Style Sheet").
  await page.locator(".editor-instance .monaco-editor textarea").first().focus();
  await goToLine(page, config.commentLine + 1);
  await runCommand(page, "Add Comment on Current Selection");
  const reply = page.locator(".review-widget .monaco-editor textarea").first();
  await reply.waitFor({ state: "attached", timeout: TIMEOUT });
  await until("comment editor focused", async () =>
    page.evaluate(() => document.activeElement?.closest(".review-widget") != null),
  );
  await page.keyboard.type(config.commentText);
  await screenshot(page, "comment-typed");
  await page.keyboard.press("Control+Enter");
  // The thread stays, now the entry's, and shows up in the Comments panel.
  await showComments(page);
  result.commentThread = await until("comment in the Comments panel", async () => {
    const found = await texts(page.locator(".monaco-list-row", { hasText: config.commentText }));
    return found.length ? found : null;
  });
  await screenshot(page, "comment-thread");
  await page.keyboard.press("Control+Shift+M");
  result.problemsAfterComment = await until("comment in Problems", async () => {
    const found = await texts(rows);
    return found.some((t) => t.includes(config.commentText)) ? found : null;
  });
  await screenshot(page, "comment-added");

  // An agent writes through the CLI: VS Code reports the sheet's change to the server
  // (workspace/didChangeWatchedFiles, registered by the server), and the entry shows.
  const [cli, ...cliArgs] = config.stetCli;
  execFileSync(
    cli,
    [...cliArgs, "note", "add", config.agentText, "--author", "agent", "--kind", "convention",
      "--file", config.file, "--line", String(config.agentLine + 1)],
    { cwd: config.root, stdio: ["ignore", "pipe", "pipe"], timeout: TIMEOUT },
  );
  const written = Date.now();
  try {
    result.problemsAfterAgent = await until(
      "agent note in Problems",
      async () => {
        const found = await texts(rows);
        return found.some((t) => t.includes(config.agentText)) ? found : null;
      },
      10000,
    );
    result.agentRefreshMs = Date.now() - written;
  } catch {
    // Reported, not fatal: the test says what is missing after checking everything else.
    result.problemsAfterAgent = await texts(rows);
    result.agentRefreshMs = null;
  }
  await screenshot(page, "agent-note");

  // A settings change reaches the running server (didChangeConfiguration): entries become
  // warnings in the Problems panel.
  // Through the Settings editor, as a user would (code-server does not notice a settings
  // file written behind its back).
  await runCommand(page, "Preferences: Open User Settings");
  const search = page.locator(".settings-editor .suggest-input-container textarea, .settings-editor .search-container textarea").first();
  await search.waitFor({ state: "visible", timeout: TIMEOUT });
  await search.focus();
  await page.keyboard.type("stet.entries.severity");
  const select = page.locator(".settings-editor .setting-item-contents select").first();
  await until("severity setting", async () =>
    (await page.locator(".settings-editor .setting-item-contents", { hasText: "Entries" }).count()) > 0 &&
    (await select.count()) > 0,
  );
  await select.selectOption("warning");
  await screenshot(page, "settings-editor");
  await page.keyboard.press("Control+W");
  result.warningRows = await until("entries shown as warnings", async () => {
    const count = await page.locator(".markers-panel .monaco-list-row .codicon-warning").count();
    // The three entries of the steps above, and the agent's when it showed.
    return count >= (result.agentRefreshMs === null ? 3 : 4) ? count : null;
  });
  await screenshot(page, "settings-changed");
}

/** The Comments panel (its rows: "author · text[Ln N]"). */
async function showComments(page) {
  await runCommand(page, "Comments: Focus on Comments View");
  await page.locator(".part.panel .comments-panel, .part.panel .comments-tree, .part.panel [id='workbench.panel.comments']").first()
    .waitFor({ state: "attached", timeout: TIMEOUT }).catch(() => undefined);
}

/** The rows of the Comments panel. */
async function commentRows(page) {
  return texts(page.locator(".part.panel .monaco-list-row"));
}

/** The text of the notification toasts shown now. */
async function toasts(page) {
  return texts(page.locator(".notifications-toasts .notification-toast .notification-list-item-message"));
}

/** "Stet: Open Trajectory" from the palette; waits for the narration in the active editor. */
async function openTrajectory(page) {
  await runCommand(page, "Stet: Open Trajectory");
  // The editor renders spaces as no-break spaces.
  const shown = async () => (await editorText(page)).replace(/\u00a0/g, " ");
  result.activeTab = await until("narration.md open", async () => {
    const [active] = await texts(page.locator(".tabs-container .tab.active"));
    return active?.includes("narration.md") && (await shown()).includes("# Trajectory") ? active : null;
  });
  result.trajectoryText = (await shown()).slice(0, 400);
}

async function runMark(page) {
  await openWorkbench(page);
  await openTrajectory(page);
  await page.locator(".editor-instance .monaco-editor textarea").first().focus();
  await goToLine(page, config.markLine + 1);
  await runCommand(page, "Stet: Mark Step");
  const input = page.locator(".quick-input-widget input");
  const rows = page.locator(".quick-input-list .monaco-list-row");
  result.verdicts = await until("verdict picker", async () => {
    const found = await texts(rows);
    return found.some((t) => t.includes("clever")) ? found : null;
  });
  result.markTitle = (await quickInput(page))?.title;
  await screenshot(page, "verdicts");
  await input.fill("wrong");
  await page.keyboard.press("Enter");
  await until("text input box", async () =>
    (await page.locator(".quick-input-widget .quick-input-title").allTextContents()).join(" ").includes("wrong") &&
    !(await rows.count()),
  );
  await input.fill(config.markText);
  await page.keyboard.press("Enter");
  await until("style sheet choice", async () =>
    (await texts(rows)).some((t) => t.includes("add it to the style sheet")),
  );
  await input.fill("add it to the style sheet");
  await page.keyboard.press("Enter");
  result.marked = await until("mark in the status bar", async () => {
    const found = await texts(page.locator(".statusbar .statusbar-item"));
    return found.find((t) => /step \S+ marked/.test(t)) ?? null;
  });
  await screenshot(page, "marked");
}

/** The text of the panel (the Output view, say). */
async function panelText(page) {
  return (await texts(page.locator(".part.panel .monaco-editor .view-lines"))).join("\n").replace(/\u00a0/g, " ");
}

/** The quick input's title and message, and whether it lists rows (a quick pick) or not (an input box). */
async function quickInput(page) {
  const widget = page.locator(".quick-input-widget");
  if (!(await widget.isVisible())) {
    return null;
  }
  return {
    title: (await widget.locator(".quick-input-title").allTextContents()).join(" "),
    message: (await widget.locator(".quick-input-message").allTextContents()).join(" "),
    rows: await texts(widget.locator(".quick-input-list .monaco-list-row")),
    value: await widget.locator("input").first().inputValue(),
    placeholder: await widget.locator("input").first().getAttribute("placeholder"),
  };
}

/** "Stet: Commit Trajectory (Capstone)": the message (an input box), then "Dry run" or "Commit". */
async function runCapstone(page, message, mode) {
  await runCommand(page, "Stet: Commit Trajectory (Capstone)");
  const input = page.locator(".quick-input-widget input");
  const box = await until("capstone message box", async () => {
    const shown = await quickInput(page);
    return shown?.title.includes("Capstone") && !shown.rows.length ? shown : null;
  });
  result.capstonePrompt = box.message;
  await input.fill(message);
  await page.keyboard.press("Enter");
  await until("capstone mode picker", async () => (await quickInput(page))?.rows.some((t) => t.includes("Dry run")));
  await input.fill(mode);
  await page.keyboard.press("Enter");
}

// The style sheet, Ctrl+. on an entry's line: "Propose entry ID as a skill", the name asked for
// (a bad one first, then config.skillName); the capstone as a dry run, then committed.
async function runGraduate(page) {
  await openWorkbench(page);
  await runCommand(page, "Stet: Open Style Sheet");
  await until("style sheet open", async () => {
    const [active] = await texts(page.locator(".tabs-container .tab.active"));
    const shown = (await editorText(page)).replace(/\u00a0/g, " "); // no-break spaces
    return active?.endsWith(".md") && shown.includes(config.entryText) ? active : null;
  });
  await page.locator(".editor-instance .monaco-editor textarea").first().focus();
  await goToLine(page, config.entryLine + 1);
  const title = `Propose entry ${config.entryId} as a skill`;
  result.actions = await quickFixes(page, "graduation quick fixes", title);
  await screenshot(page, "graduation-actions");
  for (let i = 0; i < 20; i += 1) {
    if ((await texts(page.locator(".action-widget .monaco-list-row.focused"))).some((t) => t.includes(title))) {
      break;
    }
    await page.keyboard.press("ArrowDown");
  }
  await page.keyboard.press("Enter");

  // The name, asked for with the proposed one filled in.
  const input = page.locator(".quick-input-widget input");
  const asked = await until("skill name box", async () => {
    const shown = await quickInput(page);
    return shown?.title.includes("as a skill") ? shown : null;
  });
  result.proposed = asked.value;
  await input.fill(config.badName);
  result.refused = await until("bad name refused", async () => {
    const shown = await quickInput(page);
    return shown?.message.includes("lowercase") ? shown.message : null;
  });
  await screenshot(page, "skill-name-refused");
  await input.fill(config.skillName);
  await until("good name accepted", async () => !(await quickInput(page))?.message.includes("lowercase"));
  await page.keyboard.press("Enter");
  result.graduated = await until("graduation in the status bar", async () => {
    const found = await texts(page.locator(".statusbar .statusbar-item"));
    return found.find((t) => t.includes("into the skill")) ?? null;
  });
  await screenshot(page, "graduated");

  // The capstone: a dry run (the output channel), then the commit (the server's message).
  await runCapstone(page, "", "Dry run");
  result.dryRun = await until("dry run in the output", async () => {
    const text = await panelText(page);
    return text.includes("would commit trajectory") && text.includes("Stet-Trajectory:") ? text : null;
  });
  await screenshot(page, "capstone-dry-run");
  await runCapstone(page, config.capstoneMessage, "Commit");
  result.committed = await until("capstone reported", async () =>
    (await toasts(page)).find((t) => t.includes("committed as") || t.includes("failed")) ?? null,
  );
  await screenshot(page, "capstone");
}

// The status bar item names the branch and the open entries; clicking it opens the Stet view,
// whose tree lists the entry; clicking the entry opens its file at the anchor.
async function runSidebar(page) {
  await openWorkbench(page);
  const item = page.locator(".statusbar .statusbar-item", { hasText: "Stet:" });
  result.status = await until("Stet status bar item", async () => {
    const found = await texts(item);
    return found.find((t) => t.includes(config.branch) && /\d+ open/.test(t)) ?? null;
  });
  await screenshot(page, "status-bar");
  const rows = page.locator(".part.sidebar .monaco-list-row");
  result.tree = await viewFromStatusBar(item, rows);
  await screenshot(page, "stet-view");
  result.activeTab = await acting(
    "anchor's file open",
    () => rows.filter({ hasText: config.entryText }).first().click({ timeout: 5000 }),
    async () => {
      const [active] = await texts(page.locator(".tabs-container .tab.active"));
      return active?.includes(config.fileName) ? active : null;
    },
  );
  result.cursor = await until("cursor at the anchor", async () => {
    const found = await texts(page.locator(".statusbar .statusbar-item"));
    return found.find((t) => /Ln \d+, Col \d+/.test(t)) ?? null;
  });
  await screenshot(page, "anchor-open");
}

/**
 * Opens a file through quick open (Ctrl+P), as a user would, by clicking the file's own row
 * (not a recently opened diff of it, "src/retry.py (step 6)"); waits for `shows` in the
 * editor. The list fills in as the file search answers, so a row can move under the pointer:
 * while the file's tab does not come up, the whole pick is done again.
 */
async function quickOpen(page, file, fileName, shows) {
  const input = page.locator(".quick-input-widget input");
  const row = page
    .locator(".quick-input-list .monaco-list-row")
    .filter({ hasText: fileName })
    .filter({ hasNotText: "(step" })
    .first();
  await acting(
    `${fileName} open`,
    async () => {
      if (!(await input.isVisible())) {
        await page.keyboard.press("Control+P");
        await input.waitFor({ state: "visible", timeout: 3000 });
      }
      await input.fill(file);
      await row.click({ timeout: 3000 });
    },
    async () => {
      const [active] = await texts(page.locator(".tabs-container .tab.active"));
      // The file's own tab ("retry.py", not the diff "src/retry.py (step 6)").
      return (
        active?.trim().startsWith(fileName) &&
        (await editorText(page)).replace(/\u00a0/g, " ").includes(shows)
      );
    },
    { every: 5000 },
  );
}

/** Waits for the Comments panel to list `text` at line `line` (1-based); returns the rows. */
async function commentAt(page, text, line, timeout = TIMEOUT) {
  return until(`comment "${text}" at line ${line}`, async () => {
    const rows = await commentRows(page);
    return rows.some((t) => t.includes(text) && t.includes(`[Ln ${line}]`)) ? rows : null;
  }, timeout);
}

/** Clicks the Comments panel's row of `text`: the thread opens in the editor. */
async function openThread(page, text) {
  const row = page.locator(".part.panel .monaco-list-row", { hasText: text }).first();
  const comment = page.locator(".review-widget .review-comment", { hasText: text }).first();
  await acting(
    `thread of "${text}" open`,
    () => row.click({ timeout: 5000 }),
    () => comment.isVisible(),
  );
  return comment;
}

/** Runs a comment's title action (Edit Note, Discard Entry, …) on the comment showing `text`. */
async function commentAction(page, text, title) {
  const comment = await openThread(page, text);
  await comment.hover();
  const action = comment.locator(`.action-label[aria-label="${title}"], .action-label[title="${title}"]`).first();
  await action.waitFor({ state: "attached", timeout: TIMEOUT });
  await action.click({ force: true });
  return comment;
}

// Entries recorded before the window opened show as comment threads (several on one line in one
// thread), follow lines inserted above them, and are edited, replied to and discarded there.
async function runThreads(page) {
  await openWorkbench(page);
  await quickOpen(page, config.file, config.fileName, "def pay");
  await showComments(page);
  // The panel lists a thread by its first comment (the others are its replies).
  const heads = config.threadEntries.filter(
    (entry, at) => !config.threadEntries.slice(0, at).some((other) => other.line === entry.line),
  );
  for (const entry of heads) {
    result.threadsAtOpen = await commentAt(page, entry.text, entry.line, TIMEOUT * 2);
  }
  await screenshot(page, "threads-at-open");

  // Two lines inserted at the top: the threads move down with their anchors.
  await page.locator(".editor-instance .monaco-editor textarea").first().focus();
  await page.keyboard.press("Control+Home");
  await page.keyboard.type("# one\n# two\n");
  for (const entry of heads) {
    result.threadsMoved = await commentAt(page, entry.text, entry.line + 2, TIMEOUT * 2);
  }
  await page.keyboard.press("Control+S");
  await screenshot(page, "threads-moved");

  // The thread of the first line holds both of its entries.
  const [first, second, other] = config.threadEntries;
  await openThread(page, first.text);
  result.threadText = (await texts(page.locator(".review-widget"))).join("\n");
  await screenshot(page, "thread-open");

  // Edit: the comment's edit action, the new text, Save.
  const comment = await commentAction(page, first.text, "Edit Note");
  const editor = comment.locator(".edit-container .monaco-editor, .monaco-editor").first();
  await editor.waitFor({ state: "visible", timeout: TIMEOUT });
  await editor.click();
  await page.keyboard.press("Control+A");
  await page.keyboard.type(config.editedText);
  await screenshot(page, "comment-editing");
  await page.locator(".review-widget .monaco-button, .review-widget .monaco-text-button", { hasText: "Save" }).first().click();
  result.threadsEdited = await commentAt(page, config.editedText, first.line + 2);

  // Reply on the thread: a new note at its line, a comment of the same thread.
  await openThread(page, config.editedText);
  const replyButton = page.locator(".review-widget .review-thread-reply-button").first();
  if (await replyButton.isVisible().catch(() => false)) {
    await replyButton.click();
  }
  const replyBox = page.locator(".review-widget .comment-form .monaco-editor").first();
  await replyBox.waitFor({ state: "visible", timeout: TIMEOUT });
  await replyBox.click();
  await page.keyboard.type(config.replyText);
  // The form's button, not Ctrl+Enter: VS Code's submit goes to the thread's last active comment
  // (the one just edited) while it has one, and the reply would stay in its box.
  const addButton = page
    .locator(".review-widget .comment-form-container .form-actions .monaco-button", { hasText: "Add to Style Sheet" })
    .first();
  await until("reply's button enabled", async () =>
    (await addButton.isVisible()) && !(await addButton.evaluate((node) => node.classList.contains("disabled"))),
  );
  await addButton.click();
  result.threadReplied = await until("reply in the thread", async () => {
    const shown = (await texts(page.locator(".review-widget"))).join("\n");
    return shown.includes(config.replyText) && shown.includes(config.editedText) ? shown : null;
  });
  result.threadsReplied = await until("the thread's two replies in the panel", async () => {
    const rows = await commentRows(page);
    return rows.some((t) => t.includes(config.editedText) && t.includes("2 replies")) ? rows : null;
  });
  await screenshot(page, "comment-replied");

  // Discard: the comment's discard action; its thread goes.
  await commentAction(page, other.text, "Discard Entry");
  result.threadsDiscarded = await until("discarded comment gone", async () => {
    const rows = await commentRows(page);
    return rows.some((t) => t.includes(config.editedText)) && !rows.some((t) => t.includes(other.text)) ? rows : null;
  });
  await screenshot(page, "comment-discarded");

  // Graduate: the comment's "…" menu, "Graduate into the Trajectory"; the comment leaves the
  // thread (the entry is no longer open).
  await openThread(page, config.editedText);
  const graduating = page.locator(".review-widget .review-comment", { hasText: second.text }).first();
  const more = graduating.locator('.action-label[aria-label^="More Actions"], .action-label.codicon-toolbar-more').first();
  const menuItem = page.locator(".context-view .action-item", { hasText: "Graduate into the Trajectory" });
  await acting(
    "the comment's menu",
    async () => {
      await graduating.hover({ timeout: 5000 }).catch(() => undefined);
      await more.click({ force: true, timeout: 10000 });
    },
    () => menuItem.first().isVisible(),
    { every: 3000 },
  );
  result.commentMenu = await texts(page.locator(".context-view .action-item"));
  await screenshot(page, "comment-menu");
  await menuItem.first().click();
  result.threadGraduated = await until("graduated comment gone", async () => {
    const shown = (await texts(page.locator(".review-widget"))).join("\n");
    return shown.includes(config.editedText) && !shown.includes(second.text) ? shown : null;
  });
  await screenshot(page, "comment-graduated");
}

// The whole flow in one window: a margin note in the Problems panel, recorded with the quick fix,
// the entry in the side bar and in a comment thread once the file is opened again; an agent
// session imported from the quick pick; a step opened from the tree (and a file change's diff);
// the provenance hover on a line the agent wrote; the entry graduated from the tree; the capstone.
async function runScenario(page) {
  await openWorkbench(page);
  await quickOpen(page, config.file, config.fileName, "stet:");
  await screenshot(page, "file-open");

  await page.keyboard.press("Control+Shift+M");
  const problems = page.locator(".markers-panel .monaco-list-row");
  result.problems = await until(
    "margin note in Problems",
    async () => {
      const found = await texts(problems);
      return found.some((t) => t.includes("margin note")) ? found : null;
    },
    TIMEOUT * 2,
  );
  await screenshot(page, "problems");

  // Ctrl+. on the comment: "Record margin note to style sheet".
  await page.locator(".editor-instance .monaco-editor textarea").first().focus();
  await goToLine(page, config.marginLine + 1);
  const record = "Record margin note to style sheet";
  result.actions = await quickFixes(page, "quick fixes", record);
  await screenshot(page, "quick-fix");
  for (let i = 0; i < 20; i += 1) {
    if ((await texts(page.locator(".action-widget .monaco-list-row.focused"))).some((t) => t.includes(record))) {
      break;
    }
    await page.keyboard.press("ArrowDown");
  }
  await page.keyboard.press("Enter");
  await until("margin comment removed", async () => !(await editorText(page)).includes("stet:"));
  await page.keyboard.press("Control+S");
  await until("saved", async () => !(await texts(page.locator(".tabs-container .tab.active.dirty"))).length);

  // The side bar: the status bar item opens the Stet view, which lists the entry.
  const item = page.locator(".statusbar .statusbar-item", { hasText: "Stet:" });
  result.status = await until("status bar counts the entry", async () => {
    const found = await texts(item);
    return found.find((t) => t.includes(config.branch) && t.includes("1 open")) ?? null;
  });
  const rows = page.locator(".part.sidebar .monaco-list-row");
  result.tree = await viewFromStatusBar(item, rows);
  await screenshot(page, "side-bar");
  // A click on the entry opens its anchor.
  result.cursor = await acting(
    "cursor at the anchor",
    () => rows.filter({ hasText: config.entryText }).first().click({ timeout: 5000 }),
    async () => {
      const found = await texts(page.locator(".statusbar .statusbar-item"));
      return found.find((t) => t.startsWith(`Ln ${config.entryLine}, Col 1`)) ?? null;
    },
  );

  // The file closed and opened again: the entry is a comment thread on its line.
  // Its tab's close button, clicked again while the tab stays (a click lost under load).
  const tab = page.locator(".tabs-container .tab", { hasText: config.fileName });
  await acting(
    "file closed",
    async () => {
      await tab.first().hover({ timeout: 5000 });
      await tab.first().locator(".tab-actions .action-label").first().click({ timeout: 5000 });
    },
    async () => !(await tab.count()),
    { every: 1500 },
  );
  await quickOpen(page, config.file, config.fileName, "def pay");
  await showComments(page);
  result.threadRows = await commentAt(page, config.entryText, config.entryLine, TIMEOUT * 2);
  await openThread(page, config.entryText);
  result.threadText = (await texts(page.locator(".review-widget"))).join("\n");
  await screenshot(page, "comment-thread");

  // An agent session, imported from the quick pick.
  await runCommand(page, "Stet: Import Agent Session");
  const picks = page.locator(".quick-input-list .monaco-list-row");
  result.sessions = await until("sessions offered", async () => {
    const found = await texts(picks);
    return found.some((t) => t.includes(config.sessionPrompt)) ? found : null;
  });
  await screenshot(page, "sessions");
  await page.keyboard.press("Enter");
  result.imported = await until("import reported", async () =>
    (await toasts(page)).find((t) => t.includes("events imported into")) ?? null,
  );
  await screenshot(page, "imported");
  // Its toast's "Open Trajectory" button can take an Enter meant for a later quick open.
  await runCommand(page, "Notifications: Clear All Notifications");
  await until("toasts cleared", async () => !(await toasts(page)).length);
  await openTrajectory(page);
  await screenshot(page, "narration");

  // The tree: trajectory → session → turn → steps. A step opens events.jsonl at its line; a
  // file change opens its diff.
  await runCommand(page, "Stet: Show Stet View");
  const expand = (text) => expandRow(page, rows, text);
  await expand("working ");
  await expand(config.sessionLabel);
  await expand(config.sessionPrompt);
  const stepRow = rows.filter({ hasText: config.stepLabel }).first();
  await stepRow.waitFor({ timeout: TIMEOUT });
  result.stepRows = await texts(rows);
  await screenshot(page, "trajectory-tree");
  result.stepTab = await acting(
    "events.jsonl open",
    () => stepRow.click({ timeout: 5000 }),
    async () => {
      const [active] = await texts(page.locator(".tabs-container .tab.active"));
      return active?.includes("events.jsonl") ? active : null;
    },
  );
  result.stepCursor = await until("cursor at the step", async () => {
    const found = await texts(page.locator(".statusbar .statusbar-item"));
    return found.find((t) => t.startsWith(`Ln ${config.stepLine}, Col 1`)) ?? null;
  });
  await screenshot(page, "step-open");
  result.diffTab = await acting(
    "the change's diff open",
    () => rows.filter({ hasText: config.changeLabel }).first().click({ timeout: 5000 }),
    async () => {
      const [active] = await texts(page.locator(".tabs-container .tab.active"));
      return active?.includes(config.diffTitle) && (await page.locator(".monaco-diff-editor").count()) ? active : null;
    },
  );
  result.diffText = await until("the diff's text", async () => {
    const shown = (await texts(page.locator(".monaco-diff-editor .editor.modified .view-lines"))).join("\n").replace(/\u00a0/g, " ");
    return shown.includes(config.diffShows) ? shown : null;
  });
  // The lines the diff marks as added, once it is computed.
  result.diffAdded = await until("the diff's added lines", async () => {
    const added = await page.locator(".monaco-diff-editor .editor.modified .line-insert").count();
    return added > 0 ? added : null;
  });
  await screenshot(page, "step-diff");

  // The provenance hover on a line the agent wrote.
  await quickOpen(page, config.provenanceFile, config.provenanceFileName, config.diffShows);
  await page.locator(".editor-instance .monaco-editor textarea").first().focus();
  await goToLine(page, 1);
  result.hover = await until("provenance hover", async () => {
    await runCommand(page, "Show or Focus Hover");
    await new Promise((resolve) => setTimeout(resolve, 500));
    const found = (await texts(page.locator(".monaco-hover"))).join("\n");
    return found.includes("Written by step") ? found : null;
  });
  await screenshot(page, "provenance-hover");
  await page.keyboard.press("Escape");

  // The entry graduated from the tree's context menu.
  await runCommand(page, "Stet: Show Stet View");
  const entryRow = rows.filter({ hasText: config.entryText }).first();
  const menuItem = await contextMenuItem(page, "the entry's context menu", entryRow, "Graduate into the Trajectory");
  await screenshot(page, "entry-menu");
  await chooseMenuItem(page, menuItem);
  result.graduatedRow = await until("entry graduated in the tree", async () => {
    const found = await texts(rows);
    return found.find((t) => t.includes(config.entryText) && t.includes("graduated-trajectory")) ?? null;
  });
  await screenshot(page, "entry-graduated");

  // The capstone, and the commit's id in its message.
  await runCapstone(page, config.capstoneMessage, "Commit");
  result.committed = await until("capstone reported", async () =>
    (await toasts(page)).find((t) => t.includes("committed as") || t.includes("failed")) ?? null,
  );
  await screenshot(page, "capstone");
}

/** The rows of the side bar's tree: level (1 at the top), label, description, expanded. */
async function treeRows(page) {
  return page.locator(".part.sidebar .monaco-list-row").evaluateAll((nodes) =>
    nodes.map((n) => ({
      level: Number(n.getAttribute("aria-level")),
      label: n.querySelector(".label-name")?.textContent ?? "",
      description: n.querySelector(".label-description")?.textContent ?? "",
      expanded: n.getAttribute("aria-expanded"),
    })),
  );
}

/** Expands the first tree row holding `text` (clicking until it says it is expanded). */
async function expandRow(page, rows, text) {
  const row = rows.filter({ hasText: text }).first();
  await row.waitFor({ timeout: TIMEOUT });
  // A hover's tooltip covers the row below it: the pointer leaves the tree first.
  await page.mouse.move(700, 880);
  await until(`${text} expanded`, async () => {
    if ((await row.getAttribute("aria-expanded")) === "true") {
      return true;
    }
    await row.click();
    await new Promise((resolve) => setTimeout(resolve, 500));
    return (await row.getAttribute("aria-expanded")) === "true";
  });
}

// The Stet view's trajectory tree: the rows config.expand names (text each holds), expanded in
// turn; then every row, with its level, for the test to rebuild the tree from.
async function runTree(page) {
  await openWorkbench(page);
  await runCommand(page, "Stet: Show Stet View");
  const rows = page.locator(".part.sidebar .monaco-list-row");
  for (const text of config.expand) {
    await expandRow(page, rows, text);
  }
  await page.mouse.move(700, 880);
  // The last expanded row's children are in.
  result.treeRows = await until("the expanded tree", async () => {
    const found = await treeRows(page);
    const last = found.findIndex((row) => `${row.label}${row.description}`.includes(config.expand.at(-1)));
    return last >= 0 && found[last + 1]?.level > found[last].level ? found : null;
  });
  await screenshot(page, "trajectory-tree");
}

/** The status bar's transient message (setStatusBarMessage) matching `pattern`. */
async function statusMessage(page, what, pattern) {
  return until(what, async () => {
    const found = await texts(page.locator(".statusbar .statusbar-item"));
    return found.find((t) => pattern.test(t)) ?? null;
  });
}

/** Picks the row of the quick pick showing `text` (typed to filter it), Enter. */
async function pickRow(page, what, text) {
  const rows = page.locator(".quick-input-list .monaco-list-row");
  // The list reuses its row elements: they are read in the list's order (data-index), and
  // twice, 200 ms apart, so that a list still being drawn is not taken for the one shown.
  const inOrder = () =>
    rows.evaluateAll((nodes) =>
      nodes
        .map((n) => [Number(n.getAttribute("data-index") ?? 0), n.textContent ?? ""])
        .sort((a, b) => a[0] - b[0])
        .map(([, t]) => t),
    );
  const shown = await until(what, async () => {
    const found = await inOrder();
    if (!found.some((t) => t.includes(text))) {
      return null;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    return JSON.stringify(await inOrder()) === JSON.stringify(found) ? found : null;
  });
  await page.locator(".quick-input-widget input").fill(text);
  await until(`${what}: focused`, async () =>
    (await texts(page.locator(".quick-input-list .monaco-list-row.focused"))).some((t) => t.includes(text)),
  );
  await page.keyboard.press("Enter");
  return shown;
}

// The style sheet's upkeep from the command palette: "Stet: Pause Style Sheet…" (a date),
// "Stet: Edit Note…" (an entry picked, its text changed), "Stet: Discard Entry…" (another
// picked), "Stet: Resume Style Sheet"; the status bar item says paused and counts the open
// entries; the Problems panel shows the edited entry and not the discarded one.
async function runUpkeep(page) {
  await openWorkbench(page);
  const item = page.locator(".statusbar .statusbar-item", { hasText: "Stet:" });
  const itemText = async (want) => (await texts(item)).find((t) => t.includes(want) && !t.includes(" paused until ")) ?? null;
  result.statusBefore = await until("status bar: 2 open", () => itemText("2 open"));

  await runCommand(page, "Stet: Pause Style Sheet");
  const input = page.locator(".quick-input-widget input");
  result.pauseBox = await until("pause date box", async () => {
    const shown = await quickInput(page);
    return shown?.title.includes("Pause Style Sheet") && !shown.rows.length ? shown : null;
  });
  // A date the server refuses: the box comes back saying why, the text kept.
  await input.fill("soon");
  await page.keyboard.press("Enter");
  result.pauseRefused = await until("the pause box again, with the reason", async () => {
    const shown = await quickInput(page);
    return shown?.title.includes("Pause Style Sheet") && shown.message.includes("not an ISO date") ? shown : null;
  });
  await input.fill(config.pauseUntil);
  await page.keyboard.press("Enter");
  result.paused = await statusMessage(page, "paused message", /paused until/);
  result.statusPaused = await until("status bar: paused", async () =>
    (await texts(item)).find((t) => t.includes("2 open") && t.includes("paused") && !t.includes("until")) ?? null,
  );
  await screenshot(page, "paused");
  // What the sheet on disk says meanwhile (the CLI reads it).
  const [cli, ...cliArgs] = config.stetCli;
  const listed = JSON.parse(
    execFileSync(cli, [...cliArgs, "note", "list", "--json"], { cwd: config.root, encoding: "utf8", timeout: TIMEOUT }),
  );
  result.pausedOnDisk = { paused: listed.paused, paused_until: listed.paused_until };

  await runCommand(page, "Stet: Edit Note");
  result.editPicks = await pickRow(page, "entries to edit", config.editText);
  result.editBox = await until("edit box", async () => {
    const shown = await quickInput(page);
    return shown?.title.includes("Edit entry") && !shown.rows.length ? shown : null;
  });
  await input.fill(config.editedText);
  await page.keyboard.press("Enter");
  result.edited = await statusMessage(page, "edited message", /entry \S+ edited/);
  await screenshot(page, "edited");

  await runCommand(page, "Stet: Discard Entry");
  result.discardPicks = await pickRow(page, "entries to discard", config.discardText);
  result.discarded = await statusMessage(page, "discarded message", /entry \S+ discarded/);
  result.statusDiscarded = await until("status bar: 1 open, paused", async () =>
    (await texts(item)).find((t) => t.includes("1 open") && t.includes("paused") && !t.includes("until")) ?? null,
  );

  await runCommand(page, "Stet: Resume Style Sheet");
  result.resumed = await statusMessage(page, "resumed message", /resumed/);
  result.statusResumed = await until("status bar: resumed", async () =>
    (await texts(item)).find((t) => t.includes("1 open") && !t.includes("paused")) ?? null,
  );
  await screenshot(page, "resumed");
  await runCommand(page, "Stet: Resume Style Sheet");
  result.resumedAgain = await statusMessage(page, "not paused message", /was not paused/);

  await quickOpen(page, config.file, config.fileName, "def pay");
  await page.keyboard.press("Control+Shift+M");
  const rows = page.locator(".markers-panel .monaco-list-row");
  result.problems = await until("edited entry in Problems", async () => {
    const found = await texts(rows);
    return found.some((t) => t.includes(config.editedText)) ? found : null;
  });
  await screenshot(page, "problems");
}

// The style sheet itself ("Stet: Open Style Sheet"), holding a pasted secret and an entry whose
// anchored line is gone: the Problems panel (rows and their icons), the lenses with the line
// each stands above, Ctrl+. at the secret and "Redact now"; the line in the editor, the tab
// dirty and the file on disk as it was; the Problems panel after; Ctrl+S and the file on disk.
async function runSheetFile(page) {
  await openWorkbench(page);
  await runCommand(page, "Stet: Open Style Sheet");
  const shown = async () => (await editorText(page)).replace(/\u00a0/g, " ");
  await until("style sheet open", async () => (await shown()).includes(config.secretNote));
  await page.keyboard.press("Control+Shift+M");
  const rows = page.locator(".markers-panel .monaco-list-row");
  const problems = () =>
    rows.evaluateAll((nodes) =>
      nodes.map((n) => ({
        text: n.textContent ?? "",
        icons: [...n.querySelectorAll(".codicon")].map((icon) => icon.className),
      })),
    );
  // The panel's rows once two looks in a row agree (a row going away is drawn twice for a moment).
  let last = null;
  const settled = async (want) => {
    const found = await problems();
    const all = found.map((row) => row.text).join("\n");
    const same = JSON.stringify(found) === last;
    last = JSON.stringify(found);
    return same && want(all) ? found : null;
  };
  result.problems = await until("secret and lost anchor in Problems", () =>
    settled((all) => all.includes("will be redacted") && all.includes("anchor lost")),
  );
  // Each lens decoration and the text of the line just below it (the line it stands above).
  // The editor asks for lenses a moment after the sheet is shown, and drops that pending ask
  // when it loses focus (VS Code's CodeLensContribution cancels its scheduler on blur and asks
  // again on focus): Ctrl+Shift+M above can take the focus first, and then no lens is ever
  // asked for. Back in the sheet, as a user would be, before looking for them.
  await page.locator(".editor-instance .monaco-editor textarea").first().focus();
  // Read once the layout has settled: the same reading twice, each lens above a line of its own
  // (while the lenses' view zones are being inserted, they all measure above the first line).
  let previous = "";
  result.lenses = await until("sheet lenses", async () => {
    const found = await page.evaluate(() => {
      const lines = [...document.querySelectorAll(".editor-instance .monaco-editor .view-line")].map((n) => ({
        top: n.getBoundingClientRect().top,
        text: (n.textContent ?? "").replace(/\u00a0/g, " "),
      }));
      return [...document.querySelectorAll(".editor-instance .codelens-decoration")].map((lens) => {
        const bottom = lens.getBoundingClientRect().bottom;
        const below = lines.filter((l) => l.top >= bottom - 2).sort((a, b) => a.top - b.top)[0];
        return { text: (lens.textContent ?? "").replace(/\u00a0/g, " "), line: below?.text ?? null };
      });
    });
    const reading = JSON.stringify(found);
    const stable = reading === previous;
    previous = reading;
    const ownLines = new Set(found.map((lens) => lens.line)).size === found.length;
    return stable && ownLines && found.length >= config.lensCount ? found : null;
  });
  await screenshot(page, "sheet-problems-and-lenses");

  // Ctrl+. at the secret, then "Redact now" (Enter on it).
  await page.locator(".editor-instance .monaco-editor textarea").first().focus();
  await goToLine(page, config.secretLine + 1);
  result.actions = await quickFixes(page, "redact quick fix", "Redact now");
  await screenshot(page, "redact-quick-fix");
  for (let i = 0; i < 20; i += 1) {
    if ((await texts(page.locator(".action-widget .monaco-list-row.focused"))).some((t) => t.includes("Redact now"))) {
      break;
    }
    await page.keyboard.press("ArrowDown");
  }
  await page.keyboard.press("Enter");
  const lineOf = async (text) =>
    (await texts(page.locator(".editor-instance .monaco-editor .view-line")))
      .map((t) => t.replace(/\u00a0/g, " "))
      .find((t) => t.includes(text)) ?? null;
  result.redactedLine = await until("marker in the editor", async () => {
    const line = await lineOf(`id=${config.secretId} `);
    return line?.includes("[REDACTED:") ? line : null;
  });
  result.dirty = await page.locator(".tabs-container .tab.active.dirty").count();
  result.diskBeforeSave = readFileSync(config.sheetPath, "utf8");
  result.problemsAfter = await until("secret gone from Problems", () =>
    settled((all) => !all.includes("will be redacted") && all.includes("anchor lost")),
  );
  await screenshot(page, "redacted");

  await page.locator(".editor-instance .monaco-editor textarea").first().focus();
  await page.keyboard.press("Control+S");
  result.diskAfterSave = await until("saved", async () => {
    const text = readFileSync(config.sheetPath, "utf8");
    return text.includes("[REDACTED:") ? text : null;
  });
  result.dirtyAfterSave = await until("tab clean", async () =>
    (await page.locator(".tabs-container .tab.active.dirty").count()) === 0 ? "clean" : null,
  );
  await screenshot(page, "saved");
}

/** The status bar's items now (texts). */
async function statusItems(page) {
  return texts(page.locator(".statusbar .statusbar-item"));
}

/** The Problems panel's rows (text and icons) once two looks in a row agree and `want` holds. */
async function settledProblems(page, what, want) {
  const rows = page.locator(".markers-panel .monaco-list-row");
  let last = null;
  return until(what, async () => {
    const found = await rows.evaluateAll((nodes) =>
      nodes.map((n) => ({
        text: n.textContent ?? "",
        icons: [...n.querySelectorAll(".codicon")].map((icon) => icon.className),
      })),
    );
    const reading = JSON.stringify(found);
    const same = reading === last;
    last = reading;
    return same && want(found.map((row) => row.text).join("\n")) ? found : null;
  });
}

// "Stet: Show Brief", twice: a read-only Markdown editor holding the brief, in one tab; its
// tab, its language (the status bar), its text, and the text after a key typed into it.
async function runBrief(page) {
  await openWorkbench(page);
  // The status bar item counts the entries once the server answers.
  await until("the server answers", async () => (await statusItems(page)).some((t) => /Stet: \S+ · \d+ open/.test(t)));
  const shown = async () => (await editorText(page)).replace(/\u00a0/g, " ");
  for (const run of [1, 2]) {
    await runCommand(page, "Stet: Show Brief");
    result.briefTab = await until(`the brief's tab (run ${run})`, async () => {
      const [active] = await texts(page.locator(".tabs-container .tab.active"));
      return active?.includes(config.briefTab) && (await shown()).includes(config.briefShows) ? active : null;
    });
  }
  result.briefText = await shown();
  result.briefLines = (await texts(page.locator(".editor-instance .monaco-editor .view-line"))).map((t) =>
    t.replace(/\u00a0/g, " "),
  );
  result.language = await until("the language mode", async () =>
    (await texts(page.locator(".statusbar .statusbar-item#status\\.editor\\.mode"))).find((t) => t.trim()) ?? null,
  );
  await page.locator(".editor-instance .monaco-editor textarea").first().focus();
  await page.keyboard.type("typed");
  await new Promise((resolve) => setTimeout(resolve, 500));
  result.briefTextAfterTyping = await shown();
  result.tabs = await texts(page.locator(".tabs-container .tab"));
  result.dirtyTabs = await page.locator(".tabs-container .tab.dirty").count();
  await screenshot(page, "brief");
  // An agent adds a note with the command line: the open brief follows.
  const [cli, ...cliArgs] = config.stetCli;
  execFileSync(cli, [...cliArgs, "note", "add", config.agentText, "--author", "agent"], {
    cwd: config.root,
    stdio: ["ignore", "pipe", "pipe"],
    timeout: TIMEOUT,
  });
  result.briefFollowed = await until("the agent's note in the open brief", async () =>
    (await shown()).includes(config.agentText) ? true : null,
  );
}

// "Stet: Graduation Review": the review opens; on a proposal's line the quick fixes offer it and
// "Accept every proposal", which is taken; the status bar says what was accepted, and the
// review, written again, holds no proposal.
async function runReview(page) {
  await openWorkbench(page);
  await until("the server answers", async () => (await statusItems(page)).some((t) => /Stet: \S+ · \d+ open/.test(t)));
  await runCommand(page, "Stet: Graduation Review");
  const shown = async () => (await editorText(page)).replace(/\u00a0/g, " ");
  const text = await until("the review open", async () => {
    const found = await shown();
    return found.includes("# Graduation review") && found.includes("- [ ]") ? found : null;
  });
  result.review = text;
  // The cursor to the first proposal (view lines are not in the DOM in line order): find it.
  await page.locator(".editor-instance .monaco-editor textarea").first().focus();
  await page.keyboard.press("Control+F");
  await page.keyboard.type("- [ ]");
  await page.keyboard.press("Enter");
  await page.keyboard.press("Escape");
  const title = "Accept every proposal";
  result.actions = await quickFixes(page, "the review's quick fixes", title);
  for (let i = 0; i < 20; i += 1) {
    if ((await texts(page.locator(".action-widget .monaco-list-row.focused"))).some((t) => t.includes(title))) {
      break;
    }
    await page.keyboard.press("ArrowDown");
  }
  await page.keyboard.press("Enter");
  result.said = await until("the status bar says what was accepted", async () =>
    (await statusItems(page)).find((t) => t.includes("accepted")) ?? null,
  );
  result.reviewAfter = await until("the review without proposals", async () => {
    const found = await shown();
    return found.includes("- [ ]") ? null : found;
  });
  await screenshot(page, "review-accepted");
}

// "Stet: Restart Language Server": the entry's diagnostic and lens before; the restart (the
// server's start log gets a second line); then "Stet: Add Note at Cursor" through the new server,
// and both entries in the Problems panel and the lens.
async function runRestart(page) {
  await openWorkbench(page);
  await quickOpen(page, config.file, config.fileName, "def pay");
  await page.keyboard.press("Control+Shift+M");
  const rows = page.locator(".markers-panel .monaco-list-row");
  result.problemsBefore = await until("the entry in Problems", async () => {
    const found = await texts(rows);
    return found.some((t) => t.includes(config.entryText)) ? found : null;
  });
  await page.locator(".editor-instance .monaco-editor textarea").first().focus();
  const lens = (want) =>
    until(`lens "${want}"`, async () => {
      const found = await texts(page.locator(".editor-instance .codelens-decoration"));
      return found.some((t) => t.replace(/\u00a0/g, " ").includes(want)) ? found : null;
    });
  result.lensBefore = await lens("style sheet: 1 note");
  const starts = () => readFileSync(config.startLog, "utf8").split("\n").filter(Boolean).length;
  result.startsBefore = starts();
  await screenshot(page, "before-restart");

  await runCommand(page, "Stet: Restart Language Server");
  await until("a second server started", async () => starts() >= 2);
  result.problemsAfterRestart = await until("the entry back in Problems", async () => {
    const found = await texts(rows);
    return found.some((t) => t.includes(config.entryText)) ? found : null;
  });
  await page.locator(".editor-instance .monaco-editor textarea").first().focus();
  result.lensAfterRestart = await lens("style sheet: 1 note");
  await screenshot(page, "after-restart");

  // A command through the new server: a note on the entry's line.
  await goToLine(page, config.entryLine);
  await runCommand(page, "Stet: Add Note at Cursor");
  const input = page.locator(".quick-input-widget input");
  await until("note input box", async () => (await quickInput(page))?.title.includes("Add Note"));
  await input.fill(config.noteText);
  await page.keyboard.press("Enter");
  await until("kind picker", async () => (await quickInput(page))?.rows.some((t) => t.includes("convention")));
  await input.fill("convention");
  await page.keyboard.press("Enter");
  result.noteStatus = await statusMessage(page, "note added", /note \S+ added/);
  result.problemsAfterNote = await until("the new note in Problems", async () => {
    const found = await texts(rows);
    return found.some((t) => t.includes(config.noteText)) && found.some((t) => t.includes(config.entryText))
      ? found
      : null;
  });
  await page.locator(".editor-instance .monaco-editor textarea").first().focus();
  result.lensAfterNote = await lens("style sheet: 2 notes");
  result.startsAfter = starts();
  result.toasts = await toasts(page);
  await screenshot(page, "note-after-restart");
}

// A graduation route from the Stet view: the entry's context menu (config.menuItem); for the
// skill route the name asked for (the proposal shown, config.skillName typed); the entry's row
// after, and the status bar's message.
async function runTreeRoute(page) {
  await openWorkbench(page);
  await runCommand(page, "Stet: Show Stet View");
  const rows = page.locator(".part.sidebar .monaco-list-row");
  result.treeBefore = await until("the entry in the Stet view", async () => {
    const found = await texts(rows);
    return found.some((t) => t.includes(config.entryText)) ? found : null;
  });
  const entryRow = rows.filter({ hasText: config.entryText }).first();
  const menuItem = await contextMenuItem(page, "the entry's context menu", entryRow, config.menuItem);
  result.menu = await texts(page.locator(".context-view .action-item"));
  await screenshot(page, "entry-menu");
  await chooseMenuItem(page, menuItem);
  if (config.skillName !== undefined) {
    const asked = await until("skill name box", async () => {
      const shown = await quickInput(page);
      return shown?.title.includes("as a skill") && !shown.rows.length ? shown : null;
    });
    result.nameBox = asked;
    await page.locator(".quick-input-widget input").fill(config.skillName);
    await until("the name accepted", async () => !(await quickInput(page))?.message.includes("lowercase"));
    await page.keyboard.press("Enter");
  }
  result.said = await statusMessage(page, "graduation reported", new RegExp(config.said));
  result.treeAfter = await until("the entry's new status in the tree", async () => {
    const found = await texts(rows);
    return found.find((t) => t.includes(config.entryText) && t.includes(config.status)) ? found : null;
  });
  result.status = await until("the status bar counts it", async () =>
    (await statusItems(page)).find((t) => t.includes("Stet:") && t.includes(config.openAfter)) ?? null,
  );
  await screenshot(page, "entry-graduated");
  // The entry's menu once it is no longer open: what is left to do with it.
  const closedRow = rows.filter({ hasText: config.entryText }).first();
  await contextMenuItem(page, "the closed entry's context menu", closedRow, "Open Anchor");
  result.menuAfter = await texts(page.locator(".context-view .action-item"));
  await page.keyboard.press("Escape");
}

// A comment thread's title action "Discard the Thread's Entries": every entry of the thread
// discarded, the thread gone; the other thread stays.
async function runThreadDiscard(page) {
  await openWorkbench(page);
  await quickOpen(page, config.file, config.fileName, "def pay");
  await showComments(page);
  const [first, second, other] = config.threadEntries;
  result.threadsBefore = await commentAt(page, first.text, first.line, TIMEOUT * 2);
  await commentAt(page, other.text, other.line, TIMEOUT * 2);
  await openThread(page, first.text);
  const thread = page.locator(".review-widget", { hasText: second.text }).first();
  result.threadText = (await texts(thread)).join("\n");
  const action = thread.locator('.head .action-label[aria-label^="Discard the Thread"]').first();
  await action.waitFor({ state: "attached", timeout: TIMEOUT });
  await screenshot(page, "thread-open");
  await action.click({ force: true });
  result.threadsAfter = await until("the thread gone from the Comments panel", async () => {
    const rows = await commentRows(page);
    return rows.some((t) => t.includes(other.text)) && !rows.some((t) => t.includes(first.text) || t.includes(second.text))
      ? rows
      : null;
  });
  result.widgets = await until("the thread's widget closed", async () => {
    const shown = await texts(page.locator(".review-widget"));
    return shown.some((t) => t.includes(first.text) || t.includes(second.text)) ? null : shown.length + 1;
  }) - 1;
  await page.keyboard.press("Control+Shift+M");
  result.problems = await settledProblems(page, "only the other entry in Problems", (all) =>
    all.includes(other.text) && !all.includes(first.text) && !all.includes(second.text),
  );
  await screenshot(page, "thread-discarded");
}

// "Stet: Edit Note…": an entry picked, a new text typed into the box, then Escape. Afterwards
// "Stet: List Entries" shows what the server holds.
async function runEditCancel(page) {
  await openWorkbench(page);
  await until("the server answers", async () => (await statusItems(page)).some((t) => /Stet: \S+ · \d+ open/.test(t)));
  await runCommand(page, "Stet: Edit Note");
  result.editPicks = await pickRow(page, "entries to edit", config.editText);
  const input = page.locator(".quick-input-widget input");
  result.editBox = await until("edit box", async () => {
    const shown = await quickInput(page);
    return shown?.title.includes("Edit entry") && !shown.rows.length ? shown : null;
  });
  await input.fill(config.typedText);
  result.typed = (await quickInput(page))?.value;
  await screenshot(page, "edit-typed");
  await page.keyboard.press("Escape");
  await until("the box dismissed", async () => !(await page.locator(".quick-input-widget").isVisible()));
  // Then what the server lists (a request that follows any the Escape might have sent).
  await runCommand(page, "Stet: List Entries");
  result.listed = await until("the entries listed", async () => {
    const shown = await quickInput(page);
    return shown?.rows.length ? shown.rows : null;
  });
  await screenshot(page, "listed-after-escape");
  await page.keyboard.press("Escape");
  result.statusItems = await statusItems(page);
  result.toasts = await toasts(page);
}

/** The Stet view's tree down to a step of the working trajectory; a click on it opens
 * events.jsonl at its line. */
async function openStepFromTree(page) {
  await runCommand(page, "Stet: Show Stet View");
  const rows = page.locator(".part.sidebar .monaco-list-row");
  for (const text of ["working ", config.sessionLabel, config.sessionPrompt]) {
    await expandRow(page, rows, text);
  }
  const stepRow = rows.filter({ hasText: config.stepLabel }).first();
  await stepRow.waitFor({ timeout: TIMEOUT });
  return acting(
    "events.jsonl open",
    () => stepRow.click({ timeout: 5000 }),
    async () => {
      const [active] = await texts(page.locator(".tabs-container .tab.active"));
      return active?.includes("events.jsonl") ? active : null;
    },
  );
}

/** The cursor's place in the status bar ("Ln 6, Col 1"). */
async function cursorAt(page, what, want) {
  return until(what, async () => (await statusItems(page)).find((t) => want.test(t)) ?? null);
}

// Go to Definition on a file_change step's line of events.jsonl (opened from the tree): the
// file it changed, at the line.
async function runDefinition(page) {
  await openWorkbench(page);
  result.stepTab = await openStepFromTree(page);
  await page.locator(".editor-instance .monaco-editor textarea").first().focus();
  // A column past the line's start, so the status bar tells this cursor from the one the jump
  // leaves at the start of the changed line.
  await goToLine(page, `${config.changeLine}:${config.changeColumn}`);
  result.stepCursor = await cursorAt(
    page,
    "cursor on the change's line",
    new RegExp(`^Ln ${config.changeLine}, Col ${config.changeColumn}\\b`),
  );
  // The step lenses say the server has indexed the file.
  await until("step lenses", async () => (await page.locator(".editor-instance .codelens-decoration").count()) > 0);
  await screenshot(page, "step-line");
  await runCommand(page, "Go to Definition");
  result.landedTab = await until("the changed file open", async () => {
    const [active] = await texts(page.locator(".tabs-container .tab.active"));
    return active?.trim().startsWith(config.fileName) ? active : null;
  });
  result.cursor = await cursorAt(page, "cursor at the changed line", /^Ln \d+, Col 1\b/);
  result.landedText = (await editorText(page)).replace(/\u00a0/g, " ");
  result.dirty = await page.locator(".tabs-container .tab.dirty").count();
  await screenshot(page, "definition");
}

// "unplaced": a file with more changes than provenance could place than get a lens each: the
// one lens on its first line saying how many (config.lensTitle) offers them in a quick pick;
// the one picked (config.pickTitle) opens its step in the narration.
async function runUnplaced(page) {
  await openWorkbench(page);
  await quickOpen(page, config.file, config.fileName, config.fileShows);
  const lenses = page.locator(".editor-instance .codelens-decoration");
  result.lenses = await until("the lens of the changes not placed", async () => {
    const found = (await texts(lenses)).map((t) => t.replace(/\u00a0/g, " "));
    return found.some((t) => t.includes(config.lensTitle)) ? found : null;
  });
  await screenshot(page, "unplaced-lens");
  const lens = page.locator(".editor-instance .codelens-decoration a").filter({ hasText: config.lensTitle });
  result.pick = await acting(
    "the changes offered",
    () => lens.first().click({ timeout: 3000 }),
    async () => {
      const shown = await quickInput(page);
      return shown?.rows.length ? shown : null;
    },
  );
  await screenshot(page, "unplaced-pick");
  // Each row's own words (a row element the file pick drew before keeps its hidden separator).
  result.labels = await page
    .locator(".quick-input-list .monaco-list-row")
    .evaluateAll((nodes) => nodes.map((n) => n.getAttribute("aria-label")));
  await pickRow(page, "the change picked", config.pickTitle);
  result.openedTab = await until("the narration open", async () => {
    const [active] = await texts(page.locator(".tabs-container .tab.active"));
    return active?.includes("narration.md") ? active : null;
  });
  result.cursor = await cursorAt(page, "the cursor at the step", /^Ln \d+, Col \d+/);
  result.toasts = await toasts(page);
  await screenshot(page, "unplaced-step");
}

// A trajectory's events.jsonl the server finds fault with, opened from the tree (the working
// trajectory) or quick open (a committed one): the Problems panel once config.message is in it.
async function runEventsDiagnostics(page) {
  await openWorkbench(page);
  if (config.eventsFile) {
    await quickOpen(page, config.eventsFile, config.eventsName ?? "events.jsonl", config.eventsShows);
  } else {
    await openStepFromTree(page);
  }
  await page.keyboard.press("Control+Shift+M");
  result.problems = await settledProblems(page, "the diagnostic in Problems", (all) => all.includes(config.message));
  result.dirty = await page.locator(".tabs-container .tab.dirty").count();
  await screenshot(page, "events-problems");
}

// "outside": a file outside the repository active (as go to definition into a library leaves
// it): the status bar keeps showing the repository, "Stet: Open Style Sheet" opens its sheet,
// and "Stet: Add Note at Cursor" there says why it adds nothing.
async function runOutside(page) {
  await openWorkbench(page);
  await until("the server answers", async () => (await statusItems(page)).some((t) => /Stet: \S+ · \d+ open/.test(t)));
  await quickOpen(page, config.outsideFile, config.outsideName, config.outsideShows);
  // The status bar refreshes every 4 s: two refreshes with the outside file active.
  await new Promise((resolve) => setTimeout(resolve, 9000));
  result.status = (await statusItems(page)).filter((t) => t.includes("Stet"));
  await screenshot(page, "outside-status");
  await runCommand(page, "Stet: Open Style Sheet");
  result.sheetTab = await until("the sheet's tab", async () => {
    const [active] = await texts(page.locator(".tabs-container .tab.active"));
    return active?.includes(config.sheetName) ? active : null;
  });
  await screenshot(page, "outside-sheet");
  await quickOpen(page, config.outsideFile, config.outsideName, config.outsideShows);
  await runCommand(page, "Stet: Add Note at Cursor");
  await until("why no note", async () => (await toasts(page)).some((t) => t.includes("not inside a git repository")));
  result.toasts = await toasts(page);
  await screenshot(page, "outside-note");
}

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Lines in the server's start log (config.startLog); 0 before the first start. */
function serverStarts() {
  try {
    return readFileSync(config.startLog, "utf8").split("\n").filter(Boolean).length;
  } catch {
    return 0;
  }
}

// "failedstart": stet.server.path names no file: one notification says so; "Stet: Restart
// Language Server" tries again (no dialog about a client that cannot be stopped); the path set
// in the Settings editor (config.serverPath) starts the server at once.
async function runFailedStart(page) {
  await openWorkbench(page);
  const failed = (t) => t.includes("could not start the language server");
  await until("the start failure", async () => (await toasts(page)).some(failed));
  await pause(2000); // any second notification of the same failure shows by then
  result.failureToasts = await toasts(page);
  result.statusAfterFailure = (await statusItems(page)).filter((t) => t.includes("Stet"));
  await screenshot(page, "start-failed");

  await runCommand(page, "Notifications: Clear All Notifications");
  await until("notifications cleared", async () => !(await toasts(page)).length);
  await runCommand(page, "Stet: Restart Language Server");
  await until("the start failure again", async () => (await toasts(page)).some(failed));
  await pause(2000);
  result.restartToasts = await toasts(page);
  result.dialogs = await texts(page.locator(".monaco-dialog-box"));
  await screenshot(page, "restart-failed");
  await runCommand(page, "Notifications: Clear All Notifications");

  // The Remote tab: code-server's User tab leaves out machine-overridable settings.
  await runCommand(page, "Preferences: Open Remote Settings");
  const search = page.locator(".settings-editor .suggest-input-container textarea, .settings-editor .search-container textarea").first();
  await search.waitFor({ state: "visible", timeout: TIMEOUT });
  await search.focus();
  await page.keyboard.type("stet.server.path");
  const field = page.locator(".settings-editor .setting-item-contents", { hasText: "Server" }).locator("input").first();
  await field.waitFor({ state: "visible", timeout: TIMEOUT });
  await field.fill(config.serverPath);
  await screenshot(page, "server-path-set");
  await until("the server started", async () => serverStarts() >= 1);
  result.status = await until("the server answers", async () =>
    (await statusItems(page)).find((t) => /Stet: \S+ · \d+ open/.test(t)) ?? null,
  );
  await pause(1000);
  result.starts = serverStarts();
  result.toasts = await toasts(page);
  await screenshot(page, "server-started");
}

// "pausedrecord": the style sheet paused, Ctrl+. on a margin comment, "Record margin note to
// style sheet": the server refuses, and the notifications say why.
async function runPausedRecord(page) {
  await openWorkbench(page);
  await quickOpen(page, config.file, config.fileName, "stet:");
  await page.locator(".editor-instance .monaco-editor textarea").first().focus();
  await goToLine(page, config.marginLine + 1);
  const record = "Record margin note to style sheet";
  result.actions = await quickFixes(page, "quick fixes", record);
  for (let i = 0; i < 20; i += 1) {
    if ((await texts(page.locator(".action-widget .monaco-list-row.focused"))).some((t) => t.includes(record))) {
      break;
    }
    await page.keyboard.press("ArrowDown");
  }
  await page.keyboard.press("Enter");
  await until("the refusal", async () => (await toasts(page)).some((t) => t.includes("paused")));
  await pause(2000); // a second notification of the same failure shows by then
  result.toasts = await toasts(page);
  result.editor = await editorText(page);
  await screenshot(page, "record-refused");
}

// "importfile": "Stet: Import Agent Session…" with no session found: the pick offers "Choose a
// transcript file…", whose file dialog (VS Code's own, in the browser) takes config.transcript.
async function runImportFile(page) {
  await openWorkbench(page);
  await until("the server answers", async () => (await statusItems(page)).some((t) => /Stet: \S+ · \d+ open/.test(t)));
  await runCommand(page, "Stet: Import Agent Session");
  result.importPick = await until("the session pick", async () => {
    const shown = await quickInput(page);
    return shown?.rows.some((t) => t.includes("Choose a transcript file")) ? shown : null;
  });
  await screenshot(page, "import-pick");
  await page.keyboard.press("Enter");
  const input = page.locator(".quick-input-widget input");
  await until("the file dialog", async () => {
    const shown = await quickInput(page);
    return shown && !shown.rows.some((t) => t.includes("Choose a transcript")) && shown.value.startsWith("/");
  });
  await input.fill(config.transcript);
  await pause(500); // the dialog reads the typed path
  await screenshot(page, "import-file");
  await page.keyboard.press("Enter");
  result.imported = await until("the import's message", async () =>
    (await toasts(page)).find((t) => t.includes("events imported")) ?? null,
  );
  await screenshot(page, "imported");
}

// "messages": the window opened and nothing done: the notifications it shows by itself
// (config.toastShows in one of them) and the status bar.
async function runMessages(page) {
  await openWorkbench(page);
  await until("the notification", async () => (await toasts(page)).some((t) => t.includes(config.toastShows)));
  await pause(3000); // any other notification shows by then
  result.toasts = await toasts(page);
  result.status = (await statusItems(page)).filter((t) => t.includes("Stet"));
  await screenshot(page, "messages");
}

// "dirtysheet": the style sheet open with an unsaved line (config.typed, at its end) while the
// CLI adds an agent's note (config.agentText): the editor shows the note, then Ctrl+S; the
// notifications, dialogs and dirty tabs after the save; then the notification's Overwrite.
async function runDirtySheet(page) {
  await openWorkbench(page);
  await until("the server answers", async () => (await statusItems(page)).some((t) => /Stet: \S+ · \d+ open/.test(t)));
  await runCommand(page, "Stet: Open Style Sheet");
  const shown = async () => (await editorText(page)).replace(/\u00a0/g, " ");
  await until("the sheet", async () => (await shown()).includes(config.entryText));
  await page.locator(".editor-instance .monaco-editor textarea").first().focus();
  await page.keyboard.press("Control+End");
  await page.keyboard.press("Enter");
  await page.keyboard.type(config.typed);
  await until("the sheet dirty", async () => (await page.locator(".tabs-container .tab.dirty").count()) === 1);
  await pause(1000); // the server has the edit
  const [cli, ...cliArgs] = config.stetCli;
  execFileSync(cli, [...cliArgs, "note", "add", config.agentText, "--author", "agent"], {
    cwd: config.root,
    stdio: ["ignore", "pipe", "pipe"],
    timeout: TIMEOUT,
  });
  await until("the agent's note in the editor", async () => (await shown()).includes(config.agentText));
  await screenshot(page, "merged");
  await page.keyboard.press("Control+S");
  // The save answers with a notification or a dialog (or writes at once); under load that can
  // take more than a fixed pause. Then a moment for any second one.
  const dirtyTabs = () => page.locator(".tabs-container .tab.dirty").count();
  await until(
    "the save answered",
    async () => (await toasts(page)).length > 0 || (await page.locator(".monaco-dialog-box").count()) > 0 || !(await dirtyTabs()),
  ).catch(() => undefined);
  await pause(1500);
  result.toasts = await toasts(page);
  result.dialogs = await texts(page.locator(".monaco-dialog-box"));
  result.dirtyAfterSave = await dirtyTabs();
  await screenshot(page, "saved");
  const overwrite = page.locator(".notifications-toasts .monaco-button", { hasText: "Overwrite" });
  if (await overwrite.count()) {
    // Clicked again while the tab stays dirty (a click lost under load); the write itself
    // can take a while then, too.
    await acting(
      "the sheet overwritten",
      () => overwrite.first().click({ timeout: 3000 }),
      async () => !(await dirtyTabs()),
      { every: 3000 },
    ).catch(() => undefined);
  }
  result.dirty = await dirtyTabs();
  result.editor = await shown();
  await screenshot(page, "overwritten");
}

// "listgone": "Stet: List Entries", the entry config.entryText picked (its anchor's file is
// gone): the notifications and the active tab after.
async function runListGone(page) {
  await openWorkbench(page);
  await until("the server answers", async () => (await statusItems(page)).some((t) => /Stet: \S+ · \d+ open/.test(t)));
  await runCommand(page, "Stet: List Entries");
  await pickRow(page, "the entries", config.entryText);
  await until("a notification", async () => (await toasts(page)).length > 0, 10000).catch(() => undefined);
  await pause(1500);
  result.toasts = await toasts(page);
  result.tabs = await texts(page.locator(".tabs-container .tab"));
  await screenshot(page, "list-gone");
}

// "branchswitch": the status bar item and the Stet view's trajectories on config.branch, then
// the item on config.otherBranch once git (run here, as a terminal would) has switched to it:
// its text each time, settled.
async function runBranchSwitch(page) {
  await openWorkbench(page);
  await runCommand(page, "Stet: Show Stet View");
  result.treeBefore = await until("the trajectories in the Stet view", async () => {
    const found = await treeRows(page);
    return found.filter((row) => row.label.startsWith("working ")).length >= 2 ? found : null;
  });
  const settled = (branch) => {
    let last = null;
    return until(`the status bar on ${branch}`, async () => {
      const found = (await statusItems(page)).find((t) => t.includes(`Stet: ${branch} · `)) ?? null;
      const same = found !== null && found === last;
      last = found;
      return same ? found : null;
    });
  };
  result.statusBefore = await settled(config.branch);
  execFileSync("git", ["checkout", "-q", config.otherBranch], { cwd: config.root });
  result.statusAfter = await settled(config.otherBranch);
  await pause(4500); // the item's next refresh
  result.statusLater = await settled(config.otherBranch);
  await screenshot(page, "branch-switched");
}

// A folder in no git repository (and holding none): no server starts; the status bar item
// says why without a warning, and "Stet: Open Style Sheet" says that no repository is open.
async function runNoRepository(page) {
  await openWorkbench(page);
  const item = page.locator(".statusbar .statusbar-item", { hasText: "Stet" }).first();
  await item.waitFor({ timeout: TIMEOUT });
  // The item refreshes every 4 s: past the first refresh.
  await pause(5000);
  result.statusIcons = await item.evaluate((node) => [...node.querySelectorAll(".codicon")].map((icon) => icon.className));
  result.statusTooltip = await acting(
    "the status bar item's tooltip",
    () => item.hover(),
    async () => (await texts(page.locator(".monaco-hover, .workbench-hover"))).find((t) => t.includes("Stet")) ?? null,
  );
  await page.mouse.move(700, 400);
  await runCommand(page, "Stet: Open Style Sheet");
  result.toasts = await until("the command's message", async () => {
    const found = await toasts(page);
    return found.some((t) => t.startsWith("Stet:")) ? found : null;
  });
  await screenshot(page, "no-repository");
}

// A server that ends at once (a broken install): the notification quotes what it said last,
// and its "Show Output" button shows the Stet output channel.
async function runCrashedStart(page) {
  await openWorkbench(page);
  const failed = (t) => t.includes("could not start the language server");
  await until("the start failure", async () => (await toasts(page)).some(failed));
  await pause(2000); // any second notification of the same failure shows by then
  result.failureToasts = await toasts(page);
  await screenshot(page, "start-failed");
  const button = page
    .locator(".notifications-toasts .notification-toast", { hasText: "could not start" })
    .locator(".monaco-button", { hasText: "Show Output" })
    .first();
  result.output = await acting(
    "the Stet output",
    () => button.click({ timeout: 3000 }),
    async () => {
      const shown = await panelText(page);
      return shown.includes(config.serverSays) ? shown : null;
    },
  );
  await screenshot(page, "output");
}

// "Stet: Add Note at Cursor" in the style sheet itself: it says why no note is anchored there
// (should it ask for a note instead, the note is typed and its kind picked).
async function runScratchNote(page) {
  await openWorkbench(page);
  await until("the server answers", async () => (await statusItems(page)).some((t) => /Stet: \S+ · \d+ open/.test(t)));
  await runCommand(page, "Stet: Open Style Sheet");
  await until("the sheet's tab", async () => {
    const [active] = await texts(page.locator(".tabs-container .tab.active"));
    return active?.includes(config.sheetName) ? active : null;
  });
  await page.locator(".editor-instance .monaco-editor textarea").first().focus();
  await goToLine(page, 3);
  await runCommand(page, "Stet: Add Note at Cursor");
  const asked = await until("a message or a question", async () =>
    (await toasts(page)).some((t) => t.startsWith("Stet:")) ? "message" : (await quickInput(page)) ? "question" : null,
  );
  if (asked === "question") {
    await page.locator(".quick-input-widget input").fill(config.noteText);
    await page.keyboard.press("Enter");
    await until("the kind", async () => (await quickInput(page))?.rows.some((t) => t.includes("convention")));
    await page.locator(".quick-input-widget input").fill("note");
    await page.keyboard.press("Enter");
    await pause(3000);
  }
  result.asked = asked;
  result.toasts = await toasts(page);
  await screenshot(page, "scratch-note");
}

// "Stet: Mark Step…" on the narration's first line, above every step: a message at once, or
// (should it ask) the verdict picker.
async function runMarkNoStep(page) {
  await openWorkbench(page);
  await openTrajectory(page);
  await page.locator(".editor-instance .monaco-editor textarea").first().focus();
  await goToLine(page, 1);
  await runCommand(page, "Stet: Mark Step");
  result.asked = await until("a message or a question", async () =>
    (await toasts(page)).some((t) => t.startsWith("Stet:")) ? "message" : (await quickInput(page)) ? "question" : null,
  );
  result.toasts = await toasts(page);
  await screenshot(page, "mark-no-step");
}

// "Stet: Record Margin Notes in File" twice on the file: what the status bar says it recorded,
// then the message for a file that has none left.
async function runRecordAll(page) {
  await openWorkbench(page);
  await quickOpen(page, config.file, config.fileName, "def pay");
  await until("the margin note's diagnostic", async () =>
    (await texts(page.locator(".markers-panel .monaco-list-row"))).length > 0 ||
    (await page.keyboard.press("Control+Shift+M"), false),
  );
  await runCommand(page, "Stet: Record Margin Notes in File");
  result.recorded = await statusMessage(page, "what was recorded", /margin notes? recorded/);
  await until("the comment removed", async () => !(await editorText(page)).includes("stet:"));
  await runCommand(page, "Stet: Record Margin Notes in File");
  result.toasts = await until("the second run's message", async () => {
    const found = await toasts(page);
    return found.some((t) => t.startsWith("Stet:")) ? found : null;
  });
  await screenshot(page, "record-all");
}

// The Stet view showing the working trajectory while a session is imported into it from
// outside (the command line, as a harness's hook does): its row's steps and harnesses follow.
async function runOutsideImport(page) {
  await openWorkbench(page);
  await runCommand(page, "Stet: Show Stet View");
  const working = async () => (await treeRows(page)).find((row) => row.label.startsWith("working ")) ?? null;
  result.before = await until("the working trajectory's row", working);
  const [cli, ...cliArgs] = config.stetCli;
  execFileSync(cli, [...cliArgs, "trajectory", "import", config.transcript], {
    cwd: config.root,
    encoding: "utf8",
    timeout: TIMEOUT,
  });
  result.after = await until("the row after the import", async () => {
    const row = await working();
    return row && row.description !== result.before.description ? row : null;
  });
  await screenshot(page, "outside-import");
}

// The Stet view while the server ends without being asked (its process killed) and the
// language client starts it again (config.pidLog: a process id a start): the working
// trajectory's row before; the view refreshed while the server is down (nothing to list);
// the row again once the second server runs, and its children.
async function runViewHeal(page) {
  await openWorkbench(page);
  await runCommand(page, "Stet: Show Stet View");
  const working = async () => (await treeRows(page)).find((row) => row.label.startsWith("working ")) ?? null;
  result.before = await until("the working trajectory's row", working);
  const pids = () => readFileSync(config.pidLog, "utf8").split("\n").filter(Boolean);
  const [first] = pids();
  process.kill(Number(first), "SIGKILL");
  result.rowsWhileDown = await acting(
    "the view refreshed while the server is down",
    () => runCommand(page, "Stet: Refresh"),
    async () => ((await treeRows(page)).length === 0 && pids().length === 1 ? [] : null),
    { every: 1500 },
  );
  await screenshot(page, "view-while-down");
  result.after = await until("the working trajectory's row again", working);
  result.pidsAfter = pids();
  const rows = page.locator(".part.sidebar .monaco-list-row");
  await expandRow(page, rows, "working ");
  result.stepAfter = await until("the trajectory's sessions", async () =>
    (await treeRows(page)).find((row) => row.level > 2) ?? null,
  );
  await screenshot(page, "view-healed");
}

// The Stet view while the style sheet (config.sheetPath) is, for a while, a link the server
// refuses to read (to config.linkTarget, holding the same text): the entries' group before;
// the refusal once the view is refreshed; the group again, unasked, once the file is back.
async function runViewRecover(page) {
  await openWorkbench(page);
  await runCommand(page, "Stet: Show Stet View");
  const entries = async () => (await treeRows(page)).find((row) => row.label.startsWith("Entries")) ?? null;
  result.before = await until("the entries' group", entries);
  const text = readFileSync(config.sheetPath);
  writeFileSync(config.linkTarget, text);
  unlinkSync(config.sheetPath);
  symlinkSync(config.linkTarget, config.sheetPath);
  result.rowsBroken = await acting(
    "the refusal in the view",
    () => runCommand(page, "Stet: Refresh"),
    async () => {
      const rows = await treeRows(page);
      return rows.some((row) => row.label.includes(config.problem)) ? rows : null;
    },
    { every: 3000 },
  );
  await screenshot(page, "view-refused");
  unlinkSync(config.sheetPath);
  writeFileSync(config.sheetPath, text);
  result.after = await until("the entries' group again", entries);
  result.rowsAfter = await treeRows(page);
  await screenshot(page, "view-recovered");
}

// "Stet: Commit Trajectory (Capstone)" with no working trajectory: a message at once, or
// (should it ask) the message box.
async function runCapstoneNone(page) {
  await openWorkbench(page);
  await until("the server answers", async () => (await statusItems(page)).some((t) => /Stet: \S+ · \d+ open/.test(t)));
  await runCommand(page, "Stet: Commit Trajectory (Capstone)");
  result.asked = await until("a message or a question", async () =>
    (await toasts(page)).some((t) => t.startsWith("Stet:")) ? "message" : (await quickInput(page)) ? "question" : null,
  );
  result.toasts = await toasts(page);
  await screenshot(page, "capstone-none");
}

// config.viewTarget's row in the Stet view: its context menu's "Commit Trajectory (Capstone)…",
// which the server refuses while config.indexLock is there; the lock removed, the palette's
// "Stet: Commit Trajectory (Capstone)" offers the targets, config.paletteTarget picked and
// committed with config.capstoneMessage.
async function runCapstoneTarget(page) {
  await openWorkbench(page);
  await runCommand(page, "Stet: Show Stet View");
  const rows = page.locator(".part.sidebar .monaco-list-row");
  result.treeRows = await until("the left trajectories in the Stet view", async () => {
    const found = await treeRows(page);
    return found.filter((row) => row.label.startsWith("left ") && row.description.startsWith("left by ")).length === 2
      ? found
      : null;
  });
  const row = rows.filter({ hasText: `left by ${config.viewTarget}` }).first();
  const menuItem = await contextMenuItem(page, "the left trajectory's context menu", row, "Commit Trajectory (Capstone)");
  result.menu = await texts(page.locator(".context-view .action-item"));
  await screenshot(page, "left-trajectory-menu");
  await chooseMenuItem(page, menuItem);
  const input = page.locator(".quick-input-widget input");
  result.viewBox = await until("the view's capstone message box", async () => {
    const shown = await quickInput(page);
    return shown?.title.includes(config.viewTarget) && !shown.rows.length ? shown : null;
  });
  await input.fill(config.capstoneMessage);
  await page.keyboard.press("Enter");
  result.viewModes = await until("the view's capstone mode picker", async () => {
    const shown = await quickInput(page);
    return shown?.rows.some((t) => t.includes("Dry run")) ? shown.rows : null;
  });
  await input.fill("Commit");
  await page.keyboard.press("Enter");
  result.refusal = await until("the refusal", async () =>
    (await toasts(page)).find((t) => t.startsWith("Stet:") && t.includes("index")) ?? null,
  );
  await screenshot(page, "left-trajectory-refused");
  unlinkSync(config.indexLock);

  await runCommand(page, "Stet: Commit Trajectory (Capstone)");
  result.targets = await until("the capstone's targets", async () => {
    const shown = await quickInput(page);
    return shown?.rows.length && shown.title.includes("Capstone") ? shown : null;
  });
  await screenshot(page, "capstone-targets");
  await pickRow(page, "the palette's target", config.paletteTarget);
  result.paletteBox = await until("the palette's capstone message box", async () => {
    const shown = await quickInput(page);
    return shown?.title.includes(config.paletteTarget) && !shown.rows.length ? shown : null;
  });
  await input.fill(config.capstoneMessage);
  await page.keyboard.press("Enter");
  await until("the palette's capstone mode picker", async () => (await quickInput(page))?.rows.some((t) => t.includes("Dry run")));
  await input.fill("Commit");
  await page.keyboard.press("Enter");
  result.committed = await until("the commit's message", async () =>
    (await toasts(page)).find((t) => t.includes("committed as")) ?? null,
  );
  await screenshot(page, "left-trajectory-committed");
}

// A window of two repositories on one branch (config.folders, their folder names): each
// one's file opened in turn; the status bar item and the Stet view's entries group then.
async function runMultiRoot(page) {
  await openWorkbench(page);
  await runCommand(page, "Stet: Show Stet View");
  result.seen = [];
  for (const folder of config.folders) {
    await acting(
      `${folder}'s pay.py open`,
      async () => {
        const input = page.locator(".quick-input-widget input");
        if (!(await input.isVisible())) {
          await page.keyboard.press("Control+P");
          await input.waitFor({ state: "visible", timeout: 3000 });
        }
        await input.fill("pay.py");
        await page.locator(".quick-input-list .monaco-list-row").filter({ hasText: folder }).first().click({ timeout: 3000 });
      },
      async () => (await texts(page.locator(".tabs-container .tab.active"))).some((t) => t.includes("pay.py")) &&
        (await page.title()).includes("pay.py"),
      { every: 5000 },
    );
    const status = await until(`the status bar names ${folder}`, async () =>
      (await statusItems(page)).find((t) => t.includes(`Stet: ${folder} ·`)) ?? null,
    );
    const group = await until(`the view names ${folder}`, async () =>
      (await treeRows(page)).find((row) => row.label.startsWith("Entries") && row.label.includes(folder)) ?? null,
    );
    // Stet: Import Agent Session says which repository the session goes into.
    await runCommand(page, "Stet: Import Agent Session…");
    const importing = await until(`the import names ${folder}`, async () => {
      const shown = await quickInput(page);
      return shown?.title.includes("Import Agent Session") ? shown.title : null;
    });
    await page.keyboard.press("Escape");
    result.seen.push({ folder, status, group: group.label, importing });
    await screenshot(page, `multiroot-${folder}`);
  }
}

// The Stet view when the server refuses to list the style sheet: its rows (config.problem, a
// part of the server's message, among them) and the view's welcome text, if shown.
async function runViewProblem(page) {
  await openWorkbench(page);
  await runCommand(page, "Stet: Show Stet View");
  result.rows = await until("the refusal in the view", async () => {
    const rows = await treeRows(page);
    return rows.some((row) => row.label.includes(config.problem)) ? rows : null;
  });
  result.welcome = await texts(page.locator(".part.sidebar .welcome-view-content"));
  await screenshot(page, "view-problem");
}

// "Stet: Open Trajectory" with no working trajectory but a committed one: what it asks or
// says; a pick is taken (Enter) and the narration's path read from the breadcrumbs.
async function runOpenCommitted(page) {
  await openWorkbench(page);
  await until("the server answers", async () => (await statusItems(page)).some((t) => /Stet: \S+ · \d+ open/.test(t)));
  await runCommand(page, "Stet: Open Trajectory");
  result.asked = await until("a message or a question", async () =>
    (await toasts(page)).some((t) => t.startsWith("Stet:")) ? "message" : (await quickInput(page)) ? "question" : null,
  );
  result.toasts = await toasts(page);
  if (result.asked === "question") {
    result.pick = await until("the trajectories", async () => {
      const shown = await quickInput(page);
      return shown?.rows.length ? shown : null;
    });
    await page.keyboard.press("Enter");
    result.opened = await until("the narration", async () => {
      const crumbs = (await texts(page.locator(".breadcrumbs-control .monaco-breadcrumb-item"))).join("/");
      return crumbs.includes("narration.md") ? crumbs : null;
    });
  }
  await screenshot(page, "open-committed");
}

// Where comment threads can be started: the commenting-range glyphs in the gutter of a file
// of the repository, then of a file outside it (config.outsideFile).
async function runCommentRanges(page) {
  await openWorkbench(page);
  const glyphs = page.locator(".editor-instance .comment-range-glyph");
  await quickOpen(page, config.file, config.fileName, "def pay");
  result.inRepository = await until("the repository file's glyphs", async () => (await glyphs.count()) || null);
  await quickOpen(page, config.outsideFile, config.outsideName, config.outsideShows);
  await pause(3000); // the provider's answer for the new editor
  result.outside = await glyphs.count();
  await screenshot(page, "comment-ranges");
}

const run = {
  commentranges: runCommentRanges,
  viewheal: runViewHeal,
  viewrecover: runViewRecover,
  opencommitted: runOpenCommitted,
  viewproblem: runViewProblem,
  multiroot: runMultiRoot,
  capstonenone: runCapstoneNone,
  capstonetarget: runCapstoneTarget,
  outsideimport: runOutsideImport,
  recordall: runRecordAll,
  marknostep: runMarkNoStep,
  scratchnote: runScratchNote,
  crashedstart: runCrashedStart,
  norepo: runNoRepository,
  listgone: runListGone,
  branchswitch: runBranchSwitch,
  dirtysheet: runDirtySheet,
  messages: runMessages,
  failedstart: runFailedStart,
  pausedrecord: runPausedRecord,
  importfile: runImportFile,
  outside: runOutside,
  brief: runBrief,
  restart: runRestart,
  treeroute: runTreeRoute,
  threaddiscard: runThreadDiscard,
  editcancel: runEditCancel,
  definition: runDefinition,
  unplaced: runUnplaced,
  eventsdiag: runEventsDiagnostics,
  upkeep: runUpkeep,
  notes: runNotes,
  mark: runMark,
  graduate: runGraduate,
  review: runReview,
  sidebar: runSidebar,
  threads: runThreads,
  scenario: runScenario,
  tree: runTree,
  sheetfile: runSheetFile,
}[config.scenario ?? "notes"];

const browser = await chromium.launch({
  executablePath: config.chromium,
  headless: true,
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
let failed = false;
try {
  const context = await browser.newContext({ viewport: { width: 1400, height: config.viewportHeight ?? 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT);
  try {
    await run(page);
    result.ok = true;
  } catch (error) {
    failed = true;
    result.ok = false;
    result.error = String(error?.stack ?? error);
    try {
      await screenshot(page, "failure");
      result.editor = await editorText(page);
      result.toasts = await toasts(page);
      result.problems = result.problems ?? (await texts(page.locator(".markers-panel .monaco-list-row")));
    } catch {
      // the page is gone: nothing more to show
    }
  }
} finally {
  await browser.close();
  result.totalMs = Date.now() - started;
  writeFileSync(config.out, JSON.stringify(result, null, 1));
}
process.exit(failed ? 1 : 0);
