#!/usr/bin/env bash
# raylb's traversal beside Embree 3's, one thread, the two alternating run by run, best of each;
# prints a table of Mrays/s and hit counts, and raylb's speed over Embree's:
#   - camera rays of `raylb render --mesh MESH` at 1024x1024, on every mesh: one at a time,
#     and in packets (Embree's rtcIntersect8 over 4x2 pixels and rtcIntersect16 over 4x4,
#     raylb's packets of 4x4 where its traversal runs on AVX-512, else of 4x2);
#   - the build of every mesh, in Mtriangles/s (Embree's rtcCommitScene on a one-thread
#     device, beside raylb's on one thread), and raylb's on two threads over one, the two
#     alternating build by build (`raylb bench build --threads 2 --against 1`);
#   - with --files: the same rays from files, both tracers reading one RAYLBRAY file of each kind
#     through one geometry (the mesh as `raylb export` writes it), on --threads N threads
#     (default 1; blocks of 4096 rays dealt out in turn, by both):
#       * 1M random surface-to-surface rays of every mesh, closest hit and occlusion;
#       * the rays of a treasure frame by kind (`raylb bench trace --rays KIND --dump`), at
#         --size (default 512).
#
#   - with --embree-robust: Embree in its robust mode (RTC_SCENE_FLAG_ROBUST: watertight
#     triangle tests and conservative box tests, the guarantees raylb's traversal always gives),
#     not its default one.
#
#   scripts/embree-compare.sh [--accel wide|octree] [--rounds N] [--files] [--embree-robust]
#                             [--threads N] [--size N] [MESH.obj ...]
#
# Meshes default to ../shared/assets/*.obj. Builds scripts/embree/trace.c (our own harness)
# against Debian's libembree-dev, installing it when missing, and raylb with cargo.
set -euo pipefail
cd "$(dirname "$0")/.."

accel=wide
rounds=3
files=0
size=512
threads=1
meshes=()
while [ $# -gt 0 ]; do
    case "$1" in
        --accel) accel="$2"; shift 2 ;;
        --rounds) rounds="$2"; shift 2 ;;
        --files) files=1; shift ;;
        --embree-robust) export EMBREE_ROBUST=1; shift ;;
        --size) size="$2"; shift 2 ;;
        --threads) threads="$2"; shift 2 ;;
        *) meshes+=("$1"); shift ;;
    esac
done
case "$accel" in wide|octree) ;; *) echo "--accel: wide or octree, not $accel" >&2; exit 2 ;; esac
case "$rounds" in ''|*[!0-9]*|0) echo "--rounds: a whole number from 1, not $rounds" >&2; exit 2 ;; esac
case "$size" in ''|*[!0-9]*|0) echo "--size: a whole number from 1, not $size" >&2; exit 2 ;; esac
case "$threads" in ''|*[!0-9]*|0) echo "--threads: a whole number from 1, not $threads" >&2; exit 2 ;; esac
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
cc -O2 -Wall -ffp-contract=off -pthread -o target/embree-trace scripts/embree/trace.c -lembree3 -lm
cargo build --release --quiet
raylb=target/release/raylb
work=$(mktemp -d)
errors="$work/errors"
trap 'rm -rf "$work"' EXIT

# The best Mrays/s and the hit count of one command's `hits` and `time` lines.
field() { awk -v key="$1" '$1 == key { print }'; }
best() { sort -g | tail -1; }

# pair LABEL -- EMBREE COMMAND... -- RAYLB COMMAND...: both `rounds` times, alternating.
pair() {
    local label=$1
    shift 2
    local embree=() raylb_cmd=()
    while [ "$1" != -- ]; do embree+=("$1"); shift; done
    shift
    raylb_cmd=("$@")
    local embree_speeds=() raylb_speeds=() out embree_hits raylb_hits
    for _ in $(seq "$rounds"); do
        # Each run's output is kept; a failure prints what the program said and stops.
        out=$("${embree[@]}" 2>&1) || { echo "$out" >&2; exit 1; }
        embree_hits=$(field hits <<<"$out" | awk '{print $2}')
        embree_speeds+=("$(field time <<<"$out" | awk '{print $(NF-1)}')")
        out=$("${raylb_cmd[@]}" 2>"$errors") || { cat "$errors" >&2; exit 1; }
        raylb_hits=$(field hits <<<"$out" | awk '{print $2}')
        raylb_speeds+=("$(field time <<<"$out" | awk '{print $(NF-1)}')")
    done
    local e r
    e=$(printf '%s\n' "${embree_speeds[@]}" | best)
    r=$(printf '%s\n' "${raylb_speeds[@]}" | best)
    printf '%-32s %12s %10s %12s %10s %8.2f\n' "$label" "$e" "$embree_hits" "$r" "$raylb_hits" \
        "$(awk -v r="$r" -v e="$e" 'BEGIN { print r / e }')"
}

