// The porter gateway page: the runs an API key may read and their inbox
// files, live. Plain modules, no build step: the page is one screen and a
// few hundred lines; every string from the server is set with textContent.
// EventSource cannot send an Authorization header, so the event stream is
// read with fetch and a stream reader. Downloads go through a one-use
// download link the gateway hands out (POST …/downloads), so the browser
// streams them with its own progress while the key never enters a URL.
"use strict";

const KEY_STORE = "porter.apiKey";
const RETRY_MS = 2000;
const FRESH_MS = 8000;

/** runId -> {info, files: Map(path -> record), fresh: Set(path), section} */
const runs = new Map();
let ttlMs = null;
let controller = null;
let refreshTimer = null;
// Each change the live stream brings gets the next number; a file or run
// remembers the number of its last live change. A list of the runs asked
// for before that change is older than it, and neither removes a file that
// came live nor brings back one removed live (its answer can arrive after
// the events that followed its question).
let liveSeq = 0;
const liveAt = new Map();
let keepTarget = null;
let previewSeq = 0;

function $(id) {
  return document.getElementById(id);
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Sizes as the gateway writes them in stubs: "1 byte", "912 bytes", "2.8 KiB". */
function humanSize(bytes) {
  if (bytes === 1) return "1 byte";
  if (bytes < 1024) return `${bytes} bytes`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = bytes / 1024;
  let unit = 0;
  while (Math.round(value * 10) / 10 >= 1024 && unit + 1 < units.length) {
    value /= 1024;
    unit += 1;
  }
  const tenths = Math.round(value * 10) / 10;
  const shown = Number.isInteger(tenths) ? tenths.toFixed(0) : tenths.toFixed(1);
  return `${shown} ${units[unit]}`;
}

function duration(ms) {
  const minutes = Math.round(ms / 60000);
  if (minutes < 1) return "under a minute";
  if (minutes < 120) return `${minutes} min`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} h`;
  return `${Math.round(hours / 24)} days`;
}

function when(ms) {
  const date = new Date(ms);
  const today = new Date().toDateString() === date.toDateString();
  return today
    ? date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" })
    : date.toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
}

function baseName(path) {
  return path.split("/").pop();
}

/** The kind a filter sorts a media type into. */
function kindOf(mediaType) {
  const type = (mediaType || "").toLowerCase();
  if (type.startsWith("image/")) return "image";
  if (
    type === "application/pdf" ||
    type.includes("officedocument") ||
    type.includes("opendocument") ||
    type === "application/msword" ||
    type === "application/rtf"
  )
    return "document";
  if (type.startsWith("text/") || type === "application/json") return "text";
  if (/zip|tar|gzip|bzip2|x-xz|zstd|7z|rar/.test(type)) return "archive";
  return "other";
}

/** The tool a file came from, short: `get-tiny-image`, `WebFetch`. */
function toolOf(file) {
  const origin = file.origin || "";
  const slash = origin.lastIndexOf("/");
  if (origin.startsWith("mcp:") && slash > 0) return origin.slice(slash + 1);
  try {
    const call = JSON.parse(file.call || "{}");
    if (typeof call.tool === "string") return call.tool.replace(/^mcp__[^_]+__/, "");
  } catch (error) {
    // not JSON: fall through
  }
  return origin || "a tool";
}

function runTitle(run) {
  const info = run.info || {};
  const parts = [];
  if (info.client) parts.push(info.client);
  const newestFirst = [...run.files.values()].sort((a, b) => a.created_at - b.created_at);
  const tool = info.first_tool ? info.first_tool.replace(/^mcp__.+?__/, "") : newestFirst[0] && toolOf(newestFirst[0]);
  parts.push(tool || "Run");
  if (info.started_at) parts.push(when(info.started_at));
  return parts.join(" · ");
}

function announce(text) {
  const announcer = $("announcer");
  announcer.textContent = "";
  // A change a moment later is read even when the text repeats.
  setTimeout(() => {
    announcer.textContent = text;
  }, 50);
}

function notice(text) {
  $("notice").textContent = text;
  $("notice").hidden = !text;
}

function setStatus(text, stream) {
  $("status").textContent = text;
  document.body.dataset.stream = stream;
}

function showLogin(message, keepTyped) {
  if (controller) controller.abort();
  controller = null;
  runs.clear();
  $("runs").replaceChildren();
  $("inbox").hidden = true;
  $("forget").hidden = true;
  notice("");
  $("login").hidden = false;
  $("login-message").textContent = message || "";
  if (!keepTyped) $("key").value = "";
  setStatus("not connected", "off");
  $("key").focus();
  if (keepTyped) $("key").select();
}

function authHeaders(key) {
  return { Authorization: `Bearer ${key}` };
}

function currentKey() {
  const key = sessionStorage.getItem(KEY_STORE);
  if (!key) showLogin();
  return key;
}

function fileUrl(runId, path) {
  return `/v1/runs/${encodeURIComponent(runId)}/inbox/${path.split("/").map(encodeURIComponent).join("/")}`;
}

/** Runs the File tool on a run for this key; its result or an error text. */
async function fileOp(runId, args) {
  const key = currentKey();
  if (!key) return null;
  const response = await fetch(`/v1/runs/${encodeURIComponent(runId)}/file`, {
    method: "POST",
    headers: { ...authHeaders(key), "Content-Type": "application/json" },
    body: JSON.stringify(args),
    cache: "no-store",
  });
  if (response.status === 401) {
    showLogin("That key is no longer accepted.");
    return null;
  }
  if (!response.ok) return { isError: true, content: [{ type: "text", text: `the gateway answered ${response.status}` }] };
  return response.json();
}

function resultText(result) {
  return (result.content || [])
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("\n");
}

/** Asks for a one-use link and lets the browser download it (its own progress). */
async function download(runId, path) {
  const key = currentKey();
  if (!key) return;
  const response = await fetch(`/v1/runs/${encodeURIComponent(runId)}/downloads`, {
    method: "POST",
    headers: { ...authHeaders(key), "Content-Type": "application/json" },
    body: JSON.stringify(path ? { path } : {}),
    cache: "no-store",
  });
  if (response.status === 401) return showLogin("That key is no longer accepted.");
  if (!response.ok) {
    const gone = response.status === 404 && path;
    notice(gone ? `${baseName(path)} is no longer in the inbox.` : `The download could not start (${response.status}).`);
    if (gone) removeFile(runId, path, false);
    return;
  }
  const { url } = await response.json();
  const save = document.createElement("a");
  save.href = url;
  save.download = "";
  save.hidden = true;
  document.body.append(save);
  save.click();
  save.remove();
  announce(path ? `Downloading ${baseName(path)}` : "Downloading all files as a zip");
}

/** The run's record, made if new. */
function ensureRun(id, info) {
  let run = runs.get(id);
  if (!run) {
    run = { id, info: null, files: new Map(), fresh: new Set(), section: null };
    runs.set(id, run);
  }
  if (info) run.info = { ...(run.info || {}), ...info };
  return run;
}

function addFile(runId, file, fresh) {
  const run = ensureRun(runId);
  const known = run.files.has(file.path);
  run.files.set(file.path, { ...(run.files.get(file.path) || {}), ...file });
  if (fresh && !known) {
    run.fresh.add(file.path);
    setTimeout(() => {
      run.fresh.delete(file.path);
      const row = run.section && run.section.querySelector(`tr[data-path="${CSS.escape(file.path)}"]`);
      if (row) row.classList.remove("fresh");
    }, FRESH_MS);
    announce(`New file ${baseName(file.path)} in ${runTitle(run)}`);
  }
}

function removeFile(runId, path, announced) {
  liveSeq += 1;
  liveAt.set(fileKey(runId, path), liveSeq);
  const run = runs.get(runId);
  if (!run || !run.files.delete(path)) return;
  run.fresh.delete(path);
  if (announced) announce(`${baseName(path)} was removed from ${runTitle(run)}`);
  render();
}

function runState(info) {
  if (info.purged) return "purged";
  return info.ended_at ? "ended" : "going";
}

function expiryText(info) {
  if (info.purged) return "its files were removed when the inbox time ran out";
  if (info.ended_at && ttlMs !== null) {
    const at = info.ended_at + ttlMs;
    const left = at - Date.now();
    return left > 0 ? `files kept until ${when(at)} (${duration(left)} left)` : "files are about to be removed";
  }
  if (ttlMs !== null) return `files kept for ${duration(ttlMs)} after the run ends`;
  return "";
}

function emptyText(info) {
  if (info.purged) return "Its files were removed when the inbox time ran out.";
  if (info.ended_at) return "This run ended without keeping any files.";
  return "No files yet; they appear here as they are captured.";
}

function filters() {
  const text = $("filter-text").value.trim().toLowerCase();
  const kind = $("filter-kind").value;
  const within = Number($("filter-time").value || 0);
  return { text, kind, within, showEmpty: $("filter-empty").checked };
}

function fileMatches(run, file, filter) {
  if (filter.kind && kindOf(file.media_type) !== filter.kind) return false;
  if (filter.within && Date.now() - file.created_at > filter.within) return false;
  if (filter.text) {
    const haystack = [file.path, file.media_type, file.origin, runTitle(run)].join(" ").toLowerCase();
    if (!haystack.includes(filter.text)) return false;
  }
  return true;
}

function actionButton(label, name, onClick) {
  const button = element("button", "", label);
  button.type = "button";
  button.setAttribute("aria-label", `${label} ${name}`);
  button.addEventListener("click", onClick);
  return button;
}

function fileRow(run, file) {
  const name = baseName(file.path);
  const row = element("tr", run.fresh.has(file.path) ? "fresh" : "");
  row.dataset.path = file.path;

  const nameCell = element("td", "name");
  nameCell.dataset.label = "Name";
  const open = element("button", "open", name);
  open.type = "button";
  open.setAttribute("aria-label", `Preview ${name}`);
  open.dataset.focus = `preview:${run.id}:${file.path}`;
  open.addEventListener("click", () => preview(run.id, file));
  nameCell.append(open);
  const folder = file.path.includes("/") ? file.path.slice(0, file.path.lastIndexOf("/")) : "";
  if (folder) nameCell.append(element("span", "folder", `in ${folder}`));

  const typeCell = element("td", "", file.media_type);
  typeCell.dataset.label = "Type";
  const sizeCell = element("td", "", humanSize(file.size));
  sizeCell.dataset.label = "Size";
  const timeCell = element("td");
  timeCell.dataset.label = "Captured";
  const time = element("time", "", when(file.created_at));
  time.dateTime = new Date(file.created_at).toISOString();
  timeCell.append(time);
  const fromCell = element("td", "", toolOf(file));
  fromCell.dataset.label = "From";
  fromCell.title = file.origin || "";

  const actions = element("td");
  actions.dataset.label = "Actions";
  const box = element("div", "actions");
  const downloadButton = actionButton("Download", name, () => download(run.id, file.path));
  downloadButton.dataset.focus = `download:${run.id}:${file.path}`;
  const keepButton = actionButton("Keep", name, () => askKeep(run.id, file));
  keepButton.dataset.focus = `keep:${run.id}:${file.path}`;
  const removeButton = actionButton("Remove", name, () => remove(run.id, file, removeButton));
  removeButton.dataset.focus = `remove:${run.id}:${file.path}`;
  box.append(downloadButton, keepButton, removeButton);
  const more = element("details", "more");
  more.dataset.key = `details:${run.id}:${file.path}`;
  const summary = element("summary", "", "Details");
  summary.setAttribute("aria-label", `Details of ${name}`);
  summary.dataset.focus = more.dataset.key;
  const list = element("dl");
  for (const [term, value] of [
    ["Reference", file.ref || `volume:inbox:${file.path}`],
    ["SHA-256", file.sha256],
    ["Source", file.origin],
    ["Call", file.call],
  ]) {
    list.append(element("dt", "", term), element("dd", "", value || ""));
  }
  more.append(summary, list);
  actions.append(box, more);

  row.append(nameCell, typeCell, sizeCell, timeCell, fromCell, actions);
  return row;
}

function runSection(run, shown) {
  const info = run.info || {};
  const title = runTitle(run);
  const section = element("section", "run");
  section.dataset.run = run.id;
  const headingId = `run-${run.id}`;
  section.setAttribute("aria-labelledby", headingId);
  const heading = element("h3", "", title);
  heading.id = headingId;
  const total = [...run.files.values()].reduce((sum, file) => sum + file.size, 0);
  const count = run.files.size;
  const owner = info.owner ? `${info.owner.key_name} (${info.owner.tenant})` : "";
  const meta = [
    `${count} ${count === 1 ? "file" : "files"}, ${humanSize(total)}`,
    runState(info),
    count > 0 && expiryText(info),
    owner && `by ${owner}`,
    `run ${run.id.slice(0, 8)}`,
  ].filter(Boolean);
  const metaLine = element("p", "meta", meta.join(" · "));
  section.append(heading, metaLine);
  if (count === 0) {
    section.append(element("p", "empty", emptyText(info)));
    return section;
  }
  const actions = element("div", "run-actions");
  const all = element("button", "", `Download all (${count}, zip)`);
  all.type = "button";
  all.setAttribute("aria-label", `Download all ${count} files of ${title} as a zip`);
  all.dataset.focus = `all:${run.id}`;
  all.addEventListener("click", () => download(run.id, null));
  actions.append(all);
  section.append(actions);
  const table = element("table", "files");
  const caption = element("caption", "visually-hidden", `Files of ${title}, newest first`);
  const head = element("thead");
  const headRow = element("tr");
  for (const label of ["Name", "Type", "Size", "Captured", "From", "Actions"]) {
    const th = element("th", "", label);
    th.scope = "col";
    headRow.append(th);
  }
  head.append(headRow);
  const body = element("tbody");
  for (const file of shown) body.append(fileRow(run, file));
  table.append(caption, head, body);
  section.append(table);
  if (shown.length < count) {
    section.append(element("p", "muted", `${count - shown.length} more not shown by the filter.`));
  }
  return section;
}

/** Draws the runs again from what is known, keeping the keyboard focus. */
function render() {
  const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.focus : null;
  const filter = filters();
  const filtering = Boolean(filter.text || filter.kind || filter.within);
  const sections = [];
  let shownRuns = 0;
  const ordered = [...runs.values()].sort((a, b) => (a.id < b.id ? 1 : -1));
  for (const run of ordered) {
    const files = [...run.files.values()].sort((a, b) => b.created_at - a.created_at || (a.path < b.path ? -1 : 1));
    const shown = files.filter((file) => fileMatches(run, file, filter));
    if (files.length === 0 && !filter.showEmpty) continue;
    if (filtering && shown.length === 0 && files.length > 0) continue;
    if (filtering && files.length === 0) continue;
    const section = runSection(run, shown);
    run.section = section;
    sections.push(section);
    shownRuns += 1;
  }
  const opened = new Set([...document.querySelectorAll("details[data-key][open]")].map((node) => node.dataset.key));
  $("runs").replaceChildren(...sections);
  for (const node of document.querySelectorAll("details[data-key]")) {
    if (opened.has(node.dataset.key)) node.open = true;
  }
  const empty = [...runs.values()].filter((run) => run.files.size === 0).length;
  $("no-runs").hidden = runs.size > 0;
  const parts = [`Showing ${shownRuns} of ${runs.size} ${runs.size === 1 ? "run" : "runs"}`];
  if (empty && !filter.showEmpty) parts.push(`${empty} without files hidden`);
  $("summary").textContent = runs.size ? `${parts.join("; ")}.` : "";
  if (focused) {
    const again = [...document.querySelectorAll("[data-focus]")].find((node) => node.dataset.focus === focused);
    if (again) again.focus();
  }
}

async function remove(runId, file, button) {
  const name = baseName(file.path);
  if (button.dataset.confirm !== "yes") {
    button.dataset.confirm = "yes";
    button.textContent = "Really remove?";
    button.setAttribute("aria-label", `Really remove ${name}? Press again to remove it`);
    setTimeout(() => {
      if (!button.isConnected) return;
      button.dataset.confirm = "";
      button.textContent = "Remove";
      button.setAttribute("aria-label", `Remove ${name}`);
    }, 6000);
    return;
  }
  const result = await fileOp(runId, { op: "rm", path: file.ref || `volume:inbox:${file.path}` });
  if (!result) return;
  if (result.isError) {
    notice(`${name} was not removed: ${resultText(result)}`);
    return;
  }
  notice(`${name} was removed.`);
  removeFile(runId, file.path, true);
}

function askKeep(runId, file) {
  keepTarget = { runId, file };
  $("keep-title").textContent = `Keep a copy of ${baseName(file.path)}`;
  $("keep-message").textContent = "";
  $("keep").showModal();
  $("keep-to").focus();
}

async function keep(event) {
  event.preventDefault();
  if (!keepTarget) return;
  const { runId, file } = keepTarget;
  const to = $("keep-to").value.trim();
  if (!to) return;
  const result = await fileOp(runId, { op: "keep", path: file.ref || `volume:inbox:${file.path}`, to });
  if (!result) return;
  if (result.isError) {
    $("keep-message").textContent = resultText(result);
    return;
  }
  $("keep").close();
  keepTarget = null;
  notice(`Kept ${baseName(file.path)} as ${to}.`);
  announce(`Kept ${baseName(file.path)} as ${to}`);
}

/** Renders Markdown as plain elements: headings, lists, code and paragraphs, text only. */
function renderMarkdown(text) {
  const out = document.createDocumentFragment();
  let paragraph = [];
  let list = null;
  let code = null;
  const flush = () => {
    if (paragraph.length) {
      // Lines stay lines (a listing, a page of text); each is text only.
      const p = element("p");
      paragraph.forEach((line, index) => {
        if (index) p.append(element("br"));
        p.append(document.createTextNode(line));
      });
      out.append(p);
    }
    paragraph = [];
  };
  for (const line of text.split("\n")) {
    if (code !== null) {
      if (line.startsWith("```")) {
        out.append(element("pre", "", code.join("\n")));
        code = null;
      } else code.push(line);
      continue;
    }
    if (line.startsWith("```")) {
      flush();
      list = null;
      code = [];
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    const item = /^\s*(?:[-*+]|\d+\.)\s+(.*)$/.exec(line);
    if (heading) {
      flush();
      list = null;
      out.append(element(`h${Math.min(6, heading[1].length + 2)}`, "", heading[2]));
    } else if (item) {
      flush();
      if (!list) {
        list = element("ul");
        out.append(list);
      }
      list.append(element("li", "", item[1]));
    } else if (line.trim() === "") {
      flush();
      list = null;
    } else {
      list = null;
      paragraph.push(line.replace(/\t/g, "  ").trim());
    }
  }
  if (code !== null) out.append(element("pre", "", code.join("\n")));
  flush();
  return out;
}

