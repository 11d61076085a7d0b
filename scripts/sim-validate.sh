#!/usr/bin/env bash
# The simulator against real runs: for each scene and thread count N, each round records the
# frame with its cost model fitted on N busy threads (`raylb record --timing-threads N`),
# simulates every CPU balancer on N workers with that model, and renders the frame for real
# with each of them on N threads (the order rotating from round to round). rayon's job cost,
# which depends on how many threads spawn at once, is measured first at each N (`raylb bench
# costs --threads N`, at 2 for N = 1) and given to the simulator. Each balancer's
# simulated time is set against its real time of the same round (the balancer's wall time from
# --stats), so that the machine's drift from minute to minute touches both alike.
#
#   scripts/sim-validate.sh [--scenes cornell,treasure] [--threads 1,2] [--rounds 5] [--out DIR]
#
# Prints one table: scene, threads, balancer, the real and simulated medians with quartiles,
# the median of the rounds' simulated/real ratios with quartiles, and the ranks of the two;
# then the pairs of balancers whose real quartile ranges do not overlap that the simulator
# orders otherwise. DIR (default sim-validate/) keeps the recordings and stats files.
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
# rayon's job cost at each thread count, in nanoseconds (bench costs needs two threads).
declare -A rayon_cost
for t in ${threads//,/ }; do
    n=$((t < 2 ? 2 : t))
    "$raylb" bench costs --threads "$n" --rounds 3 --out "$out/costs-$t" --quiet
    rayon_cost[$t]=$(python3 -c '
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["option"] == "--rayon-cost"]
print(rows[0]["median_ns"])' "$out/costs-$t/costs.csv")
done
for scene in ${scenes//,/ }; do
    for t in ${threads//,/ }; do
        dir="$out/$scene-$t"
        mkdir -p "$dir"
        for round in $(seq "$rounds"); do
            "$raylb" record "scenes/$scene.toml" --threads "$t" --timing-threads "$t" \
                -o "$dir/round-$round.tasks" --quiet
            "$raylb" sim "$dir/round-$round.tasks" --workers "$t" \
                --balancers "$(IFS=,; echo "${balancers[*]}")" --rayon-cost "${rayon_cost[$t]}" \
                --out "$dir/sim-$round" --quiet
            n=${#balancers[@]}
            for k in $(seq 0 $((n - 1))); do
                b=${balancers[$(((k + round) % n))]}
                "$raylb" render "scenes/$scene.toml" --balancer "$b" --threads "$t" \
                    -o "$dir/frame.png" --stats "$dir/$b-$round.json" --quiet
            done
        done
    done
done
python3 - "$out" "$scenes" "$threads" "$rounds" "${balancers[@]}" <<'PY'
import csv, json, statistics, sys
out, scenes, threads, rounds, balancers = sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(","), int(sys.argv[4]), sys.argv[5:]

def quartiles(xs):
    xs = sorted(xs)
    if len(xs) == 1:
        return xs[0], xs[0], xs[0]
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return q[1], q[0], q[2]

print(f"{'scene':<10}{'threads':>8}  {'balancer':<26}{'real ms (quartiles)':>26}{'sim ms':>9}"
      f"{'sim/real, paired':>24}{'rank real':>10}{'rank sim':>9}")
within = total = pairs = ordered = 0
for scene in scenes:
    for t in threads:
        d = f"{out}/{scene}-{t}"
        rows = []
        for b in balancers:
            real, sim, ratio = [], [], []
            for r in range(1, rounds + 1):
                stats = json.load(open(f"{d}/{b}-{r}.json"))["render"]
                name = stats["balancer"]
                with open(f"{d}/sim-{r}/sim.csv") as f:
                    s = next(float(row["makespan_seconds"]) * 1e3 for row in csv.DictReader(f) if row["balancer"] == name)
                real.append(stats["wall_seconds"] * 1e3)
                sim.append(s)
                ratio.append(s / real[-1])
            rows.append((b, name, quartiles(real), statistics.median(sim), quartiles(ratio)))
        real_rank = {b: i + 1 for i, (b, *_ ) in enumerate(sorted(rows, key=lambda r: r[2][0]))}
        sim_rank = {b: i + 1 for i, (b, *_ ) in enumerate(sorted(rows, key=lambda r: r[3]))}
        for b, name, (med, lo, hi), sim, (ratio, rlo, rhi) in rows:
            total += 1
            within += abs(ratio - 1) <= 0.10
            print(f"{scene:<10}{t:>8}  {name:<26}{med:>10.1f} ({lo:>6.1f}–{hi:>6.1f}){sim:>9.1f}"
                  f"{ratio:>10.3f} ({rlo:.3f}–{rhi:.3f}){real_rank[b]:>10}{sim_rank[b]:>9}")
        # Pairs whose real quartile ranges do not overlap: the simulator must order them alike.
        for i, (_, a, (_, alo, ahi), asim, _) in enumerate(rows):
            for _, b, (_, blo, bhi), bsim, _ in rows[i + 1:]:
                if ahi < blo or bhi < alo:
                    pairs += 1
                    same = (ahi < blo) == (asim < bsim)
                    ordered += same
                    if not same:
                        print(f"  ranked otherwise: {a} and {b}")
print(f"{within} of {total} median simulated/real ratios within 10%; "
      f"{ordered} of {pairs} clearly ordered pairs in the same order")
PY
