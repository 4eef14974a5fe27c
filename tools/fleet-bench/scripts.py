"""Server time per page by fleet script, from a SLOWLOG taken with
slowlog-log-slower-than 0 (tools/fleet-bench/run.sh with COMMANDS=1).

usage: scripts.py lua.rs slowlog.txt audit.json
"""
import hashlib
import json
import re
import sys
from collections import defaultdict

lua, slowlog, audit = sys.argv[1:]
src = open(lua).read()
consts = dict(re.findall(r'const (\w+): &str = r#"(.*?)"#;', src, re.S))
lib = consts.pop("LIB")
names = {hashlib.sha1(f"{lib}\n{body}".encode()).hexdigest(): name.lower() for name, body in consts.items()}
pages = json.loads(open(audit).read().strip().splitlines()[-1])["pages"] or 1
# redis-cli prints each entry as: id, timestamp, duration (µs), then the
# arguments, then client address and name. Read it as lines.
lines = open(slowlog, encoding="utf-8", errors="replace").read().split("\n")
calls, usec, durs = defaultdict(int), defaultdict(int), defaultdict(list)
i = 0
while i < len(lines):
    line = lines[i].strip()
    if line.lower() in ("evalsha", "eval") and i >= 1:
        # the duration is two lines above the command name
        try:
            dur = int(lines[i - 1].strip())
        except ValueError:
            i += 1
            continue
        sha = lines[i + 1].strip().lower()
        name = names.get(sha, sha[:8])
        calls[name] += 1
        usec[name] += dur
        durs[name].append(dur)
    i += 1
for name in sorted(usec, key=usec.get, reverse=True):
    d = sorted(durs[name])
    q = lambda f: d[min(len(d) - 1, int(f * len(d)))]
    print(f"    script {name:<18} {calls[name] / pages:8.2f} calls/page {usec[name] / pages:8.1f} µs/page {usec[name] / calls[name]:7.1f} µs/call"
          f"  (p50 {q(0.5)}, p90 {q(0.9)}, p99 {q(0.99)}, max {d[-1]} µs)")
