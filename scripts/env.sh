# Shared settings for scripts/run, scripts/test and .ci/run (sourced, not executed).
# Builds go to a cache outside the clone so a fresh clone reuses earlier builds.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/interlock/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# The shared test vectors (RFC 8785 JCS, RFC 6962 Merkle) live beside the clone in
# ../shared/vectors; tests read them from there and fail if they are missing.
if [ -z "${INTERLOCK_VECTORS_DIR:-}" ]; then
  for candidate in "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/../shared/vectors" /work/shared/vectors; do
    if [ -d "$candidate" ]; then
      INTERLOCK_VECTORS_DIR="$(cd "$candidate" && pwd)"
      break
    fi
  done
fi
export INTERLOCK_VECTORS_DIR="${INTERLOCK_VECTORS_DIR:-}"
# Link with mold where it is installed (scripts/setup.sh installs it; issue 45: the
# workspace links ~50 test binaries, and GNU ld spent minutes on them). Only when
# RUSTFLAGS is unset, so a caller's own flags win; every script sources this file,
# so all builds share one set of flags (a change of flags rebuilds everything).
if [ -z "${RUSTFLAGS+x}" ] && command -v mold >/dev/null 2>&1; then
  export RUSTFLAGS="-C link-arg=-fuse-ld=mold"
fi