printf '%-32s %12s %10s %12s %10s %8s\n' rays "embree Mr/s" hits "raylb Mr/s" hits ratio
for mesh in "${meshes[@]}"; do
    pair "$(basename "$mesh") camera" -- target/embree-trace "$mesh" 1024 1024 5 -- \
        "$raylb" bench trace --mesh "$mesh" --accel "$accel" --threads 1 --repeat 5
    # Packets: Embree's 4x2 (rtcIntersect8) and 4x4 (rtcIntersect16) blocks against raylb's
    # blocks through its packet traversal (4x4 on AVX-512, else 4x2: its line says which).
    if [ "$accel" = wide ]; then
        for lanes in 8 16; do
            pair "$(basename "$mesh") camera, packets $lanes" -- \
                target/embree-trace "$mesh" 1024 1024 5 --packet "$lanes" -- \
                "$raylb" bench trace --mesh "$mesh" --threads 1 --repeat 5 --packets on
        done
    fi
done

# The build: one line of Mtriangles/s per mesh (Embree's one build a round against raylb's
# best of three), and raylb's scaling from one thread to two: `bench build --threads 2
# --against 1`, the two alternating build by build, 100 of each a round, the best against the
# best; the median of the rounds.
printf '\n%-32s %12s %12s %8s %8s\n' build "embree Mt/s" "raylb 1 thr" ratio "2 / 1"
for mesh in "${meshes[@]}"; do
    embree_builds=() raylb_one=() scalings=()
    for _ in $(seq "$rounds"); do
        out=$(target/embree-trace "$mesh" 16 16 1 2>&1) || { echo "$out" >&2; exit 1; }
        embree_builds+=("$(field build <<<"$out" | awk '{print $(NF-1)}')")
        out=$("$raylb" bench build --mesh "$mesh" --accel "$accel" --threads 1 --repeat 3 \
              2>"$errors") || { cat "$errors" >&2; exit 1; }
        raylb_one+=("$(field time <<<"$out" | awk '{print $(NF-1)}')")
        out=$("$raylb" bench build --mesh "$mesh" --accel "$accel" --threads 2 --against 1 \
              --repeat 100 2>"$errors") || { cat "$errors" >&2; exit 1; }
        scalings+=("$(field scaling <<<"$out" | awk '{sub(/x,$/, "", $6); print $6}')")
    done
    e=$(printf '%s\n' "${embree_builds[@]}" | best)
    r1=$(printf '%s\n' "${raylb_one[@]}" | best)
    scaling=$(printf '%s\n' "${scalings[@]}" | sort -g | awk '{a[NR] = $1} END { print a[int((NR + 1) / 2)] }')
    printf '%-32s %12s %12s %8.2f %8.2f\n' "$(basename "$mesh")" "$e" "$r1" \
        "$(awk -v r="$r1" -v e="$e" 'BEGIN { print r / e }')" "$scaling"
done
[ "$files" = 1 ] || exit 0
printf '\n%-32s %12s %10s %12s %10s %8s\n' "rays, $threads thread(s)" "embree Mr/s" hits "raylb Mr/s" hits ratio

for mesh in "${meshes[@]}"; do
    name=$(basename "$mesh" .obj)
    # The geometry both read: the mesh as raylb loads it, with its float bits.
    "$raylb" export --mesh "$mesh" -o "$work/$name.obj" -q
    for query in 0 1; do
        target/embree-trace "$work/$name.obj" --random 1000000 1 "$query" "$work/$name-$query.rays"
        kind=closest; [ "$query" = 1 ] && kind=occluded
        pair "$name random $kind" -- \
            target/embree-trace "$work/$name.obj" --rays "$work/$name-$query.rays" 3 \
            --threads "$threads" -- \
            "$raylb" bench trace --mesh "$work/$name.obj" --accel "$accel" --threads "$threads" \
            --repeat 3 --ray-file "$work/$name-$query.rays"
    done
done

"$raylb" export scenes/treasure.toml -o "$work/treasure.obj" -q
for kind in camera shadow reflection refraction; do
    "$raylb" bench trace scenes/treasure.toml --width "$size" --height "$size" --rays "$kind" \
        --dump "$work/treasure-$kind.rays" --repeat 1 -q
    pair "treasure $size² $kind" -- \
        target/embree-trace "$work/treasure.obj" --rays "$work/treasure-$kind.rays" 3 \
        --threads "$threads" -- \
        "$raylb" bench trace --mesh "$work/treasure.obj" --accel "$accel" --threads "$threads" \
        --repeat 3 --ray-file "$work/treasure-$kind.rays"
done
