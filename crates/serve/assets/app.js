// The tester page: plain DOM, no framework, everything from this server.
"use strict";

const $ = (id) => document.getElementById(id);

async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  };
  const resp = await fetch(path, init);
  let data;
  try { data = await resp.json(); } catch (_) { data = { error: `HTTP ${resp.status}` }; }
  if (!resp.ok) throw new Error(data.error || `HTTP ${resp.status}`);
  return data;
}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else if (k === "text") e.textContent = v; else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
}

// Text whose words holding a hyphen, a slash or a dot stay whole: a
// browser would break a line after a hyphen, splitting a token or a path.
function words(text) {
  const frag = document.createDocumentFragment();
  String(text).split(" ").forEach((w, i) => {
    if (i > 0) frag.append(" ");
    frag.append(/[-/._=?&]/.test(w) ? el("span", { class: "w" }, w) : w);
  });
  return frag;
}

// A URL as asked and, when a crawler requests it percent-encoded, as judged.
function urlCell(r) {
  if (!r.requested) return el("td", {}, words(r.url));
  return el("td", {}, words(r.url), el("div", { class: "requested" }, words(`requested as ${r.requested}`)));
}

// What the page found, kept for "Save the results as JSON".
const found = {};

function lines(text) {
  return text.split(/\r\n|\r|\n/).map((s) => s.trim()).filter((s) => s.length > 0);
}

// The file, one <li> per line (split as the parser splits: LF, CR, CRLF).
function renderFile(text, diagnostics) {
  $("file-section").hidden = false;
  const ol = $("file");
  const frag = document.createDocumentFragment();
  const src = text.split(/\r\n|\r|\n/);
  if (src.length > 0 && src[src.length - 1] === "") src.pop();
  const byLine = new Map();
  for (const d of diagnostics) {
    const k = Math.max(d.line, 1);
    if (!byLine.has(k)) byLine.set(k, []);
    byLine.get(k).push(d);
  }
  src.forEach((line, i) => {
    const li = el("li", { id: `L${i + 1}` }, line === "" ? "\u00a0" : line);
    for (const d of byLine.get(i + 1) || []) {
      const where = d.column > 0 ? `column ${d.column}: ` : "";
      const fix = d.suggestion ? ` Suggestion: ${d.suggestion}` : "";
      li.append(el("span", { class: `diag ${d.severity}`, role: "note" }, `${d.severity} (${d.code}) ${where}${d.message}.${fix}`));
    }
    frag.append(li);
  });
  ol.replaceChildren(frag);
}

function highlight(line) {
  for (const li of document.querySelectorAll("#file li.hit")) { li.classList.remove("hit"); li.removeAttribute("aria-current"); }
  if (!line) return;
  const li = $(`L${line}`);
  if (!li) return;
  li.classList.add("hit");
  li.setAttribute("aria-current", "true");
  li.scrollIntoView({ block: "nearest" });
}

function verdictCell(a) {
  return el("td", { class: a.allowed ? "allowed" : "disallowed" }, a.allowed ? "Allowed" : "Disallowed");
}

function ruleCell(r) {
  const td = el("td");
  if (r.line) {
    const b = el("button", { type: "button", class: "linkish", "data-line": String(r.line) }, words(`line ${r.line}: ${r.rule}`));
    b.addEventListener("click", () => highlight(r.line));
    td.append(b);
  } else {
    td.append("no rule matched");
  }
  return td;
}

function usageText(u) {
  if (!u) return "none (not crawlable)";
  const from = u.lines.length ? ` (line ${u.lines.join(", ")})` : "";
  return `train-ai=${u.train_ai}, ai-use=${u.ai_use}, search=${u.search}${from}`;
}

