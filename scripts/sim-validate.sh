#!/usr/bin/env bash
# The simulator against real runs: for each scene and thread count, records the frame with its
# cost model fitted on that many busy threads (`raylb record --timing-threads N`), renders it
# for real with every CPU balancer on N threads, the balancers alternating round after round,
# records it again, and compares each balancer's simulated time (mean of the two recordings'
# models) with the median of its real times (the balancer's wall time from --stats).
#
#   scripts/sim-validate.sh [--scenes cornell,treasure] [--threads 1,2] [--rounds 5] [--out DIR]
#
# Prints one table: scene, threads, balancer, real median and quartiles, simulated, ratio, and
# the ranks of the two. DIR (default sim-validate/) keeps the recordings and stats files.
set -euo pipefail
cd "$(dirname "$0")/.."

scenes=cornell,treasure
threads=1,2
rounds=5
out=sim-validate
while [ $# -gt 0 ]; do
    case "$1" in
        --scenes) scenes="$2"; shift 2 ;;
        --threads) threads="$2"; shift 2 ;;
        --rounds) rounds="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
raylb=${RAYLB:-target/release/raylb}
[ -n "${RAYLB:-}" ] || cargo build --release --quiet
balancers=(static counter stealing rayon)
mkdir -p "$out"
for scene in ${scenes//,/ }; do
    for t in ${threads//,/ }; do
        dir="$out/$scene-$t"
        mkdir -p "$dir"
        "$raylb" record "scenes/$scene.toml" --threads "$t" --timing-threads "$t" \
            -o "$dir/before.tasks" --quiet
        for round in $(seq "$rounds"); do
            for b in "${balancers[@]}"; do
                "$raylb" render "scenes/$scene.toml" --balancer "$b" --threads "$t" \
                    -o "$dir/frame.png" --stats "$dir/$b-$round.json" --quiet
            done
        done
        "$raylb" record "scenes/$scene.toml" --threads "$t" --timing-threads "$t" \
            -o "$dir/after.tasks" --quiet
        for when in before after; do
            "$raylb" sim "$dir/$when.tasks" --workers "$t" \
                --balancers "$(IFS=,; echo "${balancers[*]}")" --out "$dir/sim-$when" --quiet
        done
    done
done
python3 - "$out" "$scenes" "$threads" "$rounds" "${balancers[@]}" <<'PY'
import csv, json, statistics, sys
out, scenes, threads, rounds, balancers = sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(","), int(sys.argv[4]), sys.argv[5:]

def quartiles(xs):
    xs = sorted(xs)
    q = statistics.quantiles(xs, n=4, method="inclusive") if len(xs) > 1 else [xs[0]] * 3
    return q[1], q[0], q[2]

print(f"{'scene':<10}{'threads':>8}  {'balancer':<26}{'real ms (quartiles)':>26}{'sim ms':>10}{'sim/real':>10}{'rank real':>10}{'rank sim':>9}")
within = total = pairs = ordered = 0
for scene in scenes:
    for t in threads:
        d = f"{out}/{scene}-{t}"
        sims = {}
        for when in ("before", "after"):
            with open(f"{d}/sim-{when}/sim.csv") as f:
                for row in csv.DictReader(f):
                    sims.setdefault(row["balancer"], []).append(float(row["makespan_seconds"]) * 1e3)
        rows = []
        for b in balancers:
            real = [json.load(open(f"{d}/{b}-{r}.json"))["render"]["wall_seconds"] * 1e3 for r in range(1, rounds + 1)]
            name = json.load(open(f"{d}/{b}-1.json"))["render"]["balancer"]
            sim = statistics.mean(sims[name])
            rows.append((b, name, quartiles(real), sim))
        real_rank = {b: i + 1 for i, (b, *_ ) in enumerate(sorted(rows, key=lambda r: r[2][0]))}
        sim_rank = {b: i + 1 for i, (b, *_ ) in enumerate(sorted(rows, key=lambda r: r[3]))}
        for b, name, (med, lo, hi), sim in rows:
            ratio = sim / med
            total += 1
            within += abs(ratio - 1) <= 0.10
            print(f"{scene:<10}{t:>8}  {name:<26}{med:>10.1f} ({lo:>6.1f}–{hi:>6.1f}){sim:>10.1f}{ratio:>10.3f}{real_rank[b]:>10}{sim_rank[b]:>9}")
        # Pairs whose real quartile ranges do not overlap: the simulator must order them alike.
        for i, (_, a, (_, alo, ahi), asim) in enumerate(rows):
            for _, b, (_, blo, bhi), bsim in rows[i + 1:]:
                if ahi < blo or bhi < alo:
                    pairs += 1
                    same = (ahi < blo) == (asim < bsim)
                    ordered += same
                    if not same:
                        print(f"  ranked otherwise: {a} and {b}")
print(f"{within} of {total} simulated times within 10% of the real median; "
      f"{ordered} of {pairs} clearly ordered pairs in the same order")
PY
