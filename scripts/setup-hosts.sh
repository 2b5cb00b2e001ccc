#!/usr/bin/env bash
# Installs the real hosts pinned in .hosts/NAME/package.json (codex, gemini-cli, copilot) for the
# tests in test/hosts/others, outside the project's node_modules. Idempotent: a host whose
# binary already reports the pinned version is left alone. Exits non-zero when one cannot be
# installed (its tests then skip, saying why). With no argument, installs all three.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

# NAME → the package and the binary npm links for it.
package_of() {
  case "$1" in
    codex) echo "@openai/codex codex" ;;
    gemini-cli) echo "@google/gemini-cli gemini" ;;
    copilot) echo "@github/copilot copilot" ;;
    *) echo "setup-hosts: unknown host '$1' (codex, gemini-cli or copilot)" >&2; return 1 ;;
  esac
}

install_host() {
  local name="$1" spec package bin want dir
  spec=$(package_of "$name") || return 1
  read -r package bin <<<"$spec"
  dir="$root/.hosts/$name"
  want=$(node -p "require('$dir/package.json').dependencies['$package']")
  # Copilot unpacks itself into the cache on first run; the tests keep that cache in
  # .hosts/copilot/cache (XDG_CACHE_HOME) so it is unpacked once, not in every test.
  local exe="$dir/node_modules/.bin/$bin"
  if [[ -x "$exe" ]] && has_version "$dir" "$exe" "$want"; then return 0; fi
  # No install scripts: each package ships its binary (or bundle) in the registry tarball.
  (cd "$dir" && npm install --no-audit --no-fund --ignore-scripts --loglevel=error >&2)
  has_version "$dir" "$exe" "$want" && return 0
  echo "setup-hosts: $exe --version answered: $(version_of "$dir" "$exe" 2>&1 | head -c 400)" >&2
  return 1
}

# True when the binary reports the pinned version. Asked up to three times, a second apart: a
# CI run once saw copilot's check fail while another test's copilot was running on the same
# cache, and the tests then skipped with a binary that was there.
has_version() {
  local try
  for try in 1 2 3; do
    version_of "$1" "$2" | grep -qF "$3" && return 0
    [[ $try -lt 3 ]] && sleep 1
  done
  return 1
}

# The version line, from a throw-away HOME (hosts write their settings folders into it), with
# the host's errors, so that a failed check can say what the host answered.
version_of() {
  local home out
  home=$(mktemp -d)
  out=$(XDG_CACHE_HOME="$1/cache" HOME="$home" COPILOT_OFFLINE=true "$2" --version 2>&1) || true
  rm -rf "$home"
  echo "$out"
}

hosts=("$@")
[[ ${#hosts[@]} -gt 0 ]] || hosts=(codex gemini-cli copilot)
status=0
for name in "${hosts[@]}"; do
  install_host "$name" || { echo "setup-hosts: $name could not be installed" >&2; status=1; }
done
exit $status
