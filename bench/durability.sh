#!/bin/bash
# How much of a key's settled spend a kill -9 of sluice (supervisor and
# every worker at once) loses with state_dir (issue 33): open-loop load
# at RATE req/s on a key with a monthly quota, sluice killed at a moment
# in the middle, started again on the same state_dir; what the restarted
# gateway says the key used (sluice_key_quota_used_tokens) against the sum
# of total_tokens over the usage lines the killed one wrote (written as
# each request ended, unbuffered). ROUNDS times; the loss of each round in
# tokens and in requests' worth.
#
#   bench/durability.sh                   # 500 req/s, 5 rounds, kill after 3.x s
#   RATE=1000 ROUNDS=10 bench/durability.sh
#
# Ports 29200/29280/29290.
set -eu
cd "$(dirname "$0")/.."
RATE=${RATE:-500} ROUNDS=${ROUNDS:-5} WORKERS=${WORKERS:-2}
work=$(mktemp -d)
sup= be= drv=
killall9() { [ -n "$sup" ] && kill -9 "$sup" $(pgrep -P "$sup") 2>/dev/null; }
trap 'kill -9 $drv 2>/dev/null; killall9; kill $be 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -tags stdjson,gjson -o "$work/sluice" ./cmd/sluice
go build -o "$work/driver" ./bench/driver
go build -o "$work/fakevllm" ./bench/fakevllm
key_sha=$(printf %s sk-bench | sha256sum | cut -d' ' -f1)
cat > "$work/sluice.yaml" <<CFG
listen: 127.0.0.1:29280
admin: 127.0.0.1:29290
workers: $WORKERS
state_dir: $work/state
usage_log: $work/usage.log
keys:
  - name: bench
    sha256: $key_sha
    models: ["*"]
    quotas: {month: 1000000000000}
models:
  - name: bench
    backends:
      - url: http://127.0.0.1:29200
        slots: 100000
CFG
"$work/fakevllm" -listen 127.0.0.1:29200 >/dev/null 2>&1 & be=$!
used() { curl -fsS http://127.0.0.1:29290/metrics | awk 'BEGIN {v = 0} /^sluice_key_quota_used_tokens\{key="bench",period="month"\}/ {v = $2} END {print v}'; }
start() {
	"$work/sluice" serve -c "$work/sluice.yaml" >/dev/null 2>>"$work/sluice.log" & sup=$!
	for _ in $(seq 100); do curl -fsS http://127.0.0.1:29290/readyz >/dev/null 2>&1 && return; sleep 0.1; done
	echo "sluice did not start" >&2; exit 1
}
start
echo "round lines_sum restored lost_tokens lost_requests(~tokens/request)"
for r in $(seq "$ROUNDS"); do
	before=$(used)
	lines_before=$(wc -l < "$work/usage.log" 2>/dev/null || echo 0)
	"$work/driver" -url http://127.0.0.1:29280 -rate "$RATE" -duration 6s -prompt 200 -tokens 8 >/dev/null 2>&1 & drv=$!
	sleep "3.$((RANDOM % 1000))"
	workers=$(pgrep -P "$sup" | tr '\n' ' ')
	kill -9 "$sup" $workers 2>/dev/null || true # one kill(2) after another, microseconds apart
	wait "$sup" 2>/dev/null || true
	for w in $workers; do while kill -0 "$w" 2>/dev/null; do sleep 0.05; done; done
	wait "$drv" 2>/dev/null || true
	sum=$(tail -n +"$((lines_before + 1))" "$work/usage.log" | awk -F'"total_tokens":' 'NF > 1 {split($2, a, ","); s += a[1]; n++} END {printf "%d %d", s, n}')
	tokens=${sum% *} requests=${sum#* }
	start
	after=$(used)
	restored=$(( ${after%.*} - ${before%.*} ))
	lost=$(( tokens - restored ))
	per=$(( requests > 0 ? tokens / requests : 0 ))
	echo "$r $tokens $restored $lost $(( per > 0 ? lost / per : 0 ))"
done
killall9
wait "$sup" 2>/dev/null || true
