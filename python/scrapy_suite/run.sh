#!/usr/bin/env bash
# Runs Scrapy's own robots.txt test modules on mannerly's parser: the
# source distribution of the Scrapy installed in the venv is downloaded
# (pip), this folder's test module is copied into its tests, and pytest
# runs it there with Scrapy's own configuration.
#
#   python/scrapy_suite/run.sh VENV
#
# VENV: a venv with Scrapy and the mannerly wheel installed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=${1:?usage: run.sh VENV}
py="$venv/bin/python"
version=$("$py" -c 'import scrapy; print(scrapy.__version__)')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$venv/bin/pip" install --quiet --disable-pip-version-check \
    'pytest-twisted>=1.14.3' pyftpdlib sybil pexpect psutil testfixtures
"$venv/bin/pip" download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
    "scrapy==$version" -d "$work"
tar xzf "$work"/scrapy-"$version".tar.gz -C "$work"
src="$work/scrapy-$version"
cp "$here/test_mannerly_parser.py" "$src/tests/"
# Scrapy's tests import the installed Scrapy; the tree's own `scrapy`
# package must not shadow it (it is the same version).
rm -rf "$src/scrapy"
cd "$src"
"$py" -m pytest -q -p no:cacheprovider tests/test_mannerly_parser.py
