#!/usr/bin/env bash
# What the viewer's progressive display costs the render: the same frame rendered by
# `raylb render` and by `raylb view --frames 1` (which draws the finished pixels into the
# window four times a second), alternating, and the frame times compared.
#
#   [LAYER=image|work-map|workers] scripts/viewer-overhead.sh [SCENE] [ROUNDS] [OPTIONS...]
#
# OPTIONS go to both commands, so they must be ones both accept (--balancer, --threads,
# --tile, --width, --height, ...). With LAYER=work-map the view shows the work map and the
# render writes one (--workmap), so both count rays per pixel.
#
# Besides the two frame times (noisy on a busy machine), each round reports the CPU time the
# display took: the viewer's own drawing (the "display" share it prints per frame) and, when
# the script started the X server itself, the X server's CPU time during the view.
#
# Needs an X display; without DISPLAY it starts Xvfb for the run. RAYLB names the binary
# (default target/release/raylb).
set -euo pipefail
export LC_ALL=C
scene=${1:-scenes/treasure.toml}
rounds=${2:-5}
shift $(( $# > 2 ? 2 : $# ))
extra=("$@")
layer=${LAYER:-image}
raylb=${RAYLB:-target/release/raylb}
work=$(mktemp -d)
trap 'rm -rf "$work"; [ -n "${xvfb:-}" ] && kill "$xvfb" 2>/dev/null || true' EXIT
if [ -z "${DISPLAY:-}" ]; then
    command -v Xvfb >/dev/null || { echo "no DISPLAY and no Xvfb to start" >&2; exit 2; }
    Xvfb -displayfd 3 -screen 0 1280x1024x24 -nolisten tcp 3>"$work/display" 2>/dev/null &
    xvfb=$!
    for _ in $(seq 50); do [ -s "$work/display" ] && break; sleep 0.1; done
    [ -s "$work/display" ] || { echo "Xvfb did not report a display" >&2; exit 2; }
    export DISPLAY=":$(cat "$work/display")"
fi
render_extra=() view_extra=(--layer "$layer")
[ "$layer" = work-map ] && render_extra=(--workmap "$work/w.png")
cpu_ticks() { if [ -n "${xvfb:-}" ]; then awk '{ print $14 + $15 }' "/proc/$xvfb/stat"; else echo 0; fi; }
hz=$(getconf CLK_TCK)
render=() view=()
for round in $(seq "$rounds"); do
    r=$("$raylb" render "$scene" -o "$work/r.png" --json "${render_extra[@]}" ${extra[@]+"${extra[@]}"} |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["render"]["wall_seconds"])')
    before=$(cpu_ticks)
    line=$("$raylb" view "$scene" --frames 1 --screenshot "$work/v.png" "${view_extra[@]}" \
        ${extra[@]+"${extra[@]}"} | grep '^frame' || true)
    [ -n "$line" ] || { echo "round $round: no frame line from raylb view" >&2; exit 1; }
    x_cpu=$(( $(cpu_ticks) - before ))
    v=$(awk '{ for (i = 1; i <= NF; i++) if ($i == "s") { print $(i-1); exit } }' <<<"$line")
    drawing=$(awk '{ for (i = 1; i <= NF; i++) if ($i == "display") { print $(i+1); exit } }' <<<"$line")
    if [ "$layer" = image ] && ! cmp -s "$work/r.png" "$work/v.png"; then
        echo "round $round: the images differ" >&2
        exit 1
    fi
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
