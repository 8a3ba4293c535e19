// mdcrawl's web page: start crawls, follow them live, fetch the results.
// Plain browser JavaScript, no build step and no CDN. The REST calls are docs/api.md's;
// live progress is its WebSocket protocol, with the client's part of "exactly once":
// keep the last seq handled per job, drop what is at or below it, re-subscribe with
// `after` on a gap, and after any disconnect reconnect and re-subscribe the same way.
"use strict";

const TERMINAL = new Set(["completed", "failed", "cancelled"]);
const TERMINAL_EVENTS = { "job.completed": "completed", "job.failed": "failed", "job.cancelled": "cancelled" };
const KEY_STORE = "mdcrawl.api_key";
const MAX_BACKOFF_MS = 5000;
const PING_MS = 25000;

const jobs = new Map(); // job_id -> {last, status, view, el, startedAt}
let socket = null;
let backoff = 200;

// --- the API key: from the URL the server printed (#key=...), else typed in ---

function apiKey() {
  return localStorage.getItem(KEY_STORE) || "";
}

function takeKeyFromUrl() {
  const match = location.hash.match(/key=([^&]+)/);
  if (match) {
    localStorage.setItem(KEY_STORE, decodeURIComponent(match[1]));
    history.replaceState(null, "", location.pathname); // keep the key out of the history
  }
}

function askForKey() {
  document.getElementById("key-box").hidden = false;
}

// --- REST ---

async function api(method, path, body) {
  const headers = { "x-api-key": apiKey() };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await response.json().catch(() => null);
  if (response.status === 401) askForKey();
  if (!response.ok) throw new Error(data && data.error ? data.error.message : `HTTP ${response.status}`);
  return data;
}

// The number fields' placeholder/min/max, as the server rendered them (serve/page.py):
// its defaults and caps, not numbers written into the page.
function applyOptionHints() {
  const block = document.getElementById("option-hints");
  if (!block) return;
  for (const [id, hints] of Object.entries(JSON.parse(block.textContent))) {
    const input = document.getElementById(id);
    if (!input) continue;
    for (const [attribute, value] of Object.entries(hints)) input.setAttribute(attribute, String(value));
  }
}

function formBody() {
  const body = { url: document.getElementById("url").value.trim() };
  const lines = (id) => document.getElementById(id).value.split("\n").map((s) => s.trim()).filter(Boolean);
  if (lines("include").length) body.include = lines("include");
  if (lines("exclude").length) body.exclude = lines("exclude");
  for (const id of ["max_pages", "max_depth", "concurrency"]) {
    const value = document.getElementById(id).value;
    if (value !== "") body[id] = parseInt(value, 10);
  }
  const budget = document.getElementById("budget_s").value;
  if (budget !== "") body.budget_s = parseFloat(budget);
  return body;
}

async function submitJob(event) {
  event.preventDefault();
  const error = document.getElementById("form-error");
  error.hidden = true;
  try {
    const view = await api("POST", "/jobs", formBody());
    follow(view, true);
  } catch (exc) {
    error.textContent = exc.message;
    error.hidden = false;
  }
}

async function loadJobs() {
  try {
    const data = await api("GET", "/jobs?limit=20");
    data.jobs.reverse().forEach((view) => follow(view, true));
  } catch (exc) {
    console.warn("could not list jobs:", exc.message);
  }
}

// --- one card per job ---

function follow(view, onTop) {
  let job = jobs.get(view.job_id);
  if (!job) {
    job = { last: 0, status: view.status, view, el: makeCard(view), elapsed: 0 };
    jobs.set(view.job_id, job);
    const list = document.getElementById("jobs");
    if (onTop) list.prepend(job.el); else list.append(job.el);
    subscribe(view.job_id);
  }
  render(job, view);
}

function makeCard(view) {
  const el = document.getElementById("job-template").content.firstElementChild.cloneNode(true);
  el.dataset.jobId = view.job_id;
  const link = el.querySelector(".job-url");
  link.href = view.url;
  link.textContent = view.url;
  el.querySelector(".cancel").addEventListener("click", () => cancel(view.job_id));
  el.querySelectorAll(".download").forEach((button) =>
    button.addEventListener("click", () => download(view.job_id, button.dataset.format)));
  el.querySelector(".preview-box").addEventListener("toggle", (e) => e.target.open && preview(view.job_id));
  return el;
}

function render(job, view) {
  job.view = view;
  setStatus(job, view.status);
  showCounters(job.el, view.counters);
}

function setStatus(job, status) {
  job.status = status;
  job.el.dataset.status = status;
  job.el.querySelector(".status").textContent = status;
  job.el.querySelector(".cancel").disabled = TERMINAL.has(status);
  job.el.querySelector(".results").hidden = status !== "completed";
}

function showCounters(el, counters) {
  for (const [name, value] of Object.entries(counters || {})) {
    const cell = el.querySelector(`[data-counter="${name}"]`);
    if (cell) cell.textContent = Number(value).toLocaleString();
  }
}

// --- live events ---

function handle(job, event) {
  const data = event.data || {};
  switch (event.type) {
    case "job.started": setStatus(job, "running"); break;
    case "job.progress": showProgress(job, data); break;
    case "page.done": addPage(job, data); break;
    case "page.failed": addFailure(job, data); break;
    default: break;
  }
  if (TERMINAL_EVENTS[event.type]) finish(job, event);
}

