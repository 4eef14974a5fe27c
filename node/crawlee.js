'use strict';
// Crawlee made polite: `politeCrawler(CheerioCrawler, options)` (or
// `polite(options)`, the options alone) makes a CheerioCrawler or
// HttpCrawler fetch robots.txt first for every origin and hold an origin's
// pages while it is unavailable, match exactly, pace each host (Crawl-delay
// by engine profile, Retry-After, backoff) with one request in flight, and
// follow no nofollow link.

const { RobotsState, Politeness, productToken } = require('./index.js');
const { checkKeys } = require('./options.js');

// Crawlee's first request queue keeps its own list of requests in
// progress; a request put back has to leave it (as Crawlee's own same-domain
// delay does). Absent when Crawlee is not installed.
let RequestQueueV1;
try {
  ({ RequestQueueV1 } = require('@crawlee/core'));
} catch {
  RequestQueueV1 = undefined;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The product token of a User-Agent, read as mannerly's crawler, audit and
 * gate read it (`MyBot` in `Mozilla/5.0 (compatible; MyBot/1.0; +https://...)`);
 * '' when it names none.
 */
function tokenOf(userAgent) {
  return productToken(userAgent) ?? '';
}

/** A got error's kind, as the robots.txt state machine names it. */
function networkKind(e) {
  const code = String((e && (e.code || (e.cause && e.cause.code))) || '');
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns';
  if (code === 'ECONNREFUSED' || code === 'EHOSTUNREACH') return 'connect';
  if (code === 'ETIMEDOUT' || (e && e.name === 'TimeoutError')) return 'timeout';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'reset';
  if (code.startsWith('ERR_TLS') || code.includes('CERT')) return 'tls';
  return 'other';
}

/** Header value by name, in any case; the first of several. */
function header(headers, name) {
  if (!headers) return undefined;
  const v = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Whether a page says its links are not to be followed: `nofollow` (or
 * `none`) in an X-Robots-Tag header or a robots meta tag, for every crawler
 * or for `agent`.
 */
function pageIsNofollow(agent, headers, $) {
  const says = (value) => /(^|[\s,])(nofollow|none)([\s,]|$)/i.test(value);
  const forUs = (value) => {
    const m = /^\s*([A-Za-z0-9_-]+)\s*:(?!\/\/)(.*)$/.exec(value);
    if (!m) return says(value);
    return m[1].toLowerCase() === agent.toLowerCase() && says(m[2]);
  };
  const tags = headers ? headers['x-robots-tag'] : undefined;
  for (const v of [].concat(tags || [])) {
    if (String(v).split(/,(?=\s*[A-Za-z0-9_-]+\s*:)/).some(forUs)) return true;
  }
  if (!$) return false;
  let nofollow = false;
  $('meta[name][content]').each((_, el) => {
    const name = String($(el).attr('name')).toLowerCase();
    if ((name === 'robots' || name === agent.toLowerCase()) && says(String($(el).attr('content')))) {
      nofollow = true;
    }
  });
  return nofollow;
}

/** The error that stops a page mannerly will not fetch (not retried). */
class SkippedError extends Error {
  constructor(message) {
    super(message);
    this.name = 'SkippedError';
  }
}

/** One host's turn: one request in flight, the others queued. */
class Turn {
  constructor() {
    this.busy = false;
    this.queue = [];
  }

  take() {
    if (!this.busy) {
      this.busy = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.queue.push(resolve));
  }

  give() {
    const next = this.queue.shift();
    if (next) next();
    else this.busy = false;
  }
}

/**
 * The politeness of one crawler: robots.txt per origin, pacing and turns
 * per host. `polite()` makes one; use it directly to share it between
 * crawlers.
 */
/** The options `new Mannerly()` takes. */
const MANNERLY_OPTIONS = ['userAgent', 'agent', 'minDelaySecs', 'profile', 'robotsProfile', 'robotsTxtWaitSecs', 'maxCrawlDelaySecs', 'retryAfterCapSecs', 'log'];

class Mannerly {
  constructor(options = {}) {
    checkKeys('new Mannerly', 'options', options, MANNERLY_OPTIONS);
    const userAgent = options.userAgent;
    if (typeof userAgent !== 'string' || !userAgent.trim()) {
      throw new TypeError('mannerly/crawlee: userAgent is required (e.g. "ExampleBot/1.0 (+https://example.com/bot)")');
    }
    this.userAgent = userAgent;
    this.agent = options.agent ?? tokenOf(userAgent);
    if (typeof this.agent !== 'string' || !this.agent) {
      throw new TypeError('mannerly/crawlee: agent (the product token robots.txt names) is empty');
    }
    const wait = options.robotsTxtWaitSecs ?? 600;
    if (!(Number.isFinite(wait) && wait >= 0)) {
      throw new RangeError(`mannerly/crawlee: robotsTxtWaitSecs ${wait} is not a number of seconds`);
    }
    this.robotsTxtWaitMs = wait * 1000;
    this.retryAfterCapSecs = options.retryAfterCapSecs ?? 3600;
    this.pace = new Politeness({
      minDelaySecs: options.minDelaySecs ?? 1,
      profile: options.profile ?? 'conservative',
      maxCrawlDelaySecs: options.maxCrawlDelaySecs,
      retryAfterCapSecs: this.retryAfterCapSecs,
    });
    this.robotsOptions = { profile: options.robotsProfile ?? 'google' };
    this.states = new Map();
    this.turns = new Map();
    this.held = new Map();
    this.log = options.log;
    this.skipped = 0;
  }

  turn(key) {
    let t = this.turns.get(key);
    if (!t) this.turns.set(key, (t = new Turn()));
    return t;
  }

  state(origin) {
    let s = this.states.get(origin);
    if (!s) this.states.set(origin, (s = new RobotsState(origin, this.robotsOptions)));
    return s;
  }

  /** Waits for the host's pacing; false when the host is skipped for good. */
  async paced(key) {
    for (;;) {
      const ms = this.pace.waitMs(key);
      if (ms === 0) return true;
      if (ms === Infinity) return false;
      await sleep(Math.min(ms, 1000));
    }
  }

  /**
   * One request the crawler makes itself (robots.txt and its redirects),
   * paced like any other. A request counts as sent when its answer came
   * back: the server saw it no later, so delays are never short.
   */
  async ownRequest(ctx, url) {
    const key = new URL(url).host;
    if (!(await this.paced(key))) throw Object.assign(new Error('the host is skipped'), { code: 'SKIPPED' });
    const t0 = Date.now();
    try {
      const r = await ctx.sendRequest({
        url,
        method: 'GET',
        headers: { 'user-agent': this.userAgent },
        responseType: 'buffer',
        throwHttpErrors: false,
        followRedirect: false,
      });
      this.pace.start(key);
      this.pace.finish(key, { status: r.statusCode, latencyMs: Date.now() - t0, retryAfter: header(r.headers, 'retry-after') });
      return r;
    } catch (e) {
      this.pace.start(key);
      this.pace.finish(key, { latencyMs: Date.now() - t0 });
      throw e;
    }
  }

  /** Fetches robots.txt for an origin, following up to five redirects. */
  async fetchRobots(ctx, state) {
    let url = state.robotsUrl;
    const redirects = [];
    try {
      for (;;) {
        const r = await this.ownRequest(ctx, url);
        const location = header(r.headers, 'location');
        if (r.statusCode >= 300 && r.statusCode < 400 && location) {
          redirects.push({ url, status: r.statusCode });
          const next = new URL(location, url).href;
          const loop = redirects.some((h) => h.url === next);
          if (loop || redirects.length > 5) return state.applyTooManyRedirects(redirects, loop);
          url = next;
          continue;
        }
        const flat = {};
        for (const [k, v] of Object.entries(r.headers || {})) flat[k] = Array.isArray(v) ? v.join(', ') : String(v);
        return state.applyResponse({ status: r.statusCode, body: r.rawBody ?? r.body ?? '', headers: flat, url, redirects });
      }
    } catch (e) {
      return state.applyNetworkError(networkKind(e), String((e && e.message) || e));
    }
  }

  /**
   * The pre-navigation hook: the host's turn, robots.txt first, pages held
   * while it is unavailable, the page skipped when it is disallowed, then
   * the host's pacing.
   */
  async admit(ctx, gotOptions) {
    const { request } = ctx;
    const url = new URL(request.url);
    const key = url.host;
    const state = this.state(url.origin);
    const since = Date.now();
    await this.turn(key).take();
    this.held.set(ctx.id, { key, origin: url.origin, started: 0 });
    for (;;) {
      let d = state.decision();
      if (!d) d = await this.fetchRobots(ctx, state);
      if (d.access !== 'disallow-all') {
        this.pace.setRobots(key, d.robots, this.agent);
        if (!d.isAllowed(this.agent, request.url)) {
          const why = d.robots ? d.robots.explain(this.agent, request.url) : null;
          this.skip(ctx, `robots.txt disallows it${why && why.rule ? ` (line ${why.line}: ${why.rule})` : ''}`);
        }
        break;
      }
      // Unavailable: hold the page (others of this host wait their turn
      // behind it) until robots.txt may be asked again.
      const until = Math.max(d.expiresAt, state.retryAt ?? 0);
      if (Date.now() - since + Math.max(0, until - Date.now()) > this.robotsTxtWaitMs) {
        this.skip(ctx, `robots.txt is unavailable (${d.reason})`);
      }
      await sleep(Math.max(50, Math.min(until - Date.now(), 5000)));
    }
    if (!(await this.paced(key))) this.skip(ctx, this.pace.skipped(key) || 'the host is skipped');
    gotOptions.headers = { ...(gotOptions.headers || {}), 'user-agent': this.userAgent };
    // Each redirect is a request of its own, paced and judged: the
    // handler queues where it leads.
    gotOptions.followRedirect = false;
    this.held.get(ctx.id).started = Date.now();
    return undefined;
  }

  /**
   * A page found disallowed (or unreachable) once its turn came: the
   * navigation is stopped by an error that is not retried. (Pages of an
   * origin whose robots.txt is known are skipped before that, the way
   * Crawlee skips them: see `politeCrawler`.)
   */
  skip(ctx, reason) {
    ctx.request.noRetry = true;
    ctx.request.userData.mannerlySkipped = reason;
    this.skipped += 1;
    this.release(ctx.id, null);
    throw new SkippedError(`mannerly: not fetched: ${reason}`);
  }

  /**
   * Whether `url` may be queued and fetched, as far as is known now: the
   * rules of its origin's robots.txt when they are known; otherwise yes,
   * and the page's turn decides (it is held while robots.txt is
   * unavailable).
   */
  knownAllowed(url) {
    let origin;
    try {
      origin = new URL(url).origin;
    } catch {
      return true;
    }
    if (this.pace.skipped(new URL(url).host)) return false;
    const s = this.states.get(origin);
    const d = s && s.decision();
    if (!d || d.access !== 'rules') return true;
    return d.isAllowed(this.agent, url);
  }

  /** Ends the host's turn, telling the pacing how the request ended. */
  release(id, outcome) {
    const h = this.held.get(id);
    if (!h) return;
    this.held.delete(id);
    if (outcome && h.started) {
      // Counted as sent when the answer came back (see ownRequest).
      const latencyMs = Date.now() - h.started;
      this.pace.start(h.key);
      this.pace.finish(h.key, { ...outcome, latencyMs });
      const s = outcome.status;
      if (s !== undefined && s < 500 && s !== 429) this.state(h.origin).noteHostAnswered();
    }
    this.turn(h.key).give();
  }

  /** The post-navigation hook: the response's status and Retry-After. */
  answered(ctx) {
    const r = ctx.response;
    if (!r) return this.release(ctx.id, {});
    this.release(ctx.id, { status: r.statusCode, retryAfter: header(r.headers, 'retry-after') });
    if (r.statusCode >= 300 && r.statusCode < 400 && r.headers) {
      // A redirect's body is never read: let Crawlee hand it to the
      // handler, which queues its target, whatever type it claims.
      r.headers['content-type'] = 'text/html';
    }
    return undefined;
  }

  /** A request that failed before a response: a network failure. */
  failed(ctx) {
    this.release(ctx.id, {});
  }

  /**
   * Whether a request taken from the queue should go back to it for now:
   * its host is busy with another request, or not due; it is reclaimed
   * when it is likely due.
   */
  delayed(request, source) {
    let key;
    try {
      key = new URL(request.url).host;
    } catch {
      return false;
    }
    const wait = this.pace.waitMs(key);
    const busy = this.turn(key).busy;
    if (wait === Infinity || (!busy && wait === 0)) return false;
    const delay = Math.max(wait, busy ? this.pace.delaySecs(key) * 1000 : 0, 50);
    const v1 = source && RequestQueueV1 && source instanceof RequestQueueV1;
    if (v1) source.inProgress?.delete(request.id);
    setTimeout(() => {
      if (v1) source.inProgress?.add(request.id);
      source.reclaimRequest(request, { forefront: request.userData?.__crawlee?.forefront }).catch(() => {});
    }, delay);
    return true;
  }

  /**
   * A redirect answered: its target is queued as a request of its own (at
   * most five hops from the first), and the handler is not called.
   */
  async redirected(ctx) {
    const r = ctx.response;
    const status = r && r.statusCode;
    if (!(status >= 300 && status < 400)) return false;
    const location = header(r.headers, 'location');
    const hops = (ctx.request.userData.mannerlyHops || 0) + 1;
    if (location && hops <= 5) {
      const url = new URL(location, ctx.request.url).href;
      await ctx.addRequests([{ url, userData: { ...ctx.request.userData, mannerlyHops: hops } }]);
    }
    return true;
  }

  /** The context's enqueueLinks, following no nofollow link. */
  politeLinks(ctx) {
    const original = ctx.enqueueLinks;
    return async (options = {}) => {
      if (pageIsNofollow(this.agent, ctx.response && ctx.response.headers, ctx.$)) {
        return { processedRequests: [], unprocessedRequests: [] };
      }
      const selector = (options.selector || 'a')
        .split(',')
        .map((s) => `${s.trim()}:not([rel~="nofollow" i])`)
        .join(', ');
      return original({ ...options, selector });
    };
  }
}

/** Where `polite()` leaves its Mannerly for `politeCrawler`. */
const MANNERLY = Symbol('mannerly');

/**
 * Crawler options made polite: pass your CheerioCrawler or HttpCrawler
 * options (with `userAgent`, and optionally `agent`, `minDelaySecs`,
 * `profile`, `robotsTxtWaitSecs`, `maxCrawlDelaySecs`) and give the result
 * to the crawler's constructor.
 */
function polite(options = {}) {
  const {
    userAgent,
    agent,
    minDelaySecs,
    profile,
    robotsProfile,
    robotsTxtWaitSecs,
    maxCrawlDelaySecs,
    retryAfterCapSecs,
    mannerly: shared,
    ...rest
  } = options;
  const m = shared || new Mannerly({ userAgent, agent, minDelaySecs, profile, robotsProfile, robotsTxtWaitSecs, maxCrawlDelaySecs, retryAfterCapSecs });
  if (rest.respectRobotsTxtFile) {
    throw new TypeError('mannerly/crawlee: leave respectRobotsTxtFile off: mannerly reads robots.txt itself, exactly and over time');
  }
  const handler = rest.requestHandler;
  if (typeof handler !== 'function') throw new TypeError('mannerly/crawlee: requestHandler is required');
  const answered = (ctx) => m.answered(ctx);
  const out = {
    ...rest,
    // Waiting for a host's turn happens inside the handler's time: at most
    // the wait for robots.txt and for a Retry-After, on top of the handler's.
    requestHandlerTimeoutSecs: (rest.requestHandlerTimeoutSecs ?? 60) + m.robotsTxtWaitMs / 1000 + m.retryAfterCapSecs + 60,
    sameDomainDelaySecs: 0,
    preNavigationHooks: [(ctx, gotOptions) => m.admit(ctx, gotOptions), ...(rest.preNavigationHooks || [])],
    postNavigationHooks: [answered, ...(rest.postNavigationHooks || [])],
    requestHandler: async (ctx) => {
      if (await m.redirected(ctx)) return undefined;
      ctx.enqueueLinks = m.politeLinks(ctx);
      return handler(ctx);
    },
    errorHandler: async (ctx, error) => {
      m.failed(ctx);
      return rest.errorHandler ? rest.errorHandler(ctx, error) : undefined;
    },
    failedRequestHandler: async (ctx, error) => {
      m.failed(ctx);
      const reason = ctx.request.userData.mannerlySkipped;
      if (reason) {
        const why = /robots\.txt disallows/.test(reason) ? 'robotsTxt' : 'mannerly';
        return rest.onSkippedRequest ? rest.onSkippedRequest({ url: ctx.request.url, reason: why }) : undefined;
      }
      return rest.failedRequestHandler ? rest.failedRequestHandler(ctx, error) : undefined;
    },
  };
  Object.defineProperty(out, MANNERLY, { value: { m, answered }, enumerable: false, configurable: true });
  return out;
}

/**
 * A polite crawler in one call: `politeCrawler(CheerioCrawler, options)`
 * builds the crawler from `polite(options)` and has it skip, the way
 * Crawlee skips, what the known robots.txt of each origin disallows: at
 * enqueue time and before a page's turn (`onSkippedRequest` hears of it,
 * with the reason `robotsTxt`).
 */
function politeCrawler(CrawlerClass, options = {}) {
  const opts = polite(options);
  const { m, answered } = opts[MANNERLY];
  const crawler = new CrawlerClass(opts);
  // The response is seen before Crawlee's own check of its type, so a
  // redirect whose body claims no HTML type is still queued.
  const hooks = crawler.postNavigationHooks;
  if (Array.isArray(hooks) && hooks.includes(answered)) {
    hooks.splice(hooks.indexOf(answered), 1);
    hooks.unshift(answered);
  }
  // A page whose host is busy or not due yet goes back to the queue until
  // it is (Crawlee's own hook for same-domain delays), so it holds no slot
  // another host could use.
  crawler.delayRequest = (request, source) => m.delayed(request, source);
  // Crawlee's own robots.txt hooks, answered from mannerly's state: they
  // never fetch or wait (the page's turn does).
  crawler.respectRobotsTxtFile = { userAgent: m.agent };
  crawler.isAllowedBasedOnRobotsTxtFile = async (url) => m.knownAllowed(url);
  crawler.getRobotsTxtFileForUrl = async () => ({ isAllowed: (url) => m.knownAllowed(url) });
  crawler.mannerly = m;
  return crawler;
}

module.exports = { polite, politeCrawler, Mannerly, SkippedError, pageIsNofollow, tokenOf };
