// mannerly for Node. The engine's classes and functions, with their
// documentation, are declared in native.d.ts (generated from the Rust
// code); `Robots.parse` is declared here.
import * as native from './native';

export {
  AgentRules,
  RobotsDecision,
  RobotsState,
  Politeness,
  asRequested,
  productToken,
  lint,
  isValidUserAgent,
  pathParamsQuery,
} from './native';
export type {
  ContentUsage,
  Finding,
  Finished,
  HistoryEntry,
  Pacing,
  ParseOptions,
  PolitenessOptions,
  Redirect,
  RequestRate,
  RobotsResponse,
  RobotsStateOptions,
  Verdict,
} from './native';

/**
 * A parsed robots.txt file, matched exactly as Google's reference library
 * matches. Never throws on content: what cannot be used is reported by
 * `lint()`.
 */
export declare class Robots extends native.Robots {
  /**
   * Parses a robots.txt body once, to ask it many questions. Throws a
   * TypeError when `body` is not a Buffer, Uint8Array or string.
   */
  static parse(body: Buffer | Uint8Array | string, options?: native.ParseOptions | null): Robots;
}
