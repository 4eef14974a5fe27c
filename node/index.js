'use strict';
// mannerly for Node: the Rust engine (native.js) with argument checks that
// throw TypeError and RangeError, naming the method and the argument.

const native = require('./native.js');
const { OPTION_KEYS, checkKeys } = require('./options.js');

/** What each method takes, in order: a name and a type for each argument. */
const SIGNATURES = {
  'Robots._parse': [['body', 'body'], ['options', 'object?']],
  'Robots#isAllowed': [['agent', 'string'], ['url', 'string']],
  'Robots#isAllowedAsGiven': [['agent', 'string'], ['url', 'string']],
  'Robots#explain': [['agent', 'string'], ['url', 'string']],
  'Robots#forAgent': [['agent', 'string']],
  'Robots#crawlDelay': [['agent', 'string']],
  'Robots#requestRate': [['agent', 'string']],
  'Robots#pacing': [['agent', 'string'], ['profile', 'string?']],
  'Robots#contentUsage': [['agent', 'string'], ['url', 'string'], ['header', 'lines?']],
  'AgentRules#isAllowed': [['url', 'string']],
  'AgentRules#isAllowedMany': [['urls', 'strings']],
  'AgentRules#isAllowedManyAsGiven': [['urls', 'strings']],
  'AgentRules#explain': [['url', 'string']],
  RobotsState: [['origin', 'string'], ['options', 'object?']],
  'RobotsState#decision': [['now', 'time?']],
  'RobotsState#applyResponse': [['response', 'object'], ['now', 'time?']],
  'RobotsState#applyNetworkError': [['kind', 'string'], ['detail', 'string?'], ['now', 'time?']],
  'RobotsState#applyTooManyRedirects': [['redirects', 'array?'], ['isLoop', 'boolean?'], ['now', 'time?']],
  'RobotsState#noteHostAnswered': [['now', 'time?']],
  'RobotsDecision#isAllowed': [['agent', 'string'], ['url', 'string']],
  Politeness: [['options', 'object?']],
  'Politeness#setRobots': [['key', 'string'], ['robots', 'robots?'], ['agent', 'string']],
  'Politeness#waitMs': [['key', 'string'], ['now', 'time?']],
  'Politeness#whyNotNow': [['key', 'string'], ['now', 'time?']],
  'Politeness#start': [['key', 'string'], ['now', 'time?']],
  'Politeness#finish': [['key', 'string'], ['how', 'object'], ['now', 'time?']],
  'Politeness#delaySecs': [['key', 'string']],
  'Politeness#inFlight': [['key', 'string']],
  'Politeness#skipped': [['key', 'string']],
  asRequested: [['url', 'string']],
  productToken: [['userAgent', 'string']],
  lint: [['body', 'body'], ['rfc', 'boolean?']],
  isValidUserAgent: [['agent', 'string']],
  pathParamsQuery: [['url', 'string']],
};

function describe(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (Buffer.isBuffer(v)) return 'a Buffer';
  return typeof v === 'object' ? 'an object' : `${typeof v} ${JSON.stringify(v)}`;
}

const CHECKS = {
  string: [(v) => typeof v === 'string', 'a string'],
  body: [(v) => typeof v === 'string' || v instanceof Uint8Array, 'a Buffer, Uint8Array or string'],
  object: [(v) => v !== null && typeof v === 'object' && !Array.isArray(v), 'an object'],
  boolean: [(v) => typeof v === 'boolean', 'a boolean'],
  array: [(v) => Array.isArray(v), 'an array'],
  strings: [(v) => Array.isArray(v) && v.every((s) => typeof s === 'string'), 'an array of strings'],
  lines: [(v) => typeof v === 'string' || (Array.isArray(v) && v.every((s) => typeof s === 'string')), 'a string or an array of strings'],
  robots: [(v) => v instanceof native.Robots, 'a Robots'],
  time: [(v) => typeof v === 'number', 'a number of milliseconds since 1970 (Date.now())'],
};

