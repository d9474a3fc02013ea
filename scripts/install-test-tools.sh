#!/usr/bin/env bash
# Installs the command-line tools some tests and test scripts call, when missing (idempotent):
# - htpasswd (Debian apache2-utils): the Traefik configuration tests verify every APR1 hash with
#   it; scripts/start-test-registry.sh writes the registries' htpasswd file with it;
# - openssl: the domain tests and scripts/start-test-registry.sh make self-signed certificates;
# - curl: scripts/start-test-registry.sh waits with it until the registries answer;
# - git: the source and webhook tests make and clone repositories;
# - ip (iproute2): scripts/start-test-registry.sh makes a network namespace; ps (procps): tests
#   look at processes;
# - docker-compose (v1, what Debian bookworm ships): stacks of composeType `docker-compose` deploy
#   with it on servers whose docker CLI has no `compose` plugin (the compose tests run it).
set -euo pipefail

missing=()
command -v htpasswd >/dev/null || missing+=(apache2-utils)
command -v openssl >/dev/null || missing+=(openssl)
command -v curl >/dev/null || missing+=(curl)
command -v git >/dev/null || missing+=(git)
command -v ip >/dev/null || missing+=(iproute2)
command -v ps >/dev/null || missing+=(procps)
command -v docker-compose >/dev/null || missing+=(docker-compose)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
