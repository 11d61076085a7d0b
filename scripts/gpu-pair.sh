#!/usr/bin/env bash
# Builds or kernel settings of raylb side by side on one GPU, paired by round: each round runs
# `raylb validate --gpu` once per configuration (the order reversed every other round), so
# that a ratio is taken between renders minutes apart at most, on the same card. Every render
# is byte-compared with the CPU's, as validate does. Prints, for each structure, GPU balancer
# and tile, each configuration's median kernel Mrays/s and its speed over the first
# configuration's, paired by round: median (lowest–highest).
#
#   scripts/gpu-pair.sh LABEL=BINARY[@VAR=VALUE…] LABEL=BINARY[@VAR=VALUE…] …
#   scripts/gpu-pair.sh before=old/raylb after=target/release/raylb \
#       blocks6=target/release/raylb@RAYLB_MIN_BLOCKS=6
#
# The environment after `@` (words separated by `@`) is set for that configuration alone.
# SCENE (default scenes/treasure.toml), SIZE (2048: width and height), TILES (4,8), ACCELS
# (octree,wide), GPU_BALANCERS (stealing,cuda-managed), ROUNDS (3), OUT (gpu-pair-out),
# STEP_TIMEOUT (300 s a render command); VALIDATE_ARGS, more options for every validate
# (`--gpu-emulator` tries the script on a machine without a GPU).
set -uo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ]; then
    sed -n '2,19p' "$0" | sed -e 's/^# \{0,1\}//' >&2
    exit 2
fi
SCENE=${SCENE:-scenes/treasure.toml}
SIZE=${SIZE:-2048}
TILES=${TILES:-4,8}
ACCELS=${ACCELS:-octree,wide}
GPU_BALANCERS=${GPU_BALANCERS:-stealing,cuda-managed}
ROUNDS=${ROUNDS:-3}
OUT=${OUT:-gpu-pair-out}
STEP_TIMEOUT=${STEP_TIMEOUT:-300}
mkdir -p "$OUT"
labels=()
for config in "$@"; do
    label=${config%%=*}
    rest=${config#*=}
    binary=${rest%%@*}
    if [ -z "$label" ] || [ "$label" = "$config" ] || [ ! -x "$binary" ]; then
        echo "gpu-pair: \`$config\` is not LABEL=BINARY[@VAR=VALUE…] with an executable BINARY" >&2
        exit 2
    fi
    labels+=("$label")
done

status=0
for ((round = 1; round <= ROUNDS; round++)); do
    order=("$@")
    if ((round % 2 == 0)); then
        for ((i = 0, j = $# - 1; i < j; i++, j--)); do
            t=${order[i]}; order[i]=${order[j]}; order[j]=$t
        done
    fi
    for config in "${order[@]}"; do
        label=${config%%=*}
        rest=${config#*=}
        binary=${rest%%@*}
        settings=()
        [[ "$rest" == *@* ]] && IFS='@' read -r -a settings <<< "${rest#*@}"
        echo "== round $round: $label ${settings[*]:-}"
        timeout --kill-after=10 "$STEP_TIMEOUT" env "${settings[@]}" "$binary" validate "$SCENE" \
            --width "$SIZE" --height "$SIZE" --balancers static --threads "$(nproc)" \
            --tiles "$TILES" --accels "$ACCELS" --gpu --gpu-balancers "$GPU_BALANCERS" --json ${VALIDATE_ARGS:-} \
            > "$OUT/$label-$round.json"
        rc=$?
        if [ "$rc" -ne 0 ]; then
            echo "   failed (exit $rc): see $OUT/$label-$round.json" >&2
            status=1
        fi
    done
done

python3 - "$OUT" "$ROUNDS" "${labels[@]}" <<'PY' || status=1
import json, statistics, sys
out, rounds, labels = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
speeds = {}   # (label, run) -> {round: Mrays/s}
differing = 0
for label in labels:
    for r in range(1, rounds + 1):
        try:
            report = json.load(open(f"{out}/{label}-{r}.json"))
        except (OSError, ValueError):
            continue
        differing += report["differing"]
        for run in report["runs"]:
            if run["simt_efficiency"] is None:
                continue  # the CPU's reference
            speeds.setdefault((label, run["run"]), {})[r] = run["mrays_per_second"]
runs = sorted({run for (_, run) in speeds})
base = labels[0]
print(f"\n{'structure, balancer, tile':<40}" + "".join(f"{l:>12}" for l in labels)
      + "".join(f"{l + '/' + base:>26}" for l in labels[1:]))
for run in runs:
    line = f"{run:<40}"
    for label in labels:
        got = speeds.get((label, run), {})
        line += f"{statistics.median(got.values()):>12.1f}" if got else f"{'-':>12}"
    for label in labels[1:]:
        a, b = speeds.get((base, run), {}), speeds.get((label, run), {})
        ratios = sorted(b[r] / a[r] for r in a if r in b and a[r] > 0)
        line += (f"{statistics.median(ratios):>10.3f} ({ratios[0]:.3f}–{ratios[-1]:.3f})"
                 if ratios else f"{'-':>26}")
    print(line)
print(f"\nrenders differing from the CPU's: {differing}")
sys.exit(1 if differing else 0)
PY
exit $status
