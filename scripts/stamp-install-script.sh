#!/usr/bin/env bash
# Writes a release's deploy/install.sh: the repository's script with the release's control plane
# image as its default (the line `release_image=`, empty in the repository, gets the reference),
# so that `curl -fsSL <release's install.sh> | sudo bash` installs that release with no --image.
#   bash scripts/stamp-install-script.sh IMAGE OUTPUT
# IMAGE is an image reference (registry/name:tag, optionally @sha256:<digest>); OUTPUT is the
# file written (executable). The release workflow (.github/workflows/release.yml) runs it.
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: stamp-install-script.sh IMAGE OUTPUT" >&2; exit 2; }
image=$1
output=$2
root=$(cd "$(dirname "$0")/.." && pwd)
source="$root/deploy/install.sh"

# A reference as Docker writes it, nothing the shell would read as more than one word.
reference='^[a-z0-9]([a-z0-9._/:-]*[a-z0-9])?(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$'
[[ "$image" =~ $reference ]] || { echo "not an image reference: $image" >&2; exit 2; }
[ "$(grep -c '^release_image=$' "$source")" = 1 ] ||
  { echo "$source has no single empty release_image= line to stamp" >&2; exit 1; }

sed "s|^release_image=\$|release_image=$image|" "$source" >"$output.partial"
chmod 755 "$output.partial"
mv -f "$output.partial" "$output"
