# installcheck-paths.sh -- where a file is, by real directories: sourced by tests/installcheck.sh and
# tests/installcheck-paths.test.  A staged install (DESTDIR) may sit inside the build tree (Debian stages
# in debian/tmp of the source tree): "inside the build tree" compares whole directory names, symbolic
# links resolved, never substrings.

# real_dir DIR: DIR with every symbolic link resolved; empty when it does not exist.
real_dir() { (cd -P -- "$1" 2>/dev/null && pwd -P); }

# in_dir FILE DIR: FILE's directory is DIR or below it.  A bare name (what the
# dynamic linker was asked for) is in no directory.
in_dir() {
  case "$1" in */*) ;; *) return 1 ;; esac
  f_dir=$(real_dir "$(dirname -- "$1")")
  d_dir=$(real_dir "$2")
  [ -n "$f_dir" ] && [ -n "$d_dir" ] || return 1
  [ "$d_dir" = / ] && return 0
  case "$f_dir/" in "$d_dir"/*) return 0 ;; esac
  return 1
}

# from_build_tree FILE BUILDDIR [DESTDIR]: FILE is a file of the build tree,
# not of an install staged under DESTDIR (which may lie inside it).
from_build_tree() {
  in_dir "$1" "$2" || return 1
  [ -n "${3:-}" ] && in_dir "$1" "$3" && return 1
  return 0
}
