#!/bin/sh
# readme-setup.sh -- run the README's first command (its first ```sh block) from the repository root, as a newcomer pastes it.
# .ci/run calls this so that the README's set-up line, docs/getting-started.md's copy of it and CI cannot diverge.
# usage: .ci/readme-setup.sh [--print]   (--print: show the command, run nothing)
cd "$(dirname "$0")/.." || exit 1
first_sh_block() {
  awk '/^```sh[[:space:]]*$/ { inside = 1; next }
       inside && /^```[[:space:]]*$/ { exit }
       inside { print }' "$1"
}
block=$(first_sh_block README.md)
if [ -z "$block" ]; then
  echo "readme-setup.sh: README.md has no \`\`\`sh block, or it is empty. Fix: put the set-up command in README.md's first \`\`\`sh block" >&2
  exit 2
fi
# docs/getting-started.md repeats the command as its first sh block.
if [ -f docs/getting-started.md ] && [ "$(first_sh_block docs/getting-started.md)" != "$block" ]; then
  echo "readme-setup.sh: docs/getting-started.md's first \`\`\`sh block differs from README.md's. Fix: copy README.md's set-up command there" >&2
  exit 2
fi
echo "readme-setup.sh: README.md's first command:"
printf '%s\n' "$block" | sed 's/^/  /'
[ "${1:-}" = --print ] && exit 0
sh -c "$block"
rc=$?
[ $rc = 0 ] || echo "readme-setup.sh: README.md's first command failed (exit status $rc)" >&2
exit $rc
