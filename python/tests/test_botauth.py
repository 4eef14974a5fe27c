"""Web Bot Auth through Python: sign, verify, every refusal named."""

import json
import time

import pytest

import mannerly


def signed(key, now=None):
    url = "https://example.com/catalog/item?id=42"
    extra = mannerly.sign_request("GET", url, {"User-Agent": "ExampleBot/1.0"}, key, "https://crawler.example",
                                  components=["@method", "@path"], now=now)
    return url, [("User-Agent", "ExampleBot/1.0")] + extra


def test_sign_then_verify():
    key = mannerly.generate_key()
    jwk = json.loads(mannerly.public_jwk(key))
    url, headers = signed(key)
    names = [n for n, _ in headers]
    assert {"Signature-Agent", "Signature-Input", "Signature"} <= set(names)
    r = mannerly.verify_request("GET", url, headers, [jwk])
    assert r["result"] == "verified", r
    assert r["agent"] == "https://crawler.example"
    assert r["thumbprint"] == r["keyid"]
    # The same with a JWKS document and its JSON text.
    assert mannerly.verify_request("GET", url, headers, {"keys": [jwk]})["result"] == "verified"
    assert mannerly.verify_request("GET", url, headers, json.dumps({"keys": [jwk]}))["result"] == "verified"


def test_refusals_say_why():
    key = mannerly.generate_key()
    other = json.loads(mannerly.public_jwk(mannerly.generate_key()))
    url, headers = signed(key)
    r = mannerly.verify_request("GET", url, headers, [other])
    assert r["result"] == "invalid" and "key" in r["reason"], r
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
