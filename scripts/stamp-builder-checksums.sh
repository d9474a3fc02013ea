#!/usr/bin/env bash
# Writes the agent's bootstrap (deploy/agent/install.sh) with the sha256 of the pinned builders'
# release archives written in, so that a release's control plane serves a bootstrap that installs
# nixpacks and railpack on a fresh server with no PLATFORM_<TOOL>_SHA256 to give. The repository's
# copy keeps the empty defaults (`NIXPACKS_SHA256_X64=${PLATFORM_NIXPACKS_SHA256:-}`, ...); the
# environment variable still wins over a stamped value.
#   bash scripts/stamp-builder-checksums.sh OUTPUT
# For each builder and architecture it downloads the archive install.sh downloads, fetches the
# checksum its upstream project publishes, and stamps the archive's sha256 only when the two
# agree. Any archive or checksum missing, malformed or different fails the run and OUTPUT is left
# as it was (OUTPUT may be deploy/agent/install.sh itself). The upstream checksums:
#   railpack  its release's checksums.txt (GoReleaser's, sha256sum format: "<sha256>  <archive>")
#   nixpacks  its releases carry no checksum file (the checksum step of its release workflow is
#             commented out): the sha256 digest GitHub computes for each release asset, read from
#             the REST API (GET /repos/railwayapp/nixpacks/releases/tags/v<version>, the asset's
#             "digest": "sha256:<hex>")
# Environment: PLATFORM_BUILDERS_URL (default https://github.com, as install.sh),
# PLATFORM_BUILDERS_API_URL (default https://api.github.com), GITHUB_TOKEN (optional, sent to the
# API). The release workflow (.github/workflows/release.yml) runs it before the images are built.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: stamp-builder-checksums.sh OUTPUT" >&2; exit 2; }
output=$1
root=$(cd "$(dirname "$0")/.." && pwd)
source="$root/deploy/agent/install.sh"
builders_url=${PLATFORM_BUILDERS_URL:-https://github.com}
builders_url=${builders_url%/}
api_url=${PLATFORM_BUILDERS_API_URL:-https://api.github.com}
api_url=${api_url%/}

fail() {
  echo "stamp-builder-checksums.sh: $*" >&2
  exit 1
}

pinned() {
  local value
  value=$(sed -n "s/^$1=\\([0-9][0-9A-Za-z.+-]*\\)\$/\\1/p" "$source")
  [ "$(printf '%s\n' "$value" | grep -c .)" = 1 ] || fail "$source pins no single $1"
  printf '%s' "$value"
}
nixpacks_version=$(pinned NIXPACKS_VERSION)
railpack_version=$(pinned RAILPACK_VERSION)

work=$(mktemp -d "${TMPDIR:-/tmp}/platform-builders.XXXXXXXX")
trap 'rm -rf "$work" "$output.partial"' EXIT

download() { # URL FILE
  curl -fsSL --retry 3 --connect-timeout 20 --max-time 600 -o "$2" "$1" || fail "could not download $1"
}

# The GitHub REST API's answer for a release (fetched once per tool).
release_json() { # TOOL VERSION
  local file="$work/$1-release.json"
  if [ ! -f "$file" ]; then
    local headers=(-H "Accept: application/vnd.github+json" -H "X-GitHub-Api-Version: 2022-11-28")
    [ -z "${GITHUB_TOKEN:-}" ] || headers+=(-H "Authorization: Bearer $GITHUB_TOKEN")
    curl -fsSL --retry 3 --connect-timeout 20 --max-time 120 "${headers[@]}" -o "$file" \
      "$api_url/repos/railwayapp/$1/releases/tags/v$2" ||
      fail "could not read the release v$2 of railwayapp/$1 from $api_url"
  fi
  printf '%s' "$file"
}

# The checksum upstream publishes for an archive: 64 lower-case hex digits, or the run fails.
upstream_sha256() { # TOOL VERSION ARCHIVE
  local tool=$1 version=$2 archive=$3 value
  case "$tool" in
    railpack)
      local sums="$work/railpack-checksums.txt"
      [ -f "$sums" ] || download "$builders_url/railwayapp/railpack/releases/download/v$version/checksums.txt" "$sums"
      value=$(awk -v name="$archive" '{ sub(/\r$/, "") } $2 == name || $2 == "*" name { print $1 }' "$sums")
      [ "$(printf '%s\n' "$value" | grep -c .)" = 1 ] ||
        fail "railpack's checksums.txt (v$version) has no single line for $archive"
      ;;
    nixpacks)
      local json
      json=$(release_json nixpacks "$version")
      value=$(jq -r --arg name "$archive" \
        '[.assets[]? | select(.name == $name) | .digest // ""] | if length == 1 then .[0] else "" end' \
        "$json") || fail "the release v$version of railwayapp/nixpacks from $api_url is not JSON"
      [[ "$value" == sha256:* ]] ||
        fail "the release v$version of railwayapp/nixpacks gives no sha256 digest for its asset $archive"
      value=${value#sha256:}
      ;;
  esac
  value=$(printf '%s' "$value" | tr 'A-F' 'a-f')
  [[ "$value" =~ ^[0-9a-f]{64}$ ]] || fail "the upstream checksum of $archive is not a sha256: $value"
  printf '%s' "$value"
}

# VARIABLE TOOL VERSION ARCHIVE: the archive downloaded and checked against upstream's checksum;
# the sed expression that stamps it.
expressions=()
stamp() {
  local variable=$1 tool=$2 version=$3 archive=$4 expected got override
  override="PLATFORM_$(printf '%s' "$tool" | tr 'a-z' 'A-Z')_SHA256"
  local line="$variable=\${$override:-}"
  [ "$(grep -cxF "$line" "$source")" = 1 ] || fail "$source has no single line $line to stamp"
  download "$builders_url/railwayapp/$tool/releases/download/v$version/$archive" "$work/$archive"
  expected=$(upstream_sha256 "$tool" "$version" "$archive")
  got=$(sha256sum "$work/$archive" | cut -d' ' -f1)
  [ "$got" = "$expected" ] ||
    fail "checksum mismatch for $archive: upstream publishes sha256 $expected, downloaded $got; nothing was stamped"
  rm -f "$work/$archive"
  echo "$archive: sha256 $got (verified against upstream)"
  expressions+=(-e "s|^$variable=\\\${$override:-}\$|$variable=\${$override:-$got}|")
}

# The archives install.sh's install_builders downloads, by architecture.
stamp NIXPACKS_SHA256_X64 nixpacks "$nixpacks_version" "nixpacks-v$nixpacks_version-x86_64-unknown-linux-musl.tar.gz"
stamp NIXPACKS_SHA256_ARM64 nixpacks "$nixpacks_version" "nixpacks-v$nixpacks_version-aarch64-unknown-linux-musl.tar.gz"
stamp RAILPACK_SHA256_X64 railpack "$railpack_version" "railpack-v$railpack_version-x86_64-unknown-linux-musl.tar.gz"
stamp RAILPACK_SHA256_ARM64 railpack "$railpack_version" "railpack-v$railpack_version-arm64-unknown-linux-musl.tar.gz"

sed "${expressions[@]}" "$source" >"$output.partial"
chmod 755 "$output.partial"
mv -f "$output.partial" "$output"
