#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: the #[ignore]d GPU tests, then every scene rendered with
# every GPU balancer through both structures (the octree and the wide BVH), at one and at four
# samples per pixel, and byte-compared with the CPU's render, then the treasure targets at
# 2048×2048 in both structures. The CPU's reference is `rayon`, the CPU balancer of one
# variant: with `static` (two assignments, two orders) the CPU's 27 frames of treasure at
# 2048² took 84 of the fifth run's seconds, the GPU's 42 frames 3.3. Prints one table:
# scene, structure and balancer, Mrays/s, SIMT efficiency, steals, identical.
# Then the hybrid frame (--device hybrid): every scene byte-compared with the CPU's, and
# treasure and treasure-calm at 2048² with the CPU alone (32-pixel tiles), the GPU alone (4, its
# best) and both as each of HYBRID_RUNS (default tile 32, with the GPU's first batch its own
# pool and with --first-batch all; the GPU traces 4-pixel pieces of each; tile 4, slower in
# every run so far, is `HYBRID_RUNS="hybrid:32 hybrid:4 hybrid-all:32"`), alternating for
# HYBRID_ROUNDS rounds (default 3): medians, hybrid over the faster device alone paired by
# round, hybrid's speed over the sum of the two alone, the GPU's batches, and each device's
# share and idle time at the end of the frame. Last (SECTIONS=cores), on the machine's CPU cores alone: the simulator against real
# runs at 1, 2, 4, 8 and 16 threads (scripts/sim-validate.sh, SIM_ROUNDS rounds, default 3)
# and the scaling of static, counter, stealing and rayon on treasure.
#
# The gpu section also reports what the compiler gave each kernel (registers, local and shared
# memory, the occupancy that gives; with cuobjdump or ptxas, spills too) and, where Nsight Compute's ncu is
# found, profiles one persistent-kernel frame of treasure at 2048² (NCU=0 leaves it out).
#
# SECTIONS (default gpu,hybrid, sized for the budget below on an H100 or H200 with NCU=0)
# picks the parts; SECTIONS=cores runs the CPU's part, SECTIONS=gpu,hybrid,cores all three.
# The whole run keeps within BUDGET seconds (default 400: it can run twice in a session's 15
# minutes of device time, the machine's start included): every command is cut off at
# STEP_TIMEOUT seconds (default 300) or where the budget ends, whichever comes first, so that
# one livelocked kernel costs that step, counted as a failure, and not the whole session; a
# part that would begin with the budget spent is skipped, said, and counted as a failure, and
# the hybrid's speed rounds stop after the last whole round that fits. Last, a table of each
# part's seconds, to size the next run by.
#
#   scripts/gpu-check.sh                 # builds with cargo where there is one
#   RAYLB=path/to/raylb GPU_TESTS=path/to/gpu-test-binary scripts/gpu-check.sh
#                                        # prebuilt (a GPU machine without a Rust toolchain)
#
# The CUDA driver and NVRTC are found through the dynamic loader: put the CUDA toolkit's lib
# folder on LD_LIBRARY_PATH (PTX from an NVRTC newer than the driver does not load).
set -uo pipefail
cd "$(dirname "$0")/.."
# A command cut off at the budget's end gets this long to end after its SIGTERM before the
# SIGKILL; the budget's last seconds are left for it.
KILL_GRACE=5
# The settings are checked before anything is written.
for setting in BUDGET STEP_TIMEOUT HYBRID_ROUNDS; do
    value=${!setting:-1}
    if ! [[ $value =~ ^[1-9][0-9]{0,5}$ ]]; then
        echo "gpu-check.sh: $setting=$value: a whole number of at least 1 (and at most 999999)" >&2
        exit 2
    fi
done
if ((${BUDGET:-380} <= KILL_GRACE)); then
    echo "gpu-check.sh: BUDGET=$BUDGET: more than the $KILL_GRACE s a command cut off is given to end" >&2
    exit 2
