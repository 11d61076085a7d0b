#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: the #[ignore]d GPU tests, then every scene rendered with
# every GPU balancer and byte-compared with the CPU `static` render, then the treasure targets
# at 2048×2048. Prints one table: scene, balancer, Mrays/s, SIMT efficiency, steals, identical.
#
#   scripts/gpu-check.sh                 # builds with cargo where there is one
#   RAYLB=path/to/raylb GPU_TESTS=path/to/gpu-test-binary scripts/gpu-check.sh
#                                        # prebuilt (a GPU machine without a Rust toolchain)
#
# The CUDA driver and NVRTC are found through the dynamic loader: put the CUDA toolkit's lib
# folder on LD_LIBRARY_PATH (PTX from an NVRTC newer than the driver does not load).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${GPU_CHECK_OUT:-gpu-check-out}
TILES=${TILES:-8,64,512}
mkdir -p "$OUT"
status=0

if [ -z "${RAYLB:-}" ]; then
    cargo build --release --locked || exit 2
    RAYLB=target/release/raylb
fi

echo "== the #[ignore]d GPU tests"
if [ -n "${GPU_TESTS:-}" ]; then
    "$GPU_TESTS" --ignored --test-threads 1 || status=1
elif command -v cargo >/dev/null; then
    cargo test --release --locked -p renderer --test gpu -- --ignored --test-threads 1 || status=1
else
    echo "skipped: no cargo and no GPU_TESTS binary"
fi

echo "== every scene, every GPU balancer, against the CPU's static render"
for scene in scenes/*.toml; do
    name=$(basename "$scene" .toml)
    "$RAYLB" validate "$scene" --balancers static --threads "$(nproc)" --tiles "$TILES" --gpu \
        | tee "$OUT/validate-$name.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
done

echo "== treasure at 2048×2048"
"$RAYLB" validate scenes/treasure.toml --width 2048 --height 2048 --balancers static \
    --threads "$(nproc)" --tiles 4,8,16 --gpu | tee "$OUT/validate-treasure-2048.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo
echo "scene                 balancer                  tile    Mrays/s    SIMT     steals  identical"
for f in "$OUT"/validate-*.txt; do
    name=$(head -1 "$f" | cut -d: -f1)
    size=$(head -1 "$f" | awk '{print $2}' | tr -d ,)
    awk -v scene="$name $size" '
        / simt / {
            identical = ($NF == "identical" || $NF == "reference") ? "yes" : "NO";
            if ($0 ~ /DIFFERS/) identical = "NO";
            split($2, t, "=");
            printf "%-21s %-25s %5s %10s %7s %10s  %s\n", scene, $1, t[2], $5, $8, $10, identical
        }' "$f"
done
exit $status
