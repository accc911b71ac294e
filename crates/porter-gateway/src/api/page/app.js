// The porter gateway page: lists the runs an API key may read and their
// inbox files, live. Every string from the server is set with textContent.
// EventSource cannot send an Authorization header, so the event stream is
// read with fetch and a stream reader.
"use strict";

const KEY_STORE = "porter.apiKey";
const RETRY_MS = 2000;

/** runId -> {section, meta, list, empty, info, files: Map(path -> li)} */
const runs = new Map();
let controller = null;
let refreshTimer = null;

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

function captureLine(file) {
  const ref = file.ref || `volume:inbox:${file.path}`;
  return `⇩ ${ref} · ${file.media_type} · ${humanSize(file.size)} · from ${file.origin}`;
}

function setStatus(text, stream) {
  $("status").textContent = text;
  document.body.dataset.stream = stream;
}

function showLogin(message) {
  if (controller) controller.abort();
  controller = null;
  runs.clear();
  $("runs").replaceChildren();
  $("no-runs").hidden = true;
  $("forget").hidden = true;
  $("login").hidden = false;
  $("login-message").textContent = message || "";
  setStatus("not connected", "off");
  $("key").focus();
}

function authHeaders(key) {
  return { Authorization: `Bearer ${key}` };
}

/** The section of one run, made (in time order, newest first) if new. */
function ensureRun(id, info) {
  let run = runs.get(id);
  if (!run) {
    const section = element("section", "run");
    section.dataset.run = id;
    const title = element("h2", "", `run ${id}`);
    const meta = element("p", "meta", "");
    const list = element("ul", "files");
    const empty = element("p", "empty", "no files yet");
    section.append(title, meta, list, empty);
    run = { section, meta, list, empty, info: null, files: new Map() };
    runs.set(id, run);
    const container = $("runs");
    // Run ids are UUIDv7: their text sorts by start time.
    const later = [...container.children].find((other) => other.dataset.run < id);
    container.insertBefore(section, later || null);
    $("no-runs").hidden = true;
  }
  if (info) {
    run.info = info;
    const owner = info.owner ? `${info.owner.key_name} (${info.owner.tenant})` : "unknown owner";
    const started = info.started_at ? new Date(info.started_at).toLocaleString() : "";
    const state = info.purged ? "purged" : info.ended_at ? "ended" : "going";
    run.meta.textContent = `owner ${owner} · started ${started} · ${state}`;
  }
  return run;
}

/** Adds one file line to a run, once per path. */
function addFile(runId, file, fresh) {
  const run = ensureRun(runId);
  if (run.files.has(file.path)) return;
  const item = element("li", fresh ? "capture fresh" : "capture");
  item.dataset.path = file.path;
  const line = element("span", "line", captureLine(file));
  const link = element("a", "download", "download");
  link.href = "#";
  link.addEventListener("click", (event) => {
    event.preventDefault();
    download(runId, file.path, link);
  });
  item.append(line, link);
  run.list.append(item);
  run.files.set(file.path, item);
  run.empty.hidden = true;
}

/** Fetches one file with the key and hands it to the browser as a download. */
async function download(runId, path, link) {
  const key = sessionStorage.getItem(KEY_STORE);
  if (!key) return showLogin();
  const url = `/v1/runs/${encodeURIComponent(runId)}/inbox/${path
    .split("/")
    .map(encodeURIComponent)
    .join("/")}`;
  link.textContent = "downloading…";
  try {
    const response = await fetch(url, { headers: authHeaders(key), cache: "no-store" });
    if (response.status === 401) return showLogin("That key is no longer accepted.");
    if (!response.ok) {
      link.textContent = `download failed (${response.status})`;
      return;
    }
    const blob = await response.blob();
    const objectUrl = URL.createObjectURL(blob);
    const save = document.createElement("a");
    save.href = objectUrl;
    save.download = path.split("/").pop();
    document.body.append(save);
    save.click();
    save.remove();
    setTimeout(() => URL.revokeObjectURL(objectUrl), 60000);
    link.textContent = "download";
  } catch (error) {
    link.textContent = "download failed";
  }
}

/** Lists the key's runs and their files. */
async function loadRuns(key) {
  const response = await fetch("/v1/runs", { headers: authHeaders(key), cache: "no-store" });
  if (response.status === 401) {
    sessionStorage.removeItem(KEY_STORE);
    showLogin("That key was not accepted.");
    return false;
  }
  if (!response.ok) throw new Error(`GET /v1/runs answered ${response.status}`);
  const body = await response.json();
  for (const run of body.runs) {
    ensureRun(run.id, run);
    for (const file of run.files) addFile(run.id, file, false);
  }
  $("no-runs").hidden = runs.size > 0;
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

function onEvent(key, name, event) {
  if (!event || typeof event.run !== "string") return;
  const known = runs.has(event.run);
  if (name === "file_captured" && event.data && typeof event.data.path === "string") {
    addFile(event.run, event.data, true);
  } else if (name === "run_started") {
    ensureRun(event.run);
  } else if (name === "run_ended") {
    const run = ensureRun(event.run);
    if (run.info) ensureRun(event.run, { ...run.info, ended_at: event.at });
  } else {
    return;
  }
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
      showLogin("That key was not accepted.");
      return;
    }
    if (!response.ok || !response.body) throw new Error(`GET /v1/events answered ${response.status}`);
    if (!(await loadRuns(key))) return;
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

function start() {
  const key = sessionStorage.getItem(KEY_STORE);
  if (!key) return showLogin();
  $("login").hidden = true;
  $("forget").hidden = false;
  connect(key);
}

document.addEventListener("DOMContentLoaded", () => {
  $("login").addEventListener("submit", (event) => {
    event.preventDefault();
    const key = $("key").value.trim();
    if (!key) return;
    $("key").value = "";
    sessionStorage.setItem(KEY_STORE, key);
    start();
  });
  $("forget").addEventListener("click", () => {
    sessionStorage.removeItem(KEY_STORE);
    showLogin();
  });
  start();
});
