package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sluice-gw/sluice/config"
)

// reloadWait bounds how long `sluice reload` waits for the supervisor to
// report its reload.
const reloadWait = 60 * time.Second

// status is the supervisor's GET /status.
type status struct {
	PID             int    `json:"pid"`
	Generation      int64  `json:"generation"`
	Reloads         int64  `json:"reloads"`
	LastReloadError string `json:"last_reload_error"`
}

// reload validates FILE, sends SIGHUP to the supervisor named by its
// pid_file, and waits for the supervisor's admin /status to report the
// outcome: exit 0 when applied, 1 with the reason when not.
func reload(args []string, stdout, stderr io.Writer) int {
	path, err := configFlag("reload", args)
	if err != nil {
		fmt.Fprintln(stderr, "sluice reload:", err)
		return 2
	}
	cfg, err := config.Load(path)
	if err != nil {
		fmt.Fprintln(stderr, err)
		fmt.Fprintln(stderr, "sluice reload: not reloaded: the running gateway keeps its configuration")
		return 1
	}
	if cfg.PidFile == "" {
		fmt.Fprintf(stderr, "sluice reload: %s sets no pid_file, so the running supervisor cannot be found; "+
			"set pid_file, or send SIGHUP to the supervisor yourself\n", path)
		return 2
	}
	raw, err := os.ReadFile(cfg.PidFile)
	if err != nil {
		fmt.Fprintf(stderr, "sluice reload: is sluice running? %v\n", err)
		return 1
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil || pid < 1 {
		fmt.Fprintf(stderr, "sluice reload: %s does not hold a pid\n", cfg.PidFile)
		return 1
	}
	statusURL := "http://" + cfg.Admin + "/status"
	before, err := getStatus(statusURL)
	if err != nil {
		fmt.Fprintf(stderr, "sluice reload: cannot read the supervisor's status at %s: %v\n", statusURL, err)
		return 1
	}
	if before.PID != pid {
		fmt.Fprintf(stderr, "sluice reload: %s says pid %d but the admin listener at %s belongs to pid %d\n",
			cfg.PidFile, pid, cfg.Admin, before.PID)
		return 1
	}
	if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
		fmt.Fprintf(stderr, "sluice reload: signal pid %d: %v\n", pid, err)
		return 1
	}
	for end := time.Now().Add(reloadWait); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		st, err := getStatus(statusURL)
		if err != nil || st.Reloads <= before.Reloads {
			continue
		}
		if st.LastReloadError != "" {
			fmt.Fprintln(stderr, st.LastReloadError)
			fmt.Fprintln(stderr, "sluice reload: not reloaded: the running gateway keeps its configuration")
			return 1
		}
		fmt.Fprintf(stdout, "%s: reloaded (generation %d)\n", path, st.Generation)
		return 0
	}
	fmt.Fprintf(stderr, "sluice reload: no answer from pid %d within %v\n", pid, reloadWait)
	return 1
}

func getStatus(url string) (status, error) {
	var st status
	c := &http.Client{Timeout: 5 * time.Second}
	res, err := c.Get(url)
	if err != nil {
		return st, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return st, fmt.Errorf("%s", res.Status)
	}
	return st, json.NewDecoder(res.Body).Decode(&st)
}
