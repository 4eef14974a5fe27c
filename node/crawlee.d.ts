// The Crawlee integration of mannerly (`mannerly/crawlee`).
import { Politeness } from './index';

/** What mannerly adds to a crawler's options. */
export interface PoliteOptions {
  /** The User-Agent header sent with every request (robots.txt included). */
  userAgent: string;
  /** The product token robots.txt groups are matched against (default: the User-Agent's first word). */
  agent?: string;
  /** Seconds between two request starts to one host (1). Crawl-delay and backoff only raise it. */
  minDelaySecs?: number;
  /** How Crawl-delay is read: `conservative` (default), `literal`, `window` (Bing) or `ignore` (Google). */
  profile?: 'conservative' | 'literal' | 'window' | 'ignore';
  /** How robots.txt failures are read over time: `google` (default) or `rfc9309`. */
  robotsProfile?: 'google' | 'rfc9309';
  /** How long a page waits for its origin's unavailable robots.txt before it is given up (600). */
  robotsTxtWaitSecs?: number;
  /** Largest Crawl-delay honoured; a host asking more is skipped (30). */
  maxCrawlDelaySecs?: number;
  /** Longest Retry-After honoured (3,600). */
  retryAfterCapSecs?: number;
  /** Share one Mannerly (its robots.txt states and pacing) between crawlers. */
  mannerly?: Mannerly;
}

/** The politeness of one crawler: robots.txt per origin, pacing and turns per host. */
export declare class Mannerly {
  constructor(options: Omit<PoliteOptions, 'mannerly'>);
  /** The product token robots.txt is read for. */
  readonly agent: string;
  /** The User-Agent sent. */
  readonly userAgent: string;
  /** The per-host pacing (see `Politeness`). */
  readonly pace: Politeness;
  /** Pages not fetched because robots.txt disallowed them, or stayed unavailable. */
  readonly skipped: number;
  /** Whether `url` may be queued and fetched as far as is known now. */
  knownAllowed(url: string): boolean;
}

/** The error that stops a page mannerly will not fetch (not retried). */
export declare class SkippedError extends Error {}

/**
 * A crawler's options made polite: give your CheerioCrawler or HttpCrawler
 * options, with `userAgent`, and pass the result to its constructor.
 */
export declare function polite<T extends { requestHandler?: unknown }>(options: T & PoliteOptions): Omit<T, keyof PoliteOptions>;

/**
 * Builds `new CrawlerClass(polite(options))` and has it skip what each
 * origin's known robots.txt disallows, the way Crawlee skips.
 */
export declare function politeCrawler<C>(
  CrawlerClass: new (options: any) => C,
  options: Record<string, unknown> & PoliteOptions,
): C & { mannerly: Mannerly };

/** Whether a page's X-Robots-Tag or robots meta tag says `nofollow` for `agent` or for all. */
export declare function pageIsNofollow(agent: string, headers?: Record<string, unknown>, $?: unknown): boolean;

/** The product token of a User-Agent, read as mannerly's crawler, audit and gate read it ('' when none). */
export declare function tokenOf(userAgent: string): string;
