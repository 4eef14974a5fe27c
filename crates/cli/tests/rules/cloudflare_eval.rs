//! An evaluator of the Cloudflare rule expressions `--rules cloudflare`
//! writes, over the fields they use (`http.request.uri.path`,
//! `http.user_agent`, `ip.src`), with `and`, `or`, `not`, parentheses,
//! `eq`, `ne`, `matches` (Rust's regex, as Cloudflare's is), `in {…}` and
//! `in $list` (the lists the file's comments give).

use std::collections::HashMap;
use std::net::IpAddr;

use crate::world::Ask;

pub struct Rules {
    pub expressions: Vec<String>,
    lists: HashMap<String, Vec<String>>,
    regexes: std::cell::RefCell<HashMap<String, regex::Regex>>,
}

impl Rules {
    /// The expressions (the lines not comments) and the IP lists.
    pub fn read(text: &str) -> Rules {
        let mut lists: HashMap<String, Vec<String>> = HashMap::new();
        let mut current: Option<String> = None;
        let mut entries = false;
        for l in text.lines() {
            if let Some(rest) = l.strip_prefix("# IP list `") {
                current = rest.split('`').next().map(str::to_owned);
                entries = false;
            } else if l == "# Its entries:" {
                entries = true;
            } else if let (Some(name), Some(e), true) = (&current, l.strip_prefix("#   "), entries)
            {
                lists
                    .entry(name.clone())
                    .or_default()
                    .extend(e.split_whitespace().map(str::to_owned));
            } else {
                entries = false;
            }
        }
        let expressions = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(str::to_owned)
            .collect();
        Rules {
            expressions,
            lists,
            regexes: Default::default(),
        }
    }

    /// Whether any rule (action Block) matches the request.
    pub fn blocks(&self, a: &Ask) -> bool {
        self.expressions.iter().any(|e| {
            let tokens = tokenize(e);
            let mut p = Parser {
                t: &tokens,
                i: 0,
                ask: a,
                lists: &self.lists,
                regexes: &self.regexes,
            };
            let v = p.or();
            assert_eq!(p.i, tokens.len(), "all of {e} read");
            v
        })
    }
}

fn tokenize(e: &str) -> Vec<String> {
    let mut out = Vec::new();
    let c: Vec<char> = e.chars().collect();
    let mut i = 0;
    while i < c.len() {
        match c[i] {
            ' ' => i += 1,
            '(' | ')' => {
                out.push(c[i].to_string());
                i += 1;
            }
            '"' => {
                let mut s = String::from("\"");
                i += 1;
                while i < c.len() && c[i] != '"' {
                    if c[i] == '\\' {
                        i += 1;
                    }
                    s.push(c[i]);
                    i += 1;
                }
                out.push(s);
                i += 1;
            }
            '{' => {
                let end = c[i..].iter().position(|&x| x == '}').expect("a closed set") + i;
                out.push(c[i..=end].iter().collect());
                i = end + 1;
            }
            _ => {
                let end = c[i..]
                    .iter()
                    .position(|&x| x == ' ' || x == '(' || x == ')')
                    .map_or(c.len(), |p| p + i);
                out.push(c[i..end].iter().collect());
                i = end;
            }
        }
    }
    out
}

struct Parser<'a> {
    t: &'a [String],
    i: usize,
    ask: &'a Ask,
    lists: &'a HashMap<String, Vec<String>>,
    regexes: &'a std::cell::RefCell<HashMap<String, regex::Regex>>,
}

impl Parser<'_> {
    fn next(&mut self) -> &str {
        let s = self.t.get(self.i).map_or("", String::as_str);
        self.i += 1;
        s
    }

    fn peek(&self) -> &str {
        self.t.get(self.i).map_or("", String::as_str)
    }

    fn or(&mut self) -> bool {
        let mut v = self.and();
        while self.peek() == "or" {
            self.i += 1;
            v |= self.and();
        }
        v
    }

    fn and(&mut self) -> bool {
        let mut v = self.not();
        while self.peek() == "and" {
            self.i += 1;
            v &= self.not();
        }
        v
    }

    fn not(&mut self) -> bool {
        if self.peek() == "not" {
            self.i += 1;
            return !self.not();
        }
        if self.peek() == "(" {
            self.i += 1;
            let v = self.or();
            assert_eq!(self.next(), ")");
            return v;
        }
        self.comparison()
    }

    fn comparison(&mut self) -> bool {
        let field = self.next().to_owned();
        let op = self.next().to_owned();
        let value = self.next().to_owned();
        let text = |v: &str| v.strip_prefix('"').expect("a string").to_owned();
        match (field.as_str(), op.as_str()) {
            ("http.request.uri.path", "ne") => self.ask.path != text(&value),
            ("http.request.uri.path", "eq") => self.ask.path == text(&value),
            ("http.user_agent", "matches") => {
                let pattern = text(&value);
                let mut cache = self.regexes.borrow_mut();
                let re = cache
                    .entry(pattern.clone())
                    .or_insert_with(|| regex::Regex::new(&pattern).expect("Cloudflare's regex"));
                re.is_match(&self.ask.user_agent)
            }
            ("ip.src", "in") => {
                let nets: Vec<String> = match value.strip_prefix('$') {
                    Some(list) => self
                        .lists
                        .get(list)
                        .cloned()
                        .unwrap_or_else(|| panic!("no list {list}")),
                    None => value
                        .trim_matches(['{', '}'])
                        .split_whitespace()
                        .map(str::to_owned)
                        .collect(),
                };
                nets.iter().any(|n| contains(n, self.ask.client))
            }
            other => panic!("not a field and operator the rules use: {other:?}"),
        }
    }
}

fn contains(net: &str, ip: IpAddr) -> bool {
    let (addr, len) = net.split_once('/').unwrap_or((net, ""));
    let addr: IpAddr = addr.parse().expect("an address");
    match (addr, ip) {
        (IpAddr::V4(a), IpAddr::V4(b)) => {
            let len: u32 = len.parse().unwrap_or(32);
            let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
            u32::from(a) & mask == u32::from(b) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(b)) => {
            let len: u32 = len.parse().unwrap_or(128);
            let mask = if len == 0 {
                0
            } else {
                u128::MAX << (128 - len)
            };
            u128::from(a) & mask == u128::from(b) & mask
        }
        _ => false,
    }
}
