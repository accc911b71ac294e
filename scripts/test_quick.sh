# Sourced by scripts/test for `scripts/test --quick`: what a typical change
# needs before it is pushed, in a few minutes once built; the whole suite
# (scripts/test, .ci/run) still runs before it lands.
#
# 1. cargo fmt --check over the workspace;
# 2. clippy (-D warnings, every target) on the crates the change touches;
# 3. their unit tests (cargo nextest, --lib and --bins);
# 4. a smoke run of each server with a real client: porter mattermost
#    serve over stdio and HTTP and porter gateway serve over stdio and HTTP
#    in front of server-everything, each driven by the Python mcp SDK (a few
#    tests of tests/mcp and tests/gateway, named below).
#
# The change is what differs from the branch point with `main` (committed or
# not, and new files); PORTER_QUICK_BASE names another base (a commit). With
# no crate touched, steps 2 and 3 check porter-test alone.

QUICK_MCP_TESTS=(
  "test_server.py::test_a_python_sdk_session_in_its_default_mode_leaves_no_warning_on_the_servers_terminal"
  "test_reads.py::test_a_thread_is_read_from_any_of_its_posts_and_files_are_found_by_name"
)
QUICK_GATEWAY_TESTS=(
  "test_protocol.py::test_a_default_python_sdk_session_over_stdio_is_discovered_without_a_warning"
  "test_protocol.py::test_a_default_python_sdk_session_over_http_is_discovered_without_a_warning"
  "test_capture.py::test_the_tiny_image_becomes_a_stub_naming_the_very_png"
)

# changed_crates: the workspace packages with a file changed since the base.
changed_crates() {
  local base
  base=${PORTER_QUICK_BASE:-$(git merge-base HEAD main 2>/dev/null || git rev-parse HEAD)}
  {
    git diff --name-only "$base" --
    git ls-files --others --exclude-standard -- crates
  } | sed -n 's|^crates/\([^/]*\)/.*|\1|p' | sort -u | while read -r crate; do
    [ -f "crates/$crate/Cargo.toml" ] && echo "$crate"
  done
}

quick_run() {
  local crates packages=() crate
  mapfile -t crates < <(changed_crates)
  [ ${#crates[@]} -gt 0 ] || crates=(porter-test)
  for crate in "${crates[@]}"; do
    packages+=(-p "$crate")
  done
  say "the change touches: ${crates[*]}"

  phase "cargo fmt --check" cargo fmt --all --check
  phase "clippy on ${crates[*]} (-D warnings)" \
    cargo clippy "${packages[@]}" --all-targets --locked "$@" -- -D warnings
  phase "building the unit tests of ${crates[*]}" \
    cargo nextest run "${packages[@]}" --lib --bins --locked --no-run "$@"
  rust_suite unit all "${packages[@]}" --lib --bins "$@"

  phase "building porter" cargo build --locked -p porter "$@"
  export PORTER_BIN="$target/debug/porter"
  python_suite smoke-mattermost tests/mcp/run "${QUICK_MCP_TESTS[@]}"
  python_suite smoke-gateway tests/gateway/run "${QUICK_GATEWAY_TESTS[@]}"
  finish
}
