#!/bin/sh
# Docs that cannot drift: every transcript in README.md, doc/*.md and the
# man pages is run and its shown output compared with what the commands
# print, and every relative link of README.md and doc/*.md resolves.
#
#   tests/docs.sh check SRC BUILD   exit 1 on any difference, with a diff
#                                   at the document's line
#   tests/docs.sh show SRC BUILD    print each transcript as it should read
#                                   (paste it into the document to refresh
#                                   it after an intended output change)
#
# A transcript is a Markdown ``` block, or a man page .nf/.fi or .EX/.EE
# block, whose first line starts with "$ ": each "$ " line is a command,
# the lines after it, up to the next command, its output (standard output
# and standard error together); in a man page, a block of commands none of
# which shows output is a list of examples, each of which must exit 0.  A
# ```sh block is a list of commands (a trailing "# ..." is a comment):
# each ppcc or trainer command must exit 0, each make target named must be
# a rule of the Makefile (make itself is not run), other commands are not
# run.  Blocks of neither kind (file formats, hypothetical files) are not
# run.  In the Markdown documents, every link [text](PATH) that is not a
# URL must name an existing file (relative to the document) and any
# #anchor one of its headings, and every code span naming a path under
# doc/ man/ examples/ tests/ schedules/ src/ or include/ must exist
# (relative to the source tree), unless it follows a possessive ("Megatron-
# LM's `examples/...`": another project's file).  Commands run with
# sh in a scratch directory holding examples/ and mlp.yaml (the trainer's
# model), with BUILD first in PATH, so `ppcc` and `trainer` are the ones
# just built; man page text is unescaped (\- \e \(aq \(lq \(rq).
set -u
mode=$1
src=$(cd "$2" && pwd)
build=$(cd "$3" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/ppcc-docs.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
mkdir "$work/run" "$work/t"
ln -s "$src/examples" "$work/run/examples"
ln -s "$src/examples/trainer/mlp.yaml" "$work/run/mlp.yaml"

# The documents: README.md, doc/*.md (not doc/design/, which shows no
# transcripts) and the man pages.
md_docs=README.md
for f in "$src"/doc/*.md; do
	[ -f "$f" ] && md_docs="$md_docs doc/${f##*/}"
done
docs="$md_docs man/ppcc.1 man/ppcc.5 man/ppcc_runtime.3"