/**
 * Splits the file view's text: its first line says what the file is; the
 * numbered lines ("   12\t…") are the file's text (extracted Markdown, a
 * listing); "[image …]" and "[resource …]" lines only mark attachments.
 */
function viewText(text) {
  const lines = text.split("\n");
  const numbered = /^\s*\d+\t/;
  if (!lines.some((line) => numbered.test(line))) {
    const [first, ...rest] = lines;
    return { note: first, markdown: rest.filter((line) => !/^\[(image|resource) /.test(line)).join("\n") };
  }
  const note = numbered.test(lines[0]) ? "" : lines[0];
  const markdown = lines
    .filter((line) => numbered.test(line))
    .map((line) => line.replace(numbered, ""))
    .join("\n");
  return { note, markdown };
}

const PREVIEW_IMAGES = ["image/png", "image/jpeg", "image/webp", "image/gif"];

/** Shows what porter's file view makes of a file: a scaled image, extracted Markdown, a listing. */
async function preview(runId, file) {
  const name = baseName(file.path);
  const dialog = $("preview");
  const body = $("preview-body");
  for (const img of body.querySelectorAll("img")) URL.revokeObjectURL(img.src);
  body.replaceChildren();
  $("preview-title").textContent = `Preview of ${name}`;
  $("preview-note").textContent = "Loading…";
  if (!dialog.open) dialog.showModal();
  $("preview-close").focus();
  previewSeq += 1;
  const mine = previewSeq;
  const result = await fileOp(runId, { op: "read", path: file.ref || `volume:inbox:${file.path}` });
  // A slower answer for a preview closed or replaced meanwhile is dropped.
  if (!result || mine !== previewSeq || !dialog.open) return;
  $("preview-note").textContent = result.isError
    ? "porter could not show this file."
    : `${file.media_type}, ${humanSize(file.size)}, as porter's file view shows it.`;
  for (const block of result.content || []) {
    if (block.type === "image" && PREVIEW_IMAGES.includes(block.mimeType) && typeof block.data === "string") {
      const bytes = Uint8Array.from(atob(block.data), (c) => c.charCodeAt(0));
      const img = element("img");
      img.src = URL.createObjectURL(new Blob([bytes], { type: block.mimeType }));
      img.alt = `Preview of ${name}`;
      body.append(img);
    } else if (block.type === "text" && typeof block.text === "string") {
      const { note, markdown } = viewText(block.text);
      if (note) $("preview-note").textContent = note;
      const container = element("div", "markdown");
      container.append(renderMarkdown(markdown));
      body.append(container);
    }
  }
}

/** Lists the key's runs and their files. */
async function loadRuns(key) {
  const asked = liveSeq;
  const response = await fetch("/v1/runs", { headers: authHeaders(key), cache: "no-store" });
  if (response.status === 401) {
    sessionStorage.removeItem(KEY_STORE);
    showLogin("That key was not accepted. Check it and try again.", true);
    return false;
  }
  if (!response.ok) throw new Error(`GET /v1/runs answered ${response.status}`);
  const body = await response.json();
  if (typeof body.inbox_ttl_ms === "number") ttlMs = body.inbox_ttl_ms;
  const seen = new Set();
  const newer = (key) => (liveAt.get(key) || 0) > asked;
  // Files the page showed that the list no longer holds were removed while
  // the live stream was away (or just before its event): a person hears of
  // them as of a removal seen live.
  const gone = [];
  for (const listed of body.runs) {
    seen.add(listed.id);
    const { files, ...info } = listed;
    const run = ensureRun(listed.id, info);
    const paths = new Set(files.map((file) => file.path));
    for (const path of [...run.files.keys()]) {
      if (paths.has(path) || newer(fileKey(listed.id, path))) continue;
      run.files.delete(path);
      run.fresh.delete(path);
      gone.push({ path, run });
    }
    if (newer(listed.id)) continue; // emptied live since the question
    for (const file of files) if (!newer(fileKey(listed.id, file.path))) addFile(listed.id, file, false);
  }
  if (gone.length === 1) announce(`${baseName(gone[0].path)} was removed from ${runTitle(gone[0].run)}`);
  else if (gone.length > 1) announce(`${gone.length} files were removed`);
  for (const id of [...runs.keys()]) if (!seen.has(id) && !newer(`run\n${id}`)) runs.delete(id);
  render();
  return true;
}

/** A run seen first in an event: list the runs again soon for its details. */
function refreshSoon(key) {
  if (refreshTimer) return;
  refreshTimer = setTimeout(() => {
    refreshTimer = null;
    loadRuns(key).catch(() => {});
  }, 500);
}

function fileKey(runId, path) {
  return `${runId}\n${path}`;
}

function onEvent(key, name, event) {
  if (!event || typeof event.run !== "string") return;
  const known = runs.has(event.run);
  const data = event.data || {};
  liveSeq += 1;
  liveAt.set(`run\n${event.run}`, liveSeq);
  if (name === "file_captured" && typeof data.path === "string") {
    liveAt.set(fileKey(event.run, data.path), liveSeq);
    addFile(event.run, { ...data, created_at: event.at }, true);
  } else if (name === "file_removed" && typeof data.path === "string") {
    removeFile(event.run, data.path, true);
  } else if (name === "inbox_cleared" || name === "inbox_purged") {
    liveAt.set(event.run, liveSeq);
    const run = ensureRun(event.run, name === "inbox_purged" ? { purged: true } : null);
    run.files.clear();
    run.fresh.clear();
  } else if (name === "run_started") {
    const started = { started_at: event.at };
    if (typeof data.client === "string") started.client = data.client;
    ensureRun(event.run, started);
  } else if (name === "run_ended") {
    ensureRun(event.run, { ended_at: event.at });
  } else {
    return;
  }
  render();
  if (!known) refreshSoon(key);
}

/** Reads a text/event-stream body, calling onEvent for each event. */
async function readEvents(key, body, signal) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  signal.addEventListener("abort", () => reader.cancel().catch(() => {}));
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replace(/\r\n/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line === "" || line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let text = colon < 0 ? "" : line.slice(colon + 1);
        if (text.startsWith(" ")) text = text.slice(1);
        if (field === "event") name = text;
        else if (field === "data") data.push(text);
      }
      if (data.length === 0) continue;
      let event;
      try {
        event = JSON.parse(data.join("\n"));
      } catch (error) {
        continue;
      }
      onEvent(key, name, event);
    }
  }
}

