#!/bin/bash
# Peak RSS of one worker while 300 clients queue with 400 KB prompts for a
# model with 4 slots (500 ms answers): bodies in memory, or spilled to files
# (body_memory, body_temp_dir). docs/benchmarks-analysis.md, 10.
#
#   bench/spill-queue.sh off     # body_temp_dir: off (every body in memory)
#   bench/spill-queue.sh /tmp    # bodies past body_memory (default 64MiB) to /tmp
#   BODY_MEMORY=1MiB bench/spill-queue.sh /tmp
#
# Ports 29000/29080/29090 (below the ephemeral range).
set -eu
cd "$(dirname "$0")/.."
tempdir=${1:?usage: $0 off|DIR}
work=$(mktemp -d)
trap 'kill $sup $be 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -tags stdjson,gjson -o "$work/sluice" ./cmd/sluice
go build -o "$work/driver" ./bench/driver
go build -o "$work/fakevllm" ./bench/fakevllm
cat > "$work/sluice.yaml" <<CFG
listen: 127.0.0.1:29080
admin: 127.0.0.1:29090
workers: 1
usage_log: "off"
body_memory: ${BODY_MEMORY:-64MiB}
body_temp_dir: "$tempdir"
keys:
  - name: bench
    sha256: $(printf %s sk-bench | sha256sum | cut -d' ' -f1)
    models: ["*"]
models:
  - name: bench
    queue: {max: 1000, timeout: 60s}
    backends:
      - url: http://127.0.0.1:29000
        slots: 4
CFG
"$work/fakevllm" -listen 127.0.0.1:29000 -delay 500ms >"$work/backend.log" 2>&1 &
be=$!
"$work/sluice" serve -c "$work/sluice.yaml" >"$work/sluice.log" 2>&1 &
sup=$!
for _ in $(seq 100); do curl -sf 127.0.0.1:29090/readyz >/dev/null && break; sleep 0.1; done
worker=$(pgrep -P $sup | head -1)
echo "idle worker RSS: $(awk '/VmRSS/{print $2}' /proc/$worker/status) KiB"
"$work/driver" -url http://127.0.0.1:29080 -conns 300 -prompt 400000 -duration 15s >"$work/driver.json" 2>&1 &
drv=$!
peak=0
while kill -0 $drv 2>/dev/null; do
	r=$(awk '/VmRSS/{print $2}' /proc/$worker/status)
	[ "$r" -gt "$peak" ] && peak=$r
	sleep 0.5
done
echo "peak worker RSS: $peak KiB (VmHWM $(awk '/VmHWM/{print $2}' /proc/$worker/status) KiB)"
curl -s 127.0.0.1:29090/metrics | grep -E '^sluice_request_bod'
