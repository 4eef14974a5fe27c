"""mannerly: robots.txt exactly as Google's reference library reads it,
sitemaps, and Web Bot Auth, from the mannerly Rust toolkit.

>>> import mannerly
>>> robots = mannerly.Robots(b"User-agent: *\\nDisallow: /private/\\n")
>>> robots.is_allowed("MyBot", "https://example.com/private/x")
False
>>> robots.explain("MyBot", "/private/x").rule
'Disallow: /private/'
"""

import json as _json
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple, Union

from ._mannerly import (
    AgentRules,
    Politeness,
    Robots,
    RobotsDecision,
    RobotsState,
    SitemapEntries,
    Verdict,
    __version__,
    _verify_request,
    as_requested,
    generate_key,
    lint,
    parse_sitemap,
    product_token,
    public_jwk,
    sign_request as _sign_request,
)

Headers = Union[Mapping[str, str], Iterable[Tuple[str, str]]]


def _pairs(headers: Headers) -> List[Tuple[str, str]]:
    items = headers.items() if isinstance(headers, Mapping) else headers
    out = []
    for pair in items:
        try:
            name, value = pair
        except (TypeError, ValueError):
            raise TypeError(f"headers: expected (name, value) pairs or a mapping, got {pair!r}") from None
        if not isinstance(name, str) or not isinstance(value, str):
            raise TypeError(f"headers: names and values must be str, got {pair!r}")
        out.append((name, value))
    return out


def sign_request(
    method: str,
    url: str,
    headers: Headers,
    key: str,
    agent: str,
    components: Optional[List[str]] = None,
    now: Optional[float] = None,
) -> List[Tuple[str, str]]:
    """Web Bot Auth headers to add to a request (Signature-Agent,
    Signature-Input, Signature), signed with ``key`` (PKCS#8 PEM)."""
    return _sign_request(method, url, _pairs(headers), key, agent, components, now)


def verify_request(
    method: str,
    url: str,
    headers: Headers,
    keys: Union[str, Mapping[str, Any], List[Mapping[str, Any]]],
    now: Optional[float] = None,
    *,
    web_bot_auth: bool = True,
    max_validity: int = 86400,
    allow_test_keys: bool = False,
    keys_from: Optional[str] = None,
    allow_http: bool = False,
) -> Dict[str, Any]:
    """Checks a request's Web Bot Auth signatures against ``keys`` (a JWKS
    document, its ``keys`` list, or its JSON text). The result's
    ``result`` is 'verified', 'invalid' (with ``reason``), 'unverified'
    (with ``reason``: the key is unknown, or the algorithm one this
    verifier does not implement; not evidence against the signer) or
    'unsigned'.

    ``keys_from`` is the URL the keys were fetched from: a verified request
    whose Signature-Agent names that URL is attributed to it (``agent``,
    without its query); otherwise ``agent`` is None and the key's
    thumbprint is the identity. ``allow_http=True`` accepts signatures on
    plain http requests, which a server should refuse.

    ``web_bot_auth=False`` checks a plain RFC 9421 signature (no
    ``tag="web-bot-auth"`` or Signature-Agent required); ``max_validity``
    is the longest ``expires - created`` accepted, in seconds;
    ``allow_test_keys=True`` accepts the RFC 9421 test keys, which a
    server in production must refuse (anyone can sign with them)."""
    if isinstance(keys, str):
        text = keys
    elif isinstance(keys, Mapping):
        text = _json.dumps(keys)
    elif isinstance(keys, list):
        text = _json.dumps({"keys": keys})
    else:
        raise TypeError(f"keys: expected a JWKS document, a list of JWKs or JSON text, got {type(keys).__name__}")
    return _verify_request(
        method,
        url,
        _pairs(headers),
        text,
        now,
        web_bot_auth=web_bot_auth,
        max_validity=max_validity,
        allow_test_keys=allow_test_keys,
        keys_from=keys_from,
        allow_http=allow_http,
    )


__all__ = [
    "AgentRules",
    "Politeness",
    "Robots",
    "RobotsDecision",
    "RobotsState",
    "SitemapEntries",
    "Verdict",
    "as_requested",
    "generate_key",
    "lint",
    "parse_sitemap",
    "public_jwk",
    "sign_request",
    "verify_request",
    "__version__",
]
