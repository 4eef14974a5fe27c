#!/usr/bin/env python3
"""Builds crates/audit/data/bots.json, the crawler catalogue `mannerly audit`
classifies User-Agents with, from the public catalogues in ../shared/bots
(see crates/audit/data/CREDITS.md for their sources and licences).

Each entry is one product token: the name a crawler's robots.txt group is
written for and that appears in its User-Agent, its operator, what it is for
(one closed set of categories), whether robots.txt governs it (`kind`: a
`user-triggered` fetcher's operator states it does not, at `kind_source`),
and the ways its operator publishes to check that a request is really theirs
(reverse-DNS domains, IP-range files in Google's `prefixes` format).

    python3 tools/catalogue/build.py [SHARED_DIR]
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "../../../shared")
OUT = os.path.join(HERE, "../../crates/audit/data/bots.json")
TOKEN = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{2,}$")
# A client's name of several words, as its User-Agent writes it
# ("Tiny Tiny RSS/21.0", "Better Uptime Bot ...").
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*( [A-Za-z0-9][A-Za-z0-9_.-]*){1,4}$")

# Words that name no client: a catalogue entry of one of them would name a
# Sogou spider `Spider` or Better Uptime `Uptime`.
GENERIC = {
    "agent", "app", "archive", "bot", "check", "checker", "chef", "client", "crawl", "crawler",
    "feed", "fetcher", "http", "link", "linux", "monitor", "mozilla", "msie", "preview",
    "reader", "robot", "rss", "scanner", "scraper", "search", "spider", "tiny", "tool",
    "uptime", "web", "windows", "x11",
}

# Categories a catalogue gets wrong. A monitor is something a site's
# owner set up, and robots.txt does not govern it; a crawler filed as one
# escapes the audit's judging and the gate's robots.txt, so each crawler
# the catalogues file under monitoring (arcjet's `optimizer`, the
# `monitoring` tag of crawler-user-agents) is put back by name.
CATEGORY_FIXES = {
    # Nagios's monitoring plugin, filed by arcjet as a tool anyone runs.
    "check_http": "monitoring",
    # SEO and backlink crawlers: run against any site.
    "rogerbot": "seo",
    "screaming frog seo spider": "seo",
    "mbcrawler": "seo",
    "linkpadbot": "seo",
    # Crawlers of news, search and the fediverse.
    "new york times newsgathering": "other",
    "dow jones searchbot": "other",
    "owler-w": "search-engine",
    "genomecrawlerd": "other",
    "vmcrawl": "other",
    "fedistatscrawler": "other",
    "headonlyscraper": "other",
    "magus bot": "other",
    # Scanners of the whole internet.
    "censysinspect": "security-scanner",
    "modatscanner": "security-scanner",
    # Media, brand and market monitoring: they watch others' sites.
    "atvowbot": "other",
    "determ": "other",
    "sindup": "other",
    "sv-watchagent": "other",
    "tsmbot": "other",
    "wisebot": "other",
    "scrunchbot": "other",
    # Collectors of others' content: plagiarism, jobs, news, reviews,
    # companies, images, video.
    "plagawarebot": "other",
    "magnetmebot": "other",
    "noahbot": "other",
    "capterrabot": "other",
    "corporama matcher": "other",
    "rakuten image extraction bot": "other",
    "videootv bot": "other",
    "synthesibot": "other",
    # Crawlers of the fediverse's instances.
    "fedidb": "other",
    "fedilist agent": "other",
    "caveman-hunter": "other",
    "dominicbot": "other",
}

# Operators a catalogue gets wrong (arcjet's Alexa entry matches `exabot`
# inside `Alexabot`).
OPERATOR_FIXES = {"exabot": "Exalead", "exabot-images": "Exalead"}

# What an operator documents its crawlers do not read: directive -> where
# it says so.
GOOGLE_ROBOTS_SPEC = "https://developers.google.com/search/docs/crawling-indexing/robots/robots_txt"


def ignores(e):
    """The robots.txt directives the entry's operator documents it ignores."""
    if (e["operator"] or "") == "Google":
        return {"crawl-delay": GOOGLE_ROBOTS_SPEC}
    return {}


