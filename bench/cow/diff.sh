#!/bin/sh
# bench/cow/diff.sh: july diff (process start to exit) of a copy-on-write
# session that changed 10 files, over GOROOT/src and over 8 hard-linked
# copies of it as the tree. Prints each run's wall time, and that of
# july log of the same session (the process start and the session read).
#   RUNS=N (default 10)
set -eu
RUNS=${RUNS:-10}
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/july" ./cmd/july
src=$(go env GOROOT)/src
mkdir "$work/x8"
for i in 0 1 2 3 4 5 6 7; do cp -al "$src" "$work/x8/c$i"; done
for scale in 1x 8x; do
	if [ $scale = 1x ]; then tree=$src; pre=; else tree=$work/x8; pre=/c7; fi
	a=$work/agent-$scale
	mkdir -p "$a"
	printf 'name: bench\nmodel: script:s.yaml\nroot:\n  /:\n    local: %s\n' "$tree" >"$a/agent.yaml"
	{
		echo 'turns:'
		echo '  - replies:'
		echo '      - calls:'
		for f in net/http/server.go:http net/http/client.go:http net/http/request.go:http net/http/response.go:http \
			net/http/transport.go:http net/url/url.go:url os/file.go:os io/io.go:io strings/strings.go:strings bytes/bytes.go:bytes; do
			p=${f%%:*} pkg=${f##*:}
			printf '          - {tool: StrReplace, args: {path: %s/%s, oldText: "package %s\\n", newText: "package %s // changed\\n", replaceAll: true}}\n' "$pre" "$p" "$pkg" "$pkg"
		done
		echo '      - text: done'
	} >"$a/s.yaml"
	"$work/july" run "$a" --cow -m go --state-root "$work/state-$scale" >/dev/null
	id=$(ls "$work/state-$scale/sessions" | head -1)
	n=$("$work/july" diff "$a" "$id" --name-only --state-root "$work/state-$scale" | wc -l)
	[ "$n" = 10 ] || { echo "want 10 changed files, got $n" >&2; exit 1; }
	for r in $(seq "$RUNS"); do
		s=$(date +%s%N)
		"$work/july" diff "$a" "$id" --state-root "$work/state-$scale" >/dev/null
		e=$(date +%s%N)
		"$work/july" log "$a" "$id" --state-root "$work/state-$scale" >/dev/null
		l=$(date +%s%N)
		echo "$scale run $r: july diff $(( (e - s) / 1000000 )) ms, july log $(( (l - e) / 1000000 )) ms"
	done
done