/** Opens the live stream, then lists the runs (so nothing falls between), then follows. */
async function connect(key) {
  if (controller) controller.abort();
  const mine = new AbortController();
  controller = mine;
  setStatus("connecting…", "connecting");
  try {
    const response = await fetch("/v1/events", {
      headers: { ...authHeaders(key), Accept: "text/event-stream" },
      cache: "no-store",
      signal: mine.signal,
    });
    if (response.status === 401) {
      sessionStorage.removeItem(KEY_STORE);
      showLogin("That key was not accepted. Check it and try again.", true);
      announce("That key was not accepted.");
      return;
    }
    if (!response.ok || !response.body) throw new Error(`GET /v1/events answered ${response.status}`);
    if (!(await loadRuns(key))) return;
    $("key").value = "";
    setStatus("live", "live");
    await readEvents(key, response.body, mine.signal);
  } catch (error) {
    if (mine.signal.aborted) return;
  }
  if (controller !== mine) return;
  setStatus("disconnected; reconnecting…", "retrying");
  setTimeout(() => {
    if (controller === mine) connect(key);
  }, RETRY_MS);
}

/**
 * Takes a key from the address's fragment (`#token=…`, the one-time key a
 * gateway without api_keys prints) into this tab, and clears it from the
 * address bar and the history.
 */