def operator_of_id(bot_id, token):
    """arcjet's id names its operator in lower case (`uptimerobot-...`):
    written as the token writes it when the token holds it."""
    word = bot_id.split("-")[0]
    at = token.lower().find(word)
    return token[at:at + len(word)] if at >= 0 else word.capitalize()


def literal(pattern):
    """The plain token (or name of a few words) a User-Agent regex looks
    for, or None."""
    p = pattern.replace("\\/", "/").replace("\\.", ".").replace("\\-", "-")
    p = re.sub(r"\(\[\^-\]\|\$\)$", "", p)  # AdsBot-Google([^-]|$)
    p = p.rstrip("/ ").lstrip("^")
    if p.lower() in GENERIC:
        return None
    if TOKEN.match(p):
        return p
    if NAME.match(p) and any(w.lower() not in GENERIC for w in p.split()):
        return p
    return None


def domain(mask):
    """`crawl-***.googlebot.com`, `*.search.msn.com`, `@.x.com` -> the domain."""
    tail = re.split(r"[*@]", mask)[-1]
    return tail.lstrip(".-").lower() or None


def operator_text(md):
    m = re.match(r"\[([^\]]+)\]", md or "")
    text = m.group(1) if m else (md or "")
    return None if not text or text.startswith("Unclear") else text.strip()


# ipverse names services, not their operators.
OPERATORS = {
    "Googlebot": "Google", "Google (special)": "Google", "Google (user-triggered)": "Google",
    "Bingbot": "Microsoft", "GPTBot": "OpenAI", "ChatGPT-User": "OpenAI", "OAI-SearchBot": "OpenAI",
    "ClaudeBot": "Anthropic", "Common Crawl": "Common Crawl", "Applebot": "Apple",
    "Amazonbot": "Amazon", "DuckDuckBot": "DuckDuckGo", "Meta-ExternalAgent": "Meta",
    "PerplexityBot": "Perplexity", "Kagibot": "Kagi", "SERankingBacklinksBot": "SE Ranking",
    "Ahrefs": "Ahrefs", "Yandex": "Yandex", "SE Ranking": "SE Ranking",
}


# The catalogues' categories (each its own words) into one closed set,
# the one `mannerly audit` documents: what a crawler is for.
CATEGORIES = {
    "search-engine": "search-engine",
    "ai": "ai", "ai-crawler": "ai",
    "seo": "seo",
    "advertising": "advertising",
    "monitoring": "monitoring", "monitor": "monitoring", "optimizer": "monitoring",
    "webhook": "monitoring",
    "feed-reader": "feed-reader", "feedfetcher": "feed-reader",
    "social-preview": "link-preview", "preview": "link-preview", "social": "link-preview",
    "slack": "link-preview", "meta": "link-preview",
    "archiver": "archiver", "archive": "archiver",
    "academic": "academic",
    "scanner": "security-scanner",
    "tool": "crawler-software", "programmatic": "crawler-software",
    "http-library": "crawler-software", "browser-automation": "crawler-software",
}

# Fetchers whose operators state that robots.txt does not govern them, as
# they fetch only when a person asks: token -> where the operator says so.
GOOGLE_USER_TRIGGERED = "https://developers.google.com/crawling/docs/crawlers-fetchers/google-user-triggered-fetchers"
META_CRAWLERS = "https://developers.facebook.com/docs/sharing/webmasters/web-crawlers"
USER_TRIGGERED = {
    "FeedFetcher-Google": GOOGLE_USER_TRIGGERED,
    "GoogleProducer": GOOGLE_USER_TRIGGERED,
    "Google-Read-Aloud": GOOGLE_USER_TRIGGERED,
    "Google-Site-Verification": GOOGLE_USER_TRIGGERED,
    "Google-NotebookLM": GOOGLE_USER_TRIGGERED,
    "ChatGPT-User": "https://platform.openai.com/docs/bots",
    "Perplexity-User": "https://docs.perplexity.ai/guides/bots",
    "facebookexternalhit": META_CRAWLERS,
    "meta-externalfetcher": META_CRAWLERS,
}


