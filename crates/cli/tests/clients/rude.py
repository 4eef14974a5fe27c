"""A deliberately rude crawler for `mannerly demo -- python3 rude.py`: it never
reads robots.txt, waits for nothing, and asks again at once after a 429."""
import os
import urllib.error
import urllib.request

proxy = os.environ["MANNERLY_DEMO_PROXY"]
opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": proxy}))
opener.addheaders = [("User-Agent", "RudeBot/1.0")]


def get(url):
    try:
        with opener.open(url, timeout=10) as r:
            r.read()
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return None


for seed in open(os.environ["MANNERLY_DEMO_SEEDS"]).read().split():
    for path in ["", "p1.html", "p2.html", "p7.html"]:
        for _ in range(3):
            if get(seed + path) != 429:
                break
