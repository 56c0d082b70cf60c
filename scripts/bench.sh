#!/usr/bin/env bash
# Whole-command benchmarks of bcwire against a bare pcap read loop, `cat` and tshark,
# with peak memory, on captures of several sizes. Prints a table of figures, ratios
# measured in the same run, and each target of docs/performance.md with "pass" or
# "FAIL" for this run. See docs/performance.md.
#
#   scripts/bench.sh                      # sizes 10000 100000 1000000
#   BENCH_SIZES="100000 10000000" scripts/bench.sh
#   BENCH_DIR=/tmp/bcwire-bench  (inputs are generated there and kept)
#   BENCH_INPUT=synth|replay     (synthetic stock battle, or the real-peer capture replayed)
#   BENCH_TSHARK_JSON_MAX=100000 (largest size tshark -T json is run on; it is slow)
#   BENCH_REPEAT=1               (runs per command; the least CPU and wall time are kept)
#
# Times are CPU seconds (user + system), which the other load of a shared machine
# disturbs less than wall time, and wall seconds. Ratios are given for both: bcwire
# reads and deciphers on a second thread when there is a second core, so its wall time
# is below its CPU time; the bare loop and tshark use one core.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
sizes="${BENCH_SIZES:-10000 100000 1000000}"
dir="${BENCH_DIR:-${TMPDIR:-/tmp}/bcwire-bench}"
tshark_json_max="${BENCH_TSHARK_JSON_MAX:-100000}"
mkdir -p "$dir"

shared="${BCWIRE_SHARED:-}"
for c in "$shared" "$root/../shared" /work/shared; do
    if [ -n "$c" ] && [ -d "$c/captures/openbc" ]; then shared="$c"; break; fi
done
seed="$shared/captures/openbc/b2_valentines_replay/b2_valentines_replay.pcap"
[ -f "$seed" ] || { echo "bench: seed capture not found ($seed); set BCWIRE_SHARED" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time is needed (apt-get install time)" >&2; exit 2; }
command -v python3 >/dev/null 2>&1 || { echo "bench: python3 is needed (it times the commands)" >&2; exit 2; }

echo "building (release) ..." >&2
(cd "$root" && cargo build --release --quiet --bin bcwire --example bare_read --example make_bench_capture)
bin="$root/target/release/bcwire"
bare="$root/target/release/examples/bare_read"
make="$root/target/release/examples/make_bench_capture"
have_tshark=0
command -v tshark >/dev/null 2>&1 && have_tshark=1
# Inputs: `bcwire synth --preset stock-battle --packets N` (the 3-player stock battle
# of the published trace statistics, N datagrams long; docs/synth.md) by default;
# BENCH_INPUT=replay replays the real-peer capture instead, each copy a new session on
# the same endpoints (as a long-running server sees).
use_synth=0
if [ "${BENCH_INPUT:-synth}" = synth ] && "$bin" synth --help 2>/dev/null | grep -q -- '--preset'; then
    use_synth=1
fi

# plan NAME CMD...: adds CMD (stdout to /dev/null) to this size's commands; run_plan
# then runs them all in rounds, one run of each command per round, BENCH_REPEAT rounds,
# and records for each the least CPU and the least wall time of its runs (the runs
# least disturbed by other work on a shared machine), then runs each once more under
# /usr/bin/time for its peak RSS. Interleaved rounds pair every ratio's two commands
# in time: a load that comes and goes on a shared machine falls on both alike, where
# running one command's repeats back to back let it fall on one of them only.
#
# The times come from wait4(2) on the finished command, in microseconds, and a
# monotonic clock around it: /usr/bin/time prints hundredths of a second, and the bare
# read loop over a million frames takes a few of them, so a ratio to it would be mostly
# rounding. The peak RSS cannot come from the same run: a child forked from the timing
# interpreter reports the interpreter's pages as its own peak.
repeat="${BENCH_REPEAT:-1}"
declare -A CPU WALL RSS CMD
PLAN=()
# run_timed OUT CMD...: writes "user_s sys_s wall_s" of one run of CMD to OUT.
run_timed() {
    python3 - "$@" <<'PY'
import os, subprocess, sys, time
out, cmd = sys.argv[1], sys.argv[2:]
start = time.perf_counter()
with open(out + ".stderr", "wb") as err:
    child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
    # The usage of this child alone (with the threads it ran).
    _, status, usage = os.wait4(child.pid, 0)
wall = time.perf_counter() - start
with open(out, "w") as f:
    f.write(f"{usage.ru_utime:.6f} {usage.ru_stime:.6f} {wall:.6f}\n")
sys.exit(os.waitstatus_to_exitcode(status))
PY
}
plan() {
    local name="$1"; shift
    CMD[$name]=$(printf '%q ' "$@")
    PLAN+=("$name")
    unset 'CPU[$name]' 'WALL[$name]' 'RSS[$name]'
}
run_plan() {
    local t="$dir/time.txt" k name
    for ((k = 0; k < repeat; k++)); do
        for name in "${PLAN[@]}"; do
            eval "run_timed \"\$t\" ${CMD[$name]}" || {
                echo "bench: $name failed: $(tail -3 "$t.stderr")" >&2; return 1; }
            read -r u s e <"$t"
            CPU[$name]=$(awk -v u="$u" -v s="$s" -v b="${CPU[$name]:-}" \
                'BEGIN{c=u+s; if (b != "" && b+0 < c) c=b; printf "%.4f", c}')
            WALL[$name]=$(awk -v e="$e" -v b="${WALL[$name]:-}" \
                'BEGIN{if (b != "" && b+0 < e) e=b; printf "%.4f", e}')
        done
    done
    for name in "${PLAN[@]}"; do
        eval "/usr/bin/time -o \"\$t\" -f %M ${CMD[$name]}" >/dev/null 2>"$t.stderr" || {
            echo "bench: $name failed: $(tail -3 "$t.stderr")" >&2; return 1; }
        RSS[$name]=$(tail -1 "$t")
    done
    PLAN=()
}
ratio3() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b+0 == 0) print "-"; else printf "%.2f", a/b }'; }
# verdict LABEL VALUE OP LIMIT [NOTE]: one target line, "pass" or "FAIL".
verdict() {
    local ok
    ok=$(awk -v v="$2" -v l="$4" -v op="$3" 'BEGIN{
        if (v == "-") { print "n/a"; exit }
        if (op == "<=") print (v+0 <= l+0) ? "pass" : "FAIL"; else print (v+0 >= l+0) ? "pass" : "FAIL" }')
    printf '%-9s     %-44s %8s  %s %-6s %s%s\n' "$n" "$1" "$2" "$3" "$4" "$ok" "${5:+  ($5)}"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b+0 == 0) print "-"; else printf "%.1f", a/b }'; }