def closed_category(e):
    """The entry's category in the closed set (`other` when unknown)."""
    if e["token"].lower() in CATEGORY_FIXES:
        return CATEGORY_FIXES[e["token"].lower()]
    if e["token"].lower().startswith("yandex") and not e["category"]:
        return "search-engine"
    return CATEGORIES.get(e["category"], "other")


def main():
    bots = {}

    def entry(token):
        return bots.setdefault(token.lower(), {
            "token": token, "operator": None, "category": None, "rdns": [], "ranges": []})

    ipverse = json.load(open(os.path.join(SHARED, "bots/ipverse_crawlers.json")))["services"]
    for name, svc in ipverse.items():
        for glob in svc["user_agent_patterns"]:
            token = glob.strip("*")
            if not TOKEN.match(token) or token.lower() in GENERIC:
                continue
            e = entry(token)
            e["operator"] = e["operator"] or OPERATORS.get(name, name)
            for r in svc["rdns_patterns"]:
                d = domain(r)
                if d and d not in e["rdns"]:
                    e["rdns"].append(d)
            url = svc["source_url"]
            if svc["ip_list_authoritative"] and url.endswith(".json") and url not in e["ranges"]:
                e["ranges"].append(url)

    for bot in json.load(open(os.path.join(SHARED, "bots/arcjet_well-known-bots.json"))):
        for pattern in bot["pattern"]["accepted"]:
            token = literal(pattern)
            if not token:
                continue
            e = entry(token)
            e["category"] = e["category"] or (bot.get("categories") or [None])[-1]
            e["operator"] = e["operator"] or operator_of_id(bot["id"], token)
            for v in bot.get("verification", []):
                if v["type"] == "dns":
                    for m in v["masks"]:
                        d = domain(m)
                        if d and d not in e["rdns"]:
                            e["rdns"].append(d)
                if v["type"] == "cidr":
                    for s in v["sources"]:
                        if "prefixes" in s.get("selector", "") and s["url"] not in e["ranges"]:
                            e["ranges"].append(s["url"])

    ai = json.load(open(os.path.join(SHARED, "bots/ai-robots-txt_robots.json")))
    for token, info in ai.items():
        if not TOKEN.match(token) or token.lower() in GENERIC:
            continue
        e = entry(token)
        e["operator"] = operator_text(info.get("operator")) or e["operator"]
        e["category"] = e["category"] or "ai"

    for pat in json.load(open(os.path.join(SHARED, "bots/crawler-user-agents.json"))):
        token = literal(pat["pattern"])
        if token and len(token) >= 4:
            e = entry(token)
            e["category"] = e["category"] or (pat.get("tags") or [None])[-1]

    # A token found in real browsers' User-Agents cannot tell a bot.
    browsers = [l.strip()[2:].strip().strip('"').lower()
                for l in open(os.path.join(SHARED, "bots/isbot_browsers.yml")) if l.strip().startswith("- ")]
    def in_browser(token):
        pat = re.compile(r"(?<![a-z0-9])" + re.escape(token.lower()) + r"(?![a-z])")
        return any(pat.search(b) for b in browsers)
    dropped = sorted(t for t, e in bots.items() if in_browser(e["token"]))
    for t in dropped:
        del bots[t]
    print("dropped, as they appear in browsers' User-Agents:", ", ".join(dropped))
    for e in bots.values():
        e["category"] = closed_category(e)
        source = USER_TRIGGERED.get(e["token"])
        e["kind"] = "user-triggered" if source else "crawler"
        e["kind_source"] = source
        e["operator"] = OPERATOR_FIXES.get(e["token"].lower(), e["operator"])
        e["ignores"] = ignores(e)
    missing = sorted(set(USER_TRIGGERED) - {e["token"] for e in bots.values()})
    if missing:
        sys.exit(f"user-triggered fetchers not in the catalogue: {missing}")
    out = sorted(bots.values(), key=lambda e: e["token"].lower())
    with open(OUT, "w") as f:
        f.write("[\n" + ",\n".join(json.dumps(e, sort_keys=True) for e in out) + "\n]\n")
    print(f"{len(out)} tokens, {sum(1 for e in out if e['rdns'] or e['ranges'])} verifiable -> {OUT}")


main()