function renderExtras(x) {
  $("extras-h").hidden = false;
  const dl = $("extras");
  const rows = [];
  rows.push(["Crawl-delay", x.crawl_delay ? `${x.crawl_delay.raw} (line ${x.crawl_delay.line})` : "none for this agent"]);
  for (const p of x.pacing) rows.push([`  read by ${p.profile}`, p.reading]);
  rows.push(["Request-rate", x.request_rate ? `${x.request_rate[0]} (line ${x.request_rate[1]})` : "none"]);
  rows.push(["Sitemaps", x.sitemaps.length ? x.sitemaps.map(([u, l]) => `${u} (line ${l})`).join("\n") : "none"]);
  rows.push(["Host", x.host ? `${x.host[0]} (line ${x.host[1]})` : "none"]);
  rows.push(["Clean-param", x.clean_params.length ? x.clean_params.map(([c, l]) => `${c} (line ${l})`).join("\n") : "none"]);
  dl.replaceChildren(...rows.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
}

async function test(ev) {
  ev.preventDefault();
  const status = $("test-status");
  const robots = $("robots").value;
  const rfc = $("rfc").checked;
  const urls = lines($("urls").value);
  status.textContent = "Testing…";
  try {
    const [check, lint] = await Promise.all([
      api("/api/check", { robots, agent: $("agent").value.trim(), urls, rfc }),
      api("/api/lint", { robots, rfc }),
    ]);
    Object.assign(found, { robots, agent: check.agent, check, lint });
    renderFile(robots, lint.diagnostics);
    const tbody = $("results").querySelector("tbody");
    tbody.replaceChildren(...check.results.map((r) => {
      const other = r.other_mode
        ? `${r.other_mode.allowed ? "Allowed" : "Disallowed"} under ${check.mode === "google" ? "strict RFC 9309" : "Google"}${r.other_mode.line ? ` (line ${r.other_mode.line})` : ""}`
        : "same";
      return el("tr", {}, urlCell(r), verdictCell(r), ruleCell(r), el("td", {}, other), el("td", {}, usageText(r.content_usage)));
    }));
    $("results").hidden = check.results.length === 0;
    const first = check.results.find((r) => r.line);
    highlight(first ? first.line : null);
    $("groups").textContent = check.groups.length
      ? `Groups that apply to ${check.agent} (${check.agent_match}): starting on line ${check.groups.join(", ")}.`
      : `No group applies to ${check.agent}: everything is allowed.`;
    if (check.agent_note) $("groups").textContent += ` Note: ${check.agent_note}.`;
    renderExtras(check.extras);
    const problems = lint.diagnostics.length;
    status.textContent = `${check.results.length} URL(s) tested for ${check.agent}; ${problems} finding(s) from the linter.`;
  } catch (e) {
    status.textContent = `Error: ${e.message}`;
  }
}

async function fetchRobots(ev) {
  ev.preventDefault();
  const state = $("fetch-state");
  state.textContent = "Fetching…";
  try {
    const s = await api(`/api/fetch?origin=${encodeURIComponent($("origin").value.trim())}`);
    if (s.body !== null) $("robots").value = s.body;
    state.textContent = `${s.robots_url}: ${s.access} (${s.reason}); holds until ${s.expires_at}.`;
  } catch (e) {
    state.textContent = `Error: ${e.message}`;
  }
}

// A verdict and the line that decided it.
function answerCell(a) {
  const td = verdictCell(a);
  td.append(el("div", { class: "requested" }, words(a.line ? `line ${a.line}: ${a.rule}` : "no rule matched")));
  return td;
}

// The edited file's findings, with what each engine makes of it.
function renderDraftLint(diagnostics) {
  const ul = $("draft-lint");
  ul.replaceChildren(...diagnostics.map((d) => {
    const fix = d.suggestion ? ` Suggestion: ${d.suggestion}.` : "";
    return el("li", { class: `diag ${d.severity}` }, words(`Edited file, line ${d.line}: ${d.severity} (${d.code}) ${d.message}.${fix}`));
  }));
  ul.hidden = diagnostics.length === 0;
}

async function compare(ev) {
  ev.preventDefault();
  const status = $("impact-status");
  const agents = $("impact-agents").value.split(",").map((s) => s.trim()).filter((s) => s);
  status.textContent = "Comparing…";
  try {
    const req = { before: $("robots").value, after: $("after").value, agents, urls: lines($("urls").value), rfc: $("rfc").checked };
    const sitemap = $("impact-sitemap").value.trim();
    if (sitemap) req.sitemap = sitemap;
    const [d, lint] = await Promise.all([api("/api/diff", req), api("/api/lint", { robots: req.after, rfc: req.rfc })]);
    Object.assign(found, { edited: req.after, diff: d, edited_lint: lint });
    renderDraftLint(lint.diagnostics);
    const tbody = $("impact").querySelector("tbody");
    tbody.replaceChildren(...d.changes.map((c) => el("tr", {}, el("td", {}, words(c.agent)), urlCell(c), answerCell(c.before), answerCell(c.after))));
    $("impact").hidden = d.changes.length === 0;
    const from = d.sitemap_urls ? ` (${d.sitemap_urls} page(s) from the sitemap)` : "";
    const notes = d.agent_notes.map((n) => ` Note: ${n}.`).join("");
    status.textContent = `${d.changes.length} of ${d.compared} verdict(s) change${from}; ${lint.diagnostics.length} finding(s) in the edited file.${notes}`;
  } catch (e) {
    status.textContent = `Error: ${e.message}`;
  }
}

// How the server checked who each client was.
function identityNote(d) {
  if (!d.identity_checked) return "Identity not checked by this server: every client is unverified.";
  const past = d.addresses_not_checked ? ` (${d.addresses_not_checked} address(es) past the per-request bound left unverified)` : "";
  return `Identity checked as mannerly audit checks it${past}.`;
}

// Adds one piece's answer to the running totals (bots by token and identity).
function merge(total, d) {
  total.format = total.format || d.format;
  for (const k of ["lines", "unread", "bot_requests", "newly_disallowed", "newly_allowed", "addresses_not_checked"]) total[k] += d[k];
  total.identity_checked = d.identity_checked;
  for (const b of d.bots) {
    const key = `${b.token}\u0000${b.identity}`;
    const t = total.bots.get(key);
    if (!t) { total.bots.set(key, b); continue; }
    t.newly_disallowed += b.newly_disallowed;
    t.newly_allowed += b.newly_allowed;
    t.examples = t.examples.concat(b.examples).slice(0, 5);
  }
}

const MiB = 1 << 20;
const mib = (n) => `${(n / MiB).toFixed(1)} MiB`;

// A log file judged piece by piece: each piece ends at a line's end and
// stays under the server's 2 MiB request limit with both files beside it.
async function judgeFile(file, robots, after, status) {
  const piece = Math.max(128 * 1024, Math.floor(1.5 * MiB) - 2 * (robots.length + after.length));
  const total = { format: null, lines: 0, unread: 0, bot_requests: 0, newly_disallowed: 0, newly_allowed: 0, addresses_not_checked: 0, identity_checked: false, bots: new Map() };
  const decoder = new TextDecoder();
  let offset = 0;
  let carry = "";
  while (offset < file.size) {
    const bytes = await file.slice(offset, offset + piece).arrayBuffer();
    offset += piece;
    const more = offset < file.size;
    let text = carry + decoder.decode(bytes, { stream: more });
    const cut = more ? text.lastIndexOf("\n") + 1 : text.length;
    carry = text.slice(cut);
    text = text.slice(0, cut);
    if (carry.length > 4 * piece) { total.unread += 1; carry = ""; }
    if (text.trim()) merge(total, await api("/api/whatif", { robots, after, log: text }));
    status.textContent = `Judging… ${mib(Math.min(offset, file.size))} of ${mib(file.size)} read`;
  }
  return { ...total, bots: [...total.bots.values()].sort((a, b) => (b.newly_disallowed + b.newly_allowed) - (a.newly_disallowed + a.newly_allowed)) };
}

function exampleText(x) {
  if (!x) return "";
  const from = x.client ? ` from ${x.client}` : "";
  return `${x.path}${from}: ${x.detail} (in force: ${x.before})`;
}

async function whatif(ev) {
  ev.preventDefault();
  const status = $("whatif-status");
  status.textContent = "Judging…";
  try {
    const robots = $("robots").value;
    const after = $("after").value;
    const file = $("log-file").files[0];
    const d = file
      ? await judgeFile(file, robots, after, status)
      : await api("/api/whatif", { robots, after, log: $("log").value });
    found.whatif = d;
    const tbody = $("whatif-table").querySelector("tbody");
    tbody.replaceChildren(...d.bots.map((b) => el("tr", {}, el("td", {}, words(b.token)), el("td", {}, words(b.kind.replace("-", " "))),
      el("td", {}, b.identity), el("td", {}, String(b.newly_disallowed)), el("td", {}, String(b.newly_allowed)),
      el("td", {}, words(exampleText(b.examples[0]))))));
    $("whatif-table").hidden = d.bots.length === 0;
    status.textContent = `${d.lines} line(s) read as ${d.format} (${d.unread} unread), ${d.bot_requests} bot request(s): ` +
      `${d.newly_disallowed} newly disallowed, ${d.newly_allowed} newly allowed by the edit. ` + identityNote(d);
  } catch (e) {
    status.textContent = `Error: ${e.message}`;
  }
}

// Everything found so far, as a JSON file the browser saves.
function save() {
  const keys = Object.keys(found);
  if (keys.length === 0) { $("save-status").textContent = "Nothing to save yet: test, compare or judge first."; return; }
  const blob = new Blob([JSON.stringify({ saved: new Date().toISOString(), ...found }, null, 2)], { type: "application/json" });
  const a = el("a", { href: URL.createObjectURL(blob), download: "robots-tester-results.json" });
  document.body.append(a);
  a.click();
  a.remove();
  $("save-status").textContent = `Saved: ${keys.join(", ")}.`;
}

document.addEventListener("DOMContentLoaded", () => {
  $("whatif-form").addEventListener("submit", whatif);
  $("test-form").addEventListener("submit", test);
  $("fetch-form").addEventListener("submit", fetchRobots);
  $("impact-form").addEventListener("submit", compare);
  $("save").addEventListener("click", save);
});
