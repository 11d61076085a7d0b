#!/usr/bin/env bash
# raylb's traversal beside Embree 3's, on the camera rays of `raylb render --mesh MESH`:
# single-threaded, 1024x1024, the two alternating run by run, best of each; prints a table of
# Mrays/s and hit counts per mesh, and raylb's speed over Embree's.
#
#   scripts/embree-compare.sh [--accel wide|octree] [--rounds N] [MESH.obj ...]
#
# Meshes default to ../shared/assets/*.obj. Builds scripts/embree/trace.c (our own harness)
# against Debian's libembree-dev, installing it when missing, and raylb with cargo.
set -euo pipefail
cd "$(dirname "$0")/.."

accel=wide
rounds=3
meshes=()
while [ $# -gt 0 ]; do
    case "$1" in
        --accel) accel="$2"; shift 2 ;;
        --rounds) rounds="$2"; shift 2 ;;
        *) meshes+=("$1"); shift ;;
    esac
done
case "$accel" in wide|octree) ;; *) echo "--accel: wide or octree, not $accel" >&2; exit 2 ;; esac
case "$rounds" in ''|*[!0-9]*|0) echo "--rounds: a whole number from 1, not $rounds" >&2; exit 2 ;; esac
if [ ${#meshes[@]} -eq 0 ]; then
    meshes=(../shared/assets/*.obj)
    [ -e "${meshes[0]}" ] || { echo "no meshes given and none in ../shared/assets" >&2; exit 2; }
fi

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
if [ ! -e /usr/include/embree3/rtcore.h ]; then
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq libembree-dev
fi
mkdir -p target
# No floating contraction: the camera rays are computed with raylb's operations.
cc -O2 -Wall -ffp-contract=off -o target/embree-trace scripts/embree/trace.c -lembree3 -lm
cargo build --release --quiet
raylb=target/release/raylb

# The best Mrays/s and the hit count of one command's `hits` and `time` lines.
field() { awk -v key="$1" '$1 == key { print }'; }
best() { sort -g | tail -1; }

errors=$(mktemp)
trap 'rm -f "$errors"' EXIT
printf '%-24s %12s %10s %12s %10s %8s\n' mesh "embree Mr/s" hits "raylb Mr/s" hits ratio
for mesh in "${meshes[@]}"; do
    embree_speeds=()
    raylb_speeds=()
    for _ in $(seq "$rounds"); do
        # Each run's output is kept; a failure prints what the program said and stops.
        out=$(target/embree-trace "$mesh" 1024 1024 5 2>&1) || { echo "$out" >&2; exit 1; }
        embree_hits=$(field hits <<<"$out" | awk '{print $2}')
        embree_speeds+=("$(field time <<<"$out" | awk '{print $(NF-1)}')")
        out=$("$raylb" bench trace --mesh "$mesh" --accel "$accel" --threads 1 --repeat 5 \
              2>"$errors") || { cat "$errors" >&2; exit 1; }
        raylb_hits=$(field hits <<<"$out" | awk '{print $2}')
        raylb_speeds+=("$(field time <<<"$out" | awk '{print $(NF-1)}')")
    done
    e=$(printf '%s\n' "${embree_speeds[@]}" | best)
    r=$(printf '%s\n' "${raylb_speeds[@]}" | best)
    printf '%-24s %12s %10s %12s %10s %8.2f\n' "$(basename "$mesh")" "$e" "$embree_hits" "$r" "$raylb_hits" \
        "$(awk -v r="$r" -v e="$e" 'BEGIN { print r / e }')"
done
