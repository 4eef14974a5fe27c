"""Web Bot Auth through Python: sign, verify, every refusal named."""

import json
import os
import pathlib
import re
import time

import pytest

import mannerly


DIRECTORY = "https://crawler.example/.well-known/http-message-signatures-directory"


def signed(key, now=None):
    url = "https://example.com/catalog/item?id=42"
    extra = mannerly.sign_request("GET", url, {"User-Agent": "ExampleBot/1.0"}, key, DIRECTORY,
                                  components=["@method", "@path"], now=now)
    return url, [("User-Agent", "ExampleBot/1.0")] + extra


def test_sign_then_verify():
    key = mannerly.generate_key()
    jwk = json.loads(mannerly.public_jwk(key))
    url, headers = signed(key)
    names = [n for n, _ in headers]
    assert {"Signature-Agent", "Signature-Input", "Signature"} <= set(names)
    r = mannerly.verify_request("GET", url, headers, [jwk], keys_from=DIRECTORY + "?v=1")
    assert r["result"] == "verified", r
    assert r["agent"] == DIRECTORY, "attributed to the URL the keys came from, without its query"
    assert r["thumbprint"] == r["keyid"]
    # Keys held by other means: verified, attributed to the key alone.
    assert mannerly.verify_request("GET", url, headers, [jwk])["agent"] is None
    # The same with a JWKS document and its JSON text.
    assert mannerly.verify_request("GET", url, headers, {"keys": [jwk]})["result"] == "verified"
    assert mannerly.verify_request("GET", url, headers, json.dumps({"keys": [jwk]}))["result"] == "verified"


def test_refusals_say_why():
    key = mannerly.generate_key()
    other = json.loads(mannerly.public_jwk(mannerly.generate_key()))
    url, headers = signed(key)
    r = mannerly.verify_request("GET", url, headers, [other])
    assert r["result"] == "unverified" and "unknown key" in r["reason"], r
    http_url, http = "http://example.com/", None
    http = mannerly.sign_request("GET", http_url, {}, key, DIRECTORY)
    assert "plain http" in mannerly.verify_request("GET", http_url, http, [other])["reason"]
    jwk = json.loads(mannerly.public_jwk(key))
    old_url, old = signed(key, now=time.time() - 3600)
    r = mannerly.verify_request("GET", old_url, old, [jwk])
    assert r["result"] == "invalid" and "expire" in r["reason"], r
    tampered = [(n, v) for n, v in headers]
    r = mannerly.verify_request("POST", url, tampered, [jwk])
    assert r["result"] == "invalid", r
    assert mannerly.verify_request("GET", url, [("Accept", "*/*")], [jwk]) == {"result": "unsigned"}


def test_bad_arguments_are_errors_with_their_names():
    with pytest.raises(ValueError, match="key"):
        mannerly.sign_request("GET", "https://example.com/", {}, "not a pem", "https://crawler.example")
    with pytest.raises(ValueError, match="JWKS"):
        mannerly.verify_request("GET", "https://example.com/", {}, "{}")
    with pytest.raises(TypeError, match="headers"):
        mannerly.verify_request("GET", "https://example.com/", [("a",)], [])
    with pytest.raises(TypeError, match="keys"):
        mannerly.verify_request("GET", "https://example.com/", {}, 42)
    with pytest.raises(ValueError, match="now"):
        mannerly.sign_request("GET", "https://example.com/", {}, mannerly.generate_key(), "https://c.example", now=-5)


SHARED = pathlib.Path(os.environ.get("MANNERLY_SHARED", pathlib.Path(__file__).resolve().parents[3] / "shared"))


def _vectors():
    path = SHARED / "webbotauth" / "vectors.json"
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{path} is missing: CI must run the shared vectors")
        pytest.skip("SKIPPED: ../shared/webbotauth not found")
    return json.loads(path.read_text())


def test_the_shared_ed25519_request_vectors():
    data = _vectors()
    jwk = data["keys"]["test-key-ed25519"]["jwk_public"]
    checked = 0
    for v in data["signature_vectors"]:
        # Ed25519 request signatures whose keyid is the key's thumbprint (the
        # Web Bot Auth way); the Rust suite covers the rest.
        if v["alg"] != "ed25519" or v.get("response") or 'keyid="test-key' in v["signature_input"]:
            continue
        created = int(re.search(r"created=(\d+)", v["signature_input"]).group(1))
        req = v["request"]
        headers = [tuple(h) for h in req["headers"]] + [
            ("Signature-Input", v["signature_input"]),
            ("Signature", v["signature"]),
        ]
        r = mannerly.verify_request(
            req["method"],
            req["target_uri"],
            headers,
            [jwk],
            now=created + 1,
            web_bot_auth=v["web_bot_auth_profile"],
            max_validity=2**62,
            allow_test_keys=True,
        )
        if v.get("rfc9421_valid") is False:
            assert r["result"] == "invalid" and "does not match" in r["reason"], (v["id"], r)
        else:
            assert r["result"] == "verified", (v["id"], r)
            # In production the RFC 9421 test key is refused, by name.
            prod = mannerly.verify_request(req["method"], req["target_uri"], headers, [jwk], now=created + 1,
                                           web_bot_auth=v["web_bot_auth_profile"], max_validity=2**62)
            assert prod["result"] == "invalid" and "test key" in prod["reason"], (v["id"], prod)
        checked += 1
    assert checked >= 6, checked
