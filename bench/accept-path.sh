#!/bin/bash
# The accept path's cost (issue 22 part 3; docs/accept-path.md): a server's
# user-space instructions per short connection (connect, one request with
# "Connection: close", close), counted by callgrind as the difference
# between two runs of N1 and N2 connections, over N2 - N1. Only the server
# is traced: the client (bench/acceptpath client) runs natively as a
# process of its own and checks every answer (status and exact body); a
# run with any failure scores 0. Score = 1e9 / instructions per connection.
#
#   bench/accept-path.sh                       # all modes, N1=500 N2=2500
#   MODES="nethttp sluice" N1=1000 N2=3000 bench/accept-path.sh
#   KEEP=DIR bench/accept-path.sh              # keep callgrind.out.MODE.N in DIR
#   REPS=3 bench/accept-path.sh               # each count run 3 times, median total
#   KEEPALIVE=1 bench/accept-path.sh          # N requests on one connection instead: per request
#   GOGC_WORKER=400 MODES=sluice bench/accept-path.sh   # the worker with gogc: 400
#   GOVERNANCE=1 MODES=chat KEEPALIVE=1 bench/accept-path.sh  # with a quota, a budget, an end-user limit, a price, a fallback (issue 33)
#
# Modes: sluice (a worker in-process, GET /v1/models with a key), readyz (the
# supervisor's admin listener from its test binary, GET /readyz), nethttp (a
# plain net/http server, fixed body: the reference), and chat (not in the
# default list: a worker proxying a small chat completion to the fake vLLM,
# which runs natively in a process of its own and is not counted; with
# KEEPALIVE=1, the proxy path's instructions per request; STREAM=1 asks for
# the answer streamed).
#
# The server runs with GOMAXPROCS=1, as the supervisor starts every worker
# (gomaxprocs: 1 by default): with more, idle Ms spin looking for work, and
# under valgrind, which runs one thread at a time, that spinning grows with
# wall time, not with connections. valgrind 3.19 cannot decode the RDTSCP
# Go 1.26's runtime uses, hence cpu.rdtscp=off; asyncpreemptoff: no
# preemption signals under valgrind (callgrind 3.19 also fails an assertion
# on a Go program's signals now and then: the client is therefore not the
# server's child, and the server stops at the end of its stdin).
set -eu
cd "$(dirname "$0")/.."
MODES=${MODES:-"nethttp sluice readyz"} N1=${N1:-500} N2=${N2:-2500} REPS=${REPS:-1}
work=$(mktemp -d)
srv=
trap 'exec 3>&- 2>/dev/null; [ -n "$srv" ] && kill $srv 2>/dev/null; [ -n "${fake:-}" ] && kill $fake 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
# Built as `make build` builds sluice (its tags; no cgo): without the tags the
# binary links sonic, whose tables the GC scans at every cycle.
CGO_ENABLED=0 go build -tags stdjson,gjson -o "$work/acceptpath" ./bench/acceptpath
CGO_ENABLED=0 go test -tags stdjson,gjson -c -o "$work/supervisor.test" ./supervisor

# Mode chat's backend: the fake vLLM, natively, in a process of its own
# (not counted).
fake=
fakeaddr=
if [[ " $MODES " == *" chat "* ]]; then
	go build -o "$work/fakevllm" ./bench/fakevllm
	fakeaddr=127.0.0.1:$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$work/fakevllm" -listen "$fakeaddr" -tokens 8 >"$work/fake.log" 2>&1 &
	fake=$!
	for _ in $(seq 100); do curl -s -o /dev/null "http://$fakeaddr/health" && break; sleep 0.1; done
fi

# run MODE N: one traced server, N client connections; prints the total Ir
# (0 if the client failed or the server did not exit cleanly).
run() {
	local mode=$1 n=$2 out=$work/callgrind.out.$1.$2 addr=$work/addr
	rm -f "$addr" "$work/in"
	mkfifo "$work/in"
	local cmd=("$work/acceptpath" serve -mode "$mode" -addr-file "$addr" ${GOGC_WORKER:+-gogc "$GOGC_WORKER"} ${GOVERNANCE:+-governance}) path=/v1/models check=(-key sk-acceptpath -want-models)
	case $mode in
	chat) path=/v1/chat/completions check=(-key sk-acceptpath -chat ${STREAM:+-stream})
		cmd+=(-backend "http://$fakeaddr") ;;
	readyz)
		cmd=("$work/supervisor.test" -test.run '^TestAcceptPathReadyz$')
		path=/readyz check=(-want-body "workers ready: 1/1
") ;;
	nethttp) path=/ check=(-want-body "ok
") ;;
	esac
	SLUICE_ACCEPTPATH_ADDR_FILE=$addr GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off \
		valgrind --tool=callgrind --trace-children=no --callgrind-out-file="$out" "${cmd[@]}" \
		<"$work/in" >"$work/server.log" 2>&1 &
	srv=$!
	exec 3>"$work/in" # the server's stdin: closing it stops the server
	for _ in $(seq 600); do [ -s "$addr" ] && break; sleep 0.1; done
	local ok=1
	"$work/acceptpath" client -addr "$(cat "$addr")" -n "$n" -path "$path" -want-status 200 "${check[@]}" ${KEEPALIVE:+-keepalive} >&2 || ok=0
	exec 3>&-
	wait $srv || ok=0
	srv=
	if [ $ok = 0 ]; then
		echo "accept-path: $mode N=$n failed; server log:" >&2
		tail -5 "$work/server.log" >&2
		echo 0
		return
	fi
	[ -n "${KEEP:-}" ] && mkdir -p "$KEEP" && cp "$out" "$KEEP/"
	sed -n 's/^totals: *//p; s/^summary: *//p' "$out" | head -1
}

# total MODE N: the median of REPS runs.
total() {
	local xs=()
	for _ in $(seq "$REPS"); do xs+=("$(run "$1" "$2")"); done
	printf '%s\n' "${xs[@]}" | sort -n | sed -n "$(((REPS + 1) / 2))p"
}

declare -A per
printf '%-8s %14s %14s %12s %10s %9s\n' mode "Ir(N=$N1)" "Ir(N=$N2)" instr/conn score "vs net/http"
for m in $MODES; do
	a=$(total "$m" "$N1") b=$(total "$m" "$N2")
	if [ "$a" = 0 ] || [ "$b" = 0 ]; then
		per[$m]=0
		printf '%-8s %14s %14s %12s %10s %9s\n' "$m" "$a" "$b" - 0 -
		continue
	fi
	per[$m]=$(((b - a) / (N2 - N1)))
	ratio=-
	[ -n "${per[nethttp]:-}" ] && [ "${per[nethttp]}" != 0 ] && ratio=$(awk -v x="${per[$m]}" -v r="${per[nethttp]}" 'BEGIN{printf "%.2f", x/r}')
	printf '%-8s %14s %14s %12s %10.0f %9s\n' "$m" "$a" "$b" "${per[$m]}" "$(awk -v x="${per[$m]}" 'BEGIN{print 1e9/x}')" "$ratio"
done