function check(name, args) {
  const sig = SIGNATURES[name];
  // A class alone is its constructor.
  const label = /^[A-Z]\w*$/.test(name) ? `new ${name}` : name.replace('#', '.').replace('._parse', '.parse');
  sig.forEach(([arg, type], i) => {
    const optional = type.endsWith('?');
    const [ok, what] = CHECKS[type.replace('?', '')];
    const v = args[i];
    if (v === undefined || (optional && v === null)) {
      if (!optional) throw new TypeError(`${label}: ${arg} is required (${what})`);
      return;
    }
    if (!ok(v)) throw new TypeError(`${label}: ${arg} must be ${what}, got ${describe(v)}`);
    const keys = OPTION_KEYS[`${name}:${arg}`];
    if (keys) checkKeys(label, arg, v, keys);
    if (type.startsWith('time') && !(Number.isFinite(v) && v >= 0)) {
      throw new RangeError(`${label}: ${arg} ${v} is not a time (milliseconds since 1970, as Date.now() gives)`);
    }
  });
  return args.map((v, i) => {
    const type = sig[i] && sig[i][1];
    // The engine takes Buffers; a plain Uint8Array is viewed as one.
    if (type === 'body' && v instanceof Uint8Array && !Buffer.isBuffer(v)) {
      return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
    }
    return v;
  });
}

/** The engine's errors as the JavaScript errors they are. */
function convert(label, e) {
  if (!(e instanceof Error) || e instanceof TypeError || e instanceof RangeError) return e;
  const m = /^RangeError: (.*)$/s.exec(e.message);
  if (m) return new RangeError(`${label}: ${m[1]}`);
  if (e.code === 'InvalidArg' || /Expected$/.test(String(e.code))) return new TypeError(`${label}: ${e.message}`);
  return e;
}

function guard(name, fn) {
  const label = name.replace('#', '.').replace('._parse', '.parse');
  const sig = SIGNATURES[name];
  // The hot calls (one or two strings, such as isAllowed) are checked
  // without building arrays: they run millions of times a second.
  if (sig.every(([, type]) => type === 'string')) {
    if (sig.length === 1) {
      return function guarded1(a) {
        if (typeof a !== 'string') check(name, [a]);
        try {
          return fn.call(this, a);
        } catch (e) {
          throw convert(label, e);
        }
      };
    }
    if (sig.length === 2) {
      return function guarded2(a, b) {
        if (typeof a !== 'string' || typeof b !== 'string') check(name, [a, b]);
        try {
          return fn.call(this, a, b);
        } catch (e) {
          throw convert(label, e);
        }
      };
    }
  }
  return function guarded(...args) {
    const checked = check(name, args);
    try {
      return fn.apply(this, checked);
    } catch (e) {
      throw convert(label, e);
    }
  };
}

for (const name of Object.keys(SIGNATURES)) {
  const [cls, method] = name.split(/[#.]/);
  if (name.includes('#')) {
    const proto = native[cls].prototype;
    proto[method] = guard(name, proto[method]);
  }
}

// The factory's own property cannot be replaced: `parse` is added beside it.
Object.defineProperty(native.Robots, 'parse', {
  value: guard('Robots._parse', native.Robots._parse),
  enumerable: true,
});

/** A constructor checked the same way (the engine's class, subclassed). */
function checkedClass(Base, name) {
  return class extends Base {
    constructor(...args) {
      const checked = check(name, args);
      try {
        super(...checked);
      } catch (e) {
        throw convert(`new ${name}`, e);
      }
    }
  };
}

const RobotsState = checkedClass(native.RobotsState, 'RobotsState');
const Politeness = checkedClass(native.Politeness, 'Politeness');
Object.defineProperty(RobotsState, 'name', { value: 'RobotsState' });
Object.defineProperty(Politeness, 'name', { value: 'Politeness' });

module.exports = {
  Robots: native.Robots,
  AgentRules: native.AgentRules,
  RobotsDecision: native.RobotsDecision,
  RobotsState,
  Politeness,
  asRequested: guard('asRequested', native.asRequested),
  productToken: guard('productToken', native.productToken),
  lint: guard('lint', native.lint),
  isValidUserAgent: guard('isValidUserAgent', native.isValidUserAgent),
  pathParamsQuery: guard('pathParamsQuery', native.pathParamsQuery),
};
