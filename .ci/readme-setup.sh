#!/bin/sh
# readme-setup.sh -- run the README's first command (its first ```sh block) from the repository root, as a newcomer pastes it.
# .ci/run calls this so that the README's set-up line and CI cannot diverge.
# usage: .ci/readme-setup.sh [--print]   (--print: show the command, run nothing)
cd "$(dirname "$0")/.." || exit 1
block=$(awk '/^```sh[[:space:]]*$/ { inside = 1; next }
             inside && /^```[[:space:]]*$/ { exit }
             inside { print }' README.md)
if [ -z "$block" ]; then
  echo "readme-setup.sh: README.md has no \`\`\`sh block, or it is empty. Fix: put the set-up command in README.md's first \`\`\`sh block" >&2
  exit 2
fi
echo "readme-setup.sh: README.md's first command:"
printf '%s\n' "$block" | sed 's/^/  /'
[ "${1:-}" = --print ] && exit 0
sh -c "$block"
rc=$?
[ $rc = 0 ] || echo "readme-setup.sh: README.md's first command failed (exit status $rc)" >&2
exit $rc
