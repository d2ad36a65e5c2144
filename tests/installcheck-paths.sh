# installcheck-paths.sh -- where a file is, by real directories, and whether the installed documents cite only installed files: sourced by tests/installcheck.sh and
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

# doc_links_check DOCDIR SRCDIR: print one line per citation in an installed
# document (every *.md under DOCDIR, the examples' READMEs included) that
# does not resolve inside DOCDIR, and return 1 when there is any:
#  - a relative Markdown link `[text](target)` (links to http:, https:,
#    mailto: and to #anchors aside), from the document's directory;
#  - share/doc/vyre/PATH, which must be DOCDIR/PATH;
#  - a document of the source tree's docs/ named as NAME.md or docs/NAME.md,
#    which must be DOCDIR/NAME.md (an installed document names the others by
#    their installed name).
doc_links_check() {
  dl_docdir=$1
  dl_src=$2
  dl_bad=0
  dl_real=$(real_dir "$dl_docdir")
  [ -n "$dl_real" ] || { echo "$dl_docdir: no such directory"; return 1; }
  for dl_f in $(find "$dl_docdir" -name '*.md' | LC_ALL=C sort); do
    dl_dir=$(dirname -- "$dl_f")
    dl_name=${dl_f#"$dl_docdir"/}
    # Markdown links.
    for dl_t in $(grep -o '](\([^)# ]*\)[^) ]*)' "$dl_f" | sed 's/^](//; s/)$//; s/#.*//'); do
      case $dl_t in '' | http:* | https:* | mailto:*) continue ;; esac
      dl_p=$dl_dir/$dl_t
      if [ -d "$dl_p" ]; then dl_in=$(real_dir "$dl_p"); else dl_in=$(real_dir "$(dirname -- "$dl_p")"); fi
      if [ ! -e "$dl_p" ]; then
        echo "$dl_name links to $dl_t, which is not installed"
        dl_bad=1
      else
        case "$dl_in/" in "$dl_real"/*) ;; *) echo "$dl_name links to $dl_t, outside the installed documents"; dl_bad=1 ;; esac
      fi
    done
    # Installed paths and document names in the text.
    for dl_t in $(grep -oE '(share/doc/vyre/[A-Za-z0-9_./-]*|[A-Za-z0-9_./-]*\.md)' "$dl_f" | sed 's/[.]*$//' | LC_ALL=C sort -u); do
      case $dl_t in
      share/doc/vyre/*) dl_p=${dl_t#share/doc/vyre/} ;;
      docs/*.md | *.md) dl_p=${dl_t#docs/}
        case $dl_p in */*) continue ;; esac
        [ -f "$dl_src/docs/$dl_p" ] || continue ;;
      *) continue ;;
      esac
      [ -e "$dl_docdir/$dl_p" ] || { echo "$dl_name names $dl_t, which is not installed"; dl_bad=1; }
    done
  done
  return $dl_bad
}
