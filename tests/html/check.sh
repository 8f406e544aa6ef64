#!/bin/sh
# tests/html/check.sh PAGE.html COUNT SHOT.png [LANES] - loads an HTML timeline
# (ppcc plan -f html) in headless Chromium from a file URL, the network
# shut (a proxy on the discard port, every host name unresolvable, and
# the page's own Content-Security-Policy), lets its script run
# (--virtual-time-budget), then reads back from the DOM the number of
# actions the script drew (#ppcc-drawn, 0 until the script runs) and of
# the collectives beside them that the schedule does not hold
# (#ppcc-lanes), and takes a screenshot to SHOT.png, in one launch.
# Exit 0: the page drew COUNT actions (and LANES such collectives, when
# given), said it holds COUNT, and its script threw nothing; 1: it did
# not (the reason on stderr); 77: no Chromium here (Debian's chromium;
# make deps installs it).  As root
# Chromium runs without its sandbox, which it refuses to use as root.
# CHROMIUM names the browser (default: chromium, else chromium-browser).
set -u
page=$1 count=$2 shot=$3 lanes=${4:-}
browser=${CHROMIUM:-}
if [ -z "$browser" ]; then
	browser=$(command -v chromium || command -v chromium-browser || true)
fi
if [ -z "$browser" ] || ! command -v "$browser" >/dev/null; then
	echo "html page test: SKIPPED: ${browser:-chromium} is not installed (make deps installs chromium)" >&2
	exit 77
fi
case $page in /*) ;; *) page=$PWD/$page ;; esac
profile=$(mktemp -d) || exit 1
trap 'rm -rf "$profile"' EXIT
sandbox=
[ "$(id -u)" = 0 ] && sandbox=--no-sandbox
# shellcheck disable=SC2086
timeout 120 "$browser" --headless $sandbox --disable-gpu --hide-scrollbars \
	--user-data-dir="$profile" --no-first-run --no-default-browser-check \
	--disable-background-networking --disable-component-update \
	--disable-sync --disable-default-apps --disable-extensions \
	--proxy-server=127.0.0.1:9 --host-resolver-rules='MAP * ~NOTFOUND' \
	--enable-logging=stderr --v=0 --virtual-time-budget=10000 \
	--window-size=1200,600 --screenshot="$shot" --dump-dom \
	"file://$page" >"$profile/dom" 2>"$profile/log"
status=$?
drawn=$(sed -n 's/.*<output id="ppcc-drawn">\([0-9]*\)<.*/\1/p' "$profile/dom")
held=$(sed -n 's/.*<output id="ppcc-actions">\([0-9]*\)<.*/\1/p' "$profile/dom")
extra=$(sed -n 's/.*<output id="ppcc-lanes">\([0-9]*\)<.*/\1/p' "$profile/dom")
fail=
[ $status = 0 ] || fail="chromium exited with $status"
[ -s "$shot" ] || fail="${fail:+$fail; }no screenshot"
[ "$drawn" = "$count" ] || fail="${fail:+$fail; }drew ${drawn:-nothing} actions, not $count"
[ "$held" = "$count" ] || fail="${fail:+$fail; }holds ${held:-no} actions, not $count"
[ -z "$lanes" ] || [ "$extra" = "$lanes" ] ||
	fail="${fail:+$fail; }drew ${extra:-no} collectives beside the schedule's, not $lanes"
if grep -q 'Uncaught' "$profile/log"; then
	fail="${fail:+$fail; }its script threw: $(grep 'Uncaught' "$profile/log" | head -3)"
fi
if [ -n "$fail" ]; then
	echo "html page test: $page: $fail" >&2
	tail -5 "$profile/log" >&2
	exit 1
fi
echo "html page test: drew $drawn of $count actions and $extra collectives beside them; screenshot $shot"