fi
OUT=${GPU_CHECK_OUT:-gpu-check-out}
# One tile edge by default: the GPU tests already compare tiles of 1, 8, 33, 64 and 512 pixels,
# and a second edge here renders as many frames again (the fourth run's call was cut at 420 s).
TILES=${TILES:-8}
mkdir -p "$OUT"
# The compiled kernels are kept here, where cuobjdump and ptxas can read them.
export RAYLB_CACHE_DIR=${RAYLB_CACHE_DIR:-$OUT/kernel-cache}
status=0
SECTIONS=${SECTIONS:-gpu,hybrid}
section() { [[ ",$SECTIONS," == *",$1,"* ]]; }
STEP_TIMEOUT=${STEP_TIMEOUT:-300}
# 380 s: twice in the 15 minutes of device time a session may be lent, with two minutes for
# the machine's start and the transfers, and within the eight minutes a call is sized for.
BUDGET=${BUDGET:-380}
# Milliseconds on the wall clock (bash's SECONDS counts whole ticks of the clock, up to a
# second off).
now_ms() {
    local t=${EPOCHREALTIME/[.,]/}
    echo $((t / 1000))
}
# Milliseconds of the budget left for commands (its last KILL_GRACE seconds are the grace of a
# command cut off); 0 or less once it is spent.
left_ms() { echo $((deadline_ms - KILL_GRACE * 1000 - $(now_ms))); }
# Runs a command under STEP_TIMEOUT or what is left of the budget less KILL_GRACE, whichever is
# less (then SIGKILL KILL_GRACE seconds after the SIGTERM), and says on stderr when it was cut
# off; its exit status is the command's, or 124/137 if cut off (124 at once, without running
# it, once the budget is spent).
step() {
    local left_ms
    left_ms=$(left_ms)
    local limit_ms=$((STEP_TIMEOUT * 1000))
    [ "$left_ms" -lt "$limit_ms" ] && limit_ms=$left_ms
    if [ "$limit_ms" -le 0 ]; then
        echo "NOT RUN, the $BUDGET s budget is spent: $*" >&2
        return 124
    fi
    local limit
    limit=$(printf '%d.%03d' $((limit_ms / 1000)) $((limit_ms % 1000)))
    timeout --kill-after="$KILL_GRACE" "$limit" "$@"
    local rc=$?
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        echo "TIMED OUT after $limit s: $*" >&2
    fi
    return "$rc"
}
# Each part's seconds, in the order run, for the table at the end.
part_times=()
part_name=""
part_start_ms=0
# Ends the part under way (its time kept) and begins part "$1", unless the budget is spent:
# then the part is skipped (exit status 1) and the run counts as failed.
part() {
    if [ -n "$part_name" ]; then
        part_times+=("$(printf '%7d  %s' $((($(now_ms) - part_start_ms + 500) / 1000)) "$part_name")")
        part_name=""
    fi
    [ $# -eq 0 ] && return 0
    echo
    if [ "$(left_ms)" -le 0 ]; then
        echo "== $1: SKIPPED, the $BUDGET s budget is spent"
        part_times+=("$(printf '%7s  %s' skipped "$1")")
        status=1
        return 1
    fi
    echo "== $1"
    part_name=$1
    part_start_ms=$(now_ms)
}

if [ -z "${RAYLB:-}" ]; then
    cargo build --release --locked || exit 2
    RAYLB=target/release/raylb
fi
if section gpu && [ -z "${GPU_TESTS:-}" ] && command -v cargo >/dev/null; then
    cargo test --release --locked -p renderer --test gpu --no-run || status=1
fi
# The budget begins here: what cargo builds, where it builds, is outside it.
run_start_ms=$(now_ms)
deadline_ms=$((run_start_ms + BUDGET * 1000))

if section gpu; then
if part "the #[ignore]d GPU tests"; then
if [ -n "${GPU_TESTS:-}" ]; then
    # A carried test binary finds the scenes through the renderer's folder here.
    CARGO_MANIFEST_DIR="$PWD/renderer" step "$GPU_TESTS" --ignored --test-threads 1 \
        --nocapture || status=1
elif command -v cargo >/dev/null; then
    # Built above, before the budget began.
    step cargo test --release --locked -p renderer --test gpu -- --ignored --test-threads 1 \
        || status=1
else
    echo "skipped: no cargo and no GPU_TESTS binary"
fi
fi

if part "every scene, every GPU balancer, both structures"; then
for scene in scenes/*.toml; do
    name=$(basename "$scene" .toml)
    step "$RAYLB" validate "$scene" --balancers rayon --threads "$(nproc)" \
        --tiles "$TILES" --gpu --accels octree,wide \
        --gpu-balancers static,counter,stealing,cuda-managed | tee "$OUT/validate-$name.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
done
fi

if part "every scene at four samples per pixel"; then
for scene in scenes/*.toml; do
    name=$(basename "$scene" .toml)
    step "$RAYLB" validate "$scene" --spp 4 --balancers rayon --threads "$(nproc)" \
        --tiles 16 --gpu --accels octree,wide \
        --gpu-balancers static,counter,stealing,cuda-managed | tee "$OUT/validate-spp4-$name.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
done
fi

if part "treasure at 2048×2048"; then
step "$RAYLB" validate scenes/treasure.toml --width 2048 --height 2048 --balancers rayon \
    --threads "$(nproc)" --tiles 4,8,16 --gpu --accels octree,wide \
    --gpu-balancers static,counter,stealing,cuda-managed | tee "$OUT/validate-treasure-2048.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
part

echo
echo "scene                 structure and balancer    tile    Mrays/s    SIMT     steals  identical"
for f in "$OUT"/validate-*.txt; do
    name=$(basename "$f" .txt | sed -e 's/^validate-//')
    size=$(head -1 "$f" | awk '{print $2}' | tr -d ,)
    awk -v scene="$name $size" '
        / simt / {
            identical = ($NF == "identical" || $NF == "reference") ? "yes" : "NO";
            if ($0 ~ /DIFFERS/) identical = "NO";
            # STRUCTURE BALANCER tile=N SECONDS s MRAYS Mrays/s simt PCT steals N RESULT
            split($3, t, "=");
            printf "%-21s %-25s %5s %10s %7s %10s  %s\n", scene, $1 " " $2, t[2], $6, $9, $11, identical
        }' "$f"
done

if part "the kernels: registers, memory and occupancy"; then
for balancer in stealing cuda-managed; do
    step "$RAYLB" render scenes/treasure.toml --width 2048 --height 2048 --device gpu \
        --balancer "$balancer" --tile 8 -o "$OUT/kernel-$balancer.png" \
        --stats "$OUT/kernel-$balancer.json" 2>&1 | grep '^kernel' || status=1
done
# raylb loads the kernels' machine code (a CUBIN) where NVRTC can build it for the device, and
# their PTX otherwise; the cache holds whichever it used.
if command -v cuobjdump >/dev/null; then
    for cubin in "$RAYLB_CACHE_DIR"/kernels-*.cubin; do
        [ -e "$cubin" ] && cuobjdump --dump-resource-usage "$cubin" 2>&1 \
            | grep -E 'Function|REG|STACK|SHARED|LOCAL'
    done
fi
if command -v ptxas >/dev/null; then
    for ptx in "$RAYLB_CACHE_DIR"/kernels-*.ptx; do
        [ -e "$ptx" ] || continue
        cap=$(step nvidia-smi --query-gpu=compute_cap --format=csv,noheader | tr -d .)
        ptxas -arch="sm_$cap" -v "$ptx" -o /dev/null 2>&1 \
            | grep -E 'Compiling entry|registers|spill' | sed -e 's/^ptxas info *: //'
    done
fi
if [ "${NCU:-1}" != 0 ] && command -v ncu >/dev/null; then
    echo "== Nsight Compute: one stealing/half frame of treasure 2048², tile 4"
    STEP_TIMEOUT=100 step ncu --clock-control none -k rl_persistent --launch-count 1 \
        --section SpeedOfLight --section Occupancy --section LaunchStats \
        --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
        "$RAYLB" render scenes/treasure.toml --width 2048 --height 2048 --device gpu \
        --balancer stealing --tile 4 -o "$OUT/ncu.png" --quiet > "$OUT/ncu.txt" 2>&1
    echo "ncu exit $? (report in $OUT/ncu.txt)"
    grep -E 'Duration|Compute \(SM\) Throughput|Memory Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Stall|Issued Ipc|No Eligible|Warp Cycles Per Issued|L1/TEX Hit|L2 Hit' \
        "$OUT/ncu.txt" | head -40
fi
fi
fi

if section hybrid; then
if part "hybrid: every scene against the CPU's render"; then
for scene in scenes/*.toml; do
    name=$(basename "$scene" .toml)
    step "$RAYLB" validate "$scene" --balancers rayon --accels octree,wide \
        --threads "$(nproc)" --tiles 16,64 --hybrid | tee "$OUT/hybrid-validate-$name.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
done
fi

if part "hybrid speed at 2048²"; then
echo "   (CPU: stealing on every core at 32-pixel tiles; GPU: stealing, steal half, at its best"
echo "   tile, 4; hybrid as each of HYBRID_RUNS; order reversed every other round)"
HYBRID_ACCELS=${HYBRID_ACCELS:-octree wide}
# The hybrid's runs, MODE:TILE: `hybrid` with the GPU's first batch its own pool, `hybrid-all`
# with every waiting tile in it (--first-batch all).
HYBRID_RUNS=${HYBRID_RUNS:-hybrid:32 hybrid-all:32}
# One render of a round; its exit status is the render's (124 or 137 where the budget cut it).
hybrid_run() { # scene mode accel tile round
    local device=(--device "$2")
    [ "$2" = hybrid-all ] && device=(--device hybrid --first-batch all)
    step "$RAYLB" render "scenes/$1.toml" --width 2048 --height 2048 "${device[@]}" \
        --balancer stealing --accel "$3" --tile "$4" -o "$OUT/hybrid-$1-$2-$4.png" \
        --stats "$OUT/hybrid-$3-$1-$2-$4-$5.json" --quiet
}
# Files of an earlier run in the same folder are not read as this one's.
rm -f "$OUT"/hybrid-*.png "$OUT"/hybrid-*-[0-9]*.json
# A round begins only where the budget leaves time for one as long as the last, and only the
# rounds whose every render ran whole are analysed: a round cut by the budget, the first
# included, is said and left out.
rounds_done=0
round_ms=0
for round in $(seq "${HYBRID_ROUNDS:-3}"); do
    left_ms=$(left_ms)
    if [ "$round" -gt 1 ] && [ "$left_ms" -le "$round_ms" ]; then
        echo "hybrid rounds $round to ${HYBRID_ROUNDS:-3} SKIPPED: $((left_ms / 1000)) s of the budget left, a round took $((round_ms / 1000)) s"
        status=1
        break
    fi
    round_began_ms=$(now_ms)
    whole=1
    for accel in $HYBRID_ACCELS; do
    for scene in treasure treasure-calm; do
        runs="cpu:32 gpu:4 $HYBRID_RUNS"
        [ $((round % 2)) = 0 ] && runs=$(echo "$runs" | tr ' ' '\n' | tac | paste -sd' ')
        scene_whole=1
        for run in $runs; do
            hybrid_run "$scene" "${run%:*}" "$accel" "${run#*:}" "$round" \
                || { status=1; whole=0; scene_whole=0; }
        done
        [ "$scene_whole" = 1 ] || continue
        for run in gpu-4 $(for r in $HYBRID_RUNS; do echo "${r%:*}-${r#*:}"; done); do
            "$RAYLB" compare "$OUT/hybrid-$scene-cpu-32.png" "$OUT/hybrid-$scene-$run.png" \
                >/dev/null || { echo "$scene $run round $round: image DIFFERS"; status=1; }
        done
    done
    done
    if [ "$whole" = 0 ]; then
        echo "hybrid round $round cut short: left out of the figures"
        break
    fi
    round_ms=$(($(now_ms) - round_began_ms))
    rounds_done=$round
done
[ "$rounds_done" -gt 0 ] && python3 - "$OUT" "$rounds_done" "$HYBRID_RUNS" $HYBRID_ACCELS <<'PY' || status=1
import json, statistics, sys
out, rounds, modes, accels = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4:]
def walls(accel, scene, device, tile):
    runs = [json.load(open(f"{out}/hybrid-{accel}-{scene}-{device}-{tile}-{r}.json"))
            for r in range(1, rounds + 1)]
    return runs, [j["render"]["wall_seconds"] for j in runs]
for accel, scene in ((a, s) for a in accels for s in ("treasure", "treasure-calm")):
    _, cpu = walls(accel, scene, "cpu", 32)
    _, gpu = walls(accel, scene, "gpu", 4)
    for mode, tile in (m.split(":") for m in modes):
        runs, hybrid = walls(accel, scene, mode, tile)
        med = {d: statistics.median(w) for d, w in (("cpu", cpu), ("gpu", gpu), ("hybrid", hybrid))}
        faster = cpu if med["cpu"] < med["gpu"] else gpu
        paired = sorted(faster[r] / hybrid[r] for r in range(rounds))
        rays = runs[0]["render"]["rays"]["total"]
        speed = {d: rays / med[d] for d in med}
        batches = [p["batches"] for p in runs[len(runs) // 2]["hybrid"]["processors"] if p["kind"] != "cpu"]
        print(f"{scene} 2048², {accel}, {mode} tile {tile}: median s cpu {med['cpu']:.3f} (tile 32), "
              f"gpu {med['gpu']:.4f} (tile 4, kernel time), hybrid {med['hybrid']:.4f}; hybrid over the faster "
              f"alone {statistics.median(paired):.3f}x (paired, {paired[0]:.3f}-{paired[-1]:.3f}); "
              f"hybrid speed over cpu + gpu speeds {speed['hybrid'] / (speed['cpu'] + speed['gpu']):.3f}; "
              f"GPU batches {batches}")
        for share in runs[len(runs) // 2]["hybrid"]["shares"]:
            print(f"    {share['processor']}: {share['share'] * 100:.1f}% of rays, {share['tiles']} tiles, "
                  f"idle {share['idle_at_end_seconds']:.4f} s at the end")
        # Each GPU batch of the same run: on the host (launch, tail, the host's part) and by
        # the kernel's own events.
        for p in runs[len(runs) // 2]["hybrid"]["processors"]:
            if p["kind"] == "cpu":
                continue
            for b in p["batch_timeline"]:
                kernel = b["device_seconds"]
                kernel = "-" if kernel is None else f"{kernel * 1e3:.2f}"
                print(f"    batch of {b['tiles']} tiles from {b['began_seconds'] * 1e3:.1f} ms: "
                      f"{b['seconds'] * 1e3:.2f} ms on the host, {kernel} ms kernel")
PY
fi
fi

if section cores; then
threads=$(for t in 1 2 4 8 16; do [ "$t" -le "$(nproc)" ] && echo "$t"; done | paste -sd,)
if part "the simulator against real runs, $threads threads"; then
step env RAYLB="$RAYLB" scripts/sim-validate.sh --threads "$threads" --rounds "${SIM_ROUNDS:-3}" \
    --out "$OUT/sim-validate" | tee "$OUT/sim-validate.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
if part "scaling: treasure, every CPU balancer, $threads threads"; then
step "$RAYLB" bench scaling scenes/treasure.toml --threads "$threads" \
    --balancers static,counter,stealing,rayon --repeat 3 --out "$OUT/scaling" \
    | tee "$OUT/scaling.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
fi
part

echo
echo "== seconds by part (budget $BUDGET s, STEP_TIMEOUT $STEP_TIMEOUT s)"
printf '%s\n' "${part_times[@]}"
echo "all parts: $((($(now_ms) - run_start_ms + 500) / 1000)) s"
exit $status
