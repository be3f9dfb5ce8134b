// Drives VS Code (code-server) in Debian's Chromium like a reviewer, and writes what it saw as
// JSON for test_editor_vscode.py to assert on. config.scenario picks what it does:
// - "notes" (the default): opens a file with a margin comment, checks the Problems panel,
//   records the note through the quick fix (Ctrl+. and Enter), adds a note with "Stet: Add Note
//   at Cursor" and one through a comment thread, changes a stet.* setting in the Settings editor;
// - "import": "Stet: Import Agent Session…" (picks the session), "Stet: Open Trajectory";
// - "mark": "Stet: Open Trajectory", then "Stet: Mark Step…" on a line of the narration;
// - "graduate": "Stet: Open Style Sheet", Ctrl+. on an entry: "Propose entry ID as a skill" with
//   the name typed, then "Stet: Commit Trajectory (Capstone)" as a dry run and for real;
// - "sidebar": the status bar item (branch, open entries), a click opens the Stet view, a click
//   on the entry in its tree opens the anchor; with a trajectory (sessionPrompt), a step of it
//   opens from the tree and the entry graduates into it from its context menu.
// Usage: node vscode_drive.mjs CONFIG.json   (url, scenario, file, marginLine, noteLine, noteText,
// commentLine, commentText, root, stetCli, agentLine, agentText, sessionPrompt, markLine,
// markText, entryId, entryLine, entryText, branch, stepLabel, badName, skillName, capstoneMessage, screenshots,
// out, chromium, timeoutMs).
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
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

const texts = (locator) => locator.evaluateAll((nodes) => nodes.map((n) => n.textContent ?? ""));

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
  await page.keyboard.press("Control+.");
  const actions = page.locator(".action-widget .monaco-list-row");
  result.actions = await until("quick fixes", async () => {
    const found = await texts(actions);
    return found.some((t) => t.includes("Record margin note to style sheet")) ? found : null;
  });
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
  // The thread collapses into its gutter icon and shows up in the Comments panel.
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

async function runImport(page) {
  await openWorkbench(page);
  await runCommand(page, "Stet: Import Agent Session");
  const sessions = page.locator(".quick-input-list .monaco-list-row");
  result.sessions = await until("sessions offered", async () => {
    const found = await texts(sessions);
    return found.some((t) => t.includes(config.sessionPrompt)) ? found : null;
  });
  await screenshot(page, "sessions");
  await page.keyboard.press("Enter");
  result.imported = await until("import reported", async () =>
    (await toasts(page)).find((t) => t.includes("events imported into")) ?? null,
  );
  await screenshot(page, "imported");
  await openTrajectory(page);
  await screenshot(page, "trajectory");
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
  };
}

/** "Stet: Commit Trajectory (Capstone)": the message (an input box), then "Dry run" or "Commit". */
async function runCapstone(page, message, mode) {
  await runCommand(page, "Stet: Commit Trajectory (Capstone)");
  const input = page.locator(".quick-input-widget input");
  await until("capstone message box", async () => {
    const shown = await quickInput(page);
    return shown?.title.includes("Capstone") && !shown.rows.length;
  });
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
  const actions = page.locator(".action-widget .monaco-list-row");
  result.actions = await until("graduation quick fixes", async () => {
    if (!(await actions.count())) {
      await page.keyboard.press("Control+.");
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    const found = await texts(actions);
    return found.some((t) => t.includes(title)) ? found : null;
  });
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
  await item.first().locator("a, .statusbar-item-label").first().click();
  const rows = page.locator(".part.sidebar .monaco-list-row");
  result.tree = await until("entry in the Stet view", async () => {
    const found = await texts(rows);
    return found.some((t) => t.includes(config.entryText)) ? found : null;
  });
  await screenshot(page, "stet-view");
  await rows.filter({ hasText: config.entryText }).first().click();
  result.activeTab = await until("anchor's file open", async () => {
    const [active] = await texts(page.locator(".tabs-container .tab.active"));
    return active?.includes(config.fileName) ? active : null;
  });
  result.cursor = await until("cursor at the anchor", async () => {
    const found = await texts(page.locator(".statusbar .statusbar-item"));
    return found.find((t) => /Ln \d+, Col \d+/.test(t)) ?? null;
  });
  await screenshot(page, "anchor-open");
  if (!config.sessionPrompt) {
    return;
  }

  // The working trajectory: expand it, then its session, click a step: events.jsonl at its line.
  await rows.filter({ hasText: "working " }).first().click();
  const session = rows.filter({ hasText: "session " }).first();
  await session.waitFor({ timeout: TIMEOUT });
  await session.click();
  const stepRow = rows.filter({ hasText: config.stepLabel }).first();
  await stepRow.waitFor({ timeout: TIMEOUT });
  result.stepRows = await texts(rows);
  await stepRow.click();
  result.stepTab = await until("events.jsonl open", async () => {
    const [active] = await texts(page.locator(".tabs-container .tab.active"));
    return active?.includes("events.jsonl") ? active : null;
  });
  // The tab shows before the editor reveals the step's line: wait for that line itself.
  result.stepCursor = await until("cursor at the step", async () => {
    const found = await texts(page.locator(".statusbar .statusbar-item"));
    return found.find((t) => t.startsWith(`Ln ${config.stepLine}, Col 1`)) ?? null;
  });
  await screenshot(page, "step-open");

  // The entry's context menu: "Graduate into the Trajectory".
  await rows.filter({ hasText: config.entryText }).first().click({ button: "right" });
  const menuItem = page.locator(".context-view .action-item", { hasText: "Graduate into the Trajectory" });
  await menuItem.first().waitFor({ timeout: TIMEOUT });
  result.menu = await texts(page.locator(".context-view .action-item"));
  await screenshot(page, "entry-menu");
  await menuItem.first().click();
  result.graduatedRow = await until("entry graduated in the tree", async () => {
    const found = await texts(rows);
    return found.find((t) => t.includes(config.entryText) && t.includes("graduated-trajectory")) ?? null;
  });
  result.statusAfter = await until("status bar counts no open entry", async () => {
    const found = await texts(item);
    return found.find((t) => t.includes("0 open")) ?? null;
  });
  await screenshot(page, "entry-graduated");
}

const run = {
  notes: runNotes,
  import: runImport,
  mark: runMark,
  graduate: runGraduate,
  sidebar: runSidebar,
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
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
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