rate() { awk -v n="$1" -v t="$2" 'BEGIN{ if (t+0 == 0) print "-"; else printf "%.0f", n/t }'; }

printf '\nmachine: %s cores, %s\n' "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
printf 'inputs: %s\n' "$([ $use_synth = 1 ] && echo 'bcwire synth --preset stock-battle --packets N' || echo "$(basename "$seed") replayed to N frames")"
printf 'runs per command: %s (least CPU and least wall time kept)\n\n' "$repeat"
printf '%-9s %-28s %9s %8s %9s %12s\n' frames command cpu_s wall_s peak_MB frames_per_s
for n in $sizes; do
    f="$dir/bench_$([ $use_synth = 1 ] && echo stock || echo replay)_$n.pcap"
    if [ ! -f "$f" ]; then
        # Classic pcap: the bare read loop reads only that.
        if [ $use_synth = 1 ]; then
            "$bin" -q synth --preset stock-battle --packets "$n" --format pcap -o "$f" >/dev/null
        else "$make" "$seed" "$f" "$n" 2>/dev/null; fi
    fi
    plan cat cat "$f"
    plan bare "$bare" "$f"
    # No -q on the measured commands: with -q, decode writes no records.
    plan stats "$bin" stats "$f"
    plan jsonl "$bin" decode --format jsonl "$f"
    plan diff "$bin" -q diff "$f" "$f"
    plan report "$bin" -q report "$f" -o "$dir/bench_$n.html"
    # A directory of four captures of a quarter of the frames each (the same shape,
    # other seeds or copies): `stats DIR` reads them at once, one per core.
    d4="$dir/bench_$([ $use_synth = 1 ] && echo stock || echo replay)_${n}_dir4"
    if [ ! -d "$d4" ]; then
        mkdir -p "$d4"
        for k in 1 2 3 4; do
            if [ $use_synth = 1 ]; then
                "$bin" -q synth --preset stock-battle --packets $((n / 4)) --seed "$k" --format pcap \
                    -o "$d4/part$k.pcap" >/dev/null
            else "$make" "$seed" "$d4/part$k.pcap" $((n / 4)) 2>/dev/null; fi
        done
    fi
    plan stats_dir4 "$bin" stats "$d4"
    cmds="cat bare stats jsonl diff report stats_dir4"
    # One core: the reading thread is not started, so CPU and wall are one chain.
    if command -v taskset >/dev/null 2>&1; then
        plan stats_1core taskset -c 0 "$bin" stats "$f"
        cmds="$cmds stats_1core"
    fi
    if "$bin" decode --help 2>/dev/null | grep -q parquet; then
        plan parquet "$bin" -q decode --format parquet -o "$dir/bench_$n.parquet" "$f"
        cmds="$cmds parquet"
    fi
    if [ $have_tshark = 1 ]; then
        plan tshark_iostat tshark -q -r "$f" -z io,stat,0
        cmds="$cmds tshark_iostat"
        if [ "$n" -le "$tshark_json_max" ]; then
            plan tshark_json tshark -r "$f" -T json
            cmds="$cmds tshark_json"
        else
            unset 'CPU[tshark_json]'
        fi
    fi
    run_plan
    for c in $cmds; do
        printf '%-9s %-28s %9s %8s %9.1f %12s\n' "$n" "$c" "${CPU[$c]}" "${WALL[$c]}" \
            "$(awk -v m="${RSS[$c]}" 'BEGIN{print m/1024}')" "$(rate "$n" "${CPU[$c]}")"
    done
    # ratio_line LABEL A B TARGET: A/B in CPU and in wall time.
    ratio_line() {
        printf '%-9s   %-26s cpu %6sx  wall %6sx  (target %s)\n' "$n" "$1" \
            "$(ratio "${CPU[$2]}" "${CPU[$3]}")" "$(ratio "${WALL[$2]}" "${WALL[$3]}")" "$4"
    }
    ratio_line "stats / bare read" stats bare "two threads; the target is for one core"
    [ -n "${CPU[stats_1core]:-}" ] && ratio_line "stats one core / bare read" stats_1core bare "<= 8x"
    ratio_line "jsonl / stats" jsonl stats "<= 2x (CPU)"
    jsonl_bytes=$("$bin" decode --format jsonl "$f" 2>/dev/null | wc -c)
    printf '%-9s   %-26s %s bytes, %s MB per CPU second\n' "$n" "JSON Lines written" "$jsonl_bytes" \
        "$(awk -v b="$jsonl_bytes" -v t="${CPU[jsonl]}" 'BEGIN{ if (t+0 == 0) print "-"; else printf "%.0f", b/t/1e6 }')"
    if [ -n "${CPU[parquet]:-}" ]; then
        rows=$("$bin" -q stats --format json "$f" | python3 -c 'import json,sys
d=json.load(sys.stdin); s=d.get("stats",d)
print(sum(sum(v for v in s["directions"][k]["opcodes"].values()) for k in ("c2s","s2c")))' 2>/dev/null || echo 0)
        size=$(stat -c %s "$dir/bench_$n.parquet")
        printf '%-9s   %-26s %s rows, %s rows per CPU second, %s MB per million frames\n' "$n" "Parquet written" "$rows" \
            "$(rate "$rows" "${CPU[parquet]}")" "$(awk -v b="$size" -v n="$n" 'BEGIN{printf "%.1f", b/1e6*1e6/n}')"
    fi
    printf '%-9s   %-26s cpu %6sx  wall %6sx  (target <= 3x)\n' "$n" "diff / (2 x stats)" \
        "$(ratio "${CPU[diff]}" "$(awk -v s="${CPU[stats]}" 'BEGIN{print 2*s}')")" \
        "$(ratio "${WALL[diff]}" "$(awk -v s="${WALL[stats]}" 'BEGIN{print 2*s}')")"
    if [ $have_tshark = 1 ]; then
        ratio_line "tshark io,stat / stats" tshark_iostat stats ">= 20x"
        if [ -n "${CPU[tshark_json]:-}" ]; then
            ratio_line "tshark -T json / jsonl" tshark_json jsonl ">= 100x"
        fi
    fi
    # The targets of the performance issue, each with its verdict for this run.
    printf '%-9s   targets (ratios of this run; the figures above):\n' "$n"
    if [ -n "${CPU[stats_1core]:-}" ]; then
        verdict "stats CPU / bare read CPU, one core" "$(ratio3 "${CPU[stats_1core]}" "${CPU[bare]}")" "<=" 8
    else
        printf '%-9s     %-44s %s\n' "$n" "stats / bare read, one core" "not measured (no taskset)"
    fi
    if [ $have_tshark = 1 ]; then
        verdict "tshark io,stat wall / stats wall" "$(ratio3 "${WALL[tshark_iostat]}" "${WALL[stats]}")" ">=" 20
    else
        printf '%-9s     %-44s %s\n' "$n" "tshark io,stat / stats" "not measured (no tshark)"
    fi
    verdict "decode jsonl CPU / stats CPU" "$(ratio3 "${CPU[jsonl]}" "${CPU[stats]}")" "<=" 2
    # report <= 1.5 x stats + 5 s, in CPU seconds (wall seconds in brackets).
    report_budget=$(awk -v s="${CPU[stats]}" 'BEGIN{printf "%.2f", 1.5*s+5}')
    verdict "report CPU s (<= 1.5 x stats CPU + 5 s)" "${CPU[report]}" "<=" "$report_budget" \
        "wall ${WALL[report]} s against $(awk -v s="${WALL[stats]}" 'BEGIN{printf "%.2f", 1.5*s+5}') s"
    verdict "stats DIR of 4 captures: cores used" "$(ratio3 "${CPU[stats_dir4]}" "${WALL[stats_dir4]}")" ">=" 1.8 \
        "CPU ${CPU[stats_dir4]} s, wall ${WALL[stats_dir4]} s, $(nproc) cores"
    echo
done
[ $have_tshark = 1 ] || echo "tshark not installed: its comparisons were skipped (apt-get install tshark)"