function showProgress(job, data) {
  if (!TERMINAL.has(job.status) && job.status !== "running") setStatus(job, "running");
  showCounters(job.el, data.counters);
  const elapsed = Number(data.elapsed || 0);
  const processed = (data.counters || {}).processed || 0;
  job.el.querySelector(".elapsed").textContent = `${elapsed.toFixed(0)} s`;
  job.el.querySelector(".rate").textContent = elapsed > 0 ? (processed / elapsed).toFixed(1) : "0.0";
}

function addPage(job, data) {
  const item = document.createElement("li");
  item.textContent = `${data.title || data.url} — ${data.words || 0} words${data.from_cache ? " (cached)" : ""}`;
  item.title = data.url;
  job.el.querySelector(".pages").append(item);
  const count = job.el.querySelector(".page-count");
  count.textContent = String(Number(count.textContent) + 1);
}

function addFailure(job, data) {
  const item = document.createElement("li");
  const why = [data.reason, data.detail].filter(Boolean).join(": ");
  item.textContent = `${data.status === "skipped" ? "skipped" : "failed"} ${data.url} — ${why}`;
  job.el.querySelector(".failures").append(item);
  job.el.querySelector(".failures-box").hidden = false;
  const count = job.el.querySelector(".failure-count");
  count.textContent = String(Number(count.textContent) + 1);
}

async function finish(job, event) {
  setStatus(job, TERMINAL_EVENTS[event.type]);
  const data = event.data || {};
  const summary = job.el.querySelector(".summary");
  if (event.type === "job.completed") {
    const cut = data.truncated ? `; truncated, ${data.left} URLs left` : "";
    summary.textContent = `${data.pages} pages, ${Number(data.words).toLocaleString()} words${cut}`;
  } else if (event.type === "job.failed") {
    summary.textContent = `Failed: ${data.error}`;
  } else {
    summary.textContent = "Cancelled";
  }
  try { render(job, await api("GET", `/jobs/${job.view.job_id}`)); } catch (exc) { /* events stay true */ }
}

// --- the WebSocket, reconnected by itself ---

function connect() {
  if (!apiKey()) return askForKey();
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  socket = new WebSocket(`${scheme}://${location.host}/?api_key=${encodeURIComponent(apiKey())}`);
  socket.onopen = () => {
    backoff = 200;
    setConnection("open");
    for (const jobId of jobs.keys()) subscribe(jobId);
  };
  socket.onmessage = (message) => receive(JSON.parse(message.data));
  socket.onclose = () => {
    setConnection("closed");
    setTimeout(connect, backoff);
    backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
  };
}

function setConnection(state) {
  const badge = document.getElementById("connection");
  badge.dataset.state = state;
  badge.textContent = state === "open" ? "live" : "reconnecting…";
}

function subscribe(jobId) {
  const job = jobs.get(jobId);
  if (!job || !socket || socket.readyState !== WebSocket.OPEN) return; // onopen does it
  if (TERMINAL.has(job.status) && job.last > 0) return; // nothing more will come
  socket.send(JSON.stringify({ action: "subscribe", job_id: jobId, after: job.last }));
}

function receive(message) {
  if (message.type === "error") return console.warn("server:", message.error);
  // The server's replay stopped short of its time limit: subscribe again from `last`.
  if (message.type === "resume") return subscribe(message.job_id);
  // Events come in frames ({type: "events", events: [...]}, in seq order); a lone event
  // is a frame of one.
  const events = message.type === "events" ? message.events || [] : [message];
  for (const event of events) {
    if (!accept(event)) return; // a gap: the re-subscribe sends the rest again
  }
}

function accept(event) {
  const job = jobs.get(event.job_id);
  if (!job || typeof event.seq !== "number") return true;
  if (event.seq <= job.last) return true; // a duplicate (backlog and live overlap)
  if (event.seq > job.last + 1) {
    subscribe(event.job_id); // a gap: ask again
    return false;
  }
  job.last = event.seq;
  handle(job, event);
  return true;
}

// --- actions ---

async function cancel(jobId) {
  try {
    render(jobs.get(jobId), await api("POST", `/jobs/${jobId}/cancel`));
  } catch (exc) {
    jobs.get(jobId).el.querySelector(".summary").textContent = exc.message;
  }
}

// The result route answers a redirect to a short-lived signed link: follow it to learn the
// link, stop reading, and let the browser download from the link itself.
async function signedLink(jobId, format) {
  const controller = new AbortController();
  const response = await fetch(`/jobs/${jobId}/result?format=${format}`,
    { headers: { "x-api-key": apiKey() }, signal: controller.signal });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  controller.abort();
  return response.url;
}

async function download(jobId, format) {
  const link = document.createElement("a");
  link.href = await signedLink(jobId, format);
  link.download = "";
  document.body.append(link);
  link.click();
  link.remove();
}

async function preview(jobId) {
  const box = jobs.get(jobId).el.querySelector(".preview");
  if (box.textContent) return;
  const response = await fetch(`/jobs/${jobId}/result?format=markdown`, { headers: { "x-api-key": apiKey() } });
  box.textContent = response.ok ? await response.text() : `HTTP ${response.status}`;
}

function saveKey(event) {
  event.preventDefault();
  localStorage.setItem(KEY_STORE, document.getElementById("api-key").value.trim());
  document.getElementById("key-box").hidden = true;
  if (socket) socket.close(); else connect();
  loadJobs();
}

function ping() {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ action: "ping" }));
}

applyOptionHints();
takeKeyFromUrl();
document.getElementById("new-job").addEventListener("submit", submitJob);
document.getElementById("key-box").addEventListener("submit", saveKey);
setInterval(ping, PING_MS);
if (apiKey()) { connect(); loadJobs(); } else { askForKey(); }
