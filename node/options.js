'use strict';
// The keys each options object of the engine takes, checked before the
// engine sees them (internal: not part of the package's exports).

/**
 * The keys each options object takes (as native.d.ts declares them): an
 * unknown key is a typo that would silently leave a setting at its
 * default, such as a crawl delay.
 */
const OPTION_KEYS = {
  'Robots._parse:options': ['rfc', 'maxBytes'],
  'RobotsState:options': ['profile', 'rfc', 'maxTtlSecs', 'minTtlSecs', 'backoffBaseSecs', 'backoffMaxSecs', 'retryAfterCapSecs'],
  'RobotsState#applyResponse:response': ['status', 'body', 'headers', 'url', 'redirects'],
  'Politeness:options': ['minDelaySecs', 'profile', 'maxInFlight', 'maxCrawlDelaySecs', 'overMax', 'retryAfterCapSecs', 'backoffFactor', 'maxDelaySecs', 'pauseAfter', 'pauseForSecs'],
  'Politeness#finish:how': ['status', 'latencyMs', 'retryAfter'],
};

/** Throws a TypeError naming a key `allowed` does not hold. */
function checkKeys(label, arg, value, allowed) {
  for (const key of Object.keys(value)) {
    if (value[key] !== undefined && !allowed.includes(key)) {
      throw new TypeError(`${label}: ${arg} has no option '${key}' (it takes ${allowed.join(', ')})`);
    }
  }
}

module.exports = { OPTION_KEYS, checkKeys };
