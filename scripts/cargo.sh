#!/usr/bin/env bash
# cargo.sh ARGS...: cargo of the host tools' toolchain (see host_cargo in lib.sh)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$TOP"
host_cargo "$@"