# Splits the documents into $work/t/N.{where,cmd,want,kind}.
for doc in $docs; do
	case $doc in
	*.md) style=md ;;
	*) style=roff ;;
	esac
	awk -v doc="$doc" -v style="$style" -v dir="$work/t" '
	function unroff(s) {
		gsub(/\\-/, "-", s); gsub(/\\\(aq/, "\047", s)
		gsub(/\\\(lq/, "\"", s); gsub(/\\\(rq/, "\"", s)
		gsub(/\\e/, "\\", s); gsub(/\\&/, "", s)
		return s
	}
	function start(line, k) {
		n++
		f = dir "/" n
		printf "%s:%d\n", doc, line > (f ".where")
		printf "%s\n", k > (f ".kind")
		printf "" > (f ".want")
	}
	function finish() {
		if (n) { close(f ".where"); close(f ".kind"); close(f ".cmd");
			 close(f ".want") }
	}
	BEGIN { inb = 0; kind = ""; first = 0; n = ENVIRON["N0"] + 0 }
	{
		line = $0
		if (style == "md") {
			if (line ~ /^```/) {
				if (inb) { inb = 0; kind = ""; next }
				inb = 1; first = 1
				kind = line ~ /^```sh/ ? "commands" : "maybe"
				next
			}
		} else {
			if (line ~ /^\.(nf|EX)/) { inb = 1; first = 1; kind = "maybe"; next }
			if (line ~ /^\.(fi|EE)/) { inb = 0; kind = ""; next }
			if (inb && line ~ /^\.(RS|RE)/) next
			if (inb) line = unroff(line)
		}
		if (!inb) next
		if (first) {
			first = 0
			if (kind == "maybe")
				kind = line ~ /^\$ / ? "transcript" : "skip"
		}
		if (kind == "transcript") {
			if (line ~ /^\$ /) {
				finish(); start(NR, style == "roff" ? "roff" : "transcript")
				printf "%s\n", substr(line, 3) > (f ".cmd")
			} else {
				printf "%s\n", line > (f ".want")
			}
		} else if (kind == "commands") {
			c = line
			sub(/[ \t]+#.*$/, "", c)
			if (c ~ /^[ \t]*(#|$)/) next
			if (c ~ /^make( |$)/) {
				finish(); start(NR, "make")
				printf "%s\n", c > (f ".cmd")
				next
			}
			if (c !~ /^(ppcc|trainer)( |$)/) next
			finish(); start(NR, "commands")
			printf "%s\n", c > (f ".cmd")
		}
	}
	END { finish(); print n > (dir "/count") }' "$src/$doc" || exit 1
	N0=$(cat "$work/t/count")
	export N0
done

n=$(cat "$work/t/count")
fail=0
ran=0
i=1
while [ "$i" -le "$n" ]; do
	t=$work/t/$i
	i=$((i + 1))
	[ -f "$t.cmd" ] || continue
	where=$(cat "$t.where")
	kind=$(cat "$t.kind")
	if [ "$kind" = make ]; then
		# each target named (not a VAR=value or an option) is a rule
		for target in $(cat "$t.cmd"); do
			case $target in make | *=* | -*) continue ;; esac
			grep -Eq "^([^:#=	]+ )?$target( [^:#=]*)?:([^=]|\$)" "$src/Makefile" ||
				{ echo "$where: '$(cat "$t.cmd")': the Makefile has no target $target"; fail=1; }
		done
		continue
	fi
	(cd "$work/run" && PATH="$build:$PATH" LC_ALL=C sh -c "$(cat "$t.cmd")") \
		>"$t.got" 2>&1
	rc=$?
	ran=$((ran + 1))
	if [ "$mode" = show ]; then
		echo "== $where"
		echo "\$ $(cat "$t.cmd")"
		cat "$t.got"
		continue
	fi
	# a man page's list of commands shows no output: each must work
	if [ "$kind" = roff ] && [ ! -s "$t.want" ]; then
		kind=commands
	fi
	if [ "$kind" = commands ]; then
		if [ "$rc" != 0 ]; then
			echo "$where: '$(cat "$t.cmd")' exits $rc:"
			cat "$t.got"
			fail=1
		fi
	elif ! cmp -s "$t.want" "$t.got"; then
		echo "$where: '$(cat "$t.cmd")' prints something else than shown (- shown, + printed):"
		diff -u "$t.want" "$t.got" | tail -n +3
		fail=1
	fi
done
[ "$mode" = show ] && exit 0
# A one-line example of what a command says, shown outside a transcript
# ("ppcc: note: wrote ..."), must be a line some transcript prints.
cat "$work"/t/*.got >"$work/printed" 2>/dev/null
for doc in $docs; do
	sed 's/\\-/-/g' "$src/$doc" | grep -n '^ppcc: note: wrote ' |
	while IFS= read -r hit; do
		line=${hit#*:}
		grep -qxF -- "$line" "$work/printed" ||
			echo "$doc:${hit%%:*}: shows '$line', which no transcript prints"
	done
done >"$work/stale"
if [ -s "$work/stale" ]; then
	cat "$work/stale"
	fail=1
fi
# Links and paths, outside code blocks: DOC:LINE<tab>KIND<tab>TARGET.
links=0
for doc in $md_docs; do
	awk -v doc="$doc" '
	/^```/ { inb = !inb; next }
	inb { next }
	{
		s = $0
		while (match(s, /\]\([^) ]+\)/)) {
			printf "%s:%d\tlink\t%s\n", doc, NR, substr(s, RSTART + 2, RLENGTH - 3)
			s = substr(s, RSTART + RLENGTH)
		}
		s = $0
		first = 1
		while (match(s, /`(doc|man|examples|tests|schedules|src|include)\/[A-Za-z0-9_.\/-]*`/)) {
			# a file of another project ("Megatron-LM\047s `examples/...`",
			# the possessive perhaps ending the line before) is not ours
			pre = substr(s, 1, RSTART - 1)
			if (first && pre ~ /^[ \t]*$/) pre = last
			if (pre !~ /\047s $/)
				printf "%s:%d\tpath\t%s\n", doc, NR, substr(s, RSTART + 1, RLENGTH - 2)
			s = substr(s, RSTART + RLENGTH)
			first = 0
		}
		last = $0 " "
	}' "$src/$doc"
done >"$work/links"
# A heading's anchor as GitHub writes it: lower case, punctuation dropped,
# spaces as hyphens.
anchors() {
	sed -n 's/^#\{1,6\} //p' "$1" | tr 'A-Z' 'a-z' |
		sed 's/[^a-z0-9 _-]//g; s/ /-/g'
}
while IFS='	' read -r where kind target; do
	links=$((links + 1))
	doc=${where%:*}
	case $kind in
	path) path=$src/$target ;;
	*)
		case $target in [a-z]*:* | '#'*) continue ;; esac
		path=$src/$(dirname "$doc")/${target%%#*}
		;;
	esac
	if [ ! -e "$path" ]; then
		echo "$where: $target: no such file"
		fail=1
	elif [ "$kind" = link ] && [ "$target" != "${target#*#}" ] &&
		! anchors "$path" | grep -qxF -- "${target#*#}"; then
		echo "$where: $target: no such heading"
		fail=1
	fi
done <"$work/links"
echo "docs: $ran commands from $md_docs and the man pages; $links links and paths"
[ "$ran" -gt 0 ] || fail=1
exit $fail
