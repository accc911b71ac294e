# Sourced by scripts/test: timing its phases, running its suites so that
# each leaves a report, and the summary at the end (scripts/test_summary.py).
#
# Every phase is recorded in $results/phases.tsv with its wall time and the
# load average (1 minute) at its start and end, because this machine is
# shared and a time means little without the load it was taken under.

failed_suites=()

# start_results DIR: an empty results folder, and where the harnesses record
# the servers they start (tests/timing.py, porter-test's shared module).
start_results() {
  results=$1
  rm -rf "$results"
  mkdir -p "$results/junit" "$results/timings"
  : >"$results/phases.tsv"
  export PORTER_TEST_TIMINGS="$results/timings"
}

load_now() { cut -d' ' -f1 /proc/loadavg; }

# begin_phase NAME / end_phase [STATUS]: times what runs between them (for a
# shell function whose exports must reach the rest of the script).
begin_phase() {
  phase_name=$1
  phase_began=$(date +%s%N)
  phase_load=$(load_now)
  say "$phase_name"
}
end_phase() {
  local status=${1:-0} ms
  ms=$((($(date +%s%N) - phase_began) / 1000000))
  printf '%s\t%d.%01d\t%s\t%s\t%s\n' "$phase_name" $((ms / 1000)) $((ms % 1000 / 100)) \
    "$phase_load" "$(load_now)" "$status" >>"$results/phases.tsv"
}

# phase NAME COMMAND...: runs COMMAND as one timed phase; answers its status.
phase() {
  local name=$1 status=0
  shift
  begin_phase "$name"
  "$@" || status=$?
  end_phase "$status"
  return "$status"
}

# suite NAME COMMAND...: a phase whose failure is counted, not fatal: the
# other suites still run, and the run fails at the end (finish).
suite() {
  local name=$1
  shift
  phase "suite $name" "$@" || failed_suites+=("$name")
}

# rust_suite NAME FILTERSET CARGO_ARGS...: tests built by nextest, those the
# filterset (`all` for every one) selects; their report is kept as NAME.
# nextest keeps its report under the workspace's target/nextest whatever
# CARGO_TARGET_DIR says. Its report leaves out the #[ignore]d tests (each
# run by another test, which starts its binary again): they are listed and
# counted as skipped, so the total says they did not run on their own.
rust_suite() {
  local name=$1 filter=$2
  shift 2
  local select=()
  [ "$filter" = all ] || select=(-E "$filter")
  local junit="$repo/target/nextest/default/junit.xml"
  rm -f "$junit"
  suite "$name" cargo nextest run --locked --no-fail-fast "${select[@]}" "$@"
  cp "$junit" "$results/junit/$name.xml" 2>/dev/null || true
  local ignored
  ignored=$(cargo nextest list --locked --run-ignored only --message-format oneline "${select[@]}" "$@" 2>/dev/null) || true
  if [ -n "$ignored" ]; then
    printf '%s\n' "$ignored" | sed 's/^/  skipped (#[ignore]): /' >&2
    printf '%s\t0\t0\t%d\n' "$name" "$(printf '%s\n' "$ignored" | wc -l)" >>"$results/counts.tsv"
  fi
}

# doc_suite NAME CARGO_ARGS...: the doctests (nextest does not run them);
# their counts come from cargo's `test result:` lines.
doc_suite() {
  local name=$1
  shift
  suite "$name" cargo_test_counted "$name" --doc --locked "$@"
}
cargo_test_counted() {
  local name=$1 log="$results/$1.log" status=0
  shift
  cargo test "$@" 2>&1 | tee "$log" || status=$?
  awk -v name="$name" '
    /^test result:/ {
      for (i = 1; i <= NF; i++) {
        n = $(i - 1) + 0
        if ($i ~ /^passed/) p += n; if ($i ~ /^failed/) f += n; if ($i ~ /^ignored/) s += n
      }
    }
    END { printf "%s\t%d\t%d\t%d\n", name, p, f, s }' "$log" >>"$results/counts.tsv"
  return "$status"
}

# python_suite NAME RUNNER [PYTEST_ARGS...]: a pytest suite through its run
# script, its report kept as NAME (the run script spreads it over the cores).
python_suite() {
  local name=$1 runner=$2
  shift 2
  suite "$name" env PORTER_TEST_SUITE="$name" "$runner" -q \
    --junitxml="$results/junit/$name.xml" "$@"
}

# conformance_suite: tests/conformance/run, counted from its last line
# ("conformance: N passed, N failed").
conformance_suite() {
  suite conformance conformance_counted
}
conformance_counted() {
  local log="$results/conformance.log" status=0
  PORTER_TEST_SUITE=conformance tests/conformance/run 2>&1 | tee "$log" || status=$?
  sed -n 's/^conformance: \([0-9]*\) passed, \([0-9]*\) failed$/conformance\t\1\t\2\t0/p' "$log" \
    | tail -n 1 >>"$results/counts.tsv"
  return "$status"
}

# summarize DIR: the summary, whatever happened before (it is the EXIT trap).
summarize() {
  python3 "$repo/scripts/test_summary.py" "$1" || true
}

# finish: the run's status: 1 when a suite failed.
finish() {
  if [ ${#failed_suites[@]} -gt 0 ]; then
    say "failed: ${failed_suites[*]} (their output is above; reports in $results)"
    exit 1
  fi
}
