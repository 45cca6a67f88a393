#!/usr/bin/env bash
# Makes sure the browser tests (package web) find Debian's chromium at
# /usr/bin/chromium. When it is missing and we run as root on Debian or
# Ubuntu, the distribution's package is installed; otherwise this says what
# to install. Under CI=true the browser tests fail, never skip, without it.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  echo "chromium: $(/usr/bin/chromium --version 2>/dev/null || echo present)"
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "chromium: installing the distribution's chromium package"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium >/dev/null
  echo "chromium: $(/usr/bin/chromium --version 2>/dev/null || echo installed)"
  exit 0
fi
echo "chromium: /usr/bin/chromium is missing; install Debian's chromium package (as root: apt-get install chromium)" >&2
if [ "${CI:-}" = true ]; then exit 1; fi
