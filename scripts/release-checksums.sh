#!/usr/bin/env bash
# The checksums a release publishes beside its files: for each regular file of DIRECTORY, a
# <file>.sha256 in sha256sum's format (as the control plane serves the agent's, so a server's
# bootstrap and a user check them the same way), and SHA256SUMS listing them all
# (`sha256sum -c SHA256SUMS` in the directory verifies a download).
#   bash scripts/release-checksums.sh DIRECTORY
# Existing .sha256 files and SHA256SUMS are written anew, never checksummed themselves.
set -euo pipefail

[ $# -eq 1 ] && [ -d "$1" ] || { echo "usage: release-checksums.sh DIRECTORY" >&2; exit 2; }
cd "$1"
rm -f -- *.sha256 SHA256SUMS
files=()
for file in *; do
  [ -f "$file" ] && files+=("$file")
done
[ ${#files[@]} -gt 0 ] || { echo "$1 has no files to checksum" >&2; exit 1; }
for file in "${files[@]}"; do
  sha256sum -- "$file" >"$file.sha256"
done
sha256sum -- "${files[@]}" >SHA256SUMS
