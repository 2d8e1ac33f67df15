package main

import (
	"log/slog"
	"net"
	"net/http"
	_ "net/http/pprof" // registers /debug/pprof/ on http.DefaultServeMux, served only below
	"os"
	"strconv"
)

// servePprof serves Go's profiler for a worker when SLUICE_PPROF_ADDR is
// set (host:port; worker slot N listens on port+N). It is for profiling
// (the benchmark rig's -profile uses it), off by default, and never on
// the public listener.
func servePprof(slot int, log *slog.Logger) {
	addr := os.Getenv("SLUICE_PPROF_ADDR")
	if addr == "" {
		return
	}
	host, port, err := net.SplitHostPort(addr)
	n, perr := strconv.Atoi(port)
	if err != nil || perr != nil {
		log.Error("SLUICE_PPROF_ADDR is not host:port; profiler off", "value", addr)
		return
	}
	addr = net.JoinHostPort(host, strconv.Itoa(n+slot))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Error("profiler off", "err", err)
		return
	}
	log.Info("profiler listening", "addr", addr)
	go http.Serve(ln, http.DefaultServeMux) //nolint:errcheck // ends with the process
}
