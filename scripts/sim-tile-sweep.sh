#!/usr/bin/env bash
# The thesis's tile sweep on simulated workers: records SCENE once per tile edge, then replays
# every recording under static, counter and stealing at each worker count, all on the cost
# model of the 32-pixel recording (so that the recordings differ only in their trees), and
# prints time per pixel (the simulated makespan over the image's pixels) in microseconds.
#
#   scripts/sim-tile-sweep.sh [SCENE] [--workers 2,16,64,256,1024] [--tiles 8,16,...,512] [--out DIR]
#
# Defaults: scenes/treasure.toml at its own size; DIR (default sim-sweep/) keeps the
# recordings and one sim.csv per tile edge.
set -euo pipefail
cd "$(dirname "$0")/.."

scene=scenes/treasure.toml
workers=2,16,64,256,1024
tiles=8,16,32,64,128,256,512
out=sim-sweep
while [ $# -gt 0 ]; do
    case "$1" in
        --workers) workers="$2"; shift 2 ;;
        --tiles) tiles="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        -*) echo "unknown option $1" >&2; exit 2 ;;
        *) scene="$1"; shift ;;
    esac
done
case ",$tiles," in *,32,*) ;; *) echo "--tiles must include 32, whose recording gives the cost model" >&2; exit 2 ;; esac
cargo build --release --quiet
raylb=target/release/raylb
mkdir -p "$out"
for tile in ${tiles//,/ }; do
    "$raylb" record "$scene" --tile "$tile" -o "$out/tile-$tile.tasks" --quiet
done
for tile in ${tiles//,/ }; do
    "$raylb" sim "$out/tile-$tile.tasks" --model-from "$out/tile-32.tasks" --workers "$workers" \
        --out "$out/tile-$tile" --quiet
done
# One table: rows balancer and workers, columns tile edges, µs per pixel.
pixels=$("$raylb" sim "$out/tile-32.tasks" --workers 1 --balancers static | awk '/^tasks/ { match($0, /[0-9]+×[0-9]+/); split(substr($0, RSTART, RLENGTH), d, "×"); print d[1] * d[2] }')
python3 - "$out" "$tiles" "$pixels" <<'PY'
import csv, sys
out, tiles, pixels = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3])
table = {}
for t in tiles:
    with open(f"{out}/tile-{t}/sim.csv") as f:
        for row in csv.DictReader(f):
            key = (row["balancer"], int(row["workers"]))
            table.setdefault(key, {})[t] = float(row["makespan_seconds"]) / pixels * 1e6
print("balancer".ljust(26) + "workers" + "".join(f"{t:>9}" for t in tiles))
for (b, w), cells in sorted(table.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    print(b.ljust(26) + f"{w:>7}" + "".join(f"{cells[t]:>9.4f}" for t in tiles))
PY
