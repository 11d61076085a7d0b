#!/usr/bin/env bash
# What the viewer's progressive display costs the render: the same frame rendered by
# `raylb render` and by `raylb view --frames 1` (which draws the finished pixels into the
# window four times a second), alternating, and the frame times compared.
#
#   scripts/viewer-overhead.sh [SCENE] [ROUNDS] [raylb render options...]
#
# Besides the two frame times (noisy on a busy machine), each round reports the CPU time the
# display took: the viewer's own drawing (the "display" share it prints per frame) and, when
# the script started the X server itself, the X server's CPU time during the view.
#
# Needs an X display; without DISPLAY it starts Xvfb for the run. RAYLB names the binary
# (default target/release/raylb).
set -euo pipefail
scene=${1:-scenes/treasure.toml}
rounds=${2:-5}
shift $(( $# > 2 ? 2 : $# ))
extra=("$@")
raylb=${RAYLB:-target/release/raylb}
work=$(mktemp -d)
trap 'rm -rf "$work"; [ -n "${xvfb:-}" ] && kill "$xvfb" 2>/dev/null || true' EXIT
if [ -z "${DISPLAY:-}" ]; then
    Xvfb -displayfd 3 -screen 0 1280x1024x24 -nolisten tcp 3>"$work/display" 2>/dev/null &
    xvfb=$!
    for _ in $(seq 50); do [ -s "$work/display" ] && break; sleep 0.1; done
    export DISPLAY=":$(cat "$work/display")"
fi
cpu_ticks() { [ -n "${xvfb:-}" ] && awk '{ print $14 + $15 }' "/proc/$xvfb/stat" || echo 0; }
hz=$(getconf CLK_TCK)
render=() view=()
for round in $(seq "$rounds"); do
    r=$("$raylb" render "$scene" -o "$work/r.png" --json "${extra[@]}" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["render"]["wall_seconds"])')
    before=$(cpu_ticks)
    line=$("$raylb" view "$scene" --frames 1 --screenshot "$work/v.png" "${extra[@]}" | grep '^frame')
    x_cpu=$(( $(cpu_ticks) - before ))
    v=$(awk '{ for (i = 1; i <= NF; i++) if ($i == "s") { print $(i-1); exit } }' <<<"$line")
    drawing=$(awk '{ for (i = 1; i <= NF; i++) if ($i == "display") { print $(i+1); exit } }' <<<"$line")
    cmp -s "$work/r.png" "$work/v.png" || { echo "round $round: the images differ" >&2; exit 1; }
    printf 'round %d: render %.3f s  view %.3f s  (viewer drawing %s of the frame, X server %.2f s CPU)\n' \
        "$round" "$r" "$v" "$drawing" "$(awk -v t="$x_cpu" -v hz="$hz" 'BEGIN { print t / hz }')"
    render+=("$r") view+=("$v")
done
python3 - "${render[*]}" "${view[*]}" <<'PY'
import statistics, sys
r = [float(x) for x in sys.argv[1].split()]
v = [float(x) for x in sys.argv[2].split()]
for name, f in (("best", min), ("median", statistics.median)):
    print(f"{name:>6}: render {f(r):.3f} s, view {f(v):.3f} s: the view is {100 * (f(v) / f(r) - 1):+.1f}%")
PY