function keyFromAddress() {
  const found = /^#token=([0-9A-Za-z_-]+)$/.exec(window.location.hash);
  if (!found) return;
  sessionStorage.setItem(KEY_STORE, found[1]);
  history.replaceState(null, "", window.location.pathname + window.location.search);
}

function start() {
  keyFromAddress();
  const key = sessionStorage.getItem(KEY_STORE);
  if (!key) return showLogin();
  $("login").hidden = true;
  $("login-message").textContent = "";
  $("inbox").hidden = false;
  $("forget").hidden = false;
  connect(key);
}

document.addEventListener("DOMContentLoaded", () => {
  $("login").addEventListener("submit", (event) => {
    event.preventDefault();
    const key = $("key").value.trim();
    if (!key) return;
    sessionStorage.setItem(KEY_STORE, key);
    start();
  });
  $("forget").addEventListener("click", () => {
    sessionStorage.removeItem(KEY_STORE);
    showLogin();
  });
  for (const id of ["filter-text", "filter-kind", "filter-time", "filter-empty"]) {
    $(id).addEventListener("input", render);
  }
  $("preview-close").addEventListener("click", () => $("preview").close());
  $("keep-form").addEventListener("submit", keep);
  $("keep-cancel").addEventListener("click", () => $("keep").close());
  start();
});
