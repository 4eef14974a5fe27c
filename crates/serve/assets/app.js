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

// A URL as asked and, when a crawler requests it percent-encoded, as judged.
function urlCell(r) {
  if (!r.requested) return el("td", {}, r.url);
  return el("td", {}, r.url, el("div", { class: "requested", text: `requested as ${r.requested}` }));
}

function lines(text) {
  return text.split(/\r\n|\r|\n/).map((s) => s.trim()).filter((s) => s.length > 0);
}

// The file, one <li> per line (split as the parser splits: LF, CR, CRLF).
function renderFile(text, diagnostics) {
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
    const b = el("button", { type: "button", class: "linkish", "data-line": String(r.line) }, `line ${r.line}: ${r.rule}`);
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

async function compare(ev) {
  ev.preventDefault();
  const status = $("impact-status");
  const agents = $("impact-agents").value.split(",").map((s) => s.trim()).filter((s) => s);
  status.textContent = "Comparing…";
  try {
    const req = { before: $("robots").value, after: $("after").value, agents, urls: lines($("urls").value), rfc: $("rfc").checked };
    const sitemap = $("impact-sitemap").value.trim();
    if (sitemap) req.sitemap = sitemap;
    const d = await api("/api/diff", req);
    const tbody = $("impact").querySelector("tbody");
    tbody.replaceChildren(...d.changes.map((c) => el("tr", {}, el("td", {}, c.agent), urlCell(c), verdictCell(c.before), verdictCell(c.after))));
    $("impact").hidden = d.changes.length === 0;
    const from = d.sitemap_urls ? ` (${d.sitemap_urls} page(s) from the sitemap)` : "";
    status.textContent = `${d.changes.length} of ${d.compared} verdict(s) change${from}.`;
  } catch (e) {
    status.textContent = `Error: ${e.message}`;
  }
}

async function whatif(ev) {
  ev.preventDefault();
  const status = $("whatif-status");
  status.textContent = "Judging…";
  try {
    const d = await api("/api/whatif", { robots: $("robots").value, after: $("after").value, log: $("log").value });
    const tbody = $("whatif-table").querySelector("tbody");
    tbody.replaceChildren(...d.bots.map((b) => {
      const x = b.examples[0];
      return el("tr", {}, el("td", {}, b.token), el("td", {}, String(b.newly_disallowed)), el("td", {}, String(b.newly_allowed)),
        el("td", {}, x ? `${x.path}: ${x.detail}` : ""));
    }));
    $("whatif-table").hidden = d.bots.length === 0;
    status.textContent = `${d.lines} line(s) read as ${d.format} (${d.unread} unread), ${d.bot_requests} bot request(s): ` +
      `${d.newly_disallowed} newly disallowed, ${d.newly_allowed} newly allowed by the edit.`;
  } catch (e) {
    status.textContent = `Error: ${e.message}`;
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("whatif-form").addEventListener("submit", whatif);
  $("test-form").addEventListener("submit", test);
  $("fetch-form").addEventListener("submit", fetchRobots);
  $("impact-form").addEventListener("submit", compare);
});
